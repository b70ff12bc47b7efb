"""The op table: one row per operation the tracer knows.

Every per-op fact lives here, keyed by the op's name, so adding an op means
adding a row. A row says which NumPy function computes it (the oracle), which
family it belongs to (what the partitioner may fuse it with), and, for the
compiled backends, a C-like expression template over its operands ``{0}``,
``{1}``... The dtype and shape rules are NumPy's own: the tracer asks NumPy on
tiny probe arrays (see ``trace.probe``), so results can never drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class OpInfo:
    name: str
    family: str  # "elementwise" | "reduce" | "library" | "source" | "movement"
    fn: Callable  # the NumPy reference implementation
    nin: int = 1


# Elementwise ufuncs traced lazily. The key is the node op name (the ufunc's
# own __name__), so `np.divide` and `np.true_divide` land on one row.
_UNARY = [
    "negative", "positive", "absolute", "fabs", "sqrt", "cbrt", "square", "reciprocal",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
    "deg2rad", "rad2deg", "degrees", "radians",
    "floor", "ceil", "trunc", "rint", "sign", "signbit",
    "isnan", "isfinite", "isinf", "logical_not", "invert", "conjugate",
]
_BINARY = [
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
    "power", "float_power", "maximum", "minimum", "fmax", "fmin",
    "arctan2", "hypot", "copysign", "logaddexp", "logaddexp2", "heaviside",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
]

OPS: dict[str, OpInfo] = {}
for _name in _UNARY + _BINARY:
    _uf = getattr(np, _name)
    OPS[_uf.__name__] = OpInfo(_uf.__name__, "elementwise", _uf, _uf.nin)

# The ufunc objects we trace, for __array_ufunc__ dispatch.
UFUNCS: dict[np.ufunc, str] = {getattr(np, n): getattr(np, n).__name__ for n in _UNARY + _BINARY}

OPS["where"] = OpInfo("where", "elementwise", np.where, 3)
OPS["clip"] = OpInfo("clip", "elementwise", np.clip, 3)
OPS["astype"] = OpInfo("astype", "elementwise", lambda x, dtype: x.astype(dtype), 1)
OPS["copy"] = OpInfo("copy", "elementwise", np.array, 1)
# np.roll of a C-ordered array: each element read from where the roll moves it from (its params: the
# shifts, each in 1..n-1, and their axes). Its argument is read from memory, never computed in its kernel.
OPS["roll"] = OpInfo("roll", "elementwise", lambda x, shift, axis: np.roll(x, shift, axis), 1)


def roll_moves(node) -> dict[int, int]:
    """A ``roll`` node's shifts: axis -> k (1 <= k < the axis's length)."""
    p = dict(node.params)
    return dict(zip(p["axis"], p["shift"]))

# A functional write: a copy of the storage with one region replaced.
OPS["setitem"] = OpInfo("setitem", "elementwise", None, 2)  # type: ignore[arg-type]

REDUCTIONS = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
    "mean": np.mean, "any": np.any, "all": np.all,
    "argmax": np.argmax, "argmin": np.argmin, "var": np.var, "std": np.std,
}
for _name, _fn in REDUCTIONS.items():
    OPS[_name] = OpInfo(_name, "reduce", _fn)

# ufunc.reduce spellings that mean one of the reductions above.
UFUNC_REDUCE = {
    "add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
    "logical_and": "all", "logical_or": "any",
}

OPS["matmul"] = OpInfo("matmul", "library", np.matmul, 2)
# NumPy's scans, run by NumPy as a kernel of their own inside the graph (``lazyfuncs.scan``); their params
# are the call's keywords
for _fn in (np.cumsum, np.cumprod):
    OPS[_fn.__name__] = OpInfo(_fn.__name__, "library", _fn, 1)
# np.einsum of two or more operands, NumPy's own (``lazyfuncs.einsum``); its param: the subscripts
OPS["einsum"] = OpInfo("einsum", "library", lambda *ops, subscripts: np.einsum(subscripts, *ops), 2)
# A copy made by reshape when NumPy cannot reshape as a view.
OPS["reshape"] = OpInfo("reshape", "movement", np.reshape, 1)

# Array creation traced lazily: the node's params are the call's arguments.
CREATION = {
    "zeros": np.zeros, "ones": np.ones, "empty": np.zeros,  # `empty` is zeros: any value is valid
    "full": np.full, "arange": np.arange, "linspace": np.linspace,
    "eye": np.eye, "identity": np.identity,
}
for _name, _fn in CREATION.items():
    OPS[_name] = OpInfo(_name, "source", _fn, 0)


def family(op: str) -> str:
    info = OPS.get(op)
    return info.family if info is not None else "library"


# comparison -> the same comparison with its operands swapped (`c < x` is `x > c`)
SWAPPED = {"less": "greater", "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal",
           "equal": "equal", "not_equal": "not_equal"}


def fixed_comparison(op: str, node_args: list, ins: list[np.dtype]) -> bool | None:
    """The answer, the same for every element, of comparing an integer array with a Python int its
    loop dtype cannot hold: NumPy compares by value (`u8 < -1` is False, `u8 != 300` True) where a
    cast of the int to the loop dtype would wrap it. None when no operand is such an int."""
    if op not in SWAPPED:
        return None
    for i, a in enumerate(node_args):
        if a.op == "const" and type(a.params[1]) is int and ins[i].kind in "iu":
            info = np.iinfo(ins[i])
            c = a.params[1]
            if info.min <= c <= info.max:
                continue
            below = c < info.min
            as_x_op_c = op if i == 1 else SWAPPED[op]  # the array on the left, the int on the right
            return {"less": not below, "less_equal": not below, "greater": below, "greater_equal": below,
                    "equal": False, "not_equal": True}[as_x_op_c]
    return None


SCALAR_MATH = ("scalar_math", True)  # a power node's parameter: NumPy's scalar ``**`` (C's pow, no fast path)


def power_fast_paths(node) -> bool:
    """Does NumPy's float ``power`` loop take its shortcuts for this node: an exponent that is one value
    for the whole loop (a constant, a 0-d array, or one element broadcast: its stride 0) is 2.0 -> x * x,
    0.5 -> sqrt(x), -1.0 -> 1 / x, bits that C's pow does not always give. An exponent of the result's own
    shape takes pow, one element long as it may be (``[x] ** [2.0]``), as does a row of exponents
    broadcast along columns. A NumPy scalar's ``**`` (``s ** 2`` of ``s = x.sum()``) is scalar math: pow."""
    e = node.args[1]
    return SCALAR_MATH not in node.params and (e.op == "const" or e.ndim == 0 or e.size == 1 and e.shape != node.shape)


