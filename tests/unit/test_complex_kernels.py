"""Complex values in fused cpu kernels: exact complex arithmetic (``+``, ``-``, ``==``, ``np.where``, casts)
inline, every other complex op by NumPy's own loop (``cpu_nploop.COMPLEX_LOOPS``: NumPy multiplies with
fused multiply-adds and computes ``abs`` with its own formula, neither as numba's complex type does), so a
Mandelbrot step is one kernel with NumPy's bits. Reductions of complex values stay NumPy's calls."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from harness import check

import jupyter_fuse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from programs import BY_NAME  # noqa: E402

BACKENDS = [pytest.param({"backend": "numpy"}, id="numpy"), pytest.param({"backend": "cpu"}, id="cpu"),
            pytest.param({"backend": "cupy", "dry_run": True}, id="cupy-dry")]

SETUP = ("z = np.array([1+2j, -0.5+0.25j, 3-1j, 0j, complex(np.inf, 1), complex(np.nan, 0), 1e300+1e300j, -2-3j]); "
         "w = z[::-1].copy(); x = np.linspace(-2, 2, 8); z64 = z.astype(np.complex64); b = x > 0; "
         "i = np.arange(8); m = (np.arange(12.0).reshape(3, 4) - 5) * (0.5 - 0.25j)")

CELLS = [
    "r = z * w + z", "r = z / w", "r = z * z", "r = z ** 2", "r = z ** -1", "r = z ** 0.5", "r = z ** 3",
    "r = z ** w", "r = z ** 2.5", "r = np.abs(z) + x", "r = np.abs(z64)", "r = np.exp(z) * 2", "r = np.sqrt(z - x)",
    "r = np.log(z + 1)", "r = np.conj(z) * z", "r = -z + 1j", "r = +z * 1j", "r = z == w", "r = z != 0",
    "r = np.isnan(z)", "r = np.isinf(z)", "r = np.isfinite(z * 2)", "r = np.where(b, z, 0)",
    "r = np.where(np.abs(z) < 3, z * z, -z)", "r = z.astype(np.complex64) * 2", "r = (x * 1j + i).astype(np.complex64)",
    "r = x + 1j * x[::-1]", "r = b * 1j", "r = b + z", "r = i * (1 + 1j)", "r = i.astype(np.uint64) + z",
    "r = z64 * z64 + z64", "r = z64 / (z64 + 1)",
    "r = np.abs(z) <= 2.0", "r = np.tanh(z)", "r = np.sin(z) + np.cos(w)", "r = 1 / z", "r = np.square(z) - np.reciprocal(w)",
    "r = (z * w).sum()", "r = np.abs(z * w).sum()", "r = np.abs(m * m).max(axis=1) + x[:3]", "r = (m * 1j).mean(axis=0)",
    "s = x.sum(axis=0) * 1j", "r = (x * 2).sum() + z", "z *= w", "z[1:] = z[:-1] * 2j", "z[b] = z[b] * w[b]",
    "z += x", "x += z.real", "r = z.astype(float)", "r = (z * 2).astype(np.int64)", "r = (z * 2).astype(bool)",
    "r = np.clip(z, 0, 1)", "r = np.zeros(4, complex) + 1j", "r = np.ones_like(z) * z", "r = np.full(3, 1+1j) * 2",
    "r = z > w", "r = np.maximum(z, w)", "r = np.sign(z)", "r = z // w", "r = np.logical_and(z, w)",
    "r = np.logical_not(z * 0)", "r = z * 0.5", "r = z * np.float32(2)", "r = z64 * 2.5", "r = z64 * np.float64(2.5)",
    "r = z64 * x", "r = m @ m.T * 2", "r = m.T * (1 + 2j) - m.T", "r = np.exp(1j * x) * 3", "r = (m[:, ::2] * m[:, 1::2]).T",
    "r = z * w\nprint(r[0])", "q = z * w\nif abs(q[0]) > 1:\n    q = q / 2",
    "u = z * 0\nfor k in range(5):\n    u = u * u + w\n    inside = np.abs(u) <= 2.0\n    u = np.where(inside, u, 2.0)",
    "r = np.exp(1j * x)\nr = r.conj() * r",
]


@pytest.mark.parametrize("opts", BACKENDS)
@pytest.mark.parametrize("source", CELLS)
def test_is_numpys(source, opts):
    check(source, SETUP, **opts)


def test_a_mandelbrot_step_is_one_kernel_with_numpys_bits():
    mandelbrot = BY_NAME["mandelbrot"]  # (bench/programs.py: every point iterated, the escaped parked at 2)
    setup = mandelbrot.sizes["tiny"]
    ref = mandelbrot.setup(setup)
    exec(mandelbrot.source, ref)
    ns = mandelbrot.setup(setup)
    report = jupyter_fuse.run_cell(mandelbrot.source, ns, backend="cpu")
    assert report.kernels <= setup["iters"] + 2, report.kernel_list  # (a step each; the setup fuses into the first)
    assert not [k for k in report.kernel_list if k.get("kind") == "single"]
    for name in ("z", "count", "c"):  # the products and the abs: NumPy's bits, not within a tolerance
        assert ns[name].dtype == ref[name].dtype and np.array_equal(ns[name], ref[name]), name


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "numpys-loops"])
@pytest.mark.parametrize("op", ["a * b", "b * a", "a * a", "a * c", "a / b", "np.abs(a)", "np.square(a)", "a ** 2",
                                "np.exp(a)", "np.sqrt(a)"])
def test_complex_ops_have_numpys_bits(op, inline, monkeypatch):
    from jupyter_fuse.backends import cpu_complex

    if inline:  # (the machine's NumPy computes them as cpu_complex writes them: else the kernel calls its loops)
        assert cpu_complex.inline("multiply") and cpu_complex.inline("absolute"), "probe disagrees with NumPy here"
    else:
        monkeypatch.setattr(cpu_complex, "inline", lambda op: False)
    rng = np.random.default_rng(7)
    setup = {"np": np, "a": rng.standard_normal(2000) * 10 ** rng.uniform(-3, 3, 2000) + 1j * rng.standard_normal(2000),
             "b": rng.standard_normal(2000) + 1j * rng.standard_normal(2000) * 10 ** rng.uniform(-3, 3, 2000)}
    setup["c"] = setup["b"][7]  # (a NumPy scalar: NumPy's loop reads it with stride 0)
    src = f"r = ({op}) + 0"  # (the op inside a kernel of two)
    ref = dict(setup)
    exec(src, ref)
    ns = dict(setup)
    report = jupyter_fuse.run_cell(src, ns, backend="cpu")
    assert report.kernels == 1 and not [k for k in report.kernel_list if k.get("kind") == "single"]
    assert np.array_equal(ns["r"], ref["r"])


def test_a_complex_value_is_not_fused_with_a_reduction_and_says_why():
    ns = {"np": np, "z": np.arange(6.0) * (1 + 1j)}
    report = jupyter_fuse.run_cell("s = np.abs(z * z).sum()", ns, backend="cpu")
    assert ns["s"] == np.abs(np.arange(6.0) * (1 + 1j) * (np.arange(6.0) * (1 + 1j))).sum()
    assert any("complex values, which are not fused with a reduction" in b["reason"] for b in report.breaks), report.breaks


def test_a_complex_kernel_is_not_merged_into_a_reduction_of_its_space():
    """Found by the generator (seed 5950010): a complex copy, an elementwise kernel of one element, was
    merged as a sibling into a reduction's kernel over the same space, which then could not render."""
    setup = "a = np.array([(1.5+2j), (2+1j), (-1.5+2j), (-1-1j)], dtype=np.complex128)[::-1]"
    cell = ("v14 = (a[...].any(axis=0, keepdims=True) ** a.squeeze())\nv15 = np.exp(np.arctan2(7, 2.0))\n"
            "v16 = (a == a).clip(0, 5)\nv17 = (np.negative(np.uint8(200)) - np.argmin(v15))\n"
            "np.add(np.bool_(True), v17, v16)\nv19 = np.maximum((a * v16), (v16[None] < np.inf))\n"
            "v20 = a[0].var(axis=None, keepdims=True)\n")
    check(cell, setup, backend="cpu")


