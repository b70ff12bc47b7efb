"""Render a fused kernel as CUDA C for CuPy's ``RawModule``.

Why raw CUDA and not ``ElementwiseKernel``/``ReductionKernel``: a partitioner
kernel is a loop nest over one iteration shape whose inputs are arbitrary
strided (and broadcast) views, it may write several outputs, and a reduce
kernel has a prologue, several reductions over the same axes (``var`` needs
two passes) and an epilogue on the reduced shape. CuPy's templates cover
pieces of that (``ReductionKernel`` has one reduction and no per-result
epilogue that reads other arrays), so the renderer emits the whole kernel,
mirroring ``cpu_render`` line for line: one variable per op, every op in
NumPy's loop dtype (``ufunc.resolve_dtypes``) then cast to NumPy's result
dtype, scalars as kernel arguments (a new ``alpha`` reuses the compiled
kernel), shapes and element strides as arguments (a broadcast is stride 0, a
reversed view a negative stride), and device helpers in a prelude mirroring
NumPy's C loops (``npy_divmod``, ``npy_lshift``, NaN-propagating max...).

Three launch shapes:

* ``ew``/``scatter``: one thread per element of the iteration shape,
  grid-stride loop, the flat index decomposed into one index per axis;
* ``reduce`` with kept (outer) axes: one block per output element (grid-stride
  over outputs), the block's threads stride over the reduced elements, a
  shared-memory tree combines them; thread 0 runs the epilogue and writes;
* a full reduction (nothing kept, no ``var``/``std``): ``jf_part`` reduces a
  slice per block into partials, ``jf_final`` (one block) combines them and
  runs the epilogue. ``argmax``/``argmin`` combine (value, index) pairs with
  the smallest index winning ties, so the first occurrence (and the first NaN)
  wins as in NumPy.

A sample, ``y = np.sin(x) ** 2 + c`` with ``x`` float64[n] (strided) and ``c``
a float (``sin(x) ** 2`` is NumPy's ``square``)::

    #define BLOCK 256
    extern "C" __global__ void jf_kernel(const long long s0, const long long n,
        const double p0, const double* __restrict__ in0, const long long in0_t0,
        double* __restrict__ out0) {
      for (long long t = (long long)blockIdx.x * BLOCK + threadIdx.x; t < n;
           t += (long long)gridDim.x * BLOCK) {
        const long long i0 = t;
        const double v0 = in0[i0 * in0_t0];
        const double v1 = sin(v0);
        const double v2 = (v1 * v1);
        const double v3 = (v2 + p0);
        out0[t] = v3;
      }
    }
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..fuse import Kernel, reduce_axes
from ..ir import Node
from ..ops import fixed_comparison, power_fast_paths, roll_moves
from .cpu_render import (CAST_HELPERS, MINMAX_HELPERS, SUPPORTED_DTYPES, CannotRender, exact_comparison,  # noqa: F401
                         deviation_dtype, float_product_dtype, loop_dtypes, outputs, param_value)

CTYPES = {
    np.dtype("bool"): "bool", np.dtype("int8"): "signed char", np.dtype("int16"): "short",
    np.dtype("int32"): "int", np.dtype("int64"): "long long", np.dtype("uint8"): "unsigned char",
    np.dtype("uint16"): "unsigned short", np.dtype("uint32"): "unsigned int",
    np.dtype("uint64"): "unsigned long long", np.dtype("float32"): "float", np.dtype("float64"): "double",
}
F64, I64, BOOL = np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_)
EW_BLOCK = 256
SHARED_LIMIT = 40 * 1024  # bytes of shared memory a reduce kernel may use


def ctype(dt: np.dtype) -> str:
    try:
        return CTYPES[np.dtype(dt)]
    except KeyError:
        raise CannotRender(f"no CUDA type for {dt}") from None


def _wide_unsigned(dt: np.dtype) -> str:
    """The unsigned type integer arithmetic wraps in (no signed overflow, no int promotion)."""
    return "unsigned long long" if dt.itemsize == 8 else "unsigned int"


def cast(expr: str, frm: np.dtype, to: np.dtype) -> str:
    """C cast with NumPy's meaning (bool is ``!= 0``; float -> uint32 as x86-64 does it)."""
    frm, to = np.dtype(frm), np.dtype(to)
    if frm == to:
        return expr
    if to == BOOL:
        return f"(({expr}) != 0)"
    if frm.kind == "f" and to.kind in "iu":  # as x86-64's C cast, NumPy's (a GPU's saturates, and gives 0 for NaN)
        if to == np.uint64:  # (as cpu_render: a signed conversion below 2**63, else one offset by 2**63)
            return (f"(({expr}) >= 9223372036854775808.0 ? ((unsigned long long)f2i64(({expr}) - 9223372036854775808.0)"
                    f" ^ 9223372036854775808ULL) : (unsigned long long)f2i64({expr}))")
        if to.kind == "i" and to.itemsize >= 4:
            return f"f2i{to.itemsize * 8}({expr})"
        return f"(({ctype(to)})f2i64({expr}))"  # (uint32 and the small ints: the low bits)
    return f"(({ctype(to)})({expr}))"


@dataclass
class CudaRendered:
    source: str  # the whole module: the compile unit and the cache key
    mode: str  # "ew" | "block" (one block per output) | "full" (partials, then a final block)
    entries: list[str]  # __global__ functions, in launch order
    block: int
    params: list[tuple[Node, np.dtype]]
    reads: list[tuple[Node, tuple[int, ...]]]
    outputs: list[Node]
    reductions: list[tuple[Node, np.dtype]] = field(default_factory=list)  # (node, accumulator dtype)
    scatter: bool = False


# -- device helpers (the prelude): each mirrors NumPy's C loop ------------------------------

