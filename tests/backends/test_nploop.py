"""Kernels call NumPy's own loops for exp, log, tanh, power, ... (backends/cpu_nploop): NumPy's bits, in every
loop shape a kernel has (elementwise rows, reductions by rows, by columns and whole, 0-d), across block edges."""

from __future__ import annotations

import numpy as np
import pytest
from harness import run_fused

from jupyter_fuse.backends import cpu_nploop

N = 1300  # (two blocks and a part: cpu_nploop.BLOCK is 512)


def _setup() -> dict:
    rng = np.random.default_rng(3)
    return {"np": np, "x": rng.random(N) * 4 - 1, "X": rng.random((5, N)) * 3, "w": rng.random(N) + 0.5,
            "f": (rng.random(N) * 4).astype(np.float32), "s": np.float64(0.75), "Y": rng.random((67, 33))}


CELLS = [
    "y = np.exp(x * 0.5 + 1.0) - 2.0",  # an elementwise chain around it
    "y = 1.0 / (1.0 + np.exp(-x)) * np.tanh(x)",  # two in one kernel
    "y = np.exp(np.sin(x))",  # one feeding the next
    "y = (x * x + 0.1) ** -1.5",  # a scalar exponent: NumPy's stride 0
    "y = np.power(w, 2.0) + np.power(w, x)",  # its shortcut (x * x), and an array exponent (pow)
    "y = np.arctan2(X, w) + np.hypot(w, 2.0)",  # binary, a row broadcast
    "y = np.log1p(f) * np.float32(2)",  # float32: NumPy's float32 loop
    "e = np.exp(X - X.max(axis=1, keepdims=True))\ny = e / e.sum(axis=1, keepdims=True)\ndel e",  # rows, staged
    "y = np.exp(X - X.max(axis=0)).sum(axis=0)",  # columns: the accumulator is loaded again after the call
    "y = np.log(np.exp(x).sum())",  # a whole reduction (pairwise blocks), then the 0-d result's log
    "y = np.sin(X).argmax(axis=1)",  # a branch in the loop, after the call
    "y = np.log(X).var(axis=0)\nz = np.cos(x).std()",
    "y = float(np.exp(x[3]) + np.tanh(s))",  # 0-d: one element at a time
    "y = np.exp(Y * 2.0) - Y",  # short rows: each share of the rows makes its buffers (67 rows, uneven shares)
]


@pytest.mark.parametrize("source", CELLS)
def test_kernels_give_numpys_own_bits_for_its_vector_math(source):
    ref = _setup()
    exec(source, ref)
    f = run_fused(source, _setup, backend="cpu")
    assert f.error is None, f.error
    for name in ("y", "z"):
        if name in ref:
            got, want = f.ns[name], ref[name]
            assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype, name
            assert np.array_equal(got, want), (name, int(np.sum(np.asarray(got) != np.asarray(want))))


def test_the_kernel_source_says_which_numpy_loop_it_calls_and_can_call_cs_instead(monkeypatch):
    f = run_fused("y = np.tanh(x) * 2", _setup, backend="cpu")
    (k,) = f.report.kernel_list
    assert "= np.tanh(v" in k["source"] and "NumPy's own loop" in k["source"], k["source"]
    monkeypatch.setenv("JUPYTER_FUSE_NUMPY_LOOPS", "off")
    monkeypatch.setattr("jupyter_fuse.backends._INSTANCES", {})  # (a new cpu backend: nothing rendered)
    f = run_fused("y = np.tanh(x) * 2", _setup, backend="cpu")
    (k,) = f.report.kernel_list
    assert "np.tanh(v" in k["source"] and "np_loop" not in k["source"], k["source"]


def test_a_rolled_operands_index_is_kept_by_the_blocks_as_a_value():
    """``np.roll``'s wrapped index is a value of the loop like the nodes': a kernel that also calls NumPy's loop
    (a complex quotient, which has no other expression) runs in blocks (bench/fuzz.py seed 8501363: it was
    left unplaced, then could not be rendered)."""
    setup = lambda: {"np": np, "x": np.arange(5.0), "cz": np.arange(5.0) * (1 + 1j), "w": np.linspace(1, 2, 5) + 0j}
    source = "y = np.roll(x, 1) * 2.0\nz = w / (cz + 1)\n"
    ref = setup()
    exec(source, ref)
    f = run_fused(source, setup, backend="cpu")
    assert f.error is None, f.error
    (k,) = f.report.kernel_list
    assert "np_loop" in k["source"] and "roll" in k["ops"], k
    assert np.array_equal(f.ns["y"], ref["y"]) and np.array_equal(f.ns["z"], ref["z"])


def test_a_loop_of_another_shape_is_left_to_cs_functions():
    """A parallel loop that accumulates (numba's own reduction) is not cut into blocks: Unplaced."""
    body = ["a0 = 0.0", "for i0 in prange(s0):", "    v2 = in0[i0]", "    #np_loop 0", "    a0 += v1"]
    call = cpu_nploop.Call("v1", "exp", ["v2"], (8,), np.dtype(np.float64), ["p0", "p1", "p2"], np.dtype(np.float64))
    with pytest.raises(cpu_nploop.Unplaced):
        cpu_nploop.place(body, [call], {"v1": np.dtype(np.float64), "v2": np.dtype(np.float64)})


