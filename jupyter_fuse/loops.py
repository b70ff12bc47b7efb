"""Fast-forward: the rest of a time-stepping loop runs as one plan, without its Python.

Tracing costs ~15 us an op where NumPy takes ~1 us on a small array, so a traced loop of a few
thousand small ops costs tens of NumPy's times whatever the kernels do. But most loops a notebook
runs (``for n in range(nt): un = u.copy(); u[1:-1] = ...``) make the same graph every iteration.

So a ``for NAME in range(...)`` (of the cell, inside its loops, inside the functions it defines) whose
body only computes arrays (``mark`` checks its source) has its iterations taken in units of a few
(``UNIT_OPS`` ops or more): the graph is computed at the end of each unit. Once a unit has made a graph
of the plan (``plans.Template``) of the unit before it, read what that unit kept or what it read itself,
and left each name holding the same kind of value in the same buffer (``_Unit.reads``), the plan is run
for the units left, each on what the last one computed, without running their Python: no trace, no
plan; the loop's last iterations are traced as usual. Units are a step or two where more would fuse nothing
more and only be traced: a loop storing into part of small arrays (``_small``: its stores cut its kernels
every step), or one whose windows move, or a stretch between checkpoints (below).

Some loops make a graph that differs from the last one's in a known way. A loop whose variable
is a term of its indices (``u[i - 1, :]``, ``traj[i] = state``) makes the same plan with its windows
moved on by as much each unit: each unit ahead is that plan placed as far on again, as long as NumPy
takes every window there (``windows.py``), as one compiled program (``_forward``). A loop whose variable
computes numbers its arrays meet (``x * (1 - 1 / (i + 2))``, ``np.sin(w * i * dt)``) makes the same plan
with other constants: each unit ahead gets its own, computed from the loop variable (``terms.py``). A
loop calling functions the cell defines that only compute arrays (``_functions``) makes the graph their
bodies make; one running short loops of such bodies (a stencil's taps) makes their graphs whole.

A time-stepping loop that keeps a snapshot or prints every so many steps (``if n % 50 == 0: ...``: a
checkpoint, ``_checkpoint``) runs ahead between the iterations where its test holds, computed for the
iterations ahead from the loop variable (``_quiet``); those iterations run as Python.

That is only right where the body's Python does nothing but build that graph, which the graph's values
cannot change (its shapes and dtypes are the plan's): ``mark`` lets through only assignments of names
and subscripts and calls of NumPy (and of such functions); at run time every unit checks that nothing
but the unit's own graph was computed in it (no sync, no call outside the trace, no new input), that
every name the body binds holds a lazy array and every name it reads is plain data, that no name took
over another's array (the user's arrays swapped by name), and that NumPy's error state did not change.
Where any of that fails the loop runs on, traced as usual. ``JUPYTER_FUSE_FASTFORWARD=off`` turns it off.

A loop that reads a value of its arrays each step (a residual's ``float()``, a ``while`` on arrays) has a sync
in each unit, so runs ahead otherwise: ``syncloops.py`` (``mark`` gives it to that module first).
"""

from __future__ import annotations

import ast
import functools
import math
import os
import sys
import time
from typing import Any, Iterator

import numpy as np

from . import abandon, fperrors, program, terms, windows
from .backends import compiler
from .trace import LazyArray

UNIT_OPS = 48  # a unit holds at least this many traced ops (whole iterations): its kernels fuse them
# ... where small units serve better (``_stretch``): the fewer iterations the two units it matches take, the
# fewer are traced (each call of the loop); tried on as many units at most where windows move; a loop runs
# ahead in as many units at most (the plan cache's tape holds a step per unit)
MOVING_UNIT_OPS, MOVING_TRIES, MAX_UNITS = 6, 6, 4096
MIN_UNITS = 8  # units fast-forwarded at least: below that, tracing them all costs little (and plans the loop whole)
MIN_SMALL_UNITS = 4  # ... of small units (``_stretch``): a stretch of 19 steps between checkpoints runs 13 ahead
MIN_ITERATIONS = 8  # a shorter loop is traced (tests lower these)
SMALL = 1 << 15  # elements of the arrays of a loop storing into them that runs in small units (``_small``)
# kernel launches of the units run ahead from which they run as one compiled program (as a replay's, ``program.py``)
MIN_PROGRAM_LAUNCHES = 32

# calls a body may make by a bare name (builtins that compute; a float() or the like is a sync, seen at run time)
_CALLS = {"abs", "min", "max", "round", "pow", "len", "range", "float", "int", "bool", "complex", "sum"}
# NumPy attributes whose calls change state a unit's graph does not hold (files, error modes, random draws)
_IMPURE = {"random", "seterr", "seterrcall", "errstate", "set_printoptions", "printoptions", "save", "savez",
           "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile", "tofile", "setbufsize",
           "testing", "lib", "ctypeslib", "memmap", "frompyfunc", "vectorize", "apply_along_axis", "put", "place"}
_EXPRS = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript, ast.Slice, ast.BinOp, ast.UnaryOp, ast.Compare,
          ast.Call, ast.Tuple, ast.List, ast.keyword, ast.Starred, ast.IfExp, ast.BoolOp, ast.operator,
          ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)


def enabled() -> bool:
    return os.environ.get("JUPYTER_FUSE_FASTFORWARD", "on") != "off"


# -- the source: which loops -----------------------------------------------------------------------

