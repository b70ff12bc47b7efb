"""NumPy functions real programs call in their loops, traced instead of run outside the trace:
``np.roll`` (periodic stencils), ``np.clip(..., out=)``, ``np.concatenate``/``stack``/``vstack``/
``hstack``, ``np.diff``, ``np.outer`` and ``np.linalg.norm``. Each against plain NumPy on every
backend (values, dtypes, layouts, aliasing, errors), and traced: no fallback, so a loop of them is
one graph and a replay one program."""

from __future__ import annotations

import re

import pytest
from harness import check

BACKENDS = [pytest.param({"backend": "numpy"}, id="numpy"), pytest.param({"backend": "cpu"}, id="cpu"),
            pytest.param({"backend": "cupy", "dry_run": True}, id="cupy-dry")]

SETUP = ("a = np.arange(12.0).reshape(3, 4); f = np.asfortranarray(a); v = np.arange(7, dtype=np.int32); "
         "e = np.zeros((0, 3)); s = np.float64(2.5)")

CELLS = [
    # np.roll
    "r = np.roll(v, 2)", "r = np.roll(v, -9)", "r = np.roll(v, 0)", "r = np.roll(v, 7)",
    "r = np.roll(a, 1)", "r = np.roll(a, 1, axis=0)", "r = np.roll(a, -1, axis=1) + a",
    "r = np.roll(a, (1, -2), axis=(0, 1))", "r = np.roll(a, 3, axis=(0, 1))", "r = np.roll(a, (1, 1), axis=(1, 1))",
    "r = np.roll(f, 1, axis=1); u = r.reshape(-1)", "r = np.roll(a.T, 2, axis=0)", "r = np.roll(a[:, ::2], 1, 1)",
    "r = np.roll(e, 2, axis=1)", "r = np.roll(e, 1)",
    "u = a * 2\nfor i in range(3):\n    u = 0.5 * (np.roll(u, 1, 0) + np.roll(u, -1, 1))",
    "r = np.roll(a, 1, axis=2)", "r = np.roll(a, (1, 2), axis=(0, 1, 0))", "r = np.roll(a, 1.5)",
    "r = np.roll(s, 1)", "r = np.roll(a, np.int64(2), axis=np.int8(1))",
    # ... as one op read inside the kernel of what reads it: writes into what it reads, reductions, broadcasts
    "a += np.roll(a, 1, axis=0)", "a[:] = np.roll(a, 1)", "a[1:] = np.roll(a, 1, axis=0)[1:] * 2",
    "a[:, 1:] = np.roll(a[:, :-1], 1, axis=1) + a[:, 1:]", "a[::2] = np.roll(a[::2], -1, axis=1) - a[::2]",
    "r = (np.roll(a, 1, axis=1) * a).sum(axis=0)", "r = np.roll(a, 1, axis=0).max(axis=1)", "r = np.roll(a, 2).sum()",
    "r = np.roll(a[0], 1) + a", "r = np.roll(a[:, :1], 1, axis=0) * a", "r = np.roll(v, 3) * v",
    "r = (np.roll(v > 3, 1) & (v < 5)).astype(np.int8)", "r = np.exp(np.roll(a, -5, axis=1) / 10) + np.roll(a, 6, axis=1)",
    "r = np.roll(a * 2, 1, axis=0) + a", "u = a.copy()\nfor i in range(3):\n    u += 0.1 * (np.roll(u, 1, 0) - u)",
    # ... a roll of a roll is one roll: shifts along one axis add up (and may cancel)
    "r = np.roll(np.roll(a, 1, 0), -1, 1)", "r = np.roll(np.roll(a, 1, 0), -1, 0)", "r = np.roll(np.roll(a, 2, 1), 3, 1)",
    "q = np.roll(a, 1, 0)\nr = np.roll(q, 1, 1) + q", "r = np.roll(np.roll(a, 1, 0)[1:], 1, 0)", "r = np.roll(np.roll(f, 1, 0), 1, 1)",
    "r = np.roll(v[::-1], 2)", "r = np.roll(a[::-1, ::2], 1, axis=0) * 2", "r = np.roll(a[:, 1], -1) - a[:, 2]",
    "r = np.roll(np.roll(a, 0, 0), 1, 1)", "c = a.copy()\na[0] = 9\nr = np.roll(c, 1, 0) + a",
    # np.clip(out=)
    "h = a + 0; np.clip(a, 2, 9, out=a)", "r = np.clip(a, None, 5, out=a); same = r is a",
    "np.clip(v, 1, 4, out=v)", "np.clip(a[1:], 0, 3, out=a[:-1])", "np.clip(a, 0.5, 3, out=v[:4])",
    "b = np.empty_like(a); np.clip(a, 2, None, out=b)", "np.clip(a, None, None, out=a)",
    "w = a.T; np.clip(w, 1, 6, out=w)",
    # joins
    "r = np.concatenate([a, a * 2])", "r = np.concatenate((a, a[:1]), axis=0)", "r = np.concatenate([a, a], axis=1)",
    "r = np.concatenate([a, a], axis=-1)", "r = np.concatenate([v, v.astype(np.float32)])",
    "r = np.concatenate([v, [1, 2]])", "r = np.concatenate([a, e.reshape(0, 4)])", "r = np.concatenate([a, a], axis=None)",
    "r = np.concatenate([f, f])", "r = np.concatenate([a.T, a.T], axis=1)", "r = np.concatenate([a[:, ::2], a[:, 1::2]])",
    "r = np.concatenate([a, v])", "r = np.concatenate([a, a], axis=2)", "r = np.concatenate([s, s])",
    "r = np.concatenate([])", "r = np.concatenate([a, a], dtype=np.float32)", "r = np.concatenate([v > 3, v < 2])",
    "r = np.stack([v, v * 2])", "r = np.stack([a, a], axis=-1)", "r = np.stack([a, a], axis=1)", "r = np.stack([a, v])",
    "r = np.stack([s, s])", "r = np.stack([a, a], axis=3)",
    "r = np.vstack([v, v])", "r = np.vstack([a, v[:4]])", "r = np.vstack([s, s])", "r = np.vstack([f, f])",
    "r = np.hstack([v, v])", "r = np.hstack([a, a])", "r = np.hstack([s, v])", "r = np.hstack([a, v])",
    "rows = []\nfor i in range(3):\n    rows.append(v * i)\nr = np.vstack(rows)\nt = r.sum(axis=1)",
    # np.diff, np.outer
    "r = np.diff(v)", "r = np.diff(v, 2)", "r = np.diff(v, 0); same = r is v", "r = np.diff(a, axis=0)",
    "r = np.diff(a, n=3, axis=-1)", "r = np.diff(v > 3)", "r = np.diff(f, axis=1)", "r = np.diff(e, axis=0)",
    "r = np.diff(v, 9)", "r = np.diff(s)", "r = np.diff(v, -1)", "r = np.diff(a, axis=2)",
    "r = np.diff(v, prepend=0)", "r = np.diff(v.astype(np.uint8))",
    "r = np.outer(v, a[0])", "r = np.outer(a, v > 2)", "r = np.outer(3, v)", "r = np.outer(s, [1, 2])",
    "r = np.outer(v > 1, v < 5)", "r = np.outer(a.T, f)", "r = np.outer(e, v)", "r = np.outer(v, v, out=np.empty((7, 7)))",
    # np.linalg.norm (the default order: sqrt(x.dot(x)) over the flat array; the rest as NumPy's call)
    "r = np.linalg.norm(a)", "r = np.linalg.norm(a - 1.5, 'fro')", "r = np.linalg.norm(v)", "r = np.linalg.norm(v, 2)",
    "r = np.linalg.norm(v > 3)", "r = np.linalg.norm(a.astype(np.float32) * 0.5)", "r = np.linalg.norm(s)",
    "r = np.linalg.norm(e)", "r = np.linalg.norm(f)", "r = np.linalg.norm(a, 'fro', keepdims=True)",
    "r = np.linalg.norm(a, axis=1)", "r = np.linalg.norm(v, 'fro')", "r = np.linalg.norm(a, 2)", "r = np.linalg.norm(s, 2)",
    "from numpy.linalg import norm\nr = norm(a[1]) / norm(a[:, 0])",
    "x = a[0] / 4\nfor i in range(4):\n    x = a @ x\n    x = x[:4] / np.linalg.norm(x)",
    # ... and its vector norms along one axis (NumPy's expressions: sqrt(add.reduce(x * x)), abs sums, max, min, counts)
    "r = np.linalg.norm(a[:, None, :] - a[None, :2, :], axis=2)", "r = np.linalg.norm(a, axis=0, keepdims=True)",
    "r = np.linalg.norm(a, 1, axis=1)", "r = np.linalg.norm(a - 5, np.inf, axis=-1)", "r = np.linalg.norm(a - 5, -np.inf, axis=(0,))",
    "r = np.linalg.norm(v, 0, axis=0)", "r = np.linalg.norm(f, axis=1)", "r = np.linalg.norm(e, axis=1)",
    "r = np.linalg.norm(e, axis=0)", "r = np.linalg.norm(a, axis=2)", "r = np.linalg.norm(a, 3, axis=1)",
    "r = np.linalg.norm(a, axis=(0, 1))", "r = np.linalg.norm(v > 2, axis=0)", "r = np.linalg.norm(s, axis=0)",
    "r = np.linalg.norm(a.astype(np.float16), axis=1)", "r = np.linalg.norm(a, 'fro', axis=1)",
]


