"""Boolean-mask writes traced as elementwise ``np.where``: ``x[mask] = number`` and ``x[mask] += number``.

A mask selects a data-dependent number of elements, so ``x[mask]`` (a read) runs as NumPy, eagerly: a
sync and a call every time a loop comes by. But a *write* through a mask of x's own shape is elementwise:
``x[mask] = v`` is ``x = np.where(mask, v, x)``, which fuses with the ops that made the mask and replays
inside a compiled loop (``x[x < 0] = 0``, ``counts[mask & escaped] = i``).

``x[mask] += c`` reads before it writes: Python runs ``tmp = x[mask]; tmp += c; x[mask] = tmp``. When the
read is that first step (its bytecode: ``COPY 2; COPY 2; BINARY_SUBSCR``, which only an augmented
assignment to a subscript emits), it returns a :class:`MaskedItem` instead of running: the in-place op
with a number is done on a copy of the whole of x (``full += c``: NumPy's casting rules and errors for
those dtypes), and the store writes ``np.where(mask, full, x)``. Anything else done with it, or a mask
changed in between, makes the masked read as NumPy would have made it, from copies taken at the read.
"""

from __future__ import annotations

import ast
import dis
import linecache
import operator
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .fperrors import errors_raise
from .ir import Node
from .trace import LazyArray, astype, at_site, elementwise, instruction_at

# the bytes of `COPY 2; COPY 2; BINARY_SUBSCR` (CPython 3.11-3.13; 3.14 subscripts with BINARY_OP: none)
_AUGMENTED = (bytes([dis.opmap["COPY"], 2, dis.opmap["COPY"], 2, dis.opmap["BINARY_SUBSCR"]])
              if {"COPY", "BINARY_SUBSCR"} <= dis.opmap.keys() else None)


def _augmented_read(code: Any, at: int) -> bool:
    """Is the subscript executed at ``at`` the read of an augmented assignment to a subscript?"""
    raw = code.co_code
    at = instruction_at(raw, at, _AUGMENTED[-1])
    return at >= 4 and raw[at - 4:at + 1] == _AUGMENTED


def _whole_mask(x: LazyArray, mask: Any) -> bool:
    """A traced boolean array of x's shape, in a fused run (the numpy backend counts NumPy's own calls)."""
    return (type(mask) is LazyArray and mask.dtype == np.bool_ and not mask.scalar and mask.ndim > 0
            and mask.shape == x.shape and x._s.fuses)


def _rows(x: LazyArray, index: Any) -> tuple[LazyArray, Any]:
    """``x[mask, 1]`` (a boolean mask, then ints and slices) is ``x[:, 1][mask]``: (that view, the mask).
    Any other index: (x, index). (``pos[below, 1] *= -1``: a bounce, written through the column's view.)"""
    if type(index) is tuple and len(index) > 1 and type(index[0]) is LazyArray and index[0].dtype == np.bool_ \
            and all(type(i) in (int, slice) for i in index[1:]):
        try:
            return x[(slice(None),) + index[1:]], index[0]
        except IndexError:  # (NumPy's own error comes from the eager path)
            pass
    return x, index


def _concrete_number(v: Any) -> bool:
    """A Python or NumPy number (its value is known now; a lazy NumPy scalar passes isinstance, not this)."""
    return type(v) in (bool, int, float, complex) or type(v) is not LazyArray and isinstance(v, np.generic)


def _number(v: Any) -> bool:
    """A value that broadcasts to any selection: a Python or NumPy number, or a 0-d lazy one."""
    return _concrete_number(v) or type(v) is LazyArray and v.ndim == 0


def fill(x: LazyArray, mask: Any, value: Any) -> bool:
    """``x[mask] = value`` as ``np.where(mask, value, x)`` written into x, for a whole mask and a Python or
    NumPy number stored as NumPy stores it: NumPy's own masked assignment on a one-element probe raises
    what it raises and gives the value. One it warns about (a NaN cast into integers) goes the eager way,
    as does a lazy value (its cast is data). True if done here."""
    if not _concrete_number(value):
        return False
    x, mask = _rows(x, mask)
    if not _whole_mask(x, mask):
        return False
    probe = np.zeros(1, x.dtype)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        probe[np.ones(1, np.bool_)] = value  # (NumPy's OverflowError, ValueError, TypeError)
    if warned:
        return False
    return _write_where(x, mask, probe[0])


