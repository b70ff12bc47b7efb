"""Views: strided windows onto storage, decided by NumPy itself.

A view chain is a tuple of ``(kind, params)`` steps from a storage array to a
view of it. The same ``apply`` runs a chain on a real array (the oracle, and
materializing results so that views alias what they alias) and on a *ghost*:
an ndarray with the right dtype, shape and strides over a fake address that is
never dereferenced. Applying a chain to a ghost gives NumPy's own answer to
"what shape and strides does this view have, is it a view at all, does it
raise" at no cost, and the view's layout (byte offset and strides from the
storage) is what a fused kernel indexes with.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

_FAKE_BASE = 1 << 40  # a fake address: ghosts are never read or written

Layout = tuple[int, tuple[int, ...]]  # (byte offset from storage start, byte strides)


class _Interface:
    __slots__ = ("__array_interface__",)


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    if 0 in shape:  # a new empty array: NumPy's own strides for it (all 0 since NumPy 2.?; it allocates nothing)
        return np.empty(shape, np.dtype(f"V{itemsize}")).strides
    strides, acc = [], itemsize
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return tuple(reversed(strides))


def ghost(dtype: np.dtype, shape: tuple[int, ...], layout: Layout | None) -> np.ndarray:
    """A memory-less ndarray with this layout (C-contiguous when ``layout`` is None)."""
    offset, strides = layout if layout is not None else (0, c_strides(shape, dtype.itemsize))
    iface = _Interface()
    iface.__array_interface__ = {
        "data": (_FAKE_BASE + offset, False), "shape": tuple(shape), "strides": tuple(strides),
        "typestr": dtype.str, "version": 3,
    }
    return np.asarray(iface)


def writable(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself, or its memory as a writeable array when ``arr`` is marked read-only: NumPy lets a
    view taken while its base was writeable write into it (``v = b[::-1]; b.flags.writeable = False;
    v[0] = 5``), and a cell's writes reach the user's root array the same way."""
    if arr.flags.writeable:
        return arr
    iface = _Interface()
    iface.__array_interface__ = dict(arr.__array_interface__, data=(arr.__array_interface__["data"][0], False))
    return np.asarray(iface)


def dense_axes(g: np.ndarray) -> tuple[int, ...] | None:
    """The axes, outermost first, in which ``g`` is a dense block of memory laid out in another order than
    C (Fortran order, or the permuted order of a transposed or fancy-indexed result); None when ``g`` is
    C-contiguous or not dense."""
    if g.ndim < 2 or g.flags.c_contiguous or any(st < 0 for st in g.strides):
        return None
    axes = tuple(sorted(range(g.ndim), key=lambda d: -g.strides[d]))
    return axes if g.transpose(axes).flags.c_contiguous else None


def kept_layout(storage: Any) -> Layout | None:
    """The layout a write into ``storage`` keeps: a dense one other than C (a Fortran-ordered input, whose
    views read from outside address its memory, or a result NumPy laid out in its inputs' order: a write
    must not move its elements), else None (C order)."""
    if storage.layout is None or storage.ndim < 2 or storage.layout[0] != 0:
        return None
    return storage.layout if dense_axes(ghost(storage.dtype, storage.shape, storage.layout)) else None


def layout_of(view: np.ndarray) -> Layout:
    return (view.__array_interface__["data"][0] - _FAKE_BASE, tuple(view.strides))


# -- memory order of new arrays (NumPy's order='K') ----------------------------
# NumPy lays a new result out in the memory order of its inputs: an elementwise op on transposed or
# Fortran-ordered arrays gives a Fortran-ordered result (strides, and whether a later reshape copies, show
# it). Each function gives the result's axes, outermost first (transpose axes), or None for C order.

def _transpose_axes(inner_first: list[int]) -> tuple[int, ...] | None:
    axes = tuple(reversed(inner_first))
    return None if axes == tuple(range(len(axes))) else axes