HELPERS: dict[str, str] = {
    # float -> int64/int32 as x86-64's cvttsd2si (cpu_render's f2i64): NaN and out of range give the lowest
    "f2i64": """
__device__ __forceinline__ long long f2i64(double x) {
  return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (long long)x : (-9223372036854775807LL - 1);
}""",
    "f2i32": """
__device__ __forceinline__ int f2i32(double x) {
  return (x >= -2147483648.0 && x < 2147483648.0) ? (int)x : (-2147483647 - 1);
}""",
    "cmp_iu": """
__device__ __forceinline__ int cmp_iu(long long a, unsigned long long b) {
  if (a < 0) return -1;
  unsigned long long ua = (unsigned long long)a;
  return ua < b ? -1 : (ua > b ? 1 : 0);
}""",
    "floordiv_f": """
template <typename T> __device__ T floordiv_f(T a, T b) {
  if (b == 0) return a / b;
  T mod = fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;
  if (div != 0) {
    T fl = floor(div);
    if (div - fl > (T)0.5) fl += (T)1;
    return fl;
  }
  return copysign((T)0, a / b);
}""",
    "mod_f": """
template <typename T> __device__ T mod_f(T a, T b) {
  if (b == 0) return fmod(a, b);
  T mod = fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = copysign((T)0, b);
  }
  return mod;
}""",
    "floordiv_i": """
template <typename T> __device__ T floordiv_i(T a, T b) {
  if (b == 0) return (T)0;
  if (b == (T)-1) return (T)(0ULL - (unsigned long long)a);  /* INT_MIN // -1 wraps, as in NumPy */
  T q = (T)(a / b);
  if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);
  return q;
}""",
    "floordiv_u": """
template <typename T> __device__ T floordiv_u(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }""",
    "mod_i": """
template <typename T> __device__ T mod_i(T a, T b) {
  if (b == 0 || b == (T)-1) return (T)0;
  T r = (T)(a % b);
  if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
  return r;
}""",
    "mod_u": """
template <typename T> __device__ T mod_u(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }""",
    "fmod_i": """
template <typename T> __device__ T fmod_i(T a, T b) {
  if (b == 0 || b == (T)-1) return (T)0;
  return (T)(a % b);  /* C's remainder takes the dividend's sign, like npy_fmod */
}""",
    "fmod_u": """
template <typename T> __device__ T fmod_u(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }""",
    "clip_f": """
template <typename T> __device__ T clip_f(T x, T lo, T hi) {
  /* as NumPy: NaN in x wins, then a NaN bound; x itself on a tie (clip(-0.0, 0.0, 1.0) is -0.0) */
  T m = (x != x || x >= lo) ? x : lo;
  return (m != m || m <= hi) ? m : hi;
}""",
    "clip_i": """
template <typename T> __device__ T clip_i(T x, T lo, T hi) {
  T m = x > lo ? x : lo;
  return m < hi ? m : hi;
}""",
    # NumPy's maximum/minimum propagate NaN and give the second argument on a tie (maximum(-0.0, 0.0)
    # is 0.0); fmax/fmin ignore a NaN, tie the same way
    "max_f": """
template <typename T> __device__ T max_f(T a, T b) { return (a > b || a != a) ? a : b; }""",
    "min_f": """
template <typename T> __device__ T min_f(T a, T b) { return (a < b || a != a) ? a : b; }""",
    "fmax_f": """
template <typename T> __device__ T fmax_f(T a, T b) { return (a > b || b != b) ? a : b; }""",
    "fmin_f": """
template <typename T> __device__ T fmin_f(T a, T b) { return (a < b || b != b) ? a : b; }""",
    "sign_f": """
template <typename T> __device__ T sign_f(T a) {
  if (a > 0) return (T)1;
  if (a < 0) return (T)-1;
  if (a == 0) return (T)0;
  return a;
}""",
    "sign_i": """
template <typename T> __device__ T sign_i(T a) { return a > 0 ? (T)1 : (a < 0 ? (T)-1 : (T)0); }""",
    "ipow": """
__device__ unsigned long long ipow(unsigned long long a, long long b) {
  unsigned long long out = 1ULL, base = a;  /* arithmetic mod 2**64: the low bits are NumPy's */
  while (b > 0) {
    if (b & 1) out *= base;
    base *= base;
    b >>= 1;
  }
  return out;
}""",
    "heaviside": """
template <typename T> __device__ T heaviside(T a, T h) {
  if (a != a) return a;
  if (a == 0) return h;
  return a > 0 ? (T)1 : (T)0;
}""",
    "logaddexp": """
template <typename T> __device__ T logaddexp(T x, T y) {
  if (x == y) return x + (T)0.693147180559945309417232121458176568;  /* same-sign infinities */
  T tmp = x - y;
  if (tmp > 0) return x + log1p(exp(-tmp));
  if (tmp <= 0) return y + log1p(exp(tmp));
  return tmp;  /* NaN */
}""",
    "logaddexp2": """
template <typename T> __device__ T logaddexp2(T x, T y) {
  const T LOG2E = (T)1.442695040888963407359924681001892137;
  if (x == y) return x + (T)1;
  T tmp = x - y;
  if (tmp > 0) return x + LOG2E * log1p(exp2(-tmp));
  if (tmp <= 0) return y + LOG2E * log1p(exp2(tmp));
  return tmp;
}""",
}

# NumPy name -> C math function (the float32 overloads are the same name + "f")
_UNARY_C = {
    "sqrt": "sqrt", "cbrt": "cbrt", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan",
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fabs": "fabs", "rint": "rint",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc",
}
_BINARY_C = {"arctan2": "atan2", "hypot": "hypot", "copysign": "copysign", "fmod": "fmod",
             "float_power": "pow", "power": "pow"}