@pytest.mark.parametrize("opts", BACKENDS)
@pytest.mark.parametrize("source", CELLS)
def test_is_numpys(source, opts):
    check(source, SETUP, **opts)


@pytest.mark.parametrize("source", ["r = np.roll(a, 1, axis=0) + np.roll(a, -1, axis=1)", "np.clip(a, 0, 5, out=a)\nr = a * 2",
                                    "r = np.concatenate([a, a * 2]) + 1", "r = np.stack([v, v]) * 2",
                                    "r = np.vstack([v, v]).sum(axis=0) + np.hstack([v, v])[:7]", "r = np.diff(a, axis=0) * 2",
                                    "r = np.outer(v, v) - 1", "r = a / np.linalg.norm(a)",
                                    "r = np.linalg.norm(a[:, None, :] - a[None, :2, :], axis=2).argmin(axis=1)"])
def test_traced_not_run_outside_the_trace(source):
    f = check(source, SETUP, backend="cpu")
    assert not f.report.fallbacks, f.report.fallbacks


STENCIL = ("L = np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0) + np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z\n"
           "Z += 0.1 * L")


@pytest.mark.parametrize("opts", [{"backend": "cpu"}, {"backend": "cupy", "emulate": True}], ids=["cpu", "cuda-emulated"])
def test_a_periodic_stencil_of_rolls_is_one_kernel(opts):
    """Each ``np.roll`` reads its argument where the roll takes each element from, inside the kernel of
    what reads it: a five-point periodic stencil and its update are one kernel, not a copy and two slice
    writes per roll (the CUDA kernel, emulated, computes it as the compiled one does)."""
    f = check(STENCIL, "Z = np.random.default_rng(3).random((9, 13))", **opts)
    assert f.report.kernels == 1, f.report.kernel_list


