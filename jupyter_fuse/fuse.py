"""The partitioner: cut a graph into as few kernels as correctness allows.

Backend-neutral: it sees the IR, the op table's families and one question to
the backend, ``supports(node) -> reason | None``. Nodes are placed greedily in
dependency order; a node joins the kernel of an argument when that is legal,
and otherwise starts a kernel of its own, and the reason why becomes a
*break* (``Plan.breaks``). Kernel kinds:

``ew``       elementwise over one iteration shape (broadcasts and strided views
             of values in memory are just index maps of its inputs);
``reduce``   elementwise *prologue* over the input shape, one or more
             reductions over the same axes, and an *epilogue* over the
             reduced shape (``x.sum(1) / n``);
``scatter``  an elementwise kernel over a region, written through a view into
             a destination (``u[1:-1] = ...``);
``single``   one node run by the NumPy oracle (library ops like ``matmul``,
             copies by ``reshape``, ops the backend cannot render).

A kernel's outputs are exactly the values needed outside it: the caller's
targets, values still held by live arrays, and values read by later kernels.
Everything else stays in registers and is never written to memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import views
from .ir import Node, toposort
from .ops import family

MAX_KERNEL_OPS = 256  # beyond this a kernel is cut: compile time grows faster than the win


@dataclass(eq=False)
class Kernel:
    name: str
    kind: str  # "ew" | "reduce" | "scatter" | "single"
    shape: tuple[int, ...]  # iteration shape: what the loop nest covers
    nodes: list[Node]  # op nodes it computes, in dependency order
    inputs: list[Node] = field(default_factory=list)  # values read from memory (maybe views)
    outputs: list[Node] = field(default_factory=list)  # values written to memory
    axes: tuple[int, ...] = ()  # reduce kernels: axes of ``shape`` reduced
    lines: list[int] = field(default_factory=list)
    reason: str = ""  # single kernels: why the op is not fused
    # reduce kernels: "pro" (per input element), "red" (a reduction), "epi" (per output element)
    phase: dict[Node, str] = field(default_factory=dict)
    # reduce kernels: the pass over the reduced axes a node is computed in; stage s+1 may read
    # the finished reductions of stage s per output element (softmax: max, then exp-sum, then divide)
    stage: dict[Node, int] = field(default_factory=dict)
    seq: int = 0  # creation order while partitioning (see _Partitioner._depends)

    @property
    def reductions(self) -> list[Node]:
        return [n for n in self.nodes if self.phase.get(n) == "red"]


@dataclass
class Plan:
    kernels: list[Kernel]
    breaks: list[dict]
    keep: set[Node]  # values to keep after the plan ran (targets and live arrays)
    free_after: list[list[Node]]  # per kernel: values no longer needed after it
    inplace: set[Node] = field(default_factory=set)  # scatter writes that may reuse their destination


def partition(targets: list[Node], computed: dict, keep: set[Node], fuse: bool = True,
              lines: dict[Node, list[int]] | None = None, implicit: set[Node] | None = None,
              supports: Callable[[Node], str | None] | None = None,
              synced: dict[Node, str] | None = None, staged: bool = False,
              keep_reductions: bool = False) -> Plan:
    """Kernels computing ``targets`` from the values in ``computed``.

    ``implicit`` nodes are part of the eager op that made their argument (the
    cast and the write of ``a += b``): with fusion off they share its kernel.
    ``synced`` says, for values an earlier sync computed, where that was. ``staged``: the
    backend renders multi-pass reduce kernels (see ``Kernel.stage``). ``keep_reductions``: at a
    sync mid-cell, reduction results (small) are kept, so later uses do not recompute them.
    """
    p = _Partitioner(computed, lines or {}, implicit or set(), supports or (lambda n: None), synced or {})
    p.staged = staged
    for node in toposort(targets, stop=computed):
        if node not in computed and node.kind == "op":
            p.place(node) if fuse else p.place_eager(node)
    keep = set(targets) | keep
    keep |= {n.storage() for n in keep}
    if fuse:
        p.merge_siblings()
    if keep_reductions:
        keep |= {n for k in p.kernels for n in k.nodes if k.phase.get(n) == "red"}
    kernels = p.finish(keep)
    return Plan(kernels, p.breaks, keep, _free_after(kernels, keep), p.inplace(kernels, keep))


class _Partitioner:
    """Greedy placement in dependency order. Every step costs the same however large the graph
    grows (a 100k-op loop plans at the per-op cost of a 10-op cell): no walk over all kernels or
    all breaks per node. Kernel dependencies are a graph with reverse edges; ``reach[id(k)]`` is an
    upper bound of the largest ``seq`` reachable from ``k`` along them, so a cycle check only
    walks kernels that could lead to the one it looks for."""

    SIBLING_WINDOW = 8  # recent kernels of one iteration space tried for horizontal fusion

    def __init__(self, computed: dict, lines: dict, implicit: set[Node], supports, synced) -> None:
        self.computed, self.lines, self.implicit = computed, lines, implicit
        self.supports, self.synced = supports, synced
        self.kernels: list[Kernel] = []  # in creation order; merged-away kernels stay, marked in ``merged``
        self.owner: dict[Node, Kernel] = {}
        self.deps: dict[int, set[int]] = {}  # id(kernel) -> ids of kernels it reads from
        self.rdeps: dict[int, set[int]] = {}  # id(kernel) -> ids of kernels reading from it
        self.reach: dict[int, int] = {}
        self.by_id: dict[int, Kernel] = {}
        self.merged: dict[int, Kernel] = {}  # id(absorbed kernel) -> the kernel it went into
        self.spaces: dict[tuple, list[Kernel]] = {}  # (kind, shape, axes) -> kernels, for siblings
        self.breaks: list[dict] = []
        self._cuts: set[tuple] = set()
        self.staged = False

    # -- placement -------------------------------------------------------------------
    def place_eager(self, node: Node) -> None:
        """Fusion off: one kernel per eager op, on the same backend."""
        k = self._implicit_producer(node)
        if k is not None:
            self._join(k, node, _first_role(k, node))
            return
        reason = self._single_reason(node)
        k = self._new("single" if reason else _kind_alone(node), node, reason or "")
        for a in node.args:
            self._break(a, k, "fusion is off (--no-fuse): one kernel per op")

    def place(self, node: Node) -> None:
        reason = self._single_reason(node)
        if reason:
            k = self._new("single", node, reason)
            for a in node.args:
                self._break(a, k, reason)
            return
        why: dict[Node, str] = {}  # arg -> why the node could not join the arg's kernel
        for k, role in self._candidates(node, why) + self._siblings(node):
            if self._can_join(k, node, role, why):
                self._join(k, node, role)
                break
        else:
            k = self._new(_kind_alone(node), node)
        # the specific reasons first: a cut between two kernels is recorded once, with its best reason
        for a in sorted(node.args, key=lambda a: a not in why) if why else node.args:
            self._break(a, k, why.get(a))

    def _candidates(self, node: Node, why: dict) -> list[tuple[Kernel, str]]:
        """(kernel, role) pairs this node might join, the most recent kernel first."""
        out: list[tuple[Kernel, str]] = []
        for a in node.args:
            k = self.owner.get(a.storage())
            if k is None or any(k is c for c, _ in out):
                continue
            role = self._role(k, a, node)
            if isinstance(role, tuple):
                why[a] = role[1]
            else:
                out.append((k, role))
        if len(out) > 1:
            out.sort(key=lambda kr: -kr[0].seq)
        return out

    def _siblings(self, node: Node) -> list[tuple[Kernel, str]]:
        """Kernels over the same iteration space the node could share (horizontal fusion)."""
        if node.op == "setitem":
            return []
        if family(node.op) == "reduce":
            shape, axes, kind, role = node.args[0].shape, reduce_axes(node), "reduce", "red"
        else:
            shape, axes, kind, role = node.shape, (), "ew", "pro"
        recent = self.spaces.get((kind, shape, axes), ())
        return [(k, role) for k in recent[:-self.SIBLING_WINDOW - 1:-1]
                if id(k) not in self.merged and k.kind == kind and k.shape == shape and k.axes == axes
                and len(k.nodes) < MAX_KERNEL_OPS]

    def _role(self, k: Kernel, a: Node, node: Node) -> "str | tuple[None, str]":
        """The phase ``node`` would take in ``k`` (which computes ``a``), or (None, why not)."""
        src = a.storage()
        if k.kind == "single":
            return None, f"`{src.op}`{_line(self.lines, src)} is a library op: a kernel boundary"
        if k.kind == "scatter":
            return None, f"`{src.op}`{_line(self.lines, src)} is an assignment through a view: a kernel boundary"
        if len(k.nodes) >= MAX_KERNEL_OPS:
            return None, f"kernel size limit ({MAX_KERNEL_OPS} ops)"
        if a.op == "view":
            kinds = "/".join(dict.fromkeys(kind for kind, _ in a.params))
            return None, f"a view ({kinds}) of `{src.op}`{_line(self.lines, src)}, which {k.name} computes: written to memory first"
        phase = k.phase.get(src, "pro")
        if node.op == "setitem":
            if a is node.args[0]:
                return None, "the destination of an assignment is written to memory first"
            if k.kind != "ew" or k.shape != node.params[1]:
                return None, f"shape change: a value of shape {a.shape} is assigned into a region {node.params[1]}"
            return "pro"
        if family(node.op) == "reduce":
            if phase != "pro":
                return None, f"reduction boundary: `{node.op}` needs the complete result of `{src.op}`{_line(self.lines, src)}"
            if k.shape != a.shape:
                return None, f"shape change: {k.shape} -> {a.shape}"
            if k.kind == "reduce" and k.axes != reduce_axes(node):
                return None, f"a reduction over other axes {reduce_axes(node)} than {k.name}'s {k.axes}"
            return "red"
        if phase == "pro":
            if node.shape == k.shape:
                return "pro"
            return None, f"shape change: {src.shape} -> {node.shape} (broadcast of `{src.op}`{_line(self.lines, src)})"
        if node.shape == src.shape:
            return "epi"
        if node.shape == k.shape and self._per_row(a, k):
            return "pro"  # a later stage: the reduction is finished for this output element
        return None, f"reduction boundary: needs the complete result of `{src.op}`{_line(self.lines, src)}"

    def _per_row(self, a: Node, k: Kernel) -> bool:
        """Is per-result value ``a`` constant along the reduced axes when broadcast to ``k.shape``?"""
        if not self.staged or k.kind != "reduce" or len(k.axes) == len(k.shape) or a.op == "view":
            return False
        padded = (1,) * (len(k.shape) - len(a.shape)) + a.shape
        return len(padded) == len(k.shape) and all(
            p == 1 if d in k.axes else p == n for d, (p, n) in enumerate(zip(padded, k.shape)))

    def _can_join(self, k: Kernel, node: Node, role: str, why: dict) -> bool:
        if node.op == "setitem" and self.owner.get(node.args[0].storage()) is k:
            # k computes the destination too (a sibling of the value): it must be in memory before the write
            why[node.args[0]] = "the destination of an assignment is written to memory first"
            return False
        for a in node.args:
            other = self.owner.get(a.storage())
            if other is None:
                continue
            if other is k:
                if a.op == "view":
                    why[a] = f"a view of a value {k.name} computes: written to memory first"
                    return False
                phase = k.phase.get(a, "pro")
                ok = (phase == "pro" if role == "red" else phase != "pro" and a.shape == node.shape
                      if role == "epi" else phase == "pro" or self._per_row(a, k))
                if not ok:
                    why[a] = f"reduction boundary: mixes per-element and per-result values of {k.name}"
                    return False
            elif self._depends(other, k):  # the other input needs k's result first: a cycle
                why[a] = f"joining {k.name} would make a cycle ({k.name} -> {other.name} -> here)"
                return False
        return True

    def _depends(self, k: Kernel, on: Kernel) -> bool:
        """Does ``k`` read (through any chain of kernels) what ``on`` computes?"""
        floor, target = on.seq, id(on)
        stack, seen = [id(k)], set()
        while stack:
            i = stack.pop()
            if i == target:
                return True
            if i not in seen and self.reach[i] >= floor:  # below the floor nothing leads to `on`
                seen.add(i)
                stack.extend(self.deps[i])
        return False

    def _edge(self, frm: Kernel, to: Kernel) -> None:
        """``frm`` reads what ``to`` computes."""
        if to is frm or id(to) in self.deps[id(frm)]:
            return
        self.deps[id(frm)].add(id(to))
        self.rdeps[id(to)].add(id(frm))
        self._raise(id(frm), self.reach[id(to)])

    def _raise(self, i: int, bound: int) -> None:
        """Kernels reaching ``i`` reach at least up to ``bound`` now."""
        stack = [i]
        while stack:
            j = stack.pop()
            if self.reach[j] < bound:
                self.reach[j] = bound
                stack.extend(self.rdeps[j])

    def _join(self, k: Kernel, node: Node, role: str) -> None:
        if role == "red" and k.kind == "ew":
            k.kind, k.axes = "reduce", reduce_axes(node)
            self._index(k)
        if node.op == "setitem":
            k.kind = "scatter"
        k.nodes.append(node)
        k.phase[node] = role
        k.stage[node] = max([k.stage[a] + (role == "pro" and k.phase[a] != "pro")
                             for a in node.args if a in k.stage], default=0)
        self.owner[node] = k
        self._note(k, node)

    def _new(self, kind: str, node: Node, reason: str = "") -> Kernel:
        shape, axes = node.shape, ()
        if kind == "reduce":
            shape, axes = node.args[0].shape, reduce_axes(node)
        elif kind == "scatter":
            shape = node.params[1]
        seq = len(self.kernels)
        k = Kernel(f"k{seq}", kind, shape, [node], axes=axes, reason=reason,
                   phase={node: "red" if kind == "reduce" else "pro"}, stage={node: 0}, seq=seq)
        self.kernels.append(k)
        i = id(k)
        self.by_id[i], self.deps[i], self.rdeps[i], self.reach[i] = k, set(), set(), seq
        self.owner[node] = k
        self._index(k)
        self._note(k, node)
        return k

    def _index(self, k: Kernel) -> None:
        if k.kind in ("ew", "reduce"):
            self.spaces.setdefault((k.kind, k.shape, k.axes), []).append(k)

    def _note(self, k: Kernel, node: Node) -> None:
        """Record the kernel's dependencies and source lines."""
        for a in node.args:
            other = self.owner.get(a.storage())
            if other is not None and other is not k:
                self._edge(k, other)
        for ln in self.lines.get(node, ()):
            if ln not in k.lines:
                k.lines.append(ln)

    def _single_reason(self, node: Node) -> str | None:
        fam = family(node.op)
        if fam == "library":
            return f"`{node.op}`{_line(self.lines, node)} is a library op (it runs as one NumPy/BLAS call)"
        if fam == "movement":
            return f"`{node.op}`{_line(self.lines, node)} copies data into a new layout"
        return self.supports(node)

    def _implicit_producer(self, node: Node) -> Kernel | None:
        """With fusion off, the cast and write of ``a += b`` belong to the add's kernel."""
        if node not in self.implicit:
            return None
        k = self.owner.get((node.args[-1] if node.op == "setitem" else node.args[0]).storage())
        if k is None or k.kind not in ("ew", "single"):
            return None
        if node.op == "setitem" and (k.kind != "ew" or k.shape != node.params[1]):
            return None
        return k

    def _break(self, a: Node, k: Kernel, reason: str | None) -> None:
        src = a.storage()
        producer = self.owner.get(src)
        if producer is k or src.op == "const":
            return
        if producer is None:  # an input: a cut only if an earlier sync computed it
            if src not in self.synced:
                return
            reason, frm = self.synced[src], "sync"
        else:
            frm = producer
            reason = reason or f"`{src.op}` is computed in {producer.name}"
        cut = (id(frm) if frm != "sync" else frm, id(k))
        if cut in self._cuts:
            return
        self._cuts.add(cut)
        self.breaks.append({"from": frm, "to": k, "line": _first_line(self.lines, k.nodes[-1]),
                            "op": src.op, "reason": reason})

    # -- after placement -------------------------------------------------------------
    def merge_siblings(self) -> None:
        """Independent kernels over one iteration space become one multi-output kernel (each
        kernel tries the next few of its space, so the pass stays linear in the kernel count)."""
        groups: dict[tuple, list[Kernel]] = {}
        for k in self.kernels:
            if k.kind in ("ew", "reduce"):
                groups.setdefault(k.shape, []).append(k)
        for group in groups.values():
            for i, a in enumerate(group):
                if id(a) in self.merged:
                    continue
                tried = 0
                for b in group[i + 1:]:
                    if tried == self.SIBLING_WINDOW:
                        break
                    if id(b) in self.merged:
                        continue
                    tried += 1
                    if self._mergeable(a, b):
                        self._absorb(a, b)

    def _mergeable(self, a: Kernel, b: Kernel) -> bool:
        kinds = {a.kind, b.kind}
        if not kinds <= {"ew", "reduce"} or a.shape != b.shape or (len(kinds) > 1 and not self.staged):
            return False  # (an elementwise kernel rides along a reduction on backends with staged kernels)
        if kinds == {"reduce"} and a.axes != b.axes:
            return False
        if len(a.nodes) + len(b.nodes) > MAX_KERNEL_OPS or self._depends(a, b) or self._depends(b, a):
            return False
        if a.kind == "reduce":  # epilogues must agree on the output shape
            shapes = {n.shape for k in (a, b) for n in k.nodes if k.phase[n] != "pro"}
            return len(shapes) == 1
        return True

    def _absorb(self, a: Kernel, b: Kernel) -> None:
        if b.kind == "reduce" and a.kind == "ew":  # an elementwise kernel rides along a reduction's first pass
            a.kind, a.axes = "reduce", b.axes
        a.nodes += b.nodes
        a.phase.update(b.phase)
        a.stage.update(b.stage)
        a.lines.extend(ln for ln in b.lines if ln not in a.lines)
        for n in b.nodes:
            self.owner[n] = a
        ia, ib = id(a), id(b)
        self.merged[ib] = a
        for x in self.rdeps.pop(ib):
            self.deps[x].discard(ib)
            if x != ia:
                self.deps[x].add(ia)
                self.rdeps[ia].add(x)
        for y in self.deps.pop(ib):
            self.rdeps[y].discard(ib)
            if y != ia:
                self.rdeps[y].add(ia)
                self.deps[ia].add(y)
        # what reached a or b reaches the merged kernel: its seq is the lower one, its reach the higher
        a.seq = min(a.seq, b.seq)
        self._raise(ia, max(self.reach[ia], self.reach.pop(ib)))
        for x in list(self.rdeps[ia]):
            self._raise(x, self.reach[ia])

    def _alive(self, k: Any) -> Any:
        while isinstance(k, Kernel) and id(k) in self.merged:
            k = self.merged[id(k)]
        return k

    def finish(self, keep: set[Node]) -> list[Kernel]:
        """Order kernels by dependency; work out each one's inputs and outputs."""
        order = self._kernel_order()
        readers: dict[Node, set[int]] = {}
        for k in order:
            for n in k.nodes:
                for a in n.args:
                    readers.setdefault(a.storage(), set()).add(id(k))
        for k in order:
            mine = set(k.nodes)
            k.inputs = list(dict.fromkeys(a for n in k.nodes for a in n.args
                                          if a.storage() not in mine and a.op != "const"))
            k.outputs = [n for n in k.nodes if n in keep or readers.get(n, set()) - {id(k)}]
        for i, k in enumerate(order):
            k.name = f"k{i}"
        breaks, seen = [], set()
        for br in self.breaks:  # kernels merged since: the cut is between the kernels they went into
            frm, to = self._alive(br["from"]), self._alive(br["to"])
            names = (frm if isinstance(frm, str) else frm.name, to.name)
            if names[0] != names[1] and names not in seen:
                seen.add(names)
                breaks.append({**br, "from": names[0], "to": names[1]})
        self.breaks = breaks
        return order

    def _kernel_order(self) -> list[Kernel]:
        """Kernels in dependency order (creation order where free): an iterative DFS, since a
        long loop's kernels form chains far deeper than Python's recursion limit."""
        alive = [k for k in self.kernels if id(k) not in self.merged]
        done: set[int] = set()
        order: list[Kernel] = []
        for root in alive:
            if id(root) in done:
                continue
            done.add(id(root))
            stack = [(root, iter(sorted(self.deps[id(root)], key=lambda i: self.by_id[i].seq)))]
            while stack:
                k, it = stack[-1]
                nxt = next((d for d in it if d not in done), None)
                if nxt is None:
                    order.append(k)
                    stack.pop()
                    continue
                done.add(nxt)
                child = self.by_id[nxt]
                stack.append((child, iter(sorted(self.deps[nxt], key=lambda i: self.by_id[i].seq))))
        return order

    def inplace(self, kernels: list[Kernel], keep: set[Node]) -> set[Node]:
        """Assignments whose destination is dead afterwards may write into it: nothing else reads it,
        or only their own kernel does, where each element it reads is the one it writes there or
        one it does not write (a column sweep, ``u[:, j] = u[:, j] - a * u[:, j - 1]``: without
        this, every column would copy the whole array)."""
        readers: dict[Node, list[tuple[Node, Node]]] = {}  # storage -> (reading node, what it reads)
        kernel_of: dict[Node, Kernel] = {}
        writers: dict[Node, int] = {}
        for k in kernels:
            for n in k.nodes:
                kernel_of[n] = k
                for i, a in enumerate(n.args):
                    if i == 0 and n.op == "setitem":  # (the destination an assignment writes)
                        writers[a] = writers.get(a, 0) + 1
                    else:
                        readers.setdefault(a.storage(), []).append((n, a))
        out = set()
        for n in kernel_of:
            if n.op != "setitem":
                continue
            st = n.args[0]
            if st.kind != "op" or st in keep or st in self.computed or writers[st] > 1:
                continue
            k = kernel_of[n]
            if all(kernel_of[r] is k and _same_or_apart(a, n) for r, a in readers.get(st, ())):
                out.add(n)
        return out


