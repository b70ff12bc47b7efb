"""Traced runs of the loop programs (bench/programs.py): what a run that is not a replay costs.

    .venv/bin/python bench/traced.py [--repeat 7] [--size small] [--bare] [--only NAME,...] [--realworld]

Each program runs once to compile its kernels (waiting for the background compiles), then ``--repeat``
times with the plan cache off; the best, median and worst of those runs are printed in ms, with NumPy's
best time for scale. By default the process first imports what a notebook kernel running the magic and
its panel holds (IPython, ipykernel, ipywidgets, plotly, nbformat: about 170,000 objects), since what a
traced run costs depends on the heap it runs beside (Python's full garbage collections walk all of it);
``--bare`` skips that. The worst column is where a full collection shows. Results are checked against
NumPy's (bench/loops.py's check). ``--realworld``: bench/realworld.py's programs instead (``--only`` picks
them), their printed text hidden, their names compared as that script compares them.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import sys
import time
import types
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loops import fresh, numpy_run, same  # noqa: E402
from programs import BY_NAME, PROGRAMS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--size", default="small")
    ap.add_argument("--bare", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--realworld", action="store_true")
    a = ap.parse_args()
    if not a.bare:
        import IPython, ipykernel.ipkernel, ipywidgets, nbformat, plotly.graph_objects  # noqa: F401, E401
    import jupyter_fuse

    print(f"heap: {len(gc.get_objects()):,} objects tracked by the collector")
    print("| program | numpy ms | traced ms: best | median | worst | same as NumPy |")
    print("|---|---:|---:|---:|---:|---|")
    programs, run, check = (_realworld(a.only) if a.realworld else
                            ([BY_NAME[n] for n in a.only.split(",")] if a.only else PROGRAMS, numpy_run, same))
    for p in programs:
        t_np, ref = min((run(p, a.size) for _ in range(3)), key=lambda r: r[0])
        with contextlib.redirect_stdout(io.StringIO()):
            jupyter_fuse.run_cell(p.source, fresh(p, a.size), backend="cpu", cache=False)
            jupyter_fuse.wait_for_compiles()
            times, ok = [], True
            for _ in range(a.repeat):
                ns = fresh(p, a.size)
                t0 = time.perf_counter()
                jupyter_fuse.run_cell(p.source, ns, backend="cpu", cache=False)
                times.append(time.perf_counter() - t0)
                ok = ok and check(p, ref, ns)
        times.sort()
        print(f"| {p.name} | {t_np * 1e3:.2f} | {times[0] * 1e3:.1f} | {times[len(times) // 2] * 1e3:.1f} "
              f"| {times[-1] * 1e3:.1f} | {'yes' if ok else 'NO'} |", flush=True)


def _realworld(only: str) -> tuple[list, Any, Any]:
    """bench/realworld.py's programs, as (programs, a NumPy run, a comparison) for ``main``: each program given
    the ``sizes`` and ``setup`` bench/programs.py's have."""
    import realworld

    picked = [p for p in realworld.PROGRAMS if not only or p.name in only.split(",")]
    programs = [types.SimpleNamespace(name=p.name, source=p.source, sizes=p.sizes,
                                      setup=lambda size, p=p: p.setup(**size)) for p in picked]

    def run(p: Any, size: str) -> tuple[float, dict]:
        with contextlib.redirect_stdout(io.StringIO()):
            return numpy_run(p, size)
    return programs, run, lambda p, ref, ns: not realworld.compare_ns(ref, ns)


if __name__ == "__main__":
    main()
