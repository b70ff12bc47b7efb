"""``text/html``: a static rendering of a Report that survives nbconvert and saved notebooks.

No JavaScript and no external assets: tables, ``<details>`` sections and
inline SVG (hover a red x for a cut's reason). Inline styles only, written with
JupyterLab's theme variables and light fallbacks (``theme.py``), so the output
reads in both themes and wherever it is pasted. The widget panel reuses the
pieces (``kernels_table``, ``kernel_source``, ``guards_table``...). Elements
that name cell lines carry ``data-fuse-lines``: the labextension highlights
those lines in the cell when one is clicked.
"""

from __future__ import annotations

from html import escape
from typing import Any

from .. import fmt
from ..report import bound_writes_text
from . import graph, stats
from .bandwidth import floor_for
from .theme import (BG2, BORDER, BORDER2, CODE_BG, CODE_FG, EDGE, ERROR_BG, ERROR_FG, FG, FG2, OK_BG, WARN_BG,
                    WARN_FG, SourceStyle)

FONT = f"font-family: var(--jp-ui-font-family, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif); " \
       f"font-size: 13px; color: {FG}"
TABLE = "border-collapse: collapse; margin: 4px 0; font-size: 12px"
TH = f"text-align: left; padding: 2px 8px; border-bottom: 1px solid {BORDER}; background: {BG2}; color: {FG}"
TD = f"text-align: left; padding: 2px 8px; border-bottom: 1px solid {BORDER2}; vertical-align: top"
NOTE = f"color: {FG2}; font-style: italic; margin: 4px 0"
BAD = f"background: {ERROR_BG}; color: {ERROR_FG}"
CHANGED = f"background: {WARN_BG}; color: {WARN_FG}"
SECTION = "margin: 4px 0"
CODE = f"background: {CODE_BG}; color: {CODE_FG}; padding: 4px; font-size: 12px; overflow-x: auto"
LINES_ATTR = "data-fuse-lines"  # the labextension's hook: click to highlight these cell lines


def render(report: Any, comparison: Any = None) -> str:
    d = stats.as_dict(report)
    rows = stats.kernel_rows(d, floor_for(d))
    parts = [f'<div class="jupyter-fuse-report" style="{FONT}">', headline(d)]
    if comparison is not None:
        parts.append(comparison_table(comparison) + compare_svg(comparison))
    parts += [
        _details(f"Kernels ({d['kernels']})", kernels_table(d, rows) + bandwidth_svg(d, rows) + kernel_sources(d),
                 open_=True),
        _details("Fusion graph", graph_svg(d), open_=True),
        _details("Timeline", timeline_svg(d), open_=True),
        _details(f"Transfers ({len(d.get('transfers', []))})", transfers_table(d)),
        _details(stats.guards_title(d), guards_table(d)),
        "</div>",
    ]
    return "\n".join(parts)


def _details(title: str, body: str, open_: bool = False) -> str:
    return (f'<details style="{SECTION}"{" open" if open_ else ""}><summary style="cursor: pointer; '
            f'font-weight: 600">{escape(title)}</summary>{body}</details>')


def _table(header: list[str], rows: list[list[str]], row_attrs: list[str] | None = None) -> str:
    head = "".join(f'<th style="{TH}">{escape(h)}</th>' for h in header)
    body = []
    for i, row in enumerate(rows):
        extra = (row_attrs or [""] * len(rows))[i]
        body.append(f"<tr {extra}>" + "".join(f'<td style="{TD}">{c}</td>' for c in row) + "</tr>")
    return f'<table style="{TABLE}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def note(text: str) -> str:
    return f'<div style="{NOTE}">{escape(text)}</div>'


def headline(d: dict) -> str:
    h = stats.headline(d)
    bits = [f"<b>fuse[{escape(h['backend'])}]</b> <b>{escape(h['title'])}</b>"]
    if h["cache"]:
        bits.append(escape(h["cache"]))
    bits += [f"total {fmt.seconds(h['total'])}", escape(stats.moved_text(h))]
    html = f'<div style="font-size: 14px; margin: 2px 0">{" · ".join(bits)}</div>'
    if h["error"]:
        html += f'<div style="{BAD}; padding: 2px 6px">the cell raised {escape(h["error"])}</div>'
    return html


