"""The cupy backend without a GPU: every kernel shape and dtype rendered as CUDA and compiled by NVRTC
(``--dry-run``), and executed on the CPU (``--emulate``), results against NumPy, and the transfer
ledger a real run would keep.

Every test runs in both modes (the ``cuda`` fixture; ``CUDA`` holds the mode's ``run_cell``
options) unless it is about one of them (``@dry_run_only``). Under ``--emulate`` the values are the
CUDA kernels' own, so a wrong index, cast or reduction tree fails here although CI has no GPU.
Strict mode (tests/conftest.py) turns a kernel that fails to render or compile into a test failure.
The GPU twins of these tests are in test_cuda_gpu.py; test_cuda_emulate.py has the emulator's own.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import check
from test_cpu import BINARY, DTYPES, SETUP, UNARY, _numpy_accepts, _values

import jupyter_fuse as jf
from jupyter_fuse.backends import BackendUnavailable, cuda_available, get_backend
from jupyter_fuse.backends import cupy as jc
from jupyter_fuse.backends import cuda_render
from jupyter_fuse.backends.cuda_emulate import EMULATED

MODES = {"dry_run": {"dry_run": True}, "emulate": {"emulate": True}}
CUDA: dict = {}  # the running test's mode: run_cell's options


def dry_run_only(test):
    """A test about the dry run itself (or about no mode): it runs once."""
    test.dry_run_only = True
    return test


def pytest_generate_tests(metafunc):
    modes = ["dry_run"] if getattr(metafunc.function, "dry_run_only", False) else list(MODES)
    metafunc.parametrize("cuda", modes, indirect=True)


@pytest.fixture(autouse=True)
def cuda(request):
    CUDA.clear()
    CUDA.update(MODES[request.param])
    return request.param


def dry(src: str, setup: str, **kw):
    """check() on the dry run (results are NumPy's) or the emulator (results are the CUDA kernels'):
    every fused kernel compiled for sm_90 (and, emulated, for the host and run there)."""
    f = check(src, setup, backend="cupy", **CUDA, **kw)
    assert f.report is not None, f"the cell raised: {f.error!r}"
    fused = [k for k in f.report.kernel_list if k.get("source")]
    for k in fused:
        assert k["compiled"] is True and "sm_90" in k["archs"], k
        assert k["source"].lstrip().startswith("#define BLOCK")
        if CUDA.get("emulate"):
            assert k["runs_on"] == EMULATED and k["emulation_time"] >= 0 and "host" in k["archs"], k
    return f


def fused_kernels(f) -> list[dict]:
    return [k for k in f.report.kernel_list if k.get("source")]


def edit_source(monkeypatch, old: str, new: str, count: int = -1) -> None:
    """Every kernel rendered from now on (in this test) has ``old`` replaced by ``new``: a broken kernel."""
    real = cuda_render.render

    def edited(kernel):
        r = real(kernel)
        r.source = r.source.replace(old, new, count)
        return r

    monkeypatch.setattr(jc, "render", edited)


# -- every op and dtype -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_every_unary_op(dtype):
    sample = np.zeros(2, dtype)
    ops = [op for op in UNARY if _numpy_accepts(op, sample)]
    src = "\n".join(f"r_{op} = np.{op}(x)" for op in ops)
    f = dry(src, f"x = {_values(dtype)}")
    assert len(fused_kernels(f)) == 1, f.report


@pytest.mark.parametrize("left,right", [(d, d) for d in DTYPES] + [
    ("int8", "int64"), ("uint8", "int8"), ("int32", "float32"), ("uint64", "int64"), ("bool", "int16"),
    ("float32", "float64"), ("uint16", "float32"), ("int64", "float64")])
def test_every_binary_op(left, right):
    a, b = np.zeros(2, left), np.ones(2, right)
    ops = [op for op in BINARY if _numpy_accepts(op, a, b)]
    if np.result_type(a, b).kind in "iu":  # integer power with negative array exponents raises (eagerly)
        ops.remove("power")
    src = "\n".join(f"r_{op} = np.{op}(x, y)" for op in ops)
    f = dry(src, f"x = {_values(left)}\ny = {_values(right, seed=1)}")
    assert len(fused_kernels(f)) == 1, f.report


@pytest.mark.parametrize("dtype", DTYPES)
def test_python_and_numpy_scalars_are_kernel_arguments(dtype):
    lines = []
    for i, s in enumerate(["3", "-2", "0.5", "True", "np.float32(2.5)", "np.int8(-3)"]):
        for expr in [f"x + {s}", f"x * {s} - x", f"x > {s}", f"np.maximum(x, {s})", f"{s} - x"]:
            try:  # NEP 50: uint8 + -2 raises OverflowError, bool - bool a TypeError: those run as NumPy's errors
                eval(expr, {"np": np, "x": np.zeros(2, dtype)})
            except Exception:  # noqa: BLE001
                continue
            lines.append(f"r{len(lines)} = {expr}")
    f = dry("\n".join(lines), f"x = {_values(dtype)}")
    (k,) = fused_kernels(f)
    assert "const " in k["source"] and " p0" in k["source"]  # scalars are arguments, not literals


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
    f = dry("\n".join(lines), f"x = ({_values(dtype, 24)}).reshape(4, 6)")
    modes = {k["mode"] for k in fused_kernels(f)}
    assert "block" in modes, modes  # var/std over everything: one block per result
    f = dry("\n".join(ln for ln in lines if "var" not in ln and "std" not in ln),
            f"x = ({_values(dtype, 24)}).reshape(4, 6)")
    modes = {k["mode"] for k in fused_kernels(f)}
    assert modes == {"full", "block"}, modes  # partials per block, then one final block


def test_reductions_over_three_axes_and_strided_inputs():
    dry("""
