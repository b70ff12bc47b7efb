"""Render a fused kernel as Python source for numba.

One function per kernel, its loop nest over the kernel's iteration shape, one
local variable per op, inputs read through (possibly broadcast or strided)
arrays the host prepares, scalars passed as arguments so that a new value of
``alpha`` reuses the compiled kernel. Every op is computed in the loop dtype
NumPy itself would pick (``ufunc.resolve_dtypes``) and cast to NumPy's result
dtype, so integer wrap-around, NaN and inf come out as NumPy's.

A sample, ``y = np.sqrt(x) ** 2 + c`` with ``x`` float64[n] and ``c`` a float
(``** 2`` is NumPy's square, as the ``**`` operator does it)::

    def _kernel_par(s0, p0, in0, out0):   # (and _kernel_seq: the same body, no threads)
        for i0 in prange(s0):
            v2 = in0[i0]
            v1 = np.sqrt(v2)
            v3 = (v1 * v1)
            v4 = (v3 + p0)
            out0[i0] = v4

``exp``, ``log``, ``tanh``, ``power``, ``sin`` and the like call NumPy's own loop instead, on blocks of
elements (``cpu_nploop``): NumPy's vector code and its bits.

Reduce kernels loop over output elements (rows), with one inner loop per stage
over the reduced axes; a full reduction splits its first axis into chunks run
in parallel and combines their partial results. A reduction over axes that are
not the input's innermost ones (``x.sum(axis=0)``) loops the other way round
(``COLUMNS_MARK``): the reduced axes outside, the kept axes inside, into arrays
of accumulators. Float sums, means and variances
are NumPy's to the bit where NumPy's order is known (``_pairwise_plan``): the
operand's values go through a small buffer into NumPy's pairwise summation
(``pw_*``, compiled once and shared by the kernels), a full reduction's subtrees
in parallel.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from .. import views
from . import cpu_complex, cpu_nploop
from ..fuse import Kernel
from ..ir import Node
from ..ops import OPS, SCALAR_MATH, SWAPPED, const_key, fixed_comparison, power_fast_paths, roll_moves


class CannotRender(Exception):
    """This op/dtype combination has no CPU expression; it runs as NumPy."""


@dataclass
class Rendered:
    source: str  # the module source (helpers + kernel function), also the cache key
    params: list[tuple[Node, np.dtype]]  # scalar arguments: (const or creation node, dtype)
    reads: list[tuple[Node, tuple[int, ...]]]  # array arguments: (input node, shape it is read at)
    outputs: list[Node]
    needs_threads: bool = False  # takes an `nthreads` argument (it splits work into chunks)
    # per read: None (a strided array) or (offset, strides, dims whose stride is an argument): the
    # storage as one flat array, indexed in the kernel (contiguous rows stay vectorizable)
    flat: list = field(default_factory=list)
    dst: tuple | None = None  # an assignment's region in its flat destination: (offset, strides, dims)


# -- scalar expressions ----------------------------------------------------------------

_NP_UNARY = {
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "fabs", "rint",
}
_NP_BINARY = {"arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "fmod", "float_power"}
_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "equal": "==", "not_equal": "!=",
          "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}

# Helpers the generated module defines when a kernel uses them. Each mirrors
# NumPy's C loop for that op (npy_divmod, npy_lshift, ...).
HELPERS: dict[str, str] = {
    "cmp_iu": '''
@njit(cache=True)
def cmp_iu(a, b):
    if a < 0:
        return -1
    ua = np.uint64(a)
    return -1 if ua < b else (1 if ua > b else 0)
''',
    "floordiv_f": '''
@njit(cache=True)
def floordiv_f(a, b):
    if b == 0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and (b < 0) != (mod < 0):
        div -= 1.0
    if div != 0:
        fl = np.floor(div)
        if div - fl > 0.5:
            fl += 1.0
        return fl
    return np.copysign(0.0, a / b)
''',
    "mod_f": '''
@njit(cache=True)
def mod_f(a, b):
    if b == 0:
        return np.fmod(a, b)
    mod = np.fmod(a, b)
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod += b
    else:
        mod = np.copysign(0.0, b)
    return mod
''',
    "floordiv_i": '''
@njit(cache=True)
def floordiv_i(a, b):
    if b == 0:
        return a - a
    if b == -1:  # INT_MIN // -1 wraps in NumPy; in LLVM it would trap
        return -a
    return a // b
''',
    "floordiv_u": '''
@njit(cache=True)
def floordiv_u(a, b):
    return a - a if b == 0 else a // b
''',
    "mod_i": '''
@njit(cache=True)
def mod_i(a, b):
    if b == 0 or b == -1:
        return a - a
    return a % b
''',
    "mod_u": '''
@njit(cache=True)
def mod_u(a, b):
    return a - a if b == 0 else a % b
''',
    "fmod_i": '''
@njit(cache=True)
def fmod_i(a, b):
    if b == 0 or b == -1:
        return a - a
    r = a % b
    if r != 0 and (r < 0) != (a < 0):  # C's remainder takes the dividend's sign
        r -= b
    return r
''',
    "fmod_u": '''
@njit(cache=True)
def fmod_u(a, b):
    return a - a if b == 0 else a % b
''',
    "clip_f": '''
@njit(cache=True)
def clip_f(x, lo, hi):
    # as NumPy: NaN in x wins, then a NaN bound; x itself on a tie (clip(-0.0, 0.0, 1.0) is -0.0)
    m = x if (x != x or x >= lo) else lo
    return m if (m != m or m <= hi) else hi
''',
    "sign_f": '''
@njit(cache=True)
def sign_f(a):
    if a > 0:
        return 1.0
    if a < 0:
        return -1.0
    if a == 0:
        return 0.0
    return a
''',
    "sign_i": '''
@njit(cache=True)
def sign_i(a):
    return 1 if a > 0 else (-1 if a < 0 else 0)
''',
    "ipow": '''
@njit(cache=True)
def ipow(a, b):
    # in uint64, whose products wrap as NumPy's integer loops do (numba's signed products are nsw: undefined
    # on overflow); the caller casts to the loop dtype, which keeps the low bits
    out = np.uint64(1)
    base = np.uint64(a)
    while b > 0:
        if b & 1:
            out = out * base
        base = base * base
        b >>= 1
    return out
''',
    "heaviside": '''
@njit(cache=True)
def heaviside(a, h):
    if a != a:
        return a
    if a == 0:
        return h
    return 1.0 if a > 0 else 0.0
''',
}

# NumPy's maximum/minimum propagate a NaN (the first argument's wins) and give the second argument on a
# tie (signed zeros: maximum(-0.0, 0.0) is 0.0); fmax/fmin ignore a NaN and tie the same way
for _name, _cmp, _nan in [("max_f", ">", "a"), ("min_f", "<", "a"), ("fmax_f", ">", "b"), ("fmin_f", "<", "b")]:
    HELPERS[_name] = f"""
@njit(cache=True)
def {_name}(a, b):
    return a if (a {_cmp} b or {_nan} != {_nan}) else b
