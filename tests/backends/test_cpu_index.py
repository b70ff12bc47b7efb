"""Fancy indexing and ``np.bincount`` made natively inside a compiled program (``backends/cpu_index.py``):
NumPy's values to the bit on strided operands, repeated and negative indices, and an error wherever NumPy
would answer another shape or raise (the replay then stops and the cell is traced)."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from jupyter_fuse import views
from jupyter_fuse.backends import cpu_index, cpu_single
from jupyter_fuse.ir import Node


def _root(a: np.ndarray) -> np.ndarray:
    while a.base is not None:
        a = a.base
    return a


def _node(a: np.ndarray, slot: int) -> Node:
    """An input node for ``a``, or for a view of it into its (contiguous) storage as the program holds it."""
    root = _root(a)
    if root is a:
        return Node.make("input", (), (slot,), a.dtype, a.shape, (0, a.strides))
    storage = Node.make("input", (), (slot,), root.dtype, (root.size,), (0, (root.itemsize,)))
    chain = (("asstrided", (a.__array_interface__["data"][0] - root.__array_interface__["data"][0], a.shape,
                            a.strides)),)
    shape, layout = views.geometry(a.dtype, storage.shape, storage.layout, chain)
    return Node.make("view", (storage,), chain, a.dtype, shape, layout)


def _call(func, template, kwargs, operands, out_like, chain=None):
    """The program's wrapper for the call (``cpu_single.python_call``) on ``operands`` (any strides),
    and the output it fills; asserts the native path was taken (not object mode)."""
    nodes = [_node(a, i) for i, a in enumerate(operands)]
    out = Node.make("ref", (), (99,), out_like.dtype, out_like.shape, (0, out_like.strides))
    assert cpu_index.native(func, template, kwargs, nodes, out, chain) is not None
    fn, _ = cpu_single.python_call(("test",), lambda: None, nodes, out, (func, template, kwargs, chain))
    flat_args = []
    for op in operands:  # (what a program passes: each operand's storage flat in memory order, its offset and strides there)
        root = _root(op)
        start = (op.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // op.itemsize
        flat_args += [*op.shape, root.ravel(order="K"), start, *[s // op.itemsize for s in op.strides]]
    result = np.empty(out_like.shape, out_like.dtype)
    fn(*flat_args, result)
    return result


def _strided(a: np.ndarray) -> np.ndarray:
    """``a``'s values in a strided view (every other element of a bigger array)."""
    big = np.zeros((a.size * 2,), a.dtype)
    view = big[::2][: a.size].reshape(a.shape) if a.ndim else big[:1].reshape(())
    view[...] = a
    return view


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2)])
def test_boolean_and_integer_gathers_are_numpys(shape, strided):
    rng = np.random.default_rng(len(shape) + strided)
    a = rng.normal(size=shape)
    mask = rng.random(shape) < 0.5
    idx = rng.integers(-shape[0], shape[0], 9)  # (negative and repeated indices)
    idx2 = rng.integers(0, shape[0], (2, 3))
    f = _strided if strided else (lambda x: x)
    got = _call(operator.getitem, [("a", 0), ("a", 1)], [], [f(a), f(mask)], a[mask])
    assert got.tobytes() == a[mask].tobytes()
    got = _call(operator.getitem, [("a", 0), ("a", 1)], [], [np.asfortranarray(a), mask], a[mask])
    assert got.tobytes() == a[mask].tobytes()  # (C order of the elements, whatever the memory order)
    for ix in (idx, idx2):
        got = _call(operator.getitem, [("a", 0), ("a", 1)], [], [f(a), f(ix)], a[ix])
        assert got.shape == a[ix].shape and got.tobytes() == a[ix].tobytes()


@pytest.mark.parametrize("shape", [(9,), (4, 3)])
def test_boolean_and_integer_assignments_are_numpys(shape):
    rng = np.random.default_rng(len(shape))
    old = rng.normal(size=shape)
    mask = rng.random(shape) < 0.5
    vals = rng.normal(size=int(mask.sum()))
    want = old.copy()
    want[mask] = vals
    got = _call(operator.setitem, [("t",), ("a", 1), ("a", 2)], [], [old, mask, _strided(vals)], old, ())
    assert got.tobytes() == want.tobytes()
    idx = np.array([0, -1, 2, 0, 1, -1])  # (repeated: the last write stays, as in NumPy)
    rows = rng.normal(size=(len(idx),) + shape[1:])
    want = old.copy()
    want[idx] = rows
    got = _call(operator.setitem, [("t",), ("a", 1), ("a", 2)], [], [old, idx, rows], old, ())
    assert got.tobytes() == want.tobytes()
    one = np.array([2.5])  # (one value for every element selected)
    want = old.copy()
    want[mask] = one
    assert _call(operator.setitem, [("t",), ("a", 1), ("a", 2)], [], [old, mask, one], old, ()).tobytes() == \
        want.tobytes()


