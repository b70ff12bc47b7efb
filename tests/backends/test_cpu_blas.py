"""A program's float64 and float32 matmuls call NumPy's OpenBLAS natively (``backends/cpu_blas.py``): NumPy's
loop written again, so it must give NumPy's bits on every shape and layout NumPy's loop tells apart."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from jupyter_fuse.backends import cpu_blas, cpu_single

pytestmark = pytest.mark.skipif(not cpu_blas.available(), reason="NumPy's OpenBLAS is not found here")


def _operand(rng: np.random.Generator, shape: tuple[int, ...], layout: str,
             dtype: type = np.float64) -> tuple[np.ndarray, int, tuple]:
    """(flat storage, offset, strides in elements) of an operand of ``shape`` laid out as ``layout``."""
    n = int(np.prod(shape)) if shape else 1
    big = rng.normal(size=4 * n + 8).astype(dtype)
    big[rng.random(big.size) < 0.1] = 0.0
    big[rng.random(big.size) < 0.05] = -0.0
    if layout == "c":
        st = tuple(int(s) for s in np.empty(shape).strides)
        return big, 3, tuple(s // 8 for s in st)
    if layout == "f":
        return big, 1, tuple(s // 8 for s in np.empty(shape, order="F").strides)
    if layout == "step":  # every other element along the last axis, rows farther apart
        return big, 0, tuple(s // 8 * 2 for s in np.empty(shape).strides)
    if layout == "rev":  # the first axis reversed
        st = [s // 8 for s in np.empty(shape).strides]
        off = (shape[0] - 1) * st[0] if shape and shape[0] else 0
        st[0] = -st[0]
        return big, off + 2, tuple(st)
    # "odd": a size-1 axis's stride is any number (a view's)
    st = [s // 8 for s in np.empty(shape).strides]
    return big, 0, tuple(5 if d == 1 else s for d, s in zip(shape, st))


def _view(flat: np.ndarray, off: int, strides: tuple, shape: tuple) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(flat[off:], shape, tuple(flat.itemsize * s for s in strides))


SHAPES = [((m, n), (n, p)) for m, n, p in itertools.product((1, 2, 3, 7), (1, 2, 5), (1, 2, 4))]
SHAPES += [((n,), (n, p)) for n, p in itertools.product((1, 2, 6), (1, 3))]
SHAPES += [((m, n), (n,)) for m, n in itertools.product((1, 3, 40), (1, 2, 33))]
SHAPES += [((n,), (n,)) for n in (1, 2, 9, 100)] + [((0, 3), (3, 2)), ((2, 0), (0, 3)), ((3,), (3, 0))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_a_programs_matmul_is_numpys_to_the_bit_on_every_layout(shapes, dtype):
    rng = np.random.default_rng(len(str(shapes)))
    (sa, sb) = shapes
    out_shape = np.matmul(np.zeros(sa), np.zeros(sb)).shape
    dt = np.dtype(dtype)
    kernel = cpu_single._function(("blas", dt, len(sa), len(sb), len(out_shape)),
                                  lambda: cpu_single._numpy_op(cpu_single._Op("matmul", (), out_shape, dt, None)),
                                  [(len(sa), dt.itemsize), (len(sb), dt.itemsize)], blas=dt)
    bits = np.int64 if dt.itemsize == 8 else np.int32
    for la, lb in itertools.product(("c", "f", "step", "rev", "odd"), repeat=2):
        fa, oa, ta = _operand(rng, sa, la, dtype)
        fb, ob, tb = _operand(rng, sb, lb, dtype)
        a, b = _view(fa, oa, ta, sa), _view(fb, ob, tb, sb)
        want = np.matmul(a, b)
        out = np.empty(max(int(np.prod(out_shape)), 1), dtype)
        shaped = (out[:0] if 0 in out_shape else out).reshape(out_shape) if len(out_shape) > 1 else out  # (as the program)
        kernel(*sa, fa, oa, *ta, *sb, fb, ob, *tb, shaped)
        got = (shaped[:0] if 0 in out_shape else shaped) if out_shape else out[0]
        assert np.asarray(got).dtype == want.dtype
        assert np.array_equal(np.asarray(got).view(bits), np.asarray(want).view(bits)), (la, lb, got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_matrix_times_its_own_transpose_is_numpys_syrk_to_the_bit(dtype):
    """``A @ A.T`` of one storage: NumPy calls syrk and copies the upper triangle down."""
    rng = np.random.default_rng(3)
    bits = np.int64 if np.dtype(dtype).itemsize == 8 else np.int32
    for m, n in ((3, 4), (8, 5), (30, 30)):
        flat = rng.normal(size=m * n).astype(dtype)
        a = flat.reshape(m, n)
        out = np.empty(m * m, dtype)
        cpu_blas.matmul(dtype)(m, n, m, flat, 0, n, 1, flat, 0, 1, n, out, m, 1)
        assert np.array_equal(out.reshape(m, m).view(bits), (a @ a.T).view(bits))


@pytest.mark.parametrize("order", ["f", "step"])
def test_an_output_blas_cannot_write_is_written_through_a_copy_as_numpy_does(order):
    """NumPy's loop computes into a buffer and copies it where the output's layout is not BLAS's (a program's
    output is always C-ordered; the loop is NumPy's whole, and so is this path)."""
    rng = np.random.default_rng(5)
    for m, n, p in ((2, 3, 4), (5, 5, 5), (7, 2, 3)):
        a, b = rng.normal(size=(m, n)), rng.normal(size=(n, p))
        want = a @ b
        if order == "f":
            out, osm, osp = np.zeros(m * p), 1, m
        else:
            out, osm, osp = np.zeros(2 * m * p), 2 * p, 2
        cpu_blas.matmul(np.float64)(m, n, p, a.ravel(), 0, n, 1, b.ravel(), 0, p, 1, out, osm, osp)
        got = np.lib.stride_tricks.as_strided(out, (m, p), (8 * osm, 8 * osp))
        assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_the_library_called_is_the_one_numpy_ships_and_loaded():
    """Only NumPy's own OpenBLAS gives NumPy's bits: another one the process holds (SciPy's) is not taken."""
    import os

    path = cpu_blas._library_path()
    assert path is not None and path.startswith(os.path.dirname(np.__file__)), path
    with open("/proc/self/maps") as f:
        assert any(line.rstrip().endswith(path) for line in f)
