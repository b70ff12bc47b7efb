"""``x[m] = f(a[m], b[m], ...)`` traced as ``x = np.where(m, f(a, b, ...), x)`` (jupyter_fuse/masked.py): the
reads through the mask are whole arrays, the statement fuses with the mask's ops and replays; NumPy's values,
dtypes, errors and aliasing on every backend, and NumPy's own reads wherever the statement is not of that form."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check

import jupyter_fuse as jf

BACKENDS = [pytest.param({"backend": "numpy"}, id="numpy"), pytest.param({"backend": "cpu"}, id="cpu"),
            pytest.param({"backend": "cupy", "dry_run": True}, id="cupy-dry")]

SETUP = ("x = np.array([-1.5, 2.0, np.nan, -0.0, 3.0]); y = np.array([0.5, -2.0, 4.0, 1.0, 0.0]); "
         "i = np.array([3, -4, 5, 0, -1]); u = np.arange(5, dtype=np.uint8); f32 = np.linspace(0, 1, 5, dtype=np.float32); "
         "g = np.arange(12.0).reshape(3, 4); h = np.asfortranarray(np.arange(12.0).reshape(3, 4) - 5); "
         "c = np.arange(5) + 0.5j; k = 2.5; n = 3; s = np.float32(1.5); short = np.ones(2); e = np.zeros(0); "
         "ro = np.arange(3.0); ro.flags.writeable = False")

CASES = [
    # the form: reads through the statement's mask, numbers, operators, NumPy's ufuncs
    "m = x > 0\nx[m] = x[m] * 2 + y[m]", "m = y != 0\nx[m] = 1.0 / y[m]", "m = np.isnan(x)\nx[m] = y[m]",
    "m = i < 0\ni[m] = -i[m] * n", "m = y > 0\nx[m] = np.sqrt(y[m]) + np.exp(-y[m]) * k", "m = x < 1\ny[m] = x[m] > y[m]",
    "m = g % 3 == 0\ng[m] = 0.25 * (g[m] + h[m] * k)", "m = h > 0\nh[m] = h[m] ** 2 - g[m]", "m = g > 4\ng[m] = -g[m]",
    "m = np.abs(c) < 2\nc[m] = c[m] ** 2 + c[m]", "m = i > 0\ni[m] = i[m] // 2 + i[m] % 3", "m = u > 1\nu[m] = u[m] - 1",
    "m = y > 0\nx[m] = y[m] * s", "m = x > 0\nt = x.sum()\nx[m] = x[m] * t", "m = e > 0\ne[m] = e[m] * 2",
    "m = x > 0\nv = x\nx[m] = x[m] + 1\nw = v * 2", "m = y < 1\nz = y[::-1]\nz[m] = y[m] * 2",
    # casts: safe ones fuse; NumPy's unsafe store (float into ints) and same-kind (float64 into float32) do not
    "m = i > 0\nx[m] = i[m] * 2", "m = x > 0\ni[m] = x[m] * 2", "m = y > 0\nf32[m] = y[m] * 3",
    "m = y > 0\nx[m] = c[m] * 2",
    # not the form: NumPy's own reads (an array name of another shape, a name that is an array, a read through
    # another mask, a call that is no ufunc, the mask itself, a target of another shape, two targets)
    "m = x > 0\nx[m] = x[m] * short", "m = x > 0\nx[m] = x[m] * y", "m = x > 0\nq = y < 1\nx[m] = x[m] + y[q]",
    "m = x > 0\nx[m] = np.where(y[m] > 0, y[m], 0)", "m = x > 0\nx[m] = m[m] * 2", "m = y > 0\ng[m] = y[m]",
    "m = x > 0\nx[m] = y[m] = 1.5", "m = x > 0\nx[m] = abs(y[m])", "m = x > 0\nx[m] = y[m] @ y[m]",
    "m = x > 0\nx[m] = np.add(y[m], 1, dtype=np.float32)", "m = g > 3\nt = g[m] * 2\ng[m] = t + 1",
    # NumPy's errors: a read of another shape, a mask of another shape
    "m = x > 0\nx[m] = x[m] + g[m]", "m = g > 0\nx[m] = x[m] * 2",
    # inside a function the cell defines, in a loop whose mask changes, after the loop specializes
    "def step(z, cc):\n    ok = np.abs(z) <= 2\n    z[ok] = z[ok] ** 2 + cc[ok]\n    return ok.sum()\n"
    "zz = np.zeros(5)\nfor it in range(12):\n    cnt = step(zz, y)", "for it in range(12):\n    m = x > it / 4\n    x[m] = x[m] * 0.5 - y[m]",
    # under a raising error state: the left-out elements could raise (NumPy's reads)
    "m = y != 0\nwith np.errstate(divide='raise'):\n    x[m] = 1.0 / y[m]",
    # a read-only target, and a statement that raises between its reads and its store
    "m = ro > 0\nro[m] = ro[m] * 2",
    "m = x > 0\ntry:\n    x[m] = x[m] + np.ones(7)\nexcept ValueError:\n    pass\ny[m] = y[m] + 1",
]


@pytest.mark.parametrize("opts", BACKENDS)
@pytest.mark.parametrize("source", CASES, ids=[s.replace("\n", "; ")[:60] for s in CASES])
def test_a_masked_statement_is_numpys(source, opts):
    check(source, SETUP, **opts)


MANDEL = """\
for it in range(25):
    m = Z.real ** 2 + Z.imag ** 2 <= 4.0
    Zr[m], Zi[m] = Zr[m] ** 2 - Zi[m] ** 2 + Cr[m], 2 * Zr[m] * Zi[m] + Ci[m]
    Z = Zr + 1j * Zi
    counts[m] = it
