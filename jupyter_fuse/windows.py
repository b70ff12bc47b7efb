"""Moving windows: a loop unit's plan placed as far on as the loop's variable moved its windows.

A loop whose variable is a term of its indices (``g[i, :] -= a * g[i - 1, :]``, ``traj[i] = state``)
makes the same plan every unit (``plans.key`` keys windows relative to the first one in the same
memory), its windows elsewhere (``Template.where``: each window's index chain, offset and strides).
Two matching units say how far each number of each window moved (``moves``); the unit ``u`` units
further on has each number moved ``u`` times as far (``where_at``), for as long as NumPy itself puts
every window there (``reach``). ``graph_at`` makes that unit's graph, and ``Placed`` the plan placed on
it, when something asks.

``indexes_only`` checks the source: each such number must move evenly (``i``, ``-i``, ``i`` plus or
minus what the body does not change).
"""

from __future__ import annotations

import ast
import functools
from typing import Any, Callable

from . import views
from .ir import Node


# -- the source ----------------------------------------------------------------------------------------

def indexes_only(body: list[ast.stmt], target: str) -> bool:
    """Is ``target`` read only as a term of an index, ``u[i - 1, 1:-1]`` or ``x[k:k + w]`` (``i`` plus or
    minus what the body does not change), of a subscript not itself inside an index? Then each iteration's
    graph is the last one's with its windows moved by as much (``moves`` checks it, ``reach`` checks
    that every window NumPy takes there is the one moved so). ``x[perm[i]]``, ``x[2 * i]``, ``x[i % n]``: not
    windows that move evenly."""
    uses = sum(isinstance(n, ast.Name) and n.id == target for s in body for n in ast.walk(s))
    found = 0
    todo: list[ast.AST] = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Subscript):
            todo.append(n.value)
            for e in (n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]):
                parts = [e.lower, e.upper] if isinstance(e, ast.Slice) else [e]
                if isinstance(e, ast.Slice) and e.step is not None and _reads(e.step, target):
                    return False
                for part in parts:
                    if part is not None and _reads(part, target):
                        if not _term(part, target):
                            return False
                        found += 1
            continue  # (an index's other terms hold no subscript that reads it: ``_term``)
        todo.extend(ast.iter_child_nodes(n))
    return found == uses


def _reads(e: ast.AST, target: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == target for n in ast.walk(e))


def _term(e: ast.expr, target: str) -> bool:
    """``e`` is ``target`` or ``-target``, plus or minus terms that do not read it."""
    if isinstance(e, ast.Name):
        return e.id == target
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.UAdd, ast.USub)):
        return _term(e.operand, target)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        left, right = _reads(e.left, target), _reads(e.right, target)
        return _term(e.left, target) if left and not right else right and not left and _term(e.right, target)
    return False



# -- the run: where each unit's windows lie ----------------------------------------------------------------

def moves(mine: tuple, theirs: tuple) -> list[tuple[int, Callable[[int], Any]]] | None:
    """The windows of ``mine`` (a plan's ``where``) that lie elsewhere than in ``theirs`` (the unit before's):
    (their position in ``plans.key``'s order, the window ``u`` units on: ``_mover``); None where one differs
    in more than its numbers."""
    move = []
    for k, (a, b) in enumerate(zip(mine, theirs)):
        if a != b:
            form, now = _numbers(a)
            was = _numbers(b)
            if form != was[0]:
                return None
            try:
                move.append((k, _mover(form, now, [x - y for x, y in zip(now, was[1])])))
            except TypeError:  # (a window's step holds another kind of value: not moved here)
                return None
    return move


_SLOT = object()  # (an int's place in ``_numbers``' form)


def _numbers(where: Any) -> tuple[Any, list[int]]:
    """(``where`` with each int in it a slot, its ints in order): windows' indices and offsets."""
    got: list[int] = []

    def walk(x: Any) -> Any:
        if type(x) is tuple:
            return tuple(walk(y) for y in x)
        if type(x) is int:
            got.append(x)
            return _SLOT
        return x
    return walk(where), got


