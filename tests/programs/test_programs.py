"""The realistic loop programs of bench/programs.py, at a tiny size, against plain NumPy.

Each runs traced (every name, dtype, value and alias as NumPy leaves them) and then as a user
re-runs it: replayed from the plan cache while its guards hold, on the same and on changed data.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "replay"))

from harness import check  # noqa: E402
from helpers import Twin  # noqa: E402
from programs import PROGRAMS  # noqa: E402


@pytest.fixture(autouse=True)
def _empty_plan_cache():
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()


# the value Python read (a residual's float(), a comparison's bool()) that is another one now, and its line
_STEERED = re.compile(r"line \d+ \((float|bool)\(\)\): value ")


def _setup(program):
    return lambda: {"__name__": "__main__", **program.setup(program.sizes["tiny"])}


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_matches_numpy(program, backend):
    check(program.source, _setup(program), backend=backend, cache=False)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_with_small_bounds_matches_numpy(program, monkeypatch):
    """Long loops flush their graph every BOUND ops and drop unreachable values past GC_AT: with
    both tiny, the tiny programs go through those paths many times."""
    from jupyter_fuse import session

    monkeypatch.setattr(session, "BOUND", 7)
    monkeypatch.setattr(session, "GC_AT", 4)
    check(program.source, _setup(program), backend="numpy", cache=False)
    check(program.source, _setup(program), backend="cpu")


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_replays(program):
    twin = Twin(_setup(program), backend="cpu")
    assert twin.run(program.source).cache == "miss"
    r = twin.run(program.source)  # state carried over from the first run: a user's re-run
    if program.steers:  # the residual Python reads is another one now: traced anew, and says where
        assert r.cache == "miss" and _STEERED.search(r.miss_reasons[0]), r.miss_reasons
    else:
        assert r.cache == "hit", r.miss_reasons


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_replays_on_fresh_inputs(program):
    """Re-run from the same starting values (a notebook re-run after re-running its setup cell)."""
    twin = Twin(_setup(program), backend="cpu")
    twin.run(program.source)
    fresh = _setup(program)()
    twin.change(lambda ns: ns.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in fresh.items()}))
    r = twin.run(program.source)
    assert r.cache == "hit", r.miss_reasons


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_replays_as_one_compiled_program(program, monkeypatch):
    """Every tape compiled (the launch threshold off): replays on fresh inputs leave what NumPy leaves,
    the first (which compiles the program) and the next."""
    from jupyter_fuse import program as program_mod

    monkeypatch.setattr(program_mod, "MIN_LAUNCHES", 1)
    twin = Twin(_setup(program), backend="cpu")
    twin.run(program.source)
    for _ in range(2):
        fresh = _setup(program)()
        twin.change(lambda ns: ns.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in fresh.items()}))
        r = twin.run(program.source)
        assert r.cache == "hit", r.miss_reasons
        assert "compiled: " in r.program or "compile" in r.program_note, (r.program, r.program_note)


JACOBI_WITH_RESIDUAL = """\
for t in range(steps):
    B[1:-1] = 0.33 * (A[:-2] + A[1:-1] + A[2:])
    A[1:-1] = 0.33 * (B[:-2] + B[1:-1] + B[2:])
    r = float(A[3])
    if t % 10 == 0:
        print(t, r)
