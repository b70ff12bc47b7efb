"""``text/html``: a static rendering of a Report that survives nbconvert and saved notebooks.

No JavaScript and no external assets: tables, ``<details>`` sections and
inline SVG (hover a red x for a cut's reason). Inline styles only, so the
output looks the same wherever it is pasted. The widget panel reuses the
pieces (``kernels_table``, ``highlight``, ``guards_table``...).
"""

from __future__ import annotations

from html import escape
from typing import Any

from . import graph, stats

FONT = "font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; font-size: 13px; color: #222"
TABLE = "border-collapse: collapse; margin: 4px 0; font-size: 12px"
TH = "text-align: left; padding: 2px 8px; border-bottom: 1px solid #999; background: #f3f3f3"
TD = "text-align: left; padding: 2px 8px; border-bottom: 1px solid #e4e4e4; vertical-align: top"
NOTE = "color: #555; font-style: italic; margin: 4px 0"
BAD = "background: #fde2e1; color: #8b0000"
SECTION = "margin: 4px 0"


def render(report: Any, comparison: Any = None) -> str:
    d = stats.as_dict(report)
    parts = [f'<div class="jupyter-fuse-report" style="{FONT}">', headline(d)]
    if comparison is not None:
        parts.append(comparison_table(comparison))
    n_failed = sum(g["failed"] for g in stats.guard_rows(d))
    parts += [
        _details(f"Kernels ({d['kernels']})", kernels_table(d) + kernel_sources(d), open_=True),
        _details("Fusion graph", graph_svg(d), open_=True),
        _details("Timeline", timeline_svg(d), open_=True),
        _details(f"Transfers ({len(d.get('transfers', []))})", transfers_table(d)),
        _details(f"Guards ({len(d.get('guards', []))}{f', {n_failed} failed' if n_failed else ''})",
                 guards_table(d), open_=bool(n_failed)),
        "</div>",
    ]
    return "\n".join(parts)


def _details(title: str, body: str, open_: bool = False) -> str:
    return (f'<details style="{SECTION}"{" open" if open_ else ""}><summary style="cursor: pointer; '
            f'font-weight: 600">{escape(title)}</summary>{body}</details>')


def _table(header: list[str], rows: list[list[str]], row_styles: list[str] | None = None) -> str:
    head = "".join(f'<th style="{TH}">{escape(h)}</th>' for h in header)
    body = []
    for i, row in enumerate(rows):
        extra = (row_styles or [""] * len(rows))[i]
        body.append(f'<tr style="{extra}">' + "".join(f'<td style="{TD}">{c}</td>' for c in row) + "</tr>")
    return f'<table style="{TABLE}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def headline(d: dict) -> str:
    h = stats.headline(d)
    bits = [f"<b>fuse[{escape(h['backend'])}]</b> <b>{escape(h['title'])}</b>", escape(h["cache"]),
            f"total {stats.fmt_ms(h['total'])}", f"moved {stats.fmt_bytes(h['moved'])}",
            f"saved by fusion {stats.fmt_bytes(h['saved'])} (eager {stats.fmt_bytes(h['eager'])})"]
    html = f'<div style="font-size: 14px; margin: 2px 0">{" · ".join(bits)}</div>'
    if h["error"]:
        html += f'<div style="{BAD}; padding: 2px 6px">the cell raised {escape(h["error"])}</div>'
    return html


def kernels_table(d: dict) -> str:
    rows, kernels = [], stats.kernel_rows(d)
    for k in kernels:
        lines = ", ".join(f'<span title="{escape(stats.source_line(d, n))}">{n}</span>' for n in k["lines"]) or "?"
        swatch = f'<span style="color: {stats.kernel_colour(d, k["name"])}">&#9679;</span>'
        rows.append([f"{swatch} {escape(k['name'])}", escape(k["ops"]), lines, stats.fmt_bytes(k["bytes_in"]),
                     stats.fmt_bytes(k["bytes_out"]), stats.fmt_ms(k["time"])])
    if not rows:
        return f'<div style="{NOTE}">No kernels ran: nothing in the cell needed computing.</div>'
    emulated = any(k["runs_on"] for k in kernels)  # CUDA kernels run on the CPU: not a GPU's time
    return _table(["kernel", "ops", "lines", "bytes in", "bytes out", "emulation time" if emulated else "time"], rows)


