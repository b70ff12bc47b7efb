"""Loops that read a value each step run ahead too: ``res = float(np.abs(u - un).max())``, ``while np.max(hi - lo) > tol``.

Fast-forward (``loops.py``) skips a loop's Python, which a loop testing a residual each step cannot do: its
Python decides, on a value the graph computes, whether to go on. But such a body's Python is of two kinds.
Its *array statements* build the same graph each step (``un = u.copy()``, ``u[1:-1] = ...``); its *scalar
statements* only count, compare and keep Python numbers (``it += 1``, ``if res < tol: break``,
``hist.append(res)``), and read the graph once, at one *site* (the ``np.abs(u - un).max()`` that ``float()``
converts, a test on arrays). So ``mark`` gives such a loop a second body, of its scalar statements only, the
site replaced by the value the plan computes:

    while it < maxit and res > tol:             while it < maxit and res > tol:
        un = u.copy()                               if L.ahead:
        u[1:-1] = ...un[2:]...            ->            res = float(L.value())
        res = float(np.abs(u - un).max())               it += 1
        it += 1                                     else:
                                                        un = u.copy(); u[1:-1] = ...
                                                        res = float(L.site(np.abs(u - un).max()))
                                                        it += 1

Each step is traced until two steps' graphs, cut at the site (``loops._end_unit``: a unit ends there), make
the same plan, each read what the one before kept (``loops._Unit.reads``); from then on each step runs that
plan (``loops.advance``; after a few steps one compiled call of its kernels, ``loops._program``) and only the
scalar statements are Python: no trace, no plan. The value Python reads is the plan's, read as tracing reads it
(a lazy array over it: the same sync, the same record on the plan cache's tape), so Python decides as NumPy's
run would. Each name keeps its buffer and gets its value (one the step before kept where it took what another
name computed: ``lam = lam_new``).

Array statements after the site (``if res < tol: break`` then ``x = x + a * r``) are the next step's plan's:
a step run ahead skips them, and where the loop ends but by its ``break`` (a ``while`` test, the ``range``'s
end) its ``else`` runs them as Python (``owed``). Statements after the site that only read arrays (``_reader``:
``hist.append(u.mean())`` every few steps, a print) are Python's, on what the step's plan computed.

That is right only where skipping the array statements skips nothing else, which ``_analyse`` checks in the
source: the array statements are what ``loops.mark`` lets a fast-forwarded body do; the scalar statements
read no array but at the site (or, reading, after it), and call only builtins (``float``, ``max``, ``print``,
a list's ``append``); the array statements and the site read no number the scalar statements or the loop
variable change (a plan holds its numbers); no ``break`` lies between the array statements and the site, and
nothing but array statements after those after it (an exit or an error there would skip what the plan computes
later). At run time each unit is checked as ``loops.py`` checks its units (the user's own arrays trading names
keep the loop traced: which of them a name ends in depends on the count), and the names the scalar
statements read must hold numbers, lists of numbers or of values the loop kept, or modules, when the loop goes
ahead.
"""

from __future__ import annotations

import ast
import builtins
import copy
import sys
import time
import types
from typing import Any

from . import fperrors, loops
from .capture import unwrap_module
from .trace import Buffer, LazyArray

MAX_UNITS_TRIED = 6  # steps whose units are matched before the loop is left traced
PROGRAM_AFTER = 8  # steps run ahead kernel by kernel before one asks for a compiled program of a step's kernels
PENDING = 256  # ops traced by statements reading arrays (``_reader``) from which a step run ahead computes them
_CONVERT = {"float", "int", "bool", "complex"}
_SCALAR_CALLS = (loops._CALLS | {"print"}) - {"range"}  # (calls the scalar statements may make by a bare name)
_SCALAR_EXPRS = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Tuple,
                 ast.Call, ast.Subscript, ast.keyword, ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
                 ast.expr_context)


# -- the source --------------------------------------------------------------------------------------

