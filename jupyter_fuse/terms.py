"""Numbers a loop computes from its variable: ``x = x * (1 - 1 / (i + 2))``, ``u += dt * np.sin(w * i * dt)``.

Each iteration of such a loop makes the same plan (a plan serves every value of its float constants,
``ops.const_key``) with other constants. A fast-forward (``loops.py``) runs units ahead where it knows each
constant of each unit ahead: every subexpression of the body that reads the loop variable and computes
a number (``candidates``) is computed for the iterations ahead by a function of its own (``Terms``), and a
constant that changed from the unit before is that of the one subexpression, at the one iteration of the
unit, that gave both units' values (``Terms.resolve``). Where none or several do, the loop is traced.

Why that is right: between two units, only what the loop variable computes can change a constant (the body
binds arrays only, reads numbers that do not change, and syncs nothing: ``loops._end_unit``), and every
computation on the variable is one of the subexpressions: the source check lets the variable be read
nowhere else (not in an index: ``windows.py``; not by a function of the cell's). A subexpression that is
not the constant's source and still gives both units' values is a second match: the loop is traced. A
constant that did not change may still be one (``k > 100`` is False for a while): one that a subexpression
gives refuses the loop too. And each outermost subexpression's value must be one of the graph's constants at
every iteration of the unit: else it picked a branch or set a parameter, which would differ further on.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import warnings
from typing import Any

import numpy as np

# what a subexpression of numbers may be made of: arithmetic, comparisons, a few builtins, module functions
_NODES = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Call,
          ast.Attribute, ast.keyword, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)
_BUILTINS = {"abs": abs, "min": min, "max": max, "round": round, "pow": pow, "float": float, "int": int,
             "bool": bool, "complex": complex}
_MODULES = ("numpy", "math", "cmath")  # (whose functions of numbers compute, and only compute)
_NUMBERS = (bool, int, float, complex, np.number, np.bool_)
MAX_TERMS = 32  # subexpressions at most (a longer body is traced)


def candidates(body: list[ast.stmt], target: str, assigned: Any,
               functions: Any) -> tuple[tuple[str, tuple[str | None, ...]], ...] | None:
    """Every subexpression of ``body`` that reads ``target`` and may compute a number (names the body does not
    bind, constants, arithmetic, builtins, attributes of names: checked at run time, ``Terms``): its source, and
    the sources of the subexpressions of that kind it lies in (None: in none, where it meets the arrays). None
    where ``target`` is read as an index or passed to a function of the cell's (what that makes of it is not in
    the body)."""
    found: dict[str, dict[str | None, None]] = {}

    def visit(e: ast.AST, around: str | None) -> bool:
        if isinstance(e, ast.Subscript) and _reads(e.slice, target):
            return False
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in functions \
                and any(_reads(a, target) for a in [*e.args, *e.keywords]):
            return False
        if isinstance(e, ast.expr) and _reads(e, target) and _numeric(e, assigned):
            src = ast.unparse(e)
            found.setdefault(src, {})[around] = None
            around = src
        return all(visit(c, around) for c in ast.iter_child_nodes(e))

    if not all(visit(stmt, None) for stmt in body) or not found or len(found) > MAX_TERMS:
        return None
    return tuple((src, tuple(around)) for src, around in found.items())


def _reads(e: ast.AST, target: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == target for n in ast.walk(e))


def _numeric(e: ast.expr, assigned: Any) -> bool:
    for n in ast.walk(e):
        if not isinstance(n, _NODES) or isinstance(n, ast.Name) and n.id in assigned:
            return False
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _BUILTINS
                                            or isinstance(n.func, ast.Attribute)):
            return False
    return True


@functools.lru_cache(maxsize=512)
def names(sources: tuple[str, ...], target: str) -> tuple[str, ...]:
    """The names the subexpressions read, the loop variable first."""
    read = dict.fromkeys([target])
    for src in sources:
        read.update(dict.fromkeys(n.id for n in ast.walk(ast.parse(src, mode="eval")) if isinstance(n, ast.Name)
                                  and n.id not in _BUILTINS))
    return tuple(read)


@functools.lru_cache(maxsize=512)
def _function(source: str, args: tuple[str, ...]) -> Any:
    return eval(f"lambda {', '.join(args)}: ({source})", {"__builtins__": _BUILTINS})  # noqa: S307


class Terms:
    """The subexpressions (``candidates``) as functions of the loop variable, on the values their other names
    hold now (numbers, and NumPy's or math's functions); those that read anything else are left out (an array:
    not a number). ``outer``: those the arrays meet (not inside another that computes here): each of their values
    must be a constant of the graph, where ``resolve`` finds it."""

    def __init__(self, found: tuple[tuple[str, tuple[str | None, ...]], ...], target: str, lookup: Any) -> None:
        from .capture import unwrap_module

        values: dict[str, Any] = {}
        self.fns: list[Any] = []
        index: dict[str, int] = {}
        for src, _ in found:
            used = names((src,), target)
            args = []
            for name in used[1:]:
                if name not in values:
                    v = lookup(name)
                    if isinstance(v, _NUMBERS) or getattr(unwrap_module(v), "__name__", None) in _MODULES:
                        values[name] = unwrap_module(v)  # (the real module: a lazy one would trace its calls)
                args.append(values.get(name, _NO))
            if _NO not in args:
                index[src] = len(self.fns)
                fn = _function(src, used)
                self.fns.append(fn if not args else _bind(fn, tuple(args)))
        self.outer = [index[src] for src, around in found if src in index
                      and any(a is None or a not in index for a in around)]

    def value(self, k: int, i: int) -> Any:
        return self.fns[k](i)

    def resolve(self, rule: tuple, a: list, b: list, values: dict, r: range, ja: int, jb: int, m: int) -> tuple | None:
        """``rule`` with each changed constant (``"c"``) as ("s", subexpression, iteration of its unit), from the
        constants of two units (leaves ``a``, ``b``) whose iterations start at ``r[ja]`` and ``r[jb]``. None where a
        constant matches no subexpression or several; where one that did not change matches one (it may change
        later: ``k > 100``); where an outer subexpression's value is no constant of the graph (a branch it
        picks, a parameter: the plan would differ further on)."""
        seen: dict[tuple, list[tuple[int, int]]] = {}
        with _strict():
            for k in range(len(self.fns)):
                for t in range(m):
                    try:
                        pair = (self.value(k, r[ja + t]), self.value(k, r[jb + t]))
                    except Exception:  # noqa: BLE001 - not this one's value (a branch Python did not take)
                        if k in self.outer:
                            return None
                        continue
                    seen.setdefault((_key(pair[0]), _key(pair[1])), []).append((k, t))
        out, found = [], set()
        for entry, x, y in zip(rule, a, b):
            if entry is None and x.op == "const" and (_key(values[x]),) * 2 in seen:
                return None
            if entry != "c":
                out.append(entry)
                continue
            got = seen.get((_key(values[x]), _key(values[y])), [])
            if len(got) != 1:
                return None
            out.append(("s", *got[0]))
            found.add(got[0])
        if any((k, t) not in found for k in self.outer for t in range(m)):
            return None
        return tuple(out)

    def ahead(self, rule: tuple, r: range, j: int, m: int, units: int) -> list[dict[int, Any]]:
        """Each unit's changed constants (position among its leaves -> value), for the units from ``r[j]`` on;
        as many units as compute without raising or warning (that iteration is traced, and does so there)."""
        wanted = [(p, entry[1], entry[2]) for p, entry in enumerate(rule) if type(entry) is tuple]
        out = []
        with _strict():
            for u in range(units):
                try:
                    out.append({p: self.value(k, r[j + u * m + t]) for p, k, t in wanted})
                except Exception:  # noqa: BLE001
                    break
        return out


_NO = object()


def _key(v: Any) -> tuple:
    """A constant's identity: its type and value (repr: 0.0 and -0.0 apart, NaN equal to NaN)."""
    return type(v), repr(v)


@contextlib.contextmanager
def _strict() -> Any:
    """A number NumPy would warn of (``np.log(0.0)``) raises here: the unit is traced, and warns there."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _bind(fn: Any, args: tuple) -> Any:
    return lambda i: fn(i, *args)