_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "equal": "==", "not_equal": "!=",
          "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}


def _fn(name: str, dt: np.dtype) -> str:
    return name + ("f" if dt == np.float32 else "")


def expression(node: Node, args: list[str], ins: list[np.dtype], out: np.dtype, helpers: set[str]) -> str:
    """The op on operands already in the loop dtypes ``ins``; the result has C type ``ctype(out)``."""
    op = node.op
    kinds = "".join(d.kind for d in ins)
    flt = all(k == "f" for k in kinds)
    integer = all(k in "iub" for k in kinds)
    a = args[0] if args else ""
    b = args[1] if len(args) > 1 else ""
    T, d0 = ctype(out), ins[0] if ins else out
    exact = exact_comparison(op, a, b, ins, helpers)
    if exact is not None:
        return exact
    if op in _INFIX and not (op == "divide" and not flt):
        sym = _INFIX[op]
        if op in ("add", "subtract", "multiply") and integer:
            if d0 == BOOL:
                return {"add": f"({a} || {b})", "multiply": f"({a} && {b})"}.get(op) or _no(node, ins)
            u = _wide_unsigned(d0)
            return f"(({T})(({u}){a} {sym} ({u}){b}))"
        return f"({a} {sym} {b})"
    if op in _UNARY_C and flt:
        return f"{_fn(_UNARY_C[op], d0)}({a})"
    if op in ("logaddexp", "logaddexp2") and flt:
        helpers.add(op)
        return f"{op}({a}, {b})"
    if op == "power" and flt and power_fast_paths(node):  # NumPy's loop: x * x, sqrt, 1 / x for 2, 0.5, -1
        return (f"({b} == 2 ? {a} * {a} : {b} == 0.5 ? {_fn('sqrt', d0)}({a}) : {b} == -1 ? ({T})1 / {a} : "
                f"{_fn('pow', d0)}({a}, {b}))")
    if op in _BINARY_C and flt:
        return f"{_fn(_BINARY_C[op], d0)}({a}, {b})"
    if op in ("floor_divide", "remainder", "fmod") and (flt or integer):
        if d0 == BOOL:
            return _no(node, ins)
        base = {"floor_divide": "floordiv", "remainder": "mod", "fmod": "fmod"}[op]
        name = f"{base}_{'f' if flt else 'u' if d0.kind == 'u' else 'i'}"
        helpers.add(name)
        return f"{name}<{T}>({a}, {b})"
    if op == "power":
        raise CannotRender("integer power needs a constant exponent")  # handled by the caller
    if op in MINMAX_HELPERS and flt:
        name = MINMAX_HELPERS[op]
        helpers.add(name)
        return f"{name}<{T}>({a}, {b})"
    if op in ("maximum", "minimum"):
        return f"({a} {'>' if op == 'maximum' else '<'} {b} ? {a} : {b})"
    if op in ("fmax", "fmin") and integer:
        return f"({a} {'>' if op == 'fmax' else '<'} {b} ? {a} : {b})"
    if op == "negative" and d0 != BOOL:
        if flt:
            return f"(-{a})"
        return f"(({T})(0ULL - ({_wide_unsigned(d0)}){a}))"
    if op in ("positive", "conjugate"):
        return a
    if op in ("absolute", "fabs"):
        if flt:
            return f"{_fn('fabs', d0)}({a})"
        if d0.kind == "i":
            u = _wide_unsigned(d0)
            return f"(({T})({a} < 0 ? ({u})0 - ({u}){a} : ({u}){a}))"
        return a
    if op == "square":
        if flt:
            return f"({a} * {a})"
        if d0 == BOOL:
            return f"({a} && {a})"
        u = _wide_unsigned(d0)
        return f"(({T})(({u}){a} * ({u}){a}))"
    if op == "reciprocal" and flt:
        return f"(({T})1 / {a})"
    if op == "reciprocal" and integer and d0 != BOOL:
        # 1 / x truncates as NumPy's does; CuPy's own reciprocal of 0 differs from NumPy's, which is
        # the platform's cast of 1.0 / 0: asked of NumPy itself, written as its bit pattern
        z = int(_numpy_reciprocal_of_zero(d0)) % (1 << (8 * d0.itemsize))
        return f"({a} == 0 ? ({T}){z}ULL : ({T})(1 / {a}))"
    if op == "sign":
        if d0 == BOOL:
            return _no(node, ins)
        name = "sign_f" if flt else "sign_i"
        helpers.add(name)
        return f"{name}<{T}>({a})"
    if op in ("floor", "ceil", "trunc", "rint"):
        return a  # integers (floats were handled above)
    if op in ("isnan", "isinf"):
        return f"({op}({a}) != 0)" if flt else "false"
    if op == "isfinite":
        return f"(isfinite({a}) != 0)" if flt else "true"
    if op == "signbit":
        return f"(signbit({a}) != 0)" if flt else f"({a} < 0)"
    if op in ("deg2rad", "radians") and flt:
        return f"({a} * ({T}){math.pi / 180.0!r})"
    if op in ("rad2deg", "degrees") and flt:
        return f"({a} * ({T}){180.0 / math.pi!r})"
    if op == "logical_not":
        return f"({a} == 0)"
    if op in ("logical_and", "logical_or", "logical_xor"):
        sym = {"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}[op]
        return f"(({a} != 0) {sym} ({b} != 0))"
    if op in ("bitwise_and", "bitwise_or", "bitwise_xor") and integer:
        sym = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}[op]
        return f"(({T})({a} {sym} {b}))"
    if op == "invert" and integer:
        return f"(!{a})" if d0 == BOOL else f"(({T})(~{a}))"
    if op in ("left_shift", "right_shift") and integer and d0 != BOOL:
        bits = d0.itemsize * 8
        if op == "left_shift":
            return f"((unsigned long long){b} < {bits}ULL ? ({T})(({_wide_unsigned(d0)}){a} << {b}) : ({T})0)"
        if d0.kind == "i":
            return f"((unsigned long long){b} < {bits}ULL ? ({T})({a} >> {b}) : ({a} < 0 ? ({T})-1 : ({T})0))"
        return f"((unsigned long long){b} < {bits}ULL ? ({T})({a} >> {b}) : ({T})0)"
    if op == "heaviside" and flt:
        helpers.add("heaviside")
        return f"heaviside<{T}>({a}, {b})"
    return _no(node, ins)