def transform(stmt: ast.stmt, functions: dict) -> list[ast.stmt] | None:
    """The statements that run ``stmt`` (a loop reading a value each step, ``_analyse``) with a second body of
    its scalar statements (the module docstring), or None where it is not one."""
    found = _analyse(stmt, functions)
    if found is None:
        return None
    site, kinds, assigned, loaded, calls, checked, trailing = found
    state = f"_jupyter_fuse_loop{stmt.lineno}"

    def name() -> ast.Name:
        return ast.Name(state, ast.Load())

    def value() -> ast.expr:
        return ast.Call(ast.Attribute(name(), "value", ast.Load()), [], [])

    residue = []
    for s, kind in zip(stmt.body, kinds):
        if kind != "array":  # (statements of numbers, and those reading arrays: ``_analyse``)
            memo: dict = {}
            c = copy.deepcopy(s, memo)
            if id(site) in memo:
                _replace(c, memo[id(site)], value())
            residue.append(c)
    traced = ast.Call(ast.Attribute(name(), "site", ast.Load()), [site], [])
    if isinstance(stmt, ast.While) and any(n is site for n in ast.walk(stmt.test)):
        stmt.test = _replace(stmt.test, site, ast.IfExp(ast.Attribute(name(), "ahead", ast.Load()), value(), traced))
    else:
        for s in stmt.body:
            _replace(s, site, traced)
    if trailing:  # (a step run ahead leaves its last array statements to the next step's plan, from the step whose
        # site matched on; where the loop ends but by a ``break``, Python runs them: the names hold what the last
        # step's plan computed, as they would there)
        stmt.orelse = [ast.If(ast.Attribute(name(), "owed", ast.Load()), copy.deepcopy(stmt.body[-trailing:]), [])]
        stmt.body[-trailing:] = [ast.If(ast.UnaryOp(ast.Not(), ast.Attribute(name(), "ahead", ast.Load())),
                                        stmt.body[-trailing:], [])]
    stmt.body = [ast.If(ast.Attribute(name(), "ahead", ast.Load()), residue or [ast.Pass()], stmt.body)]
    # (by import, not by a name of the cell's: a function the cell defines may be called anywhere later)
    module = ast.Attribute(ast.Call(ast.Name("__import__", ast.Load()), [ast.Constant(__name__)], []),
                           "syncloops", ast.Load())
    start = ast.Assign([ast.Name(state, ast.Store())], ast.Call(ast.Attribute(module, "start", ast.Load()), [
        ast.Constant(stmt.lineno), ast.Constant(assigned), ast.Constant(loaded), ast.Constant(calls),
        ast.Constant(checked)], []))
    # (the name goes with the loop: the cell's namespace holds only the user's)
    out = [start, ast.Try([stmt], [], [], [ast.Delete([ast.Name(state, ast.Del())])])]
    for s in out:
        ast.copy_location(s, stmt)
        ast.fix_missing_locations(s)
    return out


def _analyse(stmt: ast.stmt, functions: dict) -> tuple | None:
    """(the site, each body statement's kind: "array", "scalar" or "reader", the names array statements bind, the
    names they and the site read from outside the loop, the functions of the cell they call, the names the scalar
    statements read and bind, how many array statements follow the site) of a loop reading one value a step (the
    module docstring), or None."""
    if isinstance(stmt, ast.While):
        test, target = stmt.test, None
    elif isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and isinstance(stmt.iter, ast.Call) \
            and isinstance(stmt.iter.func, ast.Name) and stmt.iter.func.id == "range":
        test, target = None, stmt.target.id
    else:
        return None
    if stmt.orelse or not stmt.body:
        return None
    arrays = _arrays(stmt.body, test)
    sites: list[tuple[int, ast.expr]] = []  # (the statement's position, the site)
    scalars: dict[str, None] = {}  # (names the scalar statements bind)
    reads: dict[str, None] = {}  # (... and read)
    kinds = []
    for i, s in enumerate(stmt.body):
        if _scalar_stmt(s, arrays):
            kinds.append("scalar")
            found = _stmt_sites(s, arrays)
            for n in _outside(s, found):
                (scalars if isinstance(n.ctx, ast.Store) else reads)[n.id] = None
            sites += [(i, e) for e in found]
        elif _reader(s, arrays):
            kinds.append("reader")
            reads.update((n.id, None) for n in ast.walk(s) if isinstance(n, ast.Name))
        else:
            kinds.append("array")
    if test is not None:
        found = _sites(test, arrays, True)
        if found is None:
            return None
        sites += [(len(stmt.body), e) for e in found]
        reads.update((n.id, None) for n in _outside(test, found))
    if len(sites) != 1:
        return None
    at, site = sites[0]
    body = [s for s, kind in zip(stmt.body, kinds) if kind == "array"]
    assigned: dict[str, None] = {}
    loaded: dict[str, None] = {}
    calls: dict[str, None] = {}
    if not body or not loops._computes(body, assigned, loaded, calls, functions) \
            or not loops._pure(site, loaded, calls, functions):
        return None
    # (a plan holds its numbers: none the steps change)
    changed = {*scalars, *([target] if target else [])}
    if any(name in changed for name in loaded) or any(name in arrays for name in scalars):
        return None
    first = kinds.index("array")
    rest = kinds[at + 1:]
    after = rest[rest.index("array"):] if "array" in rest else []
    trailing = len(after)  # (array statements after the site: the step's last, owed where the loop ends, ``transform``)
    if "scalar" in after or "reader" in after:
        return None  # (a statement of numbers after them: an exit there, or an error, would skip what they compute)
    if "reader" in kinds[first:at]:
        return None  # (arrays read where a step run ahead has not computed them yet: read them after the site)
    if any(any(isinstance(n, ast.Break) for n in ast.walk(s)) for s in stmt.body[first:at]):
        return None  # (an exit between the array statements and the site)
    for name in calls:
        loaded.update(dict.fromkeys(functions[name][1]))
    loaded = {n: None for n in loaded if n not in assigned}
    checked = tuple(n for n in {**scalars, **reads} if n not in arrays and n != target)
    return site, kinds, tuple(assigned), tuple(loaded), tuple((n, functions[n][0]) for n in calls), checked, trailing


