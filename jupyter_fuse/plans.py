"""Plans made once per structure: the same graph shape planned twice is planned once.

A loop evaluates graphs that differ only in which arrays they start from: the same ops, dtypes,
shapes and lines every iteration. :func:`key` describes a pending graph by its structure (the
values it reads by dtype, shape and layout, never by identity), and a :class:`Template` keeps the
partitioner's plan of the first graph with that key, and whatever a backend prepared for it
(launchers, compiled kernels). Running a template on another graph of the same structure maps
that graph's leaves onto the first graph's nodes, runs the plan there, and maps the values the
plan keeps back: partitioning and rendering cost once per distinct iteration, not per iteration.

Plans are keyed by everything they depend on: the op graph (ops, params, dtypes, shapes, layouts),
which nodes are wanted and which stay alive, the cell lines (reports name them), the constants
(an int's value, which can decide what is rendered; a float by its type: its value is a leaf's, passed
to the kernels at each launch, ``ops.const_key``), which leaves an earlier sync computed (cut reasons
name it), the backend and the partitioner's options.

A view or an assignment is keyed by where it lies relative to the first one in the same memory
(``traj[i] = state`` in a loop: each chunk writes other rows, at the same offsets from its first):
the partitioner reads only those relations (does a read overlap a write?), so a graph that differs
from a template's only in where its views lie gets the template's plan moved onto its own nodes
(``Template.moved``) instead of a partition of its own.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import replace
from typing import Any, Callable

from . import fuse
from .ir import Node
from .ops import const_key

MAX_TEMPLATES = 512  # plans kept (least recently used dropped): a template holds its first graph
# places a template keeps its plan moved to (``Template.at``): a loop over array elements (`u[i, j] += c`
# each inner step, a sweep after sweep) comes back to each place; its kernels are prepared once per place.
# Only small graphs' (a moved plan holds its graph): a chunk of a thousand ops pays its preparing over them,
# and `traj[i] = state` chunks, each at a new place, would keep every chunk's graph
MAX_PLACES = 1024
PLACE_NODES = 64


class Template:
    """One plan, reusable on any graph with its key. ``frame`` is the graph it was made for, in
    dependency order; ``leaves`` are the positions of the values it reads, ``outs`` of the values
    it keeps (targets, live arrays, storages of kept views)."""

    __slots__ = ("plan", "frame", "leaves", "outs", "breaks", "prepared", "inner", "where", "leaf_nodes", "places",
                 "origin")

    def __init__(self, plan: fuse.Plan, frame: list[Node], values: dict, where: tuple = ()) -> None:
        self.plan, self.frame, self.where = plan, frame, where  # where: its views' own places (``key``)
        self.leaves = [i for i, n in enumerate(frame) if n in values]
        self.outs = [i for i, n in enumerate(frame) if n in plan.keep and n not in values]
        # cuts between kernels by kernel index ("sync" for a value a sync computed), so that each
        # cell naming the kernels anew can name the cuts too
        index = {k.name: i for i, k in enumerate(plan.kernels)}
        self.breaks = [{**b, "from": index.get(b["from"], b["from"]), "to": index.get(b["to"], b["to"])}
                       for b in plan.breaks]
        self.prepared: dict[int, Callable[[dict, Any], None]] = {}  # id(backend) -> launcher of the plan
        self.inner: list[tuple[int, int]] | None = None  # see kept_inside
        self.leaf_nodes: list[Node] | None = None  # the frame's nodes at ``leaves`` (made at the first run)
        self.places: dict[tuple, Template] = {}  # where -> this plan moved there (``at``)
        self.origin: Template = self  # the template this one is moved from (``moved``), or itself

    def at(self, frame: list[Node], where: tuple) -> "Template | None":
        """This plan for ``frame``, a graph with this template's key whose views lie at ``where``: itself, or
        moved there (``moved``), made once per place: a moved plan's launchers (rendering bound to its
        nodes, argument binders) are made at its first run, a few hundred microseconds of every step of an
        element loop (sor_loops: two thirds of its traced run) where its places repeat every sweep."""
        if where == self.where:
            return self
        t = self.places.get(where)
        if t is None:
            t = self.moved(frame, where)
            if t is not None and len(frame) <= PLACE_NODES:
                if len(self.places) >= MAX_PLACES:  # (a bound: forget the oldest)
                    del self.places[next(iter(self.places))]
                self.places[where] = t
        return t

    def moved(self, frame: list[Node], where: tuple) -> "Template | None":
        """This plan on ``frame``, a graph with this template's key whose views lie elsewhere: the same
        kernels, cuts and kept values, of ``frame``'s nodes (None if the plan names a node outside it)."""
        to = dict(zip(self.frame, frame))
        p = self.plan
        try:
            kernels = [replace(k, nodes=[to[n] for n in k.nodes], inputs=[to[n] for n in k.inputs],
                               outputs=[to[n] for n in k.outputs], phase={to[n]: v for n, v in k.phase.items()},
                               stage={to[n]: v for n, v in k.stage.items()}, reads={to[n] for n in k.reads})
                       for k in p.kernels]
            plan = fuse.Plan(kernels, p.breaks, {to[n] for n in p.keep if n in to},
                             [[to[n] for n in free] for free in p.free_after], {to[n] for n in p.inplace})
        except KeyError:
            return None
        t = copy.copy(self)  # (positions, cuts: the same)
        t.plan, t.frame, t.where, t.prepared, t.inner, t.leaf_nodes, t.places = plan, frame, where, {}, None, None, {}
        t.origin = self.origin
        return t

    def kept_inside(self) -> list[tuple[int, int]]:
        """(frame position, kernel index) of each value the plan keeps that only its own kernel reads: it
        is written to memory because the cell still holds it (a name bound to it), not for another kernel."""
        if self.inner is None:
            self.inner = _kept_inside(self.plan, self.frame)
        return self.inner

    def run(self, backend: Any, leaves: list[Node], outs: list[Node], values: dict, report: Any) -> None:
        """Run the plan on the graph whose leaves are ``leaves`` (values in ``values``): the kept
        values come back under ``outs`` (that graph's nodes at this template's ``outs``)."""
        frame = self.frame
        if self.leaf_nodes is None:
            self.leaf_nodes = [frame[i] for i in self.leaves]
        local = dict(zip(self.leaf_nodes, map(values.__getitem__, leaves)))  # (in C: thousands of constants)
        run = self.prepared.get(id(backend))
        if run is not None:
            run(local, report)
        else:
            prepare = getattr(backend, "prepare", None)  # (a backend made per run has none: cupy's)
            if prepare is not None:
                run = self.prepared[id(backend)] = prepare(self.plan)
                run(local, report)
            else:
                backend.execute(self.plan, local, report)
        for i, n in zip(self.outs, outs):
            v = local.get(frame[i])
            if v is not None:
                values[n] = v