a = x.sum(axis=(0, 2))
b = x[::-1, :, ::2].max(axis=1, keepdims=True)
c = x.transpose(2, 0, 1).argmin(axis=2)
d = x[:, 1].mean()
e = x.std(axis=(1, 2), ddof=1)
""", "x = np.random.default_rng(0).normal(size=(3, 4, 5))")


def test_astype_every_pair():
    lines = [f"r_{i} = x.astype('{t}')" for i, t in enumerate(DTYPES)]
    for src_dt in DTYPES:
        if np.dtype(src_dt).kind != "f":
            dry("\n".join(lines), f"x = {_values(src_dt)}")
    for src_dt in ("float32", "float64"):
        dry("\n".join(lines), f"x = np.array([0.0, -0.0, 0.5, 1.9, 7.0, 100.7, 127.0, 3.0, 0.25], '{src_dt}')")


def test_overflow_division_by_zero_nan_inf():
    dry("""
a = x + np.int8(100)
b = x // y
c = x % y
d = np.int8(-128) // np.int8(-1) + x * 0
f = fx / fy
g = fx // fy
h = fx % fy
i = np.where(np.isnan(f), -1.0, f)
j = np.clip(fx, -1.0, 2.0) + np.clip(x, -3, 4)
k = x ** 3 + np.abs(x) + (x << 2) + (x >> 9)
""", """
x = np.array([100, -128, 127, 5, -7, 0], dtype=np.int8)
y = np.array([0, -1, 3, 0, 2, -3], dtype=np.int8)
fx = np.array([1.0, -1.0, 0.0, np.inf, np.nan, 5.5])
fy = np.array([0.0, 0.0, 0.0, 2.0, 1.0, -2.0])
""")


def test_comparisons_with_python_ints_out_of_range_are_constants_in_the_kernel():
    f = dry("t0 = u < -1\nt1 = u != 300\nt2 = -1 < u\nt3 = u + 1 < 0", "u = np.array([0, 5, 255], np.uint8)")
    (k,) = fused_kernels(f)
    assert "false" in k["source"] and "true" in k["source"]  # by value, not a wrapped 255 or 44


def test_int64_against_uint64_compares_exactly_in_the_kernel():
    f = dry("a = x <= u\nb = u > x\nc = x == np.uint64(2**63)",
            "x = np.array([0, -1, 2**63 - 1, -2**63]); u = np.array([2**63, 0, 2**63 - 1, 2**64 - 1], np.uint64)")
    (k,) = fused_kernels(f)
    assert "cmp_iu(" in k["source"]  # not C's conversion of the signed side to unsigned


def test_views_broadcasts_creation_and_multi_output():
    f = dry("""