def _outside(tree: ast.AST, sites: list[ast.expr]) -> list[ast.Name]:
    """The names in ``tree`` outside its ``sites``."""
    out, todo = [], [tree]
    while todo:
        n = todo.pop()
        if any(n is e for e in sites):
            continue
        if isinstance(n, ast.Name):
            out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _arrays(body: list[ast.stmt], test: ast.expr | None) -> set[str]:
    """The names of arrays the loop changes: those it stores into, indexes or calls methods of (but a list's
    ``append``), those its sites read, those of statements on arrays (not ``_scalar_stmt``), and so on."""
    changed: set[str] = set()
    for s in body:
        for t in s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AugAssign) else []:
            for e in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                while isinstance(e, (ast.Subscript, ast.Attribute, ast.Starred)):
                    e = e.value
                if isinstance(e, ast.Name):
                    changed.add(e.id)
    lists = {n.func.value.id for s in body for n in ast.walk(s) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "append" and isinstance(n.func.value, ast.Name)}
    arrays = {n.value.id for tree in [*body, *([test] if test is not None else [])] for n in ast.walk(tree)
              if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.value, ast.Name)} & changed - lists
    while True:
        before = len(arrays)
        for s in body:
            if not _scalar_stmt(s, arrays):
                if isinstance(s, (ast.Assign, ast.AugAssign)):
                    arrays |= {t.id for t in ast.walk(s) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
                continue
            for e in _stmt_sites(s, arrays):
                arrays |= {n.id for n in ast.walk(e) if isinstance(n, ast.Name)} & changed
        for e in _sites(test, arrays, True) or [] if test is not None else []:
            arrays |= {n.id for n in ast.walk(e) if isinstance(n, ast.Name)} & changed
        if len(arrays) == before:
            return arrays


def _scalar_stmt(s: ast.stmt, arrays: set[str]) -> bool:
    """A statement of Python numbers: it binds names no array statement binds, reads arrays only at sites, and
    calls only builtins (and a list's ``append``); an ``if`` of such statements, a ``break``, a ``pass``."""
    if isinstance(s, (ast.Break, ast.Pass)):
        return True
    if isinstance(s, ast.Assign):
        targets, value = s.targets, s.value
    elif isinstance(s, ast.AugAssign):
        targets, value = [s.target], s.value
    elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        call = s.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and isinstance(call.func.value, ast.Name) \
                and call.func.value.id not in arrays and len(call.args) == 1 and not call.keywords:
            return _sites(call.args[0], arrays) is not None
        return isinstance(call.func, ast.Name) and call.func.id == "print" and _sites(call, arrays) is not None
    elif isinstance(s, ast.If):
        return _sites(s.test, arrays, True) is not None \
            and all(_scalar_stmt(b, arrays) and not _stmt_sites(b, arrays) for b in s.body + s.orelse)
    else:
        return False
    for t in targets:
        for e in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
            if not isinstance(e, ast.Name) or e.id in arrays:
                return False
    return _sites(value, arrays) is not None


# what a statement reading arrays may call (``_reader``): computations whose result is a new array or number
_READS = {"mean", "sum", "max", "min", "std", "var", "prod", "abs", "absolute", "sqrt", "square", "exp", "log",
          "copy", "astype", "any", "all", "argmax", "argmin", "dot", "norm", "round", "isfinite", "isnan",
          "count_nonzero", "median", "ptp", "maximum", "minimum", "clip", "sign", "trace", "amax", "amin"}


def _reader(s: ast.stmt, arrays: set[str]) -> bool:
    """A statement that reads arrays without changing one: a print (``print(it, u[:3])``), a new value kept in a
    list (``hist.append(u.mean())``: not ``u`` itself, nor a view of it), an ``if`` of numbers over such
    statements (a checkpoint). Where the site's step left the arrays (``_analyse``), it reads what the step's
    plan computed, run ahead as traced."""
    if isinstance(s, ast.If):
        return _sites(s.test, arrays, True) == [] and bool(s.body) \
            and all(_reader(b, arrays) or _scalar_stmt(b, arrays) and not _stmt_sites(b, arrays) for b in s.body + s.orelse)
    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
        return False
    call = s.value
    if isinstance(call.func, ast.Name) and call.func.id == "print":
        return all(_reading(e) for e in [*call.args, *(k.value for k in call.keywords)])
    return isinstance(call.func, ast.Attribute) and call.func.attr == "append" and isinstance(call.func.value, ast.Name) \
        and call.func.value.id not in arrays and len(call.args) == 1 and not call.keywords \
        and isinstance(call.args[0], (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare)) and _reading(call.args[0])


def _reading(e: ast.expr) -> bool:
    """An expression that computes on arrays and changes none: builtins and ``_READS`` calls, no ``out=``."""
    for n in ast.walk(e):
        if not isinstance(n, loops._EXPRS) or isinstance(n, ast.keyword) and n.arg == "out":
            return False
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _SCALAR_CALLS
                                            or isinstance(n.func, ast.Attribute) and n.func.attr in _READS):
            return False
    return True


