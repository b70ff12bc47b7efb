"""Store-to-load forwarding in the tracer (trace._forwarded, trace._filled): a read of the region an
assignment has just written, through the same view, is the value written; a window of ``np.zeros`` is
zeros. Repeated updates of one slice (``out[r] += ...``) become one kernel and one write, and every
result stays NumPy's (values, dtypes, layouts, aliasing: tests/harness.check)."""

from __future__ import annotations

import numpy as np
from harness import check

CONV = """
for k in range(2):
    out = np.zeros_like(img)
    for di in range(-1, 2):
        for dj in range(-1, 2):
            out[1:-1, 1:-1] += w[di + 1, dj + 1] * img[1 + di:n - 1 + di, 1 + dj:n - 1 + dj]
    img = out / w.sum()
"""
SETUP = "n = 12\nimg = np.random.default_rng(0).random((n, n))\nw = np.array([[1., 2., 1.], [2., 4., 2.], [1., 2., 1.]])"


def _scatters(f) -> list[dict]:
    return [k for k in f.report.kernel_list if k["kind"] == "scatter"]


def test_repeated_updates_of_one_slice_are_one_kernel_and_one_write():
    f = check(CONV, SETUP, backend="cpu", cache=False)
    scatters = _scatters(f)
    assert len(scatters) == 2, f.report  # one per pass, not nine
    assert all(k["ops"].count("setitem") == 1 and k["ops"].count("add") == 9 for k in scatters)
    # the first pass reads no zeros from memory: its window of np.zeros_like is computed in the kernel
    assert "zeros" in scatters[0]["ops"]


def test_unfused_runs_every_write_as_numpy_does():
    f = check(CONV, SETUP, backend="numpy", cache=False)
    assert sum(k["ops"] == ["setitem"] or "setitem" in k["ops"] for k in f.report.kernel_list) == 18


def test_an_old_value_still_read_elsewhere_is_kept():
    # t reads the first write's region (and is kept); u reads an overlapping other window
    check("out[1:-1] += a\nt = out[1:-1] * 2\nu = out[:-2] + 0\nout[1:-1] += a\nv = t + u", "out = np.ones(8)\na = np.arange(6.0)",
          backend="cpu", cache=False)


def test_reads_of_other_windows_block_forwarding():
    f = check("for i in range(5):\n    x[1:] = np.sin(x[1:]) * 0.5 + x[:-1]", "x = np.linspace(0, 1, 16)",
              backend="cpu", cache=False)
    assert len(_scatters(f)) == 5


def test_forwarding_across_a_sync_and_through_casts_and_fortran_order():
    check("out[1:-1, 1:-1] += a\nprint(float(out.sum()))\nout[1:-1, 1:-1] += a\nout[1:-1, 1:-1] *= b\n"
          "s = out[1:-1, 1:-1]\nr = s * 2",
          "out = np.ones((5, 6), np.float32, order='F')\na = np.arange(12.0).reshape(3, 4)\nb = np.float64(1.5)",
          backend="cpu", cache=False)
    check("out[::-1] += a\nout[::-1] -= 2 * a\ny = out[::-1] + 1", "out = np.arange(6)\na = np.arange(6)",
          backend="cpu", cache=False)



SOLVER = """
for n in range(4):
    b[1:-1] = u[1:-1] * 2
    for q in range(3):
        p[1:-1] = p[1:-1] * 0.5 + b[1:-1]
        p[0] = p[1]
    u[1:-1] = u[1:-1] + p[1:-1]
"""


def test_a_write_read_by_other_statements_is_not_taken_over(monkeypatch):
    # the new b depends on the old b's readers (through p and u, which the cell still holds): taking the old
    # write over would rebuild, so compute twice, everything between them (a CFD solver's b and pressure loop)
    from jupyter_fuse import trace

    setup = "u = np.linspace(0, 1, 8)\np = np.ones(8)\nb = np.zeros(8)"
    forwarded = check(SOLVER, setup, backend="cpu", cache=False)
    monkeypatch.setattr(trace, "_forwarded", lambda s, value, dest: None)
    plain = check(SOLVER, setup, backend="cpu", cache=False)
    assert forwarded.report.kernels <= plain.report.kernels
