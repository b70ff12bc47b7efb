"""The fusion graph as a teacher draws it, from real Reports: names, loops, outside calls, syncs, slices."""

from __future__ import annotations

import numpy as np
import pytest

import jupyter_fuse as jf
from jupyter_fuse.dashboard import figures, graph, html, names

STENCIL = "for i in range(50):\n    u[1:-1] = 0.5 * (u[:-2] + u[2:])\nv = u * 2\n"


def _run(source, backend="numpy", **arrays):
    ns = {"np": np, **arrays}
    return jf.run_cell(source, ns, backend, cache=False).to_dict()


def _labels(dr):
    return sorted(n.label for n in dr.nodes.values())


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_loop_is_drawn_once_with_its_count(backend, monkeypatch):
    if backend == "cpu":
        pytest.importorskip("numba")
    monkeypatch.setenv("JUPYTER_FUSE_FASTFORWARD", "off")  # (traced whole: see the test below)
    d = _run(STENCIL, backend, u=np.linspace(0, 1, 100))
    assert len(d["kernel_list"]) > 50
    dr = graph.draw(d)
    (loop,) = dr.loops
    assert loop.reps == 50 and loop.lines == [2]  # the loop body (run_cell numbers the source it is given)
    assert _labels(dr).count("u = setitem") == 1 and "v = multiply" in _labels(dr)
    assert next(n for n in dr.nodes.values() if n.label == "u = setitem").output  # the loop's last u stays
    assert {"u[:-2]", "u[2:]"} <= set(_labels(dr))  # slices as the user wrote them
    assert len(dr.nodes) < 12  # one iteration, not fifty
    svg = html.graph_svg(d)
    assert "loop body ×50" in svg and "getitem" not in svg
    fig = figures.graph_figure(d)
    assert any("loop ×50" in (a.text or "") for a in fig.layout.annotations)


def test_a_loop_run_ahead_says_so_under_its_drawn_iterations():
    """Its iterations run ahead (``loops.py``) were never traced: the drawing shows the traced ones and says how
    many more ran."""
    d = _run(STENCIL, "numpy", u=np.linspace(0, 1, 100))
    (lp,) = d["loops"]
    dr = graph.draw(d)
    assert lp["iterations"] >= 40 and dr.loops and dr.loops[0].reps + lp["iterations"] <= 50
    assert f"line 1: {lp['iterations']} of the loop's 50 iterations ran ahead as its plan" in dr.notes[0]


def test_find_loops():
    assert graph.find_loops(list("abcbcbcd")) == [(1, 2, 3)]
    assert graph.find_loops(list("abcd")) == []
    assert graph.find_loops(list("aaaxbbb")) == [(0, 1, 3), (4, 1, 3)]


def test_a_view_of_a_computed_value_is_not_from_outside():
    d = _run("y = x * 2\nz = y[1:] + y[:-1]", x=np.arange(6.0))
    dr = graph.draw(d)
    views = [n for n in dr.nodes.values() if n.kind == "view"]
    assert sorted(v.label for v in views) == ["y[1:]", "y[:-1]"]
    assert all("a value computed line 1" in v.hover and "outside" not in v.hover for v in views)


def test_calls_outside_the_trace_are_nodes_with_their_reason():
    rng = np.random.default_rng(0)
    d = _run("y = np.linalg.solve(A, b) * 2\nz = np.fft.fft(b).real + y", "numpy",
             A=rng.random((4, 4)) + 4 * np.eye(4), b=np.ones(4))
    dr = graph.draw(d)
    eager = {n.op: n for n in dr.nodes.values() if n.kind == "eager"}
    assert set(eager) == {"np.linalg.solve", "np.fft.fft", ".real"}  # (.real of a complex result: read outside)
    assert "not supported lazily" in eager["np.linalg.solve"].hover
    solve_result = next(b for a, b in dr.edges if a == eager["np.linalg.solve"].id)
    assert dr.nodes[solve_result].label == "np.linalg.solve(…)"  # no longer an unexplained input
    assert {n.kernel for n in eager.values()} <= set(dr.kernels)  # the legend names their kernels
    assert "ran outside the trace" in html.graph_svg(d)


def test_a_sync_is_drawn_where_python_read_the_value():
    d = _run("y = x * 2\nprint(y.sum())\nz = y + 1", "numpy", x=np.arange(6.0))
    dr = graph.draw(d)
    (sync,) = [n for n in dr.nodes.values() if n.kind == "sync"]
    assert sync.label == "str()/print (line 2)" and sync.lines == [2]
    read = next(a for a, b in dr.edges if b == sync.id)
    assert dr.nodes[read].op == "sum" and sync.x > dr.nodes[read].x


def test_softmax_shows_what_subtract_reads():
    d = _run("m = x.max()\ne = np.exp(x - m)\ns = e / e.sum()", "numpy", x=np.linspace(0, 1, 10))
    dr = graph.draw(d)
    by_label = {n.label: n.id for n in dr.nodes.values()}
    sub = by_label["subtract"]
    assert {dr.nodes[a].label for a, b in dr.edges if b == sub} == {"x", "m = max"}
    assert {n.label for n in dr.nodes.values() if n.output} == {"m = max", "e = exp", "s = divide"}
    x, s = dr.nodes[by_label["x"]], dr.nodes[sub]
    assert s.x - x.x > 1  # the edge skips a column: drawn bent, so it does not hide behind max
    assert ' Q' in html.graph_svg(d)


def test_names_are_left_out_when_a_line_is_ambiguous():
    d = _run("a = x + 1; b = x * 2", "numpy", x=np.arange(3.0))
    assert names.user_names(d).node.get(2) is None  # two statements on one line: which is which is unclear
    assert all(" = " not in n.label for n in graph.draw(d).nodes.values() if n.kind == "op")


def test_launch_counts_and_truncated_graphs_are_read_as_they_come():
    """A loop's kernel may be one entry with `launches`, and a long loop's nodes may be truncated."""
    d = _run("y = x * 2 + 1", "numpy", x=np.arange(3.0))
    d["kernel_list"][0]["launches"] = 100
    d["nodes"].append({"truncated": 5000})
    dr = graph.draw(d)
    assert dr.nodes[min(dr.nodes)].label == "x" and any(n.tag == "k0 ×100" for n in dr.nodes.values())
    assert any("truncated" in t for t in dr.notes)
    from jupyter_fuse.dashboard import stats

    assert stats.eager_bytes(d) is None and "saved by fusion" not in stats.moved_text(stats.headline(d))
