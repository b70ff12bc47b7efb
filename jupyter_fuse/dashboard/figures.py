"""Plotly figures built from a Report dict: the fusion graph, the timeline, bandwidth, transfers, compare.

Plain ``go.Figure`` objects, shown through the plotly MIME type: a
``FigureWidget`` would ship the whole plotly.js bundle (~5 MB) in every
widget's state, per figure, per cell. The graph is ``graph.draw``'s drawing,
the same one the static SVG shows. Colours follow the theme (``theme.py``).
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import fmt
from . import graph, stats
from .bandwidth import floor_for
from .theme import EDGE, plot_layout


def graph_figure(report) -> go.Figure:
    """Ops coloured and shaped by kernel (one trace each), inputs and views grey, outside calls and
    syncs of their own kind, cuts red with their reason, a loop drawn once in a dashed box."""
    d = stats.as_dict(report)
    dr = graph.draw(d)
    nodes = dr.nodes
    fig = go.Figure()
    ex, ey = [], []
    for a, b in dr.edges:
        px, py = _edge_points(nodes[a], nodes[b])
        ex += px + [None]
        ey += py + [None]
    fig.add_scatter(x=ex, y=ey, mode="lines", name="edges", line=dict(color=EDGE, width=1),
                    hoverinfo="skip", showlegend=False)
    groups: dict[str, list[graph.DNode]] = {}
    for n in nodes.values():
        key = n.kernel if n.kind in ("op", "eager") and n.kernel else {"input": "inputs", "view": "views",
                                                                        "sync": "syncs"}.get(n.kind, "views")
        groups.setdefault(key, []).append(n)
    order = dr.kernels + ["inputs", "views", "syncs"]
    for key, ns in sorted(groups.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)):
        kind = ns[0].kind
        fig.add_scatter(
            x=[n.x for n in ns], y=[n.y for n in ns], mode="markers+text", name=_legend_name(key, kind, ns),
            text=[f"<b>{n.label}</b>" if n.output else n.label for n in ns], textposition="top center",
            hovertext=[n.hover for n in ns], hoverinfo="text", customdata=[n.id for n in ns],
            marker=_marker(d, key, kind, ns))
        tagged = [n for n in ns if n.tag]
        if tagged:  # the kernel's name under its first node: kernels are never told apart by colour alone
            fig.add_scatter(x=[n.x for n in tagged], y=[n.y for n in tagged], mode="text", showlegend=False,
                            text=[n.tag for n in tagged], textposition="bottom center", hoverinfo="skip",
                            textfont=dict(size=10), name=f"{key} name")
    _add_cuts(fig, dr)
    for lp in dr.loops:
        pts = [nodes[i] for i in lp.nodes if i in nodes]
        if pts:
            fig.add_shape(type="rect", x0=min(n.x for n in pts) - 0.4, x1=max(n.x for n in pts) + 0.4,
                          y0=min(n.y for n in pts) - 0.45, y1=max(n.y for n in pts) + 0.45,
                          line=dict(color=EDGE, dash="dash"), layer="below")
            fig.add_annotation(x=min(n.x for n in pts) - 0.4, y=min(n.y for n in pts) - 0.45, xanchor="left",
                               yanchor="top", showarrow=False, text=f"loop ×{lp.reps}: one iteration drawn",
                               font=dict(size=11))
    title = f"{fmt.plural(d['ops'], 'op')} -> {fmt.plural(d['kernels'], 'kernel')}  (hover a red × for why)"
    fig.update_layout(**plot_layout(title=title, height=max(260, min(760, 56 * dr.rows + 120)),
                                    legend=dict(orientation="h", y=-0.05)))
    if dr.columns > 12:  # a long graph keeps readable spacing: the plot scrolls (the panel's box does)
        fig.update_layout(width=90 * dr.columns + 120)
    fig.update_xaxes(visible=False, range=[-0.7, dr.columns - 0.3])  # room for the outer nodes' labels
    fig.update_yaxes(visible=False)
    for text in dr.notes:
        fig.add_annotation(text=text, xref="paper", yref="paper", x=0, y=1.04, showarrow=False)
    return fig


def _legend_name(key: str, kind: str, ns: list[graph.DNode]) -> str:
    if kind == "eager":
        return f"{key}: {ns[0].op} (outside the trace)"
    if kind == "sync":
        return "syncs (Python read a value)"
    if key in ("inputs", "views"):
        return key
    tag = next((n.tag for n in ns if n.tag), key)
    return tag


def _marker(d: dict, key: str, kind: str, ns: list[graph.DNode]) -> dict:
    outline = dict(width=[3 if n.output else 1 for n in ns], color=["#222" if n.output else "white" for n in ns])
    if kind == "op":
        return dict(size=15, symbol=stats.kernel_symbol(d, key), color=stats.kernel_colour(d, key), line=outline)
    if kind == "eager":
        return dict(size=16, symbol="hexagon", color=stats.EAGER_COLOUR, line=outline)
    if kind == "sync":
        return dict(size=13, symbol="square-open", color=stats.CUT_COLOUR, line=dict(width=2))
    return dict(size=10, symbol="square" if kind == "input" else "diamond", color=stats.GREY, line=outline)


def _edge_points(a: graph.DNode, b: graph.DNode) -> tuple[list[float], list[float]]:
    """A straight edge, or a bent one when it skips columns (so one line never hides another)."""
    span = abs(b.x - a.x)
    if span <= 1.01:
        return [a.x, b.x], [a.y, b.y]
    lift = min(1.1, 0.25 * span)
    ts = [i / 10 for i in range(11)]
    xs = [a.x + (b.x - a.x) * t for t in ts]
    ys = [a.y + (b.y - a.y) * t + 4 * lift * t * (1 - t) for t in ts]
    return xs, ys


def _add_cuts(fig: go.Figure, dr: graph.Drawing) -> None:
    lx, ly, mx, my, hover = [], [], [], [], []
    for cut in dr.cuts:
        text = f"<b>cut {cut.frm} -> {cut.to}</b>" + (f" (line {cut.line})" if cut.line else "") \
               + f"<br>{cut.reason}"
        for a, b in cut.edges:
            px, py = _edge_points(dr.nodes[a], dr.nodes[b])
            lx += px + [None]
            ly += py + [None]
            mid = len(px) // 2  # a bent edge's middle sample; a straight edge's midpoint
            mx.append(px[mid] if len(px) > 2 else (px[0] + px[1]) / 2)
            my.append(py[mid] if len(py) > 2 else (py[0] + py[1]) / 2)
            hover.append(text)
        if not cut.edges and cut.anchor in dr.nodes:  # no edge to cut (e.g. eager mode): mark the kernel's start
            n = dr.nodes[cut.anchor]
            mx.append(n.x - 0.35)
            my.append(n.y)
            hover.append(text)
    if lx:
        fig.add_scatter(x=lx, y=ly, mode="lines", name="cut edges", hoverinfo="skip", showlegend=False,
                        line=dict(color=stats.CUT_COLOUR, width=2, dash="dash"))
    fig.add_scatter(x=mx, y=my, mode="markers", name="cuts", hovertext=hover, hoverinfo="text",
                    marker=dict(symbol="x", size=11, color=stats.CUT_COLOUR))


def timeline_figure(report) -> go.Figure:
    """Where the time went, one bar per phase; the title says the share that was kernels vs overhead."""
    d = stats.as_dict(report)
    phases = stats.phase_times(d)
    fig = go.Figure(go.Bar(
        y=[p for p, _ in phases], x=[t * 1e3 for _, t in phases], orientation="h", name="phases",
        text=[fmt.seconds(t) for _, t in phases], textposition="auto", marker_color="#636efa",
        hovertext=[f"{p}: {fmt.seconds(t)}" for p, t in phases], hoverinfo="text"))
    title = f"time by phase (total {fmt.seconds(d['times'].get('total', 0.0))}: {stats.shares_text(d)})"
    fig.update_layout(**plot_layout(title=title, height=60 + 28 * len(phases), xaxis_title="ms"))
    fig.update_yaxes(autorange="reversed")
    return fig


def bandwidth_figure(report) -> go.Figure | None:
    """Achieved bandwidth per kernel, with the machine's measured copy bandwidth as the line to reach."""
    d = stats.as_dict(report)
    floor = floor_for(d)
    rows = [k for k in stats.kernel_rows(d, floor) if k["rate"]]
    if not rows or floor is None:
        return None
    gib = 2.0 ** 30
    fig = go.Figure(go.Bar(
        x=[k["label"] for k in rows], y=[k["rate"] / gib for k in rows], name="achieved",
        marker_color=[stats.EAGER_COLOUR if k["kind"] == "eager" else stats.kernel_colour(d, k["name"])
                      for k in rows],
        hovertext=[f"{k['label']}: {fmt.nbytes(k['moved'])} in {fmt.seconds(k['time'])} = {fmt.rate(k['rate'])}, "
                   f"{fmt.percent(k['of_copy'])} of a copy (floor {fmt.seconds(k['floor'])})<br>{stats.bound_text(k)}"
                   for k in rows], hoverinfo="text"))
    fig.add_hline(y=floor / gib, line=dict(color=stats.CUT_COLOUR, dash="dash"),
                  annotation_text=f"copy bandwidth {fmt.rate(floor)} (measured)", annotation_position="top left")
    fig.update_layout(**plot_layout(title="bandwidth per kernel (bytes in + out over time)", height=260,
                                    yaxis_title="GiB/s"))
    return fig


