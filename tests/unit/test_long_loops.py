"""Long loops: the pending graph is evaluated in chunks and what is done is freed, so memory stays
flat however many iterations run, and every chunk after the first reuses one plan."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import jupyter_fuse
from jupyter_fuse import plans, session
from jupyter_fuse.backends import compiler, forget_rendered

LOOPS = {
    "chain": "for i in range(n):\n    x = x * 0.5 + 1.0\n",
    "sync": "s = 0.0\nfor i in range(n):\n    x = x * 0.5 + 1.0\n    s += float(x[0])\n",
    "slices": "for i in range(n):\n    x[1:-1] = 0.5 * (x[:-2] + x[2:])\n",
    "helper": "def f(v):\n    return v * 0.5 + 1.0\nfor i in range(n):\n    x = f(x)\n",
}


def peak(source: str, n: int) -> tuple[int, object]:
    ns = {"np": np, "x": np.ones(64), "n": n}
    tracemalloc.start()
    r = jupyter_fuse.run_cell(source, ns, backend="numpy", cache=False)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ref = {"np": np, "x": np.ones(64), "n": n}
    exec(source, ref)
    np.testing.assert_allclose(ns["x"], ref["x"], rtol=1e-12)
    return top, r


@pytest.mark.parametrize("name", list(LOOPS))
def test_memory_stays_flat(name, monkeypatch):
    import gc

    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()  # (nodes other tests' plans hold keep the node table large: its rehash is a
    plans.clear()  # transient of megabytes, not a leak)
    forget_rendered()
    compiler.wait()  # (numba compiling other tests' kernels in the background allocates too)
    gc.collect()
    monkeypatch.setattr(session, "BOUND", 40)
    peak(LOOPS[name], 100)  # warm: rules, geometry
    small, _ = peak(LOOPS[name], 500)
    plans.clear()
    peak(LOOPS[name], 2500)  # (once unmeasured: the node table grows to this loop's size here, not below)
    plans.clear()
    large, r = peak(LOOPS[name], 2500)
    # (the node table is a dict other tests grew: its rehash is a transient of a few hundred KiB)
    assert large < 1.5 * small + 1_000_000, (small, large)
    assert r.kernels >= 2500
    assert len(plans._TEMPLATES) <= 10  # the chunks share a few plans: first, steady, last, around syncs


def test_chunks_share_kernels_on_the_cpu_backend(monkeypatch):
    """Relaunched, not recompiled or re-rendered: one report entry per kernel of the few plans."""
    monkeypatch.setattr(session, "BOUND", 40)
    ns = {"np": np, "x": np.ones(64), "n": 2500}
    r = jupyter_fuse.run_cell(LOOPS["chain"], ns, backend="cpu", cache=False)
    assert r.kernels >= 100 and len(r.kernel_list) <= 4, [k["name"] for k in r.kernel_list]


def test_chunks_writing_other_rows_render_each_kernel_once(monkeypatch):
    """``traj[i] = state`` writes another row each step, so no two chunks have one plan; their kernels
    still have one structure each (an input's slot and a row's offset are arguments, not source): each
    renders once, and every chunk's kernels read and write their own arrays and rows."""
    from jupyter_fuse.backends import cpu

    forget_rendered()
    rendered: list[str] = []
    real = cpu.render
    monkeypatch.setattr(cpu, "render", lambda k: rendered.append(k.kind) or real(k))
    monkeypatch.setattr(session, "BOUND", 40)
    source = ("traj = np.zeros((n, 3))\nfor i in range(n):\n    state = state * 0.5 + np.sin(state)\n"
              "    traj[i] = state\n")
    ns, ref = ({"np": np, "state": np.array([0.1, 0.2, 0.3]), "n": 300} for _ in range(2))
    r = jupyter_fuse.run_cell(source, ns, backend="cpu", cache=False)
    exec(source, ref)
    np.testing.assert_array_equal(ns["traj"], ref["traj"])
    np.testing.assert_array_equal(ns["state"], ref["state"])
    assert r.kernels >= 300 and len(rendered) <= 12, rendered


