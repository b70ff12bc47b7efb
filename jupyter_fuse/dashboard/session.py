"""``%fuse_dashboard``: the live session dashboard (ipywidgets + plotly).

Charts over all ``%%fuse`` runs so far — kernels per cell (fused against the
eager op count), bytes moved per cell (fused against eager NumPy: the honest
measure), time per cell split by phase, the plan cache per cell, and transfer
bytes when anything crossed the bus — and a cell picker that shows that cell's
summary (headline and kernels; its own panel has the rest). It subscribes to
the history, so every later ``%%fuse`` cell redraws it.
"""

from __future__ import annotations

import ipywidgets as w
import plotly.graph_objects as go

from .. import fmt
from . import html, stats
from .history import HISTORY, CellRun, History, session_summary
from .panel import figure_output, show_figure
from .theme import PANEL_CLASS, plot_layout

CACHE_STATES = ("hit", "miss", "unreplayable", "numpy", "off")
CACHE_COLOURS = {"hit": "#00cc96", "miss": "#ffa15a", "unreplayable": "#ef553b", "numpy": "#636efa", "off": "#c7c7c7"}


def _layout(title: str, **extra) -> dict:
    return plot_layout(title=title, height=260, legend=dict(orientation="h", y=-0.25), **extra)


def _x(runs: list[CellRun]) -> list[str]:
    return [r.label.split(":")[0] for r in runs]


def kernels_figure(runs: list[CellRun]) -> go.Figure:
    ds = [stats.as_dict(r.report) for r in runs]
    fig = go.Figure([go.Bar(x=_x(runs), y=[d["ops"] for d in ds], name="eager (one kernel per op)",
                            marker_color="#c7c7c7"),
                     go.Bar(x=_x(runs), y=[d["kernels"] for d in ds], name="fused kernels", marker_color="#636efa")])
    fig.update_layout(**_layout("kernels per cell", barmode="group"))
    return fig


def bytes_figure(runs: list[CellRun]) -> go.Figure:
    """Bytes the kernels moved per cell, against what eager NumPy would have moved."""
    ds = [stats.as_dict(r.report) for r in runs]
    eager = [stats.eager_bytes(d) for d in ds]
    fig = go.Figure([
        go.Bar(x=_x(runs), y=[e or 0 for e in eager], name="eager NumPy", marker_color="#c7c7c7",
               hovertext=[fmt.nbytes(e) if e is not None else "unknown (graph truncated)" for e in eager],
               hoverinfo="text"),
        go.Bar(x=_x(runs), y=[d.get("bytes_moved", 0) for d in ds], name="fused", marker_color="#636efa",
               hovertext=[fmt.nbytes(d.get("bytes_moved", 0)) for d in ds], hoverinfo="text")])
    moved = sum(d.get("bytes_moved", 0) for d in ds)
    fig.update_layout(**_layout(f"bytes moved per cell (total {fmt.nbytes(moved)})", barmode="group",
                                yaxis_title="bytes"))
    return fig


def time_figure(runs: list[CellRun]) -> go.Figure:
    ds = [stats.as_dict(r.report) for r in runs]
    fig = go.Figure()
    for i, phase in enumerate(("load",) + stats.PHASES):
        ys = [dict(stats.phase_times(d)).get(phase, 0.0) for d in ds]
        if phase == "load" and not any(ys):
            continue
        fig.add_bar(x=_x(runs), y=[t * 1e3 for t in ys], name=phase, marker_color=stats.PALETTE[i % 10],
                    hovertext=[f"{phase}: {fmt.seconds(t)}" for t in ys], hoverinfo="text")
    fig.update_layout(**_layout("time per cell by phase (ms)", barmode="stack"))
    return fig


