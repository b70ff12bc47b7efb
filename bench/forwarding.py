"""Repeated writes of one region under %%fuse -b cpu: what store-to-load forwarding (trace._forwarded) saves.

    .venv/bin/python bench/forwarding.py [--repeat 3]

For each cell: ops -> kernels of a traced run, its phases (trace / plan / run, ms, best of ``--repeat``
runs with kernels compiled), the plan-cache re-run (ms) and plain NumPy (ms), the nodes a repeated
trace makes anew (``Node`` serials: hash-consed nodes an earlier run left alive are not made again),
and whether the results are NumPy's. Run it under another checkout (PYTHONPATH) to compare.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("JUPYTER_FUSE_COMPILE", "sync")  # compiles where they first run, not in the background
os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")  # (it times replays: one NumPy beats would run as plain NumPy)

import numpy as np

import jupyter_fuse
from jupyter_fuse.ir import Node
from programs import BY_NAME  # (bench/programs.py: the loop programs of bench/loops.py)

CONV = BY_NAME["conv"]

CELLS = {
    "conv (9 x out[r] += ...)": CONV.source,
    "x[r] += ..., 10,000 steps": "for i in range(10000):\n    x[1:-1] += 0.1 * x[1:-1]\n",
    "x[r] = f(x[r]), 10,000 steps": "for i in range(10000):\n    x[1:-1] = x[1:-1] * 0.999 + 0.001\n",
    "def step(u): u[r] += ..., 2,000 calls": "def step(u):\n    u[1:-1] += 0.5 * u[1:-1]\n    return u\n"
                                             "for i in range(2000):\n    x = step(x)\n",
    "0-d a[...] += 1, 1,000 steps": "for i in range(1000):\n    a[...] += 1\n",
}


def fresh() -> dict:
    return {**CONV.setup(CONV.sizes["small"]), "x": np.linspace(0, 1, 1000), "a": np.array(0.0)}


def same(a: dict, b: dict) -> bool:
    return all(np.allclose(a[k], b[k], rtol=1e-12, equal_nan=True) and a[k].dtype == b[k].dtype
               for k in ("x", "a", "img"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| cell | ops -> kernels | trace ms | plan ms | run ms | re-run ms | NumPy ms | nodes made | same as NumPy |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    with np.errstate(all="ignore"):
        for name, cell in CELLS.items():
            ref = fresh()
            t0 = time.perf_counter()
            exec(cell, ref)
            t_np = time.perf_counter() - t0
            jupyter_fuse.run_cell(cell, fresh(), backend="cpu", cache=False)  # compile
            best, made = None, "-"
            serials = getattr(Node, "_serials", None)  # (checkouts before 517dfb5 number no nodes)
            for _ in range(args.repeat):
                ns, first = fresh(), serials and next(serials)
                r = jupyter_fuse.run_cell(cell, ns, backend="cpu", cache=False)
                if serials:
                    made = next(serials) - first - 1
                if best is None or r.times["total"] < best[0].times["total"]:
                    best = (r, ns)
            r, ns = best
            jupyter_fuse.run_cell(cell, fresh(), backend="cpu")  # the plan cache's first run
            rerun = float("inf")
            for _ in range(args.repeat):
                again = fresh()
                t0 = time.perf_counter()
                jupyter_fuse.run_cell(cell, again, backend="cpu")
                rerun = min(rerun, time.perf_counter() - t0)
            t = r.times
            print(f"| {name} | {r.ops} -> {r.kernels} | {t['trace'] * 1e3:.1f} | {t['plan'] * 1e3:.1f} | "
                  f"{t['run'] * 1e3:.1f} | {rerun * 1e3:.2f} | {t_np * 1e3:.2f} | {made} | "
                  f"{'yes' if same(ns, ref) and same(again, ref) else 'NO'} |")


if __name__ == "__main__":
    main()