@functools.cache
def _numpy_reciprocal_of_zero(dt: np.dtype) -> int:
    with np.errstate(all="ignore"):
        return int(np.reciprocal(np.zeros(1, dt))[0])


def _no(node: Node, ins: list[np.dtype]) -> str:
    raise CannotRender(f"`{node.op}` on {'/'.join(d.name for d in ins)} has no CUDA expression")


# -- kernels ---------------------------------------------------------------------------

@dataclass
class _Ctx:
    kernel: Kernel
    params: list[tuple[Node, np.dtype]] = field(default_factory=list)
    reads: list[tuple[Node, tuple[int, ...]]] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)
    names: dict[Node, str] = field(default_factory=dict)
    count: int = 0

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count - 1}"

    def param(self, node: Node, dtype: np.dtype) -> str:
        key = (node, np.dtype(dtype))
        if key not in self.params:
            self.params.append(key)
        return f"p{self.params.index(key)}"

    def read(self, node: Node, shape: tuple[int, ...]) -> str:
        key = (node, shape)
        if key not in self.reads:
            self.reads.append(key)
        return f"in{self.reads.index(key)}"


def _strided(arr: str, ndim: int, var: Callable[[int], str]) -> str:
    """``arr[i0 * arr_t0 + i1 * arr_t1]``: element strides are kernel arguments."""
    if ndim == 0:
        return f"{arr}[0]"
    return f"{arr}[" + " + ".join(f"{var(d)} * {arr}_t{d}" for d in range(ndim)) + "]"


def _node_expr(ctx: _Ctx, node: Node, space: tuple[int, ...], var: Callable[[int], str], lines: list[str]) -> None:
    """Emit ``const T vN = ...;`` for one elementwise/creation node evaluated over ``space``."""
    op = node.op
    T = ctype(node.dtype)
    if op in ("zeros", "ones", "full", "arange", "linspace", "eye"):
        expr = _creation(ctx, node, var)
        name = ctx.names[node] = ctx.fresh()
        lines.append(f"const {T} {name} = {expr};")
        return
    if op == "roll":  # (its argument, in memory, read where the element comes from: as ``cpu_render._rolled``)
        lead, moved = len(space) - node.ndim, {}
        for ax, k in roll_moves(node).items():
            i, w = var(lead + ax), ctx.fresh()
            lines.append(f"const long long {w} = ({i}) >= {k} ? ({i}) - {k} : ({i}) + {node.shape[ax] - k};")
            moved[lead + ax] = w
        name = ctx.names[node] = ctx.fresh()
        arr = ctx.read(node.args[0], space)
        lines.append(f"const {T} {name} = {_strided(arr, len(space), lambda d: moved.get(d, var(d)))};")
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
        expr = cast(operands[0], node.args[0].dtype, node.dtype)
    elif op == "where":
        c, x, y = (_arg(ctx, node, i, operands[i], BOOL if i == 0 else node.dtype) for i in range(3))
        expr = f"({c} ? {x} : {y})"
    elif op == "clip":
        x, lo, hi = (_arg(ctx, node, i, operands[i], node.dtype) for i in range(3))
        helper = "clip_f" if node.dtype.kind == "f" else "clip_i"
        ctx.helpers.add(helper)
        expr = f"{helper}<{T}>({x}, {lo}, {hi})"
    else:
        ins, out = loop_dtypes(node, dtypes)
        for d in list(ins) + [out]:
            ctype(d)
        if op == "power" and not all(d.kind == "f" for d in ins):
            exp = node.args[1]
            if exp.op != "const" or not isinstance(exp.params[1], (int, np.integer)) or int(exp.params[1]) < 0:
                raise CannotRender("integer power with a non-constant or negative exponent")
            ctx.helpers.add("ipow")
            base = _arg(ctx, node, 0, operands[0], ins[0])
            expr = cast(f"(({ctype(ins[0])})ipow((unsigned long long){base}, {int(exp.params[1])}LL))", ins[0],
                        node.dtype)
        elif (fixed := fixed_comparison(op, node.args, ins)) is not None:
            expr = "true" if fixed else "false"
        else:
            cast_args = [_arg(ctx, node, i, operands[i], ins[i]) for i in range(len(node.args))]
            expr = cast(expression(node, cast_args, ins, out, ctx.helpers), out, node.dtype)
    name = ctx.names[node] = ctx.fresh()
    lines.append(f"const {T} {name} = {expr};")


def _arg(ctx: _Ctx, node: Node, i: int, operand: str, dtype: np.dtype) -> str:
    """Operand ``i`` of ``node`` in ``dtype`` (constants become typed scalar arguments)."""
    a = node.args[i]
    if a.op == "const":
        return ctx.param(a, np.dtype(dtype))
    return cast(operand, a.dtype, np.dtype(dtype))