def const_key(node) -> tuple:
    """What a plan and a kernel's source depend on of a constant (a ``const`` node): a float's type only,
    since its value is a kernel argument read at each launch (``-GM * r / d ** 3`` with ``d`` a Python
    float from a ``math.sqrt`` each step, a rate that decays each epoch: one plan and one source for every
    step, not one per value); any other constant's value, which decides what is rendered (an integer
    power's exponent, a comparison with an int its loop dtype cannot hold: ``fixed_comparison``)."""
    v = node.params[1]
    if type(v) is float or isinstance(v, np.floating):
        return ("float", node.params[0], node.dtype)
    return ("value", node.params, node.dtype)


def free_const(node) -> bool:
    """A constant whose value a plan and its kernels take at each launch (``const_key``)."""
    return node.op == "const" and (type(node.params[1]) is float or isinstance(node.params[1], np.floating))


def render_key(node) -> tuple:
    """What of a node's constant operands' values decides whether a backend renders it, for the backends'
    caches of that answer (the rest of their keys holds only the constants' types): an integer power
    renders for a non-negative integer exponent only (``x ** 2`` once made ``x ** -3`` look renderable)."""
    if node.op == "power" and node.args[1].op == "const":
        v = node.args[1].params[1]
        return (isinstance(v, (int, np.integer)) and int(v) >= 0,)
    return ()
