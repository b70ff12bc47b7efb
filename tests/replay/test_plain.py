"""A cell fusion does not pay for runs as plain NumPy (``runner.PLAIN_MIN``): a settled replay is timed once
against plain NumPy, and the faster is kept. The decisions are timing's;
here the thresholds are set so that each way is taken for sure, and every run leaves what NumPy leaves."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import Twin

from jupyter_fuse import runner

# a scalar loop: a branch on each value, one element written at a time (Floyd-Steinberg's error diffusion)
DITHER = """\
out = img.copy()
for i in range(out.shape[0]):
    for j in range(out.shape[1] - 1):
        old = out[i, j]
        new = 1.0 if old >= 0.5 else 0.0
        out[i, j] = new
        out[i, j + 1] += (old - new) * 0.4375
"""


def _setup() -> dict:
    return {"np": np, "img": np.random.default_rng(5).random((4, 5))}


@pytest.fixture
def suspicious(monkeypatch):
    """Every settled replay is a suspect (any time, any share outside kernels)."""
    monkeypatch.setenv("JUPYTER_FUSE_PLAIN", "on")
    monkeypatch.setattr(runner, "NUMPY_OP", 0.0)
    monkeypatch.setattr(runner, "PLAIN_MIN", 0.0)
    monkeypatch.setattr(runner, "PLAIN_OVERHEAD", -1.0)
    monkeypatch.setattr(runner, "PLAIN_DRIFT", float("inf"))  # (a loaded machine's slow plain run is no drift here)


def test_a_cell_numpy_runs_faster_runs_as_plain_numpy_and_says_why(suspicious, monkeypatch):
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)  # (NumPy "wins" whatever the times)
    twin = Twin(_setup, backend="cpu")
    states = [twin.run(DITHER).cache for _ in range(5)]
    assert states == ["miss", "hit", "hit", "numpy", "numpy"], states  # (the first replay loads: not timed)
    probe, plain = twin.reports[3], twin.reports[4]
    assert "ran as plain NumPy once, to time it" in probe.miss_reasons[0] and "from now on" in probe.miss_reasons[0]
    assert "fusion does not pay for this cell" in plain.miss_reasons[0] and "kernel launches" in plain.miss_reasons[0]
    assert "fusion does not pay" in plain.summary() and plain.kernels == 0


def test_a_replay_whose_kernels_are_slower_than_numpys_calls_is_timed_against_numpy(suspicious, monkeypatch):
    """Not only launching: NumPy's own vector `tanh`/`exp` outrun kernels that call the C library's per element,
    so a settled replay that spent its time inside kernels is timed against NumPy too (a first replay, which
    loads its kernels, only when launching took most of it)."""
    monkeypatch.setattr(runner, "PLAIN_OVERHEAD", 2.0)  # (no share of time outside kernels is "most")
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    twin = Twin(lambda: {"np": np, "x": np.linspace(0.0, 1.0, 1000)}, backend="cpu")
    source = "y = x\nfor i in range(3):\n    y = np.tanh(y * 0.5 + 0.1)\n"
    states = [twin.run(source).cache for _ in range(5)]
    assert states == ["miss", "hit", "hit", "numpy", "numpy"], states
    assert "% of it outside kernels" in twin.reports[3].miss_reasons[0], twin.reports[3].miss_reasons


def test_a_cell_run_as_plain_numpy_is_compiled_once(suspicious, monkeypatch):
    """Its source does not change, so it is not parsed and compiled again every run (0.1-0.4 ms a cell)."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    compiles = []
    monkeypatch.setattr(runner, "_CODE", {})
    monkeypatch.setattr(runner, "_compile", lambda *a, _c=runner._compile: compiles.append(a) or _c(*a))
    twin = Twin(_setup, backend="cpu")
    states = [twin.run(DITHER).cache for _ in range(6)]
    assert states == ["miss", "hit", "hit", "numpy", "numpy", "numpy"], states
    assert len(compiles) == 2, compiles  # (the traced run's, and the plain runs' one)


def test_a_replay_faster_than_numpy_is_kept(suspicious, monkeypatch):
    monkeypatch.setattr(runner, "PLAIN_MARGIN", float("inf"))  # (the replay "wins")
    monkeypatch.setattr(runner, "RETIME", float("inf"))  # (by far: NumPy is timed once)
    twin = Twin(_setup, backend="cpu")
    states = [twin.run(DITHER).cache for _ in range(5)]
    assert states == ["miss", "hit", "hit", "numpy", "hit"], states
    assert "the replay is kept" in twin.reports[3].miss_reasons[0]


