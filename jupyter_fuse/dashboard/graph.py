"""The fusion graph as a drawing: nodes with the user's names, edges, cuts, loops. No UI imports.

Shared by the plotly figure and the static SVG, so both draw the same thing:

* a loop is drawn once: kernels that repeat with the same ops and lines are one
  iteration, labelled ``×50``, and what later iterations compute is mapped onto it;
* an input's own layout (a view that changes nothing) is the input itself;
  slices read as the user wrote them (``u[1:-1]``);
* a call that ran outside the trace (``np.linalg.solve``) is a node of its own kind,
  with its reason, and a sync (``print``) is the point where Python read a value;
* every kernel's first node carries the kernel's name, so kernels are told apart
  by name and shape, not by colour alone.

Layout is layered: a node sits one column right of its deepest argument; within
a column nodes are ordered by their arguments' heights (fewer crossings).
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .. import fmt
from ..report import break_reason, kernel_label
from .names import user_names
from .stats import MAX_GRAPH_NODES, graph_nodes, graph_truncated, node_nbytes, source_line

MIN_REPS = 2  # a block of kernels seen at least this many times in a row is drawn as one loop iteration
MAX_PERIOD = 64  # kernels per iteration considered


@dataclass
class DNode:
    id: int
    kind: str  # input | view | op | eager | sync
    op: str
    label: str
    kernel: str | None = None
    lines: list[int] = field(default_factory=list)
    hover: str = ""
    output: bool = False
    tag: str = ""  # the kernel's name, on the kernel's first node
    x: float = 0.0
    y: float = 0.0


@dataclass
class Loop:
    kernels: list[str]  # the drawn iteration's kernels
    reps: int
    lines: list[int]
    nodes: list[int] = field(default_factory=list)


@dataclass
class Cut:
    frm: str
    to: str
    line: int | None
    reason: str
    edges: list[tuple[int, int]]
    anchor: int | None  # where to mark a cut no drawn edge crosses (the kernel's first node)


@dataclass
class Drawing:
    nodes: dict[int, DNode]
    edges: list[tuple[int, int]]
    cuts: list[Cut]
    loops: list[Loop]
    kernels: list[str]  # drawn kernels, in kernel-list order (the legend)
    notes: list[str]

    @property
    def columns(self) -> int:
        return 1 + int(max((n.x for n in self.nodes.values()), default=0))

    @property
    def rows(self) -> int:
        return max(Counter(n.x for n in self.nodes.values()).values(), default=1)


# -- loops -----------------------------------------------------------------------------

def find_loops(sigs: list[Any]) -> list[tuple[int, int, int]]:
    """``(start, period, reps)`` of repeated blocks in a sequence, most covered first, not overlapping.

    ``[a, b, c, b, c, b, c, d]`` -> ``[(1, 2, 3)]``: the block ``b, c`` starts at 1 and runs 3 times.
    """
    found: list[tuple[int, int, int]] = []
    segments = [(0, len(sigs))]
    while segments:
        lo, hi = segments.pop()
        best = None
        for p in range(1, min(MAX_PERIOD, (hi - lo) // MIN_REPS) + 1):
            run = 0  # how many positions so far agree with the one p before
            for i in range(lo + p, hi + 1):
                if i < hi and sigs[i] == sigs[i - p]:
                    run += 1
                    continue
                reps = (run + p) // p
                if reps >= MIN_REPS and (best is None or reps * p > best[2] * best[1]):
                    best = (i - run - p, p, reps)
                run = 0
        if best is not None:
            found.append(best)
            start, p, reps = best
            segments += [(lo, start), (start + p * reps, hi)]
    return sorted(found)


def _kernel_sig(k: dict) -> tuple:
    return (k.get("kind"), tuple(k.get("ops", [])), tuple(k.get("lines", [])))


# -- the drawing ---------------------------------------------------------------------------

def draw(d: dict) -> Drawing:
    nodes = [n for n in graph_nodes(d) if n["op"] != "const"]  # scalars are baked into kernels
    byid = {n["id"]: n for n in nodes}
    notes: list[str] = []
    alias = {n["id"]: n["args"][0] for n in nodes if n["kind"] == "view" and _index_steps(n) == [] and n["args"]
             and n["args"][0] in byid and byid[n["args"][0]]["shape"] == n["shape"]}

    def real(nid: int) -> int:
        while nid in alias:
            nid = alias[nid]
        return nid

    # loops: later iterations' nodes map onto the first iteration's
    klist = d.get("kernel_list", [])
    knames = [k["name"] for k in klist]
    hidden: set[str] = set()
    loops: list[Loop] = []
    rep: dict[int, int] = {}
    iteration: dict[int, tuple[int, int]] = {}  # node -> (loop, iteration)
    by_kernel: dict[str, list[int]] = {}
    for n in nodes:
        if n["kind"] == "op" and n.get("kernel"):
            by_kernel.setdefault(n["kernel"], []).append(n["id"])
    for start, p, reps in find_loops([_kernel_sig(k) for k in klist]):
        first = knames[start:start + p]
        loops.append(Loop(first, reps, sorted({ln for k in klist[start:start + p] for ln in k.get("lines", [])})))
        for r in range(reps):
            for j in range(p):
                later, model = knames[start + r * p + j], first[j]
                iteration.update((nid, (len(loops), r)) for nid in by_kernel.get(later, []))
                if r == 0:
                    continue
                hidden.add(later)
                a, b = by_kernel.get(later, []), by_kernel.get(model, [])
                if len(a) == len(b):
                    rep.update(zip(a, b))

    def resolve(nid: int) -> int | None:
        nid = real(nid)
        if nid in byid and byid[nid].get("kernel") in hidden:
            return rep.get(nid)
        return nid

    # which nodes are drawn: every op of a drawn kernel, and what they read
    drawn: dict[int, dict] = {}
    edges: list[tuple[int, int]] = []
    todo = [n["id"] for n in nodes if n["kind"] == "op" and n.get("kernel") not in hidden and n["id"] not in alias]
    todo += [n["id"] for n in nodes if n["kind"] == "input" and n["id"] not in alias]
    seen: set[int] = set()
    while todo:
        nid = todo.pop(0)
        if nid in seen:
            continue
        seen.add(nid)
        drawn[nid] = byid[nid]
        for a in byid[nid]["args"]:
            ra = resolve(a)
            if ra is None or ra not in byid or byid[ra]["op"] == "const" or ra == nid:
                continue
            edges.append((ra, nid))
            if ra not in seen:
                todo.append(ra)
    # loops: consumers after the loop read the drawn iteration's value (edges above), and it reads itself
    if len(drawn) > MAX_GRAPH_NODES:
        keep = sorted(drawn)[:MAX_GRAPH_NODES]
        notes.append(f"first {len(keep)} of {len(drawn)} nodes drawn")
        drawn = {i: drawn[i] for i in keep}
        edges = [(a, b) for a, b in edges if a in drawn and b in drawn]
    if graph_truncated(d):
        notes.append("the recorded graph was truncated (a very long loop): later iterations are not drawn")
    for lp in d.get("loops") or []:  # (``loops.py``: what ran ahead was never traced, so it has no nodes)
        notes.append(f"line {lp['line']}: {fmt.count(lp['iterations'])} of the loop's {fmt.count(lp['of'])} "
                     f"iterations ran ahead as its plan, without "
                     f"{'tracing its arrays (its Python only read a value each step)' if lp.get('reads') else 'its Python'}"
                     f": not drawn")
    edges = list(dict.fromkeys(edges))

    names = user_names(d, iteration)
    names.outputs |= {rep[h] for h in names.outputs if h in rep}  # a loop's last value is its drawn iteration's
    out: dict[int, DNode] = {}
    for nid, n in sorted(drawn.items()):
        out[nid] = _dnode(d, n, byid, names, real)
    _add_eager(d, out, edges, byid, hidden)
    _add_syncs(d, out, edges, byid)
    for lp in loops:
        lp.nodes = [i for i, n in out.items() if n.kernel in lp.kernels]
    kernels = [k for k in knames if k not in hidden and any(n.kernel == k for n in out.values())]
    for k in kernels:  # the kernel's name on its first node
        first = min((n for n in out.values() if n.kernel == k), key=lambda n: n.id if n.id >= 0 else -n.id)
        first.tag = kernel_label(klist[knames.index(k)])
    for lp in loops:
        if lp.kernels and lp.kernels[0] in kernels:
            tagged = next(n for n in out.values() if n.tag and n.kernel == lp.kernels[0])
            tagged.tag += f" ↻×{lp.reps}"
    _layout(out, edges)
    return Drawing(out, edges, _cuts(d, out, edges, hidden), loops, kernels, notes)


def _dnode(d: dict, n: dict, byid: dict, names: Any, real) -> DNode:
    nid, kind = n["id"], n["kind"]
    shape = "×".join(map(str, n.get("shape", []))) or "scalar"
    what = f"{n.get('dtype')}[{shape}]"
    lines = list(n.get("lines", []))
    if kind == "input":
        name = names.node.get(nid)
        label = name or "input"
        hover = [f"<b>{label}</b> {what}", "read from outside the cell (an input of the kernels)"]
    elif kind == "view":
        base = real(n["args"][0]) if n["args"] else None
        base_label = _plain_label(byid.get(base), names) if base is not None else "?"
        label = base_label + _view_text(n)
        origin = ("a value computed " + (fmt.lines(byid[base].get("lines", [])) or "in the cell")
                  if base in byid and byid[base]["kind"] == "op" else "an input")
        hover = [f"<b>{label}</b> {what}", f"a view of {base_label} ({origin}): no copy, read in place"]
    else:
        name = names.node.get(nid)
        label = f"{name} = {n['op']}" if name else n["op"]
        where = "; ".join(f"line {ln}: {source_line(d, ln)}" for ln in lines[:3]) or "line ?"
        hover = [f"<b>{n['op']}</b> {what}", where, f"kernel {n.get('kernel')}"]
        operands = [_plain_label(byid.get(real(a)), names) for a in n.get("args", []) if real(a) in byid]
        if operands:
            hover.append(f"reads {', '.join(operands)}")
        if names.node.get(nid) and nid in names.outputs:
            hover.append(f"left in the namespace as {name}")
    return DNode(nid, kind, n["op"], label, n.get("kernel") if kind == "op" else None, lines,
                 "<br>".join(hover), nid in names.outputs)


def _plain_label(n: dict | None, names: Any) -> str:
    if n is None:
        return "?"
    return names.node.get(n["id"]) or ("input" if n["kind"] == "input" else n["op"])


def _index_steps(n: dict) -> list[str]:
    """A view's steps other than its storage's own layout (``asstrided``): ``["getitem(...)"]``."""
    steps = [s for s in str(n.get("params", "")).split(" then ") if s]
    return [s for s in steps if not s.startswith("asstrided(")]


def _view_text(n: dict) -> str:
    """``[1:-1, ::2]``, ``.T``, ``.reshape(3, 4)`` as the user would write the view."""
    out = []
    for step in _index_steps(n):
        kind, _, arg = step.partition("(")
        if kind == "getitem":
            try:
                key = ast.literal_eval("(" + arg)
                out.append("[" + ", ".join(_index_item(k) for k in key) + "]")
                continue
            except (ValueError, SyntaxError, TypeError):
                pass
        elif kind == "transpose":
            out.append(".T" if arg.replace(" ", "") == "(1,0))" else ".transpose(" + arg)
            continue
        elif kind in ("reshape", "broadcast"):
            out.append(f".{'reshape' if kind == 'reshape' else 'broadcast_to'}(" + arg)
            continue
        out.append(f".{step}" if step else "")
    return "".join(out) or "[…]"


def _index_item(k: tuple) -> str:
    if k[0] == "s":
        start, stop, step = ("" if v is None else str(v) for v in k[1:])
        return f"{start}:{stop}" + (f":{step}" if step else "")
    return {"n": "None", "e": "..."}.get(k[0], str(k[1]) if len(k) > 1 else "?")


def _add_eager(d: dict, out: dict[int, DNode], edges: list, byid: dict, hidden: set[str]) -> None:
    """Calls that ran outside the trace: a node each, feeding the input its result became (matched by
    the line that reads it and its size; unmatched, the call stands alone)."""
    used: set[int] = set()
    for i, k in enumerate(d.get("kernel_list", [])):
        if k.get("kind") != "eager" or k["name"] in hidden:
            continue
        nid = -(i + 1)
        lines = list(k.get("lines", []))
        op = (k.get("ops") or ["call"])[0]
        out[nid] = DNode(nid, "eager", op, op, k["name"], lines,
                         f"<b>{op}</b> ran as plain NumPy outside the trace ({fmt.lines(lines) or 'line ?'})"
                         f"<br>{k.get('fallback') or 'not traced'}<br>{fmt.nbytes(k.get('bytes_read', 0))} in, "
                         f"{fmt.nbytes(k.get('bytes_written', 0))} out")
        for n in out.values():
            if n.kind != "input" or n.id in used:
                continue
            readers = [b for a, b in edges if a == n.id]
            read_on = {ln for b in readers if b in byid for ln in byid[b].get("lines", [])}
            if node_nbytes(byid[n.id]) == k.get("bytes_written") and read_on & set(lines):
                used.add(n.id)
                edges.append((nid, n.id))
                n.label = f"{op}(…)" if n.label == "input" else n.label
                n.hover = n.hover.replace("read from outside the cell (an input of the kernels)",
                                          f"the result of {op}, which ran outside the trace")
                break


def _add_syncs(d: dict, out: dict[int, DNode], edges: list, byid: dict) -> None:
    """A sync is where Python read a value: drawn after the node computed for it, with its line."""
    for i, s in enumerate(d.get("syncs", [])):
        line = s.get("line")
        on_line = [n for n in out.values() if n.kind == "op" and line in n.lines]
        if not on_line:
            continue
        read = max(on_line, key=lambda n: n.id)  # the last value computed on that line is what Python read
        nid = -(10_000 + i)
        cause = s.get("cause", "sync")
        out[nid] = DNode(nid, "sync", "sync", f"{cause} (line {line})", None, [line],
                         f"<b>sync at line {line}</b>: {cause}<br>{source_line(d, line)}<br>Python needed this "
                         "value now, so everything it depends on ran here")
        edges.append((read.id, nid))


def _layout(out: dict[int, DNode], edges: list[tuple[int, int]]) -> None:
    preds: dict[int, list[int]] = {i: [] for i in out}
    succs: dict[int, list[int]] = {i: [] for i in out}
    for a, b in edges:
        if a in out and b in out:
            preds[b].append(a)
            succs[a].append(b)
    indeg = {i: len(p) for i, p in preds.items()}
    order = [i for i in sorted(out, key=_order) if not indeg[i]]
    depth = {i: 0 for i in order}
    k = 0
    while k < len(order):  # Kahn: every node after all its arguments
        i = order[k]
        k += 1
        for j in succs[i]:
            depth[j] = max(depth.get(j, 0), depth[i] + 1)
            indeg[j] -= 1
            if not indeg[j]:
                order.append(j)
    for i in out:  # a cycle cannot happen in a graph of values; never lose a node if it did
        depth.setdefault(i, 0)
    columns: dict[int, list[int]] = {}
    for i in sorted(out, key=_order):
        columns.setdefault(depth[i], []).append(i)
    y: dict[int, float] = {}
    for x in sorted(columns):
        ids = sorted(columns[x], key=lambda i: -sum(y[a] for a in preds[i]) / max(1, len(preds[i])))
        for r, i in enumerate(ids):
            y[i] = (len(ids) - 1) / 2 - r
            out[i].x, out[i].y = float(x), y[i]


def _order(i: int) -> float:
    """Trace order; the added nodes (outside calls, syncs) after the traced ones."""
    return float(i) if i >= 0 else 1e9 - i


# -- cuts ------------------------------------------------------------------------------------

def _producer(nid: int, out: dict[int, DNode], base: dict[int, int]) -> str | None:
    """The kernel that wrote a value to memory (a view's is its storage's)."""
    n = out.get(nid)
    while n is not None and n.kind == "view":
        n = out.get(base.get(n.id, n.id)) if base.get(n.id, n.id) != n.id else None
    return n.kernel if n is not None and n.kind in ("op", "eager") else None


def _cuts(d: dict, out: dict[int, DNode], edges: list, hidden: set[str]) -> list[Cut]:
    crossing: dict[tuple[str, str], list[tuple[int, int]]] = {}
    base = {b: a for a, b in edges if b in out and out[b].kind == "view"}
    for a, b in edges:
        kb, ka = out[b].kernel if b in out else None, _producer(a, out, base)
        if b in out and out[b].kind == "op" and ka and kb and ka != kb:
            crossing.setdefault((ka, kb), []).append((a, b))
    first: dict[str, int] = {}
    for n in sorted(out.values(), key=lambda n: (n.x, n.y)):
        if n.kernel:
            first.setdefault(n.kernel, n.id)
    cuts, explained = [], set()
    for br in d.get("breaks", []):
        frm, to = br.get("from"), br.get("to")
        if frm in hidden or to in hidden:
            continue  # inside a loop drawn once: the drawn iteration's cuts say it
        if frm == "sync":  # a value an earlier sync computed: the edges into `to` from that value's kernel
            keys = [key for key in crossing if key[1] == to and any(out[a].op == br.get("op") for a, _ in crossing[key]
                                                                    if a in out)]
            es = [e for key in keys for e in crossing[key]]
            explained.update(keys)
        else:
            es = crossing.get((frm, to), [])
            explained.add((frm, to))
        cuts.append(Cut(str(frm), str(to), br.get("line"), break_reason(d, br), es, first.get(to)))
    for key, es in crossing.items():
        if key not in explained:
            cuts.append(Cut(key[0], key[1], None, f"{key[0]} writes this value to memory and {key[1]} reads it back",
                            es, first.get(key[1])))
    return _merge(cuts)


def _merge(cuts: list[Cut]) -> list[Cut]:
    """One mark per place: cuts on the same edges (a loop's, a numpy run's) say their reasons once."""
    merged: dict[tuple, Cut] = {}
    for c in cuts:
        key = (tuple(c.edges), c.anchor if not c.edges else None, c.reason)
        if key not in merged:
            merged[key] = c
    return list(merged.values())


# -- a kernel's reads and writes, in the user's names (for its source's header) ---------------

def kernel_io(d: dict, name: str) -> tuple[list[str], list[str]]:
    """What kernel ``name`` reads from memory and writes to it, as the user's names (ops otherwise)."""
    nodes = graph_nodes(d)
    byid = {n["id"]: n for n in nodes}
    names = user_names(d)
    mine = {n["id"] for n in nodes if n.get("kernel") == name and n["kind"] == "op"}

    def base(nid: int) -> int:
        while nid in byid and byid[nid]["kind"] == "view" and byid[nid]["args"]:
            nid = byid[nid]["args"][0]
        return nid

    reads = [base(a) for i in sorted(mine) for a in byid[i]["args"] if base(a) not in mine and base(a) in byid
             and byid[base(a)]["op"] != "const"]
    used_outside = {base(a) for n in nodes if n["id"] not in mine for a in n["args"]}
    writes = [i for i in sorted(mine) if i in used_outside or i in names.outputs]
    return ([_plain_label(byid[i], names) for i in dict.fromkeys(reads)],
            [_plain_label(byid[i], names) for i in writes])