def mark(tree: ast.Module) -> int:
    """Wrap the iterable of each ``for NAME in range(...)`` of the cell (at its top level, inside its loops and
    blocks, inside the functions it defines) whose body may be fast-forwarded in a call of ``driver``, with
    the names the body binds and reads. Returns how many were marked."""
    from . import syncloops

    marked = 0
    functions = _functions(tree)
    todo = [(tree.body, stmt) for stmt in tree.body]
    while todo:
        block, stmt = todo.pop()
        made = syncloops.transform(stmt, functions)  # (a loop that reads a value each step: a sync in each of its
        if made is not None:  # units, which this module's would not run ahead)
            at = next(i for i, b in enumerate(block) if b is stmt)
            block[at:at + 1] = made
            marked += 1
            continue  # (its body holds no loop)
        names = _eligible(stmt, functions)
        if names is not None:
            assigned, loaded, moves, calls, scalars, stores = names
            # (by import, not by a name of the cell's: a function the cell defines may be called anywhere later)
            driver = ast.Attribute(ast.Call(ast.Name("__import__", ast.Load()), [ast.Constant(__name__)], []),
                                   "loops", ast.Load())
            call = ast.Call(ast.Attribute(driver, "driver", ast.Load()), [
                stmt.iter, ast.Constant(stmt.lineno), ast.Constant(tuple(assigned)), ast.Constant(tuple(loaded)),
                ast.Constant(moves), ast.Constant(calls), ast.Constant(_checkpoints(stmt)), ast.Constant(scalars),
                ast.Constant(stores)], [])
            stmt.iter = ast.copy_location(call, stmt.iter)
            ast.fix_missing_locations(stmt)
            marked += 1
        # (the loops inside a marked one too: a long inner loop runs ahead inside each of its iterations, and the
        # outer one then is traced; a short one is traced in each of its units, which run ahead)
        if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef)):
            for field in ("body", "orelse", "finalbody"):
                inside = getattr(stmt, field, None) or []
                todo.extend((inside, b) for b in inside)
            for handler in getattr(stmt, "handlers", None) or []:
                todo.extend((handler.body, b) for b in handler.body)
    return marked


def _eligible(stmt: ast.stmt, functions: dict[str, tuple[int, tuple[str, ...]]] | None = None) \
        -> tuple[list[str], list[str], bool, tuple[tuple[str, int], ...], tuple | None, bool] | None:
    """(names bound, names read, whether its windows move: ``windows.indexes_only``, the functions of the cell it calls
    (``_functions``): their names and lines, the numbers it computes from its variable: ``terms.candidates``,
    whether it stores into part of an array: ``u[1:-1] = ...``) by the body of a loop that only computes arrays,
    or None."""
    if not (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and isinstance(stmt.iter, ast.Call)
            and isinstance(stmt.iter.func, ast.Name) and stmt.iter.func.id == "range" and not stmt.iter.keywords):
        return None
    assigned: dict[str, None] = {}
    loaded: dict[str, None] = {}
    calls: dict[str, None] = {}
    functions = functions or {}
    inner: dict[str, None] = {}
    body = [b for b in stmt.body if not _checkpoint(b)]  # (they run only in the iterations where they fire)
    if not body or not _computes(body, assigned, loaded, calls, functions, inner):
        return None
    target = stmt.target.id
    scalars = None
    if target in loaded and not inner and not windows.indexes_only(body, target):
        found = terms.candidates(body, target, assigned, functions)  # (``x * (1 - 1 / (i + 2))``)
        if found is None:
            return None
        scalars = (target, found)
    if target in assigned or target in loaded and inner:
        return None  # (each iteration's graph would hold another value)
    if target in inner or any(name in assigned for name in inner):
        return None  # (an inner loop's variable holds a number at a unit's end, the same each unit)
    if any(n.id in assigned for b in stmt.body if _checkpoint(b) for n in ast.walk(b.test) if isinstance(n, ast.Name)):
        return None  # (its test reads a value the body computes: a sync each iteration)
    for name in calls:  # (what the functions it calls read from outside, the functions they call among them:
        loaded.update(dict.fromkeys(functions[name][1]))  # checked at run time as the body's reads)
    moves = target in loaded and scalars is None
    loaded = {n: None for n in loaded if n not in assigned and n != target}
    stores = any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) for b in body for n in ast.walk(b))
    return [*assigned], [*loaded], moves, tuple((name, functions[name][0]) for name in loaded if name in functions), \
        scalars, stores


# what the test of a checkpoint may be made of (``_checkpoint``)
_TESTS = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.operator, ast.unaryop,
          ast.cmpop, ast.boolop, ast.expr_context)


def _checkpoint(stmt: ast.stmt) -> bool:
    """A checkpoint of a time-stepping loop: ``if step % 50 == 0: print(...)`` (or ``snapshots.append(u.copy())``,
    ``break``, anything): an ``if`` with no ``else`` whose test is arithmetic on names and constants. Its test
    is computed for the iterations ahead (``_quiet``), and the loop runs ahead only between the iterations where
    it fires; those run as Python."""
    return isinstance(stmt, ast.If) and not stmt.orelse and all(isinstance(n, _TESTS) for n in ast.walk(stmt.test))


def _checkpoints(stmt: ast.For) -> tuple | None:
    """The tests of a loop's checkpoints as one expression, and the names it reads (the loop variable first)."""
    tests = [b.test for b in stmt.body if _checkpoint(b)]
    if not tests:
        return None
    target = stmt.target.id  # type: ignore[attr-defined]
    names = dict.fromkeys([target, *(n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name))])
    return " or ".join(f"({ast.unparse(t)})" for t in tests), tuple(names)


