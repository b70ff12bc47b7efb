"""What jupyter_fuse costs per traced op, per planned op, per kernel launch and per replay.

    .venv/bin/python bench/costs.py [--repeat 5] [--steps 100,1000,10000]

On small arrays these costs, not the kernels, decide whether fusion pays (a NumPy op on 1,000
elements takes ~1-2 us). Each figure is the best of ``--repeat`` runs, with kernels compiled:

- trace / op:   a traced run's ``times['trace']`` over its op count (the Python-side cost of
                building the graph: operators, dtype rules, nodes, lazy arrays);
- plan / op:    the partitioner alone (``fuse.partition``) on one graph of 1k, 10k and 100k ops
                (a time-stepping loop's slice updates), and a cell's ``times['plan']`` per op
                (structure keys, plus a partition per *distinct* chunk);
- launch:       the cpu backend's host overhead per kernel: a replay of many tiny kernels, minus
                the time numba's compiled functions report (binding, output buffers, bookkeeping);
- replay:       a plan-cache hit's total time, kernel by kernel (``compile_plan=False``) and as one
                compiled program; for the program, its host overhead: the total minus the program's
                own time (guards, arguments, write-back).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

# each cost where it is paid: kernels and programs compile where they first run, not in the background
os.environ.setdefault("JUPYTER_FUSE_COMPILE", "sync")
os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")  # (it times replays: one NumPy beats would run as plain NumPy)
# (it times tracing and planning per op: a fast-forwarded loop does neither for most of its iterations,
# jupyter_fuse/loops.py; bench/loops.py times whole programs with it)
os.environ.setdefault("JUPYTER_FUSE_FASTFORWARD", "off")

import jupyter_fuse
from jupyter_fuse import fuse, plans, session as session_mod
from jupyter_fuse.backends import get_backend
from jupyter_fuse.cache import PLAN_CACHE

JACOBI = ("for t in range({n}):\n"
          "    B[1:-1] = 0.33 * (A[:-2] + A[1:-1] + A[2:])\n"
          "    A[1:-1] = 0.33 * (B[:-2] + B[1:-1] + B[2:])\n")
SCALAR = "for i in range({n}):\n    x = x * 0.5 + 1.0\n"


def jacobi_ns(size: int = 1000) -> dict:
    a = np.random.default_rng(0).random(size)
    return {"np": np, "A": a, "B": a.copy()}


def best(fn, repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        out = min(out, fn())
    return out


def trace_per_op(repeat: int) -> float:
    cell = SCALAR.format(n=2000)
    jupyter_fuse.run_cell(cell, {"np": np, "x": np.ones(1000)}, backend="cpu", cache=False)  # compile

    def once() -> float:
        r = jupyter_fuse.run_cell(cell, {"np": np, "x": np.ones(1000)}, backend="cpu", cache=False)
        return r.times["trace"] / r.ops
    return best(once, repeat)


def sync_cost(repeat: int, ahead: bool) -> tuple[float, float]:
    """(seconds per iteration, of which outside the trace) of a loop that reads a value back every step
    (``float(x[0])``), 1,000 elements: traced every step (the pending ops are planned, launched and read each
    step), or (``ahead``) run ahead once two steps made one plan (``syncloops.py``: the plan launched, its
    value read, the Python of numbers run)."""
    cell = "s = 0.0\nfor i in range(500):\n    x = x * 0.5 + 1.0\n    s += float(x[0])\n"
    before = os.environ.get("JUPYTER_FUSE_FASTFORWARD")
    os.environ["JUPYTER_FUSE_FASTFORWARD"] = "on" if ahead else "off"
    try:
        jupyter_fuse.run_cell(cell, {"np": np, "x": np.ones(1000)}, backend="cpu", cache=False)  # compile

        def once() -> tuple[float, float]:
            r = jupyter_fuse.run_cell(cell, {"np": np, "x": np.ones(1000)}, backend="cpu", cache=False)
            assert bool(r.loops) == ahead
            t = r.times
            return t["total"] / 500, (t["plan"] + t["run"]) / 500
        return min(once() for _ in range(repeat))
    finally:
        if before is None:
            del os.environ["JUPYTER_FUSE_FASTFORWARD"]
        else:
            os.environ["JUPYTER_FUSE_FASTFORWARD"] = before


def node_cost(repeat: int) -> float:
    """Seconds to make one new IR node (hash-consed, ``Node.make``), a chain of 10,000 held, then dropped."""
    from jupyter_fuse.ir import Node

    f8 = np.dtype("f8")
    x = Node.make("input", (), (0,), f8, (1000,))

    def chain() -> float:
        t0 = time.perf_counter()
        n = x
        for _ in range(10_000):
            n = Node.make("multiply", (n, x), (), f8, (1000,))
        return time.perf_counter() - t0

    return best(chain, repeat) / 10_000


def partition_per_op(ops: int, repeat: int) -> float:
    """The partitioner on one graph of ``ops`` ops, traced with the flush bound lifted."""
    steps = max(1, ops // 8)  # each step: 2 slice updates of 3 adds... 8 ops
    cell = JACOBI.format(n=steps)
    captured: list = []
    real = fuse.partition

    def spy(*args, **kw):
        captured.append((args, kw))
        return real(*args, **kw)

    bound, session_mod.BOUND = session_mod.BOUND, 10 ** 9
    fuse.partition = spy
    try:
        plans.clear()
        jupyter_fuse.run_cell(cell, jacobi_ns(), backend="cpu", cache=False)
    finally:
        fuse.partition, session_mod.BOUND = real, bound
    (args, kw), = captured  # no sync and no flush: the whole loop is one graph
    graph_ops = steps * 8

    def once() -> float:
        t0 = time.perf_counter()
        real(*args, **kw)
        return (time.perf_counter() - t0) / graph_ops
    return best(once, repeat)


def plan_per_op_in_cell(steps: int, repeat: int) -> float:
    cell = JACOBI.format(n=steps)
    jupyter_fuse.run_cell(cell, jacobi_ns(), backend="cpu", cache=False)

    def once() -> float:
        r = jupyter_fuse.run_cell(cell, jacobi_ns(), backend="cpu", cache=False)
        return r.times["plan"] / r.ops
    return best(once, repeat)


def launch_and_replay(repeat: int) -> tuple[float, float, float, int, float, str, float]:
    """On a 100-step Jacobi loop with a sync per step (200 tiny kernels a replay): (host overhead per
    kernel launch, kernel-by-kernel replay total, kernels, compiled replay's host overhead beyond the
    program, compiled replay total, what the program ran, that overhead with compiled replays back to back).
    The overhead depends on what ran before: after a kernel-by-kernel replay (as alternated here) its host
    work finds less of itself in the CPU's caches than right after the same compiled replay."""
    cell = ("for t in range(100):\n    B[1:-1] = 0.33 * (A[:-2] + A[1:-1] + A[2:])\n"
            "    A[1:-1] = 0.33 * (B[:-2] + B[1:-1] + B[2:])\n    r = float(A[1])\n")
    ns = jacobi_ns()
    PLAN_CACHE.clear()

    def replay(compiled: bool) -> tuple[float, Any]:
        user = dict(ns, A=ns["A"].copy(), B=ns["B"].copy())
        t0 = time.perf_counter()
        r = jupyter_fuse.run_cell(cell, user, backend="cpu", compile_plan=compiled)
        dt = time.perf_counter() - t0
        assert r.cache == "hit", r.miss_reasons
        return dt, r

    jupyter_fuse.run_cell(cell, dict(ns, A=ns["A"].copy(), B=ns["B"].copy()), backend="cpu")  # records the plan
    replay(False), replay(True)  # (kernels compiled; the program compiled)
    launch, by_kernel, over, total, kernels, program = [], [], [], [], 0, ""
    for _ in range(repeat):
        dt, r = replay(False)
        in_kernels = sum(k["time"] for k in r.kernel_list)
        kernels = r.kernels
        launch.append((r.times["run"] - in_kernels) / r.kernels)
        by_kernel.append(dt)
        dt, r = replay(True)
        in_program = sum(k["time"] for k in r.kernel_list)  # (the program's entry holds the time)
        over.append(dt - in_program)
        total.append(dt)
        program = r.program
    again = []
    for _ in range(repeat):
        dt, r = replay(True)
        again.append(dt - sum(k["time"] for k in r.kernel_list))
    return min(launch), min(by_kernel), kernels, min(over), min(total), program, min(again)


