"""NumPy functions beyond the op table, traced: written from the lazy ops as NumPy's own Python writes
them (the same ops, in the same order, so the values are NumPy's to the bit), or, for a scan, as an op
NumPy itself computes inside the graph. ``lazynp.FUNCS`` takes them in; what they do not take (another
mode, a weight, out=) raises ``Unsupported`` and runs as NumPy, which also raises NumPy's errors.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import views
from .lazynp import FUNCS as _TRACED, _lazy, arange, broadcast_to, concatenate, eager_call, full, where, zeros
from .ops import OPS
from .trace import LazyArray, Unsupported, _snapshot, elementwise, fresh, session


def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    """``np.pad`` in its "constant" (a number) and "edge" modes, traced as NumPy pads: a new array with
    the input in its middle, then each axis's borders in turn, from the array padded so far (so the
    corners are the input's). A stencil's boundary each time step stays in the step's kernels and
    its compiled loop. Other modes and arguments run as NumPy (which also raises NumPy's errors)."""
    if not isinstance(array, LazyArray) or array.ndim == 0 or isinstance(pad_width, LazyArray):
        raise Unsupported("np.pad of this array")
    if mode not in ("constant", "edge") or set(kwargs) - ({"constant_values"} if mode == "constant" else set()):
        raise Unsupported(f"np.pad in mode {mode!r} or with these arguments")
    g = array._ghost()
    if g.flags.f_contiguous and not g.flags.c_contiguous:  # (NumPy pads a Fortran-ordered array into one)
        raise Unsupported("np.pad of a Fortran-ordered array")
    width = np.asarray(pad_width)
    if width.dtype.kind != "i" or width.ndim > 2 or width.size and width.min() < 0:
        raise Unsupported("np.pad with this pad_width")
    try:
        pairs = [(int(a), int(b)) for a, b in np.broadcast_to(width, (array.ndim, 2))]
    except ValueError:
        raise Unsupported("np.pad with this pad_width") from None
    shape = tuple(n + a + b for n, (a, b) in zip(array.shape, pairs))
    middle = tuple(slice(a, a + n) for n, (a, _) in zip(array.shape, pairs))
    if mode == "constant":
        c = kwargs.get("constant_values", 0)
        if type(c) not in (bool, int, float, complex) and not (isinstance(c, np.generic) and c.dtype.kind in "biufc"):
            raise Unsupported("np.pad with these constant values")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (NaN into an integer array: NumPy's warning, from NumPy)
            try:  # NumPy writes np.array(c).ravel()[0] into the borders: the same write, on one element
                probe = np.zeros(1, array.dtype)
                probe[0:1] = np.array(c).ravel()[0]
            except (Warning, OverflowError, ValueError, TypeError):
                raise Unsupported("np.pad with this constant") from None
            fill = probe[0]
        out = full(shape, fill, array.dtype)
        out[middle] = array
        return out
    if array.size == 0:
        raise Unsupported("np.pad of an empty array by its edges")
    out = zeros(shape, array.dtype)
    out[middle] = array
    for axis, (a, b) in enumerate(pairs):
        n = array.shape[axis]
        before, after = (slice(None),) * axis, middle[axis + 1:]  # (NumPy's region: corners once)
        if a:
            out[before + (slice(0, a),) + after] = out[before + (slice(a, a + 1),) + after]
        if b:
            out[before + (slice(a + n, a + n + b),) + after] = out[before + (slice(a + n - 1, a + n),) + after]
    return out


def scan(op: str, a: Any, axis: Any, dtype: Any = None) -> LazyArray:
    """``np.cumsum``/``cumprod`` (and the methods): not elementwise, so NumPy computes them, as a kernel of
    their own in the graph (``single``, as a matmul): no flush of the pending work before them (a random
    walk's positions each step), and a compiled replay calls them inside its loop. Exactly NumPy's."""
    a = _lazy(a)
    if axis is not None and not isinstance(axis, (int, np.integer)) or isinstance(axis, (bool, np.bool_)):
        raise Unsupported(f"np.{op} along this axis")
    if axis is not None and a.ndim > 1 and not a._ghost().flags.c_contiguous:
        raise Unsupported(f"np.{op} of an array not in C order (NumPy lays the result out as the array)")
    kw: dict[str, Any] = {"axis": None if axis is None else int(axis)}
    if dtype is not None:
        kw["dtype"] = np.dtype(dtype).str
    r = OPS[op].fn(np.zeros((1,) * a.ndim, a.dtype), **kw)  # NumPy's dtype, and its errors (a bad axis)
    shape = (a.size,) if axis is None or not a.ndim else a.shape  # (flattened; a 0-d one along axis 0 too)
    return fresh(session().bind(op, (a._current(),), tuple(kw.items()), r.dtype, shape))


def _scan(op: str) -> Callable:
    def fn(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if out is not None:  # (by keyword, so that the call is seen to write there, however it was given)
            return eager_call(OPS[op].fn, (a,), {"axis": axis, "dtype": dtype, "out": out}, f"np.{op}",
                              f"np.{op} with out= is not traced")
        return scan(op, a, axis, dtype)
    return fn


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, **kw: Any) -> Any:
    """``np.average`` without weights is NumPy's ``a.mean(axis)``."""
    if weights is not None or returned or set(kw) - {"keepdims"}:
        raise Unsupported("np.average with weights")
    a = _lazy(a)
    if axis is not None and not a.size:  # (NumPy divides a.size by the mean's size: an empty one raises)
        raise Unsupported("np.average of an empty array along an axis")
    return _TRACED["mean"](a, axis, **kw)


def ptp(a: Any, axis: Any = None, out: Any = None, **kw: Any) -> Any:
    """``np.ptp``: NumPy's ``maximum.reduce - minimum.reduce``."""
    a = _lazy(a)
    if out is not None or a.dtype.kind == "b" or set(kw) - {"keepdims"}:
        raise Unsupported("np.ptp with out= or of booleans")
    # (the ufunc, not the operator: of two integer scalars the operator is Python's scalar math, which raises an
    # overflow under np.errstate(over='raise'); NumPy's subtract wraps, as on arrays)
    return elementwise("subtract", [_TRACED["max"](a, axis, **kw), _TRACED["min"](a, axis, **kw)])


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    """``np.nan_to_num`` of a real array: NumPy's three ``copyto(..., where=)`` as selects, the
    replacements cast to the array's dtype as ``copyto`` casts them; other dtypes come back copied."""
    x = _lazy(x)
    if not copy or x.ndim == 0 or x.dtype.kind == "c":
        raise Unsupported("np.nan_to_num in place, of a scalar or of complex numbers")
    if x.dtype.kind != "f":
        return x.copy(order="K")  # (NumPy's np.array(x, copy=True): the array's own memory order)
    info = np.finfo(x.dtype)
    values = [nan, info.max if posinf is None else posinf, info.min if neginf is None else neginf]
    if any(type(v) not in (int, float) and not isinstance(v, (np.integer, np.floating)) for v in values):
        raise Unsupported("np.nan_to_num with these values")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a value the dtype overflows on: NumPy's warning, from NumPy)
        try:
            fills = [np.array(v).astype(x.dtype, casting="same_kind")[()] for v in values]
        except (Warning, TypeError):
            raise Unsupported("np.nan_to_num with these values") from None
    # NumPy copies x (order='K': x's memory order, a size-1 axis's stride included) and writes into the copy;
    # the selects below would lay out their result by the ufunc iterator's rule, so they run on x seen in
    # that order and the result is turned back
    axes = views.like_order(x._ghost())
    t = x if axes is None else x.transpose(axes)
    out = where(elementwise("isnan", [t]), fills[0], t)
    out = where(t == np.inf, fills[1], out)
    out = where(t == -np.inf, fills[2], out)
    return out if axes is None else out.transpose(views.inverse(axes))


def _tri(shape: tuple[int, ...], k: int) -> LazyArray:
    """``np.tri(*shape, k=k, dtype=bool)``, NumPy's ``greater_equal.outer(arange(N), arange(-k, M - k))``,
    made in the graph (no mask to copy to a device)."""
    n, m = (shape[0], shape[0]) if len(shape) == 1 else shape
    k = operator.index(k)
    return arange(n)[:, None] >= arange(-k, m - k)[None, :]


def tril(m: Any, k: int = 0) -> Any:
    """``np.tril``: NumPy's ``where(tri(...), m, zeros(1, m.dtype))``."""
    m = _lazy(m)
    if m.ndim == 0:
        raise Unsupported("np.tril of a scalar")
    return where(_tri(m.shape[-2:], k), m, zeros(1, m.dtype))


def triu(m: Any, k: int = 0) -> Any:
    """``np.triu``: NumPy's ``where(tri(..., k - 1), zeros(1, m.dtype), m)``."""
    m = _lazy(m)
    if m.ndim == 0:
        raise Unsupported("np.triu of a scalar")
    return where(_tri(m.shape[-2:], k - 1), zeros(1, m.dtype), m)


def column_stack(tup: Any) -> Any:
    """``np.column_stack``: vectors as columns, then one concatenate along axis 1."""
    if type(tup) not in (list, tuple):
        raise Unsupported("np.column_stack of this sequence")
    parts = [_lazy(v) for v in tup]
    return concatenate([p.reshape(-1, 1) if p.ndim < 2 else p for p in parts], 1)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """``np.isclose`` as NumPy computes it: ``|x - y| <= atol + rtol * |y|`` where y is finite, or
    ``x == y``; y in an inexact dtype first."""
    if any(type(t) not in (int, float) or not np.isfinite(t) for t in (rtol, atol)):
        raise Unsupported("np.isclose with these tolerances")
    x, y = (v if type(v) in (int, float, complex) else _lazy(v) for v in (a, b))
    if isinstance(y, LazyArray):
        if y.dtype.kind == "m":
            raise Unsupported("np.isclose of timedeltas")
        dt = np.result_type(y.dtype, 1.0)
        if dt != y.dtype:
            y = y.astype(dt)
    elif isinstance(y, int):
        y = float(y)
    with np.errstate(invalid="ignore"):
        result = (abs(x - y) <= atol + rtol * abs(y)) & elementwise("isfinite", [y]) | (x == y)
        if equal_nan:
            result = result | elementwise("isnan", [x]) & elementwise("isnan", [y])
    if not isinstance(result, LazyArray) or result.ndim == 0 and not result.scalar:
        raise Unsupported("np.isclose of 0-d arrays")  # (NumPy gives a scalar: result[()])
    return result


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> bool:
    """``np.allclose``: NumPy's ``bool(all(isclose(...)))``, a value Python reads."""
    return bool(_TRACED["all"](isclose(a, b, rtol, atol, equal_nan)))


def tile(A: Any, reps: Any) -> Any:
    """``np.tile`` of a C-ordered array: the array broadcast along a new axis before each axis it
    repeats, then copied into the tiled shape (values moved, as NumPy moves them)."""
    A = _lazy(A)
    try:
        tup = tuple(operator.index(r) for r in reps) if isinstance(reps, (tuple, list)) else (operator.index(reps),)
    except TypeError:
        raise Unsupported("np.tile with these repetitions") from None
    if any(r < 0 for r in tup) or not A.size or not A._ghost().flags.c_contiguous:  # (an empty one: NumPy's view)
        raise Unsupported("np.tile with these repetitions, of this layout or of nothing")
    c = A.reshape((1,) * (len(tup) - A.ndim) + A.shape) if len(tup) > A.ndim else A
    tup = (1,) * (c.ndim - len(tup)) + tup
    if all(t == 1 for t in tup):
        return c.copy()
    inner = tuple(d for n in c.shape for d in (1, n))
    wide = broadcast_to(c.reshape(inner), tuple(d for t, n in zip(tup, c.shape) for d in (t, n)))
    return wide.copy().reshape(tuple(t * n for t, n in zip(tup, c.shape)))  # (a copy, then a view of it)


def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """``np.repeat`` by one count: each element (each slice along ``axis``) broadcast along a new axis
    after it, then copied into the repeated shape."""
    a = _lazy(a)
    if type(repeats) is not int and not isinstance(repeats, np.integer) or repeats < 0 or isinstance(axis, LazyArray):
        raise Unsupported("np.repeat by counts per element")
    if axis is None:
        a, axis = a.ravel(), 0
    if a.ndim == 0 or not a.size or not repeats:  # (NumPy's empty result has strides of its own)
        raise Unsupported("np.repeat of a scalar along an axis, or into nothing")
    ax = normalize_axis_tuple(axis, a.ndim)[0]
    head, tail = a.shape[:ax + 1], a.shape[ax + 1:]
    wide = broadcast_to(a.reshape(head + (1,) + tail), head + (int(repeats),) + tail)
    return wide.copy().reshape(a.shape[:ax] + (a.shape[ax] * int(repeats),) + tail)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """``np.meshgrid`` as NumPy makes it: each input as a vector along its own axis (the first two swapped
    for "xy"), broadcast to the grid unless ``sparse``, then copied."""
    if not copy or indexing not in ("xy", "ij") or not xi:
        raise Unsupported("np.meshgrid without copies, or of nothing")
    nd = len(xi)
    ones = (1,) * nd
    out = [_lazy(x).reshape(ones[:i] + (-1,) + ones[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and nd > 1:
        out[0], out[1] = out[0].reshape((1, -1) + ones[2:]), out[1].reshape((-1, 1) + ones[2:])
    if not sparse:
        shape = np.broadcast_shapes(*(o.shape for o in out))
        out = [broadcast_to(o, shape) for o in out]
    return tuple(o.copy() for o in out)


_SIZES = (2, 3, 5, 7, 11, 13)  # (a probe's length along each subscript letter: distinct, so its result tells them apart)


def einsum(*operands: Any, out: Any = None, dtype: Any = None, order: str = "K", casting: str = "safe",
           optimize: Any = False) -> LazyArray:
    """``np.einsum`` of two or more C-ordered operands with letter subscripts: a kernel NumPy computes (as a
    matmul), in the graph. Its result's shape and dtype are those of NumPy's einsum on small probes, one
    length per letter; a result NumPy would lay out otherwise than in C order, ``...``, a single operand
    (NumPy may hand back a view) and the keywords run as NumPy."""
    if out is not None or dtype is not None or order != "K" or casting != "safe" or len(operands) < 3 \
            or type(operands[0]) is not str or optimize is not False:  # (optimize's path, and the layout of
        raise Unsupported("np.einsum with these arguments")  # its result, depend on the sizes, not the probes')
    subscripts, arrays = operands[0], [_lazy(a) for a in operands[1:]]
    terms = subscripts.replace(" ", "").partition("->")[0].split(",")
    letters = sorted(set("".join(terms)))
    if "." in subscripts or len(terms) != len(arrays) or len(letters) > len(_SIZES) \
            or any(len(t) != a.ndim for t, a in zip(terms, arrays)) or any(not a._ghost().flags.c_contiguous for a in arrays):
        raise Unsupported("np.einsum of these operands")
    size: dict[str, int] = {}
    for t, a in zip(terms, arrays):
        for ch, n in zip(t, a.shape):
            if size.setdefault(ch, n) != n:
                raise Unsupported("np.einsum: NumPy says why")
    probe = dict(zip(letters, _SIZES))
    try:
        r = np.einsum(subscripts, *[np.zeros(tuple(probe[ch] for ch in t), a.dtype) for t, a in zip(terms, arrays)])
    except Exception:  # noqa: BLE001 - NumPy raises it again, on the real operands
        raise Unsupported("np.einsum: NumPy says why") from None
    scalar = not isinstance(r, np.ndarray)  # (a NumPy scalar where NumPy gives one)
    r = np.asarray(r)
    if not r.flags.c_contiguous or r.ndim > 1 and r.size and not r.flags.owndata:
        raise Unsupported("np.einsum whose result is laid out otherwise")
    by_length = {n: ch for ch, n in probe.items()}
    shape = tuple(size[by_length[n]] for n in r.shape)
    node = session().bind("einsum", tuple(a._current() for a in arrays), (("subscripts", subscripts),), r.dtype, shape)
    return fresh(node, scalar=scalar)


def ndenumerate(arr: Any) -> Any:
    """``np.ndenumerate``: NumPy scalars come out with their indices, so the elements are read at once, as
    iterating over a vector reads them (a sync a replay computes again and compares)."""
    if isinstance(arr, LazyArray):
        arr = arr._read("np.ndenumerate", _snapshot)
    return np.ndenumerate(arr)


FUNCS: dict[str, Callable] = dict(
    ndenumerate=ndenumerate, pad=pad, cumsum=_scan("cumsum"), cumprod=_scan("cumprod"), average=average, ptp=ptp, nan_to_num=nan_to_num,
    tril=tril, triu=triu, column_stack=column_stack, isclose=isclose, allclose=allclose, tile=tile, repeat=repeat,
    meshgrid=meshgrid, einsum=einsum)
