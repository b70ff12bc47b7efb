"""``%fuse_dashboard``: the live session dashboard (ipywidgets + plotly).

Four charts over all ``%%fuse`` runs so far — kernels per cell (fused against
the eager op count), time per cell split by phase, cache hits and misses,
transfer bytes — and a cell picker that shows that cell's panel. It
subscribes to the history, so every later ``%%fuse`` cell redraws it.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import plotly.graph_objects as go

from . import stats
from .history import HISTORY, CellRun, History, session_summary
from .panel import build_panel, figure_output, show_figure

_LAYOUT = dict(margin=dict(l=10, r=10, t=36, b=10), height=260, template="plotly_white",
               legend=dict(orientation="h", y=-0.25))
CACHE_STATES = ("hit", "miss", "unreplayable", "off")


def _x(runs: list[CellRun]) -> list[str]:
    return [r.label.split(":")[0] for r in runs]


def kernels_figure(runs: list[CellRun]) -> go.Figure:
    ds = [stats.as_dict(r.report) for r in runs]
    fig = go.Figure([go.Bar(x=_x(runs), y=[d["ops"] for d in ds], name="eager (one kernel per op)",
                            marker_color="#c7c7c7"),
                     go.Bar(x=_x(runs), y=[d["kernels"] for d in ds], name="fused kernels", marker_color="#636efa")])
    fig.update_layout(**_LAYOUT, title="kernels per cell", barmode="group")
    return fig


def time_figure(runs: list[CellRun]) -> go.Figure:
    ds = [stats.as_dict(r.report) for r in runs]
    fig = go.Figure()
    for i, phase in enumerate(stats.PHASES):
        fig.add_bar(x=_x(runs), y=[dict(stats.phase_times(d))[phase] * 1e3 for d in ds], name=phase,
                    marker_color=stats.PALETTE[i])
    fig.update_layout(**_LAYOUT, title="time per cell by phase (ms)", barmode="stack")
    return fig


def cache_figure(runs: list[CellRun]) -> go.Figure:
    ds = [stats.as_dict(r.report) for r in runs]
    colours = {"hit": "#00cc96", "miss": "#ef553b", "unreplayable": "#ffa15a", "off": "#c7c7c7"}
    fig = go.Figure()
    for state in CACHE_STATES:
        fig.add_bar(x=_x(runs), y=[int(d.get("cache", "off") == state) for d in ds], name=state,
                    marker_color=colours[state], hovertext=["; ".join(d.get("miss_reasons", [])) for d in ds])
    hits = sum(d.get("cache") == "hit" for d in ds)
    misses = sum(d.get("cache") == "miss" for d in ds)
    fig.update_layout(**_LAYOUT, title=f"plan cache: {hits} hits, {misses} misses", barmode="stack")
    fig.update_yaxes(visible=False)
    return fig


def transfers_figure(runs: list[CellRun]) -> go.Figure:
    ds = [stats.as_dict(r.report) for r in runs]
    fig = go.Figure([go.Bar(x=_x(runs), y=[d.get("bytes_h2d", 0) for d in ds], name="host->device"),
                     go.Bar(x=_x(runs), y=[d.get("bytes_d2h", 0) for d in ds], name="device->host")])
    total = sum(d.get("bytes_h2d", 0) + d.get("bytes_d2h", 0) for d in ds)
    fig.update_layout(**_LAYOUT, title=f"transfer bytes (total {stats.fmt_bytes(total)})", barmode="stack")
    return fig


FIGURES = {"kernels": kernels_figure, "time": time_figure, "cache": cache_figure, "transfers": transfers_figure}


class SessionDashboard(w.VBox):
    def __init__(self, history: History = HISTORY) -> None:
        self.history = history
        self.header = w.HTML()
        self.outputs = {name: figure_output(make(history.runs)) for name, make in FIGURES.items()}
        grid = w.GridBox(list(self.outputs.values()),
                         layout=w.Layout(grid_template_columns="repeat(2, minmax(0, 1fr))", width="100%"))
        self.cell = w.Dropdown(description="cell", layout=w.Layout(width="480px"))
        self.cell_panel = w.Box(layout=w.Layout(width="100%"))
        self._refreshing = False
        self.cell.observe(self._picked, names="value")
        super().__init__([self.header, grid, self.cell, self.cell_panel], layout=w.Layout(width="100%"))
        self.refresh()
        history.subscribe(self)

    def on_run(self, run: CellRun) -> None:
        self.refresh()

    def refresh(self) -> None:
        runs = self.history.runs
        for name, make in FIGURES.items():
            show_figure(self.outputs[name], make(runs))
        self.header.value = self._header(runs)
        self._refreshing = True  # new options reset the value: don't build a panel for each step
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
        runs = self.history.runs
        if index is None or not 0 <= index < len(runs):
            self.cell_panel.children = ()
            return
        self.cell_panel.children = (build_panel(runs[index].report, runs[index].comparison),)

    @staticmethod
    def _header(runs: list[CellRun]) -> str:
        return f"<b>jupyter_fuse session</b>: {session_summary(runs)}"
