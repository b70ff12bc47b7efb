"""Loops whose results change size each step: replayed as one compiled loop, or call by call.

    .venv/bin/python bench/shapes.py [--repeat 7]

A backward induction over ``V[:i + 1]``, an elimination, a carried ``x = x[1:] * 2 + x[:-1]``, a 2-D shrinking
loop and a growing one. Each cell is traced once, then replayed (plan cache hit, plain NumPy off) kernel by
kernel (``compile_plan=False``) and as one compiled program; ms, best of ``--repeat``, beside plain NumPy, and
what the compiled replay ran (``report.program``). Every replay's values are checked against NumPy's.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ["JUPYTER_FUSE_PLAIN"] = "off"  # (the replays themselves are timed, not the runner's choice of NumPy)
import jupyter_fuse  # noqa: E402

N = 150
CELLS = {
    "binomial tree": ("for i in range(N - 1, -1, -1):\n    S = S0 * u ** (i - 2 * j[:i + 1])\n"
                      "    V[:i + 1] = disc * (p * V[:i + 1] + q * V[1:i + 2])\n    exercise = K - S > V[:i + 1]\n"
                      "    V[:i + 1] = np.maximum(V[:i + 1], K - S)\n",
                      lambda: {"N": N, "j": np.arange(N + 1), "V": np.maximum(100 - 100 * 1.02 ** (N - 2 * np.arange(N + 1)), 0),
                               "K": 100.0, "S0": 100.0, "u": 1.02, "disc": 0.999, "p": 0.51, "q": 0.49}),
    "elimination": ("A = A0.copy()\nfor k in range(A.shape[0] - 1):\n    f = A[k + 1:, k] / A[k, k]\n"
                    "    A[k + 1:, k:] -= f[:, None] * A[k, k:]\nU = np.triu(A)\n",
                    lambda: {"A0": np.random.default_rng(1).random((60, 60)) + 60 * np.eye(60)}),
    "carried shrink": ("for k in range(100):\n    x = x[1:] * 0.5 + x[:-1]\n", lambda: {"x": np.arange(400.0)}),
    "2-d shrink": ("for k in range(40):\n    M = M[1:, 1:] * 0.5 + M[:-1, :-1]\n    s = M.sum(axis=0)\n",
                   lambda: {"M": np.random.default_rng(2).random((60, 60))}),
    "growing": ("acc = np.zeros(1)\nfor k in range(1, 100):\n    y = np.arange(float(k)) * 0.5\n    z = y * y + k\n"
                "    acc = acc + z[-1]\n", lambda: {}),
}


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print("| cell | numpy ms | kernel by kernel ms | compiled ms | compiled replay ran |\n|---|---:|---:|---:|---|")
    for name, (src, setup) in CELLS.items():
        ref = {"np": np, **setup()}
        exec(src, ref)  # noqa: S102 - the benchmark's own cell
        t_np = _best(lambda: exec(src, {"np": np, **setup()}), args.repeat)  # noqa: S102
        reports = []

        def run(compiled: bool) -> None:
            ns = {"np": np, **setup()}
            reports.append(jupyter_fuse.run_cell(src, ns, backend="cpu", compile_plan=compiled))
            for k, v in ref.items():
                if isinstance(v, np.ndarray):
                    assert np.array_equal(ns[k], v), (name, k)
        for compiled in (False, True):
            run(compiled)  # (the first traces; then the program compiles)
            jupyter_fuse.wait_for_compiles()
        t_kbk = _best(lambda: run(False), args.repeat)
        t_prog = _best(lambda: run(True), args.repeat)
        last = reports[-1]
        assert last.cache == "hit", last.miss_reasons
        ran = (last.program or last.program_note).replace("|", "/")
        print(f"| {name} | {t_np:.3f} | {t_kbk:.3f} | {t_prog:.3f} | {ran[:90]} |")


if __name__ == "__main__":
    main()