def _computes(body: list[ast.stmt], assigned: dict[str, None], loaded: dict[str, None], calls: dict[str, None],
              functions: dict, inner: dict[str, None] | None = None) -> bool:
    """Does ``body`` only assign names and array elements, and call NumPy, a few builtins and ``functions``?
    Collects the names it binds and reads, and the functions of the cell it calls. With ``inner``, it may run
    loops over a ``range`` of such bodies too (``for dj in range(-1, 2)``: a stencil's taps): collects their
    variables there."""
    for s in body:
        if inner is not None and isinstance(s, ast.For) and isinstance(s.target, ast.Name) and not s.orelse \
                and isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Name) and s.iter.func.id == "range" \
                and not s.iter.keywords:
            if not _pure(s.iter, loaded, calls, functions) or not _computes(s.body, assigned, loaded, calls, functions, inner):
                return False
            inner[s.target.id] = None
            continue
        if isinstance(s, ast.Assign):
            targets, value = s.targets, s.value
        elif isinstance(s, ast.AugAssign):
            targets, value = [s.target], s.value
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            targets, value = [], s.value
        elif isinstance(s, ast.Pass):
            continue
        else:
            return False
        for t in targets:
            for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                if isinstance(e, ast.Name):
                    assigned[e.id] = None
                elif isinstance(e, ast.Subscript) and _rooted(e.value):
                    if not _pure(e.slice, loaded, calls, functions):
                        return False
                    _pure(e.value, loaded, calls, functions)
                else:
                    return False
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            loaded[s.target.id] = None
        if not _pure(value, loaded, calls, functions):
            return False
    return True


def _functions(tree: ast.Module) -> dict[str, tuple[int, tuple[str, ...]]]:
    """The functions the cell defines at its top level (``def``, or a name bound to a ``lambda``) that only
    compute arrays (``_computes``, then a ``return``): a loop calling them may be fast-forwarded, their Python
    skipped with the loop's. Name -> (line, the names they read from outside, theirs and those of the
    functions they call)."""
    found: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {}  # (line, reads, calls)
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            fn, args, body = stmt, stmt.args, list(stmt.body)
            if stmt.decorator_list or stmt.returns is not None:
                continue
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # (a docstring)
            if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
                continue
            result, body = body[-1].value, body[:-1]
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Lambda):
            fn, args, body, result = stmt.value, stmt.value.args, [], stmt.value.body
        else:
            continue
        if args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs:
            continue
        assigned = dict.fromkeys(a.arg for a in args.args)
        loaded: dict[str, None] = {}
        calls: dict[str, None] = {}
        if not _computes(body, assigned, loaded, calls, _ANY) or not _pure(result, loaded, calls, _ANY):
            continue
        name = stmt.name if isinstance(stmt, ast.FunctionDef) else stmt.targets[0].id
        found[name] = (fn.lineno, tuple(n for n in loaded if n not in assigned), tuple(calls))
    pure = set(found)
    while True:  # (a function calling one that is not pure is not)
        out = {name for name in pure if any(c not in pure for c in found[name][2])}
        if not out:
            break
        pure -= out
    functions = {}
    for name in pure:
        reads, todo, seen = dict.fromkeys(found[name][1]), list(found[name][2]), set()
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                reads.update(dict.fromkeys([c, *found[c][1]]))
                todo.extend(found[c][2])
        functions[name] = (found[name][0], tuple(reads))
    return functions


class _Any(dict):
    """Every name a function of the cell's (``_functions`` checks which, after)."""

    def __contains__(self, key: object) -> bool:
        return True


_ANY = _Any()


def _rooted(e: ast.expr) -> bool:
    """``u`` or ``u[...]`` or ``u.T[...]``: an array named by the cell."""
    while isinstance(e, (ast.Subscript, ast.Attribute)):
        e = e.value
    return isinstance(e, ast.Name)


def _pure(e: ast.AST, loaded: dict[str, None], calls: dict[str, None] | None = None,
          functions: dict | None = None) -> bool:
    for n in ast.walk(e):
        if not isinstance(n, _EXPRS):
            return False  # (a lambda, a comprehension, a walrus, a yield, an f-string: not a plain computation)
        if isinstance(n, ast.Name):
            loaded[n.id] = None
        elif isinstance(n, ast.Attribute) and n.attr in _IMPURE:
            return False
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in _CALLS:
            if functions is None or n.func.id not in functions:
                return False  # (print, a function of another cell's: what it does is not in the graph)
            calls[n.func.id] = None  # type: ignore[index]
    return True


# -- the run: units ---------------------------------------------------------------------------------

class _Unit:
    """A unit's end: the plan that computed it, on which leaves, keeping which values, and where the names
    the body touches stand (each a kept value's position, or unchanged)."""

    __slots__ = ("tmpl", "leaves", "outs", "refs", "roles", "ops", "held", "names", "move")

    def __init__(self, tmpl: Any, leaves: list, outs: list, refs: list, roles: tuple, ops: int, held: list,
                 names: dict) -> None:
        self.tmpl, self.leaves, self.outs, self.refs, self.roles, self.ops = tmpl, leaves, outs, refs, roles, ops
        self.held = held  # (a buffer, "out" or "prev", a kept value's position): what a unit run ahead writes
        self.names = names  # name -> (its buffer, the node it holds) at the unit's end
        self.move: list[tuple[int, Any]] | None = None  # see ``reads``

    def reads(self, before: "_Unit", moves: bool = False, numbers: bool = False) -> tuple | None:
        """Where each of this unit's leaves comes from: the same leaf as ``before``'s (a constant, an input,
        a value no unit writes), or ``before``'s kept value at a position; None if neither. ``moves``: its
        windows may lie elsewhere than ``before``'s (``windows.indexes_only``); then ``move`` is set to those
        that do (``windows.moves``). ``numbers``: a constant may differ from ``before``'s ("c": one the loop
        variable computes, ``terms.py``)."""
        if self.tmpl.origin is not before.tmpl.origin or self.ops != before.ops or self.roles != before.roles \
                or any(r[2] == "?" for r in self.roles):
            return None
        if self.tmpl is not before.tmpl:  # (the same plan, its windows elsewhere: ``plans.Template.at``)
            if not moves:
                return None
            self.move = windows.moves(self.tmpl.where, before.tmpl.where)
            if self.move is None:
                return None
        if any(kind == "prev" and self.refs[o] is None for _, kind, o in self.held):
            return None  # (a name holds what the unit before kept, which this unit keeps nowhere)
        kept = {ref: o for o, ref in enumerate(before.refs)}
        rule = []
        for mine, theirs in zip(self.leaves, before.leaves):
            if mine is theirs:
                rule.append(None)
            elif numbers and mine.op == "const" and theirs.op == "const":
                rule.append("c")
            else:
                o = kept.get(mine)
                if o is None:
                    return None
                rule.append(o)
        return tuple(rule)