"""


def test_a_value_read_every_step_stays_in_the_compiled_loop():
    """A float() each step and a print every tenth: the loop still rolls (the values are kept in a
    history array and checked after the program ran), and each destination is copied once."""
    a = np.random.default_rng(3).random(50)
    twin = Twin(lambda: {"np": np, "A": a.copy(), "B": a.copy(), "steps": 60}, backend="cpu")
    twin.run(JACOBI_WITH_RESIDUAL)
    for _ in range(2):
        twin.change(lambda ns: ns.update(A=a.copy(), B=a.copy()))
        r = twin.run(JACOBI_WITH_RESIDUAL)
        assert r.cache == "hit" and "iterations of" in r.program, r.program
    source = next(k for k in r.kernel_list if k["kind"] == "program")["source"]
    assert source.count(".copy()") == 2 and "_t" in source  # (the copies before the loop, not in it)


@pytest.mark.parametrize("program", [p for p in PROGRAMS if p.steers], ids=lambda p: p.name)
def test_a_compiled_replay_whose_residual_changed_is_traced_and_says_where(program, monkeypatch):
    """The residuals a compiled loop keeps are checked at once after it ran; one that differs from
    the traced run's sends the cell back to tracing, with the line that read it."""
    from jupyter_fuse import program as program_mod

    monkeypatch.setattr(program_mod, "MIN_LAUNCHES", 1)
    twin = Twin(_setup(program), backend="cpu")
    twin.run(program.source)
    fresh = _setup(program)()
    twin.change(lambda ns: ns.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in fresh.items()}))
    assert "iterations of" in twin.run(program.source).program  # compiled, and every check held
    r = twin.run(program.source)  # from where the last run left the state: other residuals
    assert r.cache == "miss" and _STEERED.search(r.miss_reasons[0]), r.miss_reasons


def test_blocks_of_one_structure_share_one_compiled_function(monkeypatch):
    """A call outside the trace each step that the program does not make itself (np.bincount here, as
    none were made before) ends a compiled block there: the blocks of every step are one source (inputs
    named by position, launch names only in comments), so numba compiles it once, not once a step."""
    from jupyter_fuse import program as program_mod
    from jupyter_fuse.cache import PLAN_CACHE

    monkeypatch.setattr(program_mod, "MIN_LAUNCHES", 1)
    monkeypatch.setattr(program_mod, "_pure_call", lambda step: None)
    source = ("for t in range(12):\n"
              "    j = (x * 3).astype(np.int64) % 5\n"
              "    h = np.bincount(j, weights=x, minlength=5)\n"
              "    x = x * 0.9 + h[j] * 0.01\n")
    x0 = np.random.default_rng(4).random(20)
    twin = Twin(lambda: {"np": np, "x": x0.copy()}, backend="cpu")
    twin.run(source)
    for _ in range(2):
        twin.change(lambda ns: ns.update(x=x0.copy()))
        r = twin.run(source)
        assert r.cache == "hit" and "compiled: " in r.program, (r.program, r.program_note)
    (entry,) = next(iter(PLAN_CACHE.cells.values()))
    blocks = entry.program.blocks
    assert len(blocks) >= 12 and len({id(b.fn) for b in blocks}) <= 3, len({id(b.fn) for b in blocks})


def _compiled_replay(monkeypatch, setup, source: str, reset, **limits):
    """The cell traced once, then replayed twice from ``reset`` state with every tape compiled (the
    launch threshold off, ``limits`` set on ``program``): both replays must be plan-cache hits that
    leave what NumPy leaves; returns the last report."""
    from jupyter_fuse import program as program_mod

    monkeypatch.setattr(program_mod, "MIN_LAUNCHES", 1)
    for name, value in limits.items():
        monkeypatch.setattr(program_mod, name, value)
    twin = Twin(setup, backend="cpu")
    twin.run(source)
    for _ in range(2):
        twin.change(reset)
        r = twin.run(source)
        assert r.cache == "hit", r.miss_reasons
    return r, twin


def test_a_print_after_a_call_reads_values_an_earlier_block_made(monkeypatch):
    """``print(v.mean(), v[v > 0.5][0])``: the mean is made in the block before the boolean index (a
    call outside the trace), the print is deferred into the block after it: the first block hands
    the mean back (it was lost: a KeyError, and the replay traced instead)."""
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "x": np.linspace(0, 1, 10)},
                            "v = x * 2\nprint(v.mean(), v[v > 0.5][0])\n",
                            lambda ns: ns.update(x=np.linspace(0, 1, 10)))
    assert "compiled: " in r.program, (r.program, r.program_note)