"""

# -- NumPy's pairwise summation, shared by the kernels -----------------------------------
# numpy/_core/src/umath/loops_utils.h.src, pairwise_sum: a run of n elements is summed as a tree, split at
# n2 = n // 2 rounded down to a multiple of 8, down to leaves of at most 128 elements (PW_BLOCKSIZE) summed
# with 8 accumulators (see _pairwise_plan for where NumPy sums so). A kernel stores its operand's values in
# a buffer and calls these; unlike HELPERS they are compiled once (numba caches them next to this file) as C
# functions, which a kernel calls by symbol (numba's ExternalFunction): linked into every kernel, and
# optimized again there by LLVM, they cost each kernel ~0.3 s more compiling. Only ``pw_leaf`` (a row of at
# most 128 elements: one leaf) is a numba function linked into the kernel, where a call per row costs more
# than the row's sum. Plain Python here; numba's versions are made when a kernel module first imports one
# of PAIRWISE (``__getattr__``). Measured (2 cores): render + compile of a reduce kernel grows by 0.1-0.5 s.

def _pw_leaf(p, o, n):
    """NumPy's sum of a leaf, ``p[o:o + n]`` (1 <= n <= 128): 8 accumulators, then the rest one by one;
    below 8, one by one from -0.0 (``-0.0 + p[o]`` is ``p[o]``). ``p`` is an array or a pointer; unsigned
    indices: numba then adds no wraparound checks, and LLVM vectorizes the accumulators."""
    if n < 8:
        res = p[np.uint64(o)]
        for i in range(o + 1, o + n):
            res += p[np.uint64(i)]
        return res
    r0 = p[np.uint64(o)]
    r1 = p[np.uint64(o + 1)]
    r2 = p[np.uint64(o + 2)]
    r3 = p[np.uint64(o + 3)]
    r4 = p[np.uint64(o + 4)]
    r5 = p[np.uint64(o + 5)]
    r6 = p[np.uint64(o + 6)]
    r7 = p[np.uint64(o + 7)]
    m = o + n - n % 8
    for i in range(o + 8, m, 8):
        r0 += p[np.uint64(i)]
        r1 += p[np.uint64(i + 1)]
        r2 += p[np.uint64(i + 2)]
        r3 += p[np.uint64(i + 3)]
        r4 += p[np.uint64(i + 4)]
        r5 += p[np.uint64(i + 5)]
        r6 += p[np.uint64(i + 6)]
        r7 += p[np.uint64(i + 7)]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(m, o + n):
        res += p[np.uint64(i)]
    return res


def _pw_sum(p, o, n):
    """NumPy's pairwise_sum of ``p[o:o + n]`` (n >= 1): a leaf, or the tree (a leaf inlined here: a call
    costs a short row more than its sum)."""
    if n <= 128:
        return _jit_leaf(p, o, n)  # noqa: F821 (numba's versions: _jit())
    return _jit_tree(p, o, n)  # noqa: F821


def _pw_tree(p, o, n):
    """NumPy's pairwise_sum of ``p[o:o + n]``, recursively (numba's ``_jit_tree`` calls itself)."""
    if n <= 128:
        return _jit_leaf(p, o, n)  # noqa: F821
    h = n // 2
    h -= h % 8
    return _jit_tree(p, o, h) + _jit_tree(p, o + h, n - h)  # noqa: F821


def _pw_run(p, o, n, chunk, acc):
    """``acc`` plus NumPy's pairwise sums of ``p[o:o + n]``, one per ``chunk`` of it (NumPy's buffer when
    it casts; else n or more), added in turn."""
    for c0 in range(o, o + n, chunk):
        acc = acc + _jit_sum(p, c0, min(chunk, o + n - c0))  # noqa: F821
    return acc


def _pw_nodes(starts, merges, n, chunk, limit):
    """NumPy's pairwise trees over ``n`` elements, one tree per ``chunk`` of them (chunk >= 1), split until
    a node holds at most ``limit``: in ``starts`` the nodes' first elements left to right, then ``n``; in
    ``merges`` how many pairs of sums to add after each node's own, ``-1 - that`` where it completes a tree
    (``_pw_fold``). Returns how many nodes: at most n // (limit // 2 - 8) + n // chunk + 2 (a split node's
    halves hold more than limit / 2 - 8)."""
    stack = np.empty((130, 4), np.int64)  # per pending node: first element, size, merges after it, last of its tree
    k = 0
    for c0 in range(0, n, chunk):
        stack[0, 0] = c0
        stack[0, 1] = min(chunk, n - c0)
        stack[0, 2] = 0
        stack[0, 3] = 1
        sp = 1
        while sp:
            sp -= 1
            lo = stack[sp, 0]
            m = stack[sp, 1]
            r = stack[sp, 2]
            if m <= limit:
                starts[k] = lo
                merges[k] = -1 - r if stack[sp, 3] else r
                k += 1
            else:
                h = m // 2
                h -= h % 8
                stack[sp, 0] = lo + h  # the right half (its last node completes this one too), after
                stack[sp, 1] = m - h
                stack[sp, 2] = r + 1
                stack[sp + 1, 0] = lo  # the left half
                stack[sp + 1, 1] = h
                stack[sp + 1, 2] = 0
                stack[sp + 1, 3] = 0
                sp += 2
    starts[k] = n
    return k


def _pw_fold(vals, o, merges, n, acc):
    """``acc`` plus NumPy's pairwise trees whose nodes' sums are ``vals[o:o + n]`` (``_pw_nodes``' order
    and merges), one tree after the other. The stack of pending sums is ``vals`` itself (at most k + 1 of
    them at node k): ``vals`` is spent."""
    sp = o
    for k in range(n):
        vals[sp] = vals[o + k]
        sp += 1
        m = merges[k]
        for _ in range(m if m >= 0 else -1 - m):
            sp -= 1
            vals[sp - 1] = vals[sp - 1] + vals[sp]
        if m < 0:
            sp -= 1
            acc = acc + vals[sp]
    return acc


# what a kernel imports: C functions, by the dtype of their values (buffers as pointers: ``b.ctypes``)
PAIRWISE = ("pw_leaf", "pw_nodes") + tuple(f"pw_{f}_{t}" for f in ("sum", "run", "fold") for t in ("float32", "float64"))
PW_BLOCK = 4096  # the most elements a full reduction's block holds: one pw_sum call (32 KiB of float64)
_JIT_LOCK = threading.Lock()


def _jit(name: str) -> Any:
    """numba's C function ``name`` (compiled, or loaded from numba's cache), its symbol registered for the
    kernels that call it (they pass their buffers as pointers, ``b.ctypes``)."""
    import llvmlite.binding as llvm
    from numba import cfunc, njit, types

    g = globals()
    if "_jit_sum" not in g:  # (not cached: only a C function being compiled calls them)
        jit = njit(error_model="numpy")
        g["_jit_leaf"], g["_jit_tree"], g["_jit_sum"] = jit(_pw_leaf), jit(_pw_tree), jit(_pw_sum)
        g["_jit_run"] = jit(_pw_run)
        g["_jit_nodes"], g["_jit_fold"] = jit(_pw_nodes), jit(_pw_fold)
    if name == "pw_leaf":  # (a numba function, not a C one: the kernel inlines it)
        return njit(cache=True, error_model="numpy")(_pw_leaf)
    i64, ptr = types.int64, types.CPointer
    f = getattr(types, name.rsplit("_", 1)[1]) if name != "pw_nodes" else None
    if name == "pw_nodes":
        fn, sig = (lambda s, m, n, chunk, limit: _jit_nodes(s, m, n, chunk, limit)), i64(ptr(i64), ptr(i64), i64, i64, i64)  # noqa: F821
    elif name.startswith("pw_sum"):
        fn, sig = (lambda p, o, n: _jit_sum(p, o, n)), f(ptr(f), i64, i64)  # noqa: F821
    elif name.startswith("pw_run"):
        fn, sig = (lambda p, o, n, chunk, acc: _jit_run(p, o, n, chunk, acc)), f(ptr(f), i64, i64, i64, f)  # noqa: F821
    else:
        fn, sig = (lambda v, o, m, n, acc: _jit_fold(v, o, m, n, acc)), f(ptr(f), i64, ptr(i64), i64, f)  # noqa: F821
    fn.__name__ = fn.__qualname__ = f"_c_{name}"  # (numba's cache tells them apart by name)
    symbol = f"jupyter_fuse_{name}"
    llvm.add_symbol(symbol, cfunc(sig, cache=True)(fn).address)
    return types.ExternalFunction(symbol, sig)


def __getattr__(name: str) -> Any:
    """The pairwise helpers a kernel imports (PAIRWISE), made when one is first asked for (numba is
    imported only then)."""
    if name not in PAIRWISE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _JIT_LOCK:
        if name not in globals():
            globals()[name] = _jit(name)
        return globals()[name]


def _cast(expr: str, frm: np.dtype, to: np.dtype) -> str:
    if frm == to:
        return expr
    if to == np.bool_:
        return f"({expr} != 0)"
    if frm.kind == "c" and to.kind != "c":  # (NumPy keeps the real part, and warns that it drops the other)
        raise CannotRender(f"a cast of {frm} to {to} (NumPy warns: ComplexWarning)")
    if frm == np.bool_ and to.kind == "c":
        return f"np.{to.name}(np.float64({expr}))"
    if frm.kind == "f" and to.kind in "iu":  # float -> int as x86-64 does it (``f2i64``, ``f2i32``)
        if to == np.uint32:  # as C compilers do it on x86-64 (NumPy's result out of range)
            return f"np.uint32(f2i64({expr}))"
        if to.itemsize < 4:  # C converts to int32, then keeps the low bits:
            return f"np.{to.name}(f2i64({expr}))"  # -5.0 as uint16 is 65531 (and 40000.0 as int16 is -25536)
        if to == np.uint64:  # x86-64's double -> uint64: a signed conversion below 2**63, else
            # one offset by 2**63 (so NaN and < -2**63 give 2**63, and >= 2**64 gives 0, as NumPy's C cast)
            return (f"(np.uint64(f2i64({expr} - 9223372036854775808.0)) ^ np.uint64(9223372036854775808) "
                    f"if {expr} >= 9223372036854775808.0 else np.uint64(f2i64({expr})))")
        return f"f2i{to.itemsize * 8}({expr})"
    return f"np.{to.name}({expr})"


# float -> int64/int32 as x86-64's cvttsd2si, NumPy's C cast: NaN and values out of range give the lowest
# integer. numba's np.int64(x) is LLVM's fptosi, undefined there: `np.int64(0.0 / n)` (an int mean of an
# empty axis) folded to 0, where NumPy gives -2**63 (generator seed 761989)
CAST_HELPERS = ("f2i64", "f2i32")  # (both renderers: a kernel source naming one defines it)
for _bits in (64, 32):
    HELPERS[f"f2i{_bits}"] = f"""
@njit(cache=True)
def f2i{_bits}(x):
    if -{2.0 ** (_bits - 1)!r} <= x < {2.0 ** (_bits - 1)!r}:
        return np.int{_bits}(x)
    return np.int{_bits}({-2 ** (_bits - 1)})
"""


# NaN- and tie-aware float helpers both renderers define (see HELPERS)
MINMAX_HELPERS = {"maximum": "max_f", "minimum": "min_f", "fmax": "fmax_f", "fmin": "fmin_f"}


def exact_comparison(op: str, a: str, b: str, ins: list[np.dtype], helpers: set[str]) -> str | None:
    """``int64`` against ``uint64``: NumPy's own loop compares exactly, where numba would go through
    float64 and C through unsigned. Both renderers define ``cmp_iu`` (-1/0/1, signed first); the
    expression reads the same in Python and C. None for any other comparison."""
    if op not in SWAPPED or {d.kind for d in ins} != {"i", "u"}:
        return None
    helpers.add("cmp_iu")
    c = f"cmp_iu({a}, {b})" if ins[0].kind == "i" else f"(-cmp_iu({b}, {a}))"
    return f"({c} {_INFIX[op]} 0)"


def _result(expr: str, out: np.dtype, to: np.dtype) -> str:
    """An op's value, computed in the loop dtype ``out``, as ``to``. numba does arithmetic on small
    integers in 64 bits (int8 * int8 is an int64): wrap it to the loop dtype, as NumPy's loop does; and it
    computes ``1.0 / x`` and ``np.tanh(x)`` of a float32 in float64: round it to the loop dtype."""
    if out == to and (out.kind in "iu" and out.itemsize < 8 or out.kind in "fc" and out.itemsize < 16 and out != F64):
        return f"np.{out.name}({expr})"
    return _cast(expr, out, to)


def loop_dtypes(node: Node, arg_dtypes: list[Any]) -> tuple[list[np.dtype], np.dtype]:
    """NumPy's loop (input dtypes, output dtype) for an elementwise ufunc node."""
    info = OPS[node.op]
    dt_kw = dict(p for p in node.params if isinstance(p, tuple) and len(p) == 2).get("dtype")
    try:
        if dt_kw is not None:
            types = info.fn.resolve_dtypes(tuple(arg_dtypes) + (None,), signature=(None,) * len(arg_dtypes)
                                           + (np.dtype(dt_kw),))
        else:
            types = info.fn.resolve_dtypes(tuple(arg_dtypes) + (None,))
    except (TypeError, ValueError) as e:
        raise CannotRender(f"no loop for {node.op}{tuple(arg_dtypes)}: {e}") from None
    bad = next((d for d in types if d not in KERNEL_DTYPES), None)
    if bad is not None:
        raise CannotRender(f"NumPy computes `{node.op}` in {bad}")
    return list(types[:-1]), types[-1]


