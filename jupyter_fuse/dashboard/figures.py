"""Plotly figures built from a Report dict: the fusion graph, the timeline, transfers.

Plain ``go.Figure`` objects, shown through the plotly MIME type: a
``FigureWidget`` would ship the whole plotly.js bundle (~5 MB) in every
widget's state, per figure, per cell.
"""

from __future__ import annotations

import textwrap

import plotly.graph_objects as go

from . import graph
from .stats import CUT_COLOUR, MAX_GRAPH_NODES, as_dict, fmt_bytes, fmt_ms, kernel_colour, phase_times, transfer_rows

_LAYOUT = dict(margin=dict(l=10, r=10, t=36, b=10), height=300, template="plotly_white",
               hoverlabel=dict(align="left"))


def graph_figure(report) -> go.Figure:
    """Ops coloured by kernel (one trace each), inputs and views grey, cuts red with their reason."""
    d = as_dict(report)
    pos, byid = graph.layout(d), {n["id"]: n for n in d.get("nodes", [])}
    fig = go.Figure()
    ex, ey = [], []
    for a, b in graph.edges(d):
        ex += [pos[a][0], pos[b][0], None]
        ey += [pos[a][1], pos[b][1], None]
    fig.add_scatter(x=ex, y=ey, mode="lines", name="edges", line=dict(color="#c7c7c7", width=1),
                    hoverinfo="skip", showlegend=False)
    groups: dict[str, list[dict]] = {}
    for nid in pos:
        n = byid[nid]
        key = n["kernel"] if n["kind"] == "op" and n.get("kernel") else "inputs" if n["kind"] == "input" else "views"
        groups.setdefault(key, []).append(n)
    order = [k["name"] for k in d.get("kernel_list", [])] + ["inputs", "views"]  # legend follows the kernels
    for key, ns in sorted(groups.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)):
        is_kernel = key not in ("inputs", "views")
        fig.add_scatter(
            x=[pos[n["id"]][0] for n in ns], y=[pos[n["id"]][1] for n in ns], mode="markers+text", name=key,
            text=[graph.node_label(n) for n in ns], textposition="top center",
            hovertext=[graph.node_hover(d, n) for n in ns], hoverinfo="text",
            marker=dict(size=14 if is_kernel else 10, symbol="circle" if is_kernel else
                        "square" if key == "inputs" else "diamond",
                        color=kernel_colour(d, key) if is_kernel else "#9e9e9e",
                        line=dict(width=1, color="white")))
    _add_cuts(fig, d, pos)
    fig.update_layout(**_LAYOUT, title=f"{d['ops']} ops -> {d['kernels']} kernels  (hover a red x for why)")
    fig.update_layout(height=max(260, min(700, 40 * _rows(pos) + 80)))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    if len(graph.drawn(d)) >= MAX_GRAPH_NODES:
        fig.add_annotation(text=f"first {len(pos)} of {len(d['nodes'])} nodes drawn", xref="paper", yref="paper",
                           x=0, y=1, showarrow=False)
    return fig


def _rows(pos: dict) -> int:
    from collections import Counter

    return max(Counter(x for x, _ in pos.values()).values(), default=1)


def _add_cuts(fig: go.Figure, d: dict, pos: dict) -> None:
    lx, ly, mx, my, hover = [], [], [], [], []
    for cut in graph.cuts(d):
        text = f"<b>cut {cut['from']} -> {cut['to']}</b>" + (f" (line {cut['line']})" if cut["line"] else "") \
               + f"<br>{cut['reason']}"
        if cut["edges"]:
            for a, b in cut["edges"]:
                (x0, y0), (x1, y1) = pos[a], pos[b]
                lx += [x0, x1, None]
                ly += [y0, y1, None]
                mx.append((x0 + x1) / 2)
                my.append((y0 + y1) / 2)
                hover.append(text)
        elif cut["anchor"] in pos:  # no edge to cut (e.g. a sync, or eager mode): mark where the kernel starts
            x, y = pos[cut["anchor"]]
            mx.append(x - 0.35)
            my.append(y)
            hover.append(text)
    if lx:
        fig.add_scatter(x=lx, y=ly, mode="lines", name="cut edges", hoverinfo="skip", showlegend=False,
                        line=dict(color=CUT_COLOUR, width=2, dash="dash"))
    fig.add_scatter(x=mx, y=my, mode="markers", name="cuts", hovertext=hover, hoverinfo="text",
                    marker=dict(symbol="x", size=11, color=CUT_COLOUR))


def timeline_figure(report) -> go.Figure:
    """Where the time went, one bar per phase (total in the title)."""
    d = as_dict(report)
    phases = phase_times(d)
    fig = go.Figure(go.Bar(
        y=[p for p, _ in phases], x=[t * 1e3 for _, t in phases], orientation="h", name="phases",
        text=[fmt_ms(t) for _, t in phases], textposition="auto", marker_color="#636efa",
        hovertemplate="%{y}: %{x:.3f} ms<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=f"time by phase (total {fmt_ms(d['times'].get('total', 0.0))})",
                      xaxis_title="ms")
    fig.update_layout(height=260)
    fig.update_yaxes(autorange="reversed")
    return fig


def transfers_figure(report) -> go.Figure:
    """Bytes per transferred value, split by direction; an explanation when there are none."""
    from .stats import transfers_note

    d = as_dict(report)
    rows = transfer_rows(d)
    fig = go.Figure()
    for direction in dict.fromkeys(r["direction"] for r in rows):
        rs = [r for r in rows if r["direction"] == direction]
        fig.add_bar(x=[r["name"] for r in rs], y=[r["bytes"] for r in rs], name=direction,
                    hovertext=[f"{fmt_bytes(r['bytes'])}: {r['cause']}" for r in rs], hoverinfo="text")
    if not rows:
        fig.add_annotation(text="<br>".join(textwrap.wrap(transfers_note(d), 90)), xref="paper", yref="paper",
                           x=0.5, y=0.5, showarrow=False)
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
    fig.update_layout(**_LAYOUT, title="host <-> device transfers", barmode="stack", yaxis_title="bytes")
    fig.update_layout(height=240)
    return fig
