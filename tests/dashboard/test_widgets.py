"""The widget tree, the plotly figures and the MIME bundle, built from known Reports."""

from __future__ import annotations

import ipywidgets as w
import pytest

from jupyter_fuse.dashboard import figures, mime, stats
from jupyter_fuse.dashboard.history import History
from jupyter_fuse.dashboard.panel import PLOTLY_MIME, Panel
from jupyter_fuse.dashboard.session import SessionDashboard


def _names(fig):
    return [t.name for t in fig.data]


def test_graph_figure_traces(fused):
    fig = figures.graph_figure(fused)
    assert _names(fig) == ["edges", "k0", "k1", "inputs", "cut edges", "cuts"]
    k0 = fig.data[1]
    assert sorted(k0.text) == ["add", "cos", "mean", "power", "power", "sin"]
    assert k0.marker.color == stats.kernel_colour(fused.to_dict(), "k0") != fig.data[2].marker.color
    cuts = fig.data[-1]
    assert len(cuts.x) == 2 and all("reduction boundary" in h and "line 3" in h for h in cuts.hovertext)


def test_graph_marks_breaks_without_edges(eager):
    """Eager runs cut between ops that share no edge (a new input): the mark sits at the kernel's start."""
    d = eager.to_dict()
    fig = figures.graph_figure(d)
    cuts = next(t for t in fig.data if t.name == "cuts")
    assert len(cuts.x) == len(d["breaks"]) + sum(max(0, len(c["edges"]) - 1) for c in __import__(
        "jupyter_fuse.dashboard.graph", fromlist=["cuts"]).cuts(d))


def test_timeline_figure(fused):
    fig = figures.timeline_figure(fused)
    (bar,) = fig.data
    assert list(bar.y) == list(stats.PHASES)
    assert dict(zip(bar.y, bar.x))["compile"] == pytest.approx(300.0)
    assert "total 305.0 ms" in fig.layout.title.text


def test_timed_copies_move_from_run_to_transfers(fused):
    fused.transfers[0]["time"], fused.transfers[1]["time"] = 0.0015, 0.0005  # as the real cupy backend times them
    times = dict(stats.phase_times(fused.to_dict()))
    assert times["transfers"] == pytest.approx(0.002) and times["run"] == pytest.approx(0.001)
    (bar,) = figures.timeline_figure(fused).data
    assert dict(zip(bar.y, bar.x))["transfers"] == pytest.approx(2.0)  # ms


def test_transfers_figure(fused, eager):
    fig = figures.transfers_figure(fused)
    assert _names(fig) == ["h2d", "d2h"] and list(fig.data[0].x) == ["x"]
    empty = figures.transfers_figure(eager)
    assert not empty.data and "host memory" in empty.layout.annotations[0].text


def test_panel_tree(fused):
    p = Panel(fused)
    assert isinstance(p.children[0], w.HTML) and "8 ops -&gt; 2 kernels" in p.children[0].value
    assert p.tab.titles == ("Kernels (2)", "Fusion graph", "Timeline", "Transfers (2)", "Guards (failed!)")
    graph_out = p.tabs["Fusion graph"]
    assert graph_out.outputs[0]["data"][PLOTLY_MIME]["data"][1]["name"] == "k0"
    assert _names(graph_out.figure)[-1] == "cuts"
    assert "fde2e1" in p.tabs["Guards"].value  # the failed guard's row is highlighted
    assert "(500,)" in p.tabs["Guards"].value and "(1000,)" in p.tabs["Guards"].value


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
    assert p.tab.titles[-1] == "Guards"
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
    assert _names(dash.outputs["time"].figure) == list(stats.PHASES)
    cache = dash.outputs["cache"].figure
    assert [list(t.y) for t in cache.data] == [[int(r.cache == t.name) for r in (eager, fused)] for t in cache.data]
    assert f"{sum(r.cache == 'miss' for r in (eager, fused))} misses" in cache.layout.title.text
    assert list(dash.outputs["transfers"].figure.data[0].y) == [0, 8000]
    assert "2 cells" in dash.header.value
    assert dash.cell.value == 1 and dash.cell_panel.children[0].report["kernels"] == 2
    dash.cell.value = 0  # selecting a cell shows its panel
    assert dash.cell_panel.children[0].report["kernels"] == eager.kernels


def test_history_is_bounded_and_drops_results(fused, monkeypatch):
    from jupyter_fuse.dashboard import history

    monkeypatch.setattr(history, "MAX_RUNS", 3)
    h = History()
    fused.result = object()
    for i in range(5):
        h.record(fused, i)
    assert [r.number for r in h.runs] == [2, 3, 4] and h.runs[0].report.result is None
    assert fused.result is not None
