"""The partitioner: cut a graph into as few kernels as correctness allows.

Backend-neutral: it sees the IR, the op table's families and one question to
the backend, ``supports(node) -> reason | None``. Nodes are placed greedily in
the order the cell made them; a node joins the kernel of an argument when that is legal,
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

import gc
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Callable, Iterator

import numpy as np

from . import views
from .ir import Node, toposort
from .ops import family

MAX_KERNEL_OPS = 256  # beyond this a kernel is cut: compile time grows faster than the win
# ... and beyond this many arrays read from memory: numba's compile time grows faster than linearly
# with a kernel's array arguments (sir's loop, each step reading the last kernel's values, made
# kernels of 180), and a kernel reading that many saves little over two
MAX_KERNEL_READS = 32
# ... and beyond this many selects (``np.where``) where they read nothing that changes along the loop: LLVM's
# optimizer takes time that grows exponentially in a chain of them (bench/realworld.py's hamming_crc, a CRC of
# one row bit by bit, 50 selects in a kernel: its compile did not end)
MAX_KERNEL_SELECTS = 16


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
    reads: set[Node] = field(default_factory=set)  # storages it reads from memory (``MAX_KERNEL_READS``)
    selects: int = 0  # its ``where`` nodes (``MAX_KERNEL_SELECTS``)
    sites: set[tuple[int, int]] = field(default_factory=set)  # where in the cell's code its ops were made
    complex: bool = False  # computes on complex values (``_complex``)

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
              lines: dict[Node, list[int]] | None = None, sites: dict[Node, tuple[int, int]] | None = None,
              implicit: set[Node] | None = None,
              supports: Callable[[Node], str | None] | None = None,
              synced: dict[Node, str] | None = None, staged: bool = False,
              keep_reductions: bool = False) -> Plan:
    """Kernels computing ``targets`` from the values in ``computed``.

    ``sites``: where in the cell's code each op was made (line, bytecode offset). Kernels are not merged
    side by side (horizontal fusion) across ops of one site that read nothing in common: those are one
    op of two loop iterations (or two calls of a function) on other data (a bootstrap's mean of each
    resample), which gain nothing from sharing a kernel, and a kernel per iteration is what a replay
    rolls back into a loop. (Ones reading one array, a convolution's shifted windows, still merge.)
    ``implicit`` nodes are part of the eager op that made their argument (the
    cast and the write of ``a += b``): with fusion off they share its kernel.
    ``synced`` says, for values an earlier sync computed, where that was. ``staged``: the
    backend renders multi-pass reduce kernels (see ``Kernel.stage``). ``keep_reductions``: at a
    sync mid-cell, reduction results (small) are kept, so later uses do not recompute them.
    """
    p = _Partitioner(computed, lines or {}, sites or {}, implicit or set(), supports or (lambda n: None), synced or {})
    p.staged = staged
    place = p.place if fuse else p.place_eager
    with _no_gc():  # planning allocates much and frees nothing: a collection would only walk the whole heap
        # in the order the cell made them (a node's arguments are always older): a loop's steps are placed
        # step by step, so a kernel cut by its size ends at a step and hands on the loop's state, not the
        # history of one variable (which a depth-first walk from the first target would place first)
        for node in _made_order(toposort(targets, stop=computed)):
            if node.kind == "op" and node not in computed:
                place(node)
        keep = set(targets) | keep
        keep |= {n.storage() for n in keep}
        if fuse:
            p.merge_siblings()
        if keep_reductions:
            keep |= {n for k in p.kernels for n in k.nodes if k.phase.get(n) == "red"}
        kernels = p.finish(keep)
        return Plan(kernels, p.breaks, keep, _free_after(kernels, keep), p.inplace(kernels, keep))


def _made_order(nodes: list[Node]) -> list[Node]:
    """``nodes`` in the order they were (last) made, each after its arguments: a node made again
    (``Node.make``) counts as made then, so an older node reading it waits for it."""
    order: list[Node] = []
    placed: set[Node] = set()
    inside = set(nodes)
    for node in sorted(nodes, key=attrgetter("serial")):
        if node in placed:
            continue
        stack = [(node, False)]
        while stack:  # (nearly always one step: its arguments are placed already)
            n, ready = stack.pop()
            if ready:
                if n not in placed:
                    placed.add(n)
                    order.append(n)
                continue
            stack.append((n, True))
            stack.extend((a, False) for a in reversed(n.args) if a in inside and a not in placed)
    return order


@contextmanager
def _no_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Partitioner:
    """Greedy placement in dependency order. Every step costs the same however large the graph
    grows (a 100k-op loop plans at the per-op cost of a 10-op cell): no walk over all kernels or
    all breaks per node. Kernel dependencies are a graph with reverse edges; ``reach[k]`` is an
    upper bound of the largest ``seq`` reachable from ``k`` along them, so a cycle check only
    walks kernels that could lead to the one it looks for. (``a._base or a`` is ``a.storage()``
    without a call: it is asked for every argument of every op.)"""

    SIBLING_WINDOW = 8  # recent kernels of one iteration space tried for horizontal fusion

    def __init__(self, computed: dict, lines: dict, sites: dict, implicit: set[Node], supports, synced) -> None:
        self.computed, self.lines, self.sites, self.implicit = computed, lines, sites, implicit
        self.supports, self.synced = supports, synced
        self.kernels: list[Kernel] = []  # in creation order; merged-away kernels stay, marked in ``merged``
        self.owner: dict[Node, Kernel] = {}
        # (kernels hash by identity: Kernel is ``eq=False``)
        self.deps: dict[Kernel, set[Kernel]] = {}  # kernel -> kernels it reads from
        self.rdeps: dict[Kernel, set[Kernel]] = {}  # kernel -> kernels reading from it
        self.reach: dict[Kernel, int] = {}
        self.merged: dict[Kernel, Kernel] = {}  # absorbed kernel -> the kernel it went into
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
        k = self._first_joinable(self._candidates(node, why), node, why)
        if k is None:  # (siblings are looked for only when no argument's kernel takes the node)
            k = self._first_joinable(self._siblings(node), node, why) or self._new(_kind_alone(node), node)
        # the specific reasons first: a cut between two kernels is recorded once, with its best reason
        for a in sorted(node.args, key=lambda a: a not in why) if why else node.args:
            self._break(a, k, why.get(a))

    def _first_joinable(self, options: list[tuple[Kernel, str]], node: Node, why: dict) -> Kernel | None:
        for k, role in options:
            if self._can_join(k, node, role, why):
                self._join(k, node, role)
                return k
        return None

    def _candidates(self, node: Node, why: dict) -> list[tuple[Kernel, str]]:
        """(kernel, role) pairs this node might join, the most recent kernel first."""
        out: list[tuple[Kernel, str]] = []
        taken: list[Kernel] = []
        owner = self.owner
        for a in node.args:
            k = owner.get(a._base or a)
            if k is None or k in taken:
                continue
            role = self._role(k, a, node)
            if isinstance(role, tuple):
                why[a] = role[1]
            else:
                out.append((k, role))
                taken.append(k)
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
        site = self.sites.get(node)
        return [(k, role) for k in recent[:-self.SIBLING_WINDOW - 1:-1]
                if k not in self.merged and k.kind == kind and k.shape == shape and k.axes == axes
                and len(k.nodes) < MAX_KERNEL_OPS and (node.op != "where" or k.selects < MAX_KERNEL_SELECTS)
                and (site not in k.sites or shape and not k.reads.isdisjoint(self._reads(k, node)))]

    def _role(self, k: Kernel, a: Node, node: Node) -> "str | tuple[None, str]":
        """The phase ``node`` would take in ``k`` (which computes ``a``), or (None, why not)."""
        src = a._base or a
        if k.kind == "single":
            return None, f"`{src.op}`{_line(self.lines, src)} is a library op: a kernel boundary"
        if k.kind == "scatter":
            return None, f"`{src.op}`{_line(self.lines, src)} is an assignment through a view: a kernel boundary"
        if len(k.nodes) >= MAX_KERNEL_OPS:
            return None, f"kernel size limit ({MAX_KERNEL_OPS} ops)"
        if node.op == "where" and k.selects >= MAX_KERNEL_SELECTS:
            return None, f"kernel select limit ({MAX_KERNEL_SELECTS} np.where: compile time grows exponentially past it)"
        if node.op == "roll":
            return None, _roll_reason(self.lines, node, src, k)
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
        if len(k.reads) >= MAX_KERNEL_READS and any(r not in k.reads for r in self._reads(k, node)):
            for a in node.args:  # (the reason goes with the value that links the node to k)
                if self.owner.get(a._base or a) is k:
                    why[a] = f"kernel input limit ({MAX_KERNEL_READS} arrays read from memory)"
            return False
        if (k.kind == "reduce" or family(node.op) == "reduce") and (k.complex or _complex(node)):  # (cheap test first)
            what = node if _complex(node) else next(n for n in k.nodes if _complex(n))
            for a in node.args:
                if self.owner.get(a._base or a) is k:
                    why[a] = (f"`{what.op}`{_line(self.lines, what)} computes on complex values, which are not fused "
                              f"with a reduction (NumPy's own loops compute them, a block of elements at a time)")
            return False
        if node.op == "setitem" and self.owner.get(node.args[0].storage()) is k:
            # k computes the destination too (a sibling of the value): it must be in memory before the write
            why[node.args[0]] = "the destination of an assignment is written to memory first"
            return False
        for a in node.args:
            other = self.owner.get(a._base or a)
            if other is None:
                continue
            if other is k:
                if node.op == "roll":
                    why[a] = _roll_reason(self.lines, node, a._base or a, k)
                    return False
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
        if self.reach[k] < on.seq:  # (the usual answer, at once)
            return False
        stack, seen = [k], set()
        while stack:
            i = stack.pop()
            if i is on:
                return True
            if i not in seen and self.reach[i] >= on.seq:  # below the floor nothing leads to `on`
                seen.add(i)
                stack.extend(self.deps[i])
        return False

    def _edge(self, frm: Kernel, to: Kernel) -> None:
        """``frm`` reads what ``to`` computes."""
        deps = self.deps[frm]
        if to is frm or to in deps:
            return
        deps.add(to)
        self.rdeps[to].add(frm)
        if self.reach[frm] < self.reach[to]:
            self._raise(frm, self.reach[to])

    def _raise(self, i: Kernel, bound: int) -> None:
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
        k.complex = k.complex or _complex(node)
        k.selects += node.op == "where"
        k.phase[node] = role
        k.stage[node] = 0 if k.kind != "reduce" else max(  # (only a reduce kernel has passes)
            [k.stage[a] + (role == "pro" and k.phase[a] != "pro") for a in node.args if a in k.stage], default=0)
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
                   phase={node: "red" if kind == "reduce" else "pro"}, stage={node: 0}, seq=seq,
                   selects=int(node.op == "where"), complex=_complex(node))
        self.kernels.append(k)
        self.deps[k], self.rdeps[k], self.reach[k] = set(), set(), seq
        self.owner[node] = k
        self._index(k)
        self._note(k, node)
        return k

    def _index(self, k: Kernel) -> None:
        if k.kind in ("ew", "reduce"):
            self.spaces.setdefault((k.kind, k.shape, k.axes), []).append(k)

    def _reads(self, k: Kernel, node: Node) -> list[Node]:
        """The storages ``node`` would read from memory in ``k`` (not computed there, not constants)."""
        owner = self.owner
        return [st for st in (a.storage() for a in node.args) if st.op != "const" and owner.get(st) is not k]

    def _note(self, k: Kernel, node: Node) -> None:
        """Record the kernel's dependencies, the arrays it reads, its source lines and sites."""
        k.reads.update(self._reads(k, node))
        site = self.sites.get(node)
        if site is not None:
            k.sites.add(site)
        owner = self.owner
        for a in node.args:
            other = owner.get(a._base or a)
            if other is not None and other is not k:
                self._edge(k, other)
        lines = self.lines.get(node)
        if lines:
            k.lines.extend(ln for ln in lines if ln not in k.lines)

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
        src = a._base or a
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
        cut = (frm, k)
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
                if a in self.merged:
                    continue
                tried = 0
                for b in group[i + 1:]:
                    if tried == self.SIBLING_WINDOW:
                        break
                    if b in self.merged:
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
        if "reduce" in kinds and (a.complex or b.complex):  # (as in ``_can_join``)
            return False
        if len(a.nodes) + len(b.nodes) > MAX_KERNEL_OPS or a.selects + b.selects > MAX_KERNEL_SELECTS \
                or self._depends(a, b) or self._depends(b, a):
            return False
        if len(a.reads | b.reads) > MAX_KERNEL_READS:
            return False
        if not a.sites.isdisjoint(b.sites) and (a.reads.isdisjoint(b.reads) or not a.shape):
            return False  # (one op of two iterations, reading nothing in common, or one element each: see ``partition``)
        if a.kind == "reduce":  # epilogues must agree on the output shape
            shapes = {n.shape for k in (a, b) for n in k.nodes if k.phase[n] != "pro"}
            return len(shapes) == 1
        return True

    def _absorb(self, a: Kernel, b: Kernel) -> None:
        if b.kind == "reduce" and a.kind == "ew":  # an elementwise kernel rides along a reduction's first pass
            a.kind, a.axes = "reduce", b.axes
        a.nodes += b.nodes
        a.complex = a.complex or b.complex
        a.selects += b.selects
        a.reads |= b.reads
        a.sites |= b.sites
        a.phase.update(b.phase)
        a.stage.update(b.stage)
        a.lines.extend(ln for ln in b.lines if ln not in a.lines)
        for n in b.nodes:
            self.owner[n] = a
        self.merged[b] = a
        for x in self.rdeps.pop(b):
            self.deps[x].discard(b)
            if x is not a:
                self.deps[x].add(a)
                self.rdeps[a].add(x)
        for y in self.deps.pop(b):
            self.rdeps[y].discard(b)
            if y is not a:
                self.rdeps[y].add(a)
                self.deps[a].add(y)
        # what reached a or b reaches the merged kernel: its seq is the lower one, its reach the higher
        a.seq = min(a.seq, b.seq)
        self._raise(a, max(self.reach[a], self.reach.pop(b)))
        for x in list(self.rdeps[a]):
            self._raise(x, self.reach[a])

    def _alive(self, k: Any) -> Any:
        while isinstance(k, Kernel) and k in self.merged:
            k = self.merged[k]
        return k

    def finish(self, keep: set[Node]) -> list[Kernel]:
        """Order kernels by dependency; work out each one's inputs and outputs."""
        order = self._kernel_order()
        read_elsewhere: set[Node] = set()  # values a kernel other than their own reads
        for k in order:
            mine = set(k.nodes)
            inputs: dict[Node, None] = {}
            for n in k.nodes:
                for a in n.args:
                    src = a._base or a
                    if src not in mine and a.op != "const":
                        inputs[a] = None
                        read_elsewhere.add(src)
            k.inputs = list(inputs)
        for k in order:
            k.outputs = [n for n in k.nodes if n in keep or n in read_elsewhere]
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
        alive = [k for k in self.kernels if k not in self.merged]
        done: set[Kernel] = set()
        order: list[Kernel] = []
        seq = _seq
        for root in alive:
            if root in done:
                continue
            done.add(root)
            stack = [(root, iter(sorted(self.deps[root], key=seq)))]
            while stack:
                k, it = stack[-1]
                nxt = next((d for d in it if d not in done), None)
                if nxt is None:
                    order.append(k)
                    stack.pop()
                    continue
                done.add(nxt)
                stack.append((nxt, iter(sorted(self.deps[nxt], key=seq))))
        return order

    def inplace(self, kernels: list[Kernel], keep: set[Node]) -> set[Node]:
        """Assignments whose destination is dead afterwards may write into it: nothing else reads it,
        or only their own kernel does, where each element it reads is the one it writes there or
        one it does not write (a column sweep, ``u[:, j] = u[:, j] - a * u[:, j - 1]``: without
        this, every column would copy the whole array)."""
        writes = [n for k in kernels for n in k.nodes if n.op == "setitem"]
        writers: dict[Node, int] = {}
        for n in writes:
            writers[n.args[0]] = writers.get(n.args[0], 0) + 1
        dests = {st for st, count in writers.items()
                 if count == 1 and st.kind == "op" and st not in keep and st not in self.computed}
        if not dests:
            return set()
        readers: dict[Node, list[tuple[Node, Node]]] = {}  # destination -> (reading node, what it reads)
        for k in kernels:
            for n in k.nodes:
                for a in n.args[1:] if n.op == "setitem" else n.args:  # (not the destination it writes)
                    src = a._base or a
                    if src in dests:
                        readers.setdefault(src, []).append((n, a))
        out = set()
        owner = self.owner
        for n in writes:
            st = n.args[0]
            if st in dests and all(owner[r] is owner[n] and _same_or_apart(a, n) for r, a in readers.get(st, ())):
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


def _roll_reason(lines: dict, node: Node, src: Node, k: Kernel) -> str:
    return (f"np.roll{_line(lines, node)} reads other elements of `{src.op}`{_line(lines, src)}, which {k.name} "
            f"computes: written to memory first")


def _complex(node: Node) -> bool:
    """Does ``node`` compute on complex values (its own, or its operands')?"""
    return node.dtype is not None and node.dtype.kind == "c" or any(
        a.dtype is not None and a.dtype.kind == "c" for a in node.args)


def _seq(k: Kernel) -> int:
    return k.seq


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