def _same_or_apart(read: Node, write: Node) -> bool:
    """Does ``read`` (a view of the assignment ``write``'s destination, in its kernel) read each
    element where ``write`` writes it, or only elements ``write`` leaves alone?"""
    if read.kind != "view" or read.layout is None:
        return False
    _, shape, layout = write.params[:3]
    if layout is None:
        return False
    if read.shape == shape and read.layout == layout:
        return True
    try:
        return not np.shares_memory(views.ghost(read.dtype, read.shape, read.layout),
                                    views.ghost(read.dtype, shape, layout), max_work=10_000)
    except np.exceptions.TooHardError:
        return False


def _first_role(k: Kernel, node: Node) -> str:
    return "red" if family(node.op) == "reduce" else "pro"


def _kind_alone(node: Node) -> str:
    fam = family(node.op)
    if fam == "reduce":
        return "reduce"
    if node.op == "setitem":
        return "scatter"
    return "ew" if fam in ("elementwise", "source") else "single"


def reduce_axes(node: Node) -> tuple[int, ...]:
    axis = dict(node.params)["axis"]
    nd = node.args[0].ndim
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a for a in axes if 0 <= a < nd)  # NumPy lets a 0-d array reduce over axis 0 or -1


def _line(lines: dict, node: Node) -> str:
    ln = _first_line(lines, node)
    return f" (line {ln})" if ln is not None else ""


def _first_line(lines: dict, node: Node) -> int | None:
    got = lines.get(node)
    return got[0] if got else None


def _free_after(kernels: list[Kernel], keep: set[Node]) -> list[list[Node]]:
    """For each kernel, the computed values whose last reader it was."""
    last: dict[Node, int] = {}
    for i, k in enumerate(kernels):
        for out in k.outputs:
            last.setdefault(out, i)
        for inp in k.inputs:
            base = inp.storage()
            if base in last:
                last[base] = i
    free: list[list[Node]] = [[] for _ in kernels]
    for node, i in last.items():
        if node not in keep:
            free[i].append(node)
    return free