def lines_cell(d: dict, lines: list[int]) -> str:
    """``lines 2-3``, each line's source on hover."""
    title = "\n".join(f"{n}: {stats.source_line(d, n)}" for n in sorted(set(lines)))
    return f'<span title="{escape(title)}">{escape(fmt.lines(lines)) or "?"}</span>'


def kernels_table(d: dict, rows: list[dict] | None = None) -> str:
    rows = stats.kernel_rows(d) if rows is None else rows
    if not rows:
        return note("No kernels ran: nothing in the cell needed computing.")
    cells, attrs = [], []
    for k in rows:
        swatch = (f'<span aria-hidden="true" style="color: {stats.kernel_colour(d, k["name"])}">'
                  f'{_SHAPE_GLYPH.get(stats.kernel_symbol(d, k["name"]), "&#9679;")}</span>')
        rate = fmt.rate(k["rate"]) if k["rate"] else ""
        if k["of_copy"] is not None:
            rate += f" ({fmt.percent(k['of_copy'])} of copy)"
        cells.append([f"{swatch} {escape(k['label'])}", escape(k["ops"]), lines_cell(d, k["lines"]),
                      fmt.nbytes(k["bytes_in"]), fmt.nbytes(k["bytes_out"]), fmt.seconds(k["time"]), escape(rate)])
        attrs.append(f'{LINES_ATTR}="{",".join(map(str, k["lines"]))}" tabindex="0" '
                     f'title="click: highlight {escape(fmt.lines(k["lines"]))} in the cell" style="cursor: pointer"')
    emulated = any(k.get("runs_on") for k in rows)  # CUDA kernels run on the CPU: not a GPU's time
    bound = bound_writes_text(d)
    return _table(["kernel", "ops", "lines", "bytes in", "bytes out", "emulation time" if emulated else "time",
                   "bandwidth"], cells, attrs) + (note(bound) if bound else "")


_SHAPE_GLYPH = {"circle": "&#9679;", "square": "&#9632;", "diamond": "&#9670;", "triangle-up": "&#9650;",
                "pentagon": "&#11039;", "hexagon": "&#11042;", "star": "&#9733;", "triangle-down": "&#9660;"}


def highlight(source: str, language: str = "python") -> str:
    """Pygments with inline styles in the theme's editor colours (no stylesheet needed)."""
    try:
        from pygments import highlight as _hl
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        return _hl(source, get_lexer_by_name(language), HtmlFormatter(noclasses=True, style=SourceStyle,
                                                                        cssstyles=CODE))
    except Exception:  # no such lexer: readable beats pretty
        return f'<pre style="{CODE}">{escape(source)}</pre>'


def annotated(d: dict, k: dict) -> str:
    """The kernel's source under a header saying where it came from: its cell lines, the names it reads
    and writes (the generated code calls them in0, out0, ...)."""
    mark = "//" if k["language"] == "cuda" else "#"
    head = [f"{mark} {k['label']}: {fmt.lines(k['lines']) or 'line ?'} of the cell"]
    head += [f"{mark}   {n:>3} | {stats.source_line(d, n)}" for n in sorted(set(k["lines"]))[:12]]
    reads, writes = graph.kernel_io(d, k["name"])
    if reads or writes:
        head.append(f"{mark} reads {', '.join(reads) or 'nothing from memory'}; "
                    f"writes {', '.join(writes) or 'nothing the cell keeps'}")
    return "\n".join(head) + "\n\n" + (k["source"] or "")


