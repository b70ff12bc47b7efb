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

import dis
import operator
import sys
import warnings
from typing import Any

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