def highlight(source: str, language: str = "python") -> str:
    """Pygments with inline styles (no stylesheet needed); plain <pre> without pygments."""
    try:
        from pygments import highlight as _hl
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        return _hl(source, get_lexer_by_name(language if language != "cuda" else "cuda"),
                   HtmlFormatter(noclasses=True, style="default", cssstyles="padding: 4px; font-size: 12px"))
    except Exception:  # no pygments or no such lexer: readable beats pretty
        return f"<pre>{escape(source)}</pre>"


def kernel_source(k: dict) -> str:
    """One kernel's generated source; a kernel whose CUDA failed to compile shows that source, the
    compiler's log, and then the source that ran instead."""
    out = highlight(k["source"], k["language"])
    if k["runs_on"]:  # --emulate: this CUDA ran on the CPU
        out = f'<div style="{NOTE}">ran as {escape(k["runs_on"])}: timed on the CPU, not on a GPU</div>{out}'
    if k["failed_source"]:
        out = (f'<div style="{BAD}; padding: 2px 6px">{escape(k["fallback"] or "the CUDA kernel did not compile")}'
               f'</div>{highlight(k["failed_source"], "cuda")}<pre>{escape(k["log"])}</pre>'
               f'<div style="{NOTE}">what ran instead ({k["language"]}):</div>{out}')
    return out


def kernel_sources(d: dict) -> str:
    rows = stats.kernel_rows(d)
    with_source = [k for k in rows if k["source"]]
    if not with_source:
        return f'<div style="{NOTE}">{escape(stats.no_source_note(d, rows[0]["name"]) if rows else "")}</div>'
    return "".join(_details(f"{k['name']} source ({k['language']})", kernel_source(k)) for k in with_source)


def graph_svg(d: dict) -> str:
    pos = graph.layout(d)
    if not pos:
        return f'<div style="{NOTE}">No graph: the cell traced no array operations.</div>'
    byid = {n["id"]: n for n in d["nodes"]}
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    dx, dy, pad = 90, 42, 40

    def at(nid: int) -> tuple[float, float]:
        x, y = pos[nid]
        return pad + (x - min(xs)) * dx, pad + (max(ys) - y) * dy

    width, height = pad * 2 + (max(xs) - min(xs)) * dx, pad * 2 + (max(ys) - min(ys)) * dy
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'width="{width:.0f}" style="max-width: 100%; height: auto; font-size: 11px">']
    for a, b in graph.edges(d):
        (x0, y0), (x1, y1) = at(a), at(b)
        out.append(f'<line x1="{x0:.0f}" y1="{y0:.0f}" x2="{x1:.0f}" y2="{y1:.0f}" stroke="#c7c7c7"/>')
    for cut in graph.cuts(d):
        title = f"<title>cut {escape(str(cut['from']))} -> {escape(str(cut['to']))}: {escape(cut['reason'])}</title>"
        marks = [((at(a)[0] + at(b)[0]) / 2, (at(a)[1] + at(b)[1]) / 2) for a, b in cut["edges"]]
        for a, b in cut["edges"]:
            (x0, y0), (x1, y1) = at(a), at(b)
            out.append(f'<line x1="{x0:.0f}" y1="{y0:.0f}" x2="{x1:.0f}" y2="{y1:.0f}" stroke="{stats.CUT_COLOUR}" '
                       f'stroke-width="2" stroke-dasharray="5,3">{title}</line>')
        if not marks and cut["anchor"] in pos:
            marks = [(at(cut["anchor"])[0] - 30, at(cut["anchor"])[1])]
        for mx, my in marks:
            out.append(f'<text x="{mx:.0f}" y="{my + 5:.0f}" text-anchor="middle" fill="{stats.CUT_COLOUR}" '
                       f'font-size="15" font-weight="bold" style="cursor: help">&#215;{title}</text>')
    for nid in pos:
        n = byid[nid]
        x, y = at(nid)
        colour = stats.kernel_colour(d, n.get("kernel")) if n["kind"] == "op" else "#9e9e9e"
        hover = escape(graph.node_hover(d, n).replace("<br>", "\n").replace("<b>", "").replace("</b>", ""))
        shape = (f'<circle cx="{x:.0f}" cy="{y:.0f}" r="8" fill="{colour}"/>' if n["kind"] == "op" else
                 f'<rect x="{x - 6:.0f}" y="{y - 6:.0f}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<g><title>{hover}</title>{shape}<text x="{x:.0f}" y="{y - 12:.0f}" text-anchor="middle">'
                   f'{escape(graph.node_label(n))}</text></g>')
    out.append("</svg>")
    legend = " ".join(f'<span style="color: {stats.kernel_colour(d, k["name"])}">&#9679;</span> {escape(k["name"])}'
                      for k in d.get("kernel_list", [])[:30])
    note = (f'<div style="{NOTE}">first {len(pos)} of {len(d["nodes"])} nodes drawn</div>'
            if len(graph.drawn(d)) >= stats.MAX_GRAPH_NODES else "")
    return (f'<div style="font-size: 12px">{legend} &nbsp; <span style="color: #9e9e9e">&#9632;</span> inputs '
            f'&nbsp; <span style="color: {stats.CUT_COLOUR}">&#215;</span> cut (hover for why)</div>'
            + "".join(out) + note)


