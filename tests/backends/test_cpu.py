"""The cpu backend against NumPy: every op and dtype, kernel counts, fallbacks, --no-fuse."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from harness import check, run_fused

import jupyter_fuse as jf

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]

UNARY = ["negative", "positive", "absolute", "fabs", "sqrt", "cbrt", "square", "reciprocal", "exp", "exp2",
         "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
         "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "floor", "ceil", "trunc", "rint",
         "sign", "signbit", "isnan", "isfinite", "isinf", "logical_not", "invert"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power", "maximum",
          "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign", "logaddexp", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
          "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "heaviside"]


def _values(dtype: str, n: int = 24, seed: int = 0) -> str:
    """Setup source for an array with the awkward values of its dtype."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return f"np.random.default_rng({seed}).random({n}) > 0.5"
    if dt.kind == "f":
        return (f"np.concatenate([np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 0.5, 1e30, -2.5]), "
                f"np.random.default_rng({seed}).normal(0, 10, {n - 10})]).astype('{dtype}')")
    info = np.iinfo(dt)
    return (f"np.concatenate([np.array([0, 1, 2, 7, {info.max}, {info.min}, {info.max - 1}], dtype='{dtype}'), "
            f"np.random.default_rng({seed}).integers({info.min}, {info.max}, {n - 7}, dtype='{dtype}', endpoint=True)])")


def _numpy_accepts(op: str, *samples: object) -> bool:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(np, op)(*samples)
            return True
        except (TypeError, ValueError):
            return False


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_unary_op(dtype):
    """All unary ops of one dtype in one cell: one fused kernel (float16 results run as NumPy)."""
    sample = np.zeros(2, dtype)
    ops = [op for op in UNARY if _numpy_accepts(op, sample)]
    src = "\n".join(f"r_{op} = np.{op}(x)" for op in ops)
    f = check(src, f"x = {_values(dtype)}", backend="cpu")
    fused = [k for k in f.report.kernel_list if k.get("source")]
    assert len(fused) == 1, f.report


@pytest.mark.parametrize("left,right", [(d, d) for d in DTYPES] + [
    ("int8", "int64"), ("uint8", "int8"), ("int32", "float32"), ("uint64", "int64"), ("bool", "int16"),
    ("float32", "float64"), ("uint16", "float32"), ("int64", "float64"), ("uint64", "uint8")])
def test_every_binary_op(left, right):
    a, b = np.zeros(2, left), np.ones(2, right)
    ops = [op for op in BINARY if _numpy_accepts(op, a, b)]
    src = "\n".join(f"r_{op} = np.{op}(x, y)" for op in ops)
    check(src, f"x = {_values(left)}\ny = {_values(right, seed=1)}", backend="cpu")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", ["3", "-2", "0.5", "True", "np.float32(2.5)", "np.int8(-3)"])
