"""Threads or not: a numba kernel run sequentially and in parallel, alone and right after a matmul.

    .venv/bin/python bench/threads.py [--repeat 15]

OpenBLAS's threads keep spinning for a while after a matmul returns. A parallel numba kernel launched
then waits for its threads to get a core: the stall this prints is what ``backends/cpu.py``'s
``PARALLEL_WORK`` weighs against the time threads save (a kernel of `-x` and a row argmax, the one
cosine_sim ran after ``E @ E.T``). Times in ms, the median of ``--repeat`` launches; "gap" runs the
kernel that many ms after the matmul (the main thread busy meanwhile, as a cell's Python is).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from numba import njit, prange


def _kernel(s0: int, s1: int, x: np.ndarray, neg: np.ndarray, best: np.ndarray) -> None:
    for i in prange(s0):
        m, at = -np.inf, 0
        for j in range(s1):
            v = x[i * s1 + j]
            neg[i, j] = -v
            if v > m:
                m, at = v, j
        best[i] = at


PAR, SEQ = njit(parallel=True)(_kernel), njit()(_kernel)


def median_ms(fn, n: int, x: np.ndarray, neg: np.ndarray, best: np.ndarray, repeat: int,
              before=None, gap: float = 0.0) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
            t = time.perf_counter()
            while time.perf_counter() - t < gap:
                pass
        t0 = time.perf_counter()
        fn(n, n, x, neg, best)
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2] * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    e = np.random.default_rng(0).random((300, 64))
    matmul = lambda: e @ e.T  # noqa: E731
    print(f"numba {numba.__version__}, threading layer", end=" ")
    PAR(2, 2, np.zeros(4), np.zeros((2, 2)), np.zeros(2, np.int64))
    print(f"{numba.threading_layer()}, {numba.get_num_threads()} threads")
    print("| elements | sequential | parallel | sequential after matmul | parallel after matmul |")
    print("|---:|---:|---:|---:|---:|")
    for n in (300, 500, 1000, 2000, 4000):
        x = np.random.default_rng(1).random(n * n)
        neg, best = np.empty((n, n)), np.empty(n, np.int64)
        SEQ(n, n, x, neg, best)
        cells = [median_ms(f, n, x, neg, best, a.repeat, before) for before in (None, matmul) for f in (SEQ, PAR)]
        print(f"| {n * n:,} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    n = 1000
    x, neg, best = np.random.default_rng(1).random(n * n), np.empty((n, n)), np.empty(n, np.int64)
    print("\nparallel, 1,000,000 elements, launched this long after a matmul:")
    print("| gap ms | " + " | ".join(str(g) for g in (0, 1, 5, 20, 50, 100, 300)) + " |")
    print("|---|" + "---:|" * 7)
    print("| ms | " + " | ".join(f"{median_ms(PAR, n, x, neg, best, 7, matmul, g / 1e3):.2f}"
                                for g in (0, 1, 5, 20, 50, 100, 300)) + " |")


if __name__ == "__main__":
    main()