def test_a_close_call_times_numpy_once_more(suspicious, monkeypatch):
    """One cold run of NumPy is no verdict where the replay kept was near it: the next run times NumPy again,
    and the faster of the two decides."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", float("inf"))  # (the replay "wins")
    monkeypatch.setattr(runner, "RETIME", 0.0)  # (every verdict is close)
    twin = Twin(_setup, backend="cpu")
    states = [twin.run(DITHER).cache for _ in range(6)]
    assert states == ["miss", "hit", "hit", "numpy", "numpy", "hit"], states
    assert "the next run times NumPy once more" in twin.reports[3].miss_reasons[0], twin.reports[3].miss_reasons
    assert "ran as plain NumPy again" in twin.reports[4].miss_reasons[0] and "the replay is kept" in \
        twin.reports[4].miss_reasons[0], twin.reports[4].miss_reasons


def test_a_plain_run_much_slower_than_numpy_was_tries_fusion_again(suspicious, monkeypatch):
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    twin = Twin(_setup, backend="cpu")
    for _ in range(4):
        twin.run(DITHER)
    monkeypatch.setattr(runner, "PLAIN_DRIFT", 0.0)  # (this run "took far longer" than the timed one)
    r = twin.run(DITHER)
    assert r.cache == "numpy" and "tries fusion again" in r.miss_reasons[0]
    assert twin.run(DITHER).cache == "hit"  # the plan is still there, its guards hold


# a cell that cannot be replayed (Python's random keeps a global generator): traced every run
UNREPLAYABLE = "import random\nrandom.seed(4)\n" + DITHER + "noise = out * random.random()\n"


def test_a_cell_traced_every_run_whose_first_run_was_all_overhead_is_timed_as_numpy_next(suspicious, monkeypatch):
    """An unreplayable cell whose first traced run took long (HOPELESS_TRACE) nearly all outside kernels and
    compiles (a union-find over array elements: 7 s a run, NumPy 8 ms) is timed as plain NumPy on its second
    run already, not traced a second time; below the thresholds it waits for its second traced run."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    monkeypatch.setattr(runner, "HOPELESS_TRACE", 0.0)
    monkeypatch.setattr(runner, "HOPELESS_OVERHEAD", -1.0)
    twin = Twin(_setup, backend="cpu")
    states = [twin.run(UNREPLAYABLE).cache for _ in range(3)]
    assert states == ["unreplayable", "numpy", "numpy"], states
    assert "where the traced run took" in twin.reports[1].miss_reasons[0], twin.reports[1].miss_reasons
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    monkeypatch.setattr(runner, "HOPELESS_OVERHEAD", 1.0)  # (no share is more than all of it)
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 1e-9)  # (a settled judgement: NumPy wins)
    monkeypatch.setattr(runner, "FIRST_REPLAY_MARGIN", 1e12)  # (a provisional one: fusion wins)
    states = [twin.run(UNREPLAYABLE).cache for _ in range(4)]
    assert states == ["unreplayable", "numpy", "unreplayable", "numpy"], states  # (COLD: provisional, then settled)
    assert "where the first traced run took" in twin.reports[-3].miss_reasons[0] \
        and "the fusion is kept" in twin.reports[-3].miss_reasons[0], twin.reports[-3].miss_reasons


