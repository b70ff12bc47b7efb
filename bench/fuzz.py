"""Generated-program comparison with plain NumPy (issue 12): the long run of tests/fuzz.

    .venv/bin/python bench/fuzz.py --n 10000 --backend numpy        # or cpu, cupy-dry
    .venv/bin/python bench/fuzz.py --n 200 --backend cpu --seed 50000 --minimize
    .venv/bin/python bench/fuzz.py --n 1000 --backend cpu --kind loops   # tests/fuzz/loopgen.py's loops
    .venv/bin/python bench/fuzz.py --n 1000 --backend cpu --kind sync    # its loops reading a value each step

Each seed is one program of tests/fuzz/gen.py (``--kind loops``: of tests/fuzz/loopgen.py, long loops), run three times under plain NumPy and under run_cell
(first run; fresh inputs, a plan-cache replay where the cell is replayable; inputs mutated in place)
and compared on everything the user can observe. Prints a summary per category and every deviation
(minimized with --minimize); --json writes them all. Kernels compile into a fresh cache directory
unless JUPYTER_FUSE_CACHE_DIR is set. Exit status 1 when a deviation that is neither platform-defined
nor already filed (gen.PLATFORM, gen.KNOWN) was found.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[0] = os.path.join(HERE, "..", "tests")  # (in place of bench/: there `fuzz` would be this very script)
os.environ.setdefault("JUPYTER_FUSE_STRICT", "1")
# every kernel compiled where it first runs: the first run tests the compiled kernels (background
# compiles, jupyter_fuse/backends/compiler.py, have their own tests)
os.environ.setdefault("JUPYTER_FUSE_COMPILE", "sync")
os.environ.setdefault("JUPYTER_FUSE_CACHE_DIR", tempfile.mkdtemp(prefix="jf-bench-fuzz-"))

sys.path.insert(0, os.path.join(HERE, "..", "tests", "fuzz"))  # (gen and loopgen as the tests import them: once)
from gen import Deviation, check_program, generate, minimize  # noqa: E402
from loopgen import generate_loop, generate_sync_loop  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10_000, help="number of programs")
    ap.add_argument("--backend", choices=["numpy", "cpu", "cupy-dry"], default="numpy")
    ap.add_argument("--seed", type=int, default=0, help="first seed (programs are seeds seed..seed+n-1)")
    ap.add_argument("--minimize", action="store_true", help="shrink each deviating program before printing it")
    ap.add_argument("--json", help="write every deviation to this file")
    ap.add_argument("--progress", type=int, default=500, help="print a progress line every N programs")
    ap.add_argument("--kind", choices=["statements", "loops", "sync"], default="statements",
                    help="gen.py's programs, or loopgen.py's long loops")
    ap.add_argument("--fast-forward-all", action="store_true",
                    help="fast-forward every loop it may (jupyter_fuse/loops.py: units of one iteration, from 2 "
                         "iterations on), and count the loops it ran ahead")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    forwarded = [0, 0, 0]  # loops fast-forwarded, of them as one compiled program, of them with moving windows
    if args.fast_forward_all:
        from jupyter_fuse import loops

        loops.UNIT_OPS, loops.MIN_UNITS, loops.MIN_ITERATIONS, loops.MIN_PROGRAM_LAUNCHES = 1, 1, 2, 1
        real_forward, real_program = loops._forward, loops._run_program
        def counted(s: Any, last: Any, *a: Any) -> int:
            units, cut = real_forward(s, last, *a)
            forwarded[0] += units > 0
            forwarded[2] += units > 0 and last.move is not None
            return units, cut
        loops._forward = counted
        loops._run_program = lambda *a: forwarded.__setitem__(1, forwarded[1] + 1) or real_program(*a)

    t0 = time.perf_counter()
    found: list[Deviation] = []
    runs = hits = raising = 0
    for i, seed in enumerate(range(args.seed, args.seed + args.n), 1):
        prog = {"statements": generate, "loops": generate_loop, "sync": generate_sync_loop}[args.kind](seed)
        raising += prog.raises
        res = check_program(prog, args.backend)
        runs, hits = runs + res.runs, hits + res.hits
        for d in res.deviations:
            if args.minimize:
                d.program = str(minimize(prog, args.backend, d.category))
            found.append(d)
            if d.category == "deviation":
                print(f"\n{d}\n", flush=True)
        if args.progress and i % args.progress == 0:
            print(f"{i} programs, {time.perf_counter() - t0:.0f} s, {len(found)} differences", flush=True)

    cats = collections.Counter(d.category for d in found)
    print(f"\nbackend {args.backend}: {args.n} {'loop ' * (args.kind != 'statements')}programs (seeds {args.seed}..{args.seed + args.n - 1}), {runs} runs "
          f"({hits} plan-cache replays), {raising} programs end in NumPy's exception, "
          f"{time.perf_counter() - t0:.0f} s" + (f", {forwarded[0]} loops fast-forwarded ({forwarded[1]} as one compiled program, "
                                                        f"{forwarded[2]} with moving windows)"
                                                        if args.fast_forward_all else ""))
    for cat, n in sorted(cats.items()):
        print(f"  {n:5d}  {cat}")
    if not cats:
        print("  no differences")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([vars(d) for d in found], f, indent=1)
    return 1 if cats.get("deviation") else 0


if __name__ == "__main__":
    sys.exit(main())
