"""Plan-cache benchmark: a 40-operation elementwise cell, plain NumPy against %%fuse first run and replay.

    .venv/bin/python bench/replay.py            # 1,000 and 10,000,000 elements
    .venv/bin/python bench/replay.py --quick    # 1,000 and 100,000 (a smoke test of the script)

Columns (milliseconds, best of --repeat unless said otherwise):

numpy        the cell under plain ``exec`` (its source compiled once), timed in turns with retrace and replay
first        the first %%fuse run in the process: trace, plan, compile (numba), run
retrace      a traced run with the kernels already compiled (``cache=False``): what a re-run costs
             without the plan cache
replay       a re-run that hits the plan cache: guards, kernels, write-back
trace cost   ``times['trace'] + times['plan']`` of a traced run: the work a replay skips
overhead     replay minus the time inside its kernels: what the replay itself costs

Every result is checked against NumPy.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("JUPYTER_FUSE_CACHE_DIR", tempfile.mkdtemp(prefix="jf-bench-replay-"))  # first run compiles
os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")  # (it times replays: one NumPy beats would run as plain NumPy)

import jupyter_fuse as jf  # noqa: E402
from jupyter_fuse.cache import PLAN_CACHE  # noqa: E402


def cell_source(n_ops: int = 40) -> str:
    """``t = x * c + y`` chained: n_ops elementwise operations (a multiply and an add per line)."""
    lines = ["t = x * 1.0001 + y"]
    for i in range(n_ops // 2 - 1):
        lines.append(f"t = t * {1 + (i + 1) * 1e-4!r} + y")
    lines.append("out = t")
    return "\n".join(lines) + "\n"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def best_of_pair(a, b, repeat: int) -> tuple[float, float]:
    """The best time of each of two functions, run in turns."""
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(best(a, 1))
        tb.append(best(b, 1))
    return min(ta), min(tb)


def measure(n: int, repeat: int, backend: str) -> dict:
    src = cell_source()
    rng = np.random.default_rng(0)
    x, y = rng.random(n), rng.random(n)
    code = compile(src, "<numpy>", "exec")
    plain = {"np": np, "x": x, "y": y}
    exec(code, plain)

    ns = {"np": np, "x": x, "y": y}
    PLAN_CACHE.clear()
    t0 = time.perf_counter()
    first = jf.run_cell(src, ns, backend)
    t_first = time.perf_counter() - t0
    assert first.cache == "miss", first.cache
    np.testing.assert_allclose(ns["out"], plain["out"], rtol=1e-12)

    traced = []

    def retrace():
        traced.append(jf.run_cell(src, ns, backend, cache=False))

    replays = []

    def replay():
        replays.append(jf.run_cell(src, ns, backend))

    # NumPy alternates with the retrace, then with the replay: each is timed over the same stretch of a
    # noisy machine as NumPy, and each starts where NumPy's passes over memory left the caches
    numpy = lambda: exec(code, plain)  # noqa: E731
    t_numpy1, t_retrace = best_of_pair(numpy, retrace, repeat)
    trace_cost = min(r.times["trace"] + r.times["plan"] for r in traced)
    t_numpy2, t_replay = best_of_pair(numpy, replay, repeat)
    t_numpy = min(t_numpy1, t_numpy2)
    assert all(r.cache == "hit" for r in replays), [r.cache for r in replays]
    np.testing.assert_allclose(ns["out"], plain["out"], rtol=1e-12)
    kernel = min(sum(k["time"] for k in r.kernel_list) for r in replays)
    overhead = min(r.times["total"] - sum(k["time"] for k in r.kernel_list) for r in replays)
    return {"n": n, "numpy": t_numpy, "first": t_first, "retrace": t_retrace, "replay": t_replay,
            "trace_cost": trace_cost, "overhead": overhead, "kernel": kernel, "kernels": replays[-1].kernels,
            "guard": min(r.times["guard"] for r in replays)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("-b", "--backend", default="cpu")
    args = ap.parse_args()
    sizes = [1_000, 100_000] if args.quick else [1_000, 10_000_000]
    print(f"# bench/replay.py: 40-op elementwise cell, backend {args.backend}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus, numpy {np.__version__}, python {sys.version.split()[0]}")
    print("| elements | numpy | first | retrace | replay | replay/numpy | trace cost | replay overhead | "
          "trace cost / overhead | retrace / replay |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for n in sizes:
        repeat = args.repeat or (200 if n <= 100_000 else 10)
        r = rows.append(measure(n, repeat, args.backend)) or rows[-1]
        ms = lambda v: f"{v * 1e3:.3f}"  # noqa: E731
        print(f"| {n:,} | {ms(r['numpy'])} | {ms(r['first'])} | {ms(r['retrace'])} | {ms(r['replay'])} | "
              f"{r['replay'] / r['numpy']:.2f} | {ms(r['trace_cost'])} | {ms(r['overhead'])} | "
              f"{r['trace_cost'] / r['overhead']:.1f}x | {r['retrace'] / r['replay']:.2f}x |")
    print("\ntimes in ms, best of the repeats; replay overhead = replay minus the time spent inside its kernels")
    for r in rows:  # where a replay's time goes (each part: the best over the replays)
        us = lambda v: f"{v * 1e6:.1f} us"  # noqa: E731
        print(f"replay of {r['n']:,} elements: {us(r['replay'])} = guards {us(r['guard'])} + kernels "
              f"{us(r['kernel'])} + the rest {us(r['replay'] - r['guard'] - r['kernel'])} "
              "(binding arguments, walking the tape, writing back, the Report)")


if __name__ == "__main__":
    main()
