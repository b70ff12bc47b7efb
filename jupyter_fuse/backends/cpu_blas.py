"""NumPy's float64 and float32 matmuls called from a compiled program without object mode.

A matmul a program calls goes through object mode (``cpu_single``): microseconds a call, more than
the product itself on the small matrices of a time step (a Kalman filter's 2x2, an RNN's 32x32). Here
it is NumPy's own matmul loop (``numpy/_core/src/umath/matmul.c.src``) written again in numba: the same
choice between a dot, a gemv, a gemm, a syrk and the plain loop, made from the same sizes and strides,
calling the same routines of the same OpenBLAS library NumPy loaded, with the same arguments, so the
same bits. ``tests/backends/test_cpu_blas.py`` holds it to NumPy's bits over shapes and layouts.

Only where NumPy's OpenBLAS is found as NumPy's wheels ship it (64-bit integers, ``scipy_cblas_*64_``
symbols, a library the process has loaded): elsewhere ``available()`` is False and object mode stays.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

ROW, COL, NOTRANS, TRANS, UPPER = 101, 102, 111, 112, 121  # the CBLAS enums
_I64, _PTR, _INT = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int


def _signatures(f: Any) -> dict[str, tuple]:
    """name -> (result, arguments), as cblas.h declares them with 64-bit integers; ``f``: the scalar type."""
    return {
        "dot": (f, [_I64, _PTR, _I64, _PTR, _I64]),
        "gemv": (None, [_INT, _INT, _I64, _I64, f, _PTR, _I64, _PTR, _I64, f, _PTR, _I64]),
        "gemm": (None, [_INT, _INT, _INT, _I64, _I64, _I64, f, _PTR, _I64, _PTR, _I64, f, _PTR, _I64]),
        "syrk": (None, [_INT, _INT, _INT, _I64, _I64, f, _PTR, _I64, f, _PTR, _I64]),
    }


_PREFIX = {"d": ctypes.c_double, "s": ctypes.c_float}  # float64's routines, float32's


def _library_path() -> str | None:
    """The OpenBLAS NumPy's wheel ships and NumPy loaded (Linux: the process's memory map names it): a
    64-bit-integer scipy-openblas in NumPy's own directory, not another BLAS the process holds (SciPy's)."""
    import os

    import numpy

    try:
        blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
        if blas.get("name") != "scipy-openblas" or "USE64BITINT" not in blas.get("openblas configuration", ""):
            return None
        home = os.path.dirname(numpy.__file__)  # (site-packages/numpy: its libraries are in numpy.libs beside it)
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if path.startswith(home) and "openblas" in path.rsplit("/", 1)[-1]:
                    return path
    except (OSError, KeyError, TypeError, AttributeError):
        return None
    return None


@functools.lru_cache(maxsize=1)
def routines() -> dict[str, Any] | None:
    """The routines (``ddot`` ... ``ssyrk``) as ctypes functions (numba calls those natively), or None."""
    path = _library_path()
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path)
        found = {}
        for prefix, f in _PREFIX.items():
            for name, (res, args) in _signatures(f).items():
                fn = getattr(lib, f"scipy_cblas_{prefix}{name}64_")
                fn.restype, fn.argtypes = res, args
                found[prefix + name] = fn
    except (OSError, AttributeError):
        return None
    return found


def available() -> bool:
    return routines() is not None


def matmul(dtype: Any) -> Any:
    """``_matmul`` of ``dtype`` (a type or a dtype: one compile each of float64 and float32)."""
    return _matmul(np.dtype(dtype).name)


@functools.lru_cache(maxsize=2)
def _matmul(dtype: str) -> Any:
    """``matmul(dm, dn, dp, a, oa, sa_m, sa_n, b, ob, sb_n, sb_p, out, os_m, os_p)``: NumPy's float64 (or
    float32) matmul loop for one product, the operands flat arrays with an offset and strides in elements (0 for
    a 1-D operand's missing dimension, as NumPy's loop sees it), ``out`` a flat array. No object mode
    (its compile costs seconds): NumPy's copies of operands BLAS cannot read are made here too."""
    import numba

    r = routines()
    dtype = np.dtype(dtype)
    prefix = {"float64": "d", "float32": "s"}[dtype.name]
    ddot, dgemv, dgemm, dsyrk = (r[prefix + n] for n in ("dot", "gemv", "gemm", "syrk"))
    SZ = dtype.itemsize
    ftype = dtype.type
    zero = ftype(0)  # (NumPy's plain loop sums in the operands' type; its BLAS dot in a double)

    @numba.njit(inline="always")
    def address(x, offset):  # type: ignore[no-untyped-def]
        # an element's address, as a signed integer (an unsigned one plus a signed one is a float in numba)
        return np.int64(x.ctypes.data) + offset * SZ

    @numba.njit(inline="always")
    def blasable2d(bs1: int, bs2: int, d1: int, d2: int) -> bool:
        # matmul.c.src's is_blasable2d: the fast axis contiguous, the slow one at least d2 apart
        return bs2 == SZ and bs1 % SZ == 0 and bs1 // SZ >= d2

    @numba.njit
    def noblas(dm, dn, dp, a, oa, sam, san, b, ob, sbn, sbp, out, osm, osp):  # type: ignore[no-untyped-def]
        for m in range(dm):
            for p in range(dp):
                acc = zero
                for n in range(dn):
                    acc += a[oa + m * sam + n * san] * b[ob + n * sbn + p * sbp]
                out[m * osm + p * osp] = acc

    @numba.njit
    def dot(n, a, oa, sa, b, ob, sb, out, oo):  # type: ignore[no-untyped-def]
        # arraytypes.c.src's DOUBLE_dot / FLOAT_dot: BLAS for positive strides, the sum a double from 0.0
        if sa > 0 and sb > 0:
            total = 0.0
            total += ddot(n, address(a, oa), sa, address(b, ob), sb)
            out[oo] = total
        else:
            acc = zero
            for i in range(n):
                acc += a[oa + i * sa] * b[ob + i * sb]
            out[oo] = acc

    @numba.njit
    def gemv(p1, is1_m, is1_n, p2, is2_n, po, os_m, m, n):  # type: ignore[no-untyped-def]
        # matmul.c.src's gemv: byte strides in, the matrix read as column- or row-major and transposed
        if blasable2d(is1_m, is1_n, m, n):
            order, lda = COL, is1_m // SZ
        else:
            order, lda = ROW, is1_n // SZ
        dgemv(order, TRANS, n, m, 1.0, p1, lda, p2, is2_n // SZ, 0.0, po, os_m // SZ)

    @numba.njit
    def matrixmatrix(p1, is1_m, is1_n, p2, is2_n, is2_p, po, os_m, os_p, m, n, p, out, oo):  # type: ignore[no-untyped-def]
        ldc = os_m // SZ
        if blasable2d(is1_m, is1_n, m, n):
            trans1, lda = NOTRANS, is1_m // SZ
        else:
            trans1, lda = TRANS, is1_n // SZ
        if blasable2d(is2_n, is2_p, n, p):
            trans2, ldb = NOTRANS, is2_n // SZ
        else:
            trans2, ldb = TRANS, is2_p // SZ
        if p1 == p2 and m == p and is1_m == is2_p and is1_n == is2_n and trans1 != trans2:
            dsyrk(ROW, UPPER, trans1, p, n, 1.0, p1, lda if trans1 == NOTRANS else ldb, 0.0, po, ldc)
            for i in range(p):  # (syrk wrote the upper triangle: NumPy copies it down)
                for j in range(i + 1, p):
                    out[oo + j * ldc + i] = out[oo + i * ldc + j]
        else:
            dgemm(ROW, trans1, trans2, m, p, n, 1.0, p1, lda, p2, ldb, 0.0, po, ldc)

    @numba.njit
    def copy(d1, d2, src, os_, s1, s2, dst, od, t1, t2):  # type: ignore[no-untyped-def]
        for i in range(d1):
            for j in range(d2):
                dst[od + i * t1 + j * t2] = src[os_ + i * s1 + j * s2]

    @numba.njit
    def matmul(dm, dn, dp, a, oa, sam, san, b, ob, sbn, sbp, out, osm, osp):  # type: ignore[no-untyped-def]
        is1_m, is1_n, is2_n, is2_p, os_m, os_p = sam * SZ, san * SZ, sbn * SZ, sbp * SZ, osm * SZ, osp * SZ
        p1, p2, po = address(a, oa), address(b, ob), address(out, 0)
        i1b = blasable2d(is1_m, is1_n, dm, dn) or blasable2d(is1_n, is1_m, dn, dm)
        i2b = blasable2d(is2_n, is2_p, dn, dp) or blasable2d(is2_p, is2_n, dp, dn)
        ob_ = blasable2d(os_m, os_p, dm, dp) or blasable2d(os_p, os_m, dp, dm)
        if dm == 0 or dn == 0 or dp == 0:
            noblas(dm, dn, dp, a, oa, sam, san, b, ob, sbn, sbp, out, osm, osp)
        elif dm == 1 or dn == 1 or dp == 1:
            if dm == 1 and dp == 1:
                dot(dn, a, oa, san, b, ob, sbn, out, 0)
            elif dn == 1 and (dp == 1 or dm == 1):
                noblas(dm, dn, dp, a, oa, sam, san, b, ob, sbn, sbp, out, osm, osp)
            elif dm == 1 and i2b and blasable2d(is1_n, SZ, dn, 1):
                gemv(p2, is2_p, is2_n, p1, is1_n, po, os_p, dp, dn)
            elif dp == 1 and i1b and blasable2d(is2_n, SZ, dn, 1):
                gemv(p1, is1_m, is1_n, p2, is2_n, po, os_m, dm, dn)
            else:
                noblas(dm, dn, dp, a, oa, sam, san, b, ob, sbn, sbp, out, osm, osp)
        else:  # matrix @ matrix: an operand BLAS cannot read is copied first, in the order it is closest to
            t1 = np.empty(0 if i1b else dm * dn, ftype)
            t2 = np.empty(0 if i2b else dn * dp, ftype)
            to = np.empty(0 if ob_ else dm * dp, ftype)
            if not i1b:
                sm, sn = (1, dm) if abs(is1_m) < abs(is1_n) else (dn, 1)
                copy(dm, dn, a, oa, sam, san, t1, 0, sm, sn)
                p1, is1_m, is1_n = address(t1, 0), sm * SZ, sn * SZ
            if not i2b:
                sn, sp = (1, dn) if abs(is2_n) < abs(is2_p) else (dp, 1)
                copy(dn, dp, b, ob, sbn, sbp, t2, 0, sn, sp)
                p2, is2_n, is2_p = address(t2, 0), sn * SZ, sp * SZ
            o_transpose = abs(os_m) < abs(os_p)
            res, ro, rsm, rsp = out, 0, osm, osp
            if not ob_:
                res, ro, rsm, rsp = to, 0, (1 if o_transpose else dp), (dm if o_transpose else 1)
                po, os_m, os_p = address(to, 0), rsm * SZ, rsp * SZ
            if o_transpose:  # matmul(a, b, o) == matmul(b.T, a.T, o.T)
                matrixmatrix(p2, is2_p, is2_n, p1, is1_n, is1_m, po, os_p, os_m, dp, dn, dm, res, ro)
            else:
                matrixmatrix(p1, is1_m, is1_n, p2, is2_n, is2_p, po, os_m, os_p, dm, dn, dp, res, ro)
            if not ob_:
                copy(dm, dp, to, 0, rsm, rsp, out, 0, osm, osp)
            return t1.size + t2.size + to.size  # (a use after the calls: numba frees an array after its last use)
        return 0

    return matmul