def _stmt_sites(s: ast.stmt, arrays: set[str]) -> list[ast.expr]:
    """The sites of a scalar statement (``_scalar_stmt``); a site inside an ``if``'s branches is not one of its
    steps' (the ``if`` does not hold it)."""
    if isinstance(s, ast.If):
        return _sites(s.test, arrays, True) or []
    if isinstance(s, (ast.Assign, ast.AugAssign)):
        return _sites(s.value, arrays) or []
    if isinstance(s, ast.Expr):  # (``print(...)``, ``hist.append(...)``)
        call = s.value
        return _sites(call.args[0] if isinstance(call.func, ast.Attribute) else call, arrays) or []  # type: ignore[attr-defined]
    return []


def _sites(e: ast.expr, arrays: set[str], test: bool = False, cond: bool = False) -> list[ast.expr] | None:
    """The sites in ``e``: the expressions of arrays that Python reads as a value (``float(...)``, ``int``,
    ``bool``, ``complex``, ``.item()``, a test: ``test``, or an operand of ``and``/``or``/``not`` in one); None
    where ``e`` computes on arrays elsewhere, calls more than builtins, or holds a site it may not evaluate
    (``cond``: after an ``and``'s first operand, in an ``if``-expression's branch): each step reads its site."""
    if test and isinstance(e, ast.BoolOp):
        out: list[ast.expr] = []
        for i, v in enumerate(e.values):
            got = _sites(v, arrays, True, cond or i > 0)
            if got is None:
                return None
            out += got
        return out
    if test and isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return _sites(e.operand, arrays, True, cond)
    if _number(e, arrays):
        return []
    if cond or isinstance(e, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
        return None  # (``un is u``: no value of the graph's)
    if test:  # (a test of numbers Python converted, ``float(r.max()) > tol``, or of arrays, ``r.max() > tol``)
        got = _sites(e, arrays)
        return got if got is not None else [e]
    if isinstance(e, ast.Call) and not e.keywords and len(e.args) == 1 and isinstance(e.func, ast.Name) \
            and e.func.id in _CONVERT and not isinstance(e.args[0], ast.Starred):
        return [e.args[0]]
    if isinstance(e, ast.Call) and not e.keywords and not e.args and isinstance(e.func, ast.Attribute) \
            and e.func.attr == "item":
        return [e.func.value]
    if not isinstance(e, _SCALAR_EXPRS) or isinstance(e, ast.Name) or isinstance(e, ast.Call) \
            and not (isinstance(e.func, ast.Name) and e.func.id in _SCALAR_CALLS):
        return None
    out = []
    for c in ast.iter_child_nodes(e):
        if isinstance(c, ast.keyword):
            c = c.value
        if not isinstance(c, ast.expr):
            continue
        maybe = isinstance(e, ast.IfExp) and c is not e.test or isinstance(e, ast.BoolOp) and c is not e.values[0]
        got = _sites(c, arrays, False, maybe)
        if got is None:
            return None
        out += got
    return out


def _number(e: ast.AST, arrays: set[str]) -> bool:
    """An expression of Python numbers: no array, and no call but of a builtin."""
    for n in ast.walk(e):
        if not isinstance(n, _SCALAR_EXPRS) or isinstance(n, ast.Name) and n.id in arrays:
            return False
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _SCALAR_CALLS):
            return False
    return True


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> ast.AST:
    """``tree`` with the node ``old`` (itself, not an equal one) replaced by ``new``."""
    if tree is old:
        return new
    for node in ast.walk(tree):
        for field, v in ast.iter_fields(node):
            if v is old:
                setattr(node, field, new)
                return tree
            if isinstance(v, list):
                for i, x in enumerate(v):
                    if x is old:
                        v[i] = new
                        return tree
    return tree


