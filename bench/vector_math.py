"""Kernels with exp, log, tanh, power, sin: NumPy's own loops in the kernel (backends/cpu_nploop) against C's
functions (JUPYTER_FUSE_NUMPY_LOOPS=off) and plain NumPy.

    .venv/bin/python bench/vector_math.py [--repeat 5]
    .venv/bin/python bench/vector_math.py --blocks    # NumPy's tanh loop called whole or a block at a time

Each cell is replayed (plan cache on, kernels compiled) with NumPy's loops in its kernels and, in a process
of its own, with C's functions; "numpy" is plain ``exec`` of the cell. Times in ms, best of ``--repeat``.
"bits": whether the replay left NumPy's values to the bit ("same") or only within rounding ("differ").
"first": the cell's first run, its kernels compiled there (JUPYTER_FUSE_COMPILE=sync, an empty kernel
cache): what numba's compile of the kernel costs, each way.

``--blocks`` times NumPy's own float64 ``tanh`` loop (the one kernels call) on 100k elements from numba: once
over the whole array, a block at a time (512, as kernels call it; 2048; 8192), and as a kernel does it (a
block of 512, then a pass multiplying it by 2 into the output), beside ``np.tanh(x)`` and ``np.tanh(x) * 2``:
where the tanh cell's time beyond NumPy's goes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

CELLS = {
    "exp chain, 1M": ("y = np.exp(x * 0.5 + 1.0) - 2.0", 1_000_000),
    "sigmoid, 1M": ("y = 1.0 / (1.0 + np.exp(-x))", 1_000_000),
    "tanh, 100k": ("y = np.tanh(x) * 2", 100_000),
    "power -1.5, 100k": ("y = (x * x + 0.1) ** -1.5", 100_000),
    "row softmax, 1000x1000": ("e = np.exp(X - X.max(axis=1, keepdims=True))\ny = e / e.sum(axis=1, keepdims=True)", 1000),
    "column log-sum-exp, 1000x1000": ("y = np.log(np.exp(X).sum(axis=0))", 1000),
    "log-sum-exp, 1M": ("y = np.log(np.exp(x).sum())", 1_000_000),
    "Black-Scholes-like, 1M": ("d1 = (np.log(x / 1.1) + 0.05) / 0.2\n"
                               "y = x * np.exp(-d1 * d1 * 0.5) - np.sin(d1) * np.cos(x)", 1_000_000),
}


def _inputs(n: int) -> dict:
    rng = np.random.default_rng(0)
    if n == 1000:
        return {"np": np, "X": rng.random((n, n))}
    return {"np": np, "x": rng.random(n) + 0.5}


def measure(repeat: int) -> dict:
    """In this process (its JUPYTER_FUSE_NUMPY_LOOPS): per cell, (replay ms, NumPy ms, same bits)."""
    import jupyter_fuse

    out = {}
    for name, (src, n) in CELLS.items():
        t = time.perf_counter()
        jupyter_fuse.run_cell(src, _inputs(n), backend="cpu")
        first = time.perf_counter() - t
        for _ in range(2):
            jupyter_fuse.run_cell(src, _inputs(n), backend="cpu")
            jupyter_fuse.wait_for_compiles()
        tf = tn = float("inf")
        for _ in range(repeat):
            a = _inputs(n)
            t = time.perf_counter()
            jupyter_fuse.run_cell(src, a, backend="cpu")
            tf = min(tf, time.perf_counter() - t)
            b = _inputs(n)
            t = time.perf_counter()
            exec(src, b)
            tn = min(tn, time.perf_counter() - t)
        same = all(np.array_equal(a[k], b[k]) for k in b if k not in ("np", "x", "X", "__builtins__"))
        out[name] = (tf * 1e3, tn * 1e3, same, first * 1e3)
    return out


def blocks(repeat: int) -> None:
    import timeit

    from numba import njit

    from jupyter_fuse.backends.cpu_nploop import _pointers, np_loop1

    x = np.random.default_rng(0).random(100_000) * 4 - 2
    out = np.empty_like(x)
    fn, ctx, aux, _ = _pointers("tanh", "float64", (8, 8))

    @njit
    def by_blocks(x, out, b):
        for lo in range(0, x.size, b):
            np_loop1(fn, ctx, aux, min(b, x.size - lo), x.ctypes.data + 8 * lo, 8, out.ctypes.data + 8 * lo, 8)

    @njit
    def as_kernel(x, out):
        buf = np.empty(512)
        for lo in range(0, x.size, 512):
            n = min(512, x.size - lo)
            np_loop1(fn, ctx, aux, n, x.ctypes.data + 8 * lo, 8, buf.ctypes.data, 8)
            for i in range(n):
                out[lo + i] = buf[i] * 2.0

    def best(f) -> float:
        f()
        return min(timeit.repeat(f, number=50, repeat=repeat)) / 50 * 1e3

    print("| NumPy's tanh loop on 100k float64 | ms |\n|---|---:|")
    print(f"| np.tanh(x) | {best(lambda: np.tanh(x, out=out)):.3f} |")
    print(f"| np.tanh(x) * 2 | {best(lambda: np.tanh(x) * 2):.3f} |")
    for b in (100_000, 8192, 2048, 512):
        print(f"| the loop, {'the whole array' if b == x.size else f'blocks of {b}'} | {best(lambda: by_blocks(x, out, b)):.3f} |")
    print(f"| blocks of 512, each then times 2 into the output (as a kernel) | {best(lambda: as_kernel(x, out)):.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--blocks", action="store_true", help="time NumPy's tanh loop called whole or by blocks")
    a = ap.parse_args()
    if a.blocks:
        blocks(a.repeat)
        return
    if a.child:
        print(json.dumps(measure(a.repeat)))
        return
    runs = {}
    for mode in ("on", "off"):
        env = dict(os.environ, JUPYTER_FUSE_NUMPY_LOOPS=mode, JUPYTER_FUSE_PLAIN="off", JUPYTER_FUSE_COMPILE="sync",
                   JUPYTER_FUSE_CACHE_DIR=tempfile.mkdtemp(prefix="jf-vm-"))
        done = subprocess.run([sys.executable, __file__, "--child", "--repeat", str(a.repeat)], env=env,
                              capture_output=True, text=True, check=True)
        runs[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    print("| cell | numpy ms | NumPy's loops ms (x NumPy) | bits | first ms | C's functions ms (x NumPy) | bits "
          "| first ms |")
    print("|---|---:|---:|---|---:|---:|---|---:|")
    for name in CELLS:
        on, off = runs["on"][name], runs["off"][name]
        tn = min(on[1], off[1])
        print(f"| {name} | {tn:.2f} | {on[0]:.2f} ({on[0] / tn:.2f}x) | {'same' if on[2] else 'differ'} | {on[3]:.0f} "
              f"| {off[0]:.2f} ({off[0] / tn:.2f}x) | {'same' if off[2] else 'differ'} | {off[3]:.0f} |")


if __name__ == "__main__":
    main()