def _operand(ctx: _Ctx, a: Node, space: tuple[int, ...], var: Callable[[int], str], lines: list[str]) -> str:
    """A variable holding argument ``a`` at the current index (read through its strides)."""
    if a in ctx.names:
        return ctx.names[a]
    ctype(a.dtype)
    arr = ctx.read(a, space)
    name = ctx.names[a] = ctx.fresh()
    lines.append(f"const {ctype(a.dtype)} {name} = {_strided(arr, len(space), var)};")
    return name


def _param(node: Node, j: int) -> Node:
    """A derived scalar argument of a creation node (as ``cpu_render`` derives it)."""
    return Node.make("param", (node,), (j,), None, ())


def _creation(ctx: _Ctx, node: Node, var: Callable[[int], str]) -> str:
    op, p, dt = node.op, node.params, node.dtype
    if op in ("zeros", "ones"):
        return cast("0" if op == "zeros" else "1", I64, dt)
    if op == "full":
        return ctx.param(node, dt)
    if op == "eye":
        return cast(f"({var(1)} - {var(0)} == {int(p[2])}LL ? 1LL : 0LL)", I64, dt)
    if op == "arange":
        # NumPy fills b[0] = start, b[1] = start + step, then b[i] = b[0] + i * (b[1] - b[0])
        if dt.kind not in "iuf":
            raise CannotRender(f"arange of {dt}")
        i = var(0)
        b0, b1, delta = (ctx.param(_param(node, j), dt) for j in range(3))
        if dt.kind == "f":
            return f"({i} == 0 ? {b0} : ({i} == 1 ? {b1} : {b0} + ({ctype(dt)}){i} * {delta}))"
        return cast(f"((long long){b0} + {i} * (long long){delta})", I64, dt)
    if op == "linspace":
        start, stop, num, endpoint = p[0], p[1], p[2], p[3]
        if not all(isinstance(v, (int, float)) for v in (start, stop)) or dt.kind not in "iuf":
            raise CannotRender("linspace with NumPy-scalar endpoints")
        i = var(0)
        step_p, start_p, stop_p, div_p, delta_p = (ctx.param(_param(node, j), F64) for j in range(5))
        div = (num - 1) if endpoint else num
        step = (float(stop) - float(start)) / div if div > 0 else math.nan
        if div > 0 and step != 0:  # NumPy: y = arange(num) * step + start
            core = f"(double){i} * {step_p} + {start_p}"
        elif div > 0:
            core = f"((double){i} / {div_p}) * {delta_p} + {start_p}"
        else:
            core = f"(double){i} * {delta_p} + {start_p}"
        if endpoint and num > 1:
            core = f"({i} == {num - 1}LL ? {stop_p} : {core})"
        if dt.kind in "iu":
            core = f"floor({core})"
        return cast(f"({core})", F64, dt)
    raise CannotRender(f"creation op {op}")


def _decompose(dims: list[int], flat: str, indent: str = "") -> list[str]:
    """``i_d`` for each of ``dims`` (C order) from the flat index ``flat``."""
    if not dims:
        return []
    if len(dims) == 1:
        return [f"{indent}const long long i{dims[0]} = {flat};"]
    out = [f"{indent}long long q_ = {flat};"]
    for d in reversed(dims[1:]):
        out.append(f"{indent}const long long i{d} = q_ % s{d}; q_ /= s{d};")
    out.append(f"{indent}const long long i{dims[0]} = q_;")
    return out


def _flat(nd: int) -> str:
    """The C-order flat index over all axes of the iteration shape (Horner)."""
    expr = "i0" if nd else "0"
    for d in range(1, nd):
        expr = f"({expr}) * s{d} + i{d}"
    return expr


def render(kernel: Kernel) -> CudaRendered:
    """The CUDA module source for one fused kernel (kinds ew, reduce, scatter)."""
    ctx = _Ctx(kernel)
    if kernel.kind == "reduce":
        return _render_reduce(ctx)
    return _render_elementwise(ctx)


def _signature(ctx: _Ctx, nd: int, head: list[str], tail: list[str]) -> tuple[str, list[str]]:
    """Argument declarations: shapes, ``head`` sizes, scalars, inputs, outputs, ``tail``."""
    args = [f"const long long s{d}" for d in range(nd)] + head
    prelude: list[str] = []
    for i, (_, dt) in enumerate(ctx.params):
        if dt == BOOL:  # bools travel as bytes
            args.append(f"const unsigned char p{i}_b")
            prelude.append(f"const bool p{i} = p{i}_b != 0;")
        else:
            args.append(f"const {ctype(dt)} p{i}")
    for j, (node, shape) in enumerate(ctx.reads):
        args.append(f"const {ctype(node.dtype)}* __restrict__ in{j}")
        args += [f"const long long in{j}_t{d}" for d in range(len(shape))]
    for j, out in enumerate(outputs(ctx.kernel)):
        args.append(f"{ctype(out.dtype)}* __restrict__ out{j}")
    return ",\n    ".join(args + tail), prelude


def _prelude(ctx: _Ctx, block: int, code: str) -> str:
    ctx.helpers.update(h for h in CAST_HELPERS if h + "(" in code)  # (casts: ``cast`` has no context)
    return f"#define BLOCK {block}\n" + "".join(HELPERS[h] + "\n" for h in sorted(ctx.helpers))