def driver(iterable: Any, line: int, assigned: tuple[str, ...], loaded: tuple[str, ...], moves: bool = False,
           calls: tuple[tuple[str, int], ...] = (), checkpoints: tuple[str, tuple[str, ...]] | None = None,
           scalars: tuple | None = None, stores: bool = False) -> Any:
    """The loop's iterable: itself, or an iterator that fast-forwards it (``_run``)."""
    from .session import active

    s = active()
    if s is None or type(iterable) is not range or not enabled() or s.namespace is None or len(iterable) < MIN_ITERATIONS \
            or moves and (getattr(s.backend, "compile_block", None) is None
                          or not s.report.options.get("compile_plan", True)):
        return iterable  # (moving windows run ahead only as a compiled program: ``_forward``)
    frame = sys._getframe(1)  # (the loop's: the cell's, or a function's it defines)
    if frame.f_globals is not s.namespace:
        return iterable  # (a function of an earlier cell's)
    return _run(s, frame, iterable, line, assigned, loaded, moves, dict(calls), checkpoints, scalars, stores)


def _run(s: Any, frame: Any, r: range, line: int, assigned: tuple[str, ...], loaded: tuple[str, ...],
         moves: bool, calls: dict[str, int], checkpoints: tuple[str, tuple[str, ...]] | None,
         scalars: tuple | None = None, stores: bool = False) -> Iterator[int]:
    """The loop's iterations: between its checkpoints' iterations (``_checkpoint``), which run as Python, each
    stretch is fast-forwarded on its own (``_stretch``)."""
    n, j, again, memo = len(r), 0, False, {}
    while j < n:
        end = _quiet(s, frame, r, j, checkpoints) if checkpoints is not None else n
        if end > j:
            again = yield from _stretch(s, frame, r, j, end, line, assigned, loaded, moves, calls, again,
                                        checkpoints is not None, memo, scalars, stores)
        if end < n:
            yield r[end]  # (a checkpoint fires)
        j = end + 1


def _quiet(s: Any, frame: Any, r: range, j: int, checkpoints: tuple[str, tuple[str, ...]]) -> int:
    """The first iteration from ``j`` on where a checkpoint fires: its test computed on the loop variable and the
    values its names hold now (no iteration between changes them: the body computes only arrays). ``j`` where a
    name holds anything but a number or a string, or the test raises (Python raises it, in that iteration)."""
    source, names = checkpoints
    lookup = _lookup(s, frame)
    values = [lookup(name) for name in names[1:]]
    if not all(isinstance(v, _NUMBERS) for v in values):
        return j
    test = _test(source, names)
    try:
        for k in range(j, len(r)):
            if test(r[k], *values):
                return k
    except Exception:  # noqa: BLE001 - the iteration runs as Python, and raises there
        return k
    return len(r)


_NUMBERS = (bool, int, float, complex, str, bytes, type(None), np.generic)
_MISSING = object()


def _lookup(s: Any, frame: Any) -> Any:
    """A function of a name: the value the loop's body reads by it now (a function's local, or the cell's),
    ``_MISSING`` where it has none yet."""
    local = frame.f_locals if frame.f_code.co_name != "<module>" else None  # (a function's: a snapshot)
    ns = s.namespace

    def lookup(name: str) -> Any:
        if local is not None and name in local:
            return local[name]
        return dict.__getitem__(ns, name) if dict.__contains__(ns, name) else _MISSING
    return lookup


@functools.lru_cache(maxsize=256)
def _test(source: str, names: tuple[str, ...]) -> Any:
    """The checkpoints' test as a function of the names it reads (``_checkpoints``)."""
    return eval(f"lambda {', '.join(names)}: bool({source})", {"__builtins__": {"bool": bool}})  # noqa: S307