def test_the_game_of_lifes_neighbour_count_of_rolls_of_rolls_is_one_kernel():
    f = check("n = sum(np.roll(np.roll(g, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if i or j)\n"
              "g = (n == 3) | (g & (n == 2))", "g = np.random.default_rng(2).random((7, 9)) < 0.4", backend="cpu")
    assert f.report.kernels == 1, f.report.kernel_list


def test_a_roll_of_a_value_its_kernel_computes_is_a_cut_that_says_why():
    f = check("r = np.roll(a * 2, 1, axis=0) + a", SETUP, backend="cpu")
    assert f.report.kernels == 2
    assert any("np.roll (line 1) reads other elements of `multiply`" in b["reason"] for b in f.report.breaks), \
        f.report.breaks


def test_a_loop_of_periodic_stencils_replays_as_one_kernel_a_step(monkeypatch):
    """Gray-Scott's time loop (bench/realworld.py): before, each step's rolls were copies and slice
    writes whose kernels the partitioner grouped differently from step to step, so the replay's program
    did not roll its loop (and took a minute to compile). Now a step is one kernel, the same every step."""
    import numpy as np

    import jupyter_fuse as jf
    from jupyter_fuse import program
    from jupyter_fuse.cache import PLAN_CACHE

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    source = ("def lap(Z):\n"
              "    return np.roll(Z, 1, 0) + np.roll(Z, -1, 0) + np.roll(Z, 1, 1) + np.roll(Z, -1, 1) - 4 * Z\n"
              "for i in range(steps):\n"
              "    uvv = U * V * V\n"
              "    U += 0.16 * lap(U) - uvv + 0.035 * (1 - U)\n"
              "    V += 0.08 * lap(V) + uvv - 0.1 * V\n")
    PLAN_CACHE.clear()
    rng = np.random.default_rng(4)
    first = {"U": 1 - 0.2 * rng.random((10, 12)), "V": 0.3 * rng.random((10, 12))}
    for run in range(3):
        ns = {"np": np, "steps": 12, **{k: v.copy() for k, v in first.items()}}
        ref = {"np": np, "steps": 12, **{k: v.copy() for k, v in first.items()}}
        exec(source, ref)
        r = jf.run_cell(source, ns, backend="cpu")
        for k in ("U", "V"):
            assert np.array_equal(ns[k], ref[k]), (run, k)
    assert r.cache == "hit" and r.kernels <= 12 + 2, r.kernel_list  # (a step a kernel; the first and last apart)
    loops = [int(n) for n in re.findall(r"(\d+) iterations of \(k\d+\)", r.program)]
    assert r.program.startswith("compiled:") and loops and max(loops) >= 12 - 3, r.program


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("source", ["r = np.linalg.norm(x[:, None, :] - x[None, :5, :], axis=2)",
                                    "r = np.linalg.norm(x, axis=0)", "r = np.linalg.norm(x.T, ord=1, axis=0)"])
def test_a_norm_along_an_axis_has_numpys_bits(source, backend):
    """NumPy's own sums (pairwise along a contiguous axis), not a tolerance's worth of them."""
    import numpy as np

    import jupyter_fuse as jf

    x = np.random.default_rng(5).normal(size=(300, 40))
    ref, ns = {"np": np, "x": x.copy()}, {"np": np, "x": x.copy()}
    exec(source, ref)
    jf.run_cell(source, ns, backend=backend, cache=False)
    assert ns["r"].dtype == ref["r"].dtype and np.array_equal(ns["r"], ref["r"])