def _write_where(x: LazyArray, mask: LazyArray, value: Any) -> bool:
    filled = elementwise("where", [mask, value, x], keep_order=False)
    node = filled if type(filled) is Node else filled._current()
    if node.dtype != x.dtype or node.shape != x.shape:  # (not expected: np.where keeps both)
        return False
    x._write(node)
    return True


def item(x: LazyArray, mask: Any) -> "MaskedItem | None":
    """``x[mask]`` read by ``x[mask] op= ...``, deferred (see the module docstring); None otherwise."""
    # (sys._getframe(2): the caller of LazyArray.__getitem__; under np.errstate(...='raise'), ops on the
    # elements the mask leaves out could raise)
    if _AUGMENTED is None or errors_raise() or not at_site(sys._getframe(2), _augmented_read):
        return None
    x, mask = _rows(x, mask)
    if not _whole_mask(x, mask):
        return None
    return MaskedItem(astype(x, x.dtype, copy=True, count=False), mask, mask._current(),
                      astype(mask, mask.dtype, copy=True, count=False))


class MaskedItem:
    """``x[mask]``, not read yet: ``full`` is a copy of x at the read, ``old_mask`` one of the mask."""

    __slots__ = ("full", "mask", "mask_node", "old_mask", "done")

    def __init__(self, full: LazyArray, mask: LazyArray, mask_node: Any, old_mask: LazyArray) -> None:
        self.full, self.mask, self.mask_node, self.old_mask = full, mask, mask_node, old_mask
        self.done = False  # the in-place op ran on ``full``: it is the value to store

    def read(self) -> Any:
        """The masked read NumPy made, of the values at the read (the eager call the read would have been)."""
        from .lazynp import eager_call

        return eager_call(operator.getitem, (self.full, self.old_mask), {}, "advanced indexing",
                          "indexing with arrays or masks has a data-dependent result")

    def _inplace(self, op: Any, other: Any, fast: bool) -> Any:
        """The augmented assignment's one in-place op (its bytecode makes exactly one, then the store)."""
        if fast and _number(other):
            op(self.full, other)  # (the tracer's in-place rules: NumPy's casting errors for these dtypes)
            self.done = True
            return self
        return op(self.read(), other)

    def __iadd__(self, other: Any) -> Any:
        return self._inplace(operator.iadd, other, True)

    def __isub__(self, other: Any) -> Any:
        return self._inplace(operator.isub, other, True)

    def __imul__(self, other: Any) -> Any:
        return self._inplace(operator.imul, other, True)

    def __itruediv__(self, other: Any) -> Any:
        return self._inplace(operator.itruediv, other, True)

    def __getattr__(self, name: str) -> Any:  # (not expected: only the in-place op and the store see it)
        return getattr(self.read(), name)


for _name in ("ifloordiv", "imod", "ipow", "imatmul", "iand", "ior", "ixor", "ilshift", "irshift"):
    def _eager(self: MaskedItem, other: Any, _op: Any = getattr(operator, _name)) -> Any:
        return self._inplace(_op, other, False)
    setattr(MaskedItem, f"__{_name}__", _eager)


def store(x: LazyArray, index: Any, value: MaskedItem) -> Any:
    """``x[index] = value`` for a MaskedItem: the where-write when it is ``x[mask] op= number`` with the mask
    unchanged since the read (then None); else the masked read's value, for the ordinary assignment."""
    x, index = _rows(x, index)
    if value.done and index is value.mask and index._current() is value.mask_node and _write_where(
            x, index, value.full):
        return None
    return value.full[value.old_mask] if value.done else value.read()


# -- `x[m] = f(a[m], b[m], ...)`: a statement of masked reads, written through the same mask ---------------
#
# ``Z[m] = Z[m] ** 2 + C[m]`` (the classic Mandelbrot step), ``phi[m] = 0.25 * (s[m] + h * rho[m])``: each
# read selects the same elements, the value is elementwise in them, and it is stored back through the mask.
# Elementwise ops give each element the same value whether computed on the selection or on the whole array,
# so the statement is ``Z = np.where(m, Z ** 2 + C, Z)``: traced, fused, replayed in a compiled loop, where
# NumPy's reads were data-dependent eager calls. Its reads are known from the statement's source (its AST):
# only names read through the mask, numbers, operators and NumPy ufuncs; at its first read every array it
# reads is checked to be the mask's shape, so all of its reads are whole arrays or none is. Not under a
# raising error state (the elements left out could raise), nor for a cast NumPy's store would make unsafely.
# (The elements left out are computed too: a kernel NumPy runs meanwhile may warn of them, as compiled
# kernels warn of none.)

