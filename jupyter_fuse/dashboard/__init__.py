"""The dashboard: per-cell panels, the session dashboard, their text/HTML fallbacks.

Importing this package imports no UI library: ipywidgets and plotly load only
when a widget is built (``panel``, ``session``, ``figures``), so terminal
IPython and scripts never pay for them.
"""

from __future__ import annotations

import sys
from typing import Any

from .history import HISTORY
from .mime import REPORT_MIME, ReportView, bundle, widgets_possible

__all__ = ["show", "show_dashboard", "bundle", "ReportView", "HISTORY", "REPORT_MIME"]


def show(report: Any, comparison: Any = None, quiet: bool = False, number: int | None = None,
         status: Any = None) -> None:
    """What the magic calls after a run: record it, display its panel (unless quiet), shout on mismatch.
    ``status``: the display handle of a progress line shown while the cell compiled; it is emptied."""
    HISTORY.record(report, number, comparison)
    if comparison is not None and not comparison.agree:  # never hidden, not even by -q
        print("jupyter_fuse --compare: RESULTS DIFFER FROM EAGER NUMPY:\n  " + "\n  ".join(comparison.mismatches),
              file=sys.stderr)
    if status is not None:
        status.update({"text/plain": ""}, raw=True)
    if not quiet:
        from IPython.display import display

        display(ReportView(report, comparison, f"fuse-report-In{number}" if number else "fuse-report"))


def dashboard_bundle(widget: bool | None = None) -> dict[str, Any]:
    from .history import session_text
    from .html import session_html

    data: dict[str, Any] = {"text/plain": session_text(HISTORY.runs), "text/html": session_html(HISTORY.runs)}
    if widget if widget is not None else widgets_possible():
        from .session import SessionDashboard

        data.update(SessionDashboard()._repr_mimebundle_())
        data["text/plain"] = session_text(HISTORY.runs)
    return data


def show_dashboard() -> None:
    """``%fuse_dashboard``: the live session dashboard (a static snapshot without widgets)."""
    from IPython.display import display

    display(dashboard_bundle(), raw=True)