def _partitions(monkeypatch) -> list[int]:
    """A list that grows by one at each ``fuse.partition`` call (no plans kept from before), with the
    pending graph flushed past 40 ops."""
    from jupyter_fuse import fuse

    plans.clear()
    calls: list[int] = []
    real = fuse.partition
    monkeypatch.setattr(fuse, "partition", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(session, "BOUND", 40)
    return calls


def test_chunks_writing_other_rows_share_one_plan(monkeypatch):
    """Chunks that differ only in which rows they write are planned once: the template's plan is moved
    onto each chunk's nodes (``plans.Template.moved``), and each chunk still writes its own rows."""
    calls = _partitions(monkeypatch)
    source = ("traj = np.zeros((n, 3))\nfor i in range(n):\n    state = state * 0.5 + np.sin(state)\n"
              "    traj[i] = state\n")
    for backend in ("numpy", "cpu"):
        calls.clear()
        ns, ref = ({"np": np, "state": np.array([0.1, 0.2, 0.3]), "n": 300} for _ in range(2))
        r = jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
        exec(source, ref)
        np.testing.assert_array_equal(ns["traj"], ref["traj"])
        assert r.kernels >= 300 and len(calls) <= 6, (backend, len(calls))


@pytest.mark.parametrize("seed", range(4))
def test_chunks_whose_reads_and_writes_overlap_otherwise_are_planned_apart(monkeypatch, seed):
    """Rows read and written at offsets from data: a chunk reuses a plan only where its views lie as the
    plan's did relative to each other. ``b[i:i + 3] = b[j:j + 3] + 1`` writes ``b`` in place when the
    rows it reads lie apart from those it writes (j = i - 5), not when they overlap (j = i - 1)."""
    monkeypatch.setattr(session, "BOUND", 12)
    rng = np.random.default_rng(seed)
    setup = {"np": np, "a": rng.random((16, 2)), "order": rng.integers(5, 13, 120).tolist(),
             "back": rng.choice([1, 5], 120).tolist()}
    source = ("for t, i in enumerate(order):\n    b = a * 1.0\n    j = i - back[t]\n"
              "    b[i:i + 3] = b[j:j + 3] + 1.0\n    a = b * 0.5\n")
    for backend in ("numpy", "cpu"):
        ns, ref = ({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in setup.items()} for _ in range(2))
        jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
        exec(source, ref)
        np.testing.assert_array_equal(ns["a"], ref["a"])


def test_chunks_start_at_one_point_of_the_loop(monkeypatch):
    """A flush waits for the point of the loop body the chunk started after: every chunk has one
    structure, so after the first few nothing is planned again."""
    monkeypatch.setattr(session, "BOUND", 30)
    plans.clear()
    r = jupyter_fuse.run_cell("y = x + 1\n" + LOOPS["slices"], {"np": np, "x": np.ones(64), "n": 400},
                              backend="numpy", cache=False)
    assert len(plans._TEMPLATES) <= 6
    assert r.kernels >= 400 * 3


def _both(source: str, setup, backend: str) -> tuple[dict, dict, object]:
    """The cell traced (no plan cache) and run by NumPy on namespaces made alike; their `u`s compared."""
    ns, ref = setup(), setup()
    r = jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
    exec(source, ref)
    np.testing.assert_array_equal(ns["u"], ref["u"])
    return ns, ref, r


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_sweep_ending_in_a_sync_is_planned_once(monkeypatch, backend):
    """A Gauss-Seidel sweep of element updates a little longer than ``BOUND``, then ``float()`` of its
    residual: the sync computes everything pending, so the bound counts afresh from it and each sweep's
    chunks start at the same point (before, the count ran on across syncs: each sweep was cut elsewhere,
    a new structure and a new partition nearly every chunk)."""
    calls = _partitions(monkeypatch)
    source = ("res = []\nfor sweep in range(30):\n    for i in range(1, 8):\n"
              "        u[i] += 0.6 * (0.5 * (u[i - 1] + u[i + 1]) - u[i])\n"
              "    res.append(float(np.abs(u[1:-1] - 0.5 * (u[:-2] + u[2:])).max()))\n")
    ns, ref, r = _both(source, lambda: {"np": np, "u": np.linspace(0.0, 1.0, 9) ** 2}, backend)
    assert ns["res"] == ref["res"]
    assert r.kernels >= 30 * 7 and len(calls) <= 8, len(calls)


def test_a_value_made_again_in_a_later_sweep_joins_the_update_that_reads_it():
    """``h * f[i]`` is one node in every sweep (hash-consed: f does not change). Made again in a later
    sweep, it counts as made there: it is placed beside the update reading it, in that update's kernel.
    (Placed where it was first made, it came first in its sweep's graph, alone in a 2-op kernel whose
    value the update then read from memory: a kernel more per update, and a replay that did not roll.)"""
    source = ("res = []\nfor sweep in range(4):\n    for i in range(1, 7):\n"
              "        u[i] += 0.6 * (0.5 * (u[i - 1] + u[i + 1] + h * f[i]) - u[i])\n"
              "    res.append(float(u[3]))\n")
    setup = lambda: {"np": np, "u": np.linspace(0.0, 1.0, 8) ** 2, "f": np.linspace(1.0, 2.0, 8), "h": 0.01}
    ns, ref = setup(), setup()
    r = jupyter_fuse.run_cell(source, ns, backend="cpu", cache=False)
    exec(source, ref)
    np.testing.assert_array_equal(ns["u"], ref["u"])
    assert ns["res"] == ref["res"]
    updates = [k for k in r.kernel_list if "setitem" in k["ops"]]
    assert all("multiply" in k["ops"] for k in updates), [k["ops"] for k in r.kernel_list]
    assert r.kernels <= 4 * 6 + 4, r.kernels


def test_arrays_eager_calls_made_are_not_kept_live_by_the_session(monkeypatch):
    """A loop calling NumPy outside the trace every step (np.sort, a random draw) with a float() each
    step: the session holds what each call returned only while the cell does, so the buffers every
    flush visits stay few (they grew with the loop, and each sync visited them all: quadratic)."""
    seen: list[int] = []
    real = session.Session._live_buffers

    def counting(self, bufs=None):
        got = real(self, bufs)
        if bufs is None:  # (the buffers pending values: what a flush and a sync visit)
            seen.append(len(got))
        return got

    monkeypatch.setattr(session.Session, "_live_buffers", counting)
    source = ("means = np.empty(n)\nfor i in range(n):\n    s = np.sort(x * (i + 1))\n    means[i] = s.mean()\n"
              "    t = float(means[i])\n")
    ns = {"np": np, "x": np.linspace(1.0, 2.0, 50), "n": 300}
    jupyter_fuse.run_cell(source, ns, backend="numpy", cache=False)
    ref = {"np": np, "x": np.linspace(1.0, 2.0, 50), "n": 300}
    exec(source, ref)
    np.testing.assert_allclose(ns["means"], ref["means"], rtol=1e-12)
    assert len(seen) >= 300 and max(seen) < 20, max(seen)


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_sync_every_step_stores_the_loops_state(backend):
    """`pd[np.flatnonzero(I > x)] = day` each step (an SIR model) computes I there: S, rebound from S and
    values computed on the way, is stored too, or every later step's kernel recomputed S from the first
    (kernels grew by an op a step: quadratic). (``pd[I > x] = day``, a masked fill, is traced: no sync.)"""
    source = ("S, I = N - I0, I0\nfor day in range(40):\n    new = 0.3 * S * I / N\n"
              "    S, I = S - new, I + new - 0.1 * I\n    pd[np.flatnonzero(I > 0.5)] = day\n")
    ns = {"np": np, "N": 1000.0, "I0": np.linspace(1.0, 5.0, 7), "pd": np.zeros(7, int)}
    ref = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in ns.items()}
    r = jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
    exec(source, ref)
    for name in ("S", "I", "pd"):
        np.testing.assert_allclose(ns[name], ref[name], rtol=1e-12)
    assert max(len(k["ops"]) for k in r.kernel_list) <= 12


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_value_pending_over_a_loop_keeps_the_storage_its_view_reads(backend, monkeypatch):
    """``m0 = U[0].sum()`` stays pending while a loop's syncs compute ``U[0]`` (the same view node, stored).
    A sweep for unreachable values stopped at that stored view and dropped the storage under it, which
    ``m0``'s kernel reads through the view: a KeyError at the cell's end (a shock-tube solver: ``mass0``)."""
    monkeypatch.setattr(session, "GC_AT", 4)
    source = ("U = np.array([a, a * 2.0, a * 3.0])\nm0 = U[0].sum() * 0.5\nfor i in range(n):\n"
              "    r = U[0]\n    s = float(np.max(np.abs(r) + U[2]))\n    U = U * 0.5 + s\n")
    ns = {"np": np, "a": np.linspace(0.0, 1.0, 8), "n": 12}
    ref = dict(ns)
    jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
    exec(source, ref)
    for name in ("U", "m0", "s", "r"):
        np.testing.assert_array_equal(ns[name], ref[name])
        assert type(ns[name]) is type(ref[name])