def expression(node: Node, args: list[str], ins: list[np.dtype], out: np.dtype, helpers: set[str]) -> str:
    """The op applied to operands already cast to the loop dtypes ``ins``."""
    op = node.op
    if (out.kind == "c" or any(d.kind == "c" for d in ins)) and op not in _LOGICAL:  # (those: as for any dtype)
        return _complex_expression(node, args, ins)
    kinds = "".join(d.kind for d in ins)
    flt = all(k == "f" for k in kinds)
    integer = all(k in "iub" for k in kinds)
    a = args[0] if args else ""
    b = args[1] if len(args) > 1 else ""
    exact = exact_comparison(op, a, b, ins, helpers)
    if exact is not None:
        return exact
    wrapped = _wrapping_int64(op, a, b, ins)
    if wrapped is not None:
        return wrapped
    if op in _INFIX and not (op == "divide" and not flt):
        if integer and op in ("add", "subtract", "multiply") and ins[0] == np.bool_:
            return {"add": f"({a} or {b})", "multiply": f"({a} and {b})"}.get(op) or _no(node, ins)
        return f"({a} {_INFIX[op]} {b})"
    if op in _NP_UNARY and flt:
        return f"np.{op}({a})"
    if op in _NP_BINARY and flt:
        return f"np.{op}({a}, {b})"
    if op in ("floor_divide", "remainder", "fmod") and (flt or integer):
        if op == "fmod" and flt:
            return f"np.fmod({a}, {b})"
        if ins[0] == np.bool_:
            return _no(node, ins)
        base = {"floor_divide": "floordiv", "remainder": "mod", "fmod": "fmod"}[op]
        name = f"{base}_{'f' if flt else 'u' if ins[0].kind == 'u' else 'i'}"
        if name == "fmod_f":
            return f"np.fmod({a}, {b})"
        helpers.add(name)
        return f"{name}({a}, {b})"
    if op == "power":
        if not flt:
            raise CannotRender("integer power needs a constant exponent")  # handled by the caller
        if power_fast_paths(node):  # NumPy's loop: x * x, sqrt(x), 1 / x for one exponent 2, 0.5, -1
            one = _cast("1", np.dtype(np.int64), ins[0])
            return (f"({a} * {a} if {b} == 2.0 else np.sqrt({a}) if {b} == 0.5 else {one} / {a} if {b} == -1.0 "
                    f"else {a} ** {b})")
        return f"({a} ** {b})"
    if op in MINMAX_HELPERS and flt:
        name = MINMAX_HELPERS[op]
        helpers.add(name)
        return f"{name}({a}, {b})"
    if op in ("maximum", "minimum"):
        return f"{'max' if op == 'maximum' else 'min'}({a}, {b})"
    if op in ("fmax", "fmin") and integer:
        return f"{'max' if op == 'fmax' else 'min'}({a}, {b})"
    if op == "negative" and ins[0] != np.bool_:
        return f"(-{a})"
    if op in ("positive", "conjugate"):
        return a
    if op in ("absolute", "fabs"):
        return f"abs({a})" if ins[0] != np.bool_ else a
    if op == "square":
        return f"({a} * {a})" if ins[0] != np.bool_ else f"({a} and {a})"
    if op == "reciprocal" and flt:
        return f"(1.0 / {a})"
    if op == "sign":
        helpers.add("sign_f" if flt else "sign_i")
        # (sign_i's 1, -1, 0 are int64 to numba: typed as the result, or a uint64 max beside it is a float)
        return f"sign_f({a})" if flt else f"np.{out.name}(sign_i({a}))"
    if op in ("floor", "ceil", "trunc", "rint"):
        return f"np.{op}({a})" if flt else a
    if op in ("isnan", "isinf"):
        return f"np.{op}({a})" if flt else "False"
    if op == "isfinite":
        return f"np.isfinite({a})" if flt else "True"
    if op == "signbit":
        return f"(np.copysign(1.0, {a}) < 0)" if flt else f"({a} < 0)"
    if op in ("deg2rad", "radians") and flt:
        return f"({a} * {math.pi / 180.0!r})"
    if op in ("rad2deg", "degrees") and flt:
        return f"({a} * {180.0 / math.pi!r})"
    if op == "logical_not":
        return f"({a} == 0)"
    if op in ("logical_and", "logical_or", "logical_xor"):
        sym = {"logical_and": "and", "logical_or": "or", "logical_xor": "!="}[op]
        return f"(({a} != 0) {sym} ({b} != 0))"
    if op in ("bitwise_and", "bitwise_or", "bitwise_xor") and integer:
        if ins[0] == np.bool_:
            return f"({a} {'and' if op == 'bitwise_and' else 'or' if op == 'bitwise_or' else '!='} {b})"
        return f"({a} {'&' if op == 'bitwise_and' else '|' if op == 'bitwise_or' else '^'} {b})"
    if op == "invert" and integer:
        return f"(not {a})" if ins[0] == np.bool_ else f"(~{a})"
    if op in ("left_shift", "right_shift") and integer and ins[0] != np.bool_:
        bits = ins[0].itemsize * 8
        if op == "left_shift":
            return f"(({a} << {b}) if 0 <= {b} < {bits} else {a} - {a})"
        # past the width: all sign bits; unsigned has none (and `a - 1` would make numba unify uint64 with
        # int64 as float64, rounding every shifted value)
        fill = f"({a} - {a} - 1 if {a} < 0 else {a} - {a})" if ins[0].kind == "i" else f"{a} - {a}"
        return f"(({a} >> {b}) if 0 <= {b} < {bits} else {fill})"
    if op == "heaviside" and flt:
        helpers.add("heaviside")
        return f"heaviside({a}, {b})"
    return _no(node, ins)


def _complex_expression(node: Node, args: list[str], ins: list[np.dtype]) -> str:
    """An op on complex operands that is exact in numba's complex type: the rest (a product, a quotient,
    ``abs``, ``exp``...) is computed by NumPy's own loop (``cpu_nploop.COMPLEX_LOOPS``), or not fused."""
    op, a = node.op, args[0]
    if op in ("add", "subtract", "equal", "not_equal"):
        return f"({a} {_INFIX[op]} {args[1]})"
    if op == "negative":
        return f"(-{a})"
    if op == "positive":
        return a
    if op == "conjugate":
        return f"np.conj({a})"
    if op in ("isnan", "isinf"):  # (either part)
        return f"(np.{op}({a}.real) or np.{op}({a}.imag))"
    if op == "isfinite":
        return f"(np.isfinite({a}.real) and np.isfinite({a}.imag))"
    return _no(node, ins)


_LOGICAL = frozenset({"logical_not", "logical_and", "logical_or", "logical_xor"})


_I64 = np.dtype(np.int64)
C128 = np.dtype(np.complex128)
HELPERS.update(cpu_complex.HELPERS)


def _wrapping_int64(op: str, a: str, b: str, ins: list[np.dtype]) -> str | None:
    """int64 arithmetic that wraps as NumPy's does. numba marks signed int64 add/sub/mul `nsw` (overflow is
    undefined), and LLVM then assumes what overflow breaks (``x * x`` is never negative, so its conversion to
    float goes unsigned): computed in uint64, whose operations wrap, and reinterpreted. Narrower ints are
    computed in int64 by numba, so they cannot overflow before ``_result`` wraps them."""
    if not ins or any(d != _I64 for d in ins):
        return None
    u = lambda x: f"np.uint64({x})"  # noqa: E731
    if op in ("add", "subtract", "multiply"):
        return f"np.int64({u(a)} {_INFIX[op]} {u(b)})"
    if op == "square":
        return f"np.int64({u(a)} * {u(a)})"
    if op == "negative":
        return f"np.int64(np.uint64(0) - {u(a)})"
    if op == "absolute":  # (abs of INT64_MIN is INT64_MIN)
        return f"({a} if {a} >= 0 else np.int64(np.uint64(0) - {u(a)}))"
    return None


def _no(node: Node, ins: list[np.dtype]) -> str:
    raise CannotRender(f"`{node.op}` on {'/'.join(d.name for d in ins)} has no CPU expression")


SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"))
# kernels also compute on complex values (elementwise: a reduction of them is NumPy's call, ``fuse._can_join``)
KERNEL_DTYPES = SUPPORTED_DTYPES | {np.dtype(np.complex64), np.dtype(np.complex128)}


# -- kernels ---------------------------------------------------------------------------

@dataclass
class _Ctx:
    kernel: Kernel
    params: list[tuple[Node, np.dtype]] = field(default_factory=list)
    reads: list[tuple[Node, tuple[int, ...]]] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)
    names: dict[Node, str] = field(default_factory=dict)
    counter: int = 0
    # a kernel calls NumPy's own loops for its transcendental ops (cpu_nploop): marker lines among its lines,
    # expanded once its loops are written (``cpu_nploop.place``); False renders C's functions instead
    blocked: bool = True
    calls: list = field(default_factory=list)
    dtypes: dict[str, np.dtype] = field(default_factory=dict)  # each variable's dtype

    def fresh(self, prefix: str) -> str:
        """A new local variable name (never reused: passes clear ``names`` but not this)."""
        self.counter += 1
        return f"{prefix}{self.counter}"

    def param(self, node: Node, dtype: np.dtype) -> str:
        key = (node, dtype)
        if key not in self.params:
            self.params.append(key)
        return f"p{self.params.index(key)}"

    flat: dict = field(default_factory=dict)
    dst: tuple | None = None

    def read(self, node: Node, shape: tuple[int, ...]) -> str:
        key = (node, shape)
        if key not in self.reads:
            self.reads.append(key)
        return f"in{self.reads.index(key)}"

    def read_at(self, node: Node, space: tuple[int, ...], var: Callable[[int], str]) -> str:
        """The expression reading ``node`` at the current index of ``space``."""
        arr = self.read(node, space)
        j = self.reads.index((node, space))
        lay = views.element_layout(node, space)
        if lay is None:
            return f"{arr}[{_index(space, space, var) if space else '0'}]"
        offset, strides = lay
        # strides 0 and (innermost) 1 are part of the source; other strides are arguments
        runtime = tuple(d for d, t in enumerate(strides) if t != 0 and not (t == 1 and d == len(strides) - 1))
        self.flat[j] = (offset, strides, runtime)
        terms = [f"o{j}"] + [var(d) if d not in runtime else f"{var(d)} * t{j}_{d}"
                             for d, t in enumerate(strides) if t != 0]
        # an unsigned index: numba then skips its negative-index wraparound check, which
        # otherwise keeps LLVM from vectorizing the loop (measured: a stencil 1.6x slower)
        return arr + "[np.uint64(" + " + ".join(terms) + ")]"


def render(kernel: Kernel) -> Rendered:
    """The numba module source for one fused kernel (kinds ew, reduce, scatter)."""
    ctx = _Ctx(kernel)
    body, full = _render_body(ctx)
    if ctx.calls:
        try:
            body = cpu_nploop.place(body, ctx.calls, ctx.dtypes)
        except cpu_nploop.Unplaced:  # (a loop of another shape around it: C's functions, as before)
            ctx = _Ctx(kernel, blocked=False)
            body, full = _render_body(ctx)
    full = full or any(cpu_nploop.SHARES_MARK in ln for ln in body)  # (its shares per thread: nthreads)
    nd = len(kernel.shape)
    args = [f"s{d}" for d in range(nd)] + [f"p{i}" for i in range(len(ctx.params))] \
        + [a for j in range(len(ctx.reads)) for a in _read_args(j, ctx.flat.get(j))] \
        + [f"out{i}" for i in range(len(outputs(kernel)))]
    if kernel.kind == "scatter":
        args += ["dst", "od"] + [f"td_{d}" for d in ctx.dst[2]]
    if full:
        args.append("nthreads")
    sig = ", ".join(args)
    fn_body = "\n".join("    " + ln for ln in body)
    ctx.helpers.update(h for h in CAST_HELPERS if h + "(" in fn_body)  # (casts: ``_cast`` has no context)
    helpers = "".join(HELPERS[h] for h in sorted(ctx.helpers) if h not in PAIRWISE)
    shared = [h for h in PAIRWISE if h in ctx.helpers]  # (NumPy's pairwise summation)
    loops = [f"np_loop{n}" for n in (1, 2) if f"np_loop{n}(" in fn_body]
    source = (
        "import numpy as np\nfrom numba import njit, prange\n"
        + (f"from {cpu_complex.__name__} import fma\n" if "fma(" in helpers + fn_body else "")
        + (f"from {__name__} import {', '.join(shared)}\n" if shared else "")
        + (f"from {cpu_nploop.__name__} import {', '.join(loops)}\n" if loops else "") + helpers
        # two functions, not two dispatchers of one: numba's disk cache keys by function name
        + f"\n\ndef _kernel_par({sig}):\n{fn_body}\n"
        + f"\n\ndef _kernel_seq({sig}):\n{fn_body}\n"
        + "\nkernel_par = njit(parallel=True, error_model='numpy', cache=True)(_kernel_par)\n"
        + "kernel_seq = njit(error_model='numpy', cache=True)(_kernel_seq)\n"
    )
    return Rendered(source, ctx.params, ctx.reads, outputs(kernel), full,
                    [ctx.flat.get(j) for j in range(len(ctx.reads))], ctx.dst)


def _render_body(ctx: _Ctx) -> tuple[list[str], bool]:
    if ctx.kernel.kind == "reduce":
        return _render_reduce(ctx)
    return _render_elementwise(ctx), False