t = np.linspace(0.0, 1.0, 101)
a = np.arange(101) * 0.5
y = np.sin(t * 3.0) + a + x[::-1] + m[None, 0, :101][0] + 2 * np.ones(101)
z = np.arange(3, 300, 3).astype(np.float32) / 7
w = np.arange(0.1, 10.0, 0.3) * 2
e = np.eye(5, k=1) * 3 + np.full((5, 5), 2.5)
o = m[:, :101].T * x[:101, None]
""", "x = np.random.default_rng(0).random(202)[::2]\nm = np.random.default_rng(1).random((2, 202))")
    multi = [k for k in fused_kernels(f) if k["source"].count("* __restrict__ out") > 1]
    assert multi, "t, a and y are three outputs of one kernel"
    assert any("in0_t1" in k["source"] for k in fused_kernels(f))  # strides are arguments


def test_assignment_through_views_is_a_scatter_kernel():
    f = dry("""
u = g.copy()
u[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
g[0] = -1
g[:, 3] += 10
h = g.T.copy()
h[::2] *= 2
""", "g = np.random.default_rng(0).random((6, 7))")
    assert any("dst[" in k["source"] for k in fused_kernels(f))


def test_a_0d_array_reduces_over_axis_0():  # issue 12 item 16: NumPy takes axis 0 (or -1) of a 0-d array
    dry("t = a.max(axis=0)\nu = a.argmax(axis=0)\nv = a.sum(axis=-1)\nw = (a * 2).min(axis=0, keepdims=True)",
        "a = np.array(2, np.uint8)")


def test_a_view_memoized_at_a_sync_is_read_after_its_storage_was_freed():  # issue 12 item 17
    dry("a += 1; y = a * 3; a = a - 3; print(a)", "a = np.arange(20.).reshape(4, 5)")


# -- kernel counts of the canonical programs (CUDA kernels are not staged: see the module docstring) --

CUDA_PROGRAMS = {
    "black_scholes": 1, "softmax": 3, "layernorm": 3, "variance_in_one_kernel": 2, "stencil": 1,
    "time_loop": 1, "relu_layer": 2, "nbody": 1, "reduce_then_scale": 1,
}


@pytest.mark.parametrize("name", list(CUDA_PROGRAMS))
def test_kernel_counts(name):
    from test_cpu import PROGRAMS

    src, _ = PROGRAMS[name]
    f = dry(src, SETUP, expect_kernels=CUDA_PROGRAMS[name])
    assert f.report.kernels == CUDA_PROGRAMS[name]
    assert not f.report.fallbacks
    if name == "relu_layer":
        (lib,) = [k for k in f.report.kernel_list if k["kind"] == "single"]
        assert "cuBLAS" in lib["route"]


# -- the transfer ledger ------------------------------------------------------------------------

def ledger(src: str, ns: dict, **kw) -> jf.Report:
    return jf.run_cell(src, ns, backend="cupy", **CUDA, **kw)


def rows(report) -> list[tuple]:
    return [(t["direction"], t["bytes"], t["name"], t["cause"]) for t in report.transfers]


def test_inputs_go_once_results_come_back_once():
    x = np.random.default_rng(0).random(1000)
    r = ledger("a = np.sin(x) + x\nb = np.cos(x) * 2\nc = a.sum() + x.max()", {"np": np, "x": x})
    assert rows(r)[0] == ("h2d", 8000, "x", "input")
    assert sum(t["direction"] == "h2d" for t in r.transfers) == 1  # x once, although three kernels read it
    assert sorted((d, n, c) for d, b, n, c in rows(r) if d == "d2h") == [
        ("d2h", "a", "result"), ("d2h", "b", "result"), ("d2h", "c", "result")]
    assert r.bytes_h2d == 8000 and r.bytes_d2h == 8000 + 8000 + 8
    assert "h2d 7.81 KiB" in r.summary()


def test_syncs_copy_back_at_their_line_and_only_once():
    x = np.random.default_rng(0).random(100)
    r = ledger("y = np.sin(x) * 2\nif y.sum() > 0:\n    z = y + 1\nprint(float(y[3]))\n", {"np": np, "x": x})
    syncs = [t for t in r.transfers if t["cause"].startswith("sync")]
    assert [(t["line"], t["bytes"]) for t in syncs] == [(2, 1), (4, 8)]  # `y.sum() > 0` is one bool
    assert "at line 2" in syncs[0]["cause"] and "bool" in syncs[0]["cause"]
    results = [t for t in r.transfers if t["cause"] == "result"]
    assert sorted(t["name"] for t in results) == ["y", "z"]


def test_arrays_made_in_the_cell_are_made_on_the_device():
    r = ledger("a = np.zeros((100, 10)) + np.arange(10)\ns = np.linspace(0, 1, 50).sum()", {"np": np})
    assert not [t for t in r.transfers if t["direction"] == "h2d"]
    assert {t["name"] for t in r.transfers} == {"a", "s"}


def test_in_place_update_of_an_input_comes_back_into_the_users_array():
    x = np.arange(10.0)
    r = ledger("x += 1\nx[::2] *= 3", {"np": np, "x": x})
    assert [(d, b, n) for d, b, n, _ in rows(r)] == [("h2d", 80, "x"), ("d2h", 80, "x")]
    np.testing.assert_array_equal(x, np.where(np.arange(10) % 2 == 0, 3, 1) * (np.arange(10.0) + 1))


def test_numpy_fallback_transfers_are_recorded_with_the_fallback():
    x = np.random.default_rng(0).random(100)
    r = ledger("y = np.exp(x)\ns = np.partition(y, 10)\nz = s * 2 + 1", {"np": np, "x": x})
    (fb,) = r.fallbacks
    assert fb["op"] == "np.partition"
    causes = [(t["direction"], t["cause"]) for t in fb["transfers"]]
    assert causes[0][0] == "d2h" and "np.partition" in causes[0][1]
    assert ("h2d", "fallback to NumPy: the result of np.partition goes back to the device") in causes
    # x in; y out for the sort (and not again as a result); s in; z out
    assert [(t["direction"], t["name"]) for t in r.transfers] == [("h2d", "x"), ("d2h", "y"), ("h2d", "s"),
                                                                  ("d2h", "z")]


TWINS = ("y = np.exp(X) - 1\ns = np.sort(y, axis=0)\nc = np.diff(y * 3, axis=1, prepend=0.0)\nu = np.triu(np.floor(y * 10), 2)\n"
         "n = np.diff(np.arange(12, dtype=np.int8) * 20, prepend=np.int8(0)).cumsum()\nz = s * 2 + c")


def test_untraced_functions_with_a_cupy_twin_run_on_the_device_without_copies():
    f = dry(TWINS, SETUP)  # values and dtypes are NumPy's (n: int32 diff, cumsum to int64, as NumPy)
    r = f.report
    on_device = {k["ops"][0]: k["route"] for k in r.kernel_list if k.get("route", "").endswith("(on the device)")}
    assert on_device == {"np.sort": "cupy.sort (on the device)", "np.diff": "cupy.diff (on the device)"}
    assert [k["route"] for k in r.kernel_list if k["ops"] == ["cumsum"]] == ["cupy.cumsum"]  # (traced: a kernel)
    assert {fb["op"] for fb in r.fallbacks} == {"np.sort", "np.diff"}  # (np.triu: traced, a select)
    assert all("on the GPU, where its arguments are" in fb["reason"] and not fb.get("transfers")
               for fb in r.fallbacks)
    # X goes in once; every other copy is a result coming back at the end: no round trip for the calls
    assert [t["name"] for t in r.transfers if t["direction"] == "h2d"] == ["X"]
    assert {t["cause"] for t in r.transfers if t["direction"] == "d2h"} == {"result"}
    from jupyter_fuse.dashboard import stats

    d = r.to_dict()
    sort = next(k["name"] for k in d["kernel_list"] if k["ops"] == ["np.sort"])
    assert "it ran as cupy.sort (on the device) (np.sort) because" in stats.no_source_note(d, sort)


def test_a_twin_with_other_dtype_rules_gives_numpys_dtype(monkeypatch):
    real = jc.DryRunBackend._twin  # a CuPy that summed int32 into int32 (or refused an argument)
    monkeypatch.setattr(jc.DryRunBackend, "_twin", lambda self, f, t, a, k: real(self, f, t, a, k).astype(np.int32))
    f = dry("n = np.diff(np.arange(12, dtype=np.int16) * 2, prepend=np.int16(0))\nm = n * 2", "")
    assert f.report.kernel_list[1]["route"] == "cupy.diff (on the device)"
    monkeypatch.setattr(jc.DryRunBackend, "_twin", lambda self, f, t, a, k: 1 / 0)
    f = dry("n = np.diff(np.arange(12, dtype=np.int16) * 2, prepend=np.int16(0))\nm = n * 2", "")
    assert not any(k.get("route") for k in f.report.kernel_list if k.get("fallback"))  # NumPy on the host


@pytest.mark.parametrize("src", [
    "r = np.diff(y.reshape(2, 2), prepend=0.0)", "r = np.nonzero(y > 4)", "r = (y > 4).nonzero()", "r = np.argwhere(y > 4)",
    "r = np.flatnonzero(y > 4)", "r = np.searchsorted(np.sort(y), y[::-1], side='right')",
    "r = np.bincount(i % 3, weights=y, minlength=5)", "r = np.bincount(i)",
])
def test_untraced_calls_with_a_cupy_twin_match_numpy_on_the_device(src):
    f = dry("y = x * 2\ni = np.arange(4)\n" + src, "x = np.arange(4.0)")
    routes = [k.get("route") for k in f.report.kernel_list if k.get("fallback")]
    assert routes and all(r.endswith("(on the device)") for r in routes), routes


def test_functions_numpy_writes_in_numpy_are_traced_on_the_device_too():
    f = dry("y = x * 2\nr = np.tile(y, (2, 2))\nq = y.repeat(3, axis=0)\nt = np.tril(np.outer(y, y), -1)\n"
            "c = np.cumsum(y)", "x = np.arange(4.0)")
    assert not f.report.fallbacks, f.report.fallbacks


# A NumPy call writing into a device array through a positional out= wrote a host copy of it, which the
# tracer did not see as a write (issue 12 item 2): np.cumsum and .cumsum() now pass out= by keyword.
POSITIONAL_OUT = ("o = x * 0\nr = y.cumsum(0, None, o)\nr[0] = 7.0\nz = o + 1",
                  "o = x * 0\nr = np.cumsum(y, 0, None, o)\nz = o + 1")


@pytest.mark.parametrize("src", [
    "r = np.repeat(y, i % 2)",  # repeats as an array: CuPy takes ints and sequences only
    "r = np.repeat(y, np.True_)",  # a NumPy bool: neither an int nor an integer dtype to CuPy
    "r = np.searchsorted(y, 5.0)",  # a scalar v: CuPy wants an array
    "r = np.searchsorted(i * 1, y)",  # other dtypes: CuPy compares raw values, NumPy converts first
    "r = np.bincount(i, weights=(1, 2, 3, 4))",
    *POSITIONAL_OUT,  # out= by position
    "k = np.searchsorted(y, [0.5, 1.0])",  # a list: CuPy refuses it
    "s = np.sort(y, kind='stable')",  # a keyword CuPy lacks
    "e = np.bincount(i[:0] * 1, weights=y[:0])",  # empty: int64 in NumPy, whatever the weights
    "c = np.cross(y.reshape(2, 2), (y * 2).reshape(2, 2))",
])
def test_untraced_calls_cupy_would_take_differently_run_as_numpy(src, request):
    f = dry("y = x * 2\ni = np.arange(4)\n" + src, "x = np.arange(4.0)")
    routes = [k.get("route") for k in f.report.kernel_list if k.get("fallback")]
    assert routes in ([None], ["cupy.bincount (on the device)"], ["cupy.cross (on the device)"]), routes


@dry_run_only
def test_a_cell_that_reads_nothing_replays():
    ns: dict = {}
    assert [jf.run_cell("a = 1 + 2\nprint(a)", ns, "cpu").cache for _ in range(2)] == ["miss", "hit"]


def test_an_untraced_function_reading_a_host_array_runs_as_numpy_on_the_host():
    x = np.random.default_rng(0).random(100)
    r = ledger("y = np.exp(x)\ni = np.searchsorted(np.sort(x), y)", {"np": np, "x": x})
    routes = [k.get("route") for k in r.kernel_list if k.get("fallback")]
    assert routes == [None, None]  # np.sort(x): x is on the host; searchsorted then reads a host array
    assert ("d2h", "y") in [(t["direction"], t["name"]) for t in r.transfers]


def test_random_draws_are_numpys_and_go_to_the_device_once():
    r = ledger("a = np.random.normal(size=100)\nb = a * 2 + np.sin(a)", {"np": np})
    (h2d,) = [t for t in r.transfers if t["direction"] == "h2d"]
    assert "random draw" in h2d["cause"] and h2d["bytes"] == 800


def test_unsupported_dtypes_run_as_cupy_functions_without_transfers():
    x = np.random.default_rng(0).random(50)
    r = ledger("h = x.astype(np.float16)\ny = np.sin(h)\nc = x.astype(np.complex128) * 1j", {"np": np, "x": x})
    singles = [k for k in r.kernel_list if k["kind"] == "single"]
    assert singles and all(k["route"].startswith(("cupy.", "CuPy")) for k in singles)
    assert [t["direction"] for t in r.transfers if t["name"] == "x"] == ["h2d"]


def test_object_and_string_arrays_fall_back_with_the_reason():
    ns = {"np": np, "x": np.arange(3.0), "o": np.array([1, "a", None], dtype=object)}
    r = ledger("y = x * 2\nz = o[:2]\nw = y + np.array([1.0, 2.0, 3.0], dtype=object)", ns)
    assert r.fallbacks and "not traced" in r.fallbacks[0]["reason"]
    assert list(ns["w"]) == [1.0, 4.0, 7.0]


@pytest.mark.parametrize("backend", ["numpy", "cpu", "cupy"])
def test_a_cell_of_only_untraced_arrays_still_says_why(backend):
    ns = {"np": np, "o": np.array([1, "a"], dtype=object), "s": np.array(["x", "y"])}
    r = jf.run_cell("o2 = o * 2\ns2 = s.copy()", ns, backend=backend, **(CUDA if backend == "cupy" else {}))
    assert [(f["line"], f["op"]) for f in r.fallbacks] == [(1, "o"), (2, "s")]
    assert "dtype object, which is not traced" in r.fallbacks[0]["reason"]
    assert list(ns["o2"]) == [2, "aa"] and list(ns["s2"]) == ["x", "y"]


def test_keep_leaves_results_on_the_device():
    x = np.random.default_rng(0).random(100)
    ns = {"np": np, "x": x}
    r = ledger("y = np.sin(x)\ns = y.sum()", ns, keep=True)
    assert [(t["direction"], t["name"]) for t in r.transfers] == [("h2d", "x"), ("d2h", "s")]  # 0-d: a scalar
    assert r.options["keep"] is True


def test_the_ledger_is_json_and_the_dashboard_reads_it():
    from jupyter_fuse.dashboard import stats

    r = ledger("y = np.sin(x)", {"np": np, "x": np.zeros(10)})
    d = r.to_dict()
    assert [t["direction"] for t in stats.transfer_rows(d)] == ["h2d", "d2h"]
    assert "host->device 80 B" in stats.transfers_note(d)


# -- launch shapes, compile errors, bad input ----------------------------------------------------

def test_launch_config_is_a_pure_function_of_the_kernel():
    by_mode = {}
    for cell in ("a = x.sum()", "b = x.sum(axis=1)", "c = x * 2"):  # one cell each: whatever the partitioner merges
        (k,) = fused_kernels_r(ledger(cell, {"np": np, "x": np.zeros((300, 7))}))
        by_mode[k["mode"]] = k
    assert by_mode["full"]["launch"] == {"nout": 1, "nred": 2100, "nparts": 9, "grids": [9, 1]}
    assert by_mode["block"]["launch"] == {"nout": 300, "nred": 7, "grids": [300]}
    assert by_mode["block"]["block"] == 32  # seven reduced elements: one warp per row
    assert by_mode["ew"]["launch"] == {"n": 2100, "grids": [9]}


def fused_kernels_r(r) -> list[dict]:
    return [k for k in r.kernel_list if k.get("source")]


def test_keep_ledger_is_the_real_ones():  # (test_cuda_gpu's --keep test, without a GPU)
    ns = {"np": np, "x": np.random.default_rng(0).random(1000)}
    first = jf.run_cell("y = np.sin(x) * 2", ns, backend="cupy", **CUDA, keep=True)
    assert [(t["direction"], t["name"]) for t in first.transfers] == [("h2d", "x")]
    second = jf.run_cell("z = y + 1\ny *= 3", ns, backend="cupy", **CUDA, keep=True)
    assert second.transfers == []  # y is on the device already; z and y stay there
    np.testing.assert_allclose(ns["z"], np.sin(ns["x"]) * 2 + 1)
    np.testing.assert_allclose(ns["y"], np.sin(ns["x"]) * 6)
    third = jf.run_cell("w = z.sum()", ns, backend="cupy", **CUDA)
    assert [(t["direction"], t["name"]) for t in third.transfers] == [("d2h", "w")] and type(ns["w"]) is np.float64
    ns["y"] = ns["y"].copy()  # a new array in the namespace: on the host, as a real run would see it
    fourth = jf.run_cell("v = y * 2", ns, backend="cupy", **CUDA)
    assert [t["direction"] for t in fourth.transfers] == ["h2d", "d2h"]


@dry_run_only  # (test_cuda_emulate.py: what the host compiler rejects)
def test_a_kernel_that_does_not_compile_runs_on_the_cpu_and_says_why(monkeypatch, capsys):
    monkeypatch.delenv("JUPYTER_FUSE_STRICT", raising=False)
    edit_source(monkeypatch, "sin(", "no_such_function(")
    x = np.random.default_rng(0).random(100)
    ns = {"np": np, "x": x}
    r = jf.run_cell("y = np.sin(x) * 2 + 1", ns, backend="cupy", dry_run=True)
    np.testing.assert_allclose(ns["y"], np.sin(x) * 2 + 1)
    err = capsys.readouterr().err
    assert "CUDA kernel k0" in err and "failed to compile" in err and "no_such_function" in err
    assert "runs on the CPU backend instead" in err and "identifier" in err  # NVRTC's own log
    assert any(line.lstrip().startswith(">") for line in err.splitlines())  # the offending line, marked
    (k,) = r.kernel_list
    assert k["compiled"] is False and "no_such_function" in k["cuda_source"] and "did not compile" in k["fallback"]
    # the panel shows the failed CUDA source and NVRTC's log, then the CPU source that ran, each as what it is
    from jupyter_fuse.dashboard import html, stats

    d = r.to_dict()
    (row,) = stats.kernel_rows(d)
    assert row["language"] == "python" and row["failed_source"] == k["cuda_source"]
    shown = html.kernel_sources(d)
    assert "no_such_function" in shown and "identifier" in shown and "what ran instead (python)" in shown
    assert "fuse[cupy --dry-run]" in html.headline(d)


def test_a_compile_error_is_an_error_in_strict_mode(monkeypatch):
    edit_source(monkeypatch, "cos(", "cos((")
    with pytest.raises(jc.CudaCompileError, match="k0"):
        jf.run_cell("y = np.cos(x)", {"np": np, "x": np.zeros(3)}, backend="cupy", **CUDA)


@dry_run_only
@pytest.mark.skipif(cuda_available(), reason="a CUDA device is present")
def test_cupy_without_a_device_names_dry_run_and_cpu():
    with pytest.raises(BackendUnavailable, match=r"-b cpu.*--dry-run"):
        get_backend("cupy")
    with pytest.raises(BackendUnavailable, match="--dry-run"):
        get_backend("cpu", dry_run=True)
    with pytest.raises(BackendUnavailable, match="--keep"):
        get_backend("numpy", keep=True)


@dry_run_only
def test_sample_in_the_docstring_is_what_the_renderer_emits():
    r = ledger("y = np.sin(x) ** 2 + c", {"np": np, "x": np.zeros(10)[::2], "c": 1.5})
    (k,) = r.kernel_list
    body = [ln.strip() for ln in k["source"].splitlines() if ln.strip().startswith("const double v")]
    assert body == ["const double v0 = in0[i0 * in0_t0];", "const double v1 = sin(v0);",
                    "const double v2 = (v1 * v1);", "const double v3 = (v2 + p0);"]
    for line in body:
        assert line in cuda_render.__doc__


def test_the_gpu_benchmark_programs_compile_and_skip_cleanly_without_a_device():
    """bench/gpu.py: its cells compile offline and run emulated (small sizes), against NumPy; without a
    GPU the script says so and exits 0."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "bench"))
    try:
        import gpu as bench
    finally:
        sys.path.pop(0)
    programs, data = bench.cpu_programs(), bench.data(quick=True)
    assert set(programs) == set(bench.OUTPUTS) == set(data)
    for name, src in programs.items():
        ns = {"np": np, **{k: (v[:1000] if name == "sincos" else v) for k, v in data[name].items()}}
        f = dry(src, lambda: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in ns.items()})
        assert f.report.bytes_h2d > 0 and f.report.bytes_d2h > 0, name
    if not cuda_available() and "dry_run" in CUDA:
        out = subprocess.run([sys.executable, str(root / "bench" / "gpu.py")], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0 and "no usable CUDA device" in out.stdout
