"""LazyArray: the tracer. It holds no logic beyond turning operations into nodes.

State model (what makes in-place operations and views drop-in):

* a :class:`Buffer` is one piece of mutable storage; ``buffer.node`` is the IR
  node of its *current* contents. A write never mutates anything: it makes a
  new node (``setitem``, or the op result itself) and points the buffer at it,
  so graphs built before the write keep reading the old version.
* a :class:`LazyArray` is a buffer plus a view chain (``views.py``). Two
  arrays that alias share a buffer; writing through one is seen by the other.
* an array read from the user's namespace is a view of its root base array,
  whose buffer remembers that root as ``origin``: at the end of the cell the
  final contents are copied into the user's own object.

All rules (result dtypes, broadcasting, which index is a view, what raises)
are NumPy's: operations are first tried on tiny probes or ghosts, so NumPy
raises its own exception at the user's line before anything is traced.
"""

from __future__ import annotations

import contextlib
import dis
import math
import opcode
import operator
import sys
import warnings
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import fperrors, fstrings, views
from .fperrors import errors_raise
from .ir import Node
from .ops import OPS, REDUCTIONS, SCALAR_MATH, SWAPPED, UFUNC_REDUCE, UFUNCS
from .session import Session, active

_SCALARS = (bool, int, float, complex, np.generic)
_LAZY_KINDS = "biufc"  # dtype kinds we trace; object/str arrays stay eager


class Unsupported(Exception):
    """Raised internally when an operation cannot be traced; callers fall back."""


class Buffer:
    __slots__ = ("node", "origin", "dirty", "__weakref__")

    def __init__(self, node: Node, origin: np.ndarray | None = None) -> None:
        self.node, self.origin, self.dirty = node, origin, False


def session() -> Session:
    s = active()
    if s is None:  # pragma: no cover - a LazyArray outlived its cell: a bug
        raise RuntimeError("jupyter_fuse: a lazy array was used outside a %%fuse cell")
    return s


def probe(x: Any) -> Any:
    """A tiny stand-in with x's dtype semantics (Python scalars stay weak)."""
    if isinstance(x, LazyArray):
        return np.zeros((), x.dtype)
    return x


def _quiet():
    return np.errstate(all="ignore")


# -- making lazy arrays ------------------------------------------------------

def fresh(node: Node, scalar: bool = False, s: Session | None = None) -> "LazyArray":
    """A new array owning a new buffer holding ``node``."""
    if s is None:
        s = session()
    buf = Buffer(node)
    lz = LazyArray(s, buf, (), scalar=scalar)
    s.hold(buf)
    if errors_raise():  # under np.errstate(...='raise') NumPy raises FloatingPointError at this very line
        s.evaluate(list(node.args))  # (pending arguments were made outside it: they do not raise)
        s.evaluate([node], errors=True)
    return lz




def wrap_array(s: Session, arr: np.ndarray, origin: bool = True) -> "LazyArray":
    """A concrete array as a lazy input. Arrays sharing a root base share a buffer."""
    cached = s.wrapped.get(id(arr))
    if cached is None:
        cached = s.made.get(id(arr))
    if cached is not None:
        return cached
    root = root_of(arr)
    buf = s.buffers.get(id(root))
    if buf is None:
        buf = s.made_buffers.get(id(root))
    # storage an eager call made (``origin`` False) is the session's while a lazy array holds it: held
    # weakly, so that a loop calling NumPy every step does not keep every step's arrays live (each flush
    # would visit them all)
    made = not origin and buf is None
    if buf is None:
        buf = Buffer(s.add_input(root), origin=root)
        (s.made_buffers if made else s.buffers)[id(root)] = buf
        s.keepalive.append(root)
    chain: tuple = ()
    if root is not arr:
        offset = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        chain = (("asstrided", (offset, arr.shape, arr.strides)),)
    lz = LazyArray(s, buf, chain, origin=arr if origin else None, writeable=arr.flags.writeable)
    (s.made if made else s.wrapped)[id(arr)] = lz
    s.keepalive.append(arr)
    return lz


def root_of(arr: np.ndarray) -> np.ndarray:
    """The storage an array read from outside is traced as a view of (its input slot's array)."""
    if arr.base is None:  # owns its memory (the common case; guards and replay call this a lot)
        return arr
    root = _root_base(arr)
    if (root.dtype != arr.dtype or not (root.flags.c_contiguous or root.flags.f_contiguous)
            or (arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]) % arr.itemsize):
        root = arr
    return root


def _root_base(arr: np.ndarray) -> np.ndarray:
    """The array owning ``arr``'s memory, also through as_strided's DummyArray wrapper (whose
    ``.base`` is the real array): views of one root share one buffer, so writes are seen by all."""
    root = arr
    while True:
        base = root.base
        if not isinstance(base, np.ndarray) and isinstance(getattr(base, "base", None), np.ndarray):
            base = base.base
        if not isinstance(base, np.ndarray):
            return root
        root = base


def operand(x: Any) -> "LazyArray | Any":
    """Normalize an operand: LazyArray and Python/NumPy scalars pass; array-likes wrap."""
    if isinstance(x, LazyArray) or isinstance(x, _SCALARS):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in _LAZY_KINDS:
            raise Unsupported(f"{x.dtype} arrays are not traced")
        return wrap_array(session(), x, origin=False)
    if isinstance(x, (list, tuple)) and not _contains_lazy(x):
        arr = np.asarray(x)
        if arr.dtype.kind not in _LAZY_KINDS:
            raise Unsupported(f"{arr.dtype} arrays are not traced")
        return wrap_array(session(), arr, origin=False)
    raise Unsupported(f"operand of type {type(x).__name__}")


def node_of(x: Any) -> Node:
    return x._current() if isinstance(x, LazyArray) else session().const(x)


def _contains_lazy(x: Any) -> bool:
    if isinstance(x, LazyArray):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_lazy(i) for i in x)
    if isinstance(x, dict):
        return any(_contains_lazy(i) for i in x.values())
    return False


# -- the operation families -----------------------------------------------------

# NumPy's answer (result dtype, and whether a 0-d result is an array) for an op on operands of these
# kinds: asked once per kind by running the ufunc on probes, then remembered (a loop traces the same
# op on the same dtypes thousands of times). Keys hold what NumPy's rule reads: array dtypes, the
# type of a Python scalar, and for ints the sign and bit length (NEP 50 rejects out-of-range ints,
# and probes of negative integer powers raise), so a kind never hides a different answer.
_RULES: dict[tuple, tuple[np.dtype, bool]] = {}
_OUT_CASTS: dict[tuple, bool] = {}  # (op, out dtype, operand kinds) NumPy let write into ``out=``
_ASSIGNS: dict[tuple, bool] = {}  # (dtype, value kind, value shape, target shape) NumPy let through as is
_BROADCAST: dict[tuple, tuple[int, ...]] = {}


def _remember(memo: dict, key: Any, answer: Any, limit: int = 4096) -> Any:
    """Keep NumPy's ``answer`` for ``key`` in a bounded memo (a long session's distinct keys must not
    grow it for ever: past ``limit`` it starts again)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = answer
    return answer


def _kind(a: Any) -> Any:
    if isinstance(a, LazyArray):
        return a.dtype
    t = type(a)
    if t is int:
        return (int, a < 0, a.bit_length())
    if isinstance(a, np.generic):
        return (a.dtype, a < 0) if a.dtype.kind in "iu" else a.dtype
    return t


def _shape_of(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The broadcast shape; NumPy's own ValueError when there is none."""
    first = shapes[0]
    if len(shapes) == 1 or len(shapes) == 2 and shapes[1] == first or all(sh == first for sh in shapes):
        return first
    key = tuple(shapes)
    got = _BROADCAST.get(key)
    if got is None:
        got = _remember(_BROADCAST, key, np.broadcast_shapes(*shapes))
    return got


