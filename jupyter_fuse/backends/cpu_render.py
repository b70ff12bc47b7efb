"""Render a fused kernel as Python source for numba.

One function per kernel, its loop nest over the kernel's iteration shape, one
local variable per op, inputs read through (possibly broadcast or strided)
arrays the host prepares, scalars passed as arguments so that a new value of
``alpha`` reuses the compiled kernel. Every op is computed in the loop dtype
NumPy itself would pick (``ufunc.resolve_dtypes``) and cast to NumPy's result
dtype, so integer wrap-around, NaN and inf come out as NumPy's.

A sample, ``y = np.sin(x) ** 2 + c`` with ``x`` float64[n] and ``c`` a float
(``** 2`` is NumPy's square, as the ``**`` operator does it)::

    def _kernel_par(s0, p0, in0, out0):   # (and _kernel_seq: the same body, no threads)
        for i0 in prange(s0):
            v2 = in0[i0]
            v1 = np.sin(v2)
            v3 = (v1 * v1)
            v4 = (v3 + p0)
            out0[i0] = v4

Reduce kernels loop over output elements (rows), with one inner loop per stage
over the reduced axes; a full reduction splits its first axis into chunks run
in parallel and combines their partial results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import views
from ..fuse import Kernel
from ..ir import Node
from ..ops import OPS, SWAPPED, fixed_comparison


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


def _cast(expr: str, frm: np.dtype, to: np.dtype) -> str:
    if frm == to:
        return expr
    if to == np.bool_:
        return f"({expr} != 0)"
    if frm.kind == "f" and to == np.uint32:  # as C compilers do it on x86-64 (NumPy's result out of range)
        return f"np.uint32(np.int64({expr}))"
    if frm.kind == "f" and to.kind in "iu" and to.itemsize < 4:  # C converts to int32, then keeps the low bits:
        return f"np.{to.name}(np.int64({expr}))"  # -5.0 as uint16 is 65531 (and 40000.0 as int16 is -25536)
    if frm.kind == "f" and to == np.uint64:  # x86-64's double -> uint64: a signed conversion below 2**63, else
        # one offset by 2**63 (so NaN and < -2**63 give 2**63, and >= 2**64 gives 0, as NumPy's C cast)
        return (f"(np.uint64(np.int64({expr} - 9223372036854775808.0)) ^ np.uint64(9223372036854775808) "
                f"if {expr} >= 9223372036854775808.0 else np.uint64(np.int64({expr})))")
    return f"np.{to.name}({expr})"


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
    bad = next((d for d in types if d not in SUPPORTED_DTYPES), None)
    if bad is not None:
        raise CannotRender(f"NumPy computes `{node.op}` in {bad}")
    return list(types[:-1]), types[-1]


def expression(node: Node, args: list[str], ins: list[np.dtype], out: np.dtype, helpers: set[str]) -> str:
    """The op applied to operands already cast to the loop dtypes ``ins``."""
    op = node.op
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
        if flt:
            return f"({a} ** {b})"
        raise CannotRender("integer power needs a constant exponent")  # handled by the caller
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


_I64 = np.dtype(np.int64)


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


# -- kernels ---------------------------------------------------------------------------

@dataclass
class _Ctx:
    kernel: Kernel
    params: list[tuple[Node, np.dtype]] = field(default_factory=list)
    reads: list[tuple[Node, tuple[int, ...]]] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)
    names: dict[Node, str] = field(default_factory=dict)
    counter: int = 0

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
    if kernel.kind == "reduce":
        body, full = _render_reduce(ctx)
    else:
        body, full = _render_elementwise(ctx), False
    nd = len(kernel.shape)
    args = [f"s{d}" for d in range(nd)] + [f"p{i}" for i in range(len(ctx.params))] \
        + [a for j in range(len(ctx.reads)) for a in _read_args(j, ctx.flat.get(j))] \
        + [f"out{i}" for i in range(len(outputs(kernel)))]
    if kernel.kind == "scatter":
        args += ["dst", "od"] + [f"td_{d}" for d in ctx.dst[2]]
    if full:
        args.append("nthreads")
    sig = ", ".join(args)
    helpers = "".join(HELPERS[h] for h in sorted(ctx.helpers))
    fn_body = "\n".join("    " + ln for ln in body)
    source = (
        "import numpy as np\nfrom numba import njit, prange\n" + helpers
        # two functions, not two dispatchers of one: numba's disk cache keys by function name
        + f"\n\ndef _kernel_par({sig}):\n{fn_body}\n"
        + f"\n\ndef _kernel_seq({sig}):\n{fn_body}\n"
        + "\nkernel_par = njit(parallel=True, error_model='numpy', cache=True)(_kernel_par)\n"
        + "kernel_seq = njit(error_model='numpy', cache=True)(_kernel_seq)\n"
    )
    return Rendered(source, ctx.params, ctx.reads, outputs(kernel), full,
                    [ctx.flat.get(j) for j in range(len(ctx.reads))], ctx.dst)


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
    op = node.op
    if op in ("zeros", "ones", "full", "arange", "linspace", "eye"):
        lines.append(f"{name} = {_creation(ctx, node, var)}")
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
        x, lo, hi = (_arg(ctx, node, i, operands[i], node.dtype) for i in range(3))
        if node.dtype.kind == "f":
            ctx.helpers.add("clip_f")
            lines.append(f"{name} = clip_f({x}, {lo}, {hi})")
        else:
            lines.append(f"{name} = min(max({x}, {lo}), {hi})")
        return
    ins, out = loop_dtypes(node, dtypes)
    if op == "power" and not all(d.kind == "f" for d in ins):
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
    expr = expression(node, cast_args, ins, out, ctx.helpers)
    lines.append(f"{name} = {_result(expr, out, node.dtype)}")


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


def param_value(node: Node, dtype: np.dtype) -> Any:
    """The runtime value of a scalar argument."""
    if node.op == "const":
        # a C cast, as NumPy casts a Python int that does not fit (np.where(c, u8, -1) gives 255)
        with np.errstate(all="ignore"):
            return np.asarray(node.params[1]).astype(dtype)[()]
    if node.op == "full":
        return dtype.type(node.params[1])
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


def _dst_index(ctx: _Ctx, node: Node, var: Callable[[int], str]) -> str:
    """Where an assignment writes: the destination's storage as one flat array in its memory order
    (C, or the Fortran order a write into a Fortran-ordered input keeps: the assignment's layout; the
    launcher copies it so, or writes into such a result in place), at the region's offset and strides;
    strides other than 0 and an innermost 1 are arguments, as for reads."""
    storage, chain = node.args[0], node.params[0]
    shape, (offset, strides) = views.geometry(storage.dtype, storage.shape, node.layout, chain)
    item = storage.dtype.itemsize
    strides = tuple(st // item for st in strides)
    runtime = tuple(d for d, t in enumerate(strides) if t != 0 and not (t == 1 and d == len(strides) - 1))
    ctx.dst = (offset // item, strides, runtime)
    terms = ["od"] + [var(d) if d not in runtime else f"{var(d)} * td_{d}" for d, t in enumerate(strides) if t != 0]
    return "np.uint64(" + " + ".join(terms) + ")"


def _loops(nd: int, inner: list[str], lines: list[str]) -> list[str]:
    if nd == 0:
        return lines + inner
    for d in range(nd):
        rng = "prange" if d == 0 else "range"
        lines.append("    " * d + f"for i{d} in {rng}(s{d}):")
    return lines + ["    " * nd + ln for ln in inner]


# -- reductions ------------------------------------------------------------------------

F64, I64 = np.dtype(np.float64), np.dtype(np.int64)


def _work_dtype(node: Node) -> np.dtype:
    """The dtype NumPy computes mean/var/std in: the float result dtype (float64 for ints)."""
    return node.dtype if node.dtype.kind == "f" else F64


def _mean_expr(r: Node, acc: str, axes: tuple[int, ...]) -> str:
    w = _work_dtype(r)
    n = "*".join(f"s{d}" for d in axes) or "1"
    return _cast(f"({_cast(acc + '_m', F64, w)} / {_cast(n, I64, w)})", w, w)


def _acc_dtype(node: Node) -> np.dtype:
    if node.op == "mean" and node.dtype.kind in "iu":  # mean(dtype=int): NumPy sums in that dtype, then divides
        return node.dtype
    if node.op in ("mean", "var", "std"):
        return np.dtype(np.float64)
    if node.op in ("sum", "prod") and node.dtype.kind == "f":
        return np.dtype(np.float64)
    if node.op in ("argmax", "argmin"):
        return node.args[0].dtype
    return node.dtype


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


def _render_reduce(ctx: _Ctx) -> tuple[list[str], bool]:
    k = ctx.kernel
    for r in k.nodes:  # var(dtype=int): NumPy's mean, deviations and squares wrap in that integer dtype
        if r.op in ("var", "std") and r.dtype.kind != "f":
            raise CannotRender(f"{r.op} in {r.dtype}: NumPy's integer arithmetic")
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
    # per-element values a later stage reads again: kept in a row-sized scratch buffer
    scratch = {n: f"sc{j}" for j, n in enumerate(
        n for n in pro if any(a.storage() is n and stage.get(m, 0) > stage.get(n, 0) for m in k.nodes for a in m.args))}
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
            if stage.get(n, 0) == st:
                _node_expr(ctx, n, space, var, lines)
                if write_outputs and n in scratch:
                    lines.append(f"{scratch[n]}[{ri}] = {ctx.names[n]}")
        if write_outputs:
            for j, out in enumerate(outputs(k)):
                if out in pro and stage.get(out, 0) == st:
                    lines.append(f"out{j}[{_index(space, space, var)}] = {ctx.names[out]}")

    def operand(r: Node, lines: list[str]) -> str:
        return _operand(ctx, r.args[0], space, var, lines)

    def accumulate(pass_no: int, lines: list[str], st: int) -> None:
        """One pass over the reduced axes: the stage's prologue, folded into its reductions."""
        prologue(lines, write_outputs=pass_no == 0, st=st)
        for r in reds:
            if stage.get(r, 0) != st:
                continue
            v = operand(r, lines)
            acc = acc_names[r]
            src_dt = r.args[0].dtype
            if r.op in ("var", "std"):
                if pass_no == 0:
                    lines.append(f"{acc}_m += np.float64({v})")
                else:
                    w = _work_dtype(r)  # deviations and squares in NumPy's dtype (float32 overflows)
                    lines.append(f"{acc}_d = {_cast(v, r.args[0].dtype, w)} - {acc}_mean")
                    lines.append(f"{acc} += {_cast(f'{acc}_d * {acc}_d', w, F64)}")
                continue
            if pass_no == 1:
                continue
            accd = _acc_dtype(r)
            lines.extend(_combine(r, acc, _cast(v, src_dt, accd) if r.op not in ("any", "all") else v,
                                  flat_index(r), src_dt))

    acc_names = {r: f"a{j}" for j, r in enumerate(reds)}

    def inits(lines: list[str], pass_no: int, st: int = 0) -> None:
        for r in reds:
            if stage.get(r, 0) != st:
                continue
            acc = acc_names[r]
            if r.op in ("var", "std"):
                lines.append(f"{acc}_m = 0.0" if pass_no == 0 else f"{acc} = 0.0")
            elif pass_no == 0:
                lines.append(f"{acc} = {_init(r, _acc_dtype(r))}")
                if r.op in ("argmax", "argmin"):
                    lines.append(f"{acc}_i = 0")

    def finals(lines: list[str], st: int = 0) -> None:
        n_expr = "*".join(f"s{d}" for d in axes) or "1"
        for r in reds:
            if stage.get(r, 0) != st:
                continue
            acc = acc_names[r]
            res = f"{acc}_i" if r.op in ("argmax", "argmin") else acc
            w = _work_dtype(r)
            src = np.dtype(np.int64) if r.op in ("argmax", "argmin") else _acc_dtype(r)
            if r.op == "mean":  # NumPy: the sum in the result dtype, divided by the count
                res, src = f"({_cast(acc, F64, w)} / {_cast(n_expr, I64, w)})", w
            if r.op in ("var", "std"):
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

    red_dims = list(axes)
    lines: list[str] = []
    if not full:
        # per output element (one row for a softmax): each stage is a pass over the reduced axes
        body: list[str] = [f"{buf} = np.empty({'*'.join(f's{d}' for d in axes)}, np.{n.dtype.name})"
                           for n, buf in scratch.items()]
        for st in stages:
            inits(body, 0, st)
            acc1: list[str] = []
            accumulate(0, acc1, st)
            body += loops(red_dims, acc1, False)
            if any(r.op in ("var", "std") and stage.get(r, 0) == st for r in reds):
                for r in reds:
                    if r.op in ("var", "std") and stage.get(r, 0) == st:
                        body.append(f"{acc_names[r]}_mean = {_mean_expr(r, acc_names[r], axes)}")
                inits(body, 1, st)
                acc2: list[str] = []
                accumulate(1, acc2, st)
                body += loops(red_dims, acc2, False)
            finals(body, st)
            _epilogue(ctx, [n for n in epi if stage.get(n, 0) == st], body, k, axes, var, write=False)
        _epilogue(ctx, [], body, k, axes, var)
        if not scratch:
            return loops(outer, body, True), False
        # rows in chunks, one scratch allocation per chunk rather than per row
        o0 = outer[0]
        alloc, rest = body[:len(scratch)], body[len(scratch):]
        inner = loops(outer, rest, False, {o0: (f"(c * s{o0}) // nch", f"((c + 1) * s{o0}) // nch")})
        return ([f"nch = max(1, min(4 * nthreads, s{o0}))", "for c in prange(nch):"]
                + ["    " + ln for ln in alloc + inner]), True
    # a full reduction: chunks of the first reduced axis run in parallel, then combine
    a0 = red_dims[0]
    lines.append(f"nch = max(1, min(nthreads, s{a0}))")
    for r in reds:
        acc = acc_names[r]
        accd = np.dtype(np.float64) if r.op in ("var", "std") else _acc_dtype(r)
        lines.append(f"{acc}_p = np.empty(nch, np.{accd.name})")
        if r.op in ("argmax", "argmin"):
            lines.append(f"{acc}_pi = np.zeros(nch, np.int64)")
    bounds = {a0: (f"(c * s{a0}) // nch", f"((c + 1) * s{a0}) // nch")}
    chunk: list[str] = []
    inits(chunk, 0)
    acc1 = []
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