def test_a_kernel_after_a_rolled_loop_reads_an_earlier_iterations_value(monkeypatch):
    """A second loop reads, column by column, the values the first one kept: each is one iteration's
    ``v``, which the compiled loop keeps as a row of its history (the program read a variable it never
    defined: a KeyError, and the replay ran kernel by kernel)."""
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "v": np.linspace(1, 2, 6), "B": np.zeros((4, 6))},
                            "vs = []\nfor it in range(6):\n    v = v / (v * v).sum()\n    vs.append(v)\n"
                            "for it in range(6):\n    B[:, it] = vs[it][:4]\n",
                            lambda ns: ns.update(v=np.linspace(1, 2, 6), B=np.zeros((4, 6))))
    assert "iterations of" in r.program, (r.program, r.program_note)


def test_one_reduction_a_step_of_other_data_is_a_kernel_a_step_that_rolls(monkeypatch):
    """A bootstrap: each step's mean reads its own resample. Merged side by side (32 means a kernel, the
    most a kernel reads), the steps had no common body and a block held every resample: the replay ran
    kernel by kernel. One op of two iterations reading nothing in common stays apart (``fuse.partition``'s
    sites), and the replay is two compiled loops: the draws, then a mean and a store a step."""
    source = ("rng = np.random.default_rng(123)\nmeans = np.empty(n_boot)\nfor i in range(n_boot):\n"
              "    sample = rng.choice(data, size=data.size, replace=True)\n    means[i] = sample.mean()\n"
              "lo, hi = np.sort(means)[[5, -5]]\n")
    setup = lambda: {"np": np, "data": np.random.default_rng(0).exponential(2.0, 300), "n_boot": 200}  # noqa: E731
    r, _ = _compiled_replay(monkeypatch, setup, source, lambda ns: ns.update(setup()))
    assert "kernel by kernel" not in r.program and "200 iterations of (k2, k3)" in r.program, r.program


def test_a_loop_that_keeps_every_step_in_a_list_rolls_up(monkeypatch):
    """``rows.append(cells)`` each step (a rule-30 automaton): every iteration's array is read after the
    loop, so the compiled loop keeps them as rows of one history, however large a row (it unrolled
    past 64 elements: thousands of calls, replayed kernel by kernel)."""
    source = ("rows = [cells]\n"
              "for t in range(12):\n"
              "    left = np.roll(cells, 1)\n"
              "    cells = ((30 >> ((left << 2) | (cells << 1) | np.roll(cells, -1))) & 1).astype(np.uint8)\n"
              "    rows.append(cells)\n"
              "grid = np.vstack(rows)\n")
    c0 = np.zeros(101, np.uint8)
    c0[50] = 1
    r, twin = _compiled_replay(monkeypatch, lambda: {"np": np, "cells": c0.copy()}, source,
                               lambda ns: ns.update(cells=c0.copy()))
    assert "iterations of" in r.program, (r.program, r.program_note)
    rows = twin.fused["rows"]
    assert all(np.array_equal(a, b) for a, b in zip(rows, twin.plain["rows"])) and len(rows) == 13
    rows[3][:] = 7  # each row its own array, as NumPy's: writing one leaves the others alone
    assert not (rows[4] == 7).any() and not (twin.fused["grid"] == 7).any()


def test_a_loop_over_indices_from_data_rolls_up_with_a_table_of_offsets(monkeypatch):
    """``for i in order: x[i] = ...`` with ``order`` a shuffled list: each step's kernel is the same,
    at offsets that do not move by one step; the compiled loop reads them from a table (it did not
    roll: one call per step, and past 256 of them the replay ran kernel by kernel)."""
    source = ("for i in order:\n"
              "    x[i] = 0.5 * (x[i - 1] + x[i + 1]) + 0.25 * x[i]\n"
              "total = x.sum()\n")
    order = [int(i) for i in np.random.default_rng(5).permutation(np.arange(1, 39))]
    x0 = np.random.default_rng(6).random(40)
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "x": x0.copy(), "order": order}, source,
                            lambda ns: ns.update(x=x0.copy()))
    assert "37 iterations of (k1)" in r.program, (r.program, r.program_note)