def timeline_svg(d: dict) -> str:
    phases = stats.phase_times(d)
    longest = max((t for _, t in phases), default=0.0) or 1.0
    bar_w, row_h = 300, 18
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{90 + bar_w + 80}" height="{row_h * len(phases) + 6}" '
           f'style="font-size: 11px">']
    for i, (phase, t) in enumerate(phases):
        y, w = 3 + i * row_h, max(1.0, bar_w * t / longest) if t else 0
        out.append(f'<text x="84" y="{y + 12}" text-anchor="end">{phase}</text>'
                   f'<rect x="90" y="{y + 2}" width="{w:.1f}" height="{row_h - 5}" fill="#636efa"/>'
                   f'<text x="{94 + w:.1f}" y="{y + 12}">{stats.fmt_ms(t)}</text>')
    out.append("</svg>")
    return "".join(out) + f'<div style="{NOTE}">total {stats.fmt_ms(d["times"].get("total", 0.0))}</div>'


def transfers_table(d: dict) -> str:
    rows = stats.transfer_rows(d)
    note = f'<div style="{NOTE}">{escape(stats.transfers_note(d))}</div>'
    if not rows:
        return note
    return note + _table(["direction", "bytes", "value", "cause"],
                         [[escape(r["direction"]), stats.fmt_bytes(r["bytes"]), escape(r["name"]), escape(r["cause"])]
                          for r in rows])


def guards_table(d: dict) -> str:
    rows = stats.guard_rows(d)
    note = f'<div style="{NOTE}">{escape(stats.guards_note(d))}</div>'
    if not rows:
        return note
    cells = [[escape(g["text"]), "failed" if g["failed"] else "holds",
              escape(g["old"] or ""), escape(g["new"] or "")] for g in rows]
    styles = [BAD if g["failed"] else "" for g in rows]
    return note + _table(["guard", "state", "old", "new"], cells, styles)


def comparison_table(c: Any) -> str:
    rows = [[escape(label), escape(e), escape(f)] for label, e, f in c.rows()]
    banner = (f'<div style="background: #e3f6e8; padding: 2px 6px">results agree with eager NumPy '
              f'({escape(c.checked_text())})</div>' if c.agree else
              f'<div style="{BAD}; padding: 4px 6px; font-weight: bold; border: 2px solid #8b0000">'
              f'RESULTS DIFFER FROM EAGER NUMPY:<br>{"<br>".join(escape(m) for m in c.mismatches)}</div>')
    return banner + _table(["", "eager (numpy)", f"fused ({c.fused.backend})"], rows)


def session_html(runs: list[Any]) -> str:
    """``text/html`` of the dashboard: a static table of the session's cells (a snapshot)."""
    from .history import session_summary

    rows = []
    for r in runs:
        d = stats.as_dict(r.report)
        rows.append([escape(r.label), str(d["ops"]), str(d["kernels"]), escape(d.get("cache", "off")),
                     stats.fmt_ms(d["times"].get("total", 0.0)), stats.fmt_bytes(d.get("bytes_moved", 0)),
                     stats.fmt_bytes(d.get("bytes_h2d", 0) + d.get("bytes_d2h", 0))])
    table = _table(["cell", "ops", "kernels", "cache", "time", "moved", "transfers"], rows) if rows else ""
    return (f'<div style="{FONT}"><b>jupyter_fuse session</b>: {escape(session_summary(runs))} '
            f'<span style="{NOTE}">(a snapshot; the live dashboard needs ipywidgets)</span>{table}</div>')
