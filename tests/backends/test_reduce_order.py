"""Reductions over axes that are not the input's innermost ones ("column" reductions) on the cpu backend.

cpu_render loops such a kernel with the reduced axes outside and the contiguous kept axes inside, one
accumulator per output element in an array (``COLUMNS_MARK`` in its source). Every cell is checked against
NumPy by the harness, and the tests assert which loop nest the kernel got, so that a change of path shows.
NumPy adds the rows of a column sum one by one into its result row: the kernels add in that order, so
float32 column sums, means and variances are compared to the bit as well.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import check

from jupyter_fuse.backends import cpu
from jupyter_fuse.backends.cpu_render import COLUMNS_MARK
from jupyter_fuse.runner import run_cell

SETUP = """
rng = np.random.default_rng(0)
x = rng.normal(size=(37, 300))
x32 = x.astype(np.float32)
y = rng.normal(size=(300, 700))
g = rng.normal(size=300)
x3 = rng.normal(size=(6, 40, 70))
x4 = rng.normal(size=(40, 50, 100))
f = np.asfortranarray(rng.normal(size=(60, 80)))
n = rng.normal(size=(50, 70))
n[[3, 17, 40], [5, 5, 9]] = np.nan
n[:, 11] = np.nan
n[7, 20], n[8, 20] = -0.0, 0.0
t = rng.integers(0, 3, (50, 70))
i8 = rng.integers(-128, 128, (50, 70)).astype(np.int8)
u8 = rng.integers(0, 256, (50, 70)).astype(np.uint8)
i32 = rng.integers(-2**31, 2**31, (50, 70)).astype(np.int32)
i64 = rng.integers(-2**62, 2**62, (50, 70))
u64 = rng.integers(0, 2**64 - 1, (50, 70), dtype=np.uint64, endpoint=True)
b = rng.random((50, 70)) > 0.3
z = rng.normal(size=(50, 70)) + 1j * rng.normal(size=(50, 70))
"""


def _paths(outcome) -> list[bool]:
    """Per compiled kernel of the fused run: whether it was rendered with the column loop nest."""
    return [COLUMNS_MARK in k["source"] for k in outcome.report.kernel_list if k.get("source")]


def check_columns(src: str, setup: str = SETUP, kernels: int | None = None) -> None:
    """The cell's values are NumPy's, and every compiled kernel took the column path."""
    paths = _paths(check(src, setup, backend="cpu"))
    assert paths and all(paths), f"not every kernel took the column path: {paths}\n{src}"
    if kernels is not None:
        assert len(paths) == kernels, f"{len(paths)} kernels, not {kernels}"


def check_rows(src: str, setup: str = SETUP) -> None:
    """The cell's values are NumPy's, and no compiled kernel took the column path."""
    paths = _paths(check(src, setup, backend="cpu"))
    assert paths and not any(paths), f"a kernel took the column path: {paths}\n{src}"


# -- which loop nest ------------------------------------------------------------------------------------

def test_contiguous_reductions_keep_the_row_path():
    check_rows("a = x.sum(axis=1)\nb = x.max(axis=-1)\nc = x.T.sum(axis=0)\nd = f.argmin(axis=0)\ne = x.sum()")
    check_rows("a = x3.sum(axis=(0, 2))\nb = x3.mean(axis=2, keepdims=True)")


def test_a_few_columns_keep_the_row_path():
    # (below COLUMNS_MIN output elements per row a loop per row costs more than strided reads)
    check_rows("a = x[:, :3].sum(axis=0)\nb = x3[:, :, :2].max(axis=1)\nc = t[:, :7].argmin(axis=0)")
    check_columns("a = x[:, :8].sum(axis=0)\nb = x3[:, :, :8].max(axis=1)\nc = t[:48, :2].reshape(-1, 8).argmin(axis=0)")


def test_a_reduced_axis_of_one_element_is_no_column_reduction():
    check("a = x[:1].sum(axis=0)\nb = x3[:, :1].sum(axis=1)", SETUP, backend="cpu")


# -- every reduction over axis 0 and over middle axes ---------------------------------------------------

@pytest.mark.parametrize("name", ["x", "x32", "y"])
def test_sums_means_variances_over_axis_0(name):
    check_columns(f"a = {name}.sum(axis=0)\nb = {name}.mean(axis=0)\nc = {name}.var(axis=0)\n"
                  f"d = {name}.std(axis=0, ddof=1)\ne = {name}.var(axis=0, ddof=5)\nh = ({name} * 2 - 1).sum(axis=0)")


def test_ddof_past_the_count():
    check_columns("a = x.var(axis=0, ddof=37)\nb = x.std(axis=0, ddof=40)\nc = i8.var(axis=0, ddof=50)")


def test_max_min_with_nans_and_signed_zeros():
    check_columns("a = n.max(axis=0)\nb = n.min(axis=0)\nc = np.maximum.reduce(n, axis=0)\nd = np.amin(n, axis=0)")
    check_columns("a = n.astype(np.float32).max(axis=0)\nb = (-n).min(axis=0)")


def test_argmax_argmin_first_on_ties_and_nans():
    check_columns("a = t.argmax(axis=0)\na2 = t.argmin(axis=0)\nc = n.argmax(axis=0)\nd = n.argmin(axis=0)\n"
                  "e = b.argmax(axis=0)\nh = (t * 0).argmin(axis=0)")
    check_columns("a = x3.argmax(axis=1)\nb = x3.argmin(axis=0)\nc = np.argmax(t.astype(np.uint8), axis=0)")


def test_prod():
    # (a float32 product is multiplied in float32, as NumPy's: its rounding, and its overflow to inf)
    check_columns("a = (x / 2 + 1).prod(axis=0)\nb = (x32 / 2 + 1).prod(axis=0)\nc = t.prod(axis=0)\n"
                  "d = i8.prod(axis=0)\ne = u8.prod(axis=0, dtype=np.uint16)\nh = (t + 1).prod(axis=0, dtype=np.int8)")


def test_any_all():
    check_columns("a = b.any(axis=0)\nc = b.all(axis=0)\nd = t.any(axis=0)\ne = t.all(axis=0)\nh = n.all(axis=0)\n"
                  "k = (x > 1).any(axis=0)\nm = np.logical_and.reduce(b, axis=0)")


@pytest.mark.parametrize("name", ["i8", "u8", "i32", "i64", "u64", "b"])
def test_int_and_bool_inputs_in_numpys_accumulator_dtypes(name):
    check_columns(f"a = {name}.sum(axis=0)\nc = {name}.mean(axis=0)\nd = {name}.max(axis=0)\ne = {name}.min(axis=0)\n"
                  f"h = {name}.argmax(axis=0)\nk = {name}.prod(axis=0)")
    if name != "b":
        check_columns(f"v = {name}.var(axis=0)\nw = {name}.std(axis=0, ddof=1)")


def test_dtype_argument():
    check_columns("a = x32.sum(axis=0, dtype=np.float64)\nc = x32.mean(axis=0, dtype=np.float64)\n"
                  "d = i8.sum(axis=0, dtype=np.int8)\ne = t.mean(axis=0, dtype=np.float32)\n"
                  "h = i64.mean(axis=0, dtype=np.int16)\nk = x.sum(axis=0, dtype=np.float32)\n"
                  "m = u8.sum(axis=0, dtype=np.uint8)\np = b.sum(axis=0, dtype=np.bool_)\nq = x.var(axis=0, dtype=np.float32)")


def test_keepdims():
    check_columns("a = x.sum(axis=0, keepdims=True)\na2 = t.argmax(axis=0, keepdims=True)\n"
                  "c = x3.std(axis=1, keepdims=True)\nd = x4.max(axis=(0, 1), keepdims=True)\ne = b.all(axis=0, keepdims=True)")


def test_three_dimensional_axes():
    check_columns("a = x3.sum(axis=0)\nb = x3.sum(axis=1)\nc = x3.mean(axis=(0, 1))\nd = x3.var(axis=1, ddof=1)")
    check_columns("a = x4.max(axis=0)\nb = x4.argmin(axis=1)\nc = (x4 * x4).sum(axis=(0, 1))\nd = x4.std(axis=(0, 1))")


def test_transposed_fortran_and_strided_inputs():
    # a transposed or Fortran-ordered input is reduced in its memory order (the tracer presents it so)
    check_columns("a = f.sum(axis=1)\nb = f.mean(axis=1)\nc = x.T.sum(axis=1)\nd = np.asfortranarray(x).var(axis=1)")
    # argmax/argmin see a Fortran input as it is: its layout chooses the column path for axis 1
    check_columns("a = f.argmax(axis=1)\nb = f.argmin(axis=1)")
    check_columns("a = y[:, ::2].sum(axis=0)\nb = y[::-1].mean(axis=0)\nc = y[::3, 5:-5].max(axis=0)\n"
                  "d = x3[:, ::2, 1:].sum(axis=1)")


def test_complex_inputs():
    # (complex runs as NumPy on the cpu backend; the cell's real parts still fuse)
    check("a = z.sum(axis=0)\nb = z.mean(axis=0)\nc = np.abs(z).max(axis=0)\nd = z.real.std(axis=0)", SETUP, backend="cpu")


def test_empty_axes():
    setup = SETUP + "e0 = np.zeros((0, 5))\ne1 = np.ones((5, 0))\ne2 = np.ones((3, 0, 4))\n"
    check("a = e0.sum(axis=0)\nb = e0.mean(axis=0)\nc = e1.sum(axis=0)\nd = e2.sum(axis=1)\ne = e2.prod(axis=1)\n"
          "h = e0.any(axis=0)\nk = e0.var(axis=0)", setup, backend="cpu")
    # no rows, wide columns: the column path's loops over the reduced axis run no iteration
    check_columns("a = w0.sum(axis=0)\nb = w0.mean(axis=0)\nc = w0.std(axis=0)\nd = w0.prod(axis=0)\ne = w0.all(axis=0)\n"
                  "h = (w0 + 1).astype(np.int8).sum(axis=0)", SETUP + "w0 = np.zeros((0, 20))\n")


# -- fused prologue and epilogue, several reductions ------------------------------------------------------

LAYER_NORM = "mu = x.mean(axis=0)\nvar = ((x - mu) ** 2).mean(axis=0)\nz = (x - mu) / np.sqrt(var + 1e-5) * g\n"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_column_layer_norm_is_one_kernel(dtype):
    setup = f"rng = np.random.default_rng(1)\nx = rng.normal(size=(300, 400)).astype('{dtype}')\n" \
            f"g = rng.normal(size=400).astype('{dtype}')\n"
    check_columns(LAYER_NORM, setup, kernels=1)


def test_staged_columns():
    check_columns("p = y / y.sum(axis=0)\nq = np.exp(y - y.max(axis=0))\nr = q / q.sum(axis=0, keepdims=True)\ndel q")
    check_columns("c = x4 - x4.mean(axis=1, keepdims=True)\nd = c / x4.std(axis=1, keepdims=True)")


def test_several_reductions_in_one_kernel():
    check_columns("a = y.sum(axis=0)\nb = y.max(axis=0)\nc = y.argmin(axis=0)\nd = y.std(axis=0, ddof=1)\n"
                  "e = (y * 2).mean(axis=0)\nh = (y > 0).any(axis=0)\nk = np.sqrt(a * a + 1) - b", kernels=1)


def test_prologue_outputs_and_epilogue_reading_arrays():
    check_columns("d = y * 2 - 1\ns = d.sum(axis=0)\nm = s / y.shape[0] + g[:1]\nw = np.where(m > 0, m, -m) * 3")


# -- NumPy's order, to the bit ------------------------------------------------------------------------

def _data(shape, dtype, seed=0):
    """Values of many magnitudes: a float32 sum rounds at every add, so a change of order shows."""
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, size=shape)).astype(dtype)


@pytest.mark.parametrize("shape,axis", [((37, 300), 0), ((3000, 70), 0), ((1000, 8), 0), ((20, 9000), 0),
                                        ((6, 400, 70), 1), ((50, 40, 70), (0, 1)), ((300, 5, 8), 0)])
def test_float32_column_sums_are_numpys_bits(shape, axis):
    x = _data(shape, np.float32, seed=len(shape))
    src = (f"s = x.sum(axis={axis})\nm = x.mean(axis={axis})\nv = x.var(axis={axis})\nd = x.std(axis={axis}, ddof=1)\n"
           f"p = (x * 2).sum(axis={axis})\nk = x.sum(axis={axis}, keepdims=True)")
    want = {"np": np, "x": x}
    exec(src, want)
    ns = {"np": np, "x": x}
    rep = run_cell(src, ns, backend="cpu", cache=False)
    assert all(COLUMNS_MARK in k["source"] for k in rep.kernel_list if k.get("source"))
    for name in "smvdpk":
        got, exp = ns[name], want[name]
        assert got.dtype == exp.dtype == np.float32 and got.shape == exp.shape, name
        assert np.array_equal(got, exp, equal_nan=True), f"{name}: {np.flatnonzero(got != exp)[:5]} differ"


def test_float32_sums_in_parallel_chunks_are_numpys_bits(monkeypatch):
    """Threads (their bound lowered to these sizes): chunks of the kept axes, each streaming every row."""
    monkeypatch.setattr(cpu, "PARALLEL_WORK", 1 << 16)
    x = _data((400, 1000), np.float32, seed=3)
    x3 = _data((30, 200, 300), np.float32, seed=4)
    ns = {"np": np, "x": x, "x3": x3}
    rep = run_cell("a = x.sum(axis=0)\nb = x3.sum(axis=1)\nc = x3.mean(axis=0)", ns, backend="cpu", cache=False)
    assert all(COLUMNS_MARK in k["source"] and k["parallel"] for k in rep.kernel_list if k.get("source"))
    assert np.array_equal(ns["a"], x.sum(axis=0))
    assert np.array_equal(ns["b"], x3.sum(axis=1))
    assert np.array_equal(ns["c"], x3.mean(axis=0))