def _kept_inside(plan: fuse.Plan, frame: list[Node]) -> list[tuple[int, int]]:
    readers: dict[Node, set[int]] = {}
    for i, k in enumerate(plan.kernels):
        for n in k.nodes:
            for a in n.args:
                readers.setdefault(a._base or a, set()).add(i)
    owner = {n: i for i, k in enumerate(plan.kernels) for n in k.nodes}
    return [(pos, owner[n]) for pos, n in enumerate(frame)
            if n in plan.keep and n in owner and readers.get(n) == {owner[n]}]


_TEMPLATES: "OrderedDict[tuple, Template]" = OrderedDict()


def key(frame: list[Node], values: dict, targets: list[Node], keep: set[Node], options: tuple,
        lines: dict, implicit: set[Node], synced: dict) -> tuple[tuple | None, tuple]:
    """The structure of the graph ``frame`` (dependency order; computed nodes are leaves), and where
    its views and assignments lie (their own parameters, which the structure has relative to the first
    view of the same memory: the plan of a graph whose views lie elsewhere is ``Template.moved``)."""
    pos: dict[Node, int] = {}
    parts: list[Any] = []
    where: list[Any] = []
    memory: dict[Node, Node] = {}  # a view's or an assignment's memory: the storage its chain of writes began at
    first: dict[Node, int] = {}  # memory -> the offset of its first view here

    def relative(mem: Node, layout: Any) -> Any:
        if layout is None:
            return None
        return layout[0] - first.setdefault(mem, layout[0]), layout[1]

    for i, n in enumerate(frame):
        pos[n] = i
        if n in values:
            # a constant is its value (hash-consed); an array by what a kernel reading it sees
            parts.append(const_key(n) if n.op == "const" else (n.dtype, n.shape, n.layout, n in synced))
            continue
        op, params, layout = n.op, n.params, n.layout
        if op == "view":
            st = n.storage()
            mem = memory.get(st, st)
            where.append((params, layout))
            params, layout = tuple([kind for kind, _ in params]), relative(mem, layout)
        elif op == "setitem":
            mem = memory[n] = memory.get(n.args[0], n.args[0])
            where.append(params)
            params = (params[1], relative(mem, params[2]))
        parts.append((op, params, n.dtype, n.shape, layout, tuple([pos[a] for a in n.args]),
                      tuple(lines.get(n, ())), n in implicit))
    k = (options, tuple(parts), tuple([pos[t] for t in targets]),
         tuple([i for i, n in enumerate(frame) if n in keep]))
    try:
        hash(k)
        hash(tuple(where))
    except TypeError:  # an unhashable parameter: plan this graph afresh
        return None, ()
    return k, tuple(where)


def lookup(k: tuple | None) -> Template | None:
    if k is None:
        return None
    t = _TEMPLATES.get(k)
    if t is not None:
        _TEMPLATES.move_to_end(k)
    return t


def store(k: tuple | None, t: Template) -> None:
    if k is None:
        return
    _TEMPLATES[k] = t
    if len(_TEMPLATES) > MAX_TEMPLATES:
        _TEMPLATES.popitem(last=False)


def clear() -> None:
    _TEMPLATES.clear()