def _nditer_order(shape: tuple[int, ...], strides: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """NumPy's iterator axis order for order='K' (nditer_constr.c, npyiter_find_best_axis_ordering): a
    stable insertion sort of the axes by the operands' absolute strides, where a size-1 or broadcast axis
    (stride 0) compares with nothing and, between operands that disagree, C order wins."""
    ndim = len(shape)
    strides = [tuple(0 if shape[d] == 1 else st[d] for d in range(ndim)) for st in strides]
    perm = list(range(ndim))[::-1]  # innermost first
    for i0 in range(1, ndim):
        ipos, j0 = i0, perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            j1 = perm[i1]
            ambiguous, swap = True, False
            for st in strides:
                if st[j0] != 0 and st[j1] != 0:
                    if abs(st[j1]) <= abs(st[j0]):
                        swap = False
                    elif ambiguous:
                        swap = True
                    ambiguous = False
            if not ambiguous:
                if not swap:
                    break
                ipos = i1
        perm.insert(ipos, perm.pop(i0))
    return _transpose_axes(perm)


def _broadcast_strides(g: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    lead = len(shape) - g.ndim
    return (0,) * lead + tuple(0 if g.shape[d] == 1 else st for d, st in enumerate(g.strides))


def ufunc_order(shape: tuple[int, ...], operands: list[np.ndarray], cast: bool) -> tuple[int, ...] | None:
    """A ufunc's output (``operands``: ghosts of its array operands; ``cast``: one of them is cast to the
    loop dtype). Without casts, operands of the output's shape that are all C- or all Fortran-contiguous
    give that order (NumPy's trivial loop); otherwise the iterator's order. A new empty array's strides
    are all 0 whatever its order."""
    arrays = [g for g in operands if g.ndim]
    if len(shape) < 2 or not arrays or 0 in shape:
        return None
    if not cast and all(g.shape == shape for g in arrays):
        if all(g.flags.c_contiguous for g in arrays):
            return None
        if all(g.flags.f_contiguous for g in arrays):
            return tuple(reversed(range(len(shape))))
    return _nditer_order(shape, [_broadcast_strides(g, shape) for g in arrays])


def matmul_batch_order(batch: tuple[int, ...], operands: list[np.ndarray]) -> tuple[int, ...] | None:
    """``np.matmul``'s output over its batch (loop) axes (``operands``: ghosts of its two operands). A
    gufunc has no contiguous fast path: its iterator orders the loop axes by the operands' strides there
    (their matrix axes are the inner loop's, and the output's come last, C-ordered)."""
    if len(batch) < 2 or 0 in batch:
        return None
    # (each operand's batch part: its strides there, read without indexing it: a matrix axis may be empty)
    parts = [_broadcast_strides(np.lib.stride_tricks.as_strided(g, g.shape[:-2], g.strides[:-2]), batch)
             for g in operands if g.ndim > 2]
    return _nditer_order(batch, parts) if parts else None


def like_order(g: np.ndarray) -> tuple[int, ...] | None:
    """A copy or cast in order='K' (``astype``, ``np.copy``, ``np.array``, ``zeros_like``): NumPy keeps
    a contiguous order, else sorts the axes by absolute stride, outermost first (a stable sort)."""
    if g.ndim < 2 or g.size == 0 or g.flags.c_contiguous:
        return None
    if g.flags.f_contiguous:
        return tuple(reversed(range(g.ndim)))
    axes = tuple(sorted(range(g.ndim), key=lambda d: -abs(g.strides[d])))
    return None if axes == tuple(range(g.ndim)) else axes


def order_axes(g: np.ndarray, order: str) -> tuple[int, ...] | None:
    """The axes of a copy of ``g`` in ``order`` ('C', 'F', 'A' or 'K'), outermost first; None for C."""
    if order == "K":
        return like_order(g)
    if g.ndim < 2 or order == "C" or order == "A" and not (g.flags.f_contiguous and not g.flags.c_contiguous):
        return None
    if order not in ("F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got '{order}')")
    return tuple(reversed(range(g.ndim)))


def reduce_order(g: np.ndarray) -> tuple[int, ...] | None:
    """A reduction's output: the iterator's order of the input's axes (the reduced ones kept as size 1)."""
    if g.ndim < 2:  # (an empty input can still give a non-empty result: its order counts)
        return None
    return _nditer_order(g.shape, [g.strides])


def inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    """The transpose that undoes ``transpose(axes)``; for a subset of axes, the one that sorts them."""
    return tuple(sorted(range(len(axes)), key=axes.__getitem__))


def c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """NumPy's C_CONTIGUOUS flag for these strides (size-1 axes do not count; an empty array is)."""
    if 0 in shape:
        return True
    expected = itemsize
    for d, st in zip(reversed(shape), reversed(strides)):
        if d != 1:
            if st != expected:
                return False
            expected *= d
    return True


# -- index keys: hashable forms of basic indices ----------------------------

def index_key(index: Any) -> tuple | None:
    """A hashable form of a *basic* index, or None when it is advanced.

    ``x[1:-1, None, ..., ::2]`` -> ``(("s", 1, -1, None), ("n",), ("e",), ("s", None, None, 2))``.
    """
    items = index if isinstance(index, tuple) else (index,)
    key = []
    for it in items:
        t = type(it)
        if t is slice:  # (the common case first: a loop indexes with literal ints every step)
            a, b, c = it.start, it.stop, it.step
            if (a is None or type(a) is int) and (b is None or type(b) is int) and (c is None or type(c) is int):
                key.append(("s", a, b, c))
                continue
        elif t is int:
            key.append(("i", it))
            continue
        if it is None:
            key.append(("n",))
        elif it is Ellipsis:
            key.append(("e",))
        elif isinstance(it, slice):
            try:
                key.append(("s",) + tuple(None if v is None else operator.index(v)
                                          for v in (it.start, it.stop, it.step)))
            except TypeError:
                return None
        elif isinstance(it, (bool, np.bool_)):
            return None  # a boolean scalar index is advanced indexing
        elif isinstance(it, (int, np.integer)):
            key.append(("i", int(it)))
        else:
            return None
    return tuple(key)


def index_from_key(key: tuple) -> tuple:
    out: list[Any] = []
    for k in key:
        if k[0] == "n":
            out.append(None)
        elif k[0] == "e":
            out.append(Ellipsis)
        elif k[0] == "s":
            out.append(slice(k[1], k[2], k[3]))
        else:
            out.append(k[1])
    return tuple(out)


def is_scalar_index(key: tuple, ndim: int) -> bool:
    """NumPy returns a scalar (a copy, not a view) when every axis gets an int."""
    if len(key) != ndim:
        return False
    for k in key:  # (a loop, not all(...) of a generator: asked at every traced index)
        if k[0] != "i":
            return False
    return True


# -- applying a chain ---------------------------------------------------------

def apply(x: np.ndarray, kind: str, p: Any) -> np.ndarray:
    """One view step on a real array or a ghost. Raises what NumPy raises."""
    if kind == "getitem":
        return x[index_from_key(p)]
    if kind == "transpose":
        return x.transpose(p)
    if kind == "reshape":
        return np.reshape(x, p, copy=False)  # ValueError when only a copy would do
    if kind == "broadcast":
        return np.broadcast_to(x, p)
    if kind == "asstrided":  # p = (byte offset, shape, strides) from a contiguous root
        offset, shape, strides = p
        flat = as_strided(x, (x.nbytes // x.itemsize,), (x.itemsize,))
        return as_strided(flat[offset // x.itemsize:], shape, strides)
    raise ValueError(f"unknown view kind {kind!r}")


_GEOMETRY: dict[tuple, tuple[tuple[int, ...], Layout]] = {}


def geometry(dtype: np.dtype, shape: tuple[int, ...], layout: Layout | None,
             chain: tuple) -> tuple[tuple[int, ...], Layout]:
    """The shape and layout of ``chain`` applied to storage of this dtype, shape and layout: NumPy's
    answer on a ghost (raising what NumPy raises), remembered, since a loop takes the same slices
    of the same storage shapes every iteration."""
    key = (dtype, shape, layout, chain)
    try:
        got = _GEOMETRY.get(key)
    except TypeError:  # an unhashable step: ask NumPy every time
        g = apply_chain(ghost(dtype, shape, layout), chain)
        return g.shape, layout_of(g)
    if got is None:
        g = apply_chain(ghost(dtype, shape, layout), chain)
        if len(_GEOMETRY) > 16384:
            _GEOMETRY.clear()
        got = _GEOMETRY[key] = (g.shape, layout_of(g))
    return got


def apply_chain(x: np.ndarray, chain: tuple) -> np.ndarray:
    for kind, p in chain:
        x = apply(x, kind, p)
    return x


def element_layout(node: Any, shape: tuple[int, ...]) -> tuple[int, tuple[int, ...]] | None:
    """Where ``node``'s elements, broadcast to ``shape``, lie in its storage's memory:
    (offset, strides) in elements, so a kernel can index the storage as one flat array.
    None when the storage is not one contiguous block (then it is read as a strided array).
    """
    storage = node.storage()
    item = node.dtype.itemsize
    st_strides = storage.layout[1] if storage.layout is not None else c_strides(storage.shape, item)
    f_strides = tuple(reversed(c_strides(tuple(reversed(storage.shape)), item)))
    if storage.size > 1 and st_strides not in (c_strides(storage.shape, item), f_strides):
        return None
    g = ghost(node.dtype, node.shape, node.layout)  # (an op's layout is None, C order, but a kept one's)
    offset, strides = layout_of(np.broadcast_to(g, shape) if shape != g.shape else g)
    if offset % item or any(st % item for st in strides):
        return None
    return offset // item, tuple(st // item for st in strides)
