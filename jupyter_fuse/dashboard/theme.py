"""Colours that follow JupyterLab's light and dark themes. No UI imports.

Inline styles use JupyterLab's CSS variables with a light fallback
(``var(--jp-ui-font-color1, #222)``): in JupyterLab (and nbconvert's lab
template) they follow the theme, anywhere else they read as a light page. The
exported page defines the variables itself, for both colour schemes. Plotly
figures get transparent backgrounds; the labextension's stylesheet recolours
their text and grid lines under a dark theme (plotly has no CSS variables).
"""

from __future__ import annotations

from typing import Any

from pygments.style import Style
from pygments.token import Comment, Keyword, Name, Number, Operator, String

FG = "var(--jp-ui-font-color1, #222)"
FG2 = "var(--jp-ui-font-color2, #555)"
BG2 = "var(--jp-layout-color2, #eee)"
BORDER = "var(--jp-border-color1, #999)"
BORDER2 = "var(--jp-border-color2, #e0e0e0)"
CODE_BG = "var(--jp-cell-editor-background, #f7f7f7)"
CODE_FG = "var(--jp-content-font-color1, #222)"
ERROR_BG = "var(--jp-error-color3, #fde2e1)"
ERROR_FG = "var(--jp-error-color0, #8b0000)"
WARN_BG = "var(--jp-warn-color3, #fff3cd)"
WARN_FG = "var(--jp-warn-color0, #7a5b00)"
OK_BG = "var(--jp-success-color3, #e3f6e8)"
EDGE = "#9e9e9e"  # mid grey: visible on both themes (SVG strokes cannot fall back per theme)

PLOT_CLASS = "jupyter-fuse-plot"  # the labextension's dark-theme rules for plotly key on this
PANEL_CLASS = "jupyter-fuse-panel"


class SourceStyle(Style):
    """Pygments colours from JupyterLab's editor theme, with light fallbacks (no space after the comma:
    pygments splits a style on whitespace)."""

    background_color = CODE_BG
    styles = {
        Keyword: "bold var(--jp-mirror-editor-keyword-color,#008000)",
        Name.Builtin: "var(--jp-mirror-editor-builtin-color,#008000)",
        Name.Function: "var(--jp-mirror-editor-def-color,#0000ff)",
        String: "var(--jp-mirror-editor-string-color,#ba2121)",
        Number: "var(--jp-mirror-editor-number-color,#080)",
        Operator: "var(--jp-mirror-editor-operator-color,#aa22ff)",
        Comment: "italic var(--jp-mirror-editor-comment-color,#408080)",
    }


def plot_layout(**extra: Any) -> dict[str, Any]:
    """Plotly layout defaults: transparent, a neutral font, the theme's stylesheet does the rest."""
    base: dict[str, Any] = dict(
        template="plotly_white", paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)",
        font=dict(color="#444"), margin=dict(l=10, r=10, t=36, b=10), hoverlabel=dict(align="left"))
    base.update(extra)
    return base
