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


def layout_of(view: np.ndarray) -> Layout:
    return (view.__array_interface__["data"][0] - _FAKE_BASE, tuple(view.strides))


# -- index keys: hashable forms of basic indices ----------------------------

def index_key(index: Any) -> tuple | None:
    """A hashable form of a *basic* index, or None when it is advanced.

    ``x[1:-1, None, ..., ::2]`` -> ``(("s", 1, -1, None), ("n",), ("e",), ("s", None, None, 2))``.
    """
    items = index if isinstance(index, tuple) else (index,)
    key = []
    for it in items:
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
    return all(k[0] == "i" for k in key) and len(key) == ndim


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
    g = ghost(node.dtype, node.shape, node.layout if node.op in ("view", "input") else None)
    offset, strides = layout_of(np.broadcast_to(g, shape) if shape != g.shape else g)
    if offset % item or any(st % item for st in strides):
        return None
    return offset // item, tuple(st // item for st in strides)