def test_numpys_strides_for_broadcast_operands():
    from jupyter_fuse.ir import Node

    def node(shape, *arg_shapes):
        args = tuple(Node.make("const", (), ("float", 2.0, "2.0"), None, ()) if s is None
                     else Node.make("input", (), (i,), np.dtype(np.float64), s) for i, s in enumerate(arg_shapes))
        return Node.make("power", args, (), np.dtype(np.float64), shape)

    assert cpu_nploop.steady(node((7,), (7,), None)) == [False, True]  # a scalar exponent
    assert cpu_nploop.steady(node((7,), (7,), (1,))) == [False, True]  # one element broadcast
    assert cpu_nploop.steady(node((1,), (1,), (1,))) == [False, False]  # [x] ** [2.0]: pow, not the shortcut
    assert cpu_nploop.steady(node((1, 1), (1, 1), (1,))) == [False, True]
    assert cpu_nploop.steady(node((3, 7), (3, 7), (7,))) == [False, False]  # a row along rows
    assert cpu_nploop.steady(node((3, 7), (3, 7), (3, 1))) == [False, True]  # a column along rows
    assert cpu_nploop.steady(node((3, 1), (3, 1), (1, 1))) == [False, True]


def test_calls_that_do_not_feed_each_other_share_a_pass_over_the_block():
    """log(w) and exp(x) first (they read the inputs themselves: no pass copies them), exp(2 log w) after a
    pass, the sum in a second (not four passes)."""
    source = "y = np.exp(np.log(w) * 2) + np.exp(x)"
    ref = _setup()
    exec(source, ref)
    f = run_fused(source, _setup, backend="cpu")
    (k,) = f.report.kernel_list
    body = k["source"].split("def _kernel_seq")[0]
    assert body.count("for i0 in range(lo_") == 2 and body.count("NumPy's own loop") == 3, body
    first = body.index("for i0 in range(lo_")
    assert body.count("in0.ctypes.data + ", 0, first) == 1 and body.count("in1.ctypes.data + ", 0, first) == 1, body
    assert np.array_equal(f.ns["y"], ref["y"])


def test_a_loop_numpy_does_not_give_is_computed_with_cs_function(monkeypatch):
    """NumPy's low-level ufunc API is experimental: where it fails, the kernel calls C's function, as before."""
    monkeypatch.setattr(cpu_nploop, "_pointers", lambda *a: (_ for _ in ()).throw(RuntimeError("no loop")))
    monkeypatch.setattr("jupyter_fuse.backends._INSTANCES", {})  # (a new cpu backend: nothing rendered)
    f = run_fused("y = np.tanh(x) * 3", _setup, backend="cpu")
    assert f.error is None, f.error
    (k,) = f.report.kernel_list
    assert "np_loop" not in k["source"] and "np.tanh(v" in k["source"], k["source"]
    ref = _setup()
    exec("y = np.tanh(x) * 3", ref)
    np.testing.assert_allclose(f.ns["y"], ref["y"], rtol=1e-15)


def test_a_parallel_loop_around_blocks_is_cut_into_shares_that_make_their_buffers_once():
    """Rows of 64: the buffers were made per row (64 times six for n-body's forces: a third of the kernel's
    time); each of a few shares per thread makes them once now, then runs its rows."""
    f = run_fused("y = np.exp(Y) * 2.0", _setup, backend="cpu")
    (k,) = f.report.kernel_list
    body = k["source"].split("def _kernel_seq")[0]
    lines = body.splitlines()
    share = next(i for i, ln in enumerate(lines) if " in prange(ns_" in ln)
    alloc = next(i for i, ln in enumerate(lines) if "np.empty(512" in ln)
    rows = next(i for i, ln in enumerate(lines) if ln.strip().startswith("for i0 in range("))
    assert share < alloc < rows, body
    assert "nthreads" in lines[next(i for i, ln in enumerate(lines) if "def _kernel_par" in ln)], body


def test_an_input_read_in_order_is_handed_to_numpys_loop_without_a_copy():
    """A contiguous input goes to the loop at its own address; a strided one (every other element: the loop
    was fetched for consecutive ones) and an assignment's own reads are copied into a buffer first."""
    for source, direct in (("y = np.exp(x) * 2", True), ("y = np.exp(x[::2]) * 2", False),
                           ("x[1:] = np.exp(x[1:]) * 2", False), ("y = np.exp(X) + 1", True)):
        ref = _setup()
        exec(source, ref)
        f = run_fused(source, _setup, backend="cpu")
        (k,) = f.report.kernel_list
        body = k["source"].split("def _kernel_seq")[0]
        assert ("in0.ctypes.data + " in body) is direct, (source, body)
        for name in ("x", "y"):
            if name in ref:
                assert np.array_equal(f.ns[name], ref[name]), (source, name)
