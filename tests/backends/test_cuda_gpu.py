"""The cupy backend on a real GPU: results against NumPy for the programs test_cuda.py compiles offline,
the transfer ledger of a real run equal to the dry run's, ``--keep``, device timings.

Marked ``gpu``; skipped without a CUDA device (``bench/gpu.sh`` runs them where there is one).
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import check
from test_cpu import BINARY, DTYPES, PROGRAMS, SETUP, UNARY, _numpy_accepts, _values

import jupyter_fuse as jf
from jupyter_fuse.backends import cuda_available

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not cuda_available(), reason="needs a CUDA device")]

GPU = dict(backend="cupy")


def gpu(src: str, setup: str, **kw):
    f = check(src, setup, **GPU, **kw)
    assert f.report is not None, f"the cell raised: {f.error!r}"
    for k in f.report.kernel_list:
        if k.get("source"):
            assert k["compiled"] is True and k["device_time"] is not None and k["device_time"] >= 0, k
    return f


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_unary_op(dtype):
    ops = [op for op in UNARY if _numpy_accepts(op, np.zeros(2, dtype))]
    gpu("\n".join(f"r_{op} = np.{op}(x)" for op in ops), f"x = {_values(dtype)}")


@pytest.mark.parametrize("left,right", [(d, d) for d in DTYPES] + [
    ("int8", "int64"), ("uint8", "int8"), ("int32", "float32"), ("uint64", "int64"), ("bool", "int16"),
    ("float32", "float64"), ("uint16", "float32"), ("int64", "float64")])
def test_every_binary_op(left, right):
    a, b = np.zeros(2, left), np.ones(2, right)
    ops = [op for op in BINARY if _numpy_accepts(op, a, b)]
    if np.result_type(a, b).kind in "iu":
        ops.remove("power")
    gpu("\n".join(f"r_{op} = np.{op}(x, y)" for op in ops), f"x = {_values(left)}\ny = {_values(right, seed=1)}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_on_each_axis(dtype):
    ops = ["sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "mean", "var", "std"]
    if np.dtype(dtype).kind == "b":
        ops.remove("var"), ops.remove("std"), ops.remove("mean")
    lines = []
    for op in ops:
        for axis in ("None", "0", "1", "(0, 1)" if op not in ("argmax", "argmin") else "-1"):
            lines.append(f"r_{op}_{len(lines)} = x.{op}(axis={axis})")
        if op not in ("argmax", "argmin"):
            lines.append(f"r_{op}_{len(lines)} = np.{op}(x, axis=1, keepdims=True)")
    setup = f"x = ({_values(dtype, 24)}).reshape(4, 6)"
    gpu("\n".join(lines), setup)
    gpu("\n".join(ln for ln in lines if "var" not in ln and "std" not in ln), setup)


def test_large_reductions_use_many_blocks_and_find_the_first_maximum():
    gpu("""
s = x.sum()
m = x.max()
a = x.argmax()
b = (x * 0).argmin()
r = x.reshape(1000, 1000).sum(axis=0)
""", "x = np.random.default_rng(0).random(1_000_000); x[777_777] = 2.0; x[888_888] = 2.0")


def test_views_scatter_and_creation():
    gpu("""