def _render_elementwise(ctx: _Ctx) -> CudaRendered:
    k = ctx.kernel
    space = k.shape
    nd = len(space)
    var = (lambda d: f"i{d}") if nd else (lambda d: "0")
    body: list[str] = []
    dst: Node | None = None
    for node in k.nodes:
        if node.op == "setitem":
            dst = node
            val = node.args[1]
            if val.op == "const":
                expr = ctx.param(val, node.dtype)
            else:
                expr = cast(_operand(ctx, val, space, var, body), val.dtype, node.dtype)
            body.append(f"{_strided('dst', nd, var)} = {expr};")
        else:
            _node_expr(ctx, node, space, var, body)
    for j, out in enumerate(outputs(k)):
        body.append(f"out{j}[t] = {ctx.names[out]};")
    tail = []
    if dst is not None:
        tail = [f"{ctype(dst.dtype)}* dst"] + [f"const long long dst_t{d}" for d in range(nd)]
    sig, pre = _signature(ctx, nd, ["const long long n"], tail)
    lines = [f'extern "C" __global__ void jf_kernel(\n    {sig}) {{']
    lines += ["  " + ln for ln in pre]
    lines.append("  for (long long t = (long long)blockIdx.x * BLOCK + threadIdx.x; t < n; "
                 "t += (long long)gridDim.x * BLOCK) {")
    lines += _decompose(list(range(nd)), "t", "    ")
    lines += ["    " + ln for ln in body]
    lines += ["  }", "}"]
    source = _prelude(ctx, EW_BLOCK, "\n".join(lines)) + "\n" + "\n".join(lines) + "\n"
    return CudaRendered(source, "ew", ["jf_kernel"], EW_BLOCK, ctx.params, ctx.reads, outputs(k),
                        scatter=dst is not None)


# -- reductions ------------------------------------------------------------------------

def _work_dtype(node: Node) -> np.dtype:
    """The dtype NumPy computes mean/var/std in: the float result dtype (float64 for ints)."""
    return node.dtype if node.dtype.kind == "f" else F64


def acc_dtype(node: Node) -> np.dtype:
    if node.op in ("mean", "var", "std"):
        return F64
    if node.op == "sum" and node.dtype.kind == "f":
        return F64
    if node.op == "prod" and node.dtype.kind == "f":
        return float_product_dtype(node.dtype)
    if node.op in ("argmax", "argmin"):
        return node.args[0].dtype
    return node.dtype


def _inf(dt: np.dtype, negative: bool) -> str:
    if dt == np.float32:
        return f"__int_as_float((int){'0xff800000u' if negative else '0x7f800000u'})"
    return f"__longlong_as_double({'(long long)0xfff0000000000000ULL' if negative else '0x7ff0000000000000LL'})"


def _init(node: Node, acc: np.dtype) -> str:
    op = node.op
    if op in ("sum", "mean", "var", "std"):
        return cast("0", I64, acc)
    if op == "prod":
        return cast("1", I64, acc)
    if op == "any":
        return "false"
    if op == "all":
        return "true"
    big = op in ("min", "argmin")
    if acc.kind == "f":
        return _inf(acc, negative=not big)
    if acc.kind == "b":
        return "true" if big else "false"
    info = np.iinfo(acc)
    value = info.max if big else info.min
    if acc == np.int64 and value == info.min:
        return "(-9223372036854775807LL - 1LL)"
    return f"(({ctype(acc)}){value}{'ULL' if acc.kind == 'u' else 'LL'})"


def _accumulate(acc_dt: np.dtype, acc: str, v: str, op: str) -> str:
    """``acc op= v`` with integer wrap-around (no signed overflow)."""
    if acc_dt.kind in "iu":
        u = _wide_unsigned(acc_dt)
        return f"{acc} = ({ctype(acc_dt)})(({u}){acc} {op} ({u}){v});"
    return f"{acc} = {acc} {op} {v};"


def _combine(node: Node, acc: str, v: str, idx: str, src: np.dtype) -> list[str]:
    """Statements folding value ``v`` (at flat position ``idx``) into ``acc`` (one thread, in order)."""
    op = node.op
    accd = acc_dtype(node)
    if op in ("sum", "mean"):
        return [_accumulate(accd, acc, v, "+")]
    if op == "prod":
        return [_accumulate(accd, acc, v, "*")]
    if op == "any":
        return [f"{acc} = {acc} || ({v} != 0);"]
    if op == "all":
        return [f"{acc} = {acc} && ({v} != 0);"]
    nan = src.kind == "f"
    cmp = ">" if op in ("max", "argmax") else "<"
    if op in ("max", "min"):  # NaN propagates: once acc is NaN it stays
        cond = f"({v} {cmp} {acc} || {v} != {v}) && {acc} == {acc}" if nan else f"{v} {cmp} {acc}"
        return [f"if ({cond}) {acc} = {v};"]
    # argmax/argmin: the first extreme; the first NaN wins
    cond = f"{v} {cmp} {acc}" + (f" || ({v} != {v} && {acc} == {acc})" if nan else "")
    return [f"if ({cond}) {{ {acc} = {v}; {acc}_i = {idx}; }}"]


def _merge(node: Node, a: str, b: str, src: np.dtype) -> list[str]:
    """Statements folding partial ``b`` (and ``b_i``) into partial ``a``: any order, same answer."""
    op = node.op
    accd = np.dtype(F64) if op in ("var", "std") else acc_dtype(node)
    if op in ("sum", "mean", "var", "std"):
        return [_accumulate(accd, a, b, "+")]
    if op == "prod":
        return [_accumulate(accd, a, b, "*")]
    if op == "any":
        return [f"{a} = {a} || {b};"]
    if op == "all":
        return [f"{a} = {a} && {b};"]
    cmp = ">" if op in ("max", "argmax") else "<"
    nan = src.kind == "f"
    if op in ("max", "min"):
        cond = f"({b} {cmp} {a} || {b} != {b}) && {a} == {a}" if nan else f"{b} {cmp} {a}"
        return [f"if ({cond}) {a} = {b};"]
    take = f"{b} {cmp} {a} || ({b} == {a} && {b}_i < {a}_i)"
    if nan:
        take = (f"({b} != {b}) ? (({a} == {a}) || {b}_i < {a}_i) : "
                f"(({a} == {a}) && ({take}))")
    return [f"if ({take}) {{ {a} = {b}; {a}_i = {b}_i; }}"]