def test_a_cell_traced_every_run_runs_as_plain_numpy_when_numpy_is_faster(suspicious, monkeypatch):
    """An unreplayable cell's traced runs are judged like replays: its first (without its compiles) provisionally,
    as a first replay is (``runner.COLD``), so its second run is NumPy's, timed."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    twin = Twin(_setup, backend="cpu")
    states = [twin.run(UNREPLAYABLE).cache for _ in range(4)]
    assert states == ["unreplayable", "numpy", "numpy", "numpy"], states
    assert "where the first traced run took" in twin.reports[1].miss_reasons[0], twin.reports[1].miss_reasons
    assert "its first traced run took" in twin.reports[3].miss_reasons[0]
    monkeypatch.setattr(runner, "PLAIN_MARGIN", float("inf"))  # (fusion "wins": kept, after one timed run)
    monkeypatch.setattr(runner, "RETIME", float("inf"))  # (by far)
    twin = Twin(_setup, backend="cpu")
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    states = [twin.run(UNREPLAYABLE).cache for _ in range(4)]
    assert states == ["unreplayable", "numpy", "unreplayable", "unreplayable"], states
    assert "the fusion is kept" in twin.reports[1].miss_reasons[0]


def test_timing_against_numpy_can_be_turned_off(suspicious, monkeypatch):
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    monkeypatch.setenv("JUPYTER_FUSE_PLAIN", "off")
    twin = Twin(_setup, backend="cpu")
    assert [twin.run(DITHER).cache for _ in range(4)] == ["miss", "hit", "hit", "hit"]


def test_a_plain_run_raises_numpys_exception(suspicious, monkeypatch):
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    twin = Twin(lambda: {**_setup(), "k": 1}, backend="cpu")
    source = DITHER + "r = out.reshape(k, -1)\n"
    for _ in range(4):
        twin.run(source)
    twin.change(lambda ns: ns.update(k=7))  # (20 elements: no shape of 7 rows)
    twin.run(source)  # (the twin checks: the same exception, the namespace as NumPy left it)
    assert twin.reports[-1] is None


def _replay_with_recorded(source: str, setup: dict, shift, meanwhile: bool):
    """Record ``source``, move its recorded float() value by ``shift`` (as if the traced run had rounded it
    otherwise) and mark the traced run's report as having run kernels on NumPy meanwhile or not."""
    import numpy as np

    import jupyter_fuse as jf
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    jf.run_cell(source, dict(setup), backend="cpu")
    (entry,) = [e for es in PLAN_CACHE.cells.values() for e in es]
    i = next(i for i, s in enumerate(entry.steps) if s[0] == "sync")
    s = entry.steps[i]
    entry.steps[i] = (*s[:4], shift(s[4]), *s[5:])
    entry.report["meanwhile"] = meanwhile
    return jf.run_cell(source, dict(setup), backend="cpu")


def test_a_sync_off_in_the_last_bit_after_numpy_ran_meanwhile_says_why():
    """A first run computes small kernels with NumPy while numba compiles them; where NumPy rounds a function
    otherwise (its own vector exp on AVX-512 CPUs), the replay's float() differs in the last bit, and the
    miss says so, not only the two values."""
    import numpy as np

    setup = {"np": np, "x": np.linspace(0.0, 1.0, 50)}
    source = "r = float(np.exp(x).sum())\n"
    r = _replay_with_recorded(source, setup, lambda v: float(np.nextafter(v, 0.0)), meanwhile=True)
    assert r.cache == "miss" and "NumPy while numba compiled" in r.miss_reasons[0], r.miss_reasons
    r = _replay_with_recorded(source, setup, lambda v: float(np.nextafter(v, 0.0)), meanwhile=False)
    assert r.cache == "miss" and "NumPy while numba compiled" not in r.miss_reasons[0], r.miss_reasons
    r = _replay_with_recorded(source, setup, lambda v: v * 1.5, meanwhile=True)  # another value: no such reason
    assert r.cache == "miss" and "NumPy while numba compiled" not in r.miss_reasons[0], r.miss_reasons


def _small() -> dict:  # (2 x 3 pixels: fewer kernel launches a replay than a compiled program pays from)
    return {"np": np, "img": np.random.default_rng(6).random((2, 3))}


