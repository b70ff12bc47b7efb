"""A report as a file: JSON (``Report.to_dict()``) or a standalone HTML page. No UI imports.

The page is the panel's static rendering with JupyterLab's theme variables
defined for a light and a dark colour scheme, so it reads the same outside
Jupyter, and it embeds the report's JSON (a ``<script type="application/json">``
block, which no browser runs), so :func:`jupyter_fuse.report.load` reads a page
back into the Report it shows.
"""

from __future__ import annotations

import json
import os
from html import escape
from pathlib import Path
from typing import Any

from . import html, stats

JSON_ID = "jupyter-fuse-report"

_VARIABLES = """
:root { --jp-ui-font-color1: #222; --jp-ui-font-color2: #555; --jp-layout-color1: #fff; --jp-layout-color2: #eee;
  --jp-border-color1: #999; --jp-border-color2: #e0e0e0; --jp-cell-editor-background: #f7f7f7;
  --jp-content-font-color1: #222; color-scheme: light dark; }
@media (prefers-color-scheme: dark) {
  :root { --jp-ui-font-color1: #e6e6e6; --jp-ui-font-color2: #b0b0b0; --jp-layout-color1: #111;
    --jp-layout-color2: #2a2a2a; --jp-border-color1: #777; --jp-border-color2: #444;
    --jp-cell-editor-background: #1e1e1e; --jp-content-font-color1: #e6e6e6;
    --jp-error-color3: #5a1d1d; --jp-error-color0: #ffb4b4; --jp-warn-color3: #4a3b00; --jp-warn-color0: #ffe08a;
    --jp-success-color3: #163d22; --jp-mirror-editor-keyword-color: #c586c0; --jp-mirror-editor-builtin-color: #4ec9b0;
    --jp-mirror-editor-def-color: #dcdcaa; --jp-mirror-editor-string-color: #ce9178;
    --jp-mirror-editor-number-color: #b5cea8; --jp-mirror-editor-operator-color: #d4d4d4;
    --jp-mirror-editor-comment-color: #6a9955; }
}
body { background: var(--jp-layout-color1); color: var(--jp-ui-font-color1); margin: 16px; }
"""


def page(report: Any, comparison: Any = None, title: str | None = None) -> str:
    """A complete HTML document showing ``report`` (a Report or its dict)."""
    d = stats.as_dict(report)
    title = title or f"jupyter_fuse report: {d['backend']}, {d['ops']} ops -> {d['kernels']} kernels"
    data = json.dumps(d).replace("</", "<\\/")  # a string inside JSON cannot end the script block
    source = (f'<details><summary>cell source</summary><pre style="{html.CODE}">{escape(d.get("source") or "")}'
              "</pre></details>")
    return (f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<style>{_VARIABLES}</style></head><body>\n<h3 style=\"{html.FONT}\">{escape(title)}</h3>\n"
            f"{source}\n{html.render(d, comparison)}\n"
            f'<script type="application/json" id="{JSON_ID}">{data}</script>\n</body></html>\n')


def save(report: Any, path: str | os.PathLike, comparison: Any = None) -> Path:
    """``.json`` or ``.html`` by the suffix (see ``Report.save``); a comparison goes into the page."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(stats.as_dict(report), indent=1), encoding="utf-8")
    elif path.suffix.lower() in (".html", ".htm"):
        path.write_text(page(report, comparison), encoding="utf-8")
    else:
        raise ValueError(f"save a report as .json or .html, not {path.suffix or 'no suffix'!r}")
    return path


def report_json(text: str) -> str:
    """The report's JSON embedded in a page :func:`page` wrote."""
    marker = f'<script type="application/json" id="{JSON_ID}">'
    start = text.find(marker)
    if start < 0:
        raise ValueError("this page has no embedded jupyter_fuse report")
    start += len(marker)
    return text[start:text.index("</script>", start)].replace("<\\/", "</")
