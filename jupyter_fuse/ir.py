"""The IR: one immutable, hash-consed node type.

Every array value a traced cell computes is a :class:`Node`. Equal nodes are
the same object (``Node(...) is Node(...)`` when op, args, params, dtype and
shape agree), so common subexpressions are shared for free and a node can be a
dict key in O(1).

A node is one of three kinds (``Node.kind``):

* ``"input"`` — data that exists before the kernel runs: an array read from
  the namespace, an eager result, a random draw. ``params[0]`` is its slot in
  the session's input list; the data itself is never in the IR, so two runs on
  different arrays of the same kind give the same graph.
  A ``"ref"`` is a value the cell computed at an earlier evaluation: arrays
  holding it start their new graphs there, so old graphs can be freed.
* ``"view"`` — a strided window onto its single argument (slice, transpose,
  reshape-as-view, broadcast, new axis). Views compute nothing; every view
  carries ``layout = (offset, strides)`` in elements relative to the *storage*
  node beneath it, which is what a fused kernel indexes with.
* ``"op"`` — anything that computes: elementwise, reductions, library calls.

``format_graph`` prints a graph like a jaxpr, one node a line.
"""

from __future__ import annotations

import itertools
import math
import weakref
from typing import Any, Iterable

import numpy as np

Shape = tuple[int, ...]

_VIEW_OPS = frozenset({"view"})
_INPUT_OPS = frozenset({"input", "const", "ref"})


class Node:
    """One value in the traced graph. Build with ``Node.make``; never mutate."""

    # Hash and equality are object identity (C-level, no Python call per dict lookup): hash-consing
    # makes equal nodes the same object.
    __slots__ = ("op", "args", "params", "dtype", "shape", "layout", "kind", "_base", "serial", "__weakref__")
    _table: "dict[tuple, _Ref]" = {}  # (op, args, params, dtype, shape, layout) -> a weak reference to the node
    _serials = itertools.count()

    op: str
    args: tuple["Node", ...]
    params: tuple
    dtype: np.dtype | None  # None for a weak Python scalar constant
    shape: Shape
    layout: tuple[int, tuple[int, ...]] | None

    @classmethod
    def make(
        cls,
        op: str,
        args: Iterable["Node"] = (),
        params: tuple = (),
        dtype: np.dtype | None = None,
        shape: Shape = (),
        layout: tuple[int, tuple[int, ...]] | None = None,
    ) -> "Node":
        if type(args) is not tuple:
            args = tuple(args)
        key = (op, args, params, dtype, shape, layout)
        try:
            ref = cls._table.get(key)
        except TypeError:  # an unhashable param: do not share, still correct
            ref, key = None, None
        if ref is not None:
            hit = ref()
            if hit is not None:
                # made again: it counts as made now (``fuse.partition`` places nodes in the order they were
                # made; a loop's `h * h * f[i, j]`, first made in its first sweep, belongs in each later
                # sweep beside the update that reads it, not at that sweep's start, in a kernel of its own)
                hit.serial = next(cls._serials)
                return hit
        node = object.__new__(cls)
        node.op, node.args, node.params = op, args, params
        node.dtype, node.shape, node.layout = dtype, shape, layout
        # what a node is, and for a view the storage beneath it, are asked for every node at every
        # step of planning: decided once here ("input", "view" or "op": the module docstring)
        node.kind = "input" if op in _INPUT_OPS else "view" if op in _VIEW_OPS else "op"
        node._base = (args[0]._base or args[0]) if op == "view" else None
        # creation order (the last time it was made): a node references nodes made before it, except where
        # one of them was made again since (``trace._forwarded`` stops at older ones, ``fuse.partition`` orders by it)
        node.serial = next(cls._serials)
        if key is not None:
            ref = _Ref(node, _forget)
            ref.key = key
            cls._table[key] = ref
        return node

    def __reduce__(self):  # nodes pickle by value and re-intern on load
        return (Node.make, (self.op, self.args, self.params, self.dtype, self.shape, self.layout))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # (exact Python ints; np.prod costs microseconds)

    @property
    def nbytes(self) -> int:
        return 0 if self.dtype is None else self.size * self.dtype.itemsize

    def storage(self) -> "Node":
        """The non-view node whose memory this node reads."""
        return self._base or self

    def __repr__(self) -> str:
        return f"Node({self.op}{list(self.params) if self.params else ''}, {describe(self)})"


