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
    def __init__(self, computed: dict, lines: dict, implicit: set[Node], supports, synced) -> None:
        self.computed, self.lines, self.implicit = computed, lines, implicit
        self.supports, self.synced = supports, synced
        self.kernels: list[Kernel] = []
        self.owner: dict[Node, Kernel] = {}
        self.deps: dict[int, set[int]] = {}  # id(kernel) -> ids of kernels it reads from
        self.breaks: list[dict] = []
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
        for a in sorted(node.args, key=lambda a: a not in why):
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
        out.sort(key=lambda kr: -self.kernels.index(kr[0]))
        return out

    def _siblings(self, node: Node) -> list[tuple[Kernel, str]]:
        """Kernels over the same iteration space the node could share (horizontal fusion)."""
        if node.op == "setitem":
            return []
        if family(node.op) == "reduce":
            shape, axes, kind, role = node.args[0].shape, reduce_axes(node), "reduce", "red"
        else:
            shape, axes, kind, role = node.shape, (), "ew", "pro"
        return [(k, role) for k in reversed(self.kernels)
                if k.kind == kind and k.shape == shape and k.axes == axes and len(k.nodes) < MAX_KERNEL_OPS]

    def _role(self, k: Kernel, a: Node, node: Node) -> "str | tuple[None, str]":
        """The phase ``node`` would take in ``k`` (which computes ``a``), or (None, why not)."""
        src = a.storage()
        at = _line(self.lines, src)
        if k.kind == "single":
            return None, f"`{src.op}`{at} is a library op: a kernel boundary"
        if k.kind == "scatter":
            return None, f"`{src.op}`{at} is an assignment through a view: a kernel boundary"
        if len(k.nodes) >= MAX_KERNEL_OPS:
            return None, f"kernel size limit ({MAX_KERNEL_OPS} ops)"
        if a.op == "view":
            kinds = "/".join(dict.fromkeys(kind for kind, _ in a.params))
            return None, f"a view ({kinds}) of `{src.op}`{at}, which {k.name} computes: written to memory first"
        phase = k.phase.get(src, "pro")
        if node.op == "setitem":
            if a is node.args[0]:
                return None, "the destination of an assignment is written to memory first"
            if k.kind != "ew" or k.shape != node.params[1]:
                return None, f"shape change: a value of shape {a.shape} is assigned into a region {node.params[1]}"
            return "pro"
        if family(node.op) == "reduce":
            if phase != "pro":
                return None, f"reduction boundary: `{node.op}` needs the complete result of `{src.op}`{at}"
            if k.shape != a.shape:
                return None, f"shape change: {k.shape} -> {a.shape}"
            if k.kind == "reduce" and k.axes != reduce_axes(node):
                return None, f"a reduction over other axes {reduce_axes(node)} than {k.name}'s {k.axes}"
            return "red"
        if phase == "pro":
            if node.shape == k.shape:
                return "pro"
            return None, f"shape change: {src.shape} -> {node.shape} (broadcast of `{src.op}`{at})"
        if node.shape == src.shape:
            return "epi"
        if node.shape == k.shape and self._per_row(a, k):
            return "pro"  # a later stage: the reduction is finished for this output element
        return None, f"reduction boundary: needs the complete result of `{src.op}`{at}"

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
        stack, seen = [id(k)], set()
        while stack:
            i = stack.pop()
            if i == id(on):
                return True
            if i not in seen:
                seen.add(i)
                stack.extend(self.deps.get(i, ()))
        return False

    def _join(self, k: Kernel, node: Node, role: str) -> None:
        if role == "red" and k.kind == "ew":
            k.kind, k.axes = "reduce", reduce_axes(node)
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
        k = Kernel(f"k{len(self.kernels)}", kind, shape, [node], axes=axes, reason=reason,
                   phase={node: "red" if kind == "reduce" else "pro"}, stage={node: 0})
        self.kernels.append(k)
        self.owner[node] = k
        self._note(k, node)
        return k

    def _note(self, k: Kernel, node: Node) -> None:
        """Record the kernel's dependencies and source lines."""
        deps = self.deps.setdefault(id(k), set())
        for a in node.args:
            other = self.owner.get(a.storage())
            if other is not None and other is not k:
                deps.add(id(other))
        k.lines.extend(ln for ln in self.lines.get(node, []) if ln not in k.lines)

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
            frm = producer.name
            reason = reason or f"`{src.op}` is computed in {producer.name}"
        if any(b["from"] == frm and b["to"] == k.name for b in self.breaks):
            return
        self.breaks.append({"from": frm, "to": k.name, "line": _first_line(self.lines, k.nodes[-1]),
                            "op": src.op, "reason": reason})

    # -- after placement -------------------------------------------------------------
    def merge_siblings(self) -> None:
        """Independent kernels over one iteration space become one multi-output kernel."""
        i = 0
        while i < len(self.kernels):
            a = self.kernels[i]
            for b in self.kernels[i + 1:]:
                if self._mergeable(a, b):
                    self._absorb(a, b)
                    break
            else:
                i += 1

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
        self.deps[id(a)] = (self.deps.get(id(a), set()) | self.deps.pop(id(b), set())) - {id(a), id(b)}
        for deps in self.deps.values():
            if id(b) in deps:
                deps.discard(id(b))
                deps.add(id(a))
        self.kernels.remove(b)
        for br in self.breaks:
            br["from"] = a.name if br["from"] == b.name else br["from"]
            br["to"] = a.name if br["to"] == b.name else br["to"]
        self.breaks = [br for br in self.breaks if br["from"] != br["to"]]

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
        renames = {k.name: f"k{i}" for i, k in enumerate(order)}
        for br in self.breaks:
            br["from"], br["to"] = renames.get(br["from"], br["from"]), renames.get(br["to"], br["to"])
        for k in order:
            k.name = renames[k.name]
        return order

    def _kernel_order(self) -> list[Kernel]:
        by_id = {id(k): k for k in self.kernels}
        index = {id(k): i for i, k in enumerate(self.kernels)}
        done: set[int] = set()
        order: list[Kernel] = []

        def visit(k: Kernel) -> None:
            if id(k) not in done:
                done.add(id(k))
                for d in sorted(self.deps.get(id(k), ()), key=index.__getitem__):
                    visit(by_id[d])
                order.append(k)

        for k in self.kernels:
            visit(k)
        return order

    def inplace(self, kernels: list[Kernel], keep: set[Node]) -> set[Node]:
        """Assignments whose destination is dead afterwards may write into it."""
        readers: dict[Node, int] = {}
        for k in kernels:
            for n in k.nodes:
                for a in n.args:
                    readers[a.storage()] = readers.get(a.storage(), 0) + 1
        return {n for k in kernels for n in k.nodes
                if n.op == "setitem" and n.args[0].kind == "op" and n.args[0] not in keep
                and n.args[0] not in self.computed and readers.get(n.args[0], 0) == 1}


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