"""

RELAX = """\
for it in range(40):
    s[1:-1, 1:-1] = phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:] + phi[1:-1, :-2]
    phi[m] = 0.25 * (s[m] + h * h * rho[m])
"""


def _relax(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n = 24
    m = np.zeros((n, n), bool)
    m[1:-1, 1:-1] = (np.add.outer(np.arange(n), np.arange(n)) % 2 == 0)[1:-1, 1:-1]
    return {"np": np, "phi": rng.random((n, n)), "s": np.zeros((n, n)), "rho": rng.random((n, n)), "m": m, "h": 0.1}


def test_a_masked_statement_in_a_loop_fuses_and_replays_without_a_sync():
    """Red-black relaxation's half step through a fixed mask: the reads were data-dependent eager calls (a
    sync and a call each, every iteration); now the loop is elementwise kernels only, and replays."""
    for run in range(3):
        ns, ref = _relax(run), _relax(run)
        exec(RELAX, ref)
        r = jf.run_cell(RELAX, ns, backend="cpu")
        np.testing.assert_array_equal(ns["phi"], ref["phi"])
        assert not r.fallbacks and not r.syncs, (r.fallbacks, r.syncs)
        assert r.cache == ("miss" if run == 0 else "hit"), r.miss_reasons


def test_a_tuple_of_masked_values_is_numpys_reads():
    """``a[m], b[m] = f(...), g(...)`` is no single masked statement (two targets, a tuple): NumPy's reads and
    stores, the same values."""
    def setup() -> dict:
        x = np.linspace(-2, 0.5, 12)
        return {"np": np, "Zr": np.zeros(12), "Zi": np.zeros(12), "Z": np.zeros(12, complex), "Cr": x, "Ci": x[::-1] * 0.5,
                "counts": np.zeros(12, int)}
    ns, ref = setup(), setup()
    exec(MANDEL, ref)
    jf.run_cell(MANDEL, ns, backend="cpu")
    for k in ("Zr", "Zi", "counts"):
        np.testing.assert_array_equal(ns[k], ref[k])


def test_a_masked_statement_that_raised_is_checked_again_at_its_next_run():
    """Its reads and the numbers it reads are checked at its first read: a run that raised between its reads
    and its store leaves that check behind, and the next run of the statement (a name rebound to an array in
    between) is checked anew, not taken for the rest of the run that raised."""
    src = ("out = []\nfor k in (2.0, 1.0, np.arange(5.0)):\n    try:\n"
           "        x[m] = x[m] * (1 / (k - 1.0)) + y[m]\n    except (ZeroDivisionError, ValueError) as e:\n"
           "        out.append(type(e).__name__)\n")
    setup = "x = np.arange(5.0); y = np.ones(5); m = np.array([True, False, True, True, False])"
    for opts in ({"backend": "cpu"}, {"backend": "numpy"}):
        check(src, setup, **opts)
