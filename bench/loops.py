"""Real loop programs under %%fuse against plain NumPy (bench/programs.py has the programs).

    .venv/bin/python bench/loops.py [--size small|large|both] [--repeat 3] [--only NAME,...] [--no-first]
                                    [--no-compile-plan]

For each program and size, times in ms (best of ``--repeat``):

- numpy:   the cell run by plain ``exec``;
- first:   the first run in a fresh process with an empty kernel cache (importing jupyter_fuse and
           numba, tracing, compiling, running): wall time of that whole process's work;
- traced:  a run with the plan cache off and the kernels compiled (trace + plan + launches);
- 2nd run: the run right after the first: a plan-cache replay kernel by kernel while numba compiles the
           replay as one program in the background (``backends/compiler.py``), or plain NumPy
           meanwhile where launching its kernels one by one would cost more (``runner.LAUNCH_COST``);
- compile: the seconds that background compile still took after the 2nd run (the user reads);
- re-run:  the run a user gets when re-running the notebook (the setup cell, then this one): a
           plan-cache replay while the guards hold, best of ``--repeat`` after the 2nd run;
- hand:    a hand-written ``@njit(parallel=True)`` version of the whole loop (bench/hand.py), the
           target of issue 13 (re-run within 1.3x of it);
- program: what the replay ran as one compiled program (or why it ran kernel by kernel);
- trace/op, plan/op (us), launch (us of host time per kernel launch, outside the kernels).

Every result is checked against NumPy's (the program's outputs, values and dtypes).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from programs import BY_NAME, PROGRAMS, Program  # noqa: E402
from hand import HAND  # noqa: E402


def fresh(p: Program, size: str) -> dict:
    return {"__name__": "__main__", **p.setup(p.sizes[size])}


def numpy_run(p: Program, size: str) -> tuple[float, dict]:
    ns = fresh(p, size)
    t0 = time.perf_counter()
    exec(p.source, ns)
    return time.perf_counter() - t0, ns


def same(p: Program, a: dict, b: dict) -> bool:
    for k in p.outputs:
        x, y = a[k], b[k]
        if type(x) is not type(y) or getattr(x, "dtype", None) != getattr(y, "dtype", None):
            return False
        if not np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True):
            return False
    return True


def first_run(p: Program, size: str) -> float:
    """Seconds for a new process to import jupyter_fuse and run the cell once, kernel cache empty."""
    with tempfile.TemporaryDirectory() as cache:
        code = (f"import sys, time; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
                f"from programs import BY_NAME; p = BY_NAME[{p.name!r}]; "
                f"ns = {{'__name__': '__main__', **p.setup(p.sizes[{size!r}])}}; t0 = time.perf_counter(); "
                "import jupyter_fuse; jupyter_fuse.run_cell(p.source, ns, backend='cpu'); "
                "print(time.perf_counter() - t0)")
        env = dict(os.environ, JUPYTER_FUSE_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])


def hand_run(p: Program, size: str, ref: dict, repeat: int) -> float | None:
    """Best time of the hand-written numba version (compiled by a first run); None if there is none."""
    fn = HAND.get(p.name)
    if fn is None:
        return None
    fn(fresh(p, size))
    best = float("inf")
    for _ in range(repeat):
        ns = fresh(p, size)
        t0 = time.perf_counter()
        fn(ns)
        best = min(best, time.perf_counter() - t0)
    assert same(p, ref, ns), f"bench/hand.py's {p.name} differs from NumPy"
    return best


def measure(p: Program, size: str, repeat: int, first: bool, compile_plan: bool = True) -> dict:
    import jupyter_fuse
    from jupyter_fuse.cache import PLAN_CACHE

    t_np, ref = min((numpy_run(p, size) for _ in range(repeat)), key=lambda r: r[0])
    row: dict = {"name": p.name, "size": size, "numpy": t_np}
    row["first"] = first_run(p, size) if first else None
    ns = fresh(p, size)
    jupyter_fuse.run_cell(p.source, ns, backend="cpu", cache=False, compile_plan=compile_plan)  # compile (small kernels: in the background)
    jupyter_fuse.wait_for_compiles()
    traced, report = float("inf"), None
    for _ in range(repeat):
        ns = fresh(p, size)
        t0 = time.perf_counter()
        r = jupyter_fuse.run_cell(p.source, ns, backend="cpu", cache=False, compile_plan=compile_plan)
        dt = time.perf_counter() - t0
        if dt < traced:
            traced, report = dt, r
    row["ok"] = same(p, ref, ns)
    PLAN_CACHE.clear()
    jupyter_fuse.run_cell(p.source, fresh(p, size), backend="cpu", compile_plan=compile_plan)  # records the plan
    reruns, state, r2 = [], None, None
    for i in range(repeat + 1):
        ns = fresh(p, size)
        t0 = time.perf_counter()
        r2 = jupyter_fuse.run_cell(p.source, ns, backend="cpu", compile_plan=compile_plan)
        reruns.append(time.perf_counter() - t0)
        if i:  # (the 2nd run is apart: plain NumPy while the replay compiles, runner.LAUNCH_COST)
            state = r2.cache if r2.cache != "hit" else state or "hit"
        row["ok"] = row["ok"] and same(p, ref, ns)
        if i == 0:  # the user reads while numba compiles the replay as one program (backends/compiler.py)
            t0 = time.perf_counter()
            jupyter_fuse.wait_for_compiles()
            row["bg"] = time.perf_counter() - t0
    row["program"] = (r2.program or r2.program_note).replace("|", "/")
    row["hand"] = hand_run(p, size, ref, repeat)
    row.update(traced=traced, rerun=min(reruns[1:]), replay1=reruns[0], cache=state, ops=report.ops, kernels=report.kernels,
               trace_op=report.times["trace"] / max(report.ops, 1),
               plan_op=report.times["plan"] / max(report.ops, 1),
               launch=(report.times["run"] - sum(k["time"] for k in report.kernel_list)) / max(report.kernels, 1))
    return row


def table(rows: list[dict]) -> str:
    head = ("| program | size | ops -> kernels | numpy ms | first ms | traced ms (x NumPy) | 2nd run ms | compile s "
            "| re-run ms (x NumPy) | hand ms (re-run / hand) | trace us/op | plan us/op | launch us | same as NumPy "
            "| replayed as |")
    lines = [head, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        first = f"{r['first'] * 1e3:.0f}" if r["first"] is not None else "-"
        rerun = f"{r['rerun'] * 1e3:.2f} ({r['rerun'] / r['numpy']:.2f}x)" + ("" if r["cache"] == "hit" else f" {r['cache']}")
        hand = f"{r['hand'] * 1e3:.2f} ({r['rerun'] / r['hand']:.2f}x)" if r.get("hand") else "-"
        what = r["program"] if len(r["program"]) < 90 else r["program"][:87] + "..."
        lines.append(f"| {r['name']} | {r['size']} | {r['ops']} -> {r['kernels']} | {r['numpy'] * 1e3:.2f} | {first} "
                     f"| {r['traced'] * 1e3:.1f} ({r['traced'] / r['numpy']:.1f}x) | {r['replay1'] * 1e3:.1f} | {r.get('bg', 0):.1f} | {rerun} "
                     f"| {hand} | {r['trace_op'] * 1e6:.1f} | {r['plan_op'] * 1e6:.1f} | {r['launch'] * 1e6:.1f} "
                     f"| {'yes' if r['ok'] else 'NO'} | {what} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=["small", "large", "both"], default="both")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-first", action="store_true")
    ap.add_argument("--json", default="")
    ap.add_argument("--no-compile-plan", action="store_true",
                    help="no compiled programs: a fast-forwarded loop's units and the replays launch kernel by kernel")
    a = ap.parse_args()
    sizes = ["small", "large"] if a.size == "both" else [a.size]
    progs = [BY_NAME[n] for n in a.only.split(",")] if a.only else PROGRAMS
    rows = []
    for size in sizes:
        for p in progs:
            rows.append(measure(p, size, a.repeat, not a.no_first, not a.no_compile_plan))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    ratios = [r["rerun"] / r["numpy"] for r in rows]
    print(f"\nre-run / NumPy: geomean {np.exp(np.mean(np.log(ratios))):.2f}x, worst {max(ratios):.2f}x")
    hand = [r["rerun"] / r["hand"] for r in rows if r.get("hand")]
    if hand:
        print(f"re-run / hand-written numba: geomean {np.exp(np.mean(np.log(hand))):.2f}x, worst {max(hand):.2f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