def transfers_figure(report) -> go.Figure | None:
    """Bytes per transferred value, split by direction; None when nothing moved (the note says why)."""
    d = stats.as_dict(report)
    rows = stats.transfer_rows(d)
    if not rows:
        return None
    fig = go.Figure()
    for direction in dict.fromkeys(r["direction"] for r in rows):
        rs = [r for r in rows if r["direction"] == direction]
        fig.add_bar(x=[r["name"] for r in rs], y=[r["bytes"] for r in rs], name=direction,
                    hovertext=[f"{fmt.nbytes(r['bytes'])}: {r['cause']}" for r in rs], hoverinfo="text")
    fig.update_layout(**plot_layout(title="host <-> device transfers", barmode="stack", yaxis_title="bytes",
                                    height=240))
    return fig


def compare_figure(comparison) -> go.Figure:
    """Fused against eager NumPy: kernels, bytes moved, kernel time, side by side."""
    rows = comparison.chart_rows()
    fig = make_subplots(rows=1, cols=len(rows), subplot_titles=[label for label, *_ in rows])
    names = ["eager NumPy", f"fused ({comparison.fused.backend})"]
    for i, (label, eager, fused, text) in enumerate(rows, start=1):
        fig.add_bar(x=names, y=[eager, fused], marker_color=[stats.GREY, stats.PALETTE[0]], row=1, col=i,
                    text=[text(eager), text(fused)], textposition="auto", showlegend=False, name=label,
                    hovertext=[f"{n}: {text(v)}" for n, v in zip(names, (eager, fused))], hoverinfo="text")
        fig.update_yaxes(visible=False, row=1, col=i)
    fig.update_layout(**plot_layout(title="fused vs eager NumPy", height=280))
    return fig
