"""A traced first run (no plan cache) of a periodic stencil whose steps call np.roll, against NumPy:

    .venv/bin/python bench/first_runs.py [--steps 1000,10000]

np.roll is traced (a copy and two slice writes per rolled axis), so a replay is one compiled
program; this measures what that costs the first run, which plans and launches every step
(kernels, time, peak traced memory, and that the result is NumPy's).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import jupyter_fuse

STENCIL = "for i in range(n):\n    u = 0.5 * (np.roll(u, 1) + np.roll(u, -1))\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="1000,10000")
    for n in map(int, ap.parse_args().steps.split(",")):
        ns = {"np": np, "u": np.linspace(0, 1, 64), "n": n}
        tracemalloc.start()
        t0 = time.perf_counter()
        r = jupyter_fuse.run_cell(STENCIL, ns, backend="cpu", cache=False)
        fused = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        ref = {"np": np, "u": np.linspace(0, 1, 64), "n": n}
        t0 = time.perf_counter()
        exec(STENCIL, ref)  # noqa: S102 - the benchmark's own cell
        plain = time.perf_counter() - t0
        print(f"{n:6d} steps: first run {fused:.2f} s, NumPy {plain * 1e3:.1f} ms, {r.kernels} kernels, "
              f"peak traced memory {peak / 1e6:.1f} MB, same as NumPy: {np.array_equal(ns['u'], ref['u'])}")


if __name__ == "__main__":
    main()