def structure(kernel: Kernel) -> tuple[tuple | None, list[Node]]:
    """What ``render`` reads of a kernel, by structure, not identity: (a key, or None when a parameter
    is unhashable; the nodes it numbers: the kernel's own, then those it reads). Two kernels with one
    key render to one source; ``rebind`` moves the first one's ``Rendered`` onto the second's nodes.
    A loop whose chunks plan apart (``traj[i] = state`` writes another row each chunk) thus renders
    each distinct kernel once, not each kernel of each chunk. Constants are keyed by ``ops.const_key`` (an
    integer power's exponent is part of the source; a float is an argument); a read by its dtype, shape,
    strides and its storage's: not
    by its offset, an argument of the source (``o0``) that ``rebind`` works out for the new read
    (``cm[t, p] += 1`` over data reads another element each step: one source, rendered once)."""
    own = {n: i for i, n in enumerate(kernel.nodes)}
    order = list(kernel.nodes)
    ext: list[tuple] = []

    def ref(a: Node) -> int:
        i = own.get(a)
        if i is None:
            i = own[a] = len(order)
            order.append(a)
            if a.op == "const":
                ext.append(("const", const_key(a)))
            else:  # (an input's slot, a view's index: told by where it lies, not kept in the source)
                s, lay = a.storage(), a.layout
                place = None if lay is None else (lay[0] % a.dtype.itemsize, lay[1])  # (aligned or not, strides)
                ext.append(("read", a.dtype, a.shape, place, own[s] if s in own else (s.dtype, s.shape, s.layout)))
        return i

    nodes = tuple((n.op, source_params(n), n.dtype, n.shape, n.layout, tuple([ref(a) for a in n.args]),
                   kernel.phase.get(n), kernel.stage.get(n)) for n in kernel.nodes)
    key = (kernel.kind, kernel.shape, kernel.axes, nodes, tuple([own[o] for o in kernel.outputs]), tuple(ext))
    try:
        hash(key)
    except TypeError:
        return None, order
    return key, order