def cache_figure(runs: list[CellRun]) -> go.Figure:
    """One marker per cell on a row per cache state: which cells replayed, at a glance."""
    ds = [stats.as_dict(r.report) for r in runs]
    fig = go.Figure()
    xs = _x(runs)
    for state in CACHE_STATES:
        picked = [(x, d) for x, d in zip(xs, ds) if d.get("cache", "off") == state]
        if picked:
            fig.add_scatter(x=[x for x, _ in picked], y=[state] * len(picked), mode="markers", name=state,
                            marker=dict(size=14, symbol="square", color=CACHE_COLOURS[state]),
                            hovertext=[stats.headline(d)["cache"] or state for _, d in picked], hoverinfo="text")
    hits = sum(d.get("cache") == "hit" for d in ds)
    fig.update_layout(**_layout(f"plan cache: {fmt.plural(hits, 'replay')} of {fmt.plural(len(ds), 'cell run')}",
                                showlegend=False))
    fig.update_layout(height=80 + 30 * max(1, len({d.get('cache', 'off') for d in ds})))
    fig.update_yaxes(categoryorder="array", categoryarray=list(CACHE_STATES)[::-1])
    return fig


def transfers_figure(runs: list[CellRun]) -> go.Figure | None:
    ds = [stats.as_dict(r.report) for r in runs]
    total = sum(d.get("bytes_h2d", 0) + d.get("bytes_d2h", 0) for d in ds)
    if not total:
        return None  # nothing crossed a bus: no chart (the header says so)
    fig = go.Figure([go.Bar(x=_x(runs), y=[d.get("bytes_h2d", 0) for d in ds], name="host->device"),
                     go.Bar(x=_x(runs), y=[d.get("bytes_d2h", 0) for d in ds], name="device->host")])
    fig.update_layout(**_layout(f"transfer bytes (total {fmt.nbytes(total)})", barmode="stack"))
    return fig


FIGURES = {"kernels": kernels_figure, "bytes": bytes_figure, "time": time_figure, "cache": cache_figure,
           "transfers": transfers_figure}


class SessionDashboard(w.VBox):
    def __init__(self, history: History = HISTORY) -> None:
        self.history = history
        self.header = w.HTML()
        self.outputs = {name: figure_output(_empty()) for name in FIGURES}
        self.grid = w.GridBox([], layout=w.Layout(grid_template_columns="repeat(2, minmax(0, 1fr))", width="100%"))
        self.cell = w.Dropdown(description="cell", layout=w.Layout(width="480px"))
        self.cell_panel = w.HTML()
        self._refreshing = False
        self.cell.observe(self._picked, names="value")
        super().__init__([self.header, self.grid, self.cell, self.cell_panel], layout=w.Layout(width="100%"))
        self.add_class(PANEL_CLASS)
        self.refresh()
        history.subscribe(self)

    def on_run(self, run: CellRun) -> None:
        self.refresh()

    def refresh(self) -> None:
        runs = self.history.runs
        shown = []
        for name, make in FIGURES.items():
            fig = make(runs) if runs else None
            if fig is not None:
                show_figure(self.outputs[name], fig)
                shown.append(self.outputs[name])
        self.grid.children = shown
        self.header.value = self._header(runs)
        self._refreshing = True  # new options reset the value: don't build a summary for each step
        try:
            self.cell.options = [(r.label, i) for i, r in enumerate(runs)]
            self.cell.value = len(runs) - 1 if runs else None  # follow the newest cell
        finally:
            self._refreshing = False
        self.show_cell(self.cell.value)

    def _picked(self, change: dict) -> None:
        if not self._refreshing:
            self.show_cell(change["new"])

    def show_cell(self, index: int | None) -> None:
        """The picked cell's headline and kernels: its own panel, under the cell, has the rest."""
        runs = self.history.runs
        if index is None or not 0 <= index < len(runs):
            self.cell_panel.value = ""
            return
        d = stats.as_dict(runs[index].report)
        self.cell_panel.value = html.headline(d) + html.kernels_table(d)

    @staticmethod
    def _header(runs: list[CellRun]) -> str:
        return f"<b>jupyter_fuse session</b>: {session_summary(runs)}"


def _empty() -> go.Figure:
    return go.Figure(layout=plot_layout(title=""))