@pytest.mark.parametrize("minlength", [0, 3, 12])
@pytest.mark.parametrize("weights", [None, np.float64, np.float32, np.int64])
def test_bincount_is_numpys(weights, minlength):
    rng = np.random.default_rng(minlength)
    x = rng.integers(0, 8, 40)
    if weights is None:
        want = np.bincount(x, minlength=minlength)
        got = _call(np.bincount, [("a", 0)], [("minlength", ("v", minlength))], [x], want)
    else:
        w = (rng.normal(size=40) * 10).astype(weights)
        want = np.bincount(x, weights=w, minlength=minlength)
        got = _call(np.bincount, [("a", 0)], [("weights", ("a", 1)), ("minlength", ("v", minlength))],
                    [x, _strided(w)], want)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_what_numpy_would_answer_otherwise_raises():
    a = np.arange(6.0)
    with pytest.raises(IndexError):  # out of bounds
        _call(operator.getitem, [("a", 0), ("a", 1)], [], [a, np.array([1, 6])], np.empty(2))
    with pytest.raises(IndexError):
        _call(operator.getitem, [("a", 0), ("a", 1)], [], [a, np.array([-7])], np.empty(1))
    mask = a > 2.5  # (3 elements where the traced run saw 2)
    with pytest.raises(ValueError):
        _call(operator.getitem, [("a", 0), ("a", 1)], [], [a, mask], np.empty(2))
    with pytest.raises(ValueError):
        _call(operator.getitem, [("a", 0), ("a", 1)], [], [a, mask], np.empty(4))
    with pytest.raises(ValueError):  # values of another length
        _call(operator.setitem, [("t",), ("a", 1), ("a", 2)], [], [a, mask, np.ones(2)], a, ())
    with pytest.raises(ValueError):  # a negative count
        _call(np.bincount, [("a", 0)], [], [np.array([1, -1])], np.empty(2, np.intp))
    with pytest.raises(ValueError):  # its length came from its largest value, which has changed
        _call(np.bincount, [("a", 0)], [], [np.array([1, 4])], np.empty(3, np.intp))
    # (minlength decides the length while the values stay below it)
    got = _call(np.bincount, [("a", 0)], [("minlength", ("v", 5))], [np.array([1, 1])], np.empty(5, np.intp))
    assert got.tolist() == [0, 2, 0, 0, 0]


def test_calls_numpy_decides_otherwise_stay_in_object_mode():
    a, f32 = _node(np.zeros(4), 0), _node(np.zeros(4, np.float32), 1)
    u = _node(np.zeros(3, np.uint64), 2)
    i = _node(np.zeros(3, np.int64), 3)
    out = Node.make("ref", (), (9,), np.dtype(np.float64), (3,), (0, (8,)))
    assert cpu_index.native(operator.getitem, [("a", 0), ("a", 1)], [], [a, u], out, None) is None  # unsigned
    assert cpu_index.native(operator.getitem, [("a", 0), ("a", 1)], [], [f32, i], out, None) is None  # a cast
    assert cpu_index.native(operator.setitem, [("t",), ("a", 1), ("a", 2)], [], [a, i, f32], out, ()) is None
    assert cpu_index.native(operator.setitem, [("t",), ("a", 1), ("a", 2)], [], [a, i, a], out,
                            (("getitem", ((1, 3, 1),)),)) is None  # (a view written: object mode)
    assert cpu_index.native(np.bincount, [("a", 0)], [], [u], out, None) is None  # (NumPy refuses unsigned)
    rows = Node.make("ref", (), (10,), np.dtype(np.float64), (4, 3), (0, (24, 8)))
    row = _node(np.zeros(3), 4)  # (`u[idx] = row`: broadcast along the rows, NumPy's to make)
    assert cpu_index.native(operator.setitem, [("t",), ("a", 1), ("a", 2)], [], [rows, i, row], rows, ()) is None
