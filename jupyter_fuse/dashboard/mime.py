"""The MIME bundle a ``%%fuse`` cell displays.

* ``application/vnd.jupyter.widget-view+json`` — the live panel (only in a kernel with ipywidgets);
* ``application/vnd.jupyter-fuse.report+json`` — ``Report.to_dict()``, for the labextension;
* ``text/html`` — the static rendering: what nbconvert, saved notebooks and widget-less frontends show;
* ``text/plain`` — the terminal summary.

A frontend shows the richest type it can render, so each of these is the
fallback for the one above it.
"""

from __future__ import annotations

from typing import Any

from . import html, text

REPORT_MIME = "application/vnd.jupyter-fuse.report+json"
COMPARE_MIME = "application/vnd.jupyter-fuse.compare+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def bundle(report: Any, comparison: Any = None, widget: bool | None = None, name: str = "fuse-report") -> dict[str, Any]:
    """``{mime type: data}``. ``widget=None``: include the panel when a widget frontend may exist;
    ``name``: the panel's default export file name."""
    data: dict[str, Any] = {
        "text/plain": text.render(report, comparison),
        "text/html": html.render(report, comparison),
        REPORT_MIME: report if isinstance(report, dict) else report.to_dict(),
    }
    if comparison is not None:
        data[COMPARE_MIME] = comparison.to_dict()
    if widget is None:
        widget = widgets_possible()
    if widget:
        from .panel import build_panel

        data[WIDGET_MIME] = build_panel(report, comparison, name)._repr_mimebundle_()[WIDGET_MIME]
    return data


def widgets_possible() -> bool:
    """True inside a Jupyter kernel that has ipywidgets: terminal IPython gets text only."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None or getattr(shell, "kernel", None) is None:
            return False
        import ipywidgets  # noqa: F401
        import plotly  # noqa: F401
    except ImportError:
        return False
    return True


class ReportView:
    """A displayable wrapper: ``display(ReportView(report))`` shows the panel bundle."""

    def __init__(self, report: Any, comparison: Any = None, name: str = "fuse-report") -> None:
        self.report, self.comparison, self.name = report, comparison, name

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return bundle(self.report, self.comparison, name=self.name)
