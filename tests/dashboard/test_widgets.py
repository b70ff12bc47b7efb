"""The widget tree, the plotly figures and the MIME bundle, built from known Reports."""

from __future__ import annotations

import ipywidgets as w
import pytest

from jupyter_fuse.dashboard import figures, graph, mime, stats
from jupyter_fuse.dashboard.history import History
from jupyter_fuse.dashboard.panel import PLOTLY_MIME, Panel
from jupyter_fuse.dashboard.session import SessionDashboard


def _names(fig):
    return [t.name for t in fig.data]


def test_graph_figure_traces(fused):
    fig = figures.graph_figure(fused)
    assert _names(fig) == ["edges", "k0", "k0 name", "k1", "k1 name", "inputs", "cut edges", "cuts"]
    k0 = fig.data[1]
    assert sorted(k0.text) == ["<b>m = mean</b>", "<b>y = add</b>", "cos", "power", "power", "sin"]
    assert k0.marker.color == stats.kernel_colour(fused.to_dict(), "k0") != fig.data[3].marker.color
    assert list(fig.data[2].text) == ["k0"]  # the kernel's name under its first node
    cuts = fig.data[-1]
    assert len(cuts.x) == 2 and all("reduction boundary" in h and "line 3" in h for h in cuts.hovertext)


def test_graph_marks_breaks_without_edges(eager):
    """Eager runs cut between ops that share no edge (a new input): the mark sits at the kernel's start."""
    d = eager.to_dict()
    fig = figures.graph_figure(d)
    cuts = next(t for t in fig.data if t.name == "cuts")
    drawn = graph.draw(d).cuts
    assert len(cuts.x) == sum(max(1, len(c.edges)) for c in drawn) and len(drawn) >= 1


def test_kernels_beyond_ten_differ_by_shape():
    from jupyter_fuse.dashboard.stats import PALETTE

    d = {"kernel_list": [{"name": f"k{i}"} for i in range(12)]}
    assert stats.kernel_colour(d, "k0") == stats.kernel_colour(d, "k10") == PALETTE[0]
    assert stats.kernel_symbol(d, "k0") != stats.kernel_symbol(d, "k10")


def test_timeline_figure(fused):
    fig = figures.timeline_figure(fused)
    (bar,) = fig.data
    assert list(bar.y) == list(stats.PHASES)
    assert dict(zip(bar.y, bar.x))["compile"] == pytest.approx(300.0)
    assert "total 305 ms: kernels 1% · compile 98% · overhead 1%" in fig.layout.title.text


def test_timed_copies_move_from_run_to_transfers(fused):
    fused.transfers[0]["time"], fused.transfers[1]["time"] = 0.0015, 0.0005  # as the real cupy backend times them
    times = dict(stats.phase_times(fused.to_dict()))
    assert times["transfers"] == pytest.approx(0.002) and times["run"] == pytest.approx(0.001)
    (bar,) = figures.timeline_figure(fused).data
    assert dict(zip(bar.y, bar.x))["transfers"] == pytest.approx(2.0)  # ms


def test_transfers_figure(fused, eager):
    fig = figures.transfers_figure(fused)
    assert _names(fig) == ["h2d", "d2h"] and list(fig.data[0].x) == ["x"]
    assert figures.transfers_figure(eager) is None  # nothing moved: no empty chart
    p = Panel(eager)
    (note,) = p.tabs["Transfers"].children  # the note, once, and no plot
    assert note.value.count("host memory") == 1


def test_panel_tree(fused):
    p = Panel(fused)
    assert isinstance(p.children[0], w.HTML) and "8 ops -&gt; 2 kernels" in p.children[0].value
    assert p.tab.titles == ("Kernels (2)", "Fusion graph", "Timeline", "Transfers (2)", "Guards (2, 1 changed)")
    (graph_out,) = p.tabs["Fusion graph"].children  # in a box that scrolls a long graph
    assert graph_out.outputs[0]["data"][PLOTLY_MIME]["data"][1]["name"] == "k0"
    assert _names(graph_out.figure)[-1] == "cuts"
    assert "jupyter-fuse-plot" in graph_out._dom_classes and "jupyter-fuse-panel" in p._dom_classes
    guards = p.tabs["Guards"].value
    assert "changed" in guards and "failed" not in guards and "traced again" in guards  # calm: it is expected
    assert "(500,)" in guards and "(1000,)" in guards


