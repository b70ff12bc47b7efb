"""What tracing costs per statement, by kind of statement (the pieces of bench/loops.py's programs).

    .venv/bin/python bench/trace_ops.py [--n 2000] [--only NAME,...]

Each cell is a loop of ``--n`` steps of one statement on small arrays; its kernels are compiled first,
then the best of 3 traced runs (plan cache off) gives ``times['trace']`` per step, beside plain NumPy's
time per step (for scale: NumPy's own call, which a traced statement replaces). Plan and run per step
are printed too. Results are not compared here (tests/ do that); this is where tracing's time goes.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import jupyter_fuse

CELLS = {
    "scalar * array": "for i in range(N):\n    y = x * 0.5\n",
    "two windows added": "for i in range(N):\n    y = x[1:-1] + x[2:]\n",
    "a window": "for i in range(N):\n    y = x[1:-1]\n",
    "window += array": "for i in range(N):\n    x[1:-1] += z\n",
    "window = array": "for i in range(N):\n    x[1:-1] = z\n",
    "row = number": "for i in range(N):\n    u[0, :] = 1\n",
    "an element": "for i in range(N):\n    y = w[1, 1]\n",
    "x = x * a + b": "for i in range(N):\n    x = x * 0.5 + 1\n",
    "2-D stencil store": "for i in range(N):\n    u[1:-1, 1:-1] = 0.25 * (u[1:-1, 2:] + u[1:-1, :-2])\n",
    "copy": "for i in range(N):\n    y = x.copy()\n",
    "window += element * window": "for i in range(N):\n    u[1:-1, 1:-1] += w[1, 1] * u[:-2, 2:]\n",
    "element * window": "for i in range(N):\n    y = w[1, 1] * u[1:-1, 1:-1]\n",
    "sum": "for i in range(N):\n    s = x.sum()\n",
    "element update": "for i in range(N):\n    k = i % 60 + 1\n    u[k, 2] += 0.5 * (u[k - 1, 2] - u[k, 2])\n",
    # a point-wise Gauss-Seidel/SOR sweep's statement pair (bench/realworld.py's sor_poisson)
    "point-wise sweep": "for t in range(N):\n    i = t % 60 + 1\n    j = t // 60 % 60 + 1\n"
                        "    g = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] + 0.01 * u[i, j])\n"
                        "    u[i, j] += 1.5 * (g - u[i, j])\n",
}


def namespace(n: int) -> dict:
    rng = np.random.default_rng(0)
    return {"np": np, "N": n, "x": rng.random(1000), "z": rng.random(998), "u": rng.random((64, 64)),
            "w": rng.random((3, 3))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(CELLS)
    print("| statement | numpy us/step | trace us/step | plan us/step | run us/step | ops | kernels |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        src = CELLS[name]
        exec(src, namespace(a.n))  # (NumPy's first call of each function warms up)
        t0 = time.perf_counter()
        exec(src, namespace(a.n))
        t_np = (time.perf_counter() - t0) / a.n
        jupyter_fuse.run_cell(src, namespace(a.n), backend="cpu", cache=False)
        jupyter_fuse.wait_for_compiles()
        best = min((jupyter_fuse.run_cell(src, namespace(a.n), backend="cpu", cache=False) for _ in range(3)),
                   key=lambda r: r.times["trace"])
        t = {k: v / a.n * 1e6 for k, v in best.times.items()}
        print(f"| {name} | {t_np * 1e6:.2f} | {t['trace']:.2f} | {t['plan']:.2f} | {t['run']:.2f} | {best.ops} "
              f"| {best.kernels} |", flush=True)


if __name__ == "__main__":
    main()