@pytest.mark.parametrize("step, rolled", [
    ("y[1:-1] = y[1:-1] + 0.2 * (y[2:] - 2 * y[1:-1] + y[:-2]) + 0.01 * np.cos(w * t)",  # a value per step
     "5 iterations of (k9, 8 iterations of (k10))"),
    ("y[1:-1] = y[1:-1] + (0.1 * d + 0.05) * (y[2:] - 2 * y[1:-1] + y[:-2])",  # a value per decade
     "5 iterations of (k9, 8 iterations of (k10))"),
    ("for r in range(3):\n            y[1:-1] = y[1:-1] + 0.1 * (y[2:] - y[:-2]) * np.sin(t + r)",  # one table
     "5 iterations of (k25, 24 iterations of (k26))"),
    ("for r in range(3):\n            y[1:-1] = y[1:-1] + 0.1 * (y[2:] - y[:-2]) * np.sin(t)\n        y[0] = y[1]",
     "5 iterations of (k17, 4 iterations of (3 iterations of (k18), k21))"),  # three levels: a table of decade x step

])
def test_a_loop_of_loops_whose_steps_pass_other_scalars_rolls_both(monkeypatch, step, rolled):
    """An RK4 pendulum's ``np.cos(w * t)``, ``t`` growing, with a row kept every ten steps: each inner loop's
    scalars differ from the last one's. They were in the inner loop's key, so the decades did not roll (3,616
    launches one by one, and the cell ran as NumPy); now the outer loop reads a table of decade x step."""
    steps = 4 if "y[0]" in step else 8
    source = (f"t = 0.0\nrows = []\nfor d in range(6):\n    for s in range({steps}):\n        " + step + "\n"
              "        t += dt\n    rows.append(y.copy())\nR = np.array(rows)\n")
    y0 = np.random.default_rng(8).random(7)
    r, twin = _compiled_replay(monkeypatch, lambda: {"np": np, "y": y0.copy(), "w": 3.0, "dt": 0.1}, source,
                               lambda ns: ns.update(y=y0.copy()))
    assert rolled in r.program, (r.program, r.program_note)
    assert r.program.count("iterations of") <= (5 if "y[0]" in step else 3), r.program


def test_chunks_of_a_loop_keeping_a_row_every_tenth_step_start_at_one_step_of_ten(monkeypatch):
    """The graph is flushed at a bound; a chunk ended at the first return to its starting point past it, at
    another step of ten each time (the tenth steps hold one op more), so the chunks differed and the replay's
    program rolled none of them (31 loops, 100 calls left between them). Now a flush waits for the step after
    a tenth one: every chunk is whole decades, and the chunks roll as one loop of them."""
    from jupyter_fuse import session

    monkeypatch.setattr(session, "BOUND", 200)
    source = ("rows = []\nfor step in range(300):\n    y[1:-1] = y[1:-1] + 0.1 * (y[2:] - 2 * y[1:-1] + y[:-2])\n"
              "    if step % 10 == 0:\n        rows.append(y.copy())\nR = np.array(rows)\n")
    y0 = np.random.default_rng(3).random(9)
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "y": y0.copy()}, source, lambda ns: ns.update(y=y0.copy()))
    decades = re.search(r"(\d+) iterations of \(k\d+, 10 iterations of \(k\d+\)\)", r.program)  # (run ahead
    assert r.program.count("iterations of") <= 8 and decades and int(decades.group(1)) >= 3, r.program  # between them)


