"""One run of a cell: its inputs, computed values, events and the active trace.

The session is the only mutable state of a trace. ``bind`` is the single
funnel every traced operation goes through; ``evaluate`` is the single place a
graph is planned and executed (at a sync, and at the end of the cell).
"""

from __future__ import annotations

import contextlib
import math
import sys
import weakref
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from . import fperrors, fuse, plans
from .fperrors import errors_raise, pending_errstate
from .ir import Node, describe_params, toposort
from .report import Report

if TYPE_CHECKING:  # pragma: no cover
    from .backends import Backend
    from .trace import LazyArray

_ACTIVE: "Session | None" = None


def active() -> "Session | None":
    return _ACTIVE


_DTYPE_NAMES: dict[Any, str] = {}  # (str() of a dtype costs microseconds)

# A graph no Python read has forced is evaluated once it holds this many ops, at the start of a
# loop iteration where it can: a 100,000-iteration loop keeps its memory flat, and its chunks have
# one structure (one plan, one set of kernels) however long it runs.
BOUND = 1000
GC_AT = 256  # values held before the first sweep for unreachable ones
MAX_GRAPH_NODES = 2000  # nodes the report's graph records (a long loop's first iterations)
TAP_SIZE = 16  # elements of a copy of an input's that a session keeps (``_tap``)
MAX_PRINTED = 400  # nodes of evaluated graphs kept for the printed graph (ir.format_graph)


def _read_later(live: list[Node], inside: set[Node], values: dict, taken: set[Node]) -> list[Node]:
    """Values this evaluation computes on the way that a live array's pending graph reads beyond it (the
    weights of a training loop whose loss a ``float()`` reads every 10 epochs: the next update reads
    them). Stored now, the next evaluation starts there; not stored, it recomputes them, and all that
    made them, from the last stored values: every sync a longer graph than the last."""
    found: dict[Node, None] = {}
    seen: set[Node] = set()
    stack = [n for n in live if n not in inside and n not in values]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for a in n.args:
            if a in values:
                continue
            if a in inside:
                a = a.storage()
                if a.kind == "op" and a not in taken and a not in values:
                    found[a] = None
            elif a not in seen:
                stack.append(a)
    return list(found)