@pytest.mark.parametrize("update", ["w -= lr * (X @ w)[:4]", "w = w - lr * np.exp(X[:, 0] * w[0])[:4]"])
def test_a_sync_now_and_then_stores_what_the_next_updates_read(update):
    """A training loop whose loss a ``float()`` reads every 5 epochs: the sync computes the weights on the
    way (``p`` reads them), and the pending update reads them again. They are stored at the sync, or every
    sync recomputed the weights from the first epoch (on the numpy backend, an op run twice is a launch more
    than the ops traced: 153 launches for 85 ops at 20 epochs)."""
    source = ("w = np.zeros(4)\nlosses = []\nfor epoch in range(epochs):\n    p = X @ w\n"
              f"    {update}\n    if epoch % 5 == 0:\n        losses.append(float(np.mean(p)))\n")
    for epochs in (20, 40):
        ns = {"np": np, "X": np.linspace(-1.0, 1.0, 32).reshape(8, 4), "lr": 0.01, "epochs": epochs}
        ref = dict(ns)
        r = jupyter_fuse.run_cell(source, ns, backend="numpy", cache=False)
        exec(source, ref)
        np.testing.assert_array_equal(ns["w"], ref["w"])
        np.testing.assert_array_equal(ns["losses"], ref["losses"])
        assert r.kernels <= r.ops, (epochs, r.kernels, r.ops)