def kernel_source(d: dict, k: dict) -> str:
    """One kernel's generated source, annotated; a kernel whose CUDA failed to compile shows that source,
    the compiler's log, and then the source that ran instead."""
    out = highlight(annotated(d, k), k["language"])
    if k.get("runs_on"):  # --emulate: this CUDA ran on the CPU
        out = f'<div style="{NOTE}">ran as {escape(k["runs_on"])}: timed on the CPU, not on a GPU</div>{out}'
    if k["failed_source"]:
        out = (f'<div style="{BAD}; padding: 2px 6px">{escape(k["fallback"] or "the CUDA kernel did not compile")}'
               f'</div>{highlight(k["failed_source"], "cuda")}<pre style="{CODE}">{escape(k["log"])}</pre>'
               f'<div style="{NOTE}">what ran instead ({k["language"]}):</div>{out}')
    return out


def kernel_sources(d: dict) -> str:
    """One section per distinct generated source: a loop's thirty identical kernels show theirs once."""
    rows = stats.kernel_rows(d)
    with_source = [k for k in rows if k["source"]]
    if not with_source:
        return note(stats.no_source_note(d, rows[0]["name"])) if rows else ""
    same: dict[str, list[dict]] = {}
    for k in with_source:
        same.setdefault(k["source"], []).append(k)
    out = []
    for ks in same.values():
        names = ks[0]["label"] if len(ks) == 1 else f"{ks[0]['label']} (and {fmt.plural(len(ks) - 1, 'more kernel')} " \
                                                  f"with the same source: {ks[1]['label']}…{ks[-1]['label']})"
        out.append(_details(f"{names} source ({ks[0]['language']})", kernel_source(d, ks[0])))
    return "".join(out)


# -- the fusion graph -----------------------------------------------------------------

_DX, _DY, _PAD = 110, 54, 46


def graph_svg(d: dict) -> str:
    """The drawing at its natural size in a scrolling box: a long graph scrolls, it is never squeezed."""
    dr = graph.draw(d)
    if not dr.nodes:
        return note("No graph: the cell traced no array operations.")
    xs, ys = [n.x for n in dr.nodes.values()], [n.y for n in dr.nodes.values()]
    x0, y1 = min(xs), max(ys)

    def at(nid: int) -> tuple[float, float]:
        n = dr.nodes[nid]
        return _PAD + (n.x - x0) * _DX, _PAD + (y1 - n.y) * _DY

    width = _PAD * 2 + (max(xs) - x0) * _DX + 60
    height = _PAD * 2 + (y1 - min(ys)) * _DY + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'style="font-size: 11px; fill: {FG}">']
    for lp in dr.loops:
        pts = [at(i) for i in lp.nodes if i in dr.nodes]
        if pts:
            lx0, ly0 = min(p[0] for p in pts) - 36, min(p[1] for p in pts) - 30
            lx1, ly1 = max(p[0] for p in pts) + 36, max(p[1] for p in pts) + 30
            out.append(f'<rect x="{lx0:.0f}" y="{ly0:.0f}" width="{lx1 - lx0:.0f}" height="{ly1 - ly0:.0f}" rx="8" '
                       f'fill="none" stroke="{EDGE}" stroke-dasharray="4,3"><title>{escape(_loop_text(lp))}</title>'
                       f'</rect><text x="{lx0 + 4:.0f}" y="{ly0 - 4:.0f}" style="fill: {FG2}">'
                       f'{escape(_loop_text(lp))}</text>')
    for a, b in dr.edges:
        out.append(_svg_edge(at(a), at(b), EDGE, ""))
    for cut in dr.cuts:
        title = f"<title>cut {escape(cut.frm)} -> {escape(cut.to)}: {escape(cut.reason)}</title>"
        marks = []
        for a, b in cut.edges:
            out.append(_svg_edge(at(a), at(b), stats.CUT_COLOUR, 'stroke-width="2" stroke-dasharray="5,3"', title))
            marks.append(_mid(at(a), at(b)))
        if not marks and cut.anchor in dr.nodes:
            marks = [(at(cut.anchor)[0] - 34, at(cut.anchor)[1])]
        for mx, my in marks:
            out.append(f'<text x="{mx:.0f}" y="{my + 5:.0f}" text-anchor="middle" style="fill: {stats.CUT_COLOUR}; '
                       f'cursor: help" font-size="15" font-weight="bold">&#215;{title}</text>')
    for nid, n in dr.nodes.items():
        x, y = at(nid)
        weight = ' font-weight="bold"' if n.output else ""
        out.append(f'<g><title>{escape(_plain(n.hover))}</title>{_svg_shape(d, n, x, y)}'
                   f'<text x="{x:.0f}" y="{y - 13:.0f}" text-anchor="middle"{weight}>{escape(n.label)}</text>'
                   + (f'<text x="{x:.0f}" y="{y + 22:.0f}" text-anchor="middle" style="fill: {FG2}" font-size="10">'
                      f'{escape(n.tag)}</text>' if n.tag else "") + "</g>")
    out.append("</svg>")
    return (_legend(d, dr) + f'<div style="overflow-x: auto; max-width: 100%">{"".join(out)}</div>'
            + "".join(note(t) for t in dr.notes))