def test_steps_between_snapshots_of_a_large_array_roll_into_loops(monkeypatch):
    """A step of ``np.roll``s kept whole every 25th step (``snaps.append(u.copy())``, 400 elements): the
    iterations whose value is read after the loop are too large for a history of every iteration, so no run of
    steps rolled (752 kernel calls: the replay ran kernel by kernel, and the cell as NumPy). Now a run of steps
    is cut at the first such iteration, whose value the loop carries out: loops of 23-25 steps (a loop of them
    where the chunks' flushes fall alike; since np.roll is one op a step is one kernel, and the runs are one
    loop of them)."""
    source = ("snaps = []\nfor n in range(300):\n    up = np.roll(u, -1)\n    um = np.roll(u, 1)\n"
              "    u = u - 0.4 * (up - um) + 0.32 * (up - 2 * u + um)\n    if n % 25 == 0:\n"
              "        snaps.append(u.copy())\nS = np.array(snaps)\n")
    u0 = np.exp(-50 * (np.linspace(0, 1, 400) - 0.5) ** 2)
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "u": u0.copy()}, source, lambda ns: ns.update(u=u0.copy()))
    runs = len(re.findall(r"2[345] iterations of \(k", r.program))  # (a step a kernel: a loop of the runs)
    runs += sum(int(n) - 1 for n in re.findall(r"(\d+) iterations of \((?:k\d+, )?2[345] iterations of \(k", r.program))
    assert runs >= 10, (r.program, r.program_note)
    assert "kernel by kernel" not in r.program, r.program


def test_an_element_of_another_array_read_each_step_of_a_sweep_rolls_up(monkeypatch):
    """``u[i] = 0.5 * u[i - 1] + f[i]`` in sweeps (a Gauss-Seidel line): each step's ``f[i]`` is one element
    made at one site; they were gathered into one kernel of a hundred outputs, which the loop then read one
    an iteration ("a block of it holds 396 arrays"), and the replay ran kernel by kernel at 20x NumPy."""
    source = "u = np.zeros(n)\nfor s in range(2):\n    for i in range(1, n):\n        u[i] = 0.5 * u[i - 1] + f[i]\n"
    f0 = np.random.default_rng(7).random(400)
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "n": 400, "f": f0.copy()}, source,
                            lambda ns: ns.update(f=f0.copy()))
    assert "iterations of" in r.program and "arrays" not in r.program_note, (r.program, r.program_note)


SUMS = "sums = []\nfor t in range(20):\n    x = x * 0.9 + 0.1\n    sums.append(x.sum())\nS = np.array(sums)\n"


def _sums_setup() -> dict:
    return {"np": np, "x": np.linspace(0.0, 1.0, 8)}


def _sums_reset(ns: dict) -> None:
    ns.update(x=np.linspace(0.0, 1.0, 8))


def test_copies_of_each_steps_own_value_roll_up(monkeypatch):
    """``np.array(sums)`` of a value each step made: the copies read another variable each, which
    the compiled loop reads from a tuple of them (they did not roll: a call per value)."""
    r, _ = _compiled_replay(monkeypatch, _sums_setup, SUMS, _sums_reset)
    assert "20 iterations of" in r.program, (r.program, r.program_note)


def test_a_block_of_many_arrays_replays_kernel_by_kernel_and_says_why(monkeypatch):
    """numba's compile time grows faster than linearly with the arrays a function takes and returns:
    past ``MAX_ARRAYS`` the tape is not compiled, and the report says so."""
    r, _ = _compiled_replay(monkeypatch, _sums_setup, SUMS, _sums_reset, MAX_ARRAYS=10)
    assert not r.program and "arrays" in r.program_note and "from 10" in r.program_note, r.program_note


def test_the_arrays_a_loop_reads_from_a_tuple_count_toward_the_bound(monkeypatch):
    """The values of every step copied into an array the cell keeps, the list itself dropped: the
    block neither takes nor returns them, but its loop reads them from a tuple of 20 arrays, which
    numba compiles as slowly as 20 arguments (a 10,000-step loop: a tuple of 10,000)."""
    source = SUMS + "del sums\n"
    r, _ = _compiled_replay(monkeypatch, _sums_setup, source, _sums_reset, MAX_ARRAYS=20)
    assert not r.program and "arrays" in r.program_note, (r.program, r.program_note)