def _stretch(s: Any, frame: Any, r: range, lo: int, hi: int, line: int, assigned: tuple[str, ...],
             loaded: tuple[str, ...], moves: bool, calls: dict[str, int], again: bool, short: bool,
             memo: dict, scalars: tuple | None = None, stores: bool = False) -> Iterator[int]:
    """Iterations ``lo`` to ``hi`` of the loop, fast-forwarded where they make one graph (the module docstring).
    ``again``: a stretch before this one ran units ahead. ``short``: a stretch between checkpoints, its units
    made as short as its length needs. ``stores``: the body stores into part of an array (``_small``). ``memo``:
    what the stretches before found (the ops of an iteration: ``per``; units of two steps: ``twice``). Returns
    whether a stretch has run units ahead."""
    n = len(r)
    tail = 1 if hi == n else 0  # (the loop's last iteration runs as Python: the loop variable ends as NumPy's)
    j = lo  # iterations run
    per = memo.get("per")
    if per is None:  # (the second iteration's ops: the first may make what later ones update)
        if hi - lo < 2:
            for j in range(lo, hi):
                yield r[j]
            return again
        yield r[lo]
        start = s.report.ops
        yield r[lo + 1]
        per = memo["per"] = s.report.ops - start
        j = lo + 2
    # Small units where windows move, checkpoints cut the loop short or it stores into small arrays: the fewer
    # iterations the two units it matches take, the fewer are traced (a stretch of 49 between checkpoints traces 2
    # and runs 47 ahead). Units of many iterations elsewhere: their kernels fuse iterations (a loop too short for
    # them is planned whole: ``x = x * 0.5 + 1`` twenty times is one kernel, and its graph is drawn whole).
    small = moves or short or stores and _small(s, frame, assigned + loaded)
    least = MIN_SMALL_UNITS if small else MIN_UNITS
    # (units whose numbers change get a row of constants each, made in Python, ``_forward``: fewer, longer)
    few = small and scalars is None
    m = max(1, math.ceil((MOVING_UNIT_OPS if few else UNIT_OPS) / per)) if per > 0 else 0
    if small and m:  # (as few iterations a unit as fit in the loop, but no more units than the plan cache's tape
        # can hold: a step each, ``cache.MAX_STEPS``; a loop of 100,000 steps in units of one would not replay)
        m = max(min(m, (hi - j - tail) // (2 + MIN_UNITS)), math.ceil(n / MAX_UNITS), 1)
    if m and memo.get("twice") and m % 2:
        m *= 2
    if hi - j - tail < (2 + least) * m:  # (two units traced, then at least ``least`` ahead, then the last iteration)
        m = 0
    units: list[_Unit | None] = []  # the units' ends so far (the first: where the stretch's units begin)
    rule: tuple | None = None
    events: tuple | None = None
    ops = s.report.ops
    cuts = 0  # (times a window cut the units run ahead short)
    while m and hi - j >= least * m + tail:
        unit = _end_unit(s, frame, assigned, loaded, calls, events, s.report.ops - ops, units[-1] if units else None)
        if unit is _SWAPPED and m % 2 == 1 and hi - j - tail >= (2 + least) * 2 * m:
            # (``u_prev, u = u, u_new``, ``A, B = B, A``: names trade buffers each step; in units of two steps
            # each name ends every unit in a buffer of its own again)
            m, units, unit, memo["twice"] = 2 * m, [], None, True
        elif unit is None or unit is _SWAPPED:
            if any(units) or len(units) >= 3:
                break  # (Python did more than make the graph: the loop goes on traced)
            unit = None
        units.append(unit)
        rule = unit.reads(units[-2], moves, scalars is not None) \
            if len(units) >= 2 and units[-2] is not None and unit is not None else None
        numbers = None
        if rule is not None and scalars is not None:  # (constants the loop variable computes: ``terms.py``)
            target, found = scalars  # type: ignore[misc]
            numbers = terms.Terms(found, target, _lookup(s, frame))
            rule = numbers.resolve(rule, units[-2].leaves, unit.leaves, s.values, r, j - 2 * m, j - m, m)  # type: ignore[union-attr]
        if rule is not None:
            ahead = (hi - j - tail) // m
            consts = numbers.ahead(rule, r, j, m, ahead) if numbers is not None else None
            if consts is not None:
                ahead = len(consts)  # (up to a unit whose number raises: traced, it raises there)
            done, cut = _forward(s, unit, rule, ahead, line, m, n, again, consts) if ahead else (0, False)  # type: ignore[arg-type]
            j += done * m
            again = again or done > 0
            if not cut or cuts >= MOVING_TRIES:
                break
            cuts += 1
            units = []  # (a window would have left its axis, or counted from its other end: matched anew there)
        elif moves and len(units) >= MOVING_TRIES:
            break  # (small units: each ends in a flush)
        events, ops = (s.events, fperrors.state()), s.report.ops
        for _ in range(m):
            yield r[j]
            j += 1
    while j < hi:
        yield r[j]
        j += 1
    return again


def _small(s: Any, frame: Any, names: tuple[str, ...]) -> bool:
    """Are the arrays a loop storing into part of an array touches small (``SMALL`` elements at most)? Such a
    loop (``un = u.copy(); u[1:-1] = ... un[2:] ...``, a stencil's taps added into ``out[1:-1, 1:-1]``) needs a
    kernel or more a step whatever its units: its stores cut them. On small arrays a step's kernels cost little
    next to tracing it, so it runs ahead in units of a step or two, the fewest traced (conv: 5 of 20 passes).
    Units of many steps serve long arrays, whose kernels may still fuse what steps do between the stores."""
    lookup = _lookup(s, frame)
    for name in names:
        v = lookup(name)
        if isinstance(v, (LazyArray, np.ndarray)) and v.size > SMALL:
            return False
    return True


_SWAPPED = object()  # (``_end_unit``: a name holds another's buffer)


def _end_unit(s: Any, frame: Any, assigned: tuple[str, ...], loaded: tuple[str, ...], calls: dict[str, int],
              events: tuple | None, ops: int, prev: _Unit | None, trades: bool = False) -> _Unit | None:
    """Compute the graph the unit made; None where the unit did anything besides making it, ``_SWAPPED`` where a
    name ends it in a buffer another name held (``trades``: only where that buffer is the user's array; a name
    taking what another computed, ``lam = lam_new``, then holds the value the unit before kept, a "prev")."""
    if events is not None and (s.events, fperrors.state()) != events:
        return None  # (a sync, a call outside the trace, a new input, np.seterr: Python saw or did more)
    lookup = _lookup(s, frame)
    lazies: list[tuple[str, LazyArray]] = []
    for name in assigned:
        v = lookup(name)
        if type(v) is not LazyArray:
            return None  # (a Python number the body computes: skipping the body would skip it)
        lazies.append((name, v))
    for name in loaded:
        v = lookup(name)
        if v is _MISSING:
            if name in _CALLS and name not in s.namespace.user:
                continue  # (a builtin)
            return None
        if type(v) is LazyArray:
            lazies.append((name, v))
        elif not _plain(v) and not (name in calls and _the_function(v, calls[name], frame)):
            return None
    s.last_eval = None
    s.keep_eval = True
    try:
        s.flush()
    finally:
        s.keep_eval = False
    got, s.last_eval = s.last_eval, None
    if got is None:
        return None
    tmpl, leaves, outs, refs = got
    kept = [refs.get(o) for o in outs]
    position = {ref: o for o, ref in enumerate(kept) if ref is not None}
    # each name's value: a value this unit kept, one the unit before kept, or the one it held then; in the
    # buffer it had then or in a new one (``un = u.copy()``), never in another name's (``A, B = B, A``: which
    # of the user's arrays a name ends in would depend on how many iterations ran)
    earlier = {ref: o for o, ref in enumerate(prev.refs) if ref is not None} if prev is not None else {}
    owners = {id(buf) for buf, _ in prev.names.values()} if prev is not None else set()
    roles, held, names = [], {}, {}
    for name, v in lazies:
        buf = v._buf
        node = names.setdefault(name, (buf, buf.node))[1]
        if node in position:
            role = ("out", position[node])
        elif node in earlier:
            role = ("prev", earlier[node])
        elif prev is not None and prev.names.get(name, (None, None))[1] is node:
            role = ("same", None)
        else:
            role = ("?", None)  # (no unit before to tell: this unit only serves as the one before)
        if prev is not None:
            was = prev.names.get(name, (None,))[0]
            if buf is not was and (id(buf) in owners and not trades or buf.origin is not None):
                return _SWAPPED
        roles.append((name, v._chain, *role))
        if role[0] in ("out", "prev"):
            held[id(buf)] = (buf, *role)
    return _Unit(tmpl, leaves, outs, kept, tuple(roles), ops, list(held.values()), names)


def _the_function(v: Any, line: int, frame: Any) -> bool:
    """Is ``v`` the function the cell defines at ``line`` (``_functions``), with nothing of its own besides
    plain defaults (no closure): what it computes is all in the graph."""
    code = getattr(v, "__code__", None)
    return code is not None and code.co_firstlineno == line and code.co_filename == frame.f_code.co_filename \
        and getattr(v, "__closure__", None) is None and all(map(_plain, getattr(v, "__defaults__", None) or ())) \
        and not getattr(v, "__kwdefaults__", None)


def _plain(v: Any, depth: int = 0) -> bool:
    """A value the body may read and not change: a number, a string, a numeric array, NumPy itself, a tuple of
    such (not a generator, a list, a function: what they do or hold is not in the unit's graph)."""
    from .capture import unwrap_module

    if isinstance(v, abandon.PLAIN) or type(v) is np.ndarray and v.dtype.kind in "biufc":
        return True
    if type(v) is tuple:
        return depth < 3 and all(_plain(x, depth + 1) for x in v)
    return getattr(unwrap_module(v), "__name__", None) == "numpy"


def _after(leaves: list, refs: list, rule: tuple, consts: dict[int, Any] | None = None, s: Any = None) -> list:
    """The leaves of the unit after one that read ``leaves`` and kept ``refs``: each the same, or a kept value, or
    (``consts``: position -> value) a constant the loop variable computes, this unit's."""
    if consts:
        return [s.const(consts[p]) if p in consts else leaf if o is None else refs[o]
                for p, (leaf, o) in enumerate(zip(leaves, rule))]
    return [leaf if o is None else refs[o] for leaf, o in zip(leaves, rule)]


def _forward(s: Any, last: _Unit, rule: tuple, units: int, line: int, m: int, n: int,
             again: bool = False, consts: list[dict[int, Any]] | None = None) -> tuple[int, bool]:
    """Run ``last``'s plan ``units`` times more, each on what the one before computed (``rule``): as one
    compiled program where the backend makes one and it is ready (``_program``), else launch by launch.
    Where its windows move (``_Unit.move``), each unit's plan is placed where its windows lie (``_placed``),
    for as many units as NumPy takes them there, and only as a compiled program: launched one by one, each
    placed plan's kernels would be bound anew, which costs more than tracing the unit. Returns how many
    units ran (none: the loop goes on traced), and whether a window cut them short (the loop may match units
    anew after it). ``again``: this run of the loop ran units ahead before. ``consts``: each unit's constants that
    the loop variable computes (``terms.Terms.ahead``): a compiled program reads them from a table."""
    t0 = time.perf_counter()
    report, tape = s.report, s.tape
    run0 = report.times["run"]  # (a program's run adds its own time: the whole of it is said once, below)
    tmpl = last.tmpl
    first = _after(last.leaves, last.refs, rule, consts[0] if consts else None, s)  # (the first unit run ahead reads these)
    placed, cut = None, False
    if last.move is not None:
        reach = windows.reach(last.tmpl, last.move, units)
        units, cut = reach, reach < units
        placed = _placed(s, last, first, rule, min(units, 2))  # (the program's first two units)
        if len(placed) < 2:
            return 0, cut
    blk, how = _program(s, last, first, rule, units, line, placed, consts)
    if placed is not None:
        if blk is None:
            return 0, False
        if tape is not None:  # (the tape records each unit, placed: without one, the program needs the first two)
            placed += _placed(s, last, first, rule, units, placed)
    if blk is not None:
        refs = _run_program(s, last, first, rule, units, blk, placed, consts)
        for buf, _, o in last.held:  # (no "prev": ``_program``)
            buf.node = refs[o]
    else:
        leaves, refs = last.leaves, last.refs
        for u in range(units):
            leaves, refs = advance(s, last, leaves, refs, rule, consts[u] if consts is not None else None)
            if len(s.values) > s._gc_at:
                s._collect()
    report.ops += last.ops * units
    s.pending = 0
    s._collect()
    elapsed = time.perf_counter() - t0
    report.times["run"] = run0 + elapsed - s._compile_delta()
    kernels = len(last.tmpl.plan.kernels)
    for e in report.loops:  # (a loop run again, inside another loop or a function called again: one entry)
        if e["line"] == line and e["unit"] == m and e["kernels"] == kernels:
            e["iterations"] += units * m
            e["of"] += 0 if again else n
            e["units"] += units
            e["time"] += elapsed
            e["runs"] += 0 if again else 1
            e["how"] = how  # (the last run's)
            return units, cut
    report.loops.append({"line": line, "iterations": units * m, "of": n, "unit": m, "units": units,
                         "kernels": kernels, "time": elapsed, "runs": 1, "how": how,
                         "moves": placed is not None, "numbers": consts is not None})
    return units, cut


def advance(s: Any, last: _Unit, leaves: list, refs: list, rule: tuple,
            consts: dict[int, Any] | None = None) -> tuple[list, list]:
    """One more unit of ``last``'s plan, launched, on what the unit before (which read ``leaves``) kept
    (``refs``): the names' buffers hold its values. Returns its leaves and kept values (those no buffer holds
    are dropped at the session's next collection)."""
    leaves = _after(leaves, refs, rule, consts, s)
    outs = [s.leaf_for(node) for node in last.outs]
    made = s.run_plan(last.tmpl, leaves, outs)
    if s.tape is not None:
        s.tape.on_eval(last.tmpl, leaves, [(o, None) for o in outs], made)
    for buf, kind, o in last.held:
        buf.node = outs[o] if kind == "out" else refs[o]
    return leaves, outs


def _placed(s: Any, last: _Unit, first: list, rule: tuple, units: int,
            before: list | None = None) -> list[tuple[Any, list, list]]:
    """The first ``units`` units run ahead of a loop whose windows move evenly (``last.move``; ``windows.reach`` has
    checked that NumPy takes each window where it moved to), or those after ``before``'s: each unit's (plan
    placed where its windows lie, leaves, kept values). The first two units' plans are made now (a program
    is made of them), the others' when something asks (``windows.Placed``)."""
    names = tuple(k.name for k in last.tmpl.plan.kernels)
    placed: list[tuple[Any, list, list]] = []
    leaves, refs = (before[-1][1], before[-1][2]) if before else (first, last.refs)
    for u in range(len(before) + 1 if before else 1, units + 1):
        if u > 1:
            leaves = _after(leaves, refs, rule)
        t = windows.Placed(last.tmpl, leaves, windows.where_at(last.tmpl, last.move, u), names)
        if u <= 2 and t.made() is None:  # (made now)
            break
        refs = [s.leaf_for(node) for node in last.outs]
        placed.append((t, leaves, refs))
    return placed


# -- the units run ahead as one compiled program ----------------------------------------------------

class _Compiled:
    """A fast-forward's units as one compiled program: its block (``program.unit_loop``), the position among
    the first unit's leaves of each of the block's inputs, and the kept values it hands back (the last unit's,
    as the nodes it was made of). Made, and compiled, in the background where compiles run there."""

    __slots__ = ("tmpl", "backend", "blk", "job", "index", "outs")

    def __init__(self, tmpl: Any, backend: Any) -> None:
        self.tmpl, self.backend = tmpl, backend
        self.blk: Any = None  # (set last: the cell reads it once the job is done)
        self.job: Any = None
        self.index: list[int] = []
        self.outs: list = []

    def make(self, runs: list[tuple], units: int, line: int, now: bool) -> None:
        """From units' (plan, leaves, kept values): the first unit run ahead and the one after it, or all of them
        (``program.unit_loop``)."""
        first, outs_b = runs[0][1], runs[-1][2]
        blk = program.unit_loop(self.backend, runs, units, moves=runs[0][0] is not runs[1][0])
        if blk is None:
            return
        blk.source, blk.fn = self.backend.compile_program(blk)
        program.name_block(blk, f"loop{line}")
        if now:
            self.backend.compile_block(blk)
        where: dict = {}
        for i, n in enumerate(first):
            where.setdefault(n, i)
        self.index, self.outs = [where[n] for _, n in blk.inputs], outs_b
        self.blk = blk


# ((id of the plan, of the backend, rule, units, the first unit's leaves' pattern, layouts, constants), its table) -> its program
_PROGRAMS: dict[tuple, _Compiled] = {}
MAX_PROGRAMS = 64
_TABLED: dict[tuple, tuple] = {}  # (a program's key without its table of constants -> the key of the one made)


def _program(s: Any, last: _Unit, first: list, rule: tuple, units: int, line: int,
             placed: list | None, consts: list[dict[int, Any]] | None = None,
             launches: int | None = None) -> tuple[_Compiled | None, str]:
    """The ``units`` runs of ``last``'s plan as one compiled program (``program.unit_loop``: a loop around
    one run's kernels, its arrays carried from run to run), or None: launch by launch. Made once per plan,
    rule and count; in the background where compiles run there (``backends/compiler.py``: numba is not even
    imported by a first run), used once ready. Launching costs microseconds of Python a kernel, where a small
    array's kernel runs in under one: a program saves most of a fast-forwarded loop's time. Not where
    floating-point errors raise (compiled code raises none), nor where a name holds what the unit before kept
    (a program hands back the last unit's values only), nor where the user asked for kernels one by one
    (``compile_plan=False``, ``%%fuse --no-compile-plan``). Also how the units ran: "compiled", "compiling"
    (launch by launch while numba compiles the program), or "". ``placed``: each unit's plan, placed where
    its windows lie (``_placed``): the program's windows move as far each run. ``consts``: each unit's
    constants (``terms.Terms.ahead``): the program reads them from a table, one program per table. ``launches``:
    those it saves (by default its units' kernels; ``syncloops``: a program of one unit, run each step)."""
    backend, tmpl = s.backend, last.tmpl
    if launches is None:
        launches = units * len(tmpl.plan.kernels)
    if getattr(backend, "compile_block", None) is None or launches < MIN_PROGRAM_LAUNCHES \
            or any(kind == "prev" for _, kind, _ in last.held) or fperrors.errors_raise() \
            or any(n.layout is not None for n in last.outs) \
            or not s.report.options.get("compile_plan", True):  # (C-ordered arrays back; --no-compile-plan)
        return None, ""
    seen: dict = {}
    start = placed[0][0] if placed is not None else tmpl  # (the first unit's windows: where the program starts)
    shape = (id(tmpl.origin), start.where, id(backend), rule, units, tuple(seen.setdefault(n, i) for i, n in enumerate(first)),
             tuple(n.layout for n in first), tuple(n.params for i, n in enumerate(first) if n.op == "const"
                                                   and not (consts and i in consts[0])))  # (the program passes
    # the float constants it was made with: another value of ``c`` in ``u += c * v``, another program)
    key = (shape, consts and tuple(repr(v) for c in consts for v in c.values()))  # (repr: 0.0 and -0.0 apart)
    got = _PROGRAMS.get(key)
    if got is None or got.tmpl is not tmpl.origin or got.backend is not backend:
        if consts is not None and _TABLED.setdefault(shape, key) != key:
            return None, ""  # (this loop made a program of another table: an outer loop moves its numbers each run,
            # and a program made for each run would cost more than launching its units)
        if len(_TABLED) > 4 * MAX_PROGRAMS:
            _TABLED.clear()
        if len(_PROGRAMS) >= MAX_PROGRAMS:
            del _PROGRAMS[next(iter(_PROGRAMS))]
        got = _PROGRAMS[key] = _Compiled(tmpl.origin, backend)
        if placed is not None:
            runs = placed[:2]
        else:  # (two units' values, of the plan where it lies; every unit's where their constants differ)
            runs = [(tmpl, *run) for run in _runs(s, last, first, rule, units if consts is not None else 2, consts)]
        if compiler.background():
            got.job = compiler.submit(("fast-forward", id(got), object()),  # (its own job: ids are reused)
                                      lambda: got.make(runs, units, line, True))
        else:  # (numba compiles it at its first call)
            try:
                got.make(runs, units, line, False)
            except Exception:  # noqa: BLE001 - the units launch one by one, as they did
                if os.environ.get("JUPYTER_FUSE_STRICT") or os.environ.get("JUPYTER_FUSE_DEBUG"):
                    raise
    if got.job is not None:
        if not got.job.done.is_set():
            return None, "compiling"
        if got.job.error is not None:
            got.blk = None
        got.job = None
    return (got, "compiled") if got.blk is not None else (None, "")


def _runs(s: Any, last: _Unit, first: list, rule: tuple, count: int,
          consts: list[dict[int, Any]] | None) -> Iterator[tuple[list, list]]:
    """The first ``count`` units run ahead of ``last``, as (leaves, kept values: new leaves): the first reads
    ``first``, each after it what the one before kept (``rule``), with its own constants (``consts``)."""
    leaves = first
    for u in range(count):
        if u:
            leaves = _after(leaves, refs, rule, consts[u] if consts is not None else None, s)
        refs = [s.leaf_for(node) for node in last.outs]
        yield leaves, refs


def _run_program(s: Any, last: _Unit, first: list, rule: tuple, units: int, got: _Compiled,
                 placed: list | None, consts: list[dict[int, Any]] | None = None) -> list:
    """Run the program (``_program``) on the values ``last`` left; returns the last unit's kept values (new
    leaves). The plan cache's tape records each unit, as if launched one by one (with its constants:
    ``consts``)."""
    tmpl, blk, index, outs_b = last.tmpl, got.blk, got.index, got.outs
    values = s.values
    local = {node: values[first[i]] for (_, node), i in zip(blk.inputs, index)}
    names = tuple(k.name for k in tmpl.plan.kernels)  # (a plan shared between cells: named in each cell anew)
    if tuple(e["name"] for e, _ in blk.launches) != names:
        blk.launches = [(dict(e, name=name), count) for (e, count), name in zip(blk.launches, names)]
    with s._made_under(), fperrors.pending_errstate(False):
        made = fperrors.modes()
        program.run_block(blk, local, s.report, lambda node, vals: vals[node])
    tape = s.tape
    if placed is None:  # (each unit's plan, leaves and kept values; placed where its windows lie: ``_placed``)
        placed = [(tmpl, *run) for run in _runs(s, last, first, rule, units if tape is not None else 1, consts)]
    elif tape is None:
        placed = [(tmpl, first, [s.leaf_for(node) for node in last.outs])]  # (only the last unit's values are named)
    if tape is not None:
        for plan, leaves, refs in placed:
            tape.on_eval(plan, leaves, [(o, None) for o in refs], made, names)
    refs = placed[-1][2]
    for node, mine in zip(refs, outs_b):
        values[node] = local[mine]
    return refs