# -- the run -----------------------------------------------------------------------------------------

class Loop:
    """One run of a marked loop: its steps traced until two units match, then run ahead (``value``)."""

    __slots__ = ("ahead", "owed", "done", "s", "frame", "line", "arrays", "loaded", "calls", "checked", "events", "ops",
                 "prev", "where", "last", "rule", "leaves", "refs", "tried", "entry", "stepped", "program")

    def __init__(self, s: Any, frame: Any, line: int, arrays: tuple[str, ...], loaded: tuple[str, ...],
                 calls: dict[str, int], checked: tuple[str, ...]) -> None:
        self.ahead = False  # (the loop's Python reads it each step: which body runs)
        self.owed = False  # (the last step ran ahead: its array statements after the site are the next step's)
        self.done = s is None  # (no more units to match: the loop runs on as it does)
        self.s, self.frame, self.line = s, frame, line
        self.arrays, self.loaded, self.calls, self.checked = arrays, loaded, calls, checked
        self.events: tuple | None = None
        self.ops = s.report.ops if s is not None else 0
        self.prev: Any = None
        self.where: tuple | None = None  # (the site's value: a kept value's position, its view, scalar or not)
        self.last: Any = None
        self.rule: tuple | None = None
        self.leaves: list = []
        self.refs: list = []
        self.tried = 0
        self.stepped = 0  # (steps run ahead)
        self.program: Any = None  # (``loops._Compiled``: a step's kernels as one compiled call, once made)
        self.entry: dict | None = None

    def site(self, v: Any) -> Any:
        """A traced step reads ``v``: its unit ends here (``loops._end_unit``); the loop goes ahead from the
        next step where this unit's plan is the one before's, read on what it kept."""
        s = self.s
        if self.done or type(v) is not LazyArray or v._s is not s:
            self.done = True
            return v
        unit = loops._end_unit(s, self.frame, self.arrays, self.loaded, self.calls, self.events,
                               s.report.ops - self.ops, self.prev, trades=True)  # (a step at a time: ``value``
        # keeps each name on its own buffer and sets its value, which may be one the step before kept)
        self.tried += 1
        self.ops = s.report.ops
        if unit is None or unit is loops._SWAPPED:  # (Python did more than make the graph, a checkpoint's print:
            self.done = self.tried >= MAX_UNITS_TRIED  # matched anew from the next step)
            self.prev = self.events = None
            return v
        s.evaluate([v._current()])  # (a view's value too: its sync then reads it, here and ahead)
        self.events = (s.events + 1, fperrors.state())  # (+1: this site's own sync)
        position = {ref: o for o, ref in enumerate(unit.refs) if ref is not None}
        o = position.get(v._buf.node)
        where = (o, v._chain, v.scalar) if o is not None else None
        rule = unit.reads(self.prev) if self.prev is not None and where is not None and where == self.where else None
        if rule is not None and self._plain():
            self.ahead, self.last, self.rule, self.leaves, self.refs = True, unit, rule, unit.leaves, unit.refs
            self.owed = True  # (this step's array statements after the site are the next plan's)
        self.prev, self.where = unit, where
        self.done = self.ahead or self.tried >= MAX_UNITS_TRIED
        return v

    def _plain(self) -> bool:
        """Do the names the scalar statements read hold numbers, strings, lists of numbers or of values the loop
        kept (or builtins, modules)? Then what they do is Python's alone, whatever ran the arrays."""
        lookup = loops._lookup(self.s, self.frame)
        for name in self.checked:
            v = lookup(name)
            if v is loops._MISSING or isinstance(v, loops._NUMBERS) and type(v) is not LazyArray:
                continue
            if type(v) is list and all(isinstance(x, loops._NUMBERS) or type(x) is LazyArray for x in v):
                continue  # (values the loop kept: a lazy one, ``hist.append(u.mean())``, is an array of its own)
            if name in _SCALAR_CALLS and v is getattr(builtins, name, None) \
                    or isinstance(unwrap_module(v), types.ModuleType):  # (``np.mean`` in a statement reading arrays)
                continue
            return False
        return True

    def value(self) -> LazyArray:
        """A step run ahead: the plan's run on what the last step kept; the value Python reads at the site."""
        s, last = self.s, self.last
        if s.pending > PENDING:  # (what statements reading arrays traced, each on a value a plan computed: held
            s.flush()  # until computed, so computed every few steps, not at the graph's bound)
        t0 = time.perf_counter()
        run0 = s.report.times["run"]
        got, first = self.program, None
        if got is None and self.stepped >= PROGRAM_AFTER and self.stepped % PROGRAM_AFTER == 0:
            first = loops._after(self.leaves, self.refs, self.rule)
            got = loops._program(s, last, first, self.rule, 1, self.line, None,
                                 launches=self.stepped * len(last.tmpl.plan.kernels))[0]
            self.program = got  # (the same for every step: the same plan, on what the step before kept)
        if got is not None:  # (a step's kernels as one compiled call: launching each costs microseconds)
            if first is None:
                first = loops._after(self.leaves, self.refs, self.rule)
            refs = loops._run_program(s, last, first, self.rule, 1, got, None)
            for buf, _, o in last.held:  # (no "prev": ``loops._program``)
                buf.node = refs[o]
            self.leaves, self.refs = first, refs
        else:
            self.leaves, self.refs = loops.advance(s, last, self.leaves, self.refs, self.rule)
        self.stepped += 1
        self.owed = True
        s.report.ops += last.ops
        o, chain, scalar = self.where  # type: ignore[misc]
        buf = Buffer(self.refs[o])
        v = LazyArray(s, buf, chain, scalar=scalar)
        s.settled[id(buf)] = buf  # (a computed value a live array holds: kept by the collection below)
        if len(s.values) > s._gc_at:
            s._collect()
        if chain:
            s.evaluate([v._current()])
        elapsed = time.perf_counter() - t0
        s.report.times["run"] = run0 + elapsed - s._compile_delta()
        e = self.entry
        if e is None:  # (a loop run again, inside another loop or a function called again: one entry)
            kernels = len(last.tmpl.plan.kernels)
            e = next((e for e in s.report.loops if e["line"] == self.line and e.get("reads") and e["kernels"] == kernels),
                     None)
            if e is None:
                e = {"line": self.line, "iterations": 0, "of": 0, "unit": 1, "units": 0, "kernels": kernels,
                     "time": 0.0, "runs": 0, "how": "", "moves": False, "numbers": False, "reads": True}
                s.report.loops.append(e)
            self.entry = e
            e["of"] += self.tried  # (the steps traced)
            e["runs"] += 1
        e["iterations"] += 1
        e["units"] += 1
        e["of"] += 1
        e["time"] += elapsed
        e["how"] = "step" if got is not None else e["how"]
        return v


def start(line: int, arrays: tuple[str, ...], loaded: tuple[str, ...], calls: tuple[tuple[str, int], ...],
          checked: tuple[str, ...]) -> Loop:
    """A marked loop starts (``transform``): its state, which never goes ahead outside a traced run."""
    from .session import active

    s = active()
    frame = sys._getframe(1)  # (the loop's: the cell's, or a function's it defines)
    if s is None or not loops.enabled() or s.namespace is None or frame.f_globals is not s.namespace:
        s = None
    return Loop(s, frame if s is not None else None, line, arrays, loaded, dict(calls), checked)