def rebind(r: Rendered, old: list[Node], new: list[Node]) -> Rendered:
    """``r``, rendered for the kernel whose ``structure`` numbered ``old``, for the one numbering ``new``."""
    if old == new:
        return r
    to = dict(zip(old, new))

    def move(n: Node) -> Node:
        got = to.get(n)
        if got is not None:
            return got
        return _param(move(n.args[0]), n.params[0]) if n.op == "param" else n

    dst = r.dst
    if dst is not None:  # (one assignment a kernel: its region's offset is this kernel's)
        dst = region(next(n for n in new if n.op == "setitem"))
    reads = [(move(n), shape) for n, shape in r.reads]
    # (the same structure: the same strides and storage; only where each read starts moves, and a read's
    # offset in its storage is its layout's: asked of thousands of kernels, no ghost array is made for it)
    flat = [f if f is None else (0 if n.layout is None else n.layout[0] // n.dtype.itemsize, f[1], f[2])
            for (n, _), f in zip(reads, r.flat)]
    return replace(r, params=[(move(n), d) for n, d in r.params], reads=reads, outputs=[move(n) for n in r.outputs],
                   dst=dst, flat=flat)


def _read_args(j: int, flat: tuple | None) -> list[str]:
    return [f"in{j}"] + ([f"o{j}"] + [f"t{j}_{d}" for d in flat[2]] if flat is not None else [])


def outputs(kernel: Kernel) -> list[Node]:
    """The arrays a kernel writes (an assignment writes through ``dst`` instead)."""
    return [o for o in kernel.outputs if o.op != "setitem"]


def _index(shape: tuple[int, ...], space: tuple[int, ...], var: Callable[[int], str]) -> str:
    """Index into an array of ``shape`` broadcast against the loop ``space``."""
    if not shape:
        return "0"
    return ", ".join(var(d) for d in range(len(space) - len(shape), len(space)))


def _node_expr(ctx: _Ctx, node: Node, space: tuple[int, ...], var: Callable[[int], str], lines: list[str]) -> None:
    """Emit ``vN = ...`` for one elementwise/creation node evaluated over ``space``."""
    k = ctx.kernel
    name = ctx.names[node] = ctx.fresh("v")
    ctx.dtypes[name] = node.dtype
    op = node.op
    if op in ("zeros", "ones", "full", "arange", "linspace", "eye"):
        lines.append(f"{name} = {_creation(ctx, node, var)}")
        return
    if op == "roll":  # (its argument, in memory, read where the element comes from)
        lines.append(f"{name} = {ctx.read_at(node.args[0], space, _rolled(ctx, node, space, var, lines))}")
        return
    operands: list[str] = []
    dtypes: list[Any] = []
    for a in node.args:
        if a.op == "const":
            operands.append("")
            dtypes.append(a.dtype if a.dtype is not None else type(a.params[1]))
        else:
            operands.append(_operand(ctx, a, space, var, lines))
            dtypes.append(a.dtype)
    if op in ("astype", "copy"):
        lines.append(f"{name} = {_cast(operands[0], node.args[0].dtype, node.dtype)}")
        return
    if op == "where":
        c, x, y = (_arg(ctx, node, i, operands[i], np.bool_ if i == 0 else node.dtype) for i in range(3))
        lines.append(f"{name} = ({x} if {c} else {y})")
        return
    if op == "clip":
        if node.dtype.kind == "c":
            raise CannotRender("clip of complex values")
        x, lo, hi = (_arg(ctx, node, i, operands[i], node.dtype) for i in range(3))
        if node.dtype.kind == "f":
            ctx.helpers.add("clip_f")
            lines.append(f"{name} = clip_f({x}, {lo}, {hi})")
        else:
            lines.append(f"{name} = min(max({x}, {lo}), {hi})")
        return
    ins, out = loop_dtypes(node, dtypes)
    if op == "power" and not all(d.kind in "fc" for d in ins):
        exp = node.args[1]
        if exp.op != "const" or not isinstance(exp.params[1], (int, np.integer)) or int(exp.params[1]) < 0:
            raise CannotRender("integer power with a non-constant or negative exponent")
        ctx.helpers.add("ipow")
        base = _arg(ctx, node, 0, operands[0], ins[0])
        lines.append(f"{name} = {_result(f'np.{ins[0].name}(ipow({base}, {int(exp.params[1])}))', ins[0], node.dtype)}")
        return
    fixed = fixed_comparison(op, node.args, ins)
    if fixed is not None:
        lines.append(f"{name} = {fixed}")
        return
    cast_args = [_arg(ctx, node, i, operands[i], ins[i]) for i in range(len(node.args))]
    if op in cpu_complex.OPS and ins[0] == C128 and all(d == C128 for d in ins) and cpu_complex.inline(op):
        # NumPy's formula (cpu_complex): a product written out on its operands' names, a magnitude called
        if cpu_complex.OPS[op] == "cmul":
            a, b = (_named(ctx, x, C128, lines) for x in (cast_args[0], cast_args[-1]))
            call = cpu_complex.PRODUCT.format(a=a, b=b)
        else:
            ctx.helpers.add("cabs")
            call = f"cabs({cast_args[0]})"
        lines.append(f"{name} = {_result(call, out, node.dtype)}")
        return
    if ctx.blocked and cpu_nploop.routed(op, ins, out, node.dtype) and SCALAR_MATH not in node.params:  # (C's pow)
        strides = cpu_nploop.loop_strides(node, ins[0], out)
        if cpu_nploop.available(op, ins[0], strides, out):
            lines.append(_call(ctx, node, name, cast_args, ins[0], strides, lines, out))
            return
    expr = expression(node, cast_args, ins, out, ctx.helpers)
    lines.append(f"{name} = {_result(expr, out, node.dtype)}")


def _named(ctx: _Ctx, expr: str, dtype: np.dtype, lines: list[str]) -> str:
    """``expr`` (of ``dtype``) as a name: itself where it is one, else a local assigned it (a formula that
    reads an operand several times computes it once)."""
    if expr.isidentifier():
        return expr
    name = ctx.fresh("v")  # (a value like the nodes': cpu_nploop.place may block the loop it is in)
    ctx.dtypes[name] = dtype
    lines.append(f"{name} = {expr}")
    return name


def _rolled(ctx: _Ctx, node: Node, space: tuple[int, ...], var: Callable[[int], str],
            lines: list[str]) -> Callable[[int], str]:
    """``var`` where ``np.roll`` (``node``) takes its element from: index ``i`` of a rolled axis of
    length ``n`` by ``k`` (1 <= k < n) reads ``i - k``, or ``i - k + n`` where that is below 0."""
    lead = len(space) - node.ndim
    moved = {}
    for ax, k in roll_moves(node).items():
        # (a value like the nodes': a loop that also calls NumPy's own loop for an op (cpu_nploop) runs in
        # blocks, and the blocks keep it as they keep the values; a complex quotient has no other expression)
        i, w = var(lead + ax), ctx.fresh("v")
        ctx.dtypes[w] = np.dtype(np.intp)
        lines.append(f"{w} = ({i}) - {k} if ({i}) >= {k} else ({i}) + {node.shape[ax] - k}")
        moved[lead + ax] = w
    return lambda d: moved.get(d, var(d))


def _arg(ctx: _Ctx, node: Node, i: int, operand: str, dtype: np.dtype) -> str:
    """Operand ``i`` of ``node`` in ``dtype`` (constants become typed scalar arguments)."""
    a = node.args[i]
    if a.op == "const":
        return ctx.param(a, np.dtype(dtype))
    return _cast(operand, a.dtype, np.dtype(dtype))


def _operand(ctx: _Ctx, a: Node, space: tuple[int, ...], var: Callable[[int], str], lines: list[str]) -> str:
    """A variable holding argument ``a`` at the current index."""
    if a in ctx.names:
        return ctx.names[a]
    expr = ctx.read_at(a, space, var)
    name = ctx.names[a] = ctx.fresh("v")
    ctx.dtypes[name] = a.dtype
    lines.append(f"{name} = {expr}")
    return name


def _creation(ctx: _Ctx, node: Node, var: Callable[[int], str]) -> str:
    op, p, dt = node.op, node.params, node.dtype
    if op in ("zeros", "ones"):
        return _cast("0" if op == "zeros" else "1", np.dtype(np.int64), dt)
    if op == "full":
        return ctx.param(node, dt)
    if op == "eye":
        k = int(p[2])
        return _cast(f"(1 if {var(1)} - {var(0)} == {k} else 0)", np.dtype(np.int64), dt)
    if op == "arange":
        # NumPy fills b[0] = start, b[1] = start + step, then b[i] = b[0] + i * (b[1] - b[0])
        if dt.kind not in "iuf":
            raise CannotRender(f"arange of {dt}")
        i = var(0)
        b0, b1, delta = (ctx.param(_param(node, j), dt) for j in range(3))
        if dt.kind == "f":
            return f"({b0} if {i} == 0 else ({b1} if {i} == 1 else {b0} + np.{dt.name}({i}) * {delta}))"
        return _cast(f"({b0} + {i} * {delta})", np.dtype(np.int64), dt)
    if op == "linspace":
        start, stop, num, endpoint = p[0], p[1], p[2], p[3]
        if not all(isinstance(v, (int, float)) for v in (start, stop)) or dt.kind not in "iuf":
            raise CannotRender("linspace with NumPy-scalar endpoints")  # NumPy then computes in their dtype
        i = var(0)
        step_p, start_p, stop_p, div_p, delta_p = (ctx.param(_param(node, j), np.dtype(np.float64))
                                                   for j in range(5))
        div = (num - 1) if endpoint else num
        step = (float(stop) - float(start)) / div if div > 0 else math.nan
        if div > 0 and step != 0:  # NumPy: y = arange(num) * step + start
            core = f"np.float64({i}) * {step_p} + {start_p}"
        elif div > 0:
            core = f"(np.float64({i}) / {div_p}) * {delta_p} + {start_p}"
        else:
            core = f"np.float64({i}) * {delta_p} + {start_p}"
        if endpoint and num > 1:
            core = f"({stop_p} if {i} == {num - 1} else {core})"
        if dt.kind in "iu":
            core = f"np.floor({core})"
        return _cast(core, np.dtype(np.float64), dt)
    raise CannotRender(f"creation op {op}")


def _param(node: Node, j: int) -> Node:
    """A derived scalar argument of a creation node (arange's b0/b1/delta, linspace's step...)."""
    return Node.make("param", (node,), (j,), None, ())


def param_value(node: Node, dtype: np.dtype, values: dict | None = None) -> Any:
    """The runtime value of a scalar argument; a constant's from ``values`` where given (a plan serves
    every graph of its structure, whatever the value of a float constant: ``ops.const_key``)."""
    if node.op == "const":
        v = node.params[1] if values is None else values.get(node, node.params[1])
        # a C cast, as NumPy casts a Python int that does not fit (np.where(c, u8, -1) gives 255)
        with np.errstate(all="ignore"):
            return np.asarray(v).astype(dtype)[()]
    if node.op == "full":
        return dtype.type(node.params[1])
    if node.op == "nploop":
        return np.intp(cpu_nploop.loop_value(node))
    src, j = node.args[0], node.params[0]
    p = src.params
    if src.op == "arange":
        t = np.dtype(p[3]).type
        b0, b1 = t(p[0]), t(p[0] + p[2])
        return (b0, b1, t(b1 - b0))[j]
    if src.op == "linspace":
        start, stop, num, endpoint = float(p[0]), float(p[1]), p[2], p[3]
        div = (num - 1) if endpoint else num
        delta = stop - start
        step = delta / div if div > 0 else math.nan
        return np.float64((step, start, stop, float(max(div, 1)), delta)[j])
    raise ValueError(f"no parameter rule for {src.op}")


def _render_elementwise(ctx: _Ctx) -> list[str]:
    k = ctx.kernel
    space = k.shape
    nd = len(space)
    lines: list[str] = []
    var = (lambda d: f"i{d}") if nd else (lambda d: "0")
    inner: list[str] = []
    for node in k.nodes:
        if node.op == "setitem":
            val = node.args[1]
            if val.op == "const":
                expr = ctx.param(val, node.dtype)
            else:
                expr = _cast(_operand(ctx, val, space, var, inner), val.dtype, node.dtype)
            inner.append(f"dst[{_dst_index(ctx, node, var)}] = {expr}")
        else:
            _node_expr(ctx, node, space, var, inner)
    for j, out in enumerate(outputs(k)):
        inner.append(f"out{j}[{_index(space, space, var) if nd else '0'}] = {ctx.names[out]}")
    return _loops(nd, inner, lines)


def _call(ctx: _Ctx, node: Node, name: str, args: list[str], dtype: np.dtype, strides: tuple[int, ...],
          lines: list[str], result: np.dtype) -> str:
    """``name = node`` by NumPy's own loop (cpu_nploop): a marker line ``cpu_nploop.place`` expands, once the
    kernel's loops are written, into a call on blocks of elements. Operands are variables (a cast is computed
    into one first) or scalar arguments (``p3``)."""
    names = []
    for arg in args:
        if not re.fullmatch(r"[pv]\d+", arg):
            v = ctx.fresh("v")
            ctx.dtypes[v] = dtype
            lines.append(f"{v} = {arg}")
            arg = v
        names.append(arg)
    loop = [ctx.param(cpu_nploop.loop_node(node.op, dtype, strides, j, result), np.dtype(np.intp)) for j in range(3)]
    ctx.calls.append(cpu_nploop.Call(name, node.op, names, strides[:-1], dtype, loop, result))
    return cpu_nploop.marker(len(ctx.calls) - 1)


def _dst_index(ctx: _Ctx, node: Node, var: Callable[[int], str]) -> str:
    """Where an assignment writes: the destination's storage as one flat array in its memory order
    (C, or the Fortran order a write into a Fortran-ordered input keeps: the assignment's layout; the
    launcher copies it so, or writes into such a result in place), at the region's offset and strides;
    strides other than 0 and an innermost 1 are arguments, as for reads."""
    ctx.dst = region(node)
    strides, runtime = ctx.dst[1], ctx.dst[2]
    terms = ["od"] + [var(d) if d not in runtime else f"{var(d)} * td_{d}" for d, t in enumerate(strides) if t != 0]
    return "np.uint64(" + " + ".join(terms) + ")"


def region(node: Node) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """An assignment's region in its destination's flat storage: (offset, strides, dims whose stride
    is an argument), in elements."""
    storage = node.args[0]
    _, (offset, strides) = views.geometry(storage.dtype, storage.shape, node.layout, node.params[0])
    item = storage.dtype.itemsize
    strides = tuple(st // item for st in strides)
    runtime = tuple(d for d, t in enumerate(strides) if t != 0 and not (t == 1 and d == len(strides) - 1))
    return offset // item, strides, runtime


def source_params(node: Node) -> tuple:
    """The parameters of ``node`` its kernel's source depends on: an assignment's region by its
    strides, not its offset (an argument, ``od``: ``traj[i] = state`` is one source for every ``i``)."""
    return ("region", node.params[1], region(node)[1]) if node.op == "setitem" else node.params


def _loops(nd: int, inner: list[str], lines: list[str]) -> list[str]:
    if nd == 0:
        return lines + inner
    for d in range(nd):
        rng = "prange" if d == 0 else "range"
        lines.append("    " * d + f"for i{d} in {rng}(s{d}):")
    return lines + ["    " * nd + ln for ln in inner]


# -- reductions ------------------------------------------------------------------------

F64, I64, F32 = np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.float32)


def _work_dtype(node: Node) -> np.dtype:
    """The dtype NumPy computes mean/var/std in: the float result dtype (float64 for ints)."""
    return node.dtype if node.dtype.kind == "f" else F64


def deviation_dtype(node: Node) -> np.dtype:
    """The dtype of a variance's deviations and squares: NumPy's ``arr - arrmean``, the input's dtype
    with the mean's (the work dtype): float64 for ``np.var(float64, dtype=np.float32)`` (the mean is
    rounded to float32, the deviation is not), before the squares are summed in the work dtype."""
    return np.result_type(node.args[0].dtype, _work_dtype(node))


def _mean_expr(r: Node, acc: str, axes: tuple[int, ...]) -> str:
    w = _work_dtype(r)
    n = "*".join(f"s{d}" for d in axes) or "1"
    return _cast(f"({_cast(acc + '_m', F64, w)} / {_cast(n, I64, w)})", w, w)


def _acc_dtype(node: Node) -> np.dtype:
    if node.op == "mean" and node.dtype.kind in "iu":  # mean(dtype=int): NumPy sums in that dtype, then divides
        return node.dtype
    if node.op in ("mean", "var", "std"):
        return np.dtype(np.float64)
    if node.op == "sum" and node.dtype.kind == "f":
        return np.dtype(np.float64)
    if node.op == "prod" and node.dtype.kind == "f":
        return float_product_dtype(node.dtype)
    if node.op in ("argmax", "argmin"):
        return node.args[0].dtype
    return node.dtype


def float_product_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy multiplies a float product one by one in its own float type (a float16 in float32): a float32
    product overflows to inf (and inf * 0 is nan) where a float64 accumulator would not."""
    return dtype if dtype.itemsize >= 4 else np.dtype(np.float32)


def _init(node: Node, acc: np.dtype) -> str:
    op = node.op
    if op in ("sum", "mean", "var", "std"):
        return _cast("0", np.dtype(np.int64), acc)
    if op == "prod":
        return _cast("1", np.dtype(np.int64), acc)
    if op == "any":
        return "False"
    if op == "all":
        return "True"
    big = op in ("min", "argmin")
    if acc.kind == "f":
        return f"np.{acc.name}({'np.inf' if big else '-np.inf'})"
    if acc.kind == "b":
        return "True" if big else "False"
    info = np.iinfo(acc)
    return f"np.{acc.name}({info.max if big else info.min})"


def _combine(node: Node, acc: str, v: str, idx: str, src: np.dtype) -> list[str]:
    """Statements folding value ``v`` (at flat position ``idx``) into ``acc``."""
    op = node.op
    if op in ("sum", "mean"):
        return [f"{acc} += {v}"]
    if op == "prod":
        return [f"{acc} *= {v}"]
    if op == "any":
        return [f"{acc} = {acc} or ({v} != 0)"]
    if op == "all":
        return [f"{acc} = {acc} and ({v} != 0)"]
    nan = src.kind == "f"
    cmp = ">" if op in ("max", "argmax") else "<"
    if op in ("max", "min"):  # NaN propagates: a NaN acc is never replaced (NaN compares False)
        # NumPy's maximum.reduce is maximum(acc, v), which gives v on a tie: the last of -0.0 and 0.0 wins
        cond = f"{v} {cmp}= {acc} or {v} != {v}" if nan else f"{v} {cmp} {acc}"
        return [f"{acc} = {v} if {cond} else {acc}"]  # a select: the loop stays branch-free
    # argmax/argmin: the first extreme; the first NaN wins
    cond = f"{v} {cmp} {acc}" + (f" or ({v} != {v} and {acc} == {acc})" if nan else "")
    return [f"if {cond}:", f"    {acc} = {v}", f"    {acc}_i = {idx}"]


def _pw_dtype(node: Node) -> np.dtype:
    """The dtype NumPy's add.reduce runs in for a float sum, mean, var or std: the result's (a mean's,
    var's, std's work dtype)."""
    return node.dtype if node.op == "sum" else _work_dtype(node)


def _pw_div(acc: str, n: str, w: np.dtype) -> str:
    """NumPy's ``sum / count`` for a mean or variance: its count is an intp, so a float32 sum is divided
    in float64 and rounded (``true_divide(..., casting='unsafe')``, or ``float32(s / intp)``)."""
    if w == F64:
        return f"({acc} / np.float64({n}))"
    return _cast(f"(np.float64({acc}) / np.float64({n}))", F64, w)


def _pairwise_plan(k: Kernel, reds: list[Node]) -> dict[Node, int]:
    """The reductions rendered in NumPy's summation order, each with the length of its trees (0: one tree
    per run; NumPy's buffer size where NumPy casts the operand through its buffer).

    NumPy's add.reduce (checked bit for bit against NumPy 2.4 by tests/backends/test_pairwise.py) starts
    each output at 0 and adds ``pairwise_sum`` of each inner-loop run to it. Its iterator removes size-1
    axes and coalesces contiguous ones, so for an operand laid out in C order (NumPy reduces in memory order;
    the tracer already presents a transposed or Fortran-ordered operand, and an op's result, in that order)
    a run is the trailing reduced axes (all of them for a full reduction) and each index of the reduced axes
    before them adds one run, one after the other (``sum(axis=0)`` is a sequential sum). A cast (an int mean,
    a float32 sum in float64) goes through a buffer: one tree per 8192 elements of a run, added in turn.
    Left in today's order (float64 accumulators, threads splitting the first axis): an operand NumPy
    iterates otherwise, as for a strided view reduced over more than one run (its buffered iterator groups
    rows by sizes of its own), a reduction in a kernel whose stage already has one in another chunking,
    and every other reduction (prod, max, ...: exact in any order, or NumPy's is sequential)."""
    space, axes = k.shape, tuple(sorted(k.axes))
    if not axes:
        return {}
    nd = len(space)
    big = [d for d in range(nd) if space[d] != 1]
    run = [d for d in axes if all(e in axes or space[e] == 1 for e in range(d + 1, nd))]
    run_big = [d for d in run if space[d] != 1]
    seq_big = [d for d in axes if d not in run and space[d] != 1]
    if len(axes) == nd and not run_big:  # (a full reduction of one element)
        return {}
    plan: dict[Node, int] = {}
    for r in reds:
        if r.op not in ("sum", "mean", "var", "std") or r.dtype not in (F32, F64):
            continue
        w = _pw_dtype(r)
        x = r.args[0]
        if len(big) > 1 and not views.c_contiguous(space, views.ghost(x.dtype, x.shape, x.layout).strides,
                                                   x.dtype.itemsize):
            # a strided view: NumPy's order is ours in C order, row by row or element by element
            strides = [abs(s) for d, s in enumerate(views.ghost(x.dtype, x.shape, x.layout).strides) if d in big]
            if any(a <= b for a, b in zip(strides, strides[1:])) or (seq_big and run_big) or len(run_big) > 1:
                continue
        plan[r] = 0 if x.dtype == w else np.getbufsize()
    first: dict[int, int] = {}  # one leaf structure per pass over a stage
    for r in list(plan):
        if first.setdefault(k.stage.get(r, 0), plan[r]) != plan[r]:
            del plan[r]
    return plan


# -- column reductions: rows streamed into accumulator arrays ------------------------------------------
# A reduction over axes that are not the input's innermost ones (``x.sum(axis=0)`` of a C-ordered matrix),
# looped per output element, strides through memory: each cache line is fetched once per output element it
# holds, and nothing vectorizes. Such a kernel loops the other way round: the reduced axes outside, the
# contiguous kept axes ("streamed") inside, one accumulator per output element in an array over them, then
# a loop over that array for the finals and the epilogue. Each output element still adds its values in the
# order of the reduced axes, which is NumPy's order for these reductions: its iterator adds the reduced rows
# one by one into the result row (a float32 column sum is NumPy's to the bit).

COLUMNS_MARK = "# columns: the reduced axes outside, the kept axes streamed inside into accumulator arrays"
COLUMN_CHUNK = 64  # the fewest streamed elements a thread takes: rows long enough for SIMD and prefetching
# the fewest elements the streamed axes must hold: below, a loop per row of a few elements costs more than
# the row path's strided reads (measured on 2 cores, a sum and a max of 1e6-3e6 rows: 2 columns 2.7x and
# 3 columns 1.2x slower than the row path, 4 about even, 8 1.7-3x faster)
COLUMNS_MIN = 8


def _dominant_strides(k: Kernel) -> tuple[int, ...] | None:
    """The byte strides, over the kernel's iteration space, of the array its reduced pass reads most bytes
    of (broadcast axes: stride 0); None when it reads no array."""
    space, inside = k.shape, set(k.nodes)
    best, weight = None, 0
    for n in k.nodes:
        if k.phase.get(n) not in ("pro", "red"):
            continue
        for a in n.args:
            if a.op == "const" or a in inside or a.dtype is None:
                continue
            try:
                g = np.broadcast_to(views.ghost(a.dtype, a.shape, a.layout), space)
            except ValueError:
                continue
            w = a.dtype.itemsize * math.prod(space[d] for d, st in enumerate(g.strides) if st)
            if w > weight:
                best, weight = g.strides, w
    return best


def _streamed_axes(k: Kernel, pairwise_rows: bool) -> list[int]:
    """The kept axes a reduce kernel loops over inside its reduced ones (the column path), or [] (the row
    path: each output element's reduced elements in an inner loop). Streamed are the kept axes (of more than
    one element) whose stride, in the array the kernel reads most of, is smaller than every reduced axis's;
    in C order (no strides to go by) those after the last reduced axis; together at least COLUMNS_MIN
    elements. Not for a full reduction, nor where a pairwise sum runs along the innermost reduced axes
    (``pairwise_rows``: NumPy's order is a tree there)."""
    space, axes = k.shape, set(k.axes)
    big = [d for d in range(len(space)) if space[d] != 1]
    red = [d for d in big if d in axes]
    kept = [d for d in big if d not in axes]
    if pairwise_rows or not red or not kept or len(axes) == len(space):
        return []
    strides = _dominant_strides(k)
    moving = [abs(strides[d]) for d in red if strides[d]] if strides is not None else []
    if not moving:
        streamed = [d for d in kept if d > red[-1]]
    else:
        least = min(moving)
        streamed = [d for d in kept if (abs(strides[d]) < least if strides[d] else d > red[-1])]
    return streamed if math.prod(space[d] for d in streamed) >= COLUMNS_MIN else []


def _recomputed(k: Kernel, st: int) -> set[Node]:
    """The prologue values of earlier stages that stage ``st``'s pass reads, so computes again: the column
    path keeps no per-element buffer between stages (per chunk of rows it would be the whole input)."""
    pro = {n for n in k.nodes if k.phase[n] == "pro"}
    todo = [n for n in k.nodes if k.stage.get(n, 0) == st and k.phase[n] in ("pro", "red")]
    need: set[Node] = set()
    while todo:
        for a in todo.pop().args:
            if a in pro and k.stage.get(a, 0) < st and a not in need:
                need.add(a)
                todo.append(a)
    return need


def _column_state(r: Node, pass_no: int, pairwise: bool) -> list[tuple[str, np.dtype]]:
    """The variables (suffixes of the accumulator's name, dtypes) a reduction updates in one pass over the
    reduced axes: the column path keeps each in an array over the streamed axes. The dtypes are those of
    the row path's scalars (``inits``), so that each step computes in the same types."""
    if r.op in ("var", "std"):
        return [("_m" if pass_no == 0 else "", _pw_dtype(r) if pairwise else F64)]
    if pass_no:
        return []
    return [("", _pw_dtype(r) if pairwise else _acc_dtype(r))] + ([("_i", I64)] if r.op in ("argmax", "argmin") else [])


def np_type(dt: np.dtype) -> str:
    """The NumPy type of ``dt`` as generated numba source spells it (``np.bool_``, the name every NumPy has)."""
    return "np.bool_" if dt == np.bool_ else f"np.{dt.name}"


def _unsigned(index: str) -> str:
    """An output's index (``_index``, ``_out_index``: loop variables and 0s) as unsigned integers: numba
    then adds no negative-index wraparound, which keeps LLVM from vectorizing a row's writes (measured: the
    last pass of a column layer norm 1.9x slower with signed indices)."""
    return ", ".join(f"np.uint64({v})" for v in index.split(", "))


def _render_reduce(ctx: _Ctx) -> tuple[list[str], bool]:
    k = ctx.kernel
    for r in k.nodes:  # var(dtype=int): NumPy's mean, deviations and squares wrap in that integer dtype
        if r.op in ("var", "std") and r.dtype.kind != "f":
            raise CannotRender(f"{r.op} in {r.dtype}: NumPy's integer arithmetic")
        if any(d.kind == "c" for d in [r.dtype] + [a.dtype for a in r.args if a.dtype is not None]):
            raise CannotRender(f"`{r.op}` on complex values in a reduction's kernel")
    space, axes = k.shape, k.axes
    nd = len(space)
    outer = [d for d in range(nd) if d not in axes]
    full = not outer and bool(axes)  # a 0-d reduction (axis=() or a 0-d input) has neither
    stage = k.stage
    reds = [n for n in k.nodes if k.phase[n] == "red"]
    pro = [n for n in k.nodes if k.phase[n] == "pro"]
    epi = [n for n in k.nodes if k.phase[n] == "epi"]
    stages = sorted({stage.get(n, 0) for n in k.nodes})
    var = lambda d: f"i{d}"  # noqa: E731
    # NumPy's pairwise order (_pairwise_plan): a run is the trailing reduced axes, its values summed as
    # NumPy's tree of them (a full reduction: the tree's subtrees of PW_BLOCK elements in parallel)
    pw = _pairwise_plan(k, reds)
    run = [d for d in sorted(axes) if all(e in axes or space[e] == 1 for e in range(d + 1, nd))]
    run_big = [d for d in run if space[d] != 1]
    streamed = [] if full else _streamed_axes(k, bool(pw) and bool(run_big))  # (the column path, see COLUMNS_MARK)
    # per-element values a later stage reads again: kept in a row-sized scratch buffer (the column path
    # computes them again instead: _recomputed)
    scratch = {} if streamed else {n: f"sc{j}" for j, n in enumerate(
        n for n in pro if any(a.storage() is n and stage.get(m, 0) > stage.get(n, 0) for m in k.nodes for a in m.args))}
    again = {st: _recomputed(k, st) for st in stages} if streamed else {}
    ri = " + ".join(f"i{d}" + "".join(f" * s{e}" for e in axes[j + 1:]) for j, d in enumerate(axes)) or "0"

    def flat_index(r: Node) -> str:
        axis = dict(r.params)["axis"]
        if r.op not in ("argmax", "argmin"):
            return "0"  # only argmax/argmin need the position
        if axis is not None:
            return var(axis) if 0 <= axis < nd else "0"
        terms, stride = [], 1
        for d in reversed(range(nd)):
            terms.append(f"{var(d)} * {stride}" if stride != 1 else var(d))
            stride *= max(space[d], 1)
        return " + ".join(reversed(terms)) if terms else "0"

    def prologue(lines: list[str], write_outputs: bool, st: int) -> None:
        # each pass computes its per-element values afresh; per-result values stay
        ctx.names = {n: v for n, v in ctx.names.items() if k.phase.get(n) in ("red", "epi")}
        for n, buf in scratch.items():
            if stage.get(n, 0) < st:
                ctx.names[n] = ctx.fresh(f"{buf}_")
                lines.append(f"{ctx.names[n]} = {buf}[{ri}]")
        for n in pro:
            if stage.get(n, 0) == st or n in again.get(st, ()):
                _node_expr(ctx, n, space, var, lines)
                if write_outputs and n in scratch:
                    lines.append(f"{scratch[n]}[{ri}] = {ctx.names[n]}")
        if write_outputs:
            at = _index(space, space, var)
            for j, out in enumerate(outputs(k)):
                if out in pro and stage.get(out, 0) == st:  # (the column path's rows: unsigned, to vectorize)
                    lines.append(f"out{j}[{_unsigned(at) if streamed else at}] = {ctx.names[out]}")

    def operand(r: Node, lines: list[str]) -> str:
        return _operand(ctx, r.args[0], space, var, lines)

    def target(r: Node, pass_no: int) -> str:
        """A pairwise reduction's accumulator in this pass (a variance's first pass sums for its mean)."""
        return acc_names[r] + ("_m" if r.op in ("var", "std") and pass_no == 0 else "")

    def accumulate(pass_no: int, lines: list[str], st: int, pos: str | None = None) -> None:
        """One pass over the reduced axes: the stage's prologue, folded into its reductions. A pairwise
        reduction stores its value at ``pos`` of its leaf's buffer, or (no run to sum pairwise: element by
        element, as NumPy adds them) adds it in its own dtype."""
        prologue(lines, write_outputs=pass_no == 0, st=st)
        for r in reds:
            if stage.get(r, 0) != st:
                continue
            v = operand(r, lines)
            acc = acc_names[r]
            src_dt = r.args[0].dtype
            if r in pw:
                w = _pw_dtype(r)
                if pass_no == 0:
                    val = _cast(v, src_dt, w)
                elif r.op in ("var", "std"):  # NumPy: square(x - mean), summed in the work dtype
                    d = deviation_dtype(r)
                    lines.append(f"{acc}_d = {_cast(v, src_dt, d)} - {_cast(acc + '_mean', w, d)}")
                    val = _cast(_result(f"{acc}_d * {acc}_d", d, d), d, w)
                else:
                    continue
                lines.append(f"{target(r, pass_no)} += {val}" if pos is None else f"{acc}_b[{pos}] = {val}")
                continue
            if r.op in ("var", "std"):
                if pass_no == 0:
                    lines.append(f"{acc}_m += np.float64({v})")
                else:
                    w, d = _work_dtype(r), deviation_dtype(r)  # (NumPy's dtypes: a float32 square overflows)
                    lines.append(f"{acc}_d = {_cast(v, r.args[0].dtype, d)} - {_cast(acc + '_mean', w, d)}")
                    lines.append(f"{acc} += {_cast(_cast(f'{acc}_d * {acc}_d', d, w), w, F64)}")
                continue
            if pass_no == 1:
                continue
            accd = _acc_dtype(r)
            lines.extend(_combine(r, acc, _cast(v, src_dt, accd) if r.op not in ("any", "all") else v,
                                  flat_index(r), src_dt))

    acc_names = {r: f"a{j}" for j, r in enumerate(reds)}

    def inits(lines: list[str], pass_no: int, st: int = 0, pairwise: bool = True) -> None:
        for r in reds:
            if stage.get(r, 0) != st or r in pw and not pairwise:
                continue
            acc = acc_names[r]
            if r in pw:
                if pass_no == 0 or r.op in ("var", "std"):
                    lines.append(f"{target(r, pass_no)} = {_cast('0', I64, _pw_dtype(r))}")
            elif r.op in ("var", "std"):
                lines.append(f"{acc}_m = 0.0" if pass_no == 0 else f"{acc} = 0.0")
            elif pass_no == 0:
                lines.append(f"{acc} = {_init(r, _acc_dtype(r))}")
                if r.op in ("argmax", "argmin"):
                    lines.append(f"{acc}_i = 0")

    def mean(lines: list[str], st: int) -> None:
        """A variance's mean, between its two passes."""
        for r in reds:
            if r.op in ("var", "std") and stage.get(r, 0) == st:
                acc = acc_names[r]
                lines.append(f"{acc}_mean = {_pw_div(acc + '_m', n_expr, _pw_dtype(r))}" if r in pw
                             else f"{acc}_mean = {_mean_expr(r, acc, axes)}")

    n_expr = "*".join(f"s{d}" for d in axes) or "1"

    def finals(lines: list[str], st: int = 0) -> None:
        for r in reds:
            if stage.get(r, 0) != st:
                continue
            acc = acc_names[r]
            res = f"{acc}_i" if r.op in ("argmax", "argmin") else acc
            w = _work_dtype(r)
            src = np.dtype(np.int64) if r.op in ("argmax", "argmin") else _acc_dtype(r)
            if res == acc and src.kind in "iu" and src.itemsize < 8:
                # numba widens small ints as it adds and multiplies: the total wraps to its dtype here, before
                # anything reads it (a uint16 prod, an int8 mean's sum)
                acc = res = f"np.{src.name}({acc})"
            if r in pw:
                w = src = _pw_dtype(r)
                if r.op == "mean":
                    res = _pw_div(acc, n_expr, w)
                elif r.op in ("var", "std"):
                    ddof = dict(r.params).get("ddof") or 0
                    res = _pw_div(acc, f"max(({n_expr}) - {ddof}, 0)", w)
                    if r.op == "std":
                        res = _result(f"np.sqrt({res})", w, w)
            elif r.op == "mean":  # NumPy: the sum in the result dtype (an int one wraps), divided by the count
                res, src = f"({_cast(acc, _acc_dtype(r), w)} / {_cast(n_expr, I64, w)})", w
            elif r.op in ("var", "std"):
                ddof = dict(r.params).get("ddof") or 0
                res, src = f"({_cast(acc, F64, w)} / {_cast(f'max(({n_expr}) - {ddof}, 0)', I64, w)})", w
                if r.op == "std":
                    res = f"np.sqrt({res})"
            ctx.names[r] = ctx.fresh("r")
            lines.append(f"{ctx.names[r]} = {_cast(res, src, r.dtype)}")

    def loops(dims: list[int], body: list[str], first_parallel: bool, bounds: dict[int, tuple[str, str]] | None = None) -> list[str]:
        out = []
        for j, d in enumerate(dims):
            lo, hi = (bounds or {}).get(d, ("0", f"s{d}"))
            rng = "prange" if (j == 0 and first_parallel) else "range"
            rng_args = hi if lo == "0" else f"{lo}, {hi}"
            out.append("    " * j + f"for i{d} in {rng}({rng_args}):")
        return out + ["    " * len(dims) + ln for ln in body]

    # -- the column path (COLUMNS_MARK) -------------------------------------------------------
    def columns(cols: list[int]) -> tuple[list[str], bool]:
        """Per chunk of the kept axes: an array per accumulator over the streamed axes ``cols``; per stage,
        its passes over the reduced axes with ``cols`` innermost (each element loads its accumulators, folds
        in its value as the row path does, stores them), then a loop over ``cols`` for the finals and the
        epilogue. Values a later stage reads per output element wait in arrays too (``carried``)."""
        lead = [d for d in outer if d not in cols]
        t0, rest = cols[0], cols[1:]
        # an element's place in the chunk's arrays: the streamed axes in C order, the first from ``tlo``
        terms = [f"(i{t0} - tlo)" if rest else f"i{t0} - tlo"] + [f"i{d}" for d in rest]
        at = "np.uint64(" + " + ".join(t + "".join(f" * s{e}" for e in cols[j + 1:]) for j, t in enumerate(terms)) + ")"
        later = {a for m in k.nodes for a in m.args if stage.get(m, 0) > stage.get(a, 0)}
        carried = {n: f"cv{j}" for j, n in enumerate(
            n for n in k.nodes if k.phase[n] in ("red", "epi") and n in later)}
        arrays: dict[str, np.dtype] = {buf: n.dtype for n, buf in carried.items()}

        def kept(rs: list[Node], pass_no: int) -> list[str]:
            """The accumulators' variables this pass updates (each with its array, ``{name}_c``)."""
            names = []
            for r in rs:
                for suffix, dt in _column_state(r, pass_no, r in pw):
                    names.append(acc_names[r] + suffix)
                    arrays[names[-1] + "_c"] = dt
            return names

        def load(names: list[str]) -> list[str]:
            return [f"{v} = {v}_c[{at}]" for v in names]

        def store(names: list[str]) -> list[str]:
            return [f"{v}_c[{at}] = {v}" for v in names]

        def load_carried(lines: list[str], st: int) -> None:
            for n, buf in carried.items():
                if stage.get(n, 0) < st:
                    ctx.names[n] = ctx.fresh("c")
                    lines.append(f"{ctx.names[n]} = {buf}[{at}]")

        def over(dims: list[int], body: list[str]) -> list[str]:
            return loops(dims, body, False, {t0: ("tlo", "thi")}) if body else []

        def sweep(rs: list[Node], pass_no: int, st: int) -> list[str]:
            """One pass over the reduced axes: a row of the streamed axes at a time."""
            names = kept(rs, pass_no)
            means = [acc_names[r] + "_mean" for r in rs if pass_no == 1 and r.op in ("var", "std")]
            body = load(names + means)
            load_carried(body, st)
            accumulate(pass_no, body, st)
            return over(list(axes) + cols, body + store(names))

        body: list[str] = []
        for st in stages:
            rs = [r for r in reds if stage.get(r, 0) == st]
            init: list[str] = []
            inits(init, 0, st)
            body += over(cols, init + store(kept(rs, 0)))
            body += sweep(rs, 0, st)
            variances = [r for r in rs if r.op in ("var", "std")]
            if variances:  # their means, between their two passes
                mid = load(kept(rs, 0))
                mean(mid, st)
                inits(mid, 1, st)
                means = [acc_names[r] + "_mean" for r in variances]
                arrays.update({m + "_c": _work_dtype(r) for m, r in zip(means, variances)})
                body += over(cols, mid + store(means + kept(rs, 1)))
                body += sweep(rs, 1, st)
            pre = load([v for r in rs for v in kept([r], 1 if r in variances else 0)])
            load_carried(pre, st)
            fin: list[str] = []
            finals(fin, st)
            _epilogue(ctx, [n for n in epi if stage.get(n, 0) == st], fin, k, axes, var, write=False)
            fin += [f"{buf}[{at}] = {ctx.names[n]}" for n, buf in carried.items() if stage.get(n, 0) == st]
            fin += [f"out{j}[{_unsigned(_out_index(out.shape, nd, outer, axes))}] = {ctx.names[out]}"
                    for j, out in enumerate(outputs(k)) if k.phase.get(out) in ("red", "epi") and stage.get(out, 0) == st]
            if fin:  # (a stage of prologue only, the last of a layer norm, has none)
                body += over(cols, pre + fin)
        # chunks: of the first kept axis outside (up to 4 per thread), each split along the first streamed
        # axis while the threads outnumber them, in slices of at least COLUMN_CHUNK elements
        lines = [COLUMNS_MARK, f"nl = max(1, min(4 * nthreads, s{lead[0]}))" if lead else "nl = 1",
                 f"nt = max(1, min(nthreads // nl, s{t0} // {COLUMN_CHUNK}))"]
        chunk = [f"tlo = ((c % nt) * s{t0}) // nt", f"thi = ((c % nt + 1) * s{t0}) // nt",
                 "tn = (thi - tlo)" + "".join(f" * s{e}" for e in rest)]
        chunk += [f"{a} = np.empty(tn, {np_type(dt)})" for a, dt in arrays.items()]
        if lead:
            l0 = lead[0]
            body = loops(lead, body, False, {l0: (f"((c // nt) * s{l0}) // nl", f"((c // nt + 1) * s{l0}) // nl")})
        return lines + ["for c in prange(nl * nt):"] + ["    " + ln for ln in chunk + body], True

    if streamed:
        return columns(streamed)

    # -- NumPy's pairwise order --------------------------------------------------------------
    def pw_reds(pass_no: int, st: int) -> list[Node]:
        return [r for r in reds if r in pw and stage.get(r, 0) == st and (pass_no == 0 or r.op in ("var", "std"))]

    def tree_length(pass_no: int, st: int) -> int:
        return pw[pw_reds(pass_no, st)[0]] if pass_no == 0 else 0  # (a variance's squares are no cast)

    def block(pass_no: int, st: int) -> list[str]:
        """The elements ``qa`` to ``qe`` of a run (a node of its pairwise tree): the fused prologue at their
        indices, their values into the pairwise reductions' buffers (``{acc}_b``)."""
        body = [f"i{d} = 0" for d in run if space[d] == 1]
        if len(run_big) == 1:
            d = run_big[0]
            inner: list[str] = []
            accumulate(pass_no, inner, st, f"np.uint64(i{d} - qa)")
            return body + [f"for i{d} in range(qa, qe):"] + ["    " + ln for ln in inner]
        # a run over several axes: the block's first index decomposed, then its rows' segments in turn
        *hi, last = run_big
        inner = []
        accumulate(pass_no, inner, st, f"np.uint64(qp + i{last} - qj)")
        body += ["qr = qa", f"qj = qr % s{last}", f"qr //= s{last}"]
        for d in reversed(hi[1:]):
            body += [f"i{d} = qr % s{d}", f"qr //= s{d}"]
        body += [f"i{hi[0]} = qr", "qp = 0", "qn = qe - qa", "while qp < qn:",
                 f"    qg = min(qn - qp, s{last} - qj)", f"    for i{last} in range(qj, qj + qg):"]
        body += ["        " + ln for ln in inner]
        body += ["    qp += qg", "    qj = 0"]
        ind = "    "
        for j, d in enumerate(reversed(hi)):  # the next row: carry into the axes before
            body.append(f"{ind}i{d} += 1")
            if j < len(hi) - 1:
                body += [f"{ind}if i{d} == s{d}:", f"{ind}    i{d} = 0"]
                ind += "    "
        return body

    def chunk_expr(n: int) -> str:
        return f"np.int64({n})" if n else "max(pl, 1)"

    def pw_call(fn: str, r: Node) -> str:
        name = f"pw_{fn}_{_pw_dtype(r).name}"
        ctx.helpers.add(name)
        return name

    n_run = "*".join(f"s{d}" for d in run_big) or "1"
    red_dims = list(axes)
    lines: list[str] = []
    if not full:
        # (the kernel's shape is fixed: a run of fewer than 8 elements NumPy adds one by one, as today's loop
        # does when no reduced axis comes before it; one of at most 128 is one leaf, summed in the kernel)
        n_static = math.prod(space[d] for d in run_big)
        seq_big = [d for d in red_dims if d not in run and space[d] != 1]
        # (an empty run has no leaf: its sums stay their start, as NumPy's sum of nothing; pw_leaf reads one)
        tree = bool(run_big) and bool(pw) and n_static > 0 and (n_static >= 8 or bool(seq_big))
        # per output element (one row for a softmax): each stage is a pass over the reduced axes
        seq_dims = [d for d in red_dims if d not in run]
        run_index = " + ".join(f"i{d}" + "".join(f" * s{e}" for e in run_big[j + 1:]) for j, d in enumerate(run_big))

        def sweep(pass_no: int, st: int) -> list[str]:
            acc: list[str] = []
            sw = pw_reds(pass_no, st)
            if not (sw and tree):
                accumulate(pass_no, acc, st)
                return loops(red_dims, acc, False)
            # the run's values into the chunk's buffer, then their pairwise sums (per tree) added
            accumulate(pass_no, acc, st, f"np.uint64(qo + {run_index})")
            acc = [f"i{d} = 0" for d in run if space[d] == 1] + loops(run_big, acc, False)
            for r in sw:
                t, b = target(r, pass_no), f"{acc_names[r]}_b"
                if n_static <= 128:  # one leaf: numba's pw_leaf, compiled into the kernel (a call costs more)
                    ctx.helpers.add("pw_leaf")
                    acc.append(f"{t} = {t} + pw_leaf({b}, qo, pl)")
                else:
                    acc.append(f"{t} = {pw_call('run', r)}({b}.ctypes, qo, pl, {chunk_expr(tree_length(pass_no, st))}, {t})")
            return loops(seq_dims, acc, False)

        body: list[str] = []
        for st in stages:
            inits(body, 0, st)
            body += sweep(0, st)
            if any(r.op in ("var", "std") and stage.get(r, 0) == st for r in reds):
                mean(body, st)
                inits(body, 1, st)
                body += sweep(1, st)
            finals(body, st)
            _epilogue(ctx, [n for n in epi if stage.get(n, 0) == st], body, k, axes, var, write=False)
        _epilogue(ctx, [], body, k, axes, var)
        allocs = [f"{buf} = np.empty({'*'.join(f's{d}' for d in axes)}, {np_type(n.dtype)})" for n, buf in scratch.items()]
        if not allocs and not tree:
            return loops(outer, body, True), False
        # rows in chunks, one allocation of scratch buffers per chunk rather than per row
        o0 = outer[0]
        lines.append(f"nch = max(1, min(4 * nthreads, s{o0}))")
        if tree:  # one run's values per chunk (NumPy's own temporary, where the operand is an expression)
            lines += [f"pl = {n_run}"] + [f"{acc_names[r]}_b = np.empty(nch * pl, {np_type(_pw_dtype(r))})" for r in pw]
            allocs.append("qo = c * pl")  # (allocated here, not in the threads: numba compiles that faster)
        inner = loops(outer, body, False, {o0: (f"(c * s{o0}) // nch", f"((c + 1) * s{o0}) // nch")})
        return lines + ["for c in prange(nch):"] + ["    " + ln for ln in allocs + inner], True
    if pw:  # a full reduction in NumPy's order: blocks (subtrees of its pairwise trees) in parallel, then the top
        ctx.helpers.add("pw_nodes")
        lines += [f"pl = {n_run}", f"pwb = np.int64({PW_BLOCK})", "pz = np.int64(0)"]

        def blocks(pass_no: int) -> list[str]:
            rs = [r for r in reds if pass_no == 0 or r.op in ("var", "std")]
            b = f"b{pass_no}"
            out = [f"pch = {chunk_expr(tree_length(pass_no, 0))}",
                   f"{b}st = np.empty(pl // (pwb // 2 - 8) + pl // pch + 3, np.int64)",  # (pw_nodes' most)
                   f"{b}mg = np.empty(pl // (pwb // 2 - 8) + pl // pch + 3, np.int64)",
                   f"nch = pw_nodes({b}st.ctypes, {b}mg.ctypes, pl, pch, pwb)"]
            for r in rs:
                acc = acc_names[r]
                accd = _pw_dtype(r) if r in pw else F64 if r.op in ("var", "std") else _acc_dtype(r)
                out.append(f"{acc}_p = np.empty(max(nch, 1), {np_type(accd)})")
                if r.op in ("argmax", "argmin"):
                    out.append(f"{acc}_pi = np.zeros(max(nch, 1), np.int64)")
            body = [f"qa = {b}st[c]", f"qe = {b}st[c + 1]"]
            body += [f"{acc_names[r]}_b = np.empty(qe - qa, {np_type(_pw_dtype(r))})" for r in pw_reds(pass_no, 0)]
            inits(body, pass_no, pairwise=False)  # (a pairwise one sums its block's values)
            body += block(pass_no, 0)
            for r in rs:
                acc = acc_names[r]
                if r in pw:
                    body.append(f"{acc}_p[c] = {pw_call('sum', r)}({acc}_b.ctypes, pz, qe - qa)")
                else:
                    body.append(f"{acc}_p[c] = {acc}_m" if r.op in ("var", "std") and pass_no == 0 else f"{acc}_p[c] = {acc}")
                    if r.op in ("argmax", "argmin"):
                        body.append(f"{acc}_pi[c] = {acc}_i")
            out += ["for c in prange(nch):"] + ["    " + ln for ln in body]
            inits(out, pass_no)
            for r in rs:
                acc = acc_names[r]
                if r in pw:
                    t = target(r, pass_no)
                    out.append(f"{t} = {pw_call('fold', r)}({acc}_p.ctypes, pz, {b}mg.ctypes, nch, {t})")
                elif r.op in ("var", "std"):
                    out.append(f"{acc}{'_m' if pass_no == 0 else ''} = {acc}_p.sum()")
                else:
                    st_ = _combine(r, acc, f"{acc}_p[c]", f"{acc}_pi[c]", r.args[0].dtype if r.op in ("argmax", "argmin") else _acc_dtype(r))
                    if r.op in ("sum", "mean"):
                        st_ = [f"{acc} += {acc}_p[c]"]
                    elif r.op == "prod":
                        st_ = [f"{acc} *= {acc}_p[c]"]
                    out += ["for c in range(nch):"] + ["    " + s for s in st_]
            if pass_no == 0:
                mean(out, 0)
            return out

        lines += blocks(0)
        if any(r.op in ("var", "std") for r in reds):
            lines += blocks(1)
        finals(lines)
        _epilogue(ctx, epi, lines, k, axes, var)
        return lines, True
    # a full reduction: chunks of the first reduced axis run in parallel, then combine
    a0 = red_dims[0]
    lines.append(f"nch = max(1, min(nthreads, s{a0}))")
    for r in reds:
        acc = acc_names[r]
        accd = np.dtype(np.float64) if r.op in ("var", "std") else _acc_dtype(r)
        lines.append(f"{acc}_p = np.empty(nch, {np_type(accd)})")
        if r.op in ("argmax", "argmin"):
            lines.append(f"{acc}_pi = np.zeros(nch, np.int64)")
    bounds = {a0: (f"(c * s{a0}) // nch", f"((c + 1) * s{a0}) // nch")}
    chunk: list[str] = []
    inits(chunk, 0)
    acc1: list[str] = []
    accumulate(0, acc1, 0)
    chunk += loops(red_dims, acc1, False, bounds)
    for r in reds:
        acc = acc_names[r]
        chunk.append(f"{acc}_p[c] = {acc}_m" if r.op in ("var", "std") else f"{acc}_p[c] = {acc}")
        if r.op in ("argmax", "argmin"):
            chunk.append(f"{acc}_pi[c] = {acc}_i")
    lines.append("for c in prange(nch):")
    lines += ["    " + ln for ln in chunk]
    comb: list[str] = []
    inits(comb, 0)
    for r in reds:
        acc = acc_names[r]
        if r.op in ("var", "std"):
            comb.append(f"{acc}_m = {acc}_p.sum()")
            comb.append(f"{acc}_mean = {_mean_expr(r, acc, axes)}")
            continue
        comb.append("for c in range(nch):")
        st = _combine(r, acc, f"{acc}_p[c]", f"{acc}_pi[c]", _acc_dtype(r) if r.op not in ("argmax", "argmin") else r.args[0].dtype)
        if r.op in ("sum", "mean"):
            st = [f"{acc} += {acc}_p[c]"]
        elif r.op == "prod":
            st = [f"{acc} *= {acc}_p[c]"]
        comb += ["    " + s for s in st]
    lines += comb
    if any(r.op in ("var", "std") for r in reds):
        chunk2: list[str] = []
        inits(chunk2, 1)
        acc2 = []
        accumulate(1, acc2, 0)
        chunk2 += loops(red_dims, acc2, False, bounds)
        for r in reds:
            if r.op in ("var", "std"):
                chunk2.append(f"{acc_names[r]}_p[c] = {acc_names[r]}")
        lines.append("for c in prange(nch):")
        lines += ["    " + ln for ln in chunk2]
        for r in reds:
            if r.op in ("var", "std"):
                lines.append(f"{acc_names[r]} = {acc_names[r]}_p.sum()")
    finals(lines)
    _epilogue(ctx, epi, lines, k, axes, var)
    return lines, True


def _epilogue(ctx: _Ctx, epi: list[Node], lines: list[str], k: Kernel, axes: tuple[int, ...], var,
              write: bool = True) -> None:
    """Per output element: the epilogue ops, then (``write``) the writes of reductions and epilogue values."""
    nd = len(k.shape)
    outer = [d for d in range(nd) if d not in axes]
    # values read in the reduction loops are not for the epilogue: it reads its inputs afresh (a loop
    # over an empty axis runs no iteration, and leaves them unset)
    ctx.names = {n: v for n, v in ctx.names.items() if k.phase.get(n) in ("red", "epi")}
    for node in epi:
        space = node.shape
        # an epilogue node's index: keepdims shapes put 0 at reduced axes
        evar = _out_var(space, nd, outer, axes)
        _node_expr(ctx, node, space, evar, lines)
    for j, out in enumerate(outputs(k) if write else ()):
        if k.phase.get(out) in ("red", "epi"):
            idx = _out_index(out.shape, nd, outer, axes)
            lines.append(f"out{j}[{idx}] = {ctx.names[out]}")


def _out_var(space: tuple[int, ...], nd: int, outer: list[int], axes: tuple[int, ...]):
    keep = len(space) == nd
    dims = list(range(nd)) if keep else outer

    def var(d: int) -> str:
        real = dims[d]
        return "0" if keep and real in axes else f"i{real}"

    return var


def _out_index(shape: tuple[int, ...], nd: int, outer: list[int], axes: tuple[int, ...]) -> str:
    if not shape:
        return "0"
    var = _out_var(shape, nd, outer, axes)
    return ", ".join(var(d) for d in range(len(shape)))