class Session:
    def __init__(self, backend: "Backend", filename: str, fuse: bool = True) -> None:
        self.backend = backend
        self.filename = filename  # the cell's code filename: how we find user lines
        self.fuse = fuse
        self.fuses = fuse and backend.fuses  # plans fuse (else: one kernel per op, as NumPy runs them)
        self.inputs: dict[int, Any] = {}  # slot -> array read from outside (the user's own storage)
        self.values: dict[Node, Any] = {}  # node -> concrete value, for computed nodes
        self.lines: dict[Node, list[int]] = {}  # provenance: cell lines that built a node
        # where in the cell's code (line, bytecode offset) an op was first made: two ops made at one site
        # are one op of two iterations (or calls), which the partitioner keeps in kernels of their own
        self.sites: dict[Node, tuple[int, int]] = {}
        self.buffers: dict[int, Any] = {}  # id(root ndarray) -> Buffer, so aliases share one
        self.wrapped: dict[int, Any] = {}  # id(ndarray) -> its LazyArray, so `a is b` survives
        self.made: Any = weakref.WeakValueDictionary()  # the same for arrays eager calls made
        self.made_buffers: Any = weakref.WeakValueDictionary()
        self.keepalive: list[Any] = []  # objects whose ids are keys above
        self.report = Report(backend=backend.name)
        self._kernel_count = 0
        self.namespace: dict | None = None  # the cell's namespace, set by the runner
        self.synced: dict[Node, str] = {}  # values computed at a sync -> where
        self._sync: str | None = None
        self._compile_seen = 0.0
        self.implicit: set[Node] = set()  # nodes that are part of another eager op (see fuse.partition)
        self.roots: list[Node] = []  # evaluated values, for the printed graph (while MAX_PRINTED allows)
        self._printed = 0
        self._node_ids: dict[Node, int] = {}
        self.eager_results: dict[int, str] = {}  # id(array a NumPy fallback returned) -> what ran
        self.tape: Any = None  # the plan cache's recorder (cache.Tape) while a cached run traces
        # every buffer of the cell by id, dropped when only these dicts hold it: what a flush
        # evaluates and what keeps values alive. ``bufs``: those a traced op wrote since their value was
        # last computed; ``settled``: those holding a computed value, which only a sweep (``_collect``)
        # reads (a loop appending a lazy scalar each step holds thousands: every sync scanned them all)
        self.bufs: dict[int, Any] = {}
        self.settled: dict[int, Any] = {}
        self.pending = 0  # ops traced since the graph was last flushed
        # NumPy's error state the pending ops were made under (np.errstate: ``_switched``), and where it
        # changed while ops were pending: (the values pending then, the old modes)
        self._state, self._modes = fperrors.state(), fperrors.modes()
        self._switch: tuple[list[Node], dict] | None = None
        self._under: dict | None = None  # the modes ``_compute_switched`` computes under
        # pending assignments (setitem nodes) -> the traced ops that read them, directly or through a view
        # (None: another array holds one): whether a later write may take over a region's last write
        # (trace._forwarded)
        self.readers: dict[Node, list[Node | None]] = {}
        self._spot: tuple | None = None  # (line, bytecode offset) of each cell frame a flush waits for (see hold)
        self._retarget = False
        # the ops between arrivals at the spot (an iteration of the loop it is in) -> how many iterations
        # of this chunk took that many, and the op count at the last arrival and the gap that ended there
        self._gaps: dict[int, int] = {}
        self._arrival = (0, 0)
        self._at_spot = False
        self._lasti = -1  # the bytecode offset line() found the cell's frame at
        self._line: int | None = None  # the cell line line() found last
        self._slots = 0
        self._serial = 0
        self._named: dict[int, Any] = {}  # id(template) -> template, once its kernels are named here
        self._eager_names: dict[tuple, str] = {}
        self._gc_at = GC_AT  # values held before unreachable ones are dropped
        self._depth = 0  # how deep below line() the cell's frame was last found
        self._consts: dict[tuple, Node] = {}
        self.classes: list[type] = []  # classes the cell's `class` statements made
        self.generators: dict[int, Any] = {}  # id(random generator) -> its LazyGenerator (lazyrandom)
        self.generator_states: list[tuple[Any, Any]] = []  # (a generator read from outside, its state then)
        self.printed = False  # the cell printed (``capture``): it cannot be run again (``abandon``)
        self.sync_events = 0
        # what Python made the session do besides tracing ops (evaluations, syncs, calls outside the trace, new
        # inputs): a fast-forwarded loop's units must do none of it (``loops``)
        self.events = 0
        self.keep_eval = False  # keep the next evaluation's (template, leaves, outs, refs) in ``last_eval``
        self.last_eval: tuple | None = None
        self.watch: Any = None  # ``abandon.Watch``, where the runner may abandon this run

    def close(self) -> None:
        """The cell is over: drop every value now, not at the next garbage collection (lazy
        arrays and the session refer to each other), so last run's arrays die with their names."""
        for big in (self.values, self.wrapped, self.buffers, self.made, self.made_buffers, self.lines, self.sites, self.bufs, self.settled,
                    self.inputs, self.generators, self.readers):
            big.clear()
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
        """The cell line executing now (innermost frame of the cell's code).

        Asked for every traced op: the depth at which the cell's frame was found last time is tried
        first (a loop calls in through the same path), checking that the frame just inside it is
        ours; otherwise the stack is walked (each frame object made on the way costs)."""
        filename, d = self.filename, self._depth
        if d:
            try:
                inner = sys._getframe(d - 1)  # (the frame just inside the cell's: one lookup for both)
            except ValueError:
                inner = None
            frame = inner.f_back if inner is not None else None
            if frame is not None and frame.f_code.co_filename == filename and inner.f_code.co_filename != filename:
                self._lasti = frame.f_lasti
                return frame.f_lineno
        frame, d = sys._getframe(1), 1
        while frame is not None:
            if frame.f_code.co_filename == filename:
                self._depth, self._lasti = d, frame.f_lasti
                return frame.f_lineno
            frame, d = frame.f_back, d + 1
        return None

    # -- graph building ------------------------------------------------------
    def bind(self, op: str, args: tuple[Node, ...], params: tuple, dtype: np.dtype | None,
             shape: tuple[int, ...], layout=None, count: bool = True) -> Node:
        """Add one node to the graph. Every traced operation ends up here."""
        if fperrors.state() is not self._state and not fperrors.internal():
            self._switched()
        node = Node.make(op, args, params, dtype, shape, layout)
        if self.readers:
            self._reads(node)
        if count:
            self.report.ops += 1
        elif node.kind == "op":
            self.implicit.add(node)
        self.pending += 1
        line = self._line = self.line()
        if line is not None:
            lines = self.lines.get(node)
            if lines is None:
                self.lines[node] = [line]
                self.sites[node] = (line, self._lasti)
            elif line not in lines:
                lines.append(line)
        return node

    def _switched(self) -> None:
        """NumPy's error state changed (an ``np.errstate`` block began or ended) since the last op: NumPy ran
        the ops pending now under the old state (warning, or not, where they ran), so they are computed under
        it, once the op being traced is whole (``hold``; or at a sync before that)."""
        if self.pending and self._switch is None:
            # (the nodes themselves: an op made again in the new state is the same node, computed once, under
            # the state it was first made in, as NumPy warned at that first line)
            self._switch = ([b.node for b in self._live_buffers() if b.node not in self.values], self._modes)
        self._state, self._modes = fperrors.state(), fperrors.modes()

    def _compute_switched(self) -> None:
        """Compute the values pending from before the error state changed, under the old state."""
        nodes, modes = self._switch
        self._switch = None
        old = [n for n in nodes if n not in self.values]
        if old:
            self._under = modes
            try:
                self.evaluate(old)
            finally:
                self._under = None

    def _made_under(self) -> Any:
        """The error state pending values are computed under: the one their ops were made under (a block
        that ended since: ``with np.errstate(invalid='ignore'): y = a / b``, then ``float(y.sum())``)."""
        if self._under is not None:
            return np.errstate(**self._under)
        if fperrors.state() is self._state or fperrors.internal():
            return contextlib.nullcontext()
        return np.errstate(**self._modes)

    def _reads(self, node: Node) -> None:
        """``node`` reads the pending assignments among its arguments (directly or through a view)."""
        readers = self.readers
        for a in node.args:
            a = a._base or a
            if a in readers:
                readers[a].append(node)

    def remake(self, node: Node, args: tuple[Node, ...]) -> Node:
        """``node`` with other arguments (the tracer's forwarding, trace._forwarded): the lines that
        made it, its place in an eager op and its reads are the old node's."""
        new = Node.make(node.op, args, node.params, node.dtype, node.shape, node.layout)
        self.lines.setdefault(new, self.lines.get(node, []))
        if node in self.sites:
            self.sites.setdefault(new, self.sites[node])
        if node in self.implicit:
            self.implicit.add(new)
        if self.readers:
            self._reads(new)
        return new

    def hold(self, buf: Any) -> None:
        """A buffer whose contents are now a traced node (a new array, or a write into one): a
        flush computes it while it lives. Flushes happen here, between whole operations."""
        self.bufs[id(buf)] = buf
        self.settled.pop(id(buf), None)  # (in one dict only: its refcount tells when nothing else holds it)
        if self._switch is not None:
            self._compute_switched()
        spot = self._spot
        # (the innermost point first, from the bind just made: the whole call path is walked only where it matches)
        # (an arrival is the first of the holds made there in a row: `np.array([a, b])` holds twice at one point)
        at = spot is not None and (self._line, self._lasti) == spot[0] and self._where() == spot
        arrived, self._at_spot = at and not self._at_spot, at
        if arrived:
            gap = self.report.ops - self._arrival[0]
            self._arrival = (self.report.ops, gap)
            self._gaps[gap] = self._gaps.get(gap, 0) + 1
        if self.pending > BOUND:  # (module global: tests lower it)
            # flush at the point of the cell's code (line and bytecode offset) the current chunk
            # started after: every chunk of a loop then covers the same stretch of its body, so
            # all have one structure (one plan, one set of kernels)
            # (a flush ends a chunk at a store, a statement's end, where there is one: an expression
            # cut in two would give the chunks' first and last kernels another shape than the rest,
            # and a replay's compiled loop would stop at every chunk)
            if arrived and self._aligned() or self.pending > 4 * BOUND:
                self.flush()
                self._spot, self._retarget = spot if arrived else self._where(), False  # the next chunk ends here too
                self._gaps, self._arrival = {}, (self.report.ops, 0)
            elif not self._retarget and (self.pending > 2 * BOUND and buf.node.op == "setitem"
                                         or self.pending > 3 * BOUND):
                # the point did not come back (the chunk started outside the loop): aim at one inside it
                self._spot, self._retarget = self._where(), True
        elif self._spot is None and buf.node.op == "setitem":
            self._spot = self._where()

    def _aligned(self) -> bool:
        """May a flush end the chunk at this arrival? Where the loop's iterations all took as many ops, at
        any; where some took more (a row kept every tenth step, ``if step % 10 == 0``: a loop around the
        loop, in effect), right after one of those, unless the chunk grew past twice the bound: every
        chunk then starts at the same step of that outer period, so the chunks have one structure and a
        replay's compiled program rolls them (a chunk cut at another step each time rolled nothing)."""
        gaps = self._gaps
        if len(gaps) < 2 or self.pending > 2 * BOUND:
            return True
        usual = max(gaps, key=gaps.__getitem__)
        return self._arrival[1] != usual

    def _where(self) -> tuple:
        """(line, bytecode offset) of each frame of the cell's code on the stack, innermost first: a point
        inside a function the cell defines is told apart by where it was called from (an RK4 step calls
        ``f`` four times: a flush there must end every chunk after the same one of the four)."""
        filename, out = self.filename, []
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            if code.co_filename == filename:
                out.append((frame.f_lineno, frame.f_lasti))
                if code.co_name == "<module>":  # the cell's own body: no frame of its code is above it (the
                    break  # rest of the stack is the runner's and IPython's: asked once per loop iteration)
            frame = frame.f_back
        return tuple(out)

    def flush(self) -> None:
        """Evaluate every live array's pending value (the graph outgrew ``BOUND``)."""
        self.pending = 0
        live = [b.node for b in self._live_buffers() if b.node not in self.values]
        if live:
            self.evaluate(live)
            self._collect()  # every live array holds a leaf now: the graphs behind them can go

    def _live_buffers(self, bufs: dict[int, Any] | None = None) -> list[Any]:
        """Buffers something besides this session holds (a lazy array, a view of one) among ``bufs``
        (by default those a traced op wrote since their value was last computed)."""
        if bufs is None:
            bufs = self.bufs
        dead = [k for k in bufs if sys.getrefcount(bufs[k]) <= 2]  # held by the dict only (+ the argument)
        for k in dead:
            del bufs[k]
        return list(bufs.values())

    def add_input(self, value: Any, origin: bool = True) -> Node:
        """A concrete array becomes an input node (a kernel argument). ``origin``: the storage of an
        array Python holds, kept for the cell's whole run; other inputs (storage an eager write made)
        live in ``values`` only, as long as a held buffer reads them."""
        slot = self._slots
        self._slots += 1
        self.events += 1
        if origin:
            self.inputs[slot] = value
        layout = (0, tuple(value.strides))
        node = Node.make("input", (), (slot,), value.dtype, tuple(value.shape), layout)
        self.values[node] = value
        if self.tape is not None and origin:  # (the eager call that made other storage records it)
            self.tape.on_input(node, value)
        return node

    def const(self, value: Any) -> Node:
        """A Python or NumPy scalar operand, baked into the graph by value."""
        t = type(value)
        # a loop multiplies by the same 0.5 every iteration: one node per (type, value) and cell
        # (zeros by sign too: 0.0 == -0.0, and they differ in a minimum or a division)
        key = (t, value, value == 0 and math.copysign(1.0, value)) if t is float else (t, value)
        node = self._consts.get(key) if t in (float, int, bool) else None
        if node is not None:
            return node
        if isinstance(value, np.generic):
            # (repr: np.float64(-0.0) and np.float64(0.0) compare equal)
            node = Node.make("const", (), (type(value).__name__, value.item(), repr(value)), value.dtype, ())
        else:
            # repr keeps 0.0 and -0.0 apart (they compare equal)
            node = Node.make("const", (), (type(value).__name__, value, repr(value)), None, ())
        self.values[node] = value
        if self.tape is not None:
            self.tape.on_const(node, value)
        if t in (float, int, bool):
            self._consts[key] = node
        return node

    # -- execution -----------------------------------------------------------
    def evaluate(self, nodes: list[Node], final: bool = False, errors: bool = False) -> list[Any]:
        """Compute ``nodes`` (and only what they need); values are memoized.

        ``final``: the end of the cell, so nothing beyond ``nodes`` will be read again.
        ``errors``: under np.errstate(...='raise'), the op that made ``nodes`` raises now (NumPy raises where
        an op runs: other pending values were made outside it and never raise; see fperrors.pending_errstate).
        """
        if self._switch is not None:  # (a sync before the op that changed the error state was held)
            self._compute_switched()
        values = self.values
        self.readers.clear()  # (what is pending may be computed now: no write takes over an earlier one)
        missing = [n for n in dict.fromkeys(nodes) if n not in values]
        if missing:
            self.events += 1
            t0 = time.perf_counter()
            frame = toposort(missing, stop=values, views=True)
            live: list[Node] | None = None  # (the live arrays' values, where asked)
            if not final and not errors and not errors_raise() and self._under is None:  # live arrays this computes on the way, or
                # one op past it, are stored too (not under np.errstate(...='raise'): an op raises where it runs): a sync
                # every step of a loop would otherwise recompute the loop's state from the last flush each time
                # (not the values of another error state: ``_compute_switched``)
                inside = set(frame)
                live = list(dict.fromkeys(b.node for b in self._live_buffers()))
                extra = [n for n in live if n not in values
                         and n not in missing and (n in inside or n.kind == "op" and n.args and all(
                             a in inside or a in values or a.kind != "op" for a in n.args))]
                extra += _read_later(live, inside, values, set(missing) | set(extra))
                extra += [n for n in frame if n.op == "copy" and n not in values and _tap(n, self.inputs)
                          and n not in missing and n not in extra]  # (kept: ``_tap``)
                if extra:
                    missing += extra
                    frame = toposort(missing, stop=values, views=True)
            if self._printed < MAX_PRINTED:  # the printed graph: the cell's first evaluated values only
                self.roots.extend(missing)  # (holding them holds their whole graphs)
                self._printed += len(frame)
            tmpl, fresh = self._template(frame, missing, final)
            leaves = [frame[i] for i in tmpl.leaves]
            outs = [frame[i] for i in tmpl.outs]
            if id(tmpl) not in self._named:
                self._name(tmpl, frame)
            if final:
                self._note_bound(tmpl, frame)
            t1 = time.perf_counter()
            self.report.times["plan"] += t1 - t0
            made = self.run_plan(tmpl, leaves, outs, errors)
            self.report.times["run"] += time.perf_counter() - t1 - self._compile_delta()
            if live is not None and all(n in values for n in live):
                # nothing is pending any more: the bound counts afresh from this sync. A loop's sync each
                # step (a residual's float) then starts every chunk at the same point of the loop, not
                # wherever ``BOUND`` ops since the last flush fell: one structure, one plan (sor_poisson:
                # 93 partitions of 112 chunks before)
                self.pending = 0
            if self._sync is not None:  # values this sync stored: later kernels read them from memory
                for n in outs:
                    self.synced[n] = self._sync
            result = [values[n] for n in nodes]
            refs = self._rebase(set(outs))
            if self.keep_eval:
                self.last_eval = (tmpl, leaves, outs, refs)
            if self.tape is not None:
                self.tape.on_eval(tmpl, leaves, [(n, refs.get(n)) for n in outs], made)
            self._forget(frame, refs)
            if len(values) > self._gc_at:
                self._collect()
        else:
            result = [values[n] for n in nodes]
        self._sync = None
        return result

    def run_plan(self, tmpl: Any, leaves: list[Node], outs: list[Node], errors: bool = False) -> dict:
        """Run ``tmpl`` on computed ``leaves`` (its kept values under ``outs``), under the error state the pending
        ops were made in; returns those modes (what a replay runs the plan under)."""
        with self._made_under(), pending_errstate(errors):
            made = fperrors.modes()
            tmpl.run(self.backend, leaves, outs, self.values, self.report)
        return made

    def _template(self, frame: list[Node], missing: list[Node], final: bool) -> tuple[Any, bool]:
        """The plan for this graph: made before for a graph of this structure, or made now."""
        keep = self._keep()
        backend = self.backend
        fuses = self.fuses
        staged = getattr(backend, "staged", False)
        options = (backend.name, type(backend).__name__, fuses, staged, final)
        k, where = plans.key(frame, self.values, missing, keep, options, self.lines, self.implicit, self.synced)
        tmpl = plans.lookup(k)
        if tmpl is not None:
            placed = tmpl.at(frame, where)  # (its views may lie elsewhere: traj[i] = state, another i)
            if placed is not None:
                return placed, False
        plan = fuse.partition(missing, self.values, keep, fuse=fuses, lines=self.lines, sites=self.sites,
                              implicit=self.implicit,
                              supports=backend.supports, synced=self.synced, staged=staged,
                              keep_reductions=not final)
        tmpl = plans.Template(plan, frame, self.values, where)
        plans.store(k, tmpl)
        return tmpl, True

    def _note_bound(self, tmpl: Any, frame: list[Node]) -> None:
        """The report's ``bound_writes``: values the cell's end writes to memory only because a name of the
        cell still holds them (``dx`` of ``dx = ...; y = (dx * inv).sum(axis=1)``): nothing else needs
        them in memory, so ``del dx`` would keep them inside their kernel (issue 16's teaching point)."""
        from .trace import LazyArray

        inner = tmpl.kept_inside()
        if self.namespace is None or not inner:
            return
        held: dict[Node, list[str]] = {}
        for name, v in dict.items(self.namespace):
            if type(v) is LazyArray and v._buf.origin is None:  # (an array from outside is written back anyway)
                held.setdefault(v._current(), []).append(name)
        for pos, k in inner:
            names = held.get(frame[pos])
            if names:
                kernel = tmpl.plan.kernels[k]
                self.report.bound_writes.append({"names": names, "kernel": kernel.name,
                                                 "bytes": frame[pos].nbytes, "lines": self.lines.get(frame[pos], [])})

    def _name(self, tmpl: Any, frame: list[Node]) -> None:
        """The template's first run in this cell: its kernels get this cell's names, its cuts and
        graph go into the report (later runs of it only count launches)."""
        self._named[id(tmpl)] = tmpl  # (held, so the id stays this template's)
        kernels = tmpl.plan.kernels
        for k in kernels:
            k.name = self.next_kernel_name()
        for b in tmpl.breaks:
            frm = kernels[b["from"]].name if isinstance(b["from"], int) else b["from"]
            self.report.breaks.append({**b, "from": frm, "to": kernels[b["to"]].name})
        if len(self.report.nodes) < MAX_GRAPH_NODES:
            mine = {node: i for i, node in enumerate(tmpl.frame)}
            for k in kernels:
                for node in k.nodes:
                    if len(self.report.nodes) >= MAX_GRAPH_NODES:
                        self.report.graph_truncated = True
                        return
                    self._graph_node(frame[mine[node]], k.name)

    def _rebase(self, outs: set[Node]) -> dict[Node, Node]:
        """Buffers holding a value just computed (``outs``) now hold a leaf for it: graphs traced
        later start there, and the graph that computed it can be freed (a long loop's memory stays
        flat). Only those: the tape records a leaf with the plan that computed its value
        (``Tape.on_eval``), and a replay must find every leaf a later step reads."""
        values, bufs, settled = self.values, self.bufs, self.settled
        made: dict[Node, Node] = {}
        for b in self._live_buffers():
            node = b.node
            if node in outs and node.kind == "op":
                ref = made.get(node)
                if ref is None:
                    ref = made[node] = self.leaf_for(node)
                    values[ref] = values[node]
                    if node in self.synced:
                        self.synced[ref] = self.synced[node]
                b.node = ref
            if b.node in values:  # computed: no flush or sync needs it until a traced op writes it again
                settled[id(b)] = bufs.pop(id(b))
        return made

    def leaf_for(self, node: Node) -> Node:
        """A new leaf (a ``ref``) of ``node``'s type, for its value once computed."""
        self._serial += 1  # (never reused: equal refs are one node)
        return Node.make("ref", (), (self._serial,), node.dtype, node.shape, node.layout)  # (a kept Fortran order too)

    def _forget(self, frame: list[Node], refs: dict[Node, Node]) -> None:
        """What the session kept about a graph it just computed: its nodes' lines and marks are
        needed no more (later graphs start from leaves), and holding them would hold the nodes."""
        lines, sites, implicit, synced = self.lines, self.sites, self.implicit, self.synced
        for n in frame:
            if n.kind != "input":
                lines.pop(n, None)
                sites.pop(n, None)
                implicit.discard(n)
                if n in refs:
                    synced.pop(n, None)

    def _collect(self) -> None:
        """Drop values no live array can read any more (nor the nodes' lines and marks)."""
        values = self.values
        live: set[Node] = set()
        stack = [b.node for b in self._live_buffers()] + [b.node for b in self._live_buffers(self.settled)]
        while stack:
            n = stack.pop()
            if n not in live:
                live.add(n)
                if n not in values or n.op == "view":  # (a kernel reads a view through its storage, even
                    stack.extend(n.args)  # where the view's own value is stored: toposort(views=True))
        inputs = self.inputs
        self.values = {n: v for n, v in values.items()
                       if n in live or n.op == "const" or n.op == "input" and n.params[0] in inputs
                       or n.op == "copy" and _tap(n, inputs)}
        self.lines = {n: v for n, v in self.lines.items() if n in live}
        self.sites = {n: v for n, v in self.sites.items() if n in live}
        self.synced = {n: v for n, v in self.synced.items() if n in live}
        self.implicit = {n for n in self.implicit if n in live}
        self._gc_at = max(GC_AT, 2 * len(self.values))

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

    def next_kernel_name(self) -> str:
        self._kernel_count += 1
        return f"k{self._kernel_count - 1}"

    def _graph_node(self, node: Node, kernel: str | None, leaf: bool = False) -> int:
        """Record a node for ``report.nodes`` (ids are per cell) and return its id. A value computed
        before (``leaf``) is recorded without what computed it: that was recorded when it ran."""
        nid = self._node_ids.get(node)
        if nid is None:
            if leaf or node in self.values and node.kind != "view":
                args: list[int] = []
            else:
                args = [self._graph_node(a, None, leaf=a in self.values and a.kind != "view") for a in node.args]
            nid = self._node_ids[node] = len(self._node_ids)
            dtype = _DTYPE_NAMES.get(node.dtype)
            if dtype is None:
                dtype = _DTYPE_NAMES[node.dtype] = str(node.dtype)
            self.report.nodes.append({
                "id": nid, "op": node.op, "kind": node.kind, "dtype": dtype, "shape": list(node.shape),
                "args": args, "lines": self.lines.get(node, []), "kernel": kernel,
                "params": describe_params(node),
            })
        elif kernel is not None:
            self.report.nodes[nid]["kernel"] = kernel
        return nid

    def eager_name(self, what: str, line: int | None) -> str:
        """The kernel name of a call run outside the trace: one per call site (a loop repeats it)."""
        name = self._eager_names.get((what, line))
        if name is None:
            name = self._eager_names[(what, line)] = self.next_kernel_name()
        return name

    def record_sync(self, cause: str) -> None:
        self.sync_events += 1
        self.events += 1
        if self.watch is not None:
            self.watch(self)
        line = self.line()
        self.report.counted("syncs", {"line": line, "cause": cause})
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
        self.report.counted("fallbacks", {"line": self.line(), "op": name, "reason": (
            f"{name} is {kind}, which is not traced: what the cell does with it runs as plain NumPy")})

    def record_fallback(self, what: str, reason: str) -> None:
        """A call that runs outside the trace (its launch is counted when it ran: ``Report.launched``)."""
        self.report.counted("fallbacks", {"line": self.line(), "op": what, "reason": reason})
        self.report.ops += 1


def _tap(n: Node, inputs: Any) -> bool:
    """A few elements copied out of an input (``w[di + 1, dj + 1]``: a stencil's tap, a coefficient): the cell
    makes the same node each time it reads them (hash-consed), so its value is kept: a loop's later graphs
    read it as a leaf, not copy it again in a kernel of its own each step (a unit run ahead, ``loops.py``,
    would copy it every unit)."""
    v = n.args[0]
    return n.size <= TAP_SIZE and v.op == "view" and v._base.op == "input" and v._base.params[0] in inputs
