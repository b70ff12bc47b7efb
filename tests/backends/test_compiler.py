"""Background compiles (jupyter_fuse/backends/compiler.py): a small kernel's first run runs on NumPy
while numba compiles it between cells; the next run launches the compiled kernel; a replay runs
kernel by kernel until its one-program form is compiled. Results are NumPy's throughout."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

import jupyter_fuse
from jupyter_fuse.backends import compiler, cpu

pytest.importorskip("numba")

# an op chain no other test uses: its kernel is compiled by nobody before this module
CELL = "y = np.hypot(np.arctan(x), np.log1p(x)) * np.cbrt(x) + np.arcsinh(x) * {k}"
LOOP = """\
for t in range(40):
    b[1:-1] = np.arctan(a[:-2] * 0.25 + a[2:] * {k}) + np.cbrt(a[1:-1])
    a[1:-1] = np.arctan(b[:-2] * 0.25 + b[2:] * {k}) + np.cbrt(b[1:-1])
"""


@pytest.fixture
def background(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_FUSE_COMPILE", "background")
    monkeypatch.setenv("JUPYTER_FUSE_CACHE_DIR", str(tmp_path))  # nothing on disk yet
    backend = cpu.CpuBackend()  # nothing in memory either
    monkeypatch.setattr("jupyter_fuse.backends._INSTANCES", {"cpu": backend})
    monkeypatch.setattr(cpu, "_MODULES", {})
    yield backend
    compiler.wait()


def _numpy(source: str, ns: dict) -> dict:
    ref = dict(ns)
    exec(source, ref)
    return ref


def test_a_small_kernel_runs_on_numpy_while_it_compiles_then_compiled(background):
    source = CELL.format(k=2)
    ns = {"np": np, "x": np.linspace(0.1, 3.0, 50)}
    r1 = jupyter_fuse.run_cell(source, dict(ns), backend="cpu", cache=False)
    assert r1.kernel_list[0].get("fallback") == cpu.COMPILING
    # the report shows the kernel numba compiles meanwhile (a first run in a fresh notebook shows its code)
    assert "def _kernel_seq(" in r1.kernel_list[0]["source"] and "arctan" in r1.kernel_list[0]["source"]
    assert r1.times["compile"] == 0.0
    out1 = dict(ns)
    jupyter_fuse.run_cell(source, out1, backend="cpu", cache=False)
    np.testing.assert_array_equal(out1["y"], _numpy(source, ns)["y"])  # NumPy ran it: NumPy's bits
    assert jupyter_fuse.wait_for_compiles(timeout=120)
    assert compiler.pending() == 0
    out2 = dict(ns)
    r2 = jupyter_fuse.run_cell(source, out2, backend="cpu", cache=False)
    (k,) = r2.kernel_list
    assert "fallback" not in k and k["cache"] == "memory" and k["source"]
    np.testing.assert_allclose(out2["y"], _numpy(source, ns)["y"], rtol=1e-12)
    assert out2["y"].dtype == np.float64


def _compiled_then_a_new_process(source: str, ns: dict, monkeypatch) -> None:
    """Compile ``source``'s kernel, then forget it as a new process would: nothing in memory,
    numba's disk cache (and our marker) on disk."""
    jupyter_fuse.run_cell(source, dict(ns), backend="cpu", cache=False)
    assert jupyter_fuse.wait_for_compiles(timeout=120)
    for name in [m for m in sys.modules if m.startswith("jupyter_fuse_kernel_")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(cpu, "_MODULES", {})
    monkeypatch.setattr("jupyter_fuse.backends._INSTANCES", {"cpu": cpu.CpuBackend()})


def test_a_kernel_compiled_before_loads_from_disk_at_once(background, monkeypatch):
    source = CELL.format(k=3)
    ns = {"np": np, "x": np.linspace(0.1, 3.0, 40)}
    _compiled_then_a_new_process(source, ns, monkeypatch)
    r = jupyter_fuse.run_cell(source, dict(ns), backend="cpu", cache=False)
    (k,) = r.kernel_list
    assert "fallback" not in k and k["cache"] == "disk"


def test_a_first_run_does_not_wait_for_numba_to_load_a_kernel_compiled_before(background, monkeypatch):
    """In a fresh process numba is not imported yet (0.4 s): a small kernel compiled in an earlier
    session runs on NumPy meanwhile, and the background job imports numba and loads it."""
    source = CELL.format(k=5)
    ns = {"np": np, "x": np.linspace(0.1, 3.0, 40)}
    _compiled_then_a_new_process(source, ns, monkeypatch)
    monkeypatch.setattr(cpu, "numba_imported", lambda: False)
    monkeypatch.setattr(compiler, "_JOBS", {})  # (a new process: no job done yet)
    out = dict(ns)
    r = jupyter_fuse.run_cell(source, out, backend="cpu", cache=False)
    (k,) = r.kernel_list
    assert k["fallback"] == cpu.COMPILING and r.times["compile"] == 0
    np.testing.assert_array_equal(out["y"], _numpy(source, ns)["y"])
    assert jupyter_fuse.wait_for_compiles(timeout=120)
    r = jupyter_fuse.run_cell(source, dict(ns), backend="cpu", cache=False)
    (k,) = r.kernel_list
    assert "fallback" not in k and k["cache"] in ("disk", "memory")


def test_a_large_kernel_compiles_where_it_runs(background, monkeypatch):
    """Past ``SMALL`` element-ops NumPy's run of the kernel could cost more than numba's compile."""
    monkeypatch.setattr(compiler, "SMALL", 1 << 12)
    source = CELL.format(k=4)
    r = jupyter_fuse.run_cell(source, {"np": np, "x": np.linspace(0.1, 3.0, 1 << 10)}, backend="cpu",
                              cache=False)
    (k,) = r.kernel_list
    assert "fallback" not in k and k["cache"] == "compiled" and r.times["compile"] > 0


def test_a_large_kernel_of_many_ops_runs_on_numpy_while_it_compiles(background, monkeypatch):
    """Past ``SMALL`` too, a kernel of many ops (a fused 20-step loop: one of about 120 ops)
    runs on NumPy while numba compiles it, where NumPy's run would take less than the compile."""
    monkeypatch.setattr(compiler, "SMALL", 1 << 12)
    source = "y = x\nfor i in range(20):\n    y = y * 1.00013 + 0.25 * np.arctan(y)"
    ns = {"np": np, "x": np.linspace(0.1, 3.0, 1 << 10)}
    r = jupyter_fuse.run_cell(source, dict(ns), backend="cpu", cache=False)
    (k,) = r.kernel_list
    assert len(k["ops"]) >= compiler.MANY_OPS and k.get("fallback") == cpu.COMPILING and r.times["compile"] == 0.0
    assert jupyter_fuse.wait_for_compiles(timeout=120)
    out = dict(ns)
    (k,) = jupyter_fuse.run_cell(source, out, backend="cpu", cache=False).kernel_list
    assert "fallback" not in k and k["cache"] == "memory"
    np.testing.assert_allclose(out["y"], _numpy(source, ns)["y"], rtol=1e-12)


def test_a_replay_runs_kernel_by_kernel_until_its_program_is_compiled(background):
    source = LOOP.format(k=0.5)

    def fresh() -> dict:
        a = np.linspace(0.0, 1.0, 30)
        return {"np": np, "a": a, "b": a.copy()}

    ref = _numpy(source, fresh())
    runs = []
    for i in range(3):
        ns = fresh()
        runs.append(jupyter_fuse.run_cell(source, ns, backend="cpu"))
        np.testing.assert_allclose(ns["a"], ref["a"], rtol=1e-12)
        np.testing.assert_allclose(ns["b"], ref["b"], rtol=1e-12)
        if i == 1:
            assert "while numba compiles it as one program in the background" in runs[1].program_note
            assert jupyter_fuse.wait_for_compiles(timeout=300)
    assert runs[0].cache != "hit" and runs[1].cache == runs[2].cache == "hit"
    assert runs[2].program.startswith("compiled: 40 iterations of")
    assert runs[2].times["compile"] < 0.05  # compiled in the background, not at its first call


def test_a_program_calling_numpy_is_called_once_in_the_background(background, monkeypatch):
    """A program holding a matmul (numba's object mode) cost 5-20 ms more at its first call than
    at the next, after its compile: the background job calls it once on zeros, so the first compiled
    replay pays nothing of it (its report counts no compile time) and leaves NumPy's values."""
    from jupyter_fuse import program
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    source = "for t in range(30):\n    x = np.maximum(W @ x, 0.1) * 0.5 + b\n"
    rng = np.random.default_rng(2)
    w0, b0 = rng.random((20, 20)) / 20, rng.random(20)

    def fresh() -> dict:
        return {"np": np, "W": w0.copy(), "b": b0.copy(), "x": b0.copy()}

    ref = _numpy(source, fresh())
    for i in range(3):
        ns = fresh()
        r = jupyter_fuse.run_cell(source, ns, backend="cpu")
        np.testing.assert_array_equal(ns["x"], ref["x"])
        if i == 1:
            assert jupyter_fuse.wait_for_compiles(timeout=300)
    assert "iterations of" in r.program and r.times["compile"] == 0, (r.program, r.times)
    (entry,) = next(iter(PLAN_CACHE.cells.values()))
    assert all(blk.called and blk.fn in cpu._WARMED for blk in entry.program.blocks)


def test_no_compile_starts_while_a_cell_runs():
    started = threading.Event()
    with compiler.cell_running():
        job = compiler.submit(("test", object()), started.set)
        time.sleep(0.2)
        assert not started.is_set() and not job.done.is_set()
    assert job.done.wait(30) and started.is_set()


def test_garbage_is_collected_after_the_last_queued_job_before_it_is_done(monkeypatch):
    """A compile's leftovers are collected in the background, once per batch, before ``wait`` returns:
    else Python's next full collection falls inside a later cell (the first compiled replay)."""
    collected: list[int] = []
    monkeypatch.setattr(compiler.gc, "collect", lambda: collected.append(compiler._QUEUE.qsize()))
    gate = threading.Event()
    with compiler.cell_running():  # both jobs queue before either starts
        first = compiler.submit(("test", object()), lambda: gate.wait(30))
        second = compiler.submit(("test", object()), lambda: None)
    gate.set()
    assert first.done.wait(30) and second.done.wait(30)
    assert collected == [0]  # once, after the second: not while a job was still queued


def test_cells_take_the_gil_back_sooner_while_compiles_are_pending():
    """A cell run while numba compiles (a script runs the next cell at once) shares the GIL with it: its NumPy
    calls that let go of it take it back within ``SWITCH_INTERVAL``, not Python's 5 ms, until the last job is
    done (bench/loops.py's cavity: its 2nd run 0.8-1.2 s -> NumPy's 10 ms)."""
    import sys

    before = sys.getswitchinterval()
    gate = threading.Event()
    first = compiler.submit(("test", object()), lambda: gate.wait(30))
    second = compiler.submit(("test", object()), lambda: None)
    assert sys.getswitchinterval() == pytest.approx(compiler.SWITCH_INTERVAL)  # (kept in microseconds)
    gate.set()
    assert first.done.wait(30) and second.done.wait(30)
    assert sys.getswitchinterval() == before


def test_a_failed_background_compile_is_kept_for_the_launch_that_asks():
    def broken() -> None:
        raise RuntimeError("numba failed")

    job = compiler.submit(("test", object()), broken)
    assert job.done.wait(30)
    assert isinstance(job.error, RuntimeError) and job.work is None


def test_sync_mode_compiles_every_kernel_where_it_first_runs(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_FUSE_COMPILE", "sync")
    monkeypatch.setenv("JUPYTER_FUSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("jupyter_fuse.backends._INSTANCES", {"cpu": cpu.CpuBackend()})
    monkeypatch.setattr(cpu, "_MODULES", {})
    r = jupyter_fuse.run_cell(CELL.format(k=5), {"np": np, "x": np.linspace(0.1, 3.0, 10)}, backend="cpu", cache=False)
    (k,) = r.kernel_list
    assert "fallback" not in k and k["cache"] in ("compiled", "disk")


def test_the_objects_alive_before_a_cell_are_frozen_out_of_the_collector_while_it_runs():
    """A traced loop allocates enough for full collections; each would walk numba's objects (0.15-0.35 s):
    the objects older than a traced cell are frozen (``gc.freeze``) until it ends, then collected as before."""
    import gc

    seen = []
    before = gc.get_threshold()
    ns = {"np": np, "x": np.arange(4.0), "probe": lambda: seen.append((gc.get_freeze_count(), gc.get_threshold()))}
    jupyter_fuse.run_cell("y = x * 2\nprobe()\nz = y + 1", ns, "cpu", cache=False)
    assert seen and seen[0][0] > 1000, seen
    # ... and the cell's own objects are collected less often (fewer, larger young collections)
    assert seen[0][1] == compiler.TRACED_GC and gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    with compiler.old_objects_frozen():  # (a cell run inside a frozen one leaves the freezing to it)
        with compiler.old_objects_frozen():
            pass
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_a_kernel_launched_again_from_another_plan_asks_numba_for_no_types(monkeypatch):
    """Each eval of a traced loop writing another row makes launchers of its own (its plan is moved onto other
    nodes); the entry point of a kernel already compiled for these argument types is found without numba's
    ``typeof`` (~15 us an array)."""
    src = "for i in range(6):\n    x = x * 0.5 + 1.0\n    traj[i] = x\n    s = float(x.sum())\n"
    ns = {"np": np, "x": np.arange(8.0), "traj": np.zeros((6, 8))}
    jupyter_fuse.run_cell(src, dict(ns), "cpu", cache=False)
    compiler.wait(60)
    numba = cpu._import_numba()
    asked = []
    real = numba.typeof
    monkeypatch.setattr(numba, "typeof", lambda *a, **k: asked.append(a) or real(*a, **k))
    jupyter_fuse.run_cell(src, dict(ns), "cpu", cache=False)
    assert not asked, len(asked)


def test_a_recorded_cells_guard_function_is_made_in_the_background(background):
    """A first replay made its guards' generated function (~0.5 ms of compile()); it is made while the user
    reads now, and the replay finds it."""
    from jupyter_fuse.cache import PLAN_CACHE

    ns = {"np": np, "x": np.linspace(0.1, 1.0, 50)}
    jupyter_fuse.run_cell(CELL.format(k=8.5), ns, backend="cpu")
    compiler.wait()
    entry = PLAN_CACHE.cells[next(reversed(PLAN_CACHE.cells))][0]  # (the cell stored last)
    assert entry._holds is not None


def test_kernels_of_one_source_reading_other_dtypes_each_compile_in_the_background(background):
    """Two copies, of int64 and of complex values, render to one source (numba types the arrays): each is
    compiled for its own argument types between cells. The second once waited on the first one's compile,
    for other types, and its first replay compiled it where the user waits (fft_recursive: 350 ms)."""
    source = "p[1:] = p[:-1]\nq[1:] = q[:-1]"
    ns = {"p": np.arange(40.0) * 1j, "q": np.arange(40)}
    r1 = jupyter_fuse.run_cell(source, dict(ns, p=ns["p"].copy(), q=ns["q"].copy()), backend="cpu", cache=False)
    sources = [k["source"] for k in r1.kernel_list]
    assert len(sources) == 2 and sources[0] == sources[1]
    assert jupyter_fuse.wait_for_compiles(timeout=120)
    out = dict(ns, p=ns["p"].copy(), q=ns["q"].copy())
    r2 = jupyter_fuse.run_cell(source, out, backend="cpu", cache=False)
    assert r2.times["compile"] == 0.0 and all(k["cache"] == "memory" for k in r2.kernel_list), r2.kernel_list
    ref = _numpy(source, dict(ns, p=ns["p"].copy(), q=ns["q"].copy()))
    for name in ("p", "q"):
        assert out[name].dtype == ref[name].dtype and np.array_equal(out[name], ref[name])


def test_a_kernel_run_on_numpy_frees_each_value_after_its_last_use(background):
    """Run op by op on NumPy while numba compiles it, a fused chain of sixteen ops holds two or three arrays
    at a time, as NumPy's own run of the cell does, not every intermediate (a 20-step Mandelbrot on a million
    points held about a hundred 16 MB arrays at once)."""
    import tracemalloc

    source = "y = x\nfor i in range(8):\n    y = y * 1.00007 + 0.5"
    ns = {"np": np, "x": np.ones(1 << 19)}  # 4 MiB an array
    tracemalloc.start()
    try:
        r = jupyter_fuse.run_cell(source, ns, backend="cpu", cache=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    (k,) = r.kernel_list
    assert k.get("fallback") == cpu.COMPILING and peak < 5 * 4 * 2 ** 20, peak
    np.testing.assert_array_equal(ns["y"], _numpy(source, {"np": np, "x": np.ones(1 << 19)})["y"])
