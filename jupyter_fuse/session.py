"""One run of a cell: its inputs, computed values, events and the active trace.

The session is the only mutable state of a trace. ``bind`` is the single
funnel every traced operation goes through; ``evaluate`` is the single place a
graph is planned and executed (at a sync, and at the end of the cell).
"""

from __future__ import annotations

import sys
import time
import weakref
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from .ir import Node, describe_params
from .report import Report

if TYPE_CHECKING:  # pragma: no cover
    from .backends import Backend
    from .trace import LazyArray

_ACTIVE: "Session | None" = None


def active() -> "Session | None":
    return _ACTIVE


class Session:
    def __init__(self, backend: "Backend", filename: str, fuse: bool = True) -> None:
        self.backend = backend
        self.filename = filename  # the cell's code filename: how we find user lines
        self.fuse = fuse
        self.inputs: list[Any] = []  # slot -> concrete array
        self.values: dict[Node, Any] = {}  # node -> concrete value, for computed nodes
        self.lines: dict[Node, list[int]] = {}  # provenance: cell lines that built a node
        self.buffers: dict[int, Any] = {}  # id(root ndarray) -> Buffer, so aliases share one
        self.wrapped: dict[int, Any] = {}  # id(ndarray) -> its LazyArray, so `a is b` survives
        self.keepalive: list[Any] = []  # objects whose ids are keys above
        self.report = Report(backend=backend.name)
        self._kernel_count = 0
        self.namespace: dict | None = None  # the cell's namespace, set by the runner
        self.synced: dict[Node, str] = {}  # values computed at a sync -> where
        self._sync: str | None = None
        self._compile_seen = 0.0
        self.implicit: set[Node] = set()  # nodes that are part of another eager op (see fuse.partition)
        self.roots: list[Node] = []  # every node evaluated, for the printed graph
        self._node_ids: dict[Node, int] = {}
        self.eager_results: dict[int, str] = {}  # id(array a NumPy fallback returned) -> what ran
        self.tape: Any = None  # the plan cache's recorder (cache.Tape) while a cached run traces

    def close(self) -> None:
        """The cell is over: drop every value now, not at the next garbage collection (lazy
        arrays and the session refer to each other), so last run's arrays die with their names."""
        for big in (self.values, self.wrapped, self.buffers, self.lines):
            big.clear()
        self.inputs.clear()
        self.keepalive.clear()
        self.namespace = None

    # -- the active trace --------------------------------------------------
    @contextmanager
    def activate(self) -> Iterator["Session"]:
        global _ACTIVE
        prev, _ACTIVE = _ACTIVE, self
        try:
            yield self
        finally:
            _ACTIVE = prev

    def line(self) -> int | None:
        """The cell line executing now (innermost frame of the cell's code)."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                return frame.f_lineno
            frame = frame.f_back
        return None

    # -- graph building ------------------------------------------------------
    def bind(self, op: str, args: tuple[Node, ...], params: tuple, dtype: np.dtype | None,
             shape: tuple[int, ...], layout=None, count: bool = True) -> Node:
        """Add one node to the graph. Every traced operation ends up here."""
        node = Node.make(op, args, params, dtype, shape, layout)
        if count:
            self.report.ops += 1
        elif node.kind == "op":
            self.implicit.add(node)
        line = self.line()
        if line is not None:
            lines = self.lines.setdefault(node, [])
            if line not in lines:
                lines.append(line)
        return node

    def add_input(self, value: Any) -> Node:
        """A concrete array becomes an input node (a kernel argument)."""
        slot = len(self.inputs)
        self.inputs.append(value)
        layout = (0, tuple(value.strides))
        node = Node.make("input", (), (slot,), value.dtype, tuple(value.shape), layout)
        self.values[node] = value
        if self.tape is not None:
            self.tape.on_input(node, value)
        return node

    def const(self, value: Any) -> Node:
        """A Python or NumPy scalar operand, baked into the graph by value."""
        if isinstance(value, np.generic):
            node = Node.make("const", (), (type(value).__name__, value.item()), value.dtype, ())
            self.values[node] = value
        else:
            # repr keeps 0.0 and -0.0 apart (they compare equal)
            node = Node.make("const", (), (type(value).__name__, value, repr(value)), None, ())
            self.values[node] = value
        if self.tape is not None:
            self.tape.on_const(node, value)
        return node

    # -- execution -----------------------------------------------------------
    def evaluate(self, nodes: list[Node], final: bool = False) -> list[Any]:
        """Compute ``nodes`` (and only what they need); values are memoized.

        ``final``: the end of the cell, so nothing beyond ``nodes`` will be read again.
        """
        missing = [n for n in dict.fromkeys(nodes) if n not in self.values]
        self.roots.extend(missing)
        if missing:
            from . import fuse

            t0 = time.perf_counter()
            plan = fuse.partition(missing, self.values, self._keep(), fuse=self.fuse and self.backend.fuses,
                                  lines=self.lines, implicit=self.implicit, supports=self.backend.supports,
                                  synced=self.synced, staged=getattr(self.backend, "staged", False),
                                  keep_reductions=not final)
            self._name_kernels(plan)
            if self.tape is not None:
                self.tape.on_eval(plan)
            t1 = time.perf_counter()
            self.report.times["plan"] += t1 - t0
            self.backend.execute(plan, self.values, self.report)
            self.report.times["run"] += time.perf_counter() - t1 - self._compile_delta()
            if self._sync is not None:  # values this sync stored: later kernels read them from memory
                for n in [o for k in plan.kernels for o in k.outputs] + missing:
                    if n in self.values:
                        self.synced[n] = self._sync
        self._sync = None
        return [self.values[n] for n in nodes]

    def _keep(self) -> set[Node]:
        """Values worth storing besides the targets: those the cell's names still hold.

        A value held only by a temporary or a function's local is recomputed if
        it is needed again, so nothing dead is ever written to memory.
        """
        if self.namespace is None:
            return set()
        from .trace import LazyArray

        return {v._current() for v in dict.values(self.namespace) if isinstance(v, LazyArray)}

    def _compile_delta(self) -> float:
        """Compile time spent since the last call (backends add to times['compile'])."""
        now = self.report.times["compile"]
        delta, self._compile_seen = now - self._compile_seen, now
        return delta

    def _name_kernels(self, plan: "fuse.Plan") -> None:
        """Unique kernel names in the cell, and the graph the dashboard draws."""
        renames = {}
        for k in plan.kernels:
            renames[k.name] = k.name = self.next_kernel_name()
        for b in plan.breaks:
            b["from"], b["to"] = renames.get(b.get("from"), b.get("from")), renames.get(b.get("to"), b.get("to"))
        for k in plan.kernels:
            for node in k.nodes:
                self._graph_node(node, k.name)

    def next_kernel_name(self) -> str:
        self._kernel_count += 1
        return f"k{self._kernel_count - 1}"

    def _graph_node(self, node: Node, kernel: str | None) -> int:
        """Record a node for ``report.nodes`` (ids are per cell) and return its id."""
        nid = self._node_ids.get(node)
        if nid is None:
            args = [self._graph_node(a, None) for a in node.args]
            nid = self._node_ids[node] = len(self._node_ids)
            self.report.nodes.append({
                "id": nid, "op": node.op, "kind": node.kind, "dtype": str(node.dtype), "shape": list(node.shape),
                "args": args, "lines": self.lines.get(node, []), "kernel": kernel,
                "params": describe_params(node),
            })
        elif kernel is not None:
            self.report.nodes[nid]["kernel"] = kernel
        return nid

    def record_sync(self, cause: str) -> None:
        line = self.line()
        self.report.syncs.append({"line": line, "cause": cause})
        self._sync = f"a sync at line {line} ({cause}) computed this value first"

    # -- where values live (identity for host backends; the cupy backend moves and records) ----
    def name_of(self, lazy: Any) -> str | None:
        """The cell variable holding ``lazy`` right now, if one does: the transfer ledger's name for it
        (None on host backends, which move nothing: no scan of the namespace on their syncs)."""
        if self.namespace is None or getattr(self.backend, "to_host", None) is None:
            return None
        return next((k for k, v in dict.items(self.namespace) if v is lazy), None)

    def to_host(self, value: Any, cause: str, *, name: str | None = None, lazy: Any = None, like: Any = None,
                result: bool = False, fallback: str | None = None) -> Any:
        """A value returning to Python (a sync, a fallback's argument, a result of the cell)."""
        hook = getattr(self.backend, "to_host", None)
        if hook is None:
            return np.asarray(value) if result else value
        if name is None and lazy is not None:
            name = self.name_of(lazy)
        line = self.line()
        where = f" at line {line}" if line is not None and cause.startswith("sync") else ""
        return hook(value, cause + where, name=name, line=line, like=like, result=result, fallback=fallback)

    def apply_chain(self, base: Any, chain: tuple) -> Any:
        hook = getattr(self.backend, "apply_chain", None)
        if hook is None:
            from .views import apply_chain

            return apply_chain(base, chain)
        return hook(base, chain)

    def note_eager(self, result: Any, what: str, reason: str = "") -> None:
        """Arrays a NumPy fallback returned: if a kernel reads one, the ledger says where it came from."""
        what = f"{what} (a random draw)" if "random" in reason else what
        for r in (result if isinstance(result, (tuple, list)) else (result,)):
            if isinstance(r, np.ndarray):
                self.eager_results[id(r)] = what
                self.keepalive.append(r)

    def note_untraced(self, name: str, arr: np.ndarray) -> None:
        """The cell read an array that is not traced (object/string/datetime dtype, np.matrix)."""
        kind = "an np.matrix" if isinstance(arr, np.matrix) else f"an array of dtype {arr.dtype}"
        self.report.fallbacks.append({"line": self.line(), "op": name, "reason": (
            f"{name} is {kind}, which is not traced: what the cell does with it runs as plain NumPy")})

    def record_fallback(self, what: str, reason: str) -> None:
        self.report.fallbacks.append({"line": self.line(), "op": what, "reason": reason})
        self.report.ops += 1
        self.report.kernels += 1