_BINARY_SUBSCR, _STORE_SUBSCR = dis.opmap["BINARY_SUBSCR"], dis.opmap["STORE_SUBSCR"]
_COMPARES = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@dataclass(frozen=True, eq=False)
class _Statement:
    """``target[mask] = value``, as its source says: the names a run checks before reading through the mask."""
    target: str
    mask: str
    reads: tuple[str, ...]  # arrays read through the mask
    order: tuple[tuple, ...]  # their subscripts' positions, in the order Python evaluates them
    numbers: tuple[str, ...]  # names read as they are: numbers
    ufuncs: tuple[tuple[str, str], ...]  # (module name, ufunc name) called
    store: tuple  # the target subscript's position (STORE_SUBSCR's)


_PARSED: dict[tuple, dict] = {}  # (file name, its text's length) -> {position of a subscript: its statement}


def _statements(filename: str) -> dict:
    lines = linecache.getlines(filename)
    key = (filename, sum(map(len, lines)))
    got = _PARSED.get(key)
    if got is None:
        if len(_PARSED) > 256:
            _PARSED.clear()
        got = _PARSED[key] = {}
        try:
            tree = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            return got
        for node in ast.walk(tree):
            stmt = _statement(node) if isinstance(node, ast.Assign) else None
            if stmt is not None:
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Subscript):
                        got[(sub.lineno, sub.end_lineno, sub.col_offset, sub.end_col_offset)] = stmt
    return got


def _statement(node: ast.Assign) -> _Statement | None:
    """The statement, if it is ``name[mask] = value`` with a value of the shape the module comment says."""
    if len(node.targets) != 1:
        return None
    t = node.targets[0]
    if not (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and isinstance(t.slice, ast.Name)):
        return None
    mask = t.slice.id
    reads: list[str] = []
    order: list[tuple] = []
    numbers: list[str] = []
    ufuncs: list[tuple[str, str]] = []

    def ok(e: ast.AST) -> bool:
        if isinstance(e, ast.Subscript):
            if isinstance(e.value, ast.Name) and isinstance(e.slice, ast.Name) and e.slice.id == mask:
                reads.append(e.value.id)
                order.append((e.lineno, e.end_lineno, e.col_offset, e.end_col_offset))
                return True
            return False
        if isinstance(e, ast.Name):
            numbers.append(e.id)
            return e.id != mask
        if isinstance(e, ast.Constant):
            return type(e.value) in (int, float, complex, bool)
        if isinstance(e, ast.BinOp):
            return not isinstance(e.op, ast.MatMult) and ok(e.left) and ok(e.right)
        if isinstance(e, ast.UnaryOp):
            return isinstance(e.op, (ast.USub, ast.UAdd, ast.Invert)) and ok(e.operand)
        if isinstance(e, ast.Compare):
            return len(e.ops) == 1 and isinstance(e.ops[0], _COMPARES) and ok(e.left) and ok(e.comparators[0])
        if isinstance(e, ast.Call):
            f = e.func
            if e.keywords or not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)) \
                    or any(isinstance(a, ast.Starred) for a in e.args):
                return False
            ufuncs.append((f.value.id, f.attr))
            return all(ok(a) for a in e.args)
        return False

    if not ok(node.value) or not reads:
        return None
    return _Statement(t.value.id, mask, tuple(reads), tuple(order), tuple(numbers), tuple(ufuncs),
                      (t.lineno, t.end_lineno, t.col_offset, t.end_col_offset))