@pytest.mark.parametrize("lines", [0, 10_000])
def test_a_long_program_is_compiled_unoptimized_and_still_leaves_numpys_values(monkeypatch, lines):
    """Past ``cpu_program.OPTIMIZED_LINES`` of source a program's glue is not optimized by LLVM (its kernels
    are): a loop of slice updates, a reduction, a ``float()`` each step and a history replays the same either
    way, and the program is compiled with the flag or without it. (The backend keeps programs by their source:
    each case runs another number of steps.)"""
    from jupyter_fuse.backends import cpu_program

    monkeypatch.setattr(cpu_program, "OPTIMIZED_LINES", lines)
    made = []
    real = cpu_program.compile_source
    monkeypatch.setattr(cpu_program, "compile_source", lambda source, kernels: made.append(real(source, kernels))
                        or made[-1])
    source = (f"total = 0.0\nhist = []\nfor i in range({40 + (lines > 0)}):\n    u[1:-1] = 0.5 * (u[:-2] + u[2:]) + 0.01 * i\n"
              "    total += float(u.sum())\n    hist.append(u[::7].copy())\nH = np.array(hist)\n")
    u0 = np.linspace(0.0, 1.0, 50) ** 2
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "u": u0.copy()}, source, lambda ns: ns.update(u=u0.copy()))
    assert "compiled: " in r.program, (r.program, r.program_note)
    assert made and all(p.targetoptions.get("_dbg_optnone", False) is (lines == 0) for p in made), made


def test_a_complex_reduction_each_step_stays_in_the_compiled_loop(monkeypatch):
    """A Kuramoto order parameter each step, ``np.exp(1j * theta).mean()``: the complex mean is NumPy's call
    (reductions of complex values are not fused), made from the compiled program like a matmul is
    (``cpu_single``), so the loop rolls; before, no kernel of the replay could be called from compiled code."""
    source = ("rs = []\nfor step in range(30):\n    z = np.exp(1j * theta).mean()\n    theta = theta + 0.1 * np.sin(theta) + 0.01 * np.abs(z)\n"
              "    rs.append(np.abs(z))\nR = np.array(rs)\n")
    t0 = np.random.default_rng(5).uniform(0, 6.28, 64)
    r, _ = _compiled_replay(monkeypatch, lambda: {"np": np, "theta": t0.copy()}, source, lambda ns: ns.update(theta=t0.copy()))
    assert "iterations of" in r.program and "kernel by kernel" not in r.program, (r.program, r.program_note)


def test_a_loop_whose_results_shrink_each_step_rolls_up(monkeypatch):
    """A binomial tree's backward induction: each step's arrays are one element shorter (``V[:i + 1]``), and a
    value it binds to a name (the exercise mask) keeps a kernel's result in memory, of another size each step.
    The output's shape was in the call's key: no two steps alike, 300 calls, replayed kernel by kernel. Its
    sizes are the call's arguments now (a table, in the loop), and the loop rolls."""
    source = ("for i in range(N - 1, -1, -1):\n    S = S0 * u ** (i - 2 * j[:i + 1])\n"
              "    V[:i + 1] = disc * (p * V[:i + 1] + q * V[1:i + 2])\n    exercise = K - S > V[:i + 1]\n"
              "    V[:i + 1] = np.maximum(V[:i + 1], K - S)\n    row = V[:i + 1].copy()\n")
    n = 60

    def setup():
        return {"np": np, "N": n, "j": np.arange(n + 1), "V": np.maximum(100 - 100 * 1.02 ** (n - 2 * np.arange(n + 1)), 0),
                "K": 100.0, "S0": 100.0, "u": 1.02, "disc": 0.999, "p": 0.51, "q": 0.49}
    r, twin = _compiled_replay(monkeypatch, setup, source, lambda ns: ns.update(setup()))
    assert "iterations of (k0, k1)" in r.program and "kernel by kernel" not in r.program, (r.program, r.program_note)
    for name in ("V", "S", "exercise", "row"):
        assert np.array_equal(twin.fused[name], twin.plain[name]) and twin.fused[name].dtype == twin.plain[name].dtype