def _loop_text(lp: graph.Loop) -> str:
    ks = lp.kernels[0] if len(lp.kernels) == 1 else f"{lp.kernels[0]}–{lp.kernels[-1]}"
    return f"loop body ×{lp.reps} ({ks} per iteration, {fmt.lines(lp.lines)}): one iteration drawn"


def _plain(hover: str) -> str:
    return hover.replace("<br>", "\n").replace("<b>", "").replace("</b>", "")


def _mid(p: tuple[float, float], q: tuple[float, float]) -> tuple[float, float]:
    (x0, y0), (x1, y1) = p, q
    lift = _lift(p, q)
    return (x0 + x1) / 2, (y0 + y1) / 2 - lift / 2


def _lift(p: tuple[float, float], q: tuple[float, float]) -> float:
    """Edges that skip columns bend upwards, so `subtract reads x and m` is not one straight line."""
    span = abs(q[0] - p[0]) / _DX
    return 0.0 if span <= 1.01 else min(60.0, 14.0 * span)


def _svg_edge(p: tuple[float, float], q: tuple[float, float], colour: str, extra: str, title: str = "") -> str:
    (x0, y0), (x1, y1) = p, q
    lift = _lift(p, q)
    path = (f"M{x0:.0f},{y0:.0f} L{x1:.0f},{y1:.0f}" if not lift else
            f"M{x0:.0f},{y0:.0f} Q{(x0 + x1) / 2:.0f},{(y0 + y1) / 2 - lift:.0f} {x1:.0f},{y1:.0f}")
    return f'<path d="{path}" fill="none" stroke="{colour}" {extra}>{title}</path>'


def _svg_shape(d: dict, n: graph.DNode, x: float, y: float) -> str:
    ring = f' stroke="{FG}" stroke-width="2.5"' if n.output else ""
    if n.kind == "op":
        colour, symbol = stats.kernel_colour(d, n.kernel), stats.kernel_symbol(d, n.kernel)
        return _glyph(symbol, x, y, 8, colour, ring)
    if n.kind == "eager":
        return _glyph("hexagon", x, y, 9, stats.EAGER_COLOUR, ring)
    if n.kind == "sync":
        return (f'<rect x="{x - 7:.0f}" y="{y - 7:.0f}" width="14" height="14" fill="none" '
                f'stroke="{stats.CUT_COLOUR}" stroke-width="2"/>')
    return _glyph("square" if n.kind == "input" else "diamond", x, y, 6, stats.GREY, ring)