def _render_reduce(ctx: _Ctx) -> CudaRendered:
    k = ctx.kernel
    space, axes = k.shape, k.axes
    nd = len(space)
    outer = [d for d in range(nd) if d not in axes]
    reds = [n for n in k.nodes if k.phase[n] == "red"]
    pro = [n for n in k.nodes if k.phase[n] == "pro"]
    epi = [n for n in k.nodes if k.phase[n] == "epi"]
    two_pass = any(r.op in ("var", "std") for r in reds)
    mode = "full" if not outer and not two_pass else "block"
    var = lambda d: f"i{d}"  # noqa: E731
    for r in reds:
        ctype(r.dtype), ctype(r.args[0].dtype), ctype(acc_dtype(r))
    nred = 1
    for d in axes:
        nred *= space[d]
    # block size: enough threads for the reduced elements, within the shared-memory budget
    block = 256 if mode == "full" else max(32, min(256, 1 << max(0, (nred - 1).bit_length())))
    per_thread = sum((8 if r.op in ("var", "std") else acc_dtype(r).itemsize)
                     + (8 if r.op in ("argmax", "argmin") else 0) for r in reds)
    while block > 32 and per_thread * block > SHARED_LIMIT:
        block //= 2
    if per_thread * block > SHARED_LIMIT:
        raise CannotRender(f"{len(reds)} reductions in one kernel need too much shared memory")
    acc = {r: f"a{j}" for j, r in enumerate(reds)}

    def flat_index(r: Node) -> str:
        """argmax/argmin's answer: the position along its axis, or in the flattened array."""
        axis = dict(r.params)["axis"]
        return var(axis) if axis is not None and reduce_axes(r) else _flat(nd)  # (axis 0 of a 0-d array: 0)

    def inits(pass_no: int) -> list[str]:
        out = []
        for r in reds:
            a = acc[r]
            if r.op in ("var", "std"):
                out.append(f"double {a}_m = 0.0;" if pass_no == 0 else f"double {a} = 0.0;")
            elif pass_no == 0:
                out.append(f"{ctype(acc_dtype(r))} {a} = {_init(r, acc_dtype(r))};")
                if r.op in ("argmax", "argmin"):
                    out.append(f"long long {a}_i = 0;")
        return out

    def data_loop(pass_no: int, start: str, step: str) -> list[str]:
        """One pass over this thread's share of the reduced elements."""
        body: list[str] = []
        ctx.names.clear()  # each pass computes the prologue afresh
        dims = list(axes) if mode == "block" else list(range(nd))
        body += _decompose(dims, "rr")
        for n in pro:
            _node_expr(ctx, n, space, var, body)
        if pass_no == 0:
            for j, out in enumerate(outputs(k)):
                if out in pro:
                    body.append(f"out{j}[{'rr' if mode == 'full' else _flat(nd)}] = {ctx.names[out]};")
        for r in reds:
            v = _operand(ctx, r.args[0], space, var, body)
            a, src = acc[r], r.args[0].dtype
            if r.op in ("var", "std"):
                if pass_no == 0:
                    body.append(f"{a}_m += (double){v};")
                else:
                    w, d = _work_dtype(r), deviation_dtype(r)  # (NumPy's dtypes: a float32 square overflows)
                    body.append(f"const {ctype(d)} {a}_d = {cast(v, src, d)} - {cast(a + '_mean', w, d)};")
                    body.append(f"{a} += {cast(cast(f'{a}_d * {a}_d', d, w), w, F64)};")
                continue
            if pass_no == 1:
                continue
            vv = cast(v, src, acc_dtype(r)) if r.op not in ("any", "all") else v
            body += _combine(r, a, vv, flat_index(r), src)
        return ([f"for (long long rr = {start}; rr < nred; rr += {step}) {{"]
                + ["  " + ln for ln in body] + ["}"])

    def tree(pass_no: int, names: dict[Node, str]) -> list[str]:
        """Combine the block's partials in shared memory; every thread ends with the block's value."""
        out: list[str] = []
        todo = [r for r in reds if pass_no == 0 or r.op in ("var", "std")]
        for r in todo:
            a = names[r]
            out.append(f"sh{reds.index(r)}[threadIdx.x] = {a};")
            if r.op in ("argmax", "argmin"):
                out.append(f"sh{reds.index(r)}_i[threadIdx.x] = {a}_i;")
        out.append("__syncthreads();")
        out.append("for (int w = BLOCK / 2; w > 0; w >>= 1) {")
        out.append("  if (threadIdx.x < w) {")
        for r in todo:
            j = reds.index(r)
            T = "double" if r.op in ("var", "std") else ctype(acc_dtype(r))
            out.append(f"    {{ {T} x_ = sh{j}[threadIdx.x], y_ = sh{j}[threadIdx.x + w];")
            arg = r.op in ("argmax", "argmin")
            if arg:
                out.append(f"      long long x__i = sh{j}_i[threadIdx.x], y__i = sh{j}_i[threadIdx.x + w];")
            out += ["      " + s for s in _merge(r, "x_", "y_", r.args[0].dtype)]
            out.append(f"      sh{j}[threadIdx.x] = x_;" + (f" sh{j}_i[threadIdx.x] = x__i;" if arg else "") + " }")
        out.append("  }")
        out.append("  __syncthreads();")
        out.append("}")
        for r in todo:
            j = reds.index(r)
            out.append(f"{names[r]} = sh{j}[0];")
            if r.op in ("argmax", "argmin"):
                out.append(f"{names[r]}_i = sh{j}_i[0];")
        out.append("__syncthreads();")
        return out

    def shared() -> list[str]:
        out = []
        for j, r in enumerate(reds):
            T = "double" if r.op in ("var", "std") else ctype(acc_dtype(r))
            out.append(f"__shared__ {T} sh{j}[BLOCK];")
            if r.op in ("argmax", "argmin"):
                out.append(f"__shared__ long long sh{j}_i[BLOCK];")
        return out

    def finals() -> list[str]:
        out: list[str] = []
        ctx.names.clear()  # the epilogue reads inputs at its own index: nothing of the prologue is in scope
        for r in reds:
            a = acc[r]
            res = f"{a}_i" if r.op in ("argmax", "argmin") else a
            w = _work_dtype(r)
            src = I64 if r.op in ("argmax", "argmin") else acc_dtype(r)
            if r.op == "mean":  # NumPy: the sum in the result dtype, divided by the count
                res, src = f"({cast(a, F64, w)} / {cast('nred', I64, w)})", w
            if r.op in ("var", "std"):
                ddof = dict(r.params).get("ddof") or 0
                res, src = f"({cast(a, F64, w)} / {cast(f'((nred - {ddof!r}) > 0 ? (nred - {ddof!r}) : 0)', I64, w)})", w
                if r.op == "std":
                    res = f"{_fn('sqrt', w)}({res})"
            name = ctx.names[r] = ctx.fresh("r")
            out.append(f"const {ctype(r.dtype)} {name} = {cast(res, src, r.dtype)};")
        for node in epi:
            _node_expr(ctx, node, node.shape, _out_var(node.shape, nd, outer, axes), out)
        for j, o in enumerate(outputs(k)):
            if k.phase.get(o) in ("red", "epi"):
                out.append(f"out{j}[o] = {ctx.names[o]};")
        return out

    def mean_of(r: Node) -> str:
        w = _work_dtype(r)
        return cast(f"({cast(acc[r] + '_m', F64, w)} / {cast('nred', I64, w)})", w, w)

    body: list[str] = []
    if mode == "block":
        body.append("for (long long o = blockIdx.x; o < nout; o += gridDim.x) {")
        inner = _decompose(outer, "o")
        inner += inits(0)
        inner += data_loop(0, "threadIdx.x", "BLOCK")
        inner += tree(0, {r: (acc[r] + "_m" if r.op in ("var", "std") else acc[r]) for r in reds})
        if two_pass:
            for r in reds:
                if r.op in ("var", "std"):
                    inner.append(f"const {ctype(_work_dtype(r))} {acc[r]}_mean = {mean_of(r)};")
            inner += inits(1)
            inner += data_loop(1, "threadIdx.x", "BLOCK")
            inner += tree(1, acc)
        fin = finals()
        inner += ["if (threadIdx.x == 0) {"] + ["  " + ln for ln in fin] + ["}"]
        body += ["  " + ln for ln in inner] + ["}"]
        entries = ["jf_kernel"]
        sig, pre = _signature(ctx, nd, ["const long long nout", "const long long nred"], [])
        funcs = [("jf_kernel", sig, pre, shared() + body)]
    else:
        part = inits(0) + data_loop(0, "(long long)blockIdx.x * BLOCK + threadIdx.x", "(long long)gridDim.x * BLOCK")
        part += tree(0, acc)
        writes = []
        for j, r in enumerate(reds):
            writes.append(f"part{j}[blockIdx.x] = {acc[r]};")
            if r.op in ("argmax", "argmin"):
                writes.append(f"part{j}_i[blockIdx.x] = {acc[r]}_i;")
        part += ["if (threadIdx.x == 0) {"] + ["  " + w for w in writes] + ["}"]
        final = ["const long long o = 0;"] + inits(0)
        loop = []
        for j, r in enumerate(reds):
            T = ctype(acc_dtype(r))
            loop.append(f"const {T} b{j} = part{j}[jj];")
            if r.op in ("argmax", "argmin"):
                loop.append(f"const long long b{j}_i = part{j}_i[jj];")
            loop += _merge(r, acc[r], f"b{j}", r.args[0].dtype)
        final += ["for (long long jj = threadIdx.x; jj < nparts; jj += BLOCK) {"] + ["  " + ln for ln in loop] + ["}"]
        final += tree(0, acc)
        fin = finals()
        final += ["if (threadIdx.x == 0) {"] + ["  " + ln for ln in fin] + ["}"]
        tail = []
        for j, r in enumerate(reds):
            tail.append(f"{ctype(acc_dtype(r))}* __restrict__ part{j}")
            if r.op in ("argmax", "argmin"):
                tail.append(f"long long* __restrict__ part{j}_i")
        sig, pre = _signature(ctx, nd, ["const long long nout", "const long long nred", "const long long nparts"], tail)
        entries = ["jf_part", "jf_final"]
        funcs = [("jf_part", sig, pre, shared() + part), ("jf_final", sig, pre, shared() + final)]
    chunks = []
    for fname, sig, pre, lines in funcs:
        chunks.append(f'extern "C" __global__ void {fname}(\n    {sig}) {{\n'
                      + "".join(f"  {ln}\n" for ln in pre + lines) + "}\n")
    source = _prelude(ctx, block, "\n".join(chunks)) + "\n" + "\n".join(chunks)
    return CudaRendered(source, mode, entries, block, ctx.params, ctx.reads, outputs(k),
                        reductions=[(r, F64 if r.op in ("var", "std") else acc_dtype(r)) for r in reds])


def _out_var(space: tuple[int, ...], nd: int, outer: list[int], axes: tuple[int, ...]):
    keep = len(space) == nd
    dims = list(range(nd)) if keep else outer

    def var(d: int) -> str:
        real = dims[d]
        return "0" if keep and real in axes else f"i{real}"

    return var
