"""Complex products and magnitudes computed inline in a kernel, as NumPy computes them here.

NumPy's complex loops are vector code: on a CPU with fused multiply-adds, ``a * b`` is
``fma(ar, br, -(ai * bi)) + fma(ar, bi, ai * br)j`` and ``abs(z)`` is ``l * sqrt(fma(r, r, 1))`` of the larger
part ``l`` and the ratio ``r`` of the smaller to it; numba's complex type rounds both otherwise. A kernel
writes NumPy's formula where a probe (``inline``) finds that it gives NumPy's bits on this machine,
else it calls NumPy's loop on blocks of elements (``cpu_nploop``), which is right everywhere but costs a
copy of every operand (measured: ``z * z + c`` on 1M elements, 3.3 ms blocked, 1.3 ms inline, NumPy 1.5).

``fma`` is LLVM's fused multiply-add (``math.fma`` comes with Python 3.13), made when a kernel imports it.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

# NumPy's product of complex128 ``a`` and ``b`` (names), as a kernel writes it in its loop body. Written out
# there, not called: LLVM stops inlining a helper's calls in a kernel of a hundred products or more, and the
# calls keep the loop scalar (a chain of 256 products on 2,048 elements: 0.94 ms called, 0.12 ms written out,
# NumPy 0.36 ms; the compile 0.9 s -> 2.7 s; a diagnostic script)
PRODUCT = "complex(fma({a}.real, {b}.real, -({a}.imag * {b}.imag)), fma({a}.real, {b}.imag, {a}.imag * {b}.real))"

# the helpers a kernel module defines (cpu_render.HELPERS) for an op on complex128 written inline (``cmul``: the
# probe's text of ``PRODUCT``)
HELPERS = {
    "cmul": f'''
@njit(cache=True)
def cmul(a, b):
    return {PRODUCT.format(a="a", b="b")}
''',
    "cabs": '''
@njit(cache=True)
def cabs(z):
    a = abs(z.real)
    b = abs(z.imag)
    if np.isinf(a) or np.isinf(b):
        return np.inf
    if np.isnan(a) or np.isnan(b):
        return np.nan
    hi = max(a, b)
    if hi == 0.0:
        return 0.0
    r = min(a, b) / hi
    return np.sqrt(fma(r, r, 1.0)) * hi
''',
}
OPS = {"multiply": "cmul", "square": "cmul", "absolute": "cabs"}  # (square: the product with itself)


def _fma(x: float, y: float, z: float) -> float:
    """x * y + z rounded once, as IEEE 754's fusedMultiplyAdd (exact rationals, then one rounding)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y + z  # (an infinite or NaN product: the same either way)
    if not math.isfinite(z):
        return z + 0.0
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:  # (zeros' signs as IEEE adds them; a cancellation gives +0)
        return x * y + z if x * y == 0 and z == 0 else 0.0
    try:
        return float(exact)  # (Fraction's division of integers rounds to the nearest)
    except OverflowError:
        return math.copysign(math.inf, exact)


def _python(name: str) -> Callable[..., Any]:
    """``HELPERS[name]`` as Python, its ``fma`` rounded once (``_fma``): the probe runs the kernels' own text."""
    namespace: dict[str, Any] = {"np": np, "njit": lambda **kw: (lambda f: f), "fma": _fma}
    exec(HELPERS[name], namespace)  # noqa: S102 - our own helper's source
    return namespace[name]


def _probe_values() -> np.ndarray:
    """Values where the formulas' roundings differ (most products of random parts of mixed scales), and
    zeros, signed zeros and parts that overflow."""
    rng = np.random.default_rng(20261206)
    n = 256
    z = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n) + 1j * rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
    special = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1e300 + 1e300j, 1e-300 + 3e-310j, complex(3.0, 0.0)]
    return np.concatenate([z, np.array(special)])


@functools.lru_cache(maxsize=None)
def inline(op: str) -> bool:
    """Does NumPy compute complex128 ``op`` on this machine as ``HELPERS`` writes it, to the bit (a product
    of one array with another, itself, and a broadcast scalar; a magnitude)?"""
    z = _probe_values()
    w = z[::-1].copy()
    mine: Callable[..., Any]
    with np.errstate(all="ignore"):
        if op in ("multiply", "square"):
            pairs = [(z, w, z * w), (w, z, w * z), (z, z, np.square(z)), (z, np.full_like(z, w[3]), z * w[3])]
            mine = _python("cmul")
        elif op == "absolute":
            pairs = [(z, None, np.abs(z))]
            mine = _python("cabs")
        else:
            return False
        for a, b, got in pairs:
            want = [mine(x) if b is None else mine(x, y) for x, y in zip(a.tolist(), (a if b is None else b).tolist())]
            if not np.array_equal(np.array(want, dtype=got.dtype).view(np.uint64), np.asarray(got).view(np.uint64)):
                return False
    return True


def _make_fma() -> Any:
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    def fma(typingctx, x, y, z):
        def codegen(cgctx, builder, signature, args):
            d = ir.DoubleType()
            fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
            return builder.call(fn, args)
        return types.float64(types.float64, types.float64, types.float64), codegen
    return intrinsic(fma)


def __getattr__(name: str) -> Any:
    """``fma``, made when a kernel imports it (importing numba costs 0.4 s)."""
    if name == "fma":
        fn = globals()[name] = _make_fma()
        return fn
    raise AttributeError(name)