def test_functions_of_a_cell_do_not_keep_its_namespace_alive():
    """A function defined in one cell and called in the next: once the namespace is gone, so is the
    function (a lookup table of NumPy functions kept every function it was asked about, and with it
    the namespace, its arrays and every node they made)."""
    import gc
    import weakref

    ns = {"np": np, "x": np.ones(8)}
    jupyter_fuse.run_cell("def f(v):\n    return v * 0.5 + 1.0\n", ns, backend="numpy", cache=False)
    jupyter_fuse.run_cell("y = f(x)\n", ns, backend="numpy", cache=False)
    np.testing.assert_array_equal(ns["y"], np.full(8, 1.5))
    f = weakref.ref(ns["f"])
    del ns
    gc.collect()
    assert f() is None


def test_a_list_made_an_array_keeps_no_lazy_array_alive():
    """``np.array([x, y])`` of lazy values keeps none of them alive after it (a reference cycle did, until the
    garbage collector ran: a live array changes what a plan stores, so a loop's kernels changed now and then
    and its replay did not roll up)."""
    import gc

    source = ("import weakref\nrefs = []\ndef f(p):\n    x = p[0] * 2\n    refs.append(weakref.ref(x))\n"
              "    return np.array([x, p[1] - x])\ng = f(p)\nalive = refs[0]() is not None\ndel refs\n")
    ns = {"np": np, "p": np.array([1.5, 2.0])}
    enabled = gc.isenabled()
    gc.disable()
    try:
        jupyter_fuse.run_cell(source, ns, backend="numpy", cache=False)
    finally:
        if enabled:
            gc.enable()
    assert ns["alive"] is False
    np.testing.assert_array_equal(ns["g"], [3.0, -1.0])


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_unpacking_a_small_array_does_not_sync(backend):
    """``x, y = p`` gives lazy copies of the elements, as ``p[0], p[1]`` do (an ODE's state unpacked every
    step no longer cuts the graph there); a ``for`` loop over a vector still hands Python NumPy scalars."""
    source = ("for i in range(20):\n    x, y = p\n    p = np.array([y, -x]) * 0.5 + p\n"
              "for v in p:\n    kinds.append(type(v).__name__)\n")
    ns = {"np": np, "p": np.array([1.0, 0.5]), "kinds": []}
    ref = {"np": np, "p": np.array([1.0, 0.5]), "kinds": []}
    r = jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
    exec(source, ref)
    np.testing.assert_array_equal(ns["p"], ref["p"])
    assert ns["kinds"] == ref["kinds"] == ["float64", "float64"]
    assert [s["line"] for s in r.syncs] == [4], r.syncs


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_an_element_loop_moves_its_plan_once_per_place(monkeypatch, backend):
    """A loop over array elements with a sync each step (`m = max(m, abs(c))`) evaluates a tiny graph at
    another element each step: its plan is moved there once per element (``plans.Template.at``), and its
    kernels prepared there once, not again at every sweep."""
    plans.clear()
    moves: list[int] = []
    real = plans.Template.moved
    monkeypatch.setattr(plans.Template, "moved", lambda self, *a: moves.append(1) or real(self, *a))
    source = ("ms = []\nfor sweep in range(6):\n    m = 0.0\n    for i in range(1, 9):\n"
              "        c = 0.5 * (u[i - 1] + u[i + 1]) - u[i]\n        u[i] += c\n        m = max(m, abs(c))\n"
              "    ms.append(m)\n")
    ns, ref, r = _both(source, lambda: {"np": np, "u": np.linspace(0.0, 1.0, 10) ** 2}, backend)
    assert ns["ms"] == ref["ms"] and [type(m) for m in ns["ms"]] == [type(m) for m in ref["ms"]]
    assert r.kernels >= 6 * 8 and len(moves) <= 2 * 8, (r.kernels, len(moves))
