"""Peak memory of a process that runs many generated programs (tests/fuzz/gen.py), back to back.

    .venv/bin/python bench/memory.py [--backend numpy] [--n 4000] [--seed 300000]
    .venv/bin/python bench/memory.py --loops [--iterations 1000,10000,100000]

``--loops`` (issue 17: memory flat over a 100,000-iteration loop): long loops on a 100-element array, each
run once under ``%%fuse`` (cpu backend, plan cache on) in a fresh process per iteration count; prints each
process's peak resident memory beside that of plain NumPy on the same cell, and checks the values.

Each program runs as bench/fuzz.py runs it (plain NumPy, then run_cell: first run, fresh inputs, a
replay). The process's peak resident memory is printed every quarter of the run, and at the end how
many objects the collector tracks and how many a full collection then frees: a change that keeps
garbage from the collector (frozen objects, a cache that holds graphs) shows here as growth.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fuzz"))
import gen  # noqa: E402


LOOPS = {  # a body each: a sync every step, a lazy chain, a slice stencil written in place
    "sync each step": "    x = x * 0.5 + 1.0\n    s = s + float(x[3])\n",
    "chain": "    x = x * 0.5 + 1.0\n",
    "stencil": "    x[1:-1] = 0.25 * (x[:-2] + x[2:]) + 0.5 * x[1:-1]\n",
}

_ONE = """
import resource, sys, time
import numpy as np
body, n, fused = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
src = f"for i in range({n}):\\n" + body
ns = {"x": np.linspace(0.0, 1.0, 100), "s": 0.0}
ref = {"x": np.linspace(0.0, 1.0, 100), "s": 0.0}
exec(src, ref)
t0 = time.perf_counter()
if fused:
    import jupyter_fuse
    jupyter_fuse.run_cell(src, ns, backend="cpu")
    assert np.array_equal(ns["x"], ref["x"]) and ns["s"] == ref["s"], "not NumPy's values"
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, time.perf_counter() - t0)
"""


def loops(iterations: list[int]) -> None:
    import subprocess

    print("| loop | iterations | NumPy peak MB | %%fuse peak MB | %%fuse s |")
    print("|---|---:|---:|---:|---:|")
    for name, body in LOOPS.items():
        for n in iterations:
            got = []
            for fused in ("0", "1"):
                out = subprocess.run([sys.executable, "-c", _ONE, body, str(n), fused], capture_output=True,
                                     text=True, check=True).stdout.split()
                got.append((int(out[0]), float(out[1])))
            print(f"| {name} | {n:,} | {got[0][0]} | {got[1][0]} | {got[1][1]:.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="numpy", choices=["numpy", "cpu", "cupy-dry"])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=300000)
    ap.add_argument("--loops", action="store_true")
    ap.add_argument("--iterations", default="1000,10000,100000")
    a = ap.parse_args()
    if a.loops:
        loops([int(n) for n in a.iterations.split(",")])
        return
    t0 = time.time()
    for i, seed in enumerate(range(a.seed, a.seed + a.n)):
        gen.check_program(gen.generate(seed), a.backend)
        if (i + 1) % max(1, a.n // 4) == 0:
            print(f"{i + 1:6d} programs: peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB, "
                  f"{time.time() - t0:.0f} s", flush=True)
    tracked = len(gc.get_objects())
    print(f"tracked objects {tracked:,}; a full collection frees {gc.collect():,}")


if __name__ == "__main__":
    main()