def test_the_probe_refuses_a_formula_numpy_does_not_use(monkeypatch):
    """``cpu_complex.inline`` runs the kernels' own helper text against NumPy: a product without fused
    multiply-adds (numba's complex type) differs from NumPy's here, and is not written inline."""
    from jupyter_fuse.backends import cpu_complex

    z = cpu_complex._probe_values()
    with np.errstate(all="ignore"):
        if np.array_equal(z * z[::-1], [complex(a) * complex(b) for a, b in zip(z, z[::-1])], equal_nan=True):
            pytest.skip("this machine's NumPy multiplies complex numbers as Python does")
    monkeypatch.setitem(cpu_complex.HELPERS, "cmul", cpu_complex.HELPERS["cmul"].replace(
        "complex(fma(a.real, b.real, -(a.imag * b.imag)), fma(a.real, b.imag, a.imag * b.real))", "a * b"))
    cpu_complex.inline.cache_clear()
    try:
        assert not cpu_complex.inline("multiply")
    finally:
        cpu_complex.inline.cache_clear()


def test_a_long_chain_of_products_is_written_out_with_numpys_bits():
    """A kernel writes NumPy's product out on its operands' names (``cpu_complex.PRODUCT``), not as calls of
    a helper: in a kernel of a hundred products or more LLVM stops inlining the calls, and they keep the loop
    scalar (a split-step phase loop replayed at 0.9x NumPy's speed; ``bench/cpu.py --only phase``)."""
    from jupyter_fuse.backends import cpu_complex

    if not cpu_complex.inline("multiply"):
        pytest.skip("this machine's NumPy does not multiply complex numbers as cpu_complex writes it")
    rng = np.random.default_rng(3)
    setup = {k: np.exp(1j * rng.uniform(-1, 1, 300)) * rng.uniform(0.9, 1.1, 300) for k in ("psi0", "half", "kin")}
    src = "psi = psi0.copy()\nfor step in range(60):\n    psi = half * psi\n    psi = kin * (psi + 0)\n"
    ref = {"np": np, **setup}
    exec(src, ref)
    ns = {"np": np, **setup}
    report = jupyter_fuse.run_cell(src, ns, backend="cpu", cache=False)
    assert np.array_equal(ns["psi"], ref["psi"]) and ns["psi"].dtype == ref["psi"].dtype
    sources = [k["source"] for k in report.kernel_list if k.get("source")]
    assert sources and all("cmul(" not in s for s in sources) and any(s.count("fma(") >= 100 for s in sources)
