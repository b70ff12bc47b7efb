"""The per-cell panel: an ipywidgets tree built from one Report (and maybe a Comparison).

Layout: headline, the eager-vs-fused table and chart (``--compare``), tabs
Kernels / Fusion graph / Timeline / Transfers / Guards, and an export row
(JSON, standalone HTML). Figures are shown through Output widgets carrying the
plotly MIME type (see figures.py for why not FigureWidget). A tab with nothing
to draw shows a sentence, never an empty chart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ipywidgets as w

from .. import fmt
from . import export, figures, html, stats
from .bandwidth import floor_for
from .theme import PANEL_CLASS, PLOT_CLASS

TABS = ("Kernels", "Fusion graph", "Timeline", "Transfers", "Guards")
PLOTLY_MIME = "application/vnd.plotly.v1+json"


def figure_output(fig: Any) -> w.Output:
    """An Output widget showing ``fig``; ``.figure`` keeps the figure for tests and updates."""
    out = w.Output()
    out.add_class(PLOT_CLASS)
    show_figure(out, fig)
    return out


def show_figure(out: w.Output, fig: Any) -> None:
    out.figure = fig  # type: ignore[attr-defined]
    title = fig.layout.title.text or "plotly figure"
    out.outputs = ({"output_type": "display_data", "metadata": {},
                    "data": {PLOTLY_MIME: json.loads(fig.to_json()), "text/plain": f"<{title}>"}},)


def scrolling(child: w.Widget) -> w.Box:
    """A box that scrolls sideways: a long graph keeps its spacing instead of being squeezed."""
    return w.Box([child], layout=w.Layout(overflow="auto", width="100%"))


class Panel(w.VBox):
    """The widget under a ``%%fuse`` cell. ``tabs`` maps tab titles to their boxes."""

    def __init__(self, report: Any, comparison: Any = None, name: str = "fuse-report") -> None:
        d = stats.as_dict(report)
        self.report, self.comparison = d, comparison
        self.headline = w.HTML(html.headline(d))
        top: list[w.Widget] = [self.headline]
        if comparison is not None:
            self.compare = w.HTML(html.comparison_table(comparison))
            top += [self.compare, figure_output(figures.compare_figure(comparison))]
        self.tabs = {"Kernels": self._kernels(d), "Fusion graph": self._graph(d), "Timeline": self._timeline(d),
                     "Transfers": self._transfers(d), "Guards": w.HTML(html.guards_table(d))}
        self.tab = w.Tab(children=list(self.tabs.values()), titles=[self._title(t, d) for t in self.tabs])
        super().__init__(top + [self.tab, self._export_row(name)], layout=w.Layout(width="100%"))
        self.add_class(PANEL_CLASS)

    @staticmethod
    def _title(tab: str, d: dict) -> str:
        return {"Kernels": f"Kernels ({d['kernels']})", "Transfers": f"Transfers ({len(d.get('transfers', []))})",
                "Guards": stats.guards_title(d)}.get(tab, tab)

    def _kernels(self, d: dict) -> w.Box:
        rows = stats.kernel_rows(d, floor_for(d))
        self.kernel_select = w.Select(
            options=[(f"{k['label']}: {k['preview']}", k["name"]) for k in rows], rows=min(8, max(2, len(rows))),
            description="source of", layout=w.Layout(width="auto", min_width="360px"))
        self.source = w.HTML()
        self.kernel_select.observe(lambda change: self.show_source(change["new"]), names="value")
        self.show_source(rows[0]["name"] if rows else None)
        parts: list[w.Widget] = [w.HTML(html.kernels_table(d, rows))]
        bandwidth = figures.bandwidth_figure(d)
        if bandwidth is not None:
            parts.append(figure_output(bandwidth))
        return w.VBox(parts + [self.kernel_select, self.source])

    def show_source(self, name: str | None) -> None:
        """Select a kernel: its generated source, annotated and highlighted (or why there is none)."""
        k = next((k for k in stats.kernel_rows(self.report) if k["name"] == name), None)
        if k is None:
            self.source.value = ""
        elif k["source"]:
            self.source.value = html.kernel_source(self.report, k)
        else:
            self.source.value = html.note(stats.no_source_note(self.report, k["name"]))
        if name is not None and self.kernel_select.value != name:
            self.kernel_select.value = name

    def _graph(self, d: dict) -> w.Box:
        return scrolling(figure_output(figures.graph_figure(d)))

    def _timeline(self, d: dict) -> w.Box:
        parts: list[w.Widget] = [figure_output(figures.timeline_figure(d))]
        if stats.time_note(d):
            parts.append(w.HTML(html.note(stats.time_note(d))))
        return w.VBox(parts)

    def _transfers(self, d: dict) -> w.Box:
        fig = figures.transfers_figure(d)
        return w.VBox([w.HTML(html.transfers_table(d))] + ([figure_output(fig)] if fig is not None else []))

    def _export_row(self, name: str) -> w.Box:
        self.export_name = w.Text(value=name, description="export as", layout=w.Layout(width="300px"))
        self.export_json = w.Button(description="JSON", icon="download", tooltip="save the report as JSON")
        self.export_html = w.Button(description="HTML page", icon="download",
                                    tooltip="save a standalone HTML page of this panel")
        self.export_status = w.HTML()
        self.export_json.on_click(lambda _: self.export(".json"))
        self.export_html.on_click(lambda _: self.export(".html"))
        return w.HBox([self.export_name, self.export_json, self.export_html, self.export_status])

    def export(self, suffix: str) -> Path | None:
        """Save the report next to the notebook (the kernel's working directory); say where, or why not."""
        path = Path(self.export_name.value or "fuse-report").with_suffix(suffix)
        try:
            path = export.save(self.report, path, self.comparison)
        except OSError as e:
            self.export_status.value = html.note(f"could not save {path}: {e}")
            return None
        self.export_status.value = html.note(f"saved {path} ({fmt.nbytes(path.stat().st_size)})")
        return path

    def select_tab(self, title: str) -> None:
        self.tab.selected_index = list(self.tabs).index(title)


def build_panel(report: Any, comparison: Any = None, name: str = "fuse-report") -> Panel:
    return Panel(report, comparison, name)