def _glyph(symbol: str, x: float, y: float, r: float, fill: str, extra: str) -> str:
    if symbol == "circle":
        return f'<circle cx="{x:.0f}" cy="{y:.0f}" r="{r:.0f}" fill="{fill}"{extra}/>'
    if symbol == "square":
        return f'<rect x="{x - r:.0f}" y="{y - r:.0f}" width="{2 * r:.0f}" height="{2 * r:.0f}" fill="{fill}"{extra}/>'
    corners = {"diamond": [(0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)],
               "triangle-up": [(0, -1.3), (1.2, 1), (-1.2, 1)], "triangle-down": [(0, 1.3), (1.2, -1), (-1.2, -1)],
               "pentagon": [(0, -1.2), (1.15, -0.35), (0.7, 1), (-0.7, 1), (-1.15, -0.35)],
               "hexagon": [(0, -1.2), (1.05, -0.6), (1.05, 0.6), (0, 1.2), (-1.05, 0.6), (-1.05, -0.6)],
               "star": [(0, -1.4), (0.35, -0.4), (1.3, -0.4), (0.55, 0.2), (0.85, 1.2), (0, 0.6), (-0.85, 1.2),
                        (-0.55, 0.2), (-1.3, -0.4), (-0.35, -0.4)]}[symbol]
    pts = " ".join(f"{x + cx * r:.1f},{y + cy * r:.1f}" for cx, cy in corners)
    return f'<polygon points="{pts}" fill="{fill}"{extra}/>'


def _legend(d: dict, dr: graph.Drawing) -> str:
    items = []
    for k in dr.kernels[:30]:
        glyph = _SHAPE_GLYPH.get(stats.kernel_symbol(d, k), "&#9679;")
        colour = stats.EAGER_COLOUR if any(n.kind == "eager" and n.kernel == k for n in dr.nodes.values()) \
            else stats.kernel_colour(d, k)
        items.append(f'<span style="color: {colour}">{glyph}</span> {escape(k)}')
    items += [f'<span style="color: {stats.GREY}">&#9632;</span> input', f'<span style="color: {stats.GREY}">'
              f'&#9670;</span> view', f'<b style="border: 2px solid {FG}; border-radius: 50%; padding: 0 3px">'
              f'&#8203;</b> output', f'<span style="color: {stats.CUT_COLOUR}">&#215;</span> cut (hover for why)']
    if any(n.kind == "eager" for n in dr.nodes.values()):
        items.append(f'<span style="color: {stats.EAGER_COLOUR}">&#11042;</span> ran outside the trace')
    if any(n.kind == "sync" for n in dr.nodes.values()):
        items.append(f'<span style="color: {stats.CUT_COLOUR}">&#9633;</span> sync: Python read a value')
    return f'<div style="font-size: 12px; margin: 2px 0">{" &nbsp; ".join(items)}</div>'


# -- time, bandwidth, comparison charts ---------------------------------------------------

def _bars(rows: list[tuple[str, float, str]], colour: str = "#636efa", label_w: int = 110,
          bar_w: int = 320, marker: tuple[float, str] | None = None) -> str:
    """Horizontal bars with a label and a value text; ``marker``: a dashed line at (value, label)."""
    longest = max([v for _, v, _ in rows] + ([marker[0]] if marker else []), default=0.0) or 1.0
    row_h = 18
    height = row_h * len(rows) + (16 if marker else 6)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 170}" height="{height}" '
           f'style="font-size: 11px; fill: {FG}">']
    for i, (label, v, text) in enumerate(rows):
        y, w = 3 + i * row_h, max(1.0, bar_w * v / longest) if v else 0
        out.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end">{escape(label)}</text>'
                   f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row_h - 5}" fill="{colour}"/>'
                   f'<text x="{label_w + 4 + w:.1f}" y="{y + 12}">{escape(text)}</text>')
    if marker:
        mx = label_w + bar_w * marker[0] / longest
        out.append(f'<line x1="{mx:.1f}" y1="0" x2="{mx:.1f}" y2="{height - 12}" stroke="{stats.CUT_COLOUR}" '
                   f'stroke-dasharray="4,3"/><text x="{mx:.1f}" y="{height - 2}" text-anchor="middle" '
                   f'style="fill: {stats.CUT_COLOUR}">{escape(marker[1])}</text>')
    out.append("</svg>")
    return "".join(out)


def timeline_svg(d: dict) -> str:
    phases = stats.phase_times(d)
    chart = _bars([(p, t, fmt.seconds(t)) for p, t in phases])
    lines = [f"total {fmt.seconds(d['times'].get('total', 0.0))}: {stats.shares_text(d)}"]
    if stats.time_note(d):
        lines.append(stats.time_note(d))
    return chart + "".join(note(t) for t in lines)