def test_a_replay_no_program_will_speed_up_is_judged_from_its_first_replay(suspicious, monkeypatch):
    """With no compiled program to come (here too few launches), the first replay is what later ones are:
    the third run is NumPy's, timed, not a second replay."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    twin = Twin(_small, backend="cpu")
    states = [twin.run(DITHER).cache for _ in range(4)]
    assert states == ["miss", "hit", "numpy", "numpy"], states
    assert "compiled program pays from" in (twin.reports[1].program_note or ""), twin.reports[1].program_note
    assert "where the first replay took" in twin.reports[2].miss_reasons[0], twin.reports[2].miss_reasons
    assert "its first replay took" in twin.reports[3].miss_reasons[0]


def test_a_replay_kept_on_its_first_replays_time_is_judged_again_when_settled(suspicious, monkeypatch):
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)  # (a settled replay "loses" to NumPy ...)
    monkeypatch.setattr(runner, "FIRST_REPLAY_MARGIN", float("inf"))  # (... a first one's time never does)
    twin = Twin(_small, backend="cpu")
    states = [twin.run(DITHER).cache for _ in range(5)]
    assert states == ["miss", "hit", "numpy", "hit", "numpy"], states
    assert "the replay is kept" in twin.reports[2].miss_reasons[0]
    assert "fusion does not pay" in twin.reports[4].miss_reasons[0], twin.reports[4].miss_reasons


def test_a_program_that_leaves_most_launches_to_python_does_not_wait_for_a_settled_replay():
    """The first replay's time judges a cell whose compiled program still launches most kernels one by one
    (a point-wise sweep: a block per step that differs), not one whose program runs most of them."""
    from types import SimpleNamespace

    from jupyter_fuse.cache import PLAN_CACHE

    for loose, judged in ((90, True), (10, False)):
        entry = SimpleNamespace(program=SimpleNamespace(loose_launches=loose), program_jobs=[])
        key = ("test", loose)
        PLAN_CACHE.stats[key] = {"first_replay": (0.05, 100, entry)}
        try:
            assert runner._runs_plain(key) is judged
            assert ("replay_time" in PLAN_CACHE.stats[key]) is judged
        finally:
            del PLAN_CACHE.stats[key]


def test_a_replay_kept_on_its_first_replays_time_waits_for_compiles_to_be_judged(suspicious, monkeypatch):
    """A settled replay judges a provisional verdict only with nothing compiling (the replay's time would
    include a compile's share of the GIL); until then the verdict stays open, not dropped."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    monkeypatch.setattr(runner, "FIRST_REPLAY_MARGIN", float("inf"))
    twin = Twin(_small, backend="cpu")
    states = [twin.run(DITHER).cache for _ in range(3)]
    monkeypatch.setattr(runner.compiler, "pending", lambda: 1)  # (another cell's kernel compiling)
    states.append(twin.run(DITHER).cache)
    monkeypatch.setattr(runner.compiler, "pending", lambda: 0)
    states += [twin.run(DITHER).cache for _ in range(2)]
    assert states == ["miss", "hit", "numpy", "hit", "hit", "numpy"], states


def test_a_replay_of_tiny_kernels_runs_as_plain_numpy_while_its_program_compiles(monkeypatch):
    """Compiles in the background (as in a notebook): the first run leaves numba compiling its replay as one
    program; a second run before that ends would replay 4x5 pixels' kernels one by one, whose launches cost
    more than the kernels' work, so it is plain NumPy (timed), and the run after the compile replays the
    program."""
    import jupyter_fuse

    monkeypatch.setenv("JUPYTER_FUSE_PLAIN", "on")
    monkeypatch.setenv("JUPYTER_FUSE_COMPILE", "background")
    twin = Twin(_setup, backend="cpu")
    gate = _hold_compiles()  # (the second run comes before the compile ends, however quick: a program
    twin.run(DITHER)  # of this source may be in memory from another test, and its job then ends at once)
    states = [twin.run(DITHER).cache]
    gate.set()
    jupyter_fuse.wait_for_compiles()
    states.append(twin.run(DITHER).cache)
    assert states == ["numpy", "hit"], states
    why = twin.reports[1].miss_reasons[0]
    assert "while numba compiles its replay as one program" in why and "kernel launches would take" in why, why
    assert twin.reports[1].guards, "the plan's guards held"
    assert twin.reports[2].program, twin.reports[2].program_note
    jupyter_fuse.wait_for_compiles()
    monkeypatch.setattr(runner, "LAUNCH_COST", 0.0)  # (launching "costs nothing": the replay runs kernel by kernel)
    runner.PLAN_CACHE.clear()
    twin = Twin(_setup, backend="cpu")
    gate = _hold_compiles()
    twin.run(DITHER)
    assert twin.run(DITHER).cache == "hit", twin.reports[1].miss_reasons
    gate.set()
    assert "while numba compiles it as one program" in twin.reports[1].program_note, twin.reports[1].program_note
    jupyter_fuse.wait_for_compiles()


def _hold_compiles():
    """An event that holds the background compiles (a job waiting on it, first in the queue) until it is set."""
    import threading

    from jupyter_fuse.backends import compiler

    gate = threading.Event()
    compiler.submit(("held", object()), lambda: gate.wait(60))
    return gate


def test_a_replay_that_will_run_kernel_by_kernel_is_judged_by_its_launches_against_numpys_time(monkeypatch):
    """Its program's build refused it (here by force): a replay would launch every tiny kernel one by one.
    The next run is plain NumPy, timed; its launches are judged against that time, and NumPy wins: plain
    NumPy for good, each run saying why, without a slow replay to time first."""
    import jupyter_fuse
    from jupyter_fuse import cache, program

    def refuse(*a):
        raise program.NotCompiled("refused here")

    monkeypatch.setenv("JUPYTER_FUSE_PLAIN", "on")
    monkeypatch.setenv("JUPYTER_FUSE_COMPILE", "background")
    monkeypatch.setattr(cache.program, "build", refuse)
    twin = Twin(_setup, backend="cpu")
    twin.run(DITHER)
    jupyter_fuse.wait_for_compiles()
    states = [twin.run(DITHER).cache for _ in range(3)]
    assert states == ["numpy", "numpy", "numpy"], states
    timed = twin.reports[1].miss_reasons[0]
    assert timed.startswith("ran as plain NumPy: it replays kernel by kernel") and "to launch" in timed, timed
    for r in twin.reports[2:]:
        why = r.miss_reasons[0]
        assert "fusion does not pay" in why and "it replays kernel by kernel" in why and "to launch" in why, why
    monkeypatch.setattr(runner, "LAUNCH_COST", 1e-12)  # (launching "costs nothing" next to NumPy: replayed)
    runner.PLAN_CACHE.clear()
    twin = Twin(_setup, backend="cpu")
    twin.run(DITHER)
    jupyter_fuse.wait_for_compiles()
    assert twin.run(DITHER).cache == "hit"


# a data-dependent loop: a call outside the trace each step (np.flatnonzero's size depends on the values)
SELECTS = """\
v = img.ravel().copy()
picked = 0
for i in range(40):
    idx = np.flatnonzero(v > 0.5)
    picked += idx.size
    v = v * 0.97 + 0.02 * (idx.size % 3)
"""


def test_a_program_that_still_makes_most_calls_one_at_a_time_is_judged_by_them_against_numpys_time(monkeypatch):
    """Its compiled program runs each step's kernels, but the calls outside the trace (and the blocks between
    them) are still made one at a time, each costing about ``runner.LAUNCH_COST``: the second run is plain
    NumPy, timed, those calls are judged against it, and NumPy wins, without a slow replay timed first."""
    import jupyter_fuse

    monkeypatch.setenv("JUPYTER_FUSE_PLAIN", "on")
    monkeypatch.setenv("JUPYTER_FUSE_COMPILE", "background")
    monkeypatch.setattr(runner, "LAUNCH_COST", 1.0)  # (a call "costs" a second: NumPy wins)
    twin = Twin(lambda: {"np": np, "img": np.random.default_rng(6).random((4, 5))}, backend="cpu")
    twin.run(SELECTS)
    jupyter_fuse.wait_for_compiles()
    states = [twin.run(SELECTS).cache for _ in range(2)]
    assert states == ["numpy", "numpy"], (states, twin.reports[1].miss_reasons)
    timed, plain = twin.reports[1].miss_reasons[0], twin.reports[2].miss_reasons[0]
    assert timed.startswith("ran as plain NumPy: its compiled program still makes") and "calls one at a time" in timed, timed
    assert "fusion does not pay" in plain and "calls one at a time" in plain, plain
    monkeypatch.setattr(runner, "LAUNCH_COST", 1e-12)  # (calls "cost nothing": replayed)
    runner.PLAN_CACHE.clear()
    twin = Twin(lambda: {"np": np, "img": np.random.default_rng(6).random((4, 5))}, backend="cpu")
    twin.run(SELECTS)
    jupyter_fuse.wait_for_compiles()
    assert twin.run(SELECTS).cache == "hit"
    assert twin.reports[1].program, twin.reports[1].program_note


# an element sweep that reads a value back into Python at every step (Python's max of a float and a lazy one)
SWEEP = """\
ms = []
for sweep in range(40):
    m = 0.0
    for i in range(1, 9):
        c = 0.5 * (u[i - 1] + u[i + 1]) - u[i]
        u[i] += c
        m = max(m, abs(c))
    ms.append(m)
print(len(ms), ms[-1])
"""


def _sweep_setup() -> dict:
    return {"np": np, "u": np.linspace(0.0, 1.0, 10) ** 2}


@pytest.fixture
def hasty(monkeypatch):
    """A traced run is abandoned at its first look (``abandon``): any time, any share outside kernels."""
    from jupyter_fuse import abandon

    monkeypatch.setenv("JUPYTER_FUSE_PLAIN", "on")
    monkeypatch.setattr(abandon, "AFTER", 0.0)
    monkeypatch.setattr(abandon, "SYNCS", 64)
    monkeypatch.setattr(abandon, "CHECK_EVERY", 32)
    monkeypatch.setattr(abandon, "OVERHEAD", 0.0)


def test_a_hopeless_traced_run_is_abandoned_for_plain_numpy(hasty, monkeypatch):
    """The cell runs again from the start as plain NumPy: the user's `u` is written once, the text printed once,
    and the cell runs as NumPy from then on."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    twin = Twin(_sweep_setup, backend="cpu")
    first, second = twin.run(SWEEP), twin.run(SWEEP)
    assert first.cache == "numpy" and "abandoned after" in first.miss_reasons[0], first.miss_reasons
    assert "syncs by then" in first.miss_reasons[0] and "from now on" in first.miss_reasons[0]
    assert first.times["trace"] > 0 and first.kernels == 0
    assert second.cache == "numpy" and "fusion does not pay" in second.miss_reasons[0], second.miss_reasons


def test_an_abandoned_run_as_slow_as_numpy_is_traced_whole_next(hasty, monkeypatch):
    monkeypatch.setattr(runner, "PLAIN_MARGIN", float("inf"))  # (NumPy "took as long" whatever the times)
    twin = Twin(_sweep_setup, backend="cpu")
    first, second = twin.run(SWEEP), twin.run(SWEEP)
    assert first.cache == "numpy" and "the next run is traced whole" in first.miss_reasons[0], first.miss_reasons
    assert second.cache == "miss", (second.cache, second.miss_reasons)


@pytest.mark.parametrize("source, extra", [
    ('print("sweeping")\n' + SWEEP, dict),  # (printed: a second run would print it again)
    (SWEEP.replace("    ms.append(m)", "    ms.append(m)\n    seen.append(m)"), lambda: {"seen": []}),  # (an outside list)
    (SWEEP.replace("        m = max(m, abs(c))", "        try:\n            m = max(m, abs(c))\n        except:\n"
                   "            pass"), dict),  # (a bare except would catch the abandonment)
    ("try:\n" + "".join("    " + ln + "\n" for ln in SWEEP.splitlines()) + "finally:\n    print('done')\n", dict),
])
def test_a_traced_run_that_did_what_the_user_sees_is_not_abandoned(hasty, source, extra):
    twin = Twin(lambda: {**_sweep_setup(), **extra()}, backend="cpu")
    first = twin.run(source)
    assert first.cache in ("miss", "unreplayable"), (first.cache, first.miss_reasons)


def test_an_abandoned_run_puts_the_generators_it_drew_from_back(hasty, monkeypatch):
    """The user's generator and NumPy's global one are where the abandoned run found them: the plain run draws
    what NumPy draws (the twin compares their states and every value)."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    source = SWEEP.replace("u[i] += c", "u[i] += c * rng.random() + 1e-3 * np.random.rand()")
    twin = Twin(lambda: {**_sweep_setup(), "rng": np.random.default_rng(3)}, backend="cpu")
    first = twin.run(source)
    assert first.cache == "numpy" and "abandoned after" in first.miss_reasons[0], first.miss_reasons


def test_an_abandoned_run_puts_numpys_error_modes_back(hasty, monkeypatch):
    """A cell that sets NumPy's error modes and sets them back at its end, abandoned in between: the plain run
    finds the modes the cell began with, and leaves them so."""
    monkeypatch.setattr(runner, "PLAIN_MARGIN", 0.0)
    source = 'old = np.seterr(under="warn")\n' + SWEEP + "np.seterr(**old)\n"
    before = np.geterr()
    twin = Twin(_sweep_setup, backend="cpu")
    first = twin.run(source)
    assert first.cache == "numpy" and "abandoned after" in first.miss_reasons[0], first.miss_reasons
    assert np.geterr() == before and twin.fused["old"] == twin.plain["old"]
