"""The fusion graph as geometry: node positions, edges, and the cuts between kernels.

Shared by the plotly figure and the static SVG. Pure data: no UI imports.
Layout is layered: an input sits in column 0, an op one column right of its
deepest argument; within a column nodes keep their trace order.
"""

from __future__ import annotations

from typing import Any

from .stats import MAX_GRAPH_NODES


def drawn(d: dict) -> list[dict]:
    """The nodes worth drawing: not Python scalar constants (baked into kernels, they only add clutter)."""
    return [n for n in d.get("nodes", []) if n["op"] != "const"][:MAX_GRAPH_NODES]


def layout(d: dict) -> dict[int, tuple[float, float]]:
    """``{node id: (x, y)}``; y is centred on 0 in each column."""
    nodes = drawn(d)
    known = {n["id"] for n in nodes}
    depth: dict[int, int] = {}
    for n in nodes:  # report.nodes lists arguments before their users
        depth[n["id"]] = 1 + max((depth[a] for a in n["args"] if a in known), default=-1)
    columns: dict[int, list[int]] = {}
    for n in nodes:
        columns.setdefault(depth[n["id"]], []).append(n["id"])
    pos: dict[int, tuple[float, float]] = {}
    args = {n["id"]: [a for a in n["args"] if a in known] for n in nodes}
    for x in sorted(columns):  # order each column by its arguments' heights: fewer crossings
        ids = sorted(columns[x], key=lambda i: -sum(pos[a][1] for a in args[i]) / max(1, len(args[i])))
        for i, nid in enumerate(ids):
            pos[nid] = (float(x), (len(ids) - 1) / 2 - i)
    return pos


def edges(d: dict) -> list[tuple[int, int]]:
    nodes = drawn(d)
    known = {n["id"] for n in nodes}
    return [(a, n["id"]) for n in nodes for a in n["args"] if a in known]


def producer(d: dict, nid: int) -> str | None:
    """The kernel that wrote a value to memory (a view's is its storage's)."""
    byid = {n["id"]: n for n in d.get("nodes", [])}
    n = byid.get(nid)
    while n is not None and n["kind"] == "view" and n["args"]:
        n = byid.get(n["args"][0])
    return n.get("kernel") if n is not None and n["kind"] == "op" else None


def cuts(d: dict) -> list[dict[str, Any]]:
    """Every place the graph is cut, with its reason.

    One entry per break the partitioner reported (``edges`` are the graph edges
    it cuts, ``anchor`` the first node of the kernel it starts), plus one per
    kernel-crossing edge no break explains (the value goes through memory).
    """
    byid = {n["id"]: n for n in d.get("nodes", [])}
    crossing: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for a, b in edges(d):
        kb, ka = byid[b].get("kernel"), producer(d, a)
        if byid[b]["kind"] == "op" and ka and kb and ka != kb:
            crossing.setdefault((ka, kb), []).append((a, b))
    first = {}
    for n in drawn(d):
        if n.get("kernel") and n["kind"] == "op":
            first.setdefault(n["kernel"], n["id"])
    out, explained = [], set()
    for br in d.get("breaks", []):
        key = (br.get("from"), br.get("to"))
        explained.add(key)
        out.append({"from": key[0], "to": key[1], "line": br.get("line"), "reason": br.get("reason", "?"),
                    "edges": crossing.get(key, []), "anchor": first.get(key[1])})
    for key, es in crossing.items():
        if key not in explained:
            out.append({"from": key[0], "to": key[1], "line": None, "edges": es, "anchor": first.get(key[1]),
                        "reason": f"{key[0]} writes this value to memory and {key[1]} reads it back"})
    return out


def node_label(n: dict) -> str:
    if n["op"] == "input":
        return n.get("params", "input").replace("input slot ", "in")
    if n["op"] == "const":
        return n.get("params", "const").replace("constant ", "")
    return n["op"]


def node_hover(d: dict, n: dict) -> str:
    shape = "x".join(map(str, n.get("shape", []))) or "scalar"
    where = f"line {', '.join(map(str, n['lines']))}" if n.get("lines") else "from outside the cell"
    parts = [f"<b>{n['op']}</b> {n.get('dtype')}[{shape}]", f"kernel {n['kernel']}" if n.get("kernel") else n["kind"],
             where]
    byid = {m["id"]: m for m in d.get("nodes", [])}
    operands = [node_label(byid[a]) for a in n.get("args", []) if a in byid]
    if operands:
        parts.append(f"operands: {', '.join(operands)}")
    if n.get("params"):
        parts.append(str(n["params"]))
    return "<br>".join(parts)