def _mover(form: Any, now: list[int], step: list[int]) -> Callable[[int], Any]:
    """The window ``u`` units on, of one whose numbers are ``now`` and move by ``step`` a unit: ``form`` with
    its slots ``now + u * step``, as one generated expression (a window is a few nested tuples, made for each
    unit run ahead)."""
    numbers = iter(range(len(now)))

    def source(x: Any) -> str:
        if type(x) is tuple:
            return "(" + "".join(source(y) + ", " for y in x) + ")"
        if x is _SLOT:
            i = next(numbers)
            return f"n[{i}] + u * s[{i}]" if step[i] else f"n[{i}]"
        if x is None or type(x) is str:
            return repr(x)
        raise TypeError(x)
    return _made(source(form))(now, step)


@functools.lru_cache(maxsize=1024)
def _made(source: str) -> Callable[[list[int], list[int]], Callable[[int], Any]]:
    """``_mover``'s expression, compiled once (a loop run again moves the same windows)."""
    return eval("lambda n, s: lambda u: " + source)  # noqa: S307 - made of ints, strings and None only


def where_at(tmpl: Any, move: list, u: int) -> tuple:
    """Where the windows of the unit ``u`` units after ``tmpl``'s lie (``plans.key``'s ``where``)."""
    where = list(tmpl.where)
    for k, place in move:
        where[k] = place(u)
    return tuple(where)


def reach(tmpl: Any, move: list, units: int) -> int:
    """How many of the ``units`` after ``tmpl``'s NumPy takes every moving window of where it moved to, with
    its shape and offset: its own answer on a ghost (``views.geometry``; an index past its axis raises, one
    below 0 counts from the end, a slice past an end is cut). Each number in an index moves evenly
    (``indexes_only``), and the units it is in a window of its axis from the same end form a run: asked of
    the last unit, then halving."""
    leaves = set(tmpl.leaves)
    positions = [n for i, n in enumerate(tmpl.frame) if n.op in ("view", "setitem") and i not in leaves]  # (the
    # windows, in ``plans.key``'s order)
    moving = [(positions[k], k) for k, _ in move]

    def fits(u: int) -> bool:
        where = where_at(tmpl, move, u)
        for node, k in moving:
            storage = node.args[0]
            if node.op == "view":
                chain, want = where[k][0], (node.shape, where[k][1])
            else:
                chain, want = where[k][0], where[k][1:]
            try:
                if views.geometry(storage.dtype, storage.shape, storage.layout, chain) != want:
                    return False
            except (IndexError, ValueError, TypeError):
                return False
        return True

    if fits(units):
        return units
    lo, hi = 0, units  # (lo fits, hi does not)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def graph_at(tmpl: Any, leaves: list, where: tuple) -> list:
    """``tmpl``'s graph on ``leaves`` with its windows at ``where`` (in ``plans.key``'s order; ``reach`` has
    checked them), in dependency order."""
    frame = tmpl.frame
    new = dict(zip([frame[i] for i in tmpl.leaves], leaves))
    places = iter(where)
    graph = []
    for node in frame:
        got = new.get(node)
        if got is None:
            args = tuple([new[a] for a in node.args])
            if node.op == "view":
                chain, layout = next(places)
                got = Node.make("view", args, chain, node.dtype, node.shape, layout)
            else:
                got = Node.make(node.op, args, next(places) if node.op == "setitem" else node.params, node.dtype,
                                node.shape, node.layout)
            new[node] = got
        graph.append(got)
    return graph


class Placed:
    """A unit's plan placed where its windows lie (``plans.Template.at`` on the graph ``graph_at`` makes),
    made at the first question asked of it: a unit's graph costs about as much to make as to trace the unit,
    and a run only needs the first two units' (a program is made of them); the plan cache's replay, or its
    program, asks for the others."""

    __slots__ = ("_of", "_t")

    def __init__(self, tmpl: Any, leaves: list, where: tuple, names: tuple) -> None:
        self._of: tuple | None = (tmpl, leaves, where, names)
        self._t: Any = None

    def made(self) -> Any:
        """The placed plan, or None where it names a node outside the unit's graph (``Template.moved``): the
        same for every unit, so the first two tell."""
        if self._t is None and self._of is not None:
            tmpl, leaves, where, names = self._of
            t = tmpl.origin.at(graph_at(tmpl, leaves, where), where)
            if t is not None:
                for k, kname in zip(t.plan.kernels, names):  # (named as the unit traced last: one loop)
                    k.name = kname
                self._t, self._of = t, None
        return self._t

    def __getattr__(self, name: str) -> Any:
        t = self.made()
        if t is None:
            raise RuntimeError("a unit run ahead has no plan where its windows lie")
        return getattr(t, name)
