"""Peak memory of a process that runs many generated programs (tests/fuzz/gen.py), back to back.

    .venv/bin/python bench/memory.py [--backend numpy] [--n 4000] [--seed 300000]

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="numpy", choices=["numpy", "cpu", "cupy-dry"])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=300000)
    a = ap.parse_args()
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
