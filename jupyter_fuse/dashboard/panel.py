"""The per-cell panel: an ipywidgets tree built from one Report (and maybe a Comparison).

Layout: headline, optional eager-vs-fused table, then tabs Kernels / Fusion
graph / Timeline / Transfers / Guards. Figures are shown through Output
widgets carrying the plotly MIME type (see figures.py for why not FigureWidget).
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as w

from . import figures, html, stats

TABS = ("Kernels", "Fusion graph", "Timeline", "Transfers", "Guards")
PLOTLY_MIME = "application/vnd.plotly.v1+json"


def figure_output(fig: Any) -> w.Output:
    """An Output widget showing ``fig``; ``.figure`` keeps the figure for tests and updates."""
    out = w.Output()
    show_figure(out, fig)
    return out


def show_figure(out: w.Output, fig: Any) -> None:
    out.figure = fig  # type: ignore[attr-defined]
    title = fig.layout.title.text or "plotly figure"
    out.outputs = ({"output_type": "display_data", "metadata": {},
                    "data": {PLOTLY_MIME: json.loads(fig.to_json()), "text/plain": f"<{title}>"}},)


class Panel(w.VBox):
    """The widget under a ``%%fuse`` cell. ``tabs`` maps tab titles to their boxes."""

    def __init__(self, report: Any, comparison: Any = None) -> None:
        d = stats.as_dict(report)
        self.report = d
        self.headline = w.HTML(html.headline(d))
        top: list[w.Widget] = [self.headline]
        if comparison is not None:
            self.compare = w.HTML(html.comparison_table(comparison))
            top.append(self.compare)
        self.tabs = {"Kernels": self._kernels(d), "Fusion graph": figure_output(figures.graph_figure(d)),
                     "Timeline": figure_output(figures.timeline_figure(d)), "Transfers": self._transfers(d),
                     "Guards": w.HTML(html.guards_table(d))}
        self.tab = w.Tab(children=list(self.tabs.values()), titles=[self._title(t, d) for t in self.tabs])
        super().__init__(top + [self.tab], layout=w.Layout(width="100%"))

    @staticmethod
    def _title(tab: str, d: dict) -> str:
        failed = sum(g["failed"] for g in stats.guard_rows(d))
        return {"Kernels": f"Kernels ({d['kernels']})", "Transfers": f"Transfers ({len(d.get('transfers', []))})",
                "Guards": f"Guards{' (failed!)' if failed else ''}"}.get(tab, tab)

    def _kernels(self, d: dict) -> w.Box:
        rows = stats.kernel_rows(d)
        self.kernel_select = w.Select(
            options=[(f"{k['name']}: {k['ops'][:60]}", k["name"]) for k in rows], rows=min(8, max(2, len(rows))),
            description="source of", layout=w.Layout(width="auto", min_width="360px"))
        self.source = w.HTML()
        self.kernel_select.observe(lambda change: self.show_source(change["new"]), names="value")
        self.show_source(rows[0]["name"] if rows else None)
        return w.VBox([w.HTML(html.kernels_table(d)), self.kernel_select, self.source])

    def show_source(self, name: str | None) -> None:
        """Select a kernel: its generated source, highlighted (or why there is none)."""
        k = next((k for k in stats.kernel_rows(self.report) if k["name"] == name), None)
        if k is None:
            self.source.value = ""
        elif k["source"]:
            self.source.value = html.kernel_source(k)
        else:
            self.source.value = f'<div style="{html.NOTE}">{stats.no_source_note(self.report, k["name"])}</div>'
        if name is not None and self.kernel_select.value != name:
            self.kernel_select.value = name

    def _transfers(self, d: dict) -> w.Box:
        return w.VBox([w.HTML(html.transfers_table(d)), figure_output(figures.transfers_figure(d))])

    def select_tab(self, title: str) -> None:
        self.tab.selected_index = list(self.tabs).index(title)


def build_panel(report: Any, comparison: Any = None) -> Panel:
    return Panel(report, comparison)