def test_selecting_a_kernel_shows_its_source(fused):
    p = Panel(fused)
    assert [v for _, v in p.kernel_select.options] == ["k0", "k1"]
    assert "k0" in p.source.value
    p.kernel_select.value = "k1"
    assert "k1" in p.source.value and "style=" in p.source.value  # highlighted by pygments
    p.show_source("k0")
    assert p.kernel_select.value == "k0"


def test_panel_without_source_says_why(eager):
    p = Panel(eager)
    assert "generated no source" in p.source.value
    assert p.tab.titles[-1] == f"Guards ({len(eager.guards)})"
    p.select_tab("Transfers")
    assert p.tab.selected_index == 3


def test_bundle_keys_and_json(fused):
    data = mime.bundle(fused, widget=True)
    assert set(data) == {"text/plain", "text/html", mime.REPORT_MIME, mime.WIDGET_MIME}
    assert data[mime.REPORT_MIME] == fused.to_dict()
    assert data["text/plain"].splitlines()[0] == fused.summary()
    from ipywidgets.widgets.widget import _instances

    assert type(_instances[data[mime.WIDGET_MIME]["model_id"]]) is Panel


def test_bundle_without_widget_frontend(fused):
    assert mime.widgets_possible() is False  # no kernel under pytest
    data = mime.ReportView(fused)._repr_mimebundle_()
    assert mime.WIDGET_MIME not in data and "<details" in data["text/html"]


def test_session_dashboard_updates_live(fused, eager):
    h = History()
    h.record(eager, 1)
    dash = SessionDashboard(h)
    assert [o for o, _ in dash.cell.options] == ["In [1]: y = np.sin(x) ** 2 + np.cos(x) ** 2"]
    h.record(fused, 2)  # a later %%fuse cell: the dashboard redraws itself
    kernels = dash.outputs["kernels"].figure
    assert _names(kernels) == ["eager (one kernel per op)", "fused kernels"]
    assert list(kernels.data[1].y) == [eager.kernels, 2] and list(kernels.data[0].y) == [eager.ops, 8]
    moved = dash.outputs["bytes"].figure
    assert _names(moved) == ["eager NumPy", "fused"]
    assert list(moved.data[1].y) == [eager.bytes_moved, fused.bytes_moved]
    assert list(moved.data[0].y) == [stats.eager_bytes(eager.to_dict()), stats.eager_bytes(fused.to_dict())]
    assert _names(dash.outputs["time"].figure) == list(stats.PHASES)
    cache = dash.outputs["cache"].figure
    expected: dict[str, list[str]] = {}
    for label, r in (("In [1]", eager), ("In [2]", fused)):  # the eager fixture may replay an earlier test's plan
        expected.setdefault(r.cache, []).append(label)
    assert {t.name: list(t.x) for t in cache.data} == expected
    hits = int(eager.cache == "hit")
    assert f"{hits} replay{'s' * (hits != 1)} of 2 cell runs" in cache.layout.title.text
    assert list(dash.outputs["transfers"].figure.data[0].y) == [0, 8000]
    assert dash.outputs["transfers"] in dash.grid.children
    assert "2 cells" in dash.header.value
    assert dash.cell.value == 1 and "8 ops -&gt; 2 kernels" in dash.cell_panel.value
    assert "def k0" not in dash.cell_panel.value  # the dashboard does not repeat the cell's kernel sources
    dash.cell.value = 0  # selecting a cell shows its summary
    assert f"{eager.ops} ops -&gt; {eager.kernels} kernels" in dash.cell_panel.value


def test_dashboard_draws_no_empty_charts(eager):
    h = History()
    h.record(eager, 1)
    dash = SessionDashboard(h)
    assert dash.outputs["transfers"] not in dash.grid.children  # nothing crossed a bus
    assert "no host&lt;-&gt;device transfers" in dash.header.value or "no host<->device" in dash.header.value


def test_history_is_bounded_and_drops_results(fused, monkeypatch):
    from jupyter_fuse.dashboard import history

    monkeypatch.setattr(history, "MAX_RUNS", 3)
    h = History()
    fused.result = object()
    for i in range(5):
        h.record(fused, i)
    assert [r.number for r in h.runs] == [2, 3, 4] and h.runs[0].report.result is None
    assert fused.result is not None