def describe(node: Node) -> str:
    """`f64[3,4]`-style type string."""
    if node.dtype is None:
        return "weak"
    return f"{node.dtype.str[1:]}[{','.join(map(str, node.shape))}]"


class _Ref(weakref.ref):
    """A weak reference to a node that knows the node's key in ``Node._table`` (weakref.WeakValueDictionary
    does the same in Python code per insertion and per lookup: a microsecond of every traced op)."""
    __slots__ = ("key",)


def _forget(ref: _Ref, table: dict = Node._table) -> None:
    """A node died: its entry goes (unless the key has been given to a newer node since)."""
    if table.get(ref.key) is ref:
        del table[ref.key]


def toposort(roots: Iterable[Node], stop: "set[Node] | dict | None" = None, views: bool = False,
             budget: int | None = None) -> list[Node]:
    """Nodes reachable from ``roots`` in dependency order (iterative DFS).

    Nodes in ``stop`` (already computed values) are included but not expanded; with ``views``,
    views in ``stop`` are expanded all the same (a kernel reads a view through its storage).
    Past ``budget`` nodes seen, no node is expanded (a printout of a huge graph's beginning).
    """
    order: list[Node] = []
    seen: set[Node] = set()
    stack: list[tuple[Node, bool]] = [(r, False) for r in reversed(list(roots))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        if (stop is None or node not in stop or views and node.op == "view") and (
                budget is None or len(seen) < budget):
            for a in reversed(node.args):
                if a not in seen:
                    stack.append((a, False))
    return order


MAX_LINES = 400  # a printed graph stops here: a long loop's graph is for the dashboard's grouping


def format_graph(roots: Iterable[Node], names: dict[Node, str] | None = None, limit: int = MAX_LINES) -> str:
    """Print a graph like a jaxpr::

        a:f64[1000] = input[0]
        b:f64[1000] = sin a
        c:f64[1000] = mul b b

    At most ``limit`` nodes, the first ones the roots need (then a line saying how it stops).
    """
    names = dict(names or {})
    lines = []
    order = toposort(roots, budget=limit)
    for i, node in enumerate(order[:limit]):
        names.setdefault(node, _name(i))
        params = " ".join(map(_short, node.params))
        args = " ".join(names.get(a, "...") for a in node.args)
        head = node.op + (f"[{params}]" if params else "")
        lines.append(f"{names[node]}:{describe(node)} = {head} {args}".rstrip())
    if len(order) >= limit:
        lines.append(f"... (the graph goes on; the first {limit} nodes are shown)")
    return "\n".join(lines)


def describe_params(node: Node) -> str:
    """The node's parameters in words, for tooltips (``axis=(0,) keepdims=False``)."""
    if node.op == "input":
        return f"input slot {node.params[0]}"
    if node.op == "ref":
        return "a value computed earlier in the cell"
    if node.op == "const":
        return f"constant {node.params[1]!r}"
    if node.op == "view":
        # an index in full: the dashboard writes it back as the user did (`u[1:-1, ::2]`)
        return " then ".join(f"{kind}{repr(p) if kind == 'getitem' else _short(p)}" for kind, p in node.params)
    parts = []
    for p in node.params:
        if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
            if p[1] is not None:
                parts.append(f"{p[0]}={_short(p[1])}")
        else:
            parts.append(_short(p))
    return " ".join(parts)


def _name(i: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = letters[r] + out
    return out


def _short(p: Any) -> str:
    text = repr(p)
    return text if len(text) <= 40 else text[:37] + "..."