def test_python_and_numpy_scalars(dtype, scalar):
    """NEP 50: Python scalars are weak, NumPy scalars are not; values as NumPy computes them."""
    src = f"""
a = x + {scalar}
b = x * {scalar} - x
c = x > {scalar}
d = np.maximum(x, {scalar})
e = {scalar} - x
"""
    check(src, f"x = {_values(dtype)}", backend="cpu")


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_every_axis(dtype):
    ops = ["sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "mean", "var", "std"]
    if np.dtype(dtype).kind == "b":
        ops.remove("var"), ops.remove("std"), ops.remove("mean")
    lines = []
    for op in ops:
        for axis in ("None", "0", "1", "(0, 1)" if op not in ("argmax", "argmin") else "-1"):
            lines.append(f"r_{op}_{len(lines)} = x.{op}(axis={axis})")
        if op not in ("argmax", "argmin"):
            lines.append(f"r_{op}_{len(lines)} = np.{op}(x, axis=1, keepdims=True)")
    check("\n".join(lines), f"x = ({_values(dtype, 24)}).reshape(4, 6)", backend="cpu")


def test_astype_every_pair():
    lines = [f"r_{i} = x.astype('{t}')" for i, t in enumerate(DTYPES)]
    for src_dt in DTYPES:
        if np.dtype(src_dt).kind != "f":
            check("\n".join(lines), f"x = {_values(src_dt)}", backend="cpu")


def test_float_to_int_casts_of_values_in_range():
    # NaN, inf and out-of-range floats cast to ints are undefined in C; NumPy warns
    # "invalid value encountered in cast" and its answer depends on its SIMD path, so
    # only values every int type can represent (after truncation) are compared.
    lines = [f"r_{i} = x.astype('{t}')" for i, t in enumerate(DTYPES)]
    for src_dt in ("float32", "float64"):
        check("\n".join(lines), f"x = np.array([0.0, -0.0, 0.5, 1.9, 7.0, 100.7, 127.0, 3.0, 0.25], '{src_dt}')",
              backend="cpu")


def test_overflow_division_by_zero_nan_inf():
    check("""
a = x + np.int8(100)
b = x // y
c = x % y
d = np.int8(-128) // np.int8(-1) + x * 0
f = fx / fy
g = fx // fy
h = fx % fy
i = np.where(np.isnan(f), -1.0, f)
""", """
x = np.array([100, -128, 127, 5, -7, 0], dtype=np.int8)
y = np.array([0, -1, 3, 0, 2, -3], dtype=np.int8)
fx = np.array([1.0, -1.0, 0.0, np.inf, np.nan, 5.5])
fy = np.array([0.0, 0.0, 0.0, 2.0, 1.0, -2.0])
""", backend="cpu")


SMALL_INTS = ("x = np.array([100, 100, 3], np.int8); u = np.array([200, 100, 3], np.uint8); "
              "w = np.array([30000, -30000, 7], np.int16); z = np.array([2**31 - 1, 5, -2**31], np.int32)")


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("source", [
    "r = (x * x).astype(np.int64)", "r = (x + x) / 2", "r = (x * x).sum()", "r = (x + x).max()",
    "r = np.argmax(x + x)", "r = (x * x).prod(); s = (x * x).var()", "r = (u - u[::-1]).mean(); s = u * 2 + 1",
    "r = w * 3; s = (w + w).sum()", "r = (z + 1) // 2; s = z * z", "r = x ** 3; s = u ** 2",
    "r = -x - x; s = abs(x + x)", "r = x << 3; s = (u << 2) >> 1",
])
def test_small_integers_wrap_inside_fused_kernels(source, fuse):  # numba computes them in 64 bits
    check(source, SMALL_INTS, backend="cpu", fuse=fuse)


@pytest.mark.parametrize("fuse", [True, False])
def test_comparisons_with_python_ints_out_of_the_dtypes_range(fuse):  # by value, not wrapped: u8 < -1 is False
    check("t0 = u < -1; t1 = u > 300; t2 = u == -1; t3 = x != 1000; t4 = np.less(u, -1); t5 = -1 < u; "
          "t6 = 300 >= x; t7 = u >= -1; t8 = (u + 1) <= 256; t9 = z > 2**40", SMALL_INTS, backend="cpu", fuse=fuse)


@pytest.mark.parametrize("fuse", [True, False])
def test_int64_against_uint64_compares_exactly(fuse):  # NumPy's own loop; numba would compare as float64
    check("r = x == np.uint64(2**63); q = x < np.uint64(2**63); a = x <= u; b = u > x; c = x != u; d = u >= x",
          "x = np.array([0, -1, 2**63 - 1, -2**63, 5]); u = np.array([2**63, 0, 2**63 - 1, 2**64 - 1, 5], np.uint64)",
          backend="cpu", fuse=fuse)


@pytest.mark.parametrize("fuse", [True, False])
def test_signed_zeros_and_nans_in_maximum_minimum_fmax_fmin_clip(fuse):  # ties give what NumPy gives
    pairs = [(p, q) for p in ("-0.0", "0.0", "np.nan", "np.inf", "-1.0") for q in ("-0.0", "0.0", "np.nan", "-np.inf", "1.0")]
    setup = (f"x = np.array([{', '.join(p for p, _ in pairs)}]); y = np.array([{', '.join(q for _, q in pairs)}]); "
             "x32 = x.astype(np.float32); y32 = y.astype(np.float32)")
    check("a = np.maximum(x, y); b = np.minimum(x, y); c = np.fmax(x, y); d = np.fmin(x, y)\n"
          "e = np.maximum(x32, y32); f = np.fmin(y32, x32); g = np.clip(x, -0.0, 0.0); h = np.clip(x, 0.0, 1.0)\n"
          "j = np.maximum(x, 0.0); k = np.minimum(-0.0, x)", setup, backend="cpu", fuse=fuse)


def test_views_broadcasts_and_creation_fuse():
    f = check("""
t = np.linspace(0.0, 1.0, 101)
a = np.arange(101) * 0.5
y = np.sin(t * 3.0) + a + x[::-1] + m[None, 0, :101][0] + 2 * np.ones(101)
z = np.arange(3, 300, 3).astype(np.float32) / 7
w = np.arange(0.1, 10.0, 0.3) * 2
e = np.eye(5, k=1) * 3 + np.full((5, 5), 2.5)
""", "x = np.random.default_rng(0).random(202)[::2]\nm = np.random.default_rng(1).random((2, 202))", backend="cpu")
    kinds = [k["kind"] for k in f.report.kernel_list]
    assert kinds.count("ew") <= 4, f.report


def test_assignment_through_views():
    check("""
u = g.copy()
u[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
g[0] = -1
g[:, 3] += 10
h = g.T.copy()
h[::2] *= 2
v = u[2]
v[1] = 100.0
""", "g = np.random.default_rng(0).random((6, 7))", backend="cpu")


@pytest.mark.parametrize("fuse", [True, False])
def test_assigned_values_with_extra_leading_ones(fuse):  # NumPy drops them: b[...] = a[None]
    check("b[...] = a; g[1:] = (g[:2] * 2)[None]; c = g[0]; c[...] = np.ones((1, 7))",
          "a = np.array([True]); b = np.array(False); g = np.random.default_rng(0).random((3, 7))",
          backend="cpu", fuse=fuse)


# -- kernel counts of canonical programs ----------------------------------------------------

PROGRAMS = {
    "black_scholes": ("""
d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / (v * np.sqrt(T))
d2 = d1 - v * np.sqrt(T)
cdf1 = 0.5 * (1 + np.tanh(0.7978845608 * (d1 + 0.044715 * d1 ** 3)))
cdf2 = 0.5 * (1 + np.tanh(0.7978845608 * (d2 + 0.044715 * d2 ** 3)))
call = S * cdf1 - K * np.exp(-r * T) * cdf2
put = call - S + K * np.exp(-r * T)
del d1, d2, cdf1, cdf2
""", 1),
    "softmax": ("""
e = np.exp(X - X.max(axis=1, keepdims=True))
p = e / e.sum(axis=1, keepdims=True)
del e
""", 1),
    "layernorm": ("""
mu = X.mean(axis=-1, keepdims=True)
xc = X - mu
out = xc / np.sqrt((xc ** 2).mean(axis=-1, keepdims=True) + 1e-5)
del mu, xc
""", 1),
    "variance_in_one_kernel": ("""
mu = X.mean(axis=0)
s = ((X - mu) ** 2).mean(axis=0)
""", 1),
    "stencil": ("""
out = 0.25 * (G[:-2, 1:-1] + G[2:, 1:-1] + G[1:-1, :-2] + G[1:-1, 2:]) - G[1:-1, 1:-1]
""", 1),
    "time_loop": ("""
x = S.copy()
vel = K.copy()
for i in range(20):
    vel = vel - 0.01 * x * np.abs(x)
    x = x + 0.01 * vel
""", 1),
    "relu_layer": ("h = np.maximum(X @ W + b, 0)", 2),
    "nbody": ("""
dx = P[:, None] - P[None, :]
dy = Q[:, None] - Q[None, :]
r2 = dx * dx + dy * dy + 0.01
inv = 1.0 / (r2 * np.sqrt(r2))
ax = (dx * inv).sum(axis=1)
ay = (dy * inv).sum(axis=1)
del dx, dy, r2, inv
""", 1),
    "reduce_then_scale": ("s = X.sum(axis=1) / X.shape[1]\nm = np.sqrt(X.var(axis=1) + 1)", 1),
}
SETUP = """
rng = np.random.default_rng(0)
S = rng.random(500) + 1; K = rng.random(500) + 1; r = 0.05; v = 0.2; T = 1.0
X = rng.random((40, 30)); W = rng.random((30, 8)); b = rng.random(8)
G = rng.random((30, 40)); P = rng.random(60); Q = rng.random(60)
"""


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_kernel_counts(name):
    src, kernels = PROGRAMS[name]
    f = check(src, SETUP, backend="cpu", expect_kernels=kernels)
    assert f.report.kernels == kernels  # not fewer either: the count is the claim
    assert not f.report.fallbacks
    assert all(b["reason"] for b in f.report.breaks)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_no_fuse_gives_the_same_results(name):
    src, _ = PROGRAMS[name]
    f = check(src, SETUP, backend="cpu", fuse=False)
    fused = run_fused(src, SETUP, backend="cpu")
    # one kernel per distinct op (a repeated expression is computed once), never fused
    assert fused.report.kernels < f.report.kernels <= f.report.ops
    assert all(len(k["ops"]) <= 3 for k in f.report.kernel_list)  # an op, its cast and its write
    for k in fused.ns:
        if isinstance(fused.ns[k], np.ndarray):
            np.testing.assert_allclose(f.ns[k], fused.ns[k], rtol=1e-13)


def test_staged_reduction_keeps_rows_in_one_kernel():
    """max -> exp-sum -> divide per row: three passes of one kernel, e in a row-sized scratch buffer."""
    f = check("e = np.exp(X - X.max(axis=1, keepdims=True))\np = e / e.sum(axis=1, keepdims=True)\ndel e",
              SETUP, backend="cpu", expect_kernels=1)
    (k,) = f.report.kernel_list
    assert k["bytes_written"] == 40 * 30 * 8  # only p: e never reaches memory
    body = k["source"].split("def _kernel_seq")[0]
    # (the exp-sum pass runs its rows in blocks around NumPy's own exp loop: cpu_nploop)
    assert body.count("for i1 in range(s1)") + body.count("for blk_") == 3
    assert "= np.exp(" in body and "NumPy's own loop" in body


def test_full_reductions_are_not_staged():
    """A whole-array reduction has no rows: using its result per element costs a second kernel."""
    f = check("y = X - X.mean()", SETUP, backend="cpu", expect_kernels=2)
    assert any("reduction boundary" in b["reason"] for b in f.report.breaks)


def test_a_non_keepdims_result_broadcast_across_columns_is_not_staged():
    # X.sum(axis=0) has shape (30,): it broadcasts along rows, i.e. per column of X (40, 30),
    # so it is constant along axis 0, the reduced axis: that one may be staged...
    check("c = X / X.sum(axis=0)", SETUP, backend="cpu", expect_kernels=1)
    # ...but a row sum of shape (40,) would broadcast against the last axis: NumPy raises
    check("c = X / X.sum(axis=1)", SETUP, backend="cpu")


def test_intermediates_are_not_written():
    """Only what the namespace still holds leaves the kernel."""
    f = check("""
a = np.sin(x)
b = a * a
c = b + 1
del a, b
""", "x = np.random.default_rng(0).random(1000)", backend="cpu", expect_kernels=1)
    (k,) = f.report.kernel_list
    assert k["bytes_written"] == 1000 * 8 and k["bytes_read"] == 1000 * 8


def test_unsupported_dtype_falls_back_for_that_op_only():
    f = check("""
h = x.astype(np.float16)
y = np.sin(h)
z = np.cos(x) * 2 + 1
c = x.astype(np.complex128) * 1j
""", "x = np.random.default_rng(0).random(50)", backend="cpu")
    single = [k for k in f.report.kernel_list if not k.get("source")]
    assert single and all("runs as NumPy" in k["fallback"] for k in single)
    assert any(k.get("source") and "cos" in k["ops"] for k in f.report.kernel_list)


def test_sort_is_a_recorded_fallback_and_the_rest_fuses():
    f = check("s = np.sort(x)\ny = np.exp(s) * 2 + s", "x = np.random.default_rng(0).random(100)",
              backend="cpu", expect_kernels=2)
    assert [fb["op"] for fb in f.report.fallbacks] == ["np.sort"]
    assert "np.sort is not supported lazily" in f.report.fallbacks[0]["reason"]


def test_kernel_size_limit_cuts_with_a_reason():
    src = "y = x\n" + "y = y * 1.0001 + 0.5\n" * 150
    f = check(src, "x = np.random.default_rng(0).random(10)", backend="cpu")
    assert f.report.kernels == 2
    assert any("kernel size limit" in b["reason"] for b in f.report.breaks)


def test_kernel_input_limit_cuts_with_a_reason():
    """A kernel reads at most MAX_KERNEL_READS arrays from memory: numba's compile time grows faster
    than linearly with them (a loop's steps each reading another kernel's value made kernels of 180
    arrays, 18 s each to compile)."""
    from jupyter_fuse.fuse import MAX_KERNEL_READS

    n = MAX_KERNEL_READS + 8
    setup = "\n".join(f"a{i} = np.random.default_rng({i}).random(10)" for i in range(n))
    f = check("s = " + " + ".join(f"a{i}" for i in range(n)), setup, backend="cpu")
    assert f.report.kernels == 2
    assert any("kernel input limit" in b["reason"] for b in f.report.breaks)


def test_kernel_select_limit_cuts_a_chain_of_where_with_a_reason():
    """A kernel holds at most MAX_KERNEL_SELECTS ``np.where``: LLVM's optimizer takes time exponential in a
    chain of them that reads nothing changing along the loop (a CRC of one row, bit by bit: a kernel of 50
    selects compiled for more than 10 minutes in the background, holding every compile after it)."""
    from jupyter_fuse.fuse import MAX_KERNEL_SELECTS

    src = "crc = c ^ row[0]\nfor _ in range(40):\n    crc = np.where(crc & 0x80, (crc << 1) ^ 7, crc << 1) & 0xFF\n"
    f = check(src, "c = np.zeros(1, np.int64); row = np.array([[49, 50, 51]])", backend="cpu")
    counts = [sum(op == "where" for op in k["ops"]) for k in f.report.kernel_list]
    assert max(counts) == MAX_KERNEL_SELECTS and f.report.kernels == 3, counts
    assert any("kernel select limit" in b["reason"] for b in f.report.breaks), f.report.breaks


def test_syncs_break_with_their_line():
    f = check("""
y = np.sin(x) * 2
if y.sum() > 0:
    z = y + 1
""", "x = np.random.default_rng(0).random(100)", backend="cpu")
    assert any(b["from"] == "sync" and "line 3" in b["reason"] for b in f.report.breaks), f.report.breaks


def test_compile_time_is_reported_apart_from_run(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_FUSE_CACHE_DIR", str(tmp_path))
    ns = {"np": np, "x": np.arange(10.0)}
    first = jf.run_cell("y = np.cosh(x) * 3.25 - np.sinh(x)", ns, backend="cpu")
    second = jf.run_cell("y = np.cosh(x) * 3.25 - np.sinh(x)", ns, backend="cpu")
    assert first.times["compile"] > 0.05 and first.kernel_list[0]["cache"] == "compiled"
    assert second.times["compile"] == 0 and second.kernel_list[0]["cache"] == "memory"


# -- the disk cache ----------------------------------------------------------------------------

_CHILD = """
import json, sys, numpy as np, jupyter_fuse as jf
ns = {"np": np, "x": np.linspace(0, 1, 1000)}
r = jf.run_cell("y = np.tanh(x) * 1.75 + np.log1p(x)", ns, backend="cpu")
assert np.allclose(ns["y"], np.tanh(ns["x"]) * 1.75 + np.log1p(ns["x"]))
print(json.dumps([k.get("cache") for k in r.kernel_list] + [r.times["compile"]]))
"""


def _child(cache: str) -> list:
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, JUPYTER_FUSE_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_disk_cache_survives_a_restart(tmp_path):
    first = _child(str(tmp_path))
    second = _child(str(tmp_path))
    assert first[0] == "compiled" and second[0] == "disk", (first, second)  # (how much faster: bench/, not a test)


def test_two_processes_at_once_share_the_cache(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(_child, [str(tmp_path)] * 2))
    assert all(r[0] in ("compiled", "disk") for r in results)
    assert _child(str(tmp_path))[0] == "disk"


def test_a_corrupt_cache_entry_is_recompiled(tmp_path):
    _child(str(tmp_path))
    damaged = 0
    for f in (tmp_path / "cpu" / "__pycache__").iterdir():
        f.write_bytes(b"\x00garbage" * 10)
        damaged += 1
    assert damaged
    assert _child(str(tmp_path))[0] in ("compiled", "disk")  # it ran and gave NumPy's answer
    assert _child(str(tmp_path))[0] == "disk"  # and the entry was rewritten


def test_kernels_run_op_by_op_write_in_place_where_the_plan_allows(monkeypatch):
    """Kernels run op by op with NumPy (the numpy backend; on cpu while numba compiles, and kernels numba
    cannot take) write an assignment whose old destination nothing reads afterwards into it, as NumPy
    does: a row sweep copied the whole array for every row before."""
    from jupyter_fuse.backends import numpy as npb

    calls: list[bool] = []
    real = npb.run_node

    def spy(node, args, in_place=False):
        if node.op == "setitem":
            calls.append(in_place)
        return real(node, args, in_place)

    monkeypatch.setattr(npb, "run_node", spy)
    src = ("v = u * 1.0\n"
           "for i in range(1, 6):\n"
           "    v[i, :] = v[i, :] - 0.3 * v[i - 1, :]\n"
           "v[0, :] = 1\n"
           "v[:, 0] = 2\n"
           "w = v[2:4, 1:3] * 2")
    check(src, "u = np.arange(48.0).reshape(6, 8)", backend="numpy")
    assert True in calls, calls


def test_an_integer_power_with_a_negative_exponent_after_a_positive_one():
    """Whether a node renders was remembered by its constants' types, not their values: `x ** 2` made
    `x[:0] ** -3` (NumPy: an empty result, no error) look renderable, and rendering it failed (generator
    seed 210392, in a run of many programs)."""
    check("y = x ** 2\nz = x[:0] ** -3\nw = x ** 3", "x = np.arange(5)", backend="cpu")
    check("z = x[:0] ** -3", "x = np.arange(5)", backend="cpu")
    check("y = x ** 2\nz = x[:0] ** -3\nw = x ** 3", "x = np.arange(5)", backend="cupy", dry_run=True)


def test_scalar_arguments_go_to_numba_as_python_scalars_of_the_same_type():
    """float64, int64 and bool coefficients are passed as Python scalars (numba types them alike and
    unboxes them faster); other dtypes stay NumPy scalars, which numba types by their dtype."""
    from jupyter_fuse.backends.cpu import _plain

    for v, t in ((np.float64(-0.0), float), (np.float64("nan"), float), (np.int64(-7), int), (np.bool_(True), bool)):
        got = _plain(v)
        assert type(got) is t and (got == v or got != got) and str(got) == str(v.item())
    for v in (np.float32(1.5), np.int32(3), np.uint64(2**64 - 1), np.int8(-1)):
        assert _plain(v) is v
    ns = {"np": np, "x": np.linspace(-1.0, 1.0, 9), "k": np.int64(3)}
    r = jf.run_cell("y = x * -0.0 + (x > 0.25) * k - 1e308 * 10 * x", ns, backend="cpu", cache=False)
    with np.errstate(all="ignore"):
        want = ns["x"] * -0.0 + (ns["x"] > 0.25) * ns["k"] - 1e308 * 10 * ns["x"]
    assert r.kernels == 1 and np.array_equal(ns["y"], want, equal_nan=True)
    assert np.array_equal(np.signbit(ns["y"]), np.signbit(want))