t = np.linspace(0.0, 1.0, 101)
y = np.sin(t * 3.0) + np.arange(101) * 0.5 + x[::-1] + m[None, 0, :101][0]
e = np.eye(5, k=1) * 3 + np.full((5, 5), 2.5)
u = g.copy()
u[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
g[:, 3] += 10
""", "x = np.random.default_rng(0).random(202)[::2]\nm = np.random.default_rng(1).random((2, 202))\n"
         "g = np.random.default_rng(2).random((6, 7))")


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_programs(name):
    gpu(PROGRAMS[name][0], SETUP)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_real_ledger_is_the_dry_runs(name):
    src = PROGRAMS[name][0] + "\nprint(float(np.asarray(X).sum()))\n"
    ns_real, ns_dry = {}, {}
    exec(SETUP, {"np": np}, ns_real)
    exec(SETUP, {"np": np}, ns_dry)
    real = jf.run_cell(src, dict(ns_real, np=np), backend="cupy")
    dry = jf.run_cell(src, dict(ns_dry, np=np), backend="cupy", dry_run=True)
    strip = lambda r: [(t["direction"], t["bytes"], t["name"], t["cause"]) for t in r.transfers]  # noqa: E731
    assert strip(real) == strip(dry)
    assert [k["source"] for k in real.kernel_list] == [k["source"] for k in dry.kernel_list]
    assert all(t["time"] > 0 for t in real.transfers) and not any("time" in t for t in dry.transfers)


def test_keep_leaves_cupy_arrays_and_the_next_cell_transfers_nothing():
    import cupy

    ns = {"np": np, "x": np.random.default_rng(0).random(1000)}
    first = jf.run_cell("y = np.sin(x) * 2", ns, backend="cupy", keep=True)
    assert isinstance(ns["y"], cupy.ndarray)
    assert [t["direction"] for t in first.transfers] == ["h2d"]
    second = jf.run_cell("z = y + 1\ny *= 3", ns, backend="cupy", keep=True)
    assert second.transfers == []
    np.testing.assert_allclose(cupy.asnumpy(ns["z"]), np.sin(ns["x"]) * 2 + 1)
    np.testing.assert_allclose(cupy.asnumpy(ns["y"]), np.sin(ns["x"]) * 6)
    third = jf.run_cell("w = z.sum()", ns, backend="cupy")
    assert [t["direction"] for t in third.transfers] == ["d2h"] and type(ns["w"]) is np.float64


def test_matmul_is_cublas_and_unsupported_ops_are_cupy_functions():
    f = gpu("h = np.maximum(X @ W + b, 0)\nc = X.astype(np.complex128) * 1j\nq = np.sin(X.astype(np.float16))",
            SETUP)
    routes = [k.get("route", "") for k in f.report.kernel_list if k["kind"] == "single"]
    assert any("cuBLAS" in r for r in routes) and all("host" not in r for r in routes)


def test_untraced_functions_run_as_cupy_twins_and_move_what_the_dry_run_says():
    from test_cuda import TWINS

    f = gpu(TWINS, SETUP)  # results and dtypes against NumPy
    ns_real, ns_dry = {"np": np}, {"np": np}
    exec(SETUP, ns_real)
    exec(SETUP, ns_dry)
    real = jf.run_cell(TWINS, ns_real, backend="cupy")
    dry = jf.run_cell(TWINS, ns_dry, backend="cupy", dry_run=True)
    twins = lambda r: [k["route"] for k in r.kernel_list if k.get("route", "").endswith("(on the device)")]  # noqa: E731
    assert twins(f.report) == twins(dry) and len(twins(dry)) == 5  # sort, cumsum, triu, diff, cumsum
    strip = lambda r: [(t["direction"], t["bytes"], t["name"], t["cause"]) for t in r.transfers]  # noqa: E731
    assert strip(real) == strip(dry)


def test_a_replay_on_the_gpu_matches_numpy_and_moves_what_the_traced_run_moved():
    src = "y = np.sin(x) * 2\ns = y.sum()\nif s > 0:\n    z = y / s\nprint(s)\nx += 1"  # (a float() would be a guard)
    ns = {"np": np, "x": np.random.default_rng(0).random(1000)}
    ref = {"np": np, "x": ns["x"].copy()}
    x0 = ns["x"]
    reports = [jf.run_cell(src, ns, backend="cupy") for _ in range(3)]
    for _ in range(3):
        exec(src, ref)
    assert [r.cache for r in reports] == ["miss", "hit", "hit"] and ns["x"] is x0
    for k in ("x", "y", "z", "s"):
        np.testing.assert_allclose(ns[k], ref[k])
        assert type(ns[k]) is type(ref[k])
    # (not the names: a replay calls the value a print() copies back "?", on every cupy backend alike)
    strip = lambda r: [(t["direction"], t["bytes"], t["cause"]) for t in r.transfers]  # noqa: E731
    assert strip(reports[0]) == strip(reports[1]) == strip(reports[2])
