"""Fancy indexing and ``np.bincount`` inside a compiled replay program, natively.

A call that ran outside the trace is made inside a program in numba's object mode (``cpu_single``):
tens of microseconds a call, where ``x[mask]``, ``E[j]``, ``phi[m] = v`` or ``np.bincount(j, w)`` on a
small array take NumPy one. These are data movement (and, for ``bincount``, sums in index order), so
NumPy's values are easy to make exactly: the element order of a boolean index is C order, an integer
index takes rows in its own order (negative ones counted from the end), an assignment writes in index
order (the last write to a repeated index stays, as NumPy's loop leaves it), and ``bincount`` adds the
weights, as doubles, in the order of its input. Whatever NumPy would answer otherwise (an index out of
bounds, a mask that now selects another number of elements, a negative count) raises here: the replay
stops and the cell is traced, and the traced run raises NumPy's own error where NumPy would.

``native`` picks the function for a call, or None (object mode stays): same dtypes in and out for
indexing, operands the program holds, the written array whole (no view of it).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..ir import Node

_FNS: dict[str, Any] = {}


def native(func: Any, template: list[tuple], kwargs: list[tuple], nodes: list[Node], out: Node,
           chain: tuple | None) -> tuple[Any, list[tuple]] | None:
    """(the numba function, its arguments: ("a", operand index), ("out",), ("v", a constant)) making this
    call; or None. ``template``: the call's positional arguments as ``program._pure_call`` describes
    them (("a", operand), ("t",) the written array, ("v", value)); ``chain``: the written array's view
    chain (None: the call writes nothing)."""
    pos = [t[0] for t in template]
    if func is operator.getitem and chain is None and pos == ["a", "a"] and not kwargs:
        a, idx = nodes[template[0][1]], nodes[template[1][1]]
        if a.dtype != out.dtype or not a.ndim:
            return None
        if idx.dtype == np.bool_ and idx.shape == a.shape:
            return _get("mask_get"), [("a", 0), ("a", 1), ("out",)]
        if idx.dtype.kind == "i":  # (an unsigned index is never negative: object mode keeps NumPy's rules)
            return _get("take"), [("a", 0), ("a", 1), ("out",)]
        return None
    if func is operator.setitem and chain == () and pos == ["t", "a", "a"] and not kwargs:
        # (operand 0: the written array's old contents, copied into ``out`` first)
        idx, value = nodes[template[1][1]], nodes[template[2][1]]
        if value.dtype != out.dtype or not out.ndim:
            return None
        if idx.dtype == np.bool_ and idx.shape == out.shape and value.ndim == 1:
            return _get("mask_set"), _SET
        if idx.dtype.kind == "i" and value.size in (1, idx.size * (out.size // out.shape[0] if out.shape[0] else 0)):
            return _get("put"), _SET  # (values broadcast along a row, `u[idx] = row`: object mode makes them)
        return None
    if func is np.bincount and chain is None:
        return _bincount_call(template, kwargs, nodes, out)
    return None


_SET = [("a", 0), ("a", 1), ("a", 2), ("out",)]  # (the old contents, the index, the values)


def _bincount_call(template: list[tuple], kwargs: list[tuple], nodes: list[Node], out: Node) -> tuple[Any, list] | None:
    named = dict(zip(("x", "weights", "minlength"), template))
    for k, t in kwargs:
        if k in named or k not in ("weights", "minlength"):
            return None
        named[k] = t
    x, w, m = named.get("x"), named.get("weights", ("v", None)), named.get("minlength", ("v", 0))
    if x is None or x[0] != "a" or m[0] != "v" or type(m[1]) is not int:
        return None
    xn = nodes[x[1]]
    if xn.ndim != 1 or xn.dtype.kind != "i" or out.ndim != 1:  # (NumPy casts x to intp safely: signed only)
        return None
    exact = m[1] < out.size  # the length came from the largest value, not minlength: it must again
    if w == ("v", None):  # (x stands in for the weights it has not)
        return (_get("bincount"), [x, x, ("out",), ("v", exact), ("v", False)]) if out.dtype == np.intp else None
    if w[0] != "a" or nodes[w[1]].shape != xn.shape or nodes[w[1]].dtype.kind not in "iuf" \
            or out.dtype != np.float64:
        return None
    return _get("bincount"), [x, w, ("out",), ("v", exact), ("v", True)]


class Steered(ValueError):
    """A compiled replay met data that takes the cell another way than its traced run did (a boolean index
    selects another number of elements): the replay stops before anything reaches the user, and the
    cell is traced (``runner``)."""


def _get(name: str) -> Any:
    fn = _FNS.get(name)
    if fn is None:
        import numba

        g = globals()
        if not hasattr(g["_row_of"], "py_func"):  # (a helper the functions call: numba's before they compile)
            g["_row_of"] = numba.njit(g["_row_of"])
        fn = _FNS[name] = numba.njit(g["_" + name])
    return fn


# -- the functions (numba compiles each once per types of its operands) -------------------------------
# Operands arrive as views of the program's arrays (any strides): ``np.ascontiguousarray`` copies a strided
# one, and a C-contiguous one is read in place.

def _mask_get(a, mask, out):  # a[mask]: the elements where mask holds, in C order
    af, mf, of = np.ascontiguousarray(a).ravel(), np.ascontiguousarray(mask).ravel(), out.ravel()
    k = 0
    for i in range(af.size):
        if mf[i]:
            if k == of.size:
                raise Steered("a boolean index selects more elements than when the cell was traced")
            of[k] = af[i]
            k += 1
    if k != of.size:
        raise Steered("a boolean index selects fewer elements than when the cell was traced")


def _row_of(k, n):  # an index into n rows, counted from the end where negative, as NumPy counts it
    k = np.int64(k)
    if k < 0:
        k += n
    if k < 0 or k >= n:
        raise IndexError("an index is out of bounds")
    return k


def _take(a, idx, out):  # a[idx]: rows of a, in idx's order
    n = a.shape[0]
    ac = np.ascontiguousarray(a)
    inner = ac.size // n if n else 0
    rows, ix = ac.reshape((n, inner)), np.ascontiguousarray(idx).ravel()
    o2 = out.reshape((ix.size, inner))
    for i in range(ix.size):
        o2[i, :] = rows[_row_of(ix[i], n), :]


def _mask_set(old, mask, value, out):  # out = old; out[mask] = value
    of, mf, vf = out.ravel(), np.ascontiguousarray(mask).ravel(), np.ascontiguousarray(value).ravel()
    of[:] = np.ascontiguousarray(old).ravel()
    count = 0
    for i in range(mf.size):
        if mf[i]:
            count += 1
    if vf.size != count and vf.size != 1:
        raise Steered("a boolean assignment's values no longer match the elements it selects")
    k = 0
    for i in range(of.size):
        if mf[i]:
            of[i] = vf[k if vf.size != 1 else 0]
            k += 1


def _put(old, idx, value, out):  # out = old; out[idx] = value, row by row in idx's order
    of = out.ravel()
    of[:] = np.ascontiguousarray(old).ravel()
    n = out.shape[0]
    inner = out.size // n if n else 0
    rows, ix = out.reshape((n, inner)), np.ascontiguousarray(idx).ravel()
    vf = np.ascontiguousarray(value).ravel()
    if vf.size != ix.size * inner and vf.size != 1:
        raise Steered("an integer assignment's values no longer match its index")
    for i in range(ix.size):
        k = _row_of(ix[i], n)
        for j in range(inner):
            rows[k, j] = vf[i * inner + j if vf.size != 1 else 0]


def _bincount(x, w, out, exact, weighted):  # np.bincount(x, w, minlength): the weights as doubles, in x's order
    size = 0
    for i in range(x.size):
        if x[i] < 0:
            raise ValueError("np.bincount: a negative value")
        size = max(size, np.int64(x[i]) + 1)
    if size > out.size or exact and size != out.size:
        raise Steered("np.bincount now returns another length")
    out[:] = 0
    for i in range(x.size):
        if weighted:
            out[x[i]] += np.float64(w[i])
        else:
            out[x[i]] += 1