def program_compile(steps: int) -> tuple[float, float, str]:
    """(first replay's compile seconds, later replay seconds, what ran) for a ``steps``-step Jacobi loop:
    a rolled loop compiles one body, whatever the steps (issue 13)."""
    cell = JACOBI.format(n=steps)
    ns = jacobi_ns()
    PLAN_CACHE.clear()
    for _ in range(2):
        r = jupyter_fuse.run_cell(cell, dict(ns, A=ns["A"].copy(), B=ns["B"].copy()), backend="cpu")
    t0 = time.perf_counter()
    jupyter_fuse.run_cell(cell, dict(ns, A=ns["A"].copy(), B=ns["B"].copy()), backend="cpu")
    return r.times["compile"], time.perf_counter() - t0, r.program or r.program_note


def scalar_arguments(n: int, repeat: int) -> tuple[float, float]:
    """Seconds a call of a numba function of ``n`` float64 scalar arguments takes, given NumPy scalars
    and given Python floats (what ``backends/cpu._plain`` passes: a kernel may take hundreds)."""
    from numba import njit

    src = f"def f(out, {', '.join(f'p{i}' for i in range(n))}):\n    out[0] = p0 + p{n - 1}\n"
    ns: dict = {}
    exec(src, ns)  # noqa: S102 - a generated signature
    fn, out = njit(ns["f"]), np.zeros(1)
    times = []
    for vals in ([np.float64(i) for i in range(n)], [float(i) for i in range(n)]):
        fn(out, *vals)

        def hundred() -> float:
            t0 = time.perf_counter()
            for _ in range(100):
                fn(out, *vals)
            return (time.perf_counter() - t0) / 100

        times.append(best(hundred, repeat))
    return times[0], times[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--steps", default="", help="also time compiling a rolled loop of these steps (100,1000,10000)")
    a = ap.parse_args()
    get_backend("cpu")
    print(f"trace:  {trace_per_op(a.repeat) * 1e6:6.1f} us per traced op (x = x * 0.5 + 1.0, 1,000 elements)")
    print(f"node:   {node_cost(a.repeat) * 1e6:6.1f} us per new IR node (Node.make, hash-consed)")
    per, outside = sync_cost(a.repeat, False)
    print(f"sync:   {per * 1e6:6.1f} us per iteration of `x = x * 0.5 + 1.0; s += float(x[0])` traced "
          f"({outside * 1e6:.1f} us of it planning and launching; NumPy takes ~2 us)")
    per, outside = sync_cost(a.repeat, True)
    print(f"sync:   {per * 1e6:6.1f} us per iteration of the same loop run ahead (syncloops.py: "
          f"{outside * 1e6:.1f} us of it planning and launching)")
    for ops in (1_000, 10_000, 100_000):
        print(f"plan:   {partition_per_op(ops, max(1, a.repeat // 2)) * 1e6:6.1f} us per op, "
              f"fuse.partition on one graph of {ops:,} ops")
    for steps in (125, 1250, 12500):
        print(f"plan:   {plan_per_op_in_cell(steps, a.repeat) * 1e6:6.1f} us per op in a cell of {steps * 8:,} ops "
              "(structure keys; a partition per distinct chunk)")
    # (a replay takes ~2 ms: the best of 30 at least, as a compiled replay's ~30 us of host work varies by more)
    launch, by_kernel, kernels, over, total, program, again = launch_and_replay(max(a.repeat, 30))
    print(f"launch: {launch * 1e6:6.1f} us host overhead per kernel launch (cpu backend, 1,000 elements)")
    as_numpy, as_python = scalar_arguments(256, a.repeat)
    print(f"launch: {as_numpy * 1e6:6.1f} us a numba call of 256 np.float64 arguments, {as_python * 1e6:.1f} us "
          "of 256 Python floats (what kernels are given)")
    print(f"replay: {by_kernel * 1e3:6.2f} ms kernel by kernel ({kernels} launches, --no-compile-plan)")
    print(f"replay: {total * 1e3:6.2f} ms as one compiled program ({program}); "
          f"{over * 1e6:.0f} us of it outside the program (guards, arguments, write-back) after a kernel-by-kernel "
          f"replay, {again * 1e6:.0f} us back to back")
    for steps in [int(x) for x in a.steps.split(",") if x]:
        compile_s, replay_s, what = program_compile(steps)
        print(f"program: {compile_s:6.2f} s to compile a {steps:,}-step Jacobi replay, then {replay_s * 1e3:.2f} ms "
              f"a replay ({what[:70]})")


if __name__ == "__main__":
    main()