def bandwidth_svg(d: dict, rows: list[dict]) -> str:
    """Achieved bandwidth per kernel against the machine's measured copy bandwidth (the floor)."""
    floor = floor_for(d)
    timed = [k for k in rows if k["rate"]]
    if not timed or floor is None:
        return ""
    chart = _bars([(k["label"], k["rate"], f"{fmt.rate(k['rate'])} · {fmt.percent(k['of_copy'])}")
                   for k in timed[:40]], marker=(floor, f"copy {fmt.rate(floor)}"))
    return (f'<div style="{NOTE}">Bandwidth each kernel achieved (bytes in + out over its time) against a '
            f'plain copy on this machine ({fmt.rate(floor)}, measured once per session): near the line, a kernel '
            f'is memory-bound and as fast as its bytes allow.</div>' + chart)


def transfers_table(d: dict) -> str:
    rows = stats.transfer_rows(d)
    if not rows:
        return note(stats.transfers_note(d))
    return note(stats.transfers_note(d)) + _table(
        ["direction", "bytes", "value", "cause"],
        [[escape(r["direction"]), fmt.nbytes(r["bytes"]), escape(r["name"]), escape(r["cause"])] for r in rows])


def guards_table(d: dict) -> str:
    """Guards that held, and the ones whose value changed (an expected miss, shown calmly)."""
    rows = stats.guard_rows(d)
    head = note(stats.guards_note(d))
    if not rows:
        return head
    cells = [[escape(g["text"]), "changed" if g["changed"] else "holds",
              escape(g["old"] or ""), escape(g["new"] or "")] for g in rows]
    attrs = [f'style="{CHANGED}"' if g["changed"] else "" for g in rows]
    return head + _table(["guard", "state", "was", "now"], cells, attrs)


def comparison_table(c: Any) -> str:
    rows = [[escape(label), escape(e), escape(f)] for label, e, f in c.rows()]
    banner = (f'<div style="background: {OK_BG}; color: {FG}; padding: 2px 6px">results agree with eager NumPy '
              f'({escape(c.checked_text())})</div>' if c.agree else
              f'<div style="{BAD}; padding: 4px 6px; font-weight: bold; border: 2px solid {ERROR_FG}">'
              f'RESULTS DIFFER FROM EAGER NUMPY:<br>{"<br>".join(escape(m) for m in c.mismatches)}</div>')
    return banner + _table(["", "eager (numpy)", f"fused ({c.fused.backend})"], rows)


def compare_svg(c: Any) -> str:
    """Fused against eager as bars: kernels, bytes moved, time (the slide a teacher wants)."""
    out = []
    for label, eager, fused, text in c.chart_rows():
        out.append(f'<div style="font-size: 12px; margin-top: 4px">{escape(label)}</div>'
                   + _bars([("eager NumPy", eager, text(eager)), (f"fused ({c.fused.backend})", fused, text(fused))],
                           label_w=120, bar_w=260))
    return "".join(out)


def session_html(runs: list[Any]) -> str:
    """``text/html`` of the dashboard: a static table of the session's cells (a snapshot)."""
    from .history import session_summary

    rows = []
    for r in runs:
        d = stats.as_dict(r.report)
        rows.append([escape(r.label), fmt.count(d["ops"]), fmt.count(d["kernels"]), escape(d.get("cache", "off")),
                     fmt.seconds(d["times"].get("total", 0.0)), fmt.nbytes(d.get("bytes_moved", 0)),
                     fmt.nbytes(d.get("bytes_h2d", 0) + d.get("bytes_d2h", 0))])
    table = _table(["cell", "ops", "kernels", "cache", "time", "moved", "transfers"], rows) if rows else ""
    return (f'<div class="jupyter-fuse-session" style="{FONT}"><b>jupyter_fuse session</b>: {escape(session_summary(runs))} '
            f'<span style="{NOTE}">(a snapshot; the live dashboard needs ipywidgets)</span>{table}</div>')
