"""Why a kernel writes NumPy's complex product out instead of calling a helper (backends/cpu_complex.py).

    .venv/bin/python bench/complex_products.py [--lengths 32,128,256] [--n 2048]

A loop over ``n`` complex128 elements computes a chain of ``L`` dependent products per element, three ways:

- called:       each product a call of the ``cmul`` helper the kernels used to define (``HELPERS["cmul"]``);
- written out:  each product ``cpu_complex.PRODUCT`` on the operands' names, as kernels write it now;
- inline=always: the helper with numba's own inlining (``@njit(inline="always")``).

Prints the best of 20 runs (ms), the compile (thread time, s), whether LLVM vectorized the loop (packed fused
multiply-adds in the assembly) and whether the values are NumPy's bits; "numpy" is the same chain as NumPy
operators.
"""

from __future__ import annotations

import argparse
import re
import time

import numpy as np
from numba import njit

from jupyter_fuse.backends import cpu_complex
from jupyter_fuse.backends.cpu_complex import PRODUCT, fma


def _kernel(length: int, step: str, ns: dict) -> object:
    lines = ["def k(n, a, b, v, out):", "    for i in range(n):", "        x, y, w0 = a[i], b[i], v[i]"]
    for k in range(length):
        lines.append(f"        w{k + 1} = {step.format(x='x' if k % 2 == 0 else 'y', w=f'w{k}')}")
    lines.append(f"        out[i] = w{length}")
    exec("\n".join(lines), ns)  # noqa: S102 - this benchmark's own kernel text
    return njit(error_model="numpy")(ns["k"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="32,128,256")
    ap.add_argument("--n", type=int, default=2048)
    args = ap.parse_args()
    ns = {"np": np, "njit": njit, "fma": fma}
    exec(cpu_complex.HELPERS["cmul"].replace("cache=True", "cache=False"), ns)  # noqa: S102 - the old helper
    exec(cpu_complex.HELPERS["cmul"].replace("cache=True", 'inline="always"').replace("def cmul", "def cmul_i"), ns)  # noqa: S102
    ways = {"called": "cmul({x}, {w})", "written out": PRODUCT.format(a="{x}", b="{w}"), "inline=always": "cmul_i({x}, {w})"}
    rng = np.random.default_rng(0)
    a, b, v = (np.exp(1j * rng.uniform(-1, 1, args.n)) for _ in range(3))
    print(f"| products | way | run ms | compile s | vectorized | NumPy's bits |\n|---:|---|---:|---:|---|---|")
    for length in map(int, args.lengths.split(",")):
        ref = v.copy()
        t_np = float("inf")
        for _ in range(20):
            t0 = time.perf_counter()
            ref = v.copy()
            for k in range(length):
                ref = (a if k % 2 == 0 else b) * ref
            t_np = min(t_np, time.perf_counter() - t0)
        print(f"| {length} | numpy | {t_np * 1e3:.3f} | - | - | - |")
        for way, step in ways.items():
            fn = _kernel(length, step, dict(ns))
            out = np.empty_like(v)
            t0 = time.thread_time()
            fn(args.n, a, b, v, out)
            compile_s = time.thread_time() - t0
            best = float("inf")
            for _ in range(20):
                t0 = time.perf_counter()
                fn(args.n, a, b, v, out)
                best = min(best, time.perf_counter() - t0)
            packed = bool(re.search(r"vfmadd\w*\s+%[yz]mm", fn.inspect_asm(fn.signatures[0])))
            print(f"| {length} | {way} | {best * 1e3:.3f} | {compile_s:.2f} | {'yes' if packed else 'no'} "
                  f"| {'yes' if np.array_equal(out, ref) else 'no'} |")


if __name__ == "__main__":
    main()