def elementwise(op: str, args: list[Any], dtype: Any = None, params: tuple = (),
                keep_order: bool = True) -> "LazyArray | Node":
    """An elementwise op on operands; dtype and broadcasting by NumPy's rules. ``keep_order``: the result
    is a new array in NumPy's memory order (False: it is only written into an existing one, and may come
    back as its node alone: no array is made only to be written and dropped)."""
    # the hot path of every traced operator: each operand once, in one loop (a comprehension is a call of its
    # own in Python 3.11), each array's node once, NumPy's rule from memory
    given, args, nodes, shapes, key = args, [], [], [], [op, dtype, False]
    for a in given:
        if type(a) is not LazyArray:
            a = operand(a)
        if type(a) is LazyArray:
            n = a._current()
            shapes.append(n.shape)
            key.append(n.dtype)
        else:
            n = None
            key.append(_kind(a))
        args.append(a)
        nodes.append(n)
    try:
        shape = _shape_of(shapes) if shapes else ()
    except ValueError:
        shape = None
    if shape is not None:
        key[2] = 0 in shape
        rule = _RULES.get(tuple(key))
        if rule is not None:
            return _bind_elementwise(op, args, nodes, dtype, params, shape, keep_order, *rule)
    fn = OPS[op].fn
    kw = {} if dtype is None else {"dtype": dtype}
    with _quiet(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if shape is None:  # let NumPy raise its own message
            fn(*[np.broadcast_to(probe(a), a.shape) if isinstance(a, LazyArray) else a for a in args], **kw)
            shape = np.broadcast_shapes(*shapes)  # (raises, if the probe did not)
        # an empty result computes no element, so raises nothing (`empty_int ** -1`): probe with empties
        empty = 0 in shape
        r = fn(*[np.empty(0, a.dtype) if empty and isinstance(a, LazyArray) else probe(a) for a in args], **kw)
    rule = _remember(_RULES, (op, dtype, empty, *map(_kind, args)), (np.asarray(r).dtype, isinstance(r, np.ndarray)),
                     limit=8192)
    return _bind_elementwise(op, args, nodes, dtype, params, shape, keep_order, *rule)


def _bind_elementwise(op: str, args: list[Any], nodes: list, dtype: Any, params: tuple, shape: tuple[int, ...],
                      keep_order: bool, rdtype: np.dtype, array_result: bool) -> "LazyArray":
    if op == "power" and rdtype.kind in "iu" and type(args[1]) is LazyArray:
        # NumPy raises on a negative exponent in the data: run it now, at this line, as NumPy would
        from .lazynp import eager_call

        return eager_call(OPS[op].fn, tuple(args), {} if dtype is None else {"dtype": dtype}, "np.power",
                          "integer power with an array exponent can raise (negative exponents): it runs eagerly")
    if dtype is not None:
        params = params + (("dtype", np.dtype(dtype).str),)
    s = session()  # (not an operand's: a lazy value outliving its cell must not trace into it)
    axes = _ufunc_order(op, args, shape, dtype) if keep_order and len(shape) > 1 else None
    if axes is not None:  # NumPy's order='K': computed along the inputs' memory order, seen through a transpose
        args = [_along(a, shape, axes) for a in args]
        node = s.bind(op, tuple(node_of(a) for a in args), params, rdtype, tuple(shape[d] for d in axes))
        return fresh(node, s=s)._view("transpose", views.inverse(axes))
    operands = []
    for a, n in zip(args, nodes):
        operands.append(s.const(a) if n is None else _filled(s, n) if n.kind == "view" else n)
    node = s.bind(op, tuple(operands), params, rdtype, shape)
    if not keep_order and not errors_raise():  # (under a raising errstate, fresh runs it at this line)
        return node
    # NumPy's rule: a 0-d ufunc result is a NumPy scalar (even from 0-d arrays); the probe shows it
    return fresh(node, shape == () and not array_result, s)


_FILLS = frozenset({"zeros", "ones", "full"})


def _filled(s: Session, node: Node) -> Node:
    """An elementwise operand that is a window of a constant fill (``np.zeros``, ...) is that fill, over the
    window's shape: computed where it is read, not read from memory. (Elementwise operands only: the
    result's memory order was decided from the view itself; unfused, every op runs as NumPy runs it.)"""
    if node.kind == "view" and node.args[0].op in _FILLS and s.fuses:
        src = node.args[0]
        return s.bind(src.op, (), (node.shape, *src.params[1:]), src.dtype, node.shape, count=False)
    return node


def _forwarded(s: Session, value: Node, dest: Node) -> Node | None:
    """``value``, about to be written through the same view as assignment ``dest`` wrote, with its reads
    of that region (``out[r] += a`` twice: the second add reads the first's sum) replaced by the value
    written there; None if it reads ``dest`` in any other way. Only nodes made after ``dest`` can read
    it, so the walk stops at older ones, and rebuilds what it changes (keeping their lines)."""
    readers = s.readers.get(dest)
    if readers is None or None in readers:  # who reads it is not known (it was written before the last
        return None  # evaluation), or another array holds it: it stays
    if not readers:  # no op reads it (every op is bound, session.bind, or remade, session.remake): only a
        return None if value is dest or value._base is dest else value  # window of it, as the value itself
    chain, written, floor = dest.params[0], dest.args[1], dest.serial
    here = [s.line()]
    for r in readers:  # (at once, without a walk: a read of another window, as a stencil's, keeps it)
        if s.lines.get(r) != here:  # read by another statement: values made since may depend on it through
            return None  # arrays the cell still holds (a solver's b, read by the pressure loop), which a rebuild would copy
        for a in r.args:
            if a is dest or a._base is dest and (a.params != chain or a.args[0] is not dest):
                return None
    order: list[Node] = []  # the nodes made after ``dest``, arguments first
    stack, seen = [(value, False)], set()
    while stack:
        n, done = stack.pop()
        if done:
            order.append(n)
        elif n.serial > floor and n not in seen:
            seen.add(n)
            stack.append((n, True))
            stack.extend((a, False) for a in n.args)
    if not seen.issuperset(readers):  # something else read the old write (a value kept for later): it stays
        return None
    new: dict[Node, Node] = {}
    for n in order:
        if n._base is dest:  # a window of the old write's memory: only the written one is its value
            if n.args[0] is not dest or n.params != chain or n.shape != written.shape or n.dtype != written.dtype:
                return None
            new[n] = written
            continue
        if dest in n.args:
            return None
        args = tuple([new.get(a, a) for a in n.args])
        if args != n.args:
            new[n] = s.remake(n, args)
    return new.get(value, value)


def _written(out: "LazyArray", args: list[Any]) -> "LazyArray | None":
    """For ``op(..., out=out)``: the value the last write into out's region put there, as an operand,
    when the write about to be made will take that one over (``_forwarded``: nothing read it yet, and
    no other operand reads it). Asked before the op is traced, so no node reading memory is made only
    to be rebuilt. With no op reading the write, an operand reads it only as a window of it."""
    s, dest = out._s, out._buf.node
    if dest.op != "setitem" or dest.params[0] != out._chain or s.readers.get(dest) != [] or not s.fuses \
            or out.size < 2:  # (one element: see LazyArray._write)
        return None
    written = dest.args[1]
    if written.shape != dest.params[1] or written.dtype != dest.dtype:
        return None
    for a in args:
        if type(a) is LazyArray and a is not out and (a._buf.node is dest):  # (x += x[::-1]: another window)
            return None
    return LazyArray(s, Buffer(written), ())


def _c_ordered(a: Any) -> bool:
    """Not an array, or one laid out in C order (the common case: answered without a ghost)."""
    if not isinstance(a, LazyArray) or not a.ndim:
        return True
    shape, layout = a._geometry()  # (an op's layout is None: C order; a view's or an input's is its strides)
    # (an empty view is C-contiguous by NumPy's flags, yet a reduction of it still follows its strides)
    return layout is None or 0 not in shape and views.c_contiguous(shape, layout[1], a.dtype.itemsize)


def _row_major(a: "LazyArray") -> bool:
    """A window whose axes run in C order, though with gaps (``u[1:-1, 2:]``, ``x[::2]``): NumPy's
    order='K' keeps C order for operands like that. Answered from the strides alone, so a 2-D stencil's
    every op does not build a cache key; size-1 axes (any stride) and reversed ones go the long way."""
    shape, layout = a._geometry()
    if layout is None:
        return True
    strides = layout[1]
    last = None
    for n, st in zip(shape, strides):
        if n < 2 or st <= 0 or last is not None and st >= last:
            return False
        last = st
    return True


_ORDERS: dict[tuple, tuple[int, ...] | None] = {}  # NumPy's order='K' answers, by what decides them


def _ufunc_order(op: str, args: list[Any], shape: tuple[int, ...], dtype: Any) -> tuple[int, ...] | None:
    """The axes, outermost first, of the memory order NumPy gives this elementwise result (None: C).
    Remembered by what decides it (operand dtypes, shapes and strides, not where they start): a loop's
    slice updates ask the same question every step."""
    for a in args:  # (a loop, not all(...) of a generator: asked at every traced op on 2-D arrays)
        if not (_c_ordered(a) or _row_major(a)):
            break
    else:
        return None
    key = (op, dtype, shape, *map(_order_part, args))
    try:
        return _ORDERS[key]
    except KeyError:
        pass
    except TypeError:  # (an unhashable dtype argument: ask NumPy)
        return _ufunc_order_now(op, args, shape, dtype)
    return _remember(_ORDERS, key, _ufunc_order_now(op, args, shape, dtype))


def _order_part(a: Any) -> Any:
    """What of an operand decides NumPy's order: an array's dtype, shape and strides; a scalar's type."""
    if isinstance(a, LazyArray):
        shape, layout = a._geometry()
        return a.dtype, shape, layout and layout[1]
    return a.dtype if isinstance(a, np.generic) else type(a)


def _ufunc_order_now(op: str, args: list[Any], shape: tuple[int, ...], dtype: Any) -> tuple[int, ...] | None:
    arrays = [a for a in args if isinstance(a, LazyArray) and a.ndim]
    fn = _CLIP_UFUNC if op == "clip" else OPS[op].fn  # (np.clip is the ufunc np._core.umath.clip)
    try:  # NumPy's contiguous fast path applies only when no array operand is cast to the loop dtype
        types = tuple(a.dtype if isinstance(a, (LazyArray, np.generic)) else np.dtype(bool) if type(a) is bool
                      else type(a) for a in args)  # (a Python int, float or complex stays weak)
        sig = {} if dtype is None else {"signature": (None,) * len(args) + (np.dtype(dtype),)}
        loop = fn.resolve_dtypes(types + (None,), **sig) if isinstance(fn, np.ufunc) else None
        cast = loop is None or any(isinstance(a, LazyArray) and a.ndim and a.dtype != t for a, t in zip(args, loop))
    except (TypeError, ValueError):
        cast = True
    return views.ufunc_order(shape, [a._ghost() for a in arrays], cast)


_CLIP_UFUNC = np._core.umath.clip


def _along(a: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """Operand ``a`` of a result of ``shape``, its axes put in the order ``axes`` (views: nothing is copied)."""
    if not isinstance(a, LazyArray) or not a.ndim:
        return a
    if a.shape != shape:
        a = a._view("broadcast", shape, writeable=False)
    return a._view("transpose", axes)


def astype(x: "LazyArray", dtype: Any, copy: bool = True, count: bool = True, order: str | None = None) -> "LazyArray":
    """A cast (or copy); ``order`` is NumPy's memory order of the new array (None: C, for internal casts
    whose value is only written into another array)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _LAZY_KINDS:
        raise Unsupported(f"astype({dtype})")
    if dtype == x.dtype and not copy:
        return x
    axes = None if order is None or x.ndim < 2 else views.order_axes(x._ghost(), order)
    if axes is not None:  # a copy along that memory order, seen through a transpose
        return astype(x._view("transpose", axes), dtype, copy, count)._view("transpose", views.inverse(axes))
    s = session()
    src = x._current()
    if dtype == x.dtype:
        node = s.bind("copy", (src,), (), dtype, x.shape, count=count)
    else:
        node = s.bind("astype", (src,), (dtype.str,), dtype, x.shape, count=count)
    return fresh(node, scalar=x.scalar)


def reduction(name: str, x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
              ddof: Any = None) -> "LazyArray":
    x = operand(x)
    if not isinstance(x, LazyArray):
        x = wrap_array(session(), np.asarray(x), origin=False)
    kw: dict[str, Any] = {"axis": axis, "keepdims": keepdims}
    if dtype is not None:
        kw["dtype"] = dtype
    if ddof is not None:
        kw["ddof"] = ddof
    try:
        rdtype, array_result = _reduce_rule(name, x, kw)
    except Exception:  # noqa: BLE001 - NumPy's own, raised again by NumPy on the values
        # NumPy refuses it on a probe: on the real values its first error may be another one (a std with
        # dtype=int64 cannot cast its sqrt, but under np.errstate(all='raise') with ddof past the count
        # its division by zero raises first): NumPy itself runs it, and raises what it raises there
        from .lazynp import eager_call

        return eager_call(REDUCTIONS[name], (x,), kw, f"np.{name}", f"{name}() that NumPy refuses is not traced")
    if x.ndim == 0:  # NumPy lets a 0-d array reduce over axis 0 or -1: a no-op, the axis kept as given
        axes, naxis = (), None if axis is None else _hashable_axis(axis)
    elif name in ("argmax", "argmin"):
        axes = tuple(range(x.ndim)) if axis is None else (normalize_axis_index(axis, x.ndim),)
        naxis: Any = None if axis is None else axes[0]
    else:
        axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
        naxis = None if axis is None else tuple(sorted(axes))
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    # (var and std of an empty array reduce NumPy's `x - mean`: a new empty array, C-ordered)
    order = None if x.ndim < 2 or name in ("argmax", "argmin") or _c_ordered(x) or (
        name in ("var", "std") and 0 in x.shape) else views.reduce_order(x._ghost())
    if order is not None:  # NumPy reduces along the input's memory order and keeps it (order='K'): so do we
        kept = [d for d in order if keepdims or d not in axes]
        r = reduction(name, x._view("transpose", order), tuple(order.index(d) for d in axes), dtype, keepdims, ddof)
        r = r._view("transpose", views.inverse(tuple(kept)))
        if name == "mean" and dtype is None and x.dtype == np.float16 and r.ndim > 1:
            # NumPy sums float16 in float32 and casts the mean back by np.float16(...): a copy in order='K',
            # whose strides are the order's own (a size-1 axis among them gets another stride)
            r = astype(r, r.dtype, count=False, order="K")
        return r
    params = (("axis", naxis), ("keepdims", bool(keepdims)),
              ("dtype", None if dtype is None else np.dtype(dtype).str), ("ddof", ddof))
    node = session().bind(name, (x._current(),), params, rdtype, shape)
    # keepdims on a 0-d array gives an array; anything a NumPy scalar reduces to is a scalar
    return fresh(node, scalar=shape == () and (x.scalar or not array_result))


_REDUCE_RULES: dict[tuple, tuple[np.dtype, bool]] = {}  # NumPy's answers for a reduction, by what decides them


def _reduce_rule(name: str, x: "LazyArray", kw: dict) -> tuple[np.dtype, bool]:
    """The result dtype of reduction ``name`` on ``x`` with NumPy's keywords ``kw``, and whether NumPy
    gives an array (not a scalar): NumPy validates axis/dtype/ddof on a tiny array of x's dtype and rank
    (raising its own error), once per distinct question (a loop's ``float(r.sum())`` asks it every step)."""
    tiny = tuple(min(d, 1) for d in x.shape)
    key: tuple | None = (name, x.dtype, tiny, *((k, type(v), v) for k, v in kw.items()))
    try:
        got = _REDUCE_RULES.get(key)
    except TypeError:  # (an axis given as a list: asked of NumPy every time)
        key, got = None, None
    if got is None:
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = REDUCTIONS[name](np.zeros(tiny, x.dtype), **kw)
        got = (np.asarray(r).dtype, isinstance(r, np.ndarray))
        if key is not None:
            _remember(_REDUCE_RULES, key, got)
    return got


def _hashable_axis(axis: Any) -> Any:
    return tuple(map(operator.index, axis)) if isinstance(axis, (tuple, list)) else operator.index(axis)


_MATMUL_RULES: dict[tuple, np.dtype] = {}  # NumPy's result dtype of a matmul, by operand dtypes and probe shapes


def matmul(a: Any, b: Any) -> "LazyArray":
    a, b = operand(a), operand(b)
    if not isinstance(a, LazyArray):
        a = wrap_array(session(), np.asarray(a), origin=False)
    if not isinstance(b, LazyArray):
        b = wrap_array(session(), np.asarray(b), origin=False)
    sa, sb = a.shape, b.shape
    if len(sa) == 0 or len(sb) == 0:
        np.matmul(np.zeros(sa, a.dtype), np.zeros(sb, b.dtype))  # raises NumPy's ValueError
    # Probes keep the contracted dimension (so mismatches raise) and shrink the rest.
    pa = sa if len(sa) == 1 else (1,) * (len(sa) - 2) + (min(sa[-2], 1), sa[-1])
    pb = sb if len(sb) == 1 else (1,) * (len(sb) - 2) + (sb[-2], min(sb[-1], 1))
    key = (a.dtype, b.dtype, pa, pb)
    rdtype = _MATMUL_RULES.get(key)
    if rdtype is None:  # (NumPy raises its own error for a mismatch; asked once per distinct question)
        rdtype = _remember(_MATMUL_RULES, key, np.matmul(np.zeros(pa, a.dtype), np.zeros(pb, b.dtype)).dtype)
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    core = (sa[-2:-1] if len(sa) > 1 else ()) + (sb[-1:] if len(sb) > 1 else ())
    axes = views.matmul_batch_order(batch, [a._ghost(), b._ghost()]) if len(batch) > 1 else None
    if axes is not None:  # NumPy's loop over the batch axes follows the operands' memory: computed along
        # that order, seen through a transpose (the matrix axes stay last; a vector has no batch axes)
        inner = axes + (len(batch), len(batch) + 1)
        a, b = (x if x.ndim < 2 else _along(x, batch + x.shape[-2:], inner) for x in (a, b))
        batch = tuple(batch[d] for d in axes)
    shape = batch + core
    node = session().bind("matmul", (a._current(), b._current()), (), rdtype, shape)
    out = fresh(node, scalar=shape == ())
    if axes is None:
        return out
    return out._view("transpose", views.inverse(axes) + tuple(range(len(axes), len(shape))))


def ufunc_out(op: str, args: list[Any], out: "LazyArray") -> "LazyArray":
    """``op(*args, out=out)``, which is also what ``out op= other`` means."""
    args = [operand(a) for a in args]
    fn = OPS[op].fn
    # NumPy's same_kind casting check comes first (on empties: no values), asked once per kind of call
    key = (op, out.dtype, *[(int, a) if type(a) is int else _kind(a) for a in args])  # (an int's range matters)
    if key not in _OUT_CASTS:
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*[np.empty(0, a.dtype) if isinstance(a, LazyArray) else a for a in args], out=np.empty(0, out.dtype))
        _remember(_OUT_CASTS, key, True)
    inner = _storage_order(out, args)
    if inner is not None:  # ``out`` is a transposed view of a new array (order='K'): compute along its storage
        ufunc_out(op, [_along(a, out.shape, inner) for a in args], out._view("transpose", inner))
        return out
    if op == "power" and out.dtype.kind in "iu" and isinstance(args[1], LazyArray) and args[1].dtype.kind in "iu":
        # a negative exponent in the data raises: NumPy has written the elements before it into ``out`` by then
        from .lazynp import eager_call

        return eager_call(fn, tuple(args), {"out": out}, "np.power", "integer power with an array exponent can "
                          "raise (negative exponents): it runs eagerly, in place", mutates="out")
    taken = _written(out, args)
    if taken is not None:  # `out op= x` again on a region whose last write nothing else read (see _forwarded)
        args = [taken if a is out else a for a in args]
    raised = None
    try:
        if out.size:
            res = elementwise(op, args, keep_order=False)  # (written into ``out``: its layout is out's)
        else:  # NumPy's loop runs over ``out``'s elements: none, so no floating-point error is raised either
            with fperrors.quiet():
                res = elementwise(op, args, keep_order=False)
    except FloatingPointError as e:  # NumPy checks the error flags after the loop: ``out`` holds the results
        with fperrors.quiet():
            res, raised = elementwise(op, args, keep_order=False), e
    if type(res) is not Node:
        if not isinstance(res, LazyArray):  # an eager integer power of 0-d operands gave a NumPy scalar
            res = operand(np.asarray(res))
        res = res._current()
    if res.shape != out.shape:  # NumPy: non-broadcastable output operand
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*[np.broadcast_to(probe(a), a.shape) if isinstance(a, LazyArray) else a for a in args],
               out=np.empty(out.shape, out.dtype))
    if res.dtype != out.dtype:
        res = astype(LazyArray(out._s, Buffer(res), ()), out.dtype, count=False)._current()
    out._write(res, "output array is read-only", count=False)
    if raised is not None:
        raise raised
    return out


def _storage_order(out: "LazyArray", args: list[Any]) -> tuple[int, ...] | None:
    """The axes that make ``out`` its whole storage again, when it is a transposed view of it (a result in
    NumPy's memory order) and the operands broadcast to it: the write then replaces the storage, and fuses."""
    if not out._chain or len(out.shape) < 2 or _c_ordered(out) or _row_major(out):
        return None  # (a window in C order, with gaps: like_order keeps C order; answered without a ghost)
    axes = views.like_order(out._ghost())
    if axes is None or out._view("transpose", axes)._current() is not out._buf.node:
        return None
    try:
        shapes = [a.shape for a in args if isinstance(a, LazyArray)]
        return axes if np.broadcast_shapes(out.shape, *shapes) == out.shape else None
    except ValueError:
        return None


def _inplace(op: str, target: "LazyArray", other: Any) -> "LazyArray":
    return ufunc_out(op, [target, other], target)


# -- the lazy array ------------------------------------------------------------

class LazyArray:
    """A NumPy array that has not been computed yet."""

    __slots__ = ("_s", "_buf", "_chain", "_cache", "_origin", "scalar", "_writeable", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, s: Session, buf: Buffer, chain: tuple, origin: np.ndarray | None = None,
                 scalar: bool = False, writeable: bool = True) -> None:
        self._s, self._buf, self._chain = s, buf, chain
        self._cache: tuple | None = None  # (storage, view node or None, shape, layout): see _window
        self._origin, self.scalar, self._writeable = origin, scalar, writeable

    # -- graph ------------------------------------------------------------------
    def _current(self) -> Node:
        """The node of this array's current contents."""
        storage = self._buf.node
        if not self._chain:
            return storage
        cache = self._window(storage)
        if cache[1] is None:
            self._cache = cache = (storage, Node.make("view", (storage,), self._chain, storage.dtype, cache[2],
                                                      cache[3]), cache[2], cache[3])
        return cache[1]

    def _geometry(self) -> tuple[tuple[int, ...], Any]:
        """(shape, layout) of this array's current node, without making a view node for it."""
        storage = self._buf.node
        if not self._chain:
            return storage.shape, storage.layout
        cache = self._window(storage)
        return cache[2], cache[3]

    def _window(self, storage: Node) -> tuple:
        """(storage, its view node or None until one is asked for, shape, layout) of this array's window
        of ``storage``: its shape and layout are asked of many a view no op reads (``out[r] += a``'s
        target), and a node costs more than a remembered answer."""
        cache = self._cache
        if cache is not None and cache[0] is storage:
            return cache
        shape, layout = views.geometry(storage.dtype, storage.shape, storage.layout, self._chain)
        if (shape, layout) == views.geometry(storage.dtype, storage.shape, storage.layout, ()):
            # the chain ends where it began (a transpose there and back): the storage itself
            self._cache = cache = (storage, storage, storage.shape, storage.layout)
        else:
            self._cache = cache = (storage, None, shape, layout)
        return cache

    def _computed(self) -> bool:
        """Has this array's storage a value (computed, or read from outside), with nothing pending?"""
        return self._buf.node in self._s.values

    def _ghost(self) -> np.ndarray:
        storage = self._buf.node
        return views.apply_chain(views.ghost(storage.dtype, storage.shape, storage.layout), self._chain)

    def _view(self, kind: str, p: Any, writeable: bool = True) -> "LazyArray":
        storage, chain = self._buf.node, self._chain + ((kind, p),)
        shape, _ = views.geometry(storage.dtype, storage.shape, storage.layout, chain)  # NumPy validates first
        # a NumPy scalar's .T / .squeeze() / .reshape(()) are scalars again; its [...] is a 0-d array
        scalar = self.scalar and shape == () and not (kind == "getitem" and ("e",) in p)
        return LazyArray(self._s, self._buf, chain, scalar=scalar, writeable=self._writeable and writeable)

    def _write(self, value: Node, readonly_msg: str = "assignment destination is read-only",
               count: bool = True) -> None:
        """Replace this array's contents with ``value`` (already cast and shaped)."""
        if not self._writeable:
            raise ValueError(readonly_msg)
        buf = self._buf
        whole = not self._chain or self._window(buf.node)[1] is buf.node  # (a chain there and back is no chain)
        if whole and value.kind == "op" and value.shape == buf.node.shape and views.kept_layout(buf.node) is None:
            if value in self._s.readers:  # another array holds an assignment's result now: it reads it
                self._s.readers[value].append(None)
            buf.node = value  # (a Fortran- or permuted-order array stays one: a setitem keeps its layout)
        else:
            if value.op == "view" and value.args[0] is buf.node and value.params == self._chain:
                return  # writing an array's own current value back: a no-op
            dest = buf.node
            # (a region of one element is not taken over: the write it saves is one store, and where the
            # index comes from data (`cm[t, p] += 1` in a loop) the writes at a repeated index would make
            # other kernels than the rest, and a replay could not roll the loop into one)
            if dest.op == "setitem" and dest.params[0] == self._chain and self._s.fuses and math.prod(dest.params[1]) > 1:
                forwarded = _forwarded(self._s, value, dest)
                if forwarded is not None:  # the region's last write is overwritten whole and read only through
                    # this view: the new value reads what was written there without memory, and the old write
                    # is never made (`out[r] += a` nine times: one kernel, one write)
                    buf.node = dest = dest.args[0]
                    value = forwarded
            _, _, shape, layout = self._window(dest)  # (its view node is not needed: no op reads it)
            # an assignment is one eager op; the write of `a += b` belongs to its add
            buf.node = self._s.bind("setitem", (dest, value), (self._chain, shape, layout),
                                    dest.dtype, dest.shape, layout=views.kept_layout(dest), count=count)
            self._s.readers[buf.node] = []  # (its readers, from now on: see _forwarded)
        buf.dirty = True
        self._s.hold(buf)

    # -- values (syncs) ------------------------------------------------------------
    def _value(self, cause: str | None = None, name: str | None = None) -> Any:
        s = self._s
        if cause is not None:
            s.record_sync(cause)
        (value,) = s.evaluate([self._current()])
        value = s.to_host(value, f"sync: {cause or 'a value Python needs'}", name=name, lazy=self)
        return value[()] if self.scalar else value

    def _read(self, cause: str, convert: Any) -> Any:
        """A sync whose value Python consumes: ``convert(value)``, recorded for the plan cache,
        whose replay recomputes it and abandons the replay if Python would now see another value."""
        s = self._s
        name = s.name_of(self) if s.tape is not None else None  # once, for the ledger and the tape
        node = self._current()  # (the node evaluated: afterwards the array holds a leaf for it)
        out = convert(self._value(cause, name))
        if s.tape is not None:
            s.tape.on_sync(node, self.scalar, convert, out, cause, name)
        return out

    def _writable_real(self) -> tuple[np.ndarray, Node, Node]:
        """A real, writable view for an eager mutation: the buffer moves to fresh storage. Also
        returns the node copied and the storage's input node (how a replay makes the same copy)."""
        s = self._s
        src = self._buf.node
        (value,) = s.evaluate([src])
        value = s.to_host(value, "sync: an eager (NumPy) operation writes into this array", lazy=self)
        storage = np.array(value, copy=True, order="K")
        self._buf.node = node = s.add_input(storage, origin=False)
        s.hold(self._buf)
        self._buf.dirty = True
        return views.apply_chain(storage, self._chain), src, node

    # -- metadata (static: no sync) -------------------------------------------------
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        # isinstance(x, np.ndarray) / np.floating in user code answers as for the real value;
        # type(x) is still LazyArray, so our own isinstance(x, LazyArray) checks are unaffected
        return self.dtype.type if self.scalar else np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        storage = self._buf.node
        if not self._chain:
            return storage.shape
        cache = self._cache  # (_window's remembered answer, inline: asked several times per traced op)
        return cache[2] if cache is not None and cache[0] is storage else self._window(storage)[2]

    @shape.setter
    def shape(self, shape: Any) -> None:
        # `x.shape = s` reshapes this very object, and only where NumPy can do it without a copy
        shape = (operator.index(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(operator.index, shape))
        asked, shape = shape, _reshape_shape(self.size, shape)
        try:
            step = _reshape_step(self._ghost(), asked, shape)
        except ValueError:
            raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a "
                                 "copy with the desired shape.") from None
        self._chain += (("reshape", step),)
        self._cache = None

    @property
    def dtype(self) -> np.dtype:
        return self._buf.node.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # (asked of every write's target: np.prod costs microseconds)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        return self._ghost().strides

    def __hash__(self) -> int:
        if not self.scalar:
            raise TypeError("unhashable type: 'numpy.ndarray'")
        return self._read("hash()", hash)  # NumPy scalars hash by value (dict keys, sets)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- syncs ------------------------------------------------------------------------
    def __bool__(self) -> bool:
        if self.size > 1:
            bool(np.zeros(2))  # NumPy's own "truth value ... is ambiguous" ValueError
        return self._read("bool()", bool)

    def __float__(self) -> float:
        return self._read("float()", float)

    def __int__(self) -> int:
        return self._read("int()", int)

    def __complex__(self) -> complex:
        return self._read("complex()", complex)

    def __index__(self) -> int:
        if self.dtype.kind not in "iub" or self.ndim:
            operator.index(np.zeros(self.shape, self.dtype))  # NumPy's TypeError
        return self._read("index", operator.index)

    def __repr__(self) -> str:
        return self._read("repr()", repr)

    def __str__(self) -> str:
        return self._read("str()/print", str)

    def __format__(self, spec: str) -> str:
        out = self._read("format()", lambda v: format(v, spec))
        tape = self._s.tape
        if tape is not None:  # an f-string piece that goes straight into print(): a replay formats anew
            frame = sys._getframe(1)
            where = fstrings.print_argument(frame.f_code, frame.f_lasti)
            if where is not None:
                tape.on_format(frame.f_code, where, out, spec)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._s.tape is not None:
            self._s.tape.unreplayable("code outside the trace read an array's data (__array__)")
        value = np.asarray(self._value("__array__ (a function outside the trace needed the data)"))
        if dtype is not None and value.dtype != dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def item(self, *args: Any) -> Any:
        return self._read(".item()", lambda v: np.asarray(v).item(*args))

    def tolist(self) -> Any:
        return self._read(".tolist()", lambda v: np.asarray(v).tolist())

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        n = self.shape[0]
        if self.ndim == 1 and n <= UNPACK_LAZY_MAX and at_site(sys._getframe(1), _unpack_count) == n:
            # `x, y = p` (an ODE's state, a point): lazy copies, as p[0], p[1] give, so no sync cuts the graph; a
            # for loop over a vector gets NumPy scalars, read at once (`type(v)` prints numpy.float64)
            return iter([self[i] for i in range(n)])
        if self.ndim == 1:  # scalars come out: read them all at once
            return iter(self._read("iteration", _snapshot))
        return (self[i] for i in range(self.shape[0]))  # rows stay lazy views

    def __contains__(self, x: Any) -> bool:
        return bool((self == x).any())

    def __reduce__(self):
        if self._s.tape is not None:
            self._s.tape.unreplayable("an array was pickled")
        return (np.asarray, (self._value("pickle"),))

    def __copy__(self) -> "LazyArray":
        return self.copy()

    def __deepcopy__(self, memo: Any) -> "LazyArray":
        return self.copy()

    # -- NumPy protocols --------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from .lazynp import ufunc_call

        if self.scalar and method == "__call__" and not kwargs and errors_raise():
            pyop = _SCALAR_UFUNC_OPS.get(ufunc.__name__)
            # a NumPy scalar's operator with this one (`np.uint8(200) * s`) arrives here as the ufunc: told
            # from a call of it by the instruction the caller runs (see _SCALAR_ERRORS)
            if pyop is not None and len(inputs) == 2 and all(map(_is_scalar, inputs)) \
                    and at_site(sys._getframe(1), _binary_operator):
                return _eager_operator(pyop, inputs)
        if self.scalar and len(inputs) == 2 and ufunc.__name__ in SWAPPED and method == "__call__" and not kwargs:
            scalar = _richcompared_scalar(inputs)
            if scalar is not None:  # NumPy's scalar math (see _complex_scalars), not the ufunc
                args = tuple(scalar if x is not self else x for x in inputs)
                return _eager_operator(_COMPARISON_OPS[ufunc.__name__], args)
        return ufunc_call(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from .lazynp import array_function

        return array_function(func, args, kwargs)

    # -- indexing ----------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Any:
        if self.scalar:  # a NumPy scalar's x[...] / x[None] are new arrays: writing them leaves x alone
            return scalar_as_array(self)[index]
        key = views.index_key(_static_index(index))
        if key is None:
            from . import masked
            from .lazynp import eager_call

            deferred = masked.item(self, index)  # (`x[mask] += c` reads here first: masked.py)
            if deferred is not None:
                return deferred
            if masked.whole_read(self, index):  # (`x[m] = a[m] * 2 + b[m]`: the whole of a, masked.py)
                return self
            return eager_call(operator.getitem, (self, index), {}, "advanced indexing",
                              "indexing with arrays or masks has a data-dependent result")
        if views.is_scalar_index(key, self.ndim):
            view = self._view("getitem", key + (("e",),))
            node = self._s.bind("copy", (view._current(),), (), self.dtype, (), count=False)
            return fresh(node, scalar=True)  # NumPy gives a scalar: a copy, not a view
        return self._view("getitem", key)

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.scalar:  # NumPy scalars are immutable
            raise TypeError(f"'numpy.{self.dtype.type.__name__}' object does not support item assignment")
        key = views.index_key(_static_index(index))
        if type(value) is LazyArray and self._writeable and key is not None \
                and self._own_window(value, self._chain + (("getitem", key),)):
            return  # its own window written back (`x[r] += a` ends so): a no-op, found before NumPy's checks
        try:
            if key is None:
                from . import masked

                if not self._writeable:  # (NumPy checks this before the index: the eager path would write a copy)
                    raise ValueError("assignment destination is read-only")
                if type(value) is masked.MaskedItem:  # the store of `x[mask] op= c`
                    value = masked.store(self, index, value)
                    if value is None:
                        return
                elif masked.fill(self, index, value):  # `x[mask] = number`
                    return
                else:  # the store of `x[m] = a[m] * 2 + b[m]` (its value is a whole array)
                    value = masked.whole_store(self, index, value)
                    if value is None:
                        return
                raise Unsupported("advanced index")
            if type(value) in (list, tuple) and self._writeable and _contains_lazy(value):
                # NumPy assigns a sequence as ``np.asarray(seq, dtype=dest.dtype)`` (`history[t] = S, E, I, R`):
                # made so (traced, or one NumPy call), the write itself stays lazy; as an eager assignment it
                # would copy the whole destination every step, in the trace and in each replay
                from .lazynp import asarray

                value = asarray(value, dtype=self.dtype)
            value = operand(value)
        except Unsupported:
            from .lazynp import eager_call

            eager_call(operator.setitem, (self, index, value), {}, "advanced assignment",
                       "assignment with array or mask indices ran eagerly", mutates=0)
            return
        if not self._writeable:
            raise ValueError("assignment destination is read-only")
        element = views.is_scalar_index(key, self.ndim)
        target = self._view("getitem", key + ((("e",),) if element else ()))
        if isinstance(value, LazyArray) and through_int(value, self.dtype):
            # NumPy stores a NumPy scalar in an integer array through Python's int(): NaN, inf and values out of
            # the array's range raise (an int8 array takes np.int32(300) no more than 300)
            err = value._read("a float stored in an integer array", lambda v: _store_error(v, self.dtype))
            if err is not None:
                raise err[0](err[1])
        vshape = value.shape if isinstance(value, LazyArray) else ()
        # NumPy's checks, once per kinds and shapes (a loop repeats them). A number is its type and value
        # (a NaN, or np.uint8(200) into int8, raises; -1 into uint8 raises and -1.0 does not, though equal);
        # a lazy value its dtype (a lazy NumPy scalar passes isinstance(np.number) through its __class__:
        # kept, a later lookup would compare it, so compute a value of a cell that has ended)
        kind = _kind(value) if type(value) is LazyArray else (type(value), value) \
            if isinstance(value, (int, float, complex, np.number)) else _kind(value)
        checked = (self.dtype, kind, vshape, target.shape)
        if checked not in _ASSIGNS:
            tiny = np.zeros((), self.dtype)
            tiny[...] = probe(value)  # NumPy's casting/overflow errors for the value
            if np.broadcast_shapes(vshape, target.shape) != target.shape:
                sample = np.broadcast_to(probe(value), vshape)
                if element:  # `a[0] = v`: NumPy's element assignment ("setting an array element with a sequence")
                    np.zeros(1, self.dtype)[0] = sample
                else:  # raises unless the value only has extra leading 1-dims
                    np.empty(target.shape, self.dtype)[...] = sample
                # NumPy let it through: assignment drops the value's extra leading 1-dims
                value = value.reshape(vshape[len(vshape) - target.ndim:])
            else:
                _remember(_ASSIGNS, checked, True)
        val = value if isinstance(value, LazyArray) else None
        if val is not None and val.dtype == self.dtype and self._own_window(val, target._chain):
            return  # (the same, for a value an array-like became above: a view of this very storage)
        node = node_of(value)
        if val is not None and val.dtype != self.dtype:
            # (into an empty region NumPy casts no element: no floating-point error, whatever np.errstate says)
            try:
                with fperrors.quiet() if target.size == 0 else contextlib.nullcontext():
                    node = astype(val, self.dtype, count=False)._current()
            except FloatingPointError:  # NumPy casts every element into place, then raises: write, then raise
                with fperrors.quiet():  # (computed here: NumPy warns of nothing more later)
                    target._write(astype(val, self.dtype, count=False)._current())
                    self._s.evaluate([self._buf.node])
                raise
        elif val is None:
            node = self._s.const(value)
        target._write(node)

    def _own_window(self, value: "LazyArray", chain: tuple) -> bool:
        """Is ``value`` this array's window ``chain`` as it is now (not a chain there and back: the storage)?"""
        return value._buf is self._buf and value._chain == chain \
            and value._window(self._buf.node)[1] is not self._buf.node

    # -- views -------------------------------------------------------------------------
    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> "LazyArray":
        """NumPy's read-only view of a diagonal (``np.diag(P)`` in a Kalman step), traced for a C-ordered
        2-D array: a step of the view chain that strides through its memory (row stride + 1). Other
        arrays, axes and layouts run as NumPy."""
        try:
            plain = self.ndim == 2 and normalize_axis_tuple((axis1, axis2), 2) == (0, 1)
        except (TypeError, ValueError):  # (NumPy says what is wrong with them)
            plain = False
        g = self._ghost() if plain and not self.scalar else None
        if g is None or not g.flags.c_contiguous:
            from .lazynp import eager_method

            return eager_method(self, "diagonal")(offset, axis1, axis2)
        offset, (rows, cols), (down, right) = operator.index(offset), self.shape, g.strides
        size = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
        start = (offset * right if offset >= 0 else -offset * down) if size else 0
        # (NumPy's strides, the array's own summed: an empty array's need not be C's)
        return self._view("asstrided", (start, (size,), (down + right,)), writeable=False)

    @property
    def T(self) -> "LazyArray":
        return self.transpose()

    @property
    def mT(self) -> "LazyArray":
        return self.swapaxes(-1, -2)

    def transpose(self, *axes: Any) -> "LazyArray":
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0] or ()
        if axes:
            self._ghost().transpose(axes)  # NumPy's own error ("axes don't match array", AxisError)
        axes = tuple(range(self.ndim))[::-1] if not axes else normalize_axis_tuple(axes, self.ndim, allow_duplicate=False)
        return self._view("transpose", tuple(axes))

    def swapaxes(self, a: int, b: int) -> "LazyArray":
        a, b = normalize_axis_index(a, self.ndim), normalize_axis_index(b, self.ndim)
        axes = list(range(self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return self._view("transpose", tuple(axes))

    def reshape(self, *shape: Any, order: str = "C", copy: Any = None) -> "LazyArray":
        if order != "C":
            raise Unsupported("reshape(order != 'C')")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        asked = tuple(operator.index(d) for d in shape)
        shape = _reshape_shape(self.size, asked)
        if copy is not True:
            try:
                return self._view("reshape", _reshape_step(self._ghost(), asked, shape))
            except ValueError:  # only a copy would do (NumPy's rule)
                if copy is False:
                    raise
        node = self._s.bind("reshape", (self._current(),), (shape,), self.dtype, shape)
        return fresh(node)

    def ravel(self, order: str = "C") -> "LazyArray":
        if order == "C" and self.ndim and not self._ghost().flags.c_contiguous:
            return self.reshape(-1, copy=True)  # NumPy's ravel copies unless C-contiguous (a reshape need not)
        return self.reshape(-1, order=order)

    def flatten(self, order: str = "C") -> "LazyArray":
        return self.reshape(-1, order=order, copy=True) if self.ndim != 1 else self.copy()

    def squeeze(self, axis: Any = None) -> "LazyArray":
        if axis is None:
            axes = tuple(i for i, d in enumerate(self.shape) if d == 1)
        else:
            axes = normalize_axis_tuple(axis, self.ndim)
            if any(self.shape[i] != 1 for i in axes):
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        if not axes:  # NumPy returns the array itself
            return self
        if 0 in self.shape:  # (an empty array's reshape has C strides; NumPy's squeeze keeps the axes' own)
            return self[tuple(0 if i in axes else slice(None) for i in range(self.ndim)) + (Ellipsis,)]
        return self.reshape(tuple(d for i, d in enumerate(self.shape) if i not in axes))

    # -- methods -------------------------------------------------------------------------
    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> "LazyArray":
        if casting != "unsafe":  # NumPy checks the dtypes (never the values): its TypeError, at this line
            np.empty(0, self.dtype).astype(dtype, casting=casting)
        return astype(self, dtype, copy=copy, order=order)

    def copy(self, order: str = "C") -> "LazyArray":
        return astype(self, self.dtype, copy=True, order=order)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _method_reduce("sum", self, axis, dtype, out, keepdims, kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _method_reduce("prod", self, axis, dtype, out, keepdims, kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _method_reduce("mean", self, axis, dtype, out, keepdims, kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        return _method_reduce("max", self, axis, None, out, keepdims, kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        return _method_reduce("min", self, axis, None, out, keepdims, kw)

    def any(self, axis=None, out=None, keepdims=False, **kw):
        return _method_reduce("any", self, axis, None, out, keepdims, kw)

    def all(self, axis=None, out=None, keepdims=False, **kw):
        return _method_reduce("all", self, axis, None, out, keepdims, kw)

    def argmax(self, axis=None, out=None, keepdims=False):
        return _method_reduce("argmax", self, axis, None, out, keepdims, {})

    def argmin(self, axis=None, out=None, keepdims=False):
        return _method_reduce("argmin", self, axis, None, out, keepdims, {})

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return _method_reduce("var", self, axis, dtype, out, keepdims, dict(kw, ddof=ddof))

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return _method_reduce("std", self, axis, dtype, out, keepdims, dict(kw, ddof=ddof))

    def clip(self, min=None, max=None, **kw):
        from .lazynp import clip

        return clip(self, min, max, **kw)

    def dot(self, other: Any) -> Any:
        from .lazynp import dot

        return dot(self, other)

    def cumsum(self, axis=None, dtype=None, out=None):
        return self._library("cumsum", axis, dtype=dtype, out=out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return self._library("cumprod", axis, dtype=dtype, out=out)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return self._library("trace", offset, axis1, axis2, dtype, out)

    def repeat(self, repeats, axis=None):
        return self._library("repeat", repeats, axis)

    def _library(self, name: str, *args: Any, **kw: Any) -> Any:
        from .lazynp import FUNCS, eager_method

        try:
            return FUNCS[name](self, *args, **kw)
        except Unsupported:
            return eager_method(self, name)(*args, **kw)

    def conj(self) -> "LazyArray":
        return elementwise("conjugate", [self])

    def __round__(self, ndigits: Any = None) -> Any:
        # builtins.round: NumPy scalars define it (a Python int without ndigits), arrays do not
        if not self.scalar or self.dtype.kind not in "iuf":
            raise TypeError(f"type numpy.{self.__class__.__name__} doesn't define __round__ method")
        if ndigits is None:
            return self._read("round()", round)
        return self.round(ndigits)

    def round(self, decimals: int = 0) -> Any:
        from .lazynp import round_

        return round_(self, decimals)

    @property
    def flags(self) -> Any:
        if self.scalar:  # (a NumPy scalar's own flags: never writeable)
            from .lazynp import eager_method

            return eager_method(self, "flags")
        return Flags(self)

    def __getattr__(self, name: str) -> Any:
        # Anything else NumPy arrays (or, for a NumPy scalar, its type) have runs eagerly on the real value.
        if name.startswith("__") or not (hasattr(np.ndarray, name) or self.scalar and hasattr(self.dtype.type, name)):
            raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")
        from .lazynp import eager_method

        return eager_method(self, name)


_WRITEABLE = frozenset({"writeable", "WRITEABLE", "W"})


class Flags:
    """``x.flags`` of a lazy array: WRITEABLE is the lazy array's own (``x.flags.writeable = False`` makes its
    later writes raise, as NumPy's do); the other flags are the computed array's, read outside the trace."""

    __slots__ = ("_lz",)

    def __init__(self, lz: LazyArray) -> None:
        object.__setattr__(self, "_lz", lz)

    def _real(self) -> Any:
        from .lazynp import eager_method

        return eager_method(self._lz, "flags")  # (the computed array's, read outside the trace)

    def __getattr__(self, name: str) -> Any:
        return self._lz._writeable if name in _WRITEABLE else getattr(self._real(), name)

    def __getitem__(self, key: str) -> Any:
        return self._lz._writeable if key in _WRITEABLE else self._real()[key]

    def __setattr__(self, name: str, value: Any) -> None:
        self._set(name, value, lambda f: setattr(f, name, value))

    def __setitem__(self, key: str, value: Any) -> None:
        self._set(key, value, lambda f: f.__setitem__(key, value))

    def _set(self, name: str, value: Any, real: Callable[[Any], None]) -> None:
        lz = self._lz
        # (read-only: always allowed; writeable again: an array the cell made, not a view, whose base NumPy checks)
        if name in _WRITEABLE and lz._origin is None and (not value or not lz._chain):
            lz._writeable = bool(value)
            return
        if lz._s.tape is not None:
            lz._s.tape.unreplayable("the cell sets flags of an array it read, or of a view")
        real(self._real())  # (NumPy's own checks and errors, on the computed array)

    def __repr__(self) -> str:
        text = repr(self._real())
        return text.replace(f"WRITEABLE : {not self._lz._writeable}", f"WRITEABLE : {self._lz._writeable}")


UNPACK_LAZY_MAX = 16  # `a, b, c = v`: up to this many elements come out lazy
_UNPACK = dis.opmap.get("UNPACK_SEQUENCE")
_SITES: dict[tuple, Any] = {}  # (code, offset, check) -> what the check found there (``at_site``)


def _caches(op: int) -> int:
    """The inline cache entries after instruction ``op`` (CPython 3.11+)."""
    table = getattr(opcode, "_inline_cache_entries", None)
    try:
        return int(table[op] if isinstance(table, list) else table.get(opcode.opname[op], 0))  # (3.13: by name)
    except (TypeError, IndexError, AttributeError):
        return 0


def instruction_at(code: bytes, at: int, op: int) -> int:
    """Where instruction ``op`` that a frame's ``f_lasti`` = ``at`` is executing starts, or -1. A specialized
    instruction that calls Python code itself (BINARY_SUBSCR_GETITEM, after a loop's first iterations) leaves
    ``f_lasti`` past its inline caches, not at the instruction."""
    for start in (at, at - 2 * _caches(op)):
        if 0 <= start < len(code) - 1 and code[start] == op:
            return start
    return -1


def at_site(frame: Any, check: Callable[[Any, int], Any]) -> Any:
    """``check(code object, f_lasti)`` about the instruction ``frame`` is executing, worked out once per place
    in the code (a loop asks again at every iteration)."""
    key = (frame.f_code, frame.f_lasti, check)
    try:
        return _SITES[key]
    except KeyError:
        if len(_SITES) > 4096:
            _SITES.clear()
        got = _SITES[key] = check(frame.f_code, frame.f_lasti)
        return got


def _unpack_count(code: Any, at: int) -> int:
    """The count of the UNPACK_SEQUENCE (``a, b = x``) executed at ``at``; -1 for another instruction (a ``for``
    loop, ``list(x)``)."""
    raw = code.co_code
    at = instruction_at(raw, at, _UNPACK) if _UNPACK is not None else -1
    return raw[at + 1] if at >= 0 else -1


def _snapshot(value: Any) -> Any:
    """What iteration hands Python: the elements, fixed now (a copy, for the plan cache to compare)."""
    return np.array(value, copy=True)


def through_int(x: LazyArray, dtype: np.dtype) -> bool:
    """Is ``x`` a NumPy scalar that NumPy puts into an integer array of ``dtype`` through Python's int() (a
    float, or an int of a wider range): NaN, inf and values out of range raise (``_store_error``)."""
    return x.scalar and dtype.kind in "iu" and (x.dtype.kind in "fc" or x.dtype.kind in "iu"
                                                and not np.can_cast(x.dtype, dtype))


def _store_error(value: Any, dtype: np.dtype) -> tuple[type, str] | None:
    """What NumPy raises storing the scalar ``value`` in an array of ``dtype`` (None: nothing)."""
    try:
        with _quiet(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.zeros((), dtype)[...] = value
    except (ValueError, OverflowError, TypeError) as e:
        return type(e), str(e)
    return None


def _static_index(index: Any) -> Any:
    """Lazy 0-d integers used as indices are read now (NumPy needs the int)."""
    items = index if isinstance(index, tuple) else (index,)
    for i in items:  # (a loop, not any(...) of a generator: asked at every traced index)
        if isinstance(i, LazyArray):
            break
    else:
        return index
    out = tuple(i.__index__() if isinstance(i, LazyArray) and i.ndim == 0 and i.dtype.kind in "iu" else i
                for i in items)
    return out if isinstance(index, tuple) else out[0]


def scalar_as_array(x: LazyArray) -> LazyArray:
    """A NumPy scalar as a new 0-d array (``np.asarray(s)``): its own buffer, not the scalar's."""
    out = astype(x, x.dtype, copy=True, count=False)
    out.scalar = False
    return out


def _reshape_step(g: np.ndarray, asked: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape a view step reshapes to (ValueError where only a copy would do): the one asked for with
    its -1 where the array is empty or keeps its shape, since NumPy keeps the strides only when asked for
    the array's own shape literally (``b.reshape(-1, 1)`` of a (1, 1) ``b`` with 0 strides has C strides,
    ``b.reshape(1, 1)`` keeps b's; so for an empty ``b`` and ``-1`` against ``0``)."""
    np.reshape(g, shape, copy=False)
    return asked if g.size == 0 or shape == g.shape else shape


def _reshape_shape(size: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's reshape shape rule (one -1 allowed), with NumPy's error messages."""
    unknown = [i for i, d in enumerate(shape) if d < 0]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = int(np.prod([d for d in shape if d >= 0], dtype=np.int64))
    if unknown and known and size % known == 0:
        shape = shape[:unknown[0]] + (size // known,) + shape[unknown[0] + 1:]
    if int(np.prod(shape, dtype=np.int64)) != size or any(d < 0 for d in shape):
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return shape


def _method_reduce(name: str, x: LazyArray, axis, dtype, out, keepdims, kw) -> Any:
    from .lazynp import eager_call

    ddof = kw.pop("ddof", None)
    if out is not None or kw:
        extra = ", ".join(["out"] * (out is not None) + list(kw))
        return eager_call(getattr(np, name), (x,), dict(kw, axis=axis, out=out, keepdims=keepdims,
                                                          **({} if dtype is None else {"dtype": dtype}),
                                                          **({} if ddof is None else {"ddof": ddof})),
                          f"np.{name}", f"{name}() with {extra} is not traced", mutates=None if out is None else "out")
    return reduction(name, x, axis=axis, dtype=dtype, keepdims=keepdims, ddof=ddof)


# Operators: one table, so every spelling funnels into elementwise().
# An operand we cannot trace (a str, an object with __radd__, ...) runs the real operator
# eagerly, so NumPy's own dispatch and its own exception (UFuncTypeError, ...) happen.
def _eager_operator(pyop: Any, args: tuple, mutates: int | None = None) -> Any:
    from .lazynp import eager_call

    name = pyop.__name__.strip("_")
    return eager_call(pyop, args, {}, f"operator {name}", f"operator {name} with an operand of this type "
                      "is not traced", mutates=mutates)


def _fast_power(x: "LazyArray", exponent: Any) -> str | None:
    """The ufunc NumPy's array ``x ** e`` really calls for ``e`` in (2, -1, 0.5): square, reciprocal, sqrt.

    They differ from ``np.power`` in dtype (``bool ** 2`` is int8) and in values (``sqrt(-0.0)``).
    NumPy scalars use scalar math instead, which is ``power``.
    """
    if x.scalar:
        return None
    if type(exponent) is int and exponent == 2:
        return "square"
    if type(exponent) is int and exponent == -1 and x.dtype.kind in "fc":
        return "reciprocal"
    if type(exponent) is float and exponent == 0.5 and x.dtype.kind in "fc":
        return "sqrt"
    return None


def _scalar_math(op: str, x: "LazyArray", other: Any) -> tuple:
    """The parameters of a ``**`` between NumPy scalars: scalar math computes a float power with C's pow,
    where the ufunc (``np.power``, an array's ``**``) takes shortcuts (``ops.power_fast_paths``)."""
    if op != "power" or not x.scalar or not _is_scalar(other):
        return ()
    kinds = {x.dtype.kind, other.dtype.kind if isinstance(other, (LazyArray, np.generic)) else
             "f" if type(other) is float else "c" if type(other) is complex else "i"}
    return (SCALAR_MATH,) if "f" in kinds and "c" not in kinds else ()


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic)) or isinstance(x, LazyArray) and x.scalar


def _complex_scalars(op: str, a: "LazyArray", b: Any) -> bool:
    """A comparison of NumPy scalars, one of them complex: NumPy's scalar math, not the ufunc's."""
    return op in SWAPPED and a.scalar and _is_scalar(b) and (
        a.dtype.kind == "c" or isinstance(b, (complex, np.complexfloating))
        or isinstance(b, LazyArray) and b.dtype.kind == "c")


def _richcompared_scalar(inputs: tuple) -> Any:
    """The NumPy scalar that asked this comparison ufunc, where one did, else None. A NumPy scalar compared
    with a lazy one (`np.float64(2.0) < z`) hands the ufunc a 0-d array made from itself (numpy's
    gentype_richcompare), as `np.array(2.0) < z` would; inside a cell arrays are lazy, so a plain 0-d
    array at a comparison instruction is such a scalar. It matters only beside a complex value, whose
    scalar comparison orders by real part first whatever the imaginary parts (NaN included)."""
    a, b = inputs
    arr, lazy = (a, b) if type(a) is np.ndarray else (b, a)
    if type(arr) is not np.ndarray or arr.ndim or not isinstance(lazy, LazyArray) \
            or "c" not in (arr.dtype.kind, lazy.dtype.kind) or not at_site(sys._getframe(2), _comparison):
        return None
    return arr[()]


def _comparison(code: Any, at: int) -> bool:
    return instruction_at(code.co_code, at, _COMPARE_OP) >= 0


_COMPLEX_OPS = frozenset({"add", "subtract", "multiply", "divide", "power"})  # what Python's complex defines
_EQUALITY = frozenset({"equal", "not_equal"})  # (complex's only comparisons)
_COMPARE_OP = dis.opmap["COMPARE_OP"]
_LOADS = frozenset({"LOAD_NAME", "LOAD_FAST", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF"})
_STACK_OPS = frozenset({"SWAP", "COPY", "DUP_TOP", "ROT_TWO", "ROT_THREE"})  # (a chained comparison)


def _complex_on_left(frame: Any, other: complex) -> bool:
    """Is ``other`` the left operand of the ``==``/``!=`` the frame is executing? Python asks the lazy
    operand's ``__eq__``/``__ne__`` for both ``x != 1j`` and ``1j != x`` (complex's own declines an array),
    so the bytecode says which: the instruction before the comparison loaded its right operand."""
    right = at_site(frame, _right_operand)
    if right is None:
        return False  # (not a comparison instruction: `in`, a container's lookup; or a chained comparison)
    kind, arg = right
    if kind == "const":
        return not (type(arg) is complex and arg == other)
    if kind == "name":
        value = frame.f_locals.get(arg, frame.f_globals.get(arg, _MISSING))
        return value is not other
    return True  # the right operand was computed: the lazy value (a complex expression folds to a constant)


_MISSING = object()


def _right_operand(code: Any, at: int) -> tuple[str, Any] | None:
    """How the comparison at ``at`` got its right operand: ("const", value), ("name", name) or ("expr", None);
    None where ``at`` is not a comparison, or the operand came from a stack shuffle."""
    start = instruction_at(code.co_code, at, _COMPARE_OP)
    if start < 0:
        return None
    prev = None
    for ins in dis.get_instructions(code):
        if ins.offset == start:
            if prev is None or prev.opname in _STACK_OPS:
                return None
            if prev.opname == "LOAD_CONST":
                return "const", prev.argval
            if prev.opname in _LOADS:
                return "name", prev.argval
            return "expr", None
        prev = ins
    return None


# Under np.errstate(...='raise') an operator between NumPy scalars raises what NumPy's scalar math checks,
# which is not what the ufunc checks: integer overflow (`np.uint8(200) * 2`, `-np.int8(-128)`), and its own
# message ("overflow encountered in scalar multiply"). There every op runs at its line anyway (trace.fresh):
# these run as NumPy's own operator on the values
_SCALAR_ERRORS = frozenset({"add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
                            "negative", "absolute"})


def _scalar_math_raises(op: str, x: "LazyArray", *other: Any) -> bool:
    """An operator between NumPy scalars (no ``other``: a unary one) under a raising errstate: NumPy's own
    operator runs on the values (``_SCALAR_ERRORS``). The cheap test first: this is every operator's path."""
    return x.scalar and op in _SCALAR_ERRORS and all(map(_is_scalar, other)) and errors_raise()


def _binop(op: str, py: str):
    pyname = py + "_" if py in ("and", "or") else py
    fop, iop = getattr(operator, pyname), getattr(operator, f"i{py}", None)

    def fwd(self, other):
        if _scalar_math_raises(op, self, other):
            return _eager_operator(fop, (self, other))
        if type(other) is complex and op in _EQUALITY and self.scalar and self.dtype == np.float64 \
                and _complex_on_left(sys._getframe(1), other):
            # `1j != x`: complex's own comparison with np.float64, a float (a Python bool), which declines an
            # array and leaves Python to ask x (`x != 1j`'s call too: the bytecode tells them apart)
            return fop(other, self._read(f"complex {py}", float))
        if _complex_scalars(op, self, other):
            # NumPy's scalar math orders complex scalars by real part first, even beside a NaN imaginary part
            # ((2+nanj) > 1 is True; the ufunc says False): the real operator on the values
            return _eager_operator(fop, (self, other))
        try:
            fast = _fast_power(self, other) if op == "power" else None
            if fast:
                return elementwise(fast, [self])
            return elementwise(op, [self, other], params=_scalar_math(op, self, other))
        except Unsupported:
            return _eager_operator(fop, (self, other))

    def rev(self, other):
        if _scalar_math_raises(op, self, other):
            return _eager_operator(fop, (other, self))
        if _complex_scalars(op, self, other):
            return _eager_operator(fop, (other, self))  # (as in fwd: NumPy's scalar comparison of complex values)
        if type(other) is complex and op in _COMPLEX_OPS and self.scalar and self.dtype == np.float64:
            # np.float64 subclasses Python's float, so `1j + x` is complex's own arithmetic: a Python complex
            return fop(other, self._read(f"complex {py}", float))
        try:
            return elementwise(op, [other, self], params=_scalar_math(op, self, other))
        except Unsupported:
            return _eager_operator(fop, (other, self))

    def inplace(self, other):
        if self.scalar:  # `s += 1` on a NumPy scalar makes a new scalar; other names keep the old one
            return fwd(self, other)
        try:
            fast = _fast_power(self, other) if op == "power" else None
            return ufunc_out(fast, [self], self) if fast else _inplace(op, self, other)
        except Unsupported:
            return _eager_operator(iop, (self, other), mutates=0)

    return fwd, rev, inplace


_BINOPS = [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
           ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"),
           ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
           ("lshift", "left_shift"), ("rshift", "right_shift")]  # (Python's name, the ufunc's)
for _py, _op in _BINOPS:
    _f, _r, _i = _binop(_op, _py)
    setattr(LazyArray, f"__{_py}__", _f)
    setattr(LazyArray, f"__r{_py}__", _r)
    setattr(LazyArray, f"__i{_py}__", _i)

_COMPARES = [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
             ("ge", "greater_equal")]  # (Python's name, the ufunc's)
for _py, _op in _COMPARES:
    setattr(LazyArray, f"__{_py}__", _binop(_op, _py)[0])
_COMPARISON_OPS = {op: getattr(operator, py) for py, op in _COMPARES}  # ufunc -> operator

_SCALAR_UFUNC_OPS = {op: getattr(operator, py) for py, op in _BINOPS if op in _SCALAR_ERRORS}  # ufunc -> operator
_BINARY_OP = dis.opmap.get("BINARY_OP")  # (CPython 3.11+: one instruction for every binary operator)


def _binary_operator(code: Any, at: int) -> bool:
    return _BINARY_OP is not None and instruction_at(code.co_code, at, _BINARY_OP) >= 0


def _unary(op: str, py: str):
    pyop = getattr(operator, py)

    def unary(self):
        if _scalar_math_raises(op, self):
            return _eager_operator(pyop, (self,))
        return elementwise(op, [self])
    return unary


for _py, _op in [("neg", "negative"), ("pos", "positive"), ("abs", "absolute"), ("invert", "invert")]:
    setattr(LazyArray, f"__{_py}__", _unary(_op, _py))

# divmod(x, y) is np.divmod: the same loops as (x // y, x % y)
LazyArray.__divmod__ = lambda self, other: (self // other, self % other)  # type: ignore[attr-defined]
LazyArray.__rdivmod__ = lambda self, other: (other // self, other % self)  # type: ignore[attr-defined]

def _matmul(self: LazyArray, other: Any) -> Any:
    try:
        if self.scalar:  # NumPy scalars have no `@`: let them raise (or defer to `other`) themselves
            raise Unsupported("@ of a NumPy scalar")
        return matmul(self, other)
    except Unsupported:
        return _eager_operator(operator.matmul, (self, other))


def _rmatmul(self: LazyArray, other: Any) -> Any:
    try:
        if self.scalar:
            raise Unsupported("@ of a NumPy scalar")
        return matmul(other, self)
    except Unsupported:
        return _eager_operator(operator.matmul, (other, self))


LazyArray.__matmul__ = _matmul  # type: ignore[attr-defined]
LazyArray.__rmatmul__ = _rmatmul  # type: ignore[attr-defined]


def _imatmul(self: LazyArray, other: Any) -> LazyArray:
    res = matmul(self, other)
    if res.shape != self.shape:
        raise ValueError(f"matmul: In-place matrix multiplication requires the output to have the "
                         f"shape of the first operand {self.shape}, got {res.shape}")
    if res.dtype != self.dtype:
        res = astype(res, self.dtype, count=False)
    self._write(res._current(), "output array is read-only", count=False)
    return self


def _imatmul_or_eager(self: LazyArray, other: Any) -> Any:
    try:
        return _imatmul(self, other)
    except Unsupported:
        return _eager_operator(operator.imatmul, (self, other), mutates=0)


LazyArray.__imatmul__ = _imatmul_or_eager  # type: ignore[attr-defined]


def _falls_back(name: str) -> None:
    """Wrap ``LazyArray.name``: arguments we cannot trace run NumPy's own method eagerly
    (and raise NumPy's own exception), instead of letting ``Unsupported`` reach the user."""
    traced = getattr(LazyArray, name)

    def method(self: LazyArray, *args: Any, **kwargs: Any) -> Any:
        try:
            return traced(self, *args, **kwargs)
        except Unsupported as e:
            from .lazynp import eager_call

            return eager_call(lambda arr, *a, **k: getattr(arr, name)(*a, **k), (self,) + args, kwargs,
                              f".{name}()", f".{name}() with these arguments is not traced ({e})", twin=f".{name}")

    method.__name__, method.__qualname__, method.__doc__ = name, f"LazyArray.{name}", traced.__doc__
    setattr(LazyArray, name, method)


for _name in ("astype", "copy", "reshape", "ravel", "flatten", "squeeze", "transpose", "swapaxes",
              "sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin", "var", "std",
              "clip", "dot", "conj", "round"):
    _falls_back(_name)
