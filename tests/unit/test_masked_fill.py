"""``x[mask] = number`` and ``x[mask] op= number`` traced as ``np.where`` (jupyter_fuse/masked.py): NumPy's
values, errors and aliasing on every backend, one kernel with the mask's ops, and a replay instead of a sync."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check

import jupyter_fuse as jf

BACKENDS = [pytest.param({"backend": "numpy"}, id="numpy"), pytest.param({"backend": "cpu"}, id="cpu"),
            pytest.param({"backend": "cupy", "dry_run": True}, id="cupy-dry")]

SETUP = ("x = np.array([-1.5, 2.0, np.nan, -0.0, 3.0]); i = np.array([3, -4, 5, 0, -1]); u = np.arange(5, dtype=np.uint8); "
         "b = np.array([True, False, True, False, True]); f = np.asfortranarray(np.arange(12.0).reshape(3, 4)); "
         "m2 = np.arange(12).reshape(3, 4) % 3 == 0; e = np.zeros(0); c = np.arange(4) + 1j; big = np.arange(20.0).reshape(4, 5); "
         "ro = np.arange(3.0); ro.flags.writeable = False")

CASES = [
    "x[x < 0] = 0", "x[np.isnan(x)] = -1.0", "i[i < 0] = 7", "i[i > 0] = 2.7", "i[i < 0] = True",
    "u[u > 2] = np.int64(-1)", "x[x < 0] = np.float32(2.5)", "b[b] = 0", "e[e > 0] = 1", "c[c.real > 1] = 2 - 1j",
    # NumPy's errors for the number: out of range, NaN into integers, complex into floats
    "u[u > 2] = -1", "u[u > 2] = 300", "u[u > 9] = -1.0", "i[i < 0] = np.nan", "x[x > 0] = 1j",
    # NumPy warns and casts: run eagerly, as NumPy runs it
    "i[i < 0] = np.float64(np.nan)",
    # views, memory orders, aliasing, a mask changed after its use, a read-only array
    "f[m2] = 1; g = f + 1", "w = big[1:3, 1:4]; w[w > 8] = 0", "x.T[x.T < 0] = 0", "f[f > 5] = -f.sum()",
    "m = i > 0\ni[m] = 1\nm[0] = True\nj = i * 2", "y = x.copy(); y[y != y] = 0; s = y.sum()", "ro[ro > 0] = 5",
    # augmented: numbers fuse; other operands, other operators, a mask or array changed by the right-hand
    # side, and np.errstate(...='raise') read the masked values as NumPy does
    "x[x < 0] += 1", "x[x > 0] *= -2.5", "i[i < 0] += 7", "i[i > 0] -= 2", "i[i > 0] /= 2", "i[i > 0] += 1.5",
    "u[u > 2] += 250", "i[i < 0] **= 2", "i[i > 0] //= 2", "i[i > 0] |= 8", "f[m2] += 1; g = f + 1",
    "w = big[1:3, 1:4]; w[w > 8] *= 0.5", "x.T[x.T < 0] -= 1", "ro[ro > 0] += 5", "m = i > 0\ni[m] += i.sum()",
    "m = i > 0\ni[m] += np.int64(3)", "m = i > 0\ni[m] += i[m]", "m = i > 0\ni[m] += np.ones(5, int)",
    "m = x > 0\nx[m] += (m.__setitem__(0, True), 1.0)[1]", "m = x > 0\nx[m] += (x.__setitem__(1, 100.0), 1.0)[1]",
    "c[c.real > 1] *= 1j", "x[x > 0] += 1j", "def bounce(v, lo):\n    v[v < lo] *= -1\n    return v\ny = bounce(x.copy(), 0.0)",
    "for k in range(5):\n    x[x < 10] += 1.5\n    x[x > 4] -= 3\ns = x.sum()", "with np.errstate(over='raise'):\n    x[x > 0] *= 2",
    # the escape-time count of a Mandelbrot loop
    "counts = np.zeros(5, dtype=int)\nz = np.zeros(5)\nfor k in range(4):\n    z = z * z + x\n"
    "    esc = np.abs(z) > 2\n    counts[esc & (counts == 0)] = k\ntot = counts.sum()",
    # a lazy NumPy scalar is not a number known now: the eager path
    "x[x < 0] = x[1] * 2", "i[i < 0] = i.sum()",
    # a mask of rows, then ints and slices: written through the view (`pos[below, 1] *= -1`)
    "m = big[:, 0] > 7\nbig[m, 1] *= -1", "m = big[:, 0] > 7\nbig[m, -1] = 0", "m = big[:, 2] < 9\nbig[m, 1] += big[0, 0]",
    "m = big[:, 0] > 7\nbig[m, 1:3] *= -1", "m = big[:, 0] > 7\nbig[m, 9] *= -1", "m = big[:2, 0] > 7\nbig[m, 1] = 0",
    "m = f[:, 0] > 1\nf[m, 2] -= 1.5; g = f * 2", "m = big[:, 0] > 7\nbig.T[m, 1] = 0", "m = big[:, 1] > 7\nt = big[m, 1]",
    "v = big[:, :2].copy()\nfor k in range(4):\n    v += 0.5\n    lo = v[:, 1] > 9\n    v[lo, 1] *= -1\n    v[lo, 0] = 2",
]


@pytest.mark.parametrize("opts", BACKENDS)
@pytest.mark.parametrize("source", CASES, ids=[s.replace("\n", "; ")[:50] for s in CASES])
def test_a_masked_fill_is_numpys(source, opts):
    check(source, SETUP, **opts)


@pytest.mark.parametrize("src, op", [("x[x < 0] = 0\ny = x * 2", lambda v: np.where(v < 0, 0.0, v)),
                                     ("x[x < 0] += 1\ny = x * 2", lambda v: np.where(v < 0, v + 1, v)),
                                     ("x[x[:, 0] < 0, 1] *= -1\ny = x * 2", lambda v: np.where(
                                         (np.arange(2) == 1) & (v[:, :1] < 0), -v, v))])
def test_a_masked_write_fuses_with_its_mask_and_replays(src, op):
    rng = np.random.default_rng(0)
    for run in range(3):
        v = rng.normal(size=1000) if "[:, 0]" not in src else rng.normal(size=(500, 2))
        want = op(v.copy())
        ns = {"np": np, "x": v}
        r = jf.run_cell(src, ns, backend="cpu")
        assert ns["x"] is v and np.array_equal(v, want) and np.array_equal(ns["y"], want * 2)
        # (a column written through its view is a kernel boundary: y is a second kernel)
        assert r.kernels == (2 if "[:, 0]" in src else 1) and not r.fallbacks and not r.syncs
        assert r.cache == ("miss" if run == 0 else "hit")


def test_a_lazy_scalar_assigned_through_a_mask_is_not_read_outside_the_trace():
    """``x[m] = x.sum()``: a lazy NumPy scalar passes ``isinstance(v, np.generic)``; taken for a number known
    now, its value was read outside the trace, and the cell could not be replayed."""
    ns = {"np": np, "x": np.linspace(0.0, 1.0, 8)}
    ref = {"np": np, "x": np.linspace(0.0, 1.0, 8)}
    r = jf.run_cell("x[x > 0.5] = x.sum()", ns, backend="cpu")
    exec("x[x > 0.5] = x.sum()", ref)
    np.testing.assert_array_equal(ns["x"], ref["x"])
    assert r.cache == "miss", r.miss_reasons


@pytest.mark.parametrize("src", [
    "def bounce(p):\n    below = p[:, 1] < 0\n    p[below, 1] *= -1\nfor t in range(30):\n    p -= 0.1\n    bounce(p)",
    "for t in range(30):\n    x -= 0.1\n    x[x < 0] += 1.0",
    "def f(v):\n    a, b = v\n    return a * 2 + b\nfor t in range(30):\n    w = w * 0.5 + f(w[:2])",
])
def test_traced_after_the_interpreter_specializes_the_loop(src):
    """CPython specializes a subscript after a few iterations (BINARY_SUBSCR_GETITEM); its frame's ``f_lasti`` is
    then past the instruction's inline caches. The bytecode checks of ``x[m] op= c`` and ``a, b = v`` still see
    it: every iteration is traced, none runs eagerly from the ninth on."""
    setup = lambda: {"np": np, "p": np.linspace(-1.0, 1.0, 16).reshape(8, 2), "x": np.linspace(0.0, 1.0, 8),
                     "w": np.linspace(1.0, 2.0, 4)}
    ns, ref = setup(), setup()
    r = jf.run_cell(src, ns, backend="cpu", cache=False)
    exec(src, ref)
    for k in ("p", "x", "w"):
        np.testing.assert_allclose(ns[k], ref[k], rtol=1e-12)
    assert not r.fallbacks and not r.syncs, (r.fallbacks, r.syncs)