def _site(code: Any, at: int, op: int) -> tuple[_Statement, tuple] | None:
    """(the statement whose subscript the instruction ``op`` at ``at`` executes, its position), or None."""
    start = instruction_at(code.co_code, at, op)
    if start < 0:
        return None
    positions = list(code.co_positions())
    pos = positions[start // 2] if start // 2 < len(positions) else None
    stmt = _statements(code.co_filename).get(pos) if pos is not None else None
    if stmt is None or (op == _STORE_SUBSCR) != (pos == stmt.store):
        return None
    return stmt, pos


def _read_site(code: Any, at: int) -> tuple[_Statement, int] | None:
    """(the statement, which of its reads this is), or None."""
    got = _site(code, at, _BINARY_SUBSCR)
    return None if got is None or got[1] not in got[0].order else (got[0], got[0].order.index(got[1]))


def _store_site(code: Any, at: int) -> _Statement | None:
    got = _site(code, at, _STORE_SUBSCR)
    return None if got is None else got[0]


# [id of the frame, statement, mask, mask's node, the read that comes next]: the statement whose reads are whole
# arrays, until its store (or the end of the cell, ``forget``: a statement that raised before its store; its
# next run begins at its first read again, and is checked again there)
_ACTIVE: list = [None]


def forget() -> None:
    _ACTIVE[0] = None


def _loader(frame: Any) -> Callable[[str], Any]:
    """Names as the statement will load them (the cell's namespace reads, and wraps, a name not read yet).
    (``f_locals`` once: a function's frame builds that dict anew at each access.)"""
    local, g = frame.f_locals, frame.f_globals

    def load(name: str) -> Any:
        if name in local:
            return local[name]
        if g is local or name in g:
            try:
                return g[name]
            except KeyError:
                pass
        b = g.get("__builtins__")
        return getattr(b, name) if hasattr(b, name) else b[name]
    return load


def _numeric(v: Any) -> bool:
    return _concrete_number(v) or type(v) is LazyArray and v.ndim == 0


def whole_read(x: LazyArray, mask: Any) -> bool:
    """Is ``x[mask]`` a read of a masked statement (see above), to be the whole of x?"""
    if type(mask) is not LazyArray or not _whole_mask(x, mask) or errors_raise():
        return False
    frame = sys._getframe(2)  # (the caller of LazyArray.__getitem__)
    site = at_site(frame, _read_site)
    if site is None:
        return False
    stmt, i = site
    node = mask._current()
    got = _ACTIVE[0]
    if i:  # (a later read of a statement checked at its first read, in this run of it)
        if got is not None and got[4] == i and got[0] == id(frame) and got[1] is stmt and got[2] is mask \
                and got[3] is node:
            got[4] += 1
            return True
        return False
    _ACTIVE[0] = None
    try:
        load = _loader(frame)
        if load(stmt.mask) is not mask or any(
                not (type(a) is LazyArray and a.shape == mask.shape and not a.scalar) for a in
                [load(n) for n in (stmt.target,) + stmt.reads]) \
                or not all(_numeric(load(n)) for n in stmt.numbers):
            return False
        for mod, name in stmt.ufuncs:
            module = load(mod)
            f = getattr(module, name, None)
            f = getattr(f, "_ufunc", f)  # (lazynp.LazyUfunc's)
            if not ((module is np or module is _lazy_numpy()) and isinstance(f, np.ufunc) and f.nout == 1):
                return False
    except Exception:  # noqa: BLE001 - a name not bound yet, an odd object: NumPy's own read
        return False
    _ACTIVE[0] = [id(frame), stmt, mask, node, 1]
    return True


def _lazy_numpy() -> Any:
    from .lazynp import LAZY_NUMPY  # (lazynp builds on this module's importer, trace)

    return LAZY_NUMPY


def whole_store(x: LazyArray, index: Any, value: Any) -> Any:
    """``x[index] = value`` where value is a masked statement's (whole) value: written as ``np.where`` (then
    None), or the value NumPy's reads would have given (the whole value, read through the mask) to store as
    NumPy stores it. ``value`` itself where this is no masked statement's store."""
    got = _ACTIVE[0]
    if got is None:
        return value
    frame = sys._getframe(2)  # (the caller of LazyArray.__setitem__)
    if got[0] != id(frame) or at_site(frame, _store_site) is not got[1]:
        return value
    _ACTIVE[0] = None
    if index is not got[2] or index._current() is not got[3] or type(value) is not LazyArray \
            or value.shape != index.shape:
        return value if type(value) is not LazyArray or value.shape != index.shape else value[index]
    if x.shape == index.shape and np.can_cast(value.dtype, x.dtype, "safe"):
        whole = value if value.dtype == x.dtype else astype(value, x.dtype, count=False)
        if _write_where(x, index, whole):
            return None
    return value[index]  # (NumPy's reads, then its store: a cast it makes, or its error)
