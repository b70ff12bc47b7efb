"""The lazy NumPy namespace: what ``np`` is inside a ``%%fuse`` cell.

Names NumPy users call are looked up in ``FUNCS`` (traced lazily); ufuncs are
wrapped so that they trace; everything else is NumPy's own object, and calling
a function that is not traced with a lazy argument runs it eagerly on real
values through :func:`eager_call`, which records the fallback and its reason.
"""

from __future__ import annotations

import contextlib
import operator
import time
import warnings
import types
from typing import Any, Callable, Iterator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import lazyrandom, views
from .ops import UFUNC_REDUCE, UFUNCS, roll_moves
from .session import active
from .trace import (Buffer, LazyArray, Unsupported, _method_reduce, elementwise, fresh, matmul, operand, reduction,
                    scalar_as_array, session, through_int, ufunc_out, wrap_array)


# -- eager execution: the honest fallback -------------------------------------------

def eager_call(func: Callable, args: tuple, kwargs: dict, what: str, reason: str,
               mutates: int | str | None = None, twin: str | None = None, quiet: bool = False,
               method: tuple | None = None) -> Any:
    """Run ``func`` on real values; lazy arguments are computed first.

    ``mutates`` names the argument ``func`` writes into (a position, or ``"out"``):
    that array moves to fresh real storage first, so the write is seen by later
    lazy reads and by the user's array at the end of the cell. ``twin`` names
    CuPy's own version (``"sort"``, ``".cumsum"``): on the cupy backend, when
    every array argument is on the GPU already, that runs there instead.
    ``quiet``: a call that is not a fallback (``np.random.seed``): recorded for a
    replay, not reported as a kernel.

    Under the plan cache the call is a step of the tape (``cache.Tape.on_call``): a
    replay makes it again on the new values, so a random draw advances NumPy's
    generator as the cell would. ``method``: (handle, name) when ``func`` is a method of a
    generator the cell holds (``lazyrandom``): a replay calls it on its own run's generator.
    """
    s = session()
    s.events += 1
    tape = s.tape if s.tape is not None and not s.tape.reasons else None
    if tape is not None and getattr(s.backend, "to_host", None) is not None:
        tape.unreplayable(f"{what} ran outside the trace on a device backend: not replayed yet")
        tape = None
    if mutates is None and any(isinstance(o, LazyArray) for o in _leaves(kwargs.get("out"))):
        mutates = "out"  # any NumPy function given out= writes there: values read before keep the old data
    if twin is not None and mutates is None and "out" not in kwargs:
        on_device = _device_call(s, func, twin, args, kwargs, what, reason)
        if on_device is not None:
            return on_device
    target = args[mutates] if isinstance(mutates, int) else kwargs.get("out") if mutates else None
    if isinstance(target, tuple) and len(target) == 1:
        target = target[0]
    lazies: list[LazyArray] = []
    _collect(args, lazies)
    _collect(kwargs, lazies)
    others = [lz for lz in {id(lz): lz for lz in lazies}.values() if lz is not target]
    if not quiet:
        s.record_fallback(what, reason)
    bufs = list({id(lz._buf): lz._buf for lz in others}.values())
    nodes = [lz._current() for lz in others]
    # what the call reads is computed before its target moves to fresh storage: a replay makes that copy in
    # the call's own step, after this (`a[::-1] **= a` read the copy, which a replay had not made yet)
    values = s.evaluate(nodes + [b.node for b in bufs])
    real_target, mut = None, None
    if isinstance(target, LazyArray):
        real_target, src, storage_node = target._writable_real()
        mut = (src, storage_node, target._chain)
    cause = f"fallback to NumPy: {what} needs its arguments on the host"
    storages = [s.to_host(v, cause, lazy=next((lz for lz in others if lz._buf is b), None), fallback=what)
                for b, v in zip(bufs, values[len(others):])]  # first: views of them derive from them
    values = [s.to_host(v, cause, lazy=lz, fallback=what) for lz, v in zip(others, values)]
    sub = {id(lz): (v[()] if lz.scalar else v) for lz, v in zip(others, values)}
    _register_storage(s, bufs, storages)
    if real_target is not None:
        sub[id(target)] = real_target
    recipe = None
    if tape is not None:
        marks = {id(lz): ("node", n, lz.scalar) for lz, n in zip(others, nodes)}
        if target is not None:
            marks[id(target)] = ("target",)
        recipe = _call_recipe((args, kwargs), marks, tape)
    t0 = time.perf_counter()
    result = func(*_replace(args, sub), **_replace(kwargs, sub))
    elapsed = time.perf_counter() - t0
    s.note_eager(result, what, reason)
    static = None if quiet else _record_eager(s, what, reason, list(sub.values()), result, elapsed)
    out: Any = target if real_target is not None and result is real_target else _wrap_out(result, others, sub, tape, s)
    if tape is not None and recipe is not None:
        tape.on_call(func if method is None else ("method", *method), recipe, mut,
                     _result_recipe(result, out, sub, real_target, tape, what), static)
    return out


def _wrap_out(r: Any, others: list, sub: dict, tape: Any, s: Any) -> Any:
    """What an eager call returned, for the cell: an argument handed back is that lazy argument (`np.asarray(a)`
    is `a`; `np.histogram(x, bins=edges)` returns the very `edges`: as a new input, no replay would bind it);
    the rest as ``_wrap_result`` wraps it. (Arrays only: a NumPy scalar may be an argument's very object
    without being it, np.True_ being one object: `x < y` of a lazy complex and a lazy np.True_ is not `y`.)"""
    if isinstance(r, np.ndarray):
        lz = next((lz for lz in others if r is sub[id(lz)]), None)
        if lz is not None:
            return lz
    elif isinstance(r, tuple):
        return _tuple_like(r, [_wrap_out(i, others, sub, tape, s) for i in r])
    return _wrap_result(r, tape, s)


def _tuple_like(r: tuple, items: list) -> tuple:
    """``items`` as a tuple of ``r``'s kind (a named tuple stays one: ``np.linalg.svd(a).S``,
    ``np.unique(x, return_counts=True)``'s in NumPy 2)."""
    return type(r)._make(items) if hasattr(type(r), "_make") else tuple(items)


def _call_recipe(x: Any, marks: dict, tape: Any) -> Any:
    """The arguments of an eager call as a replay makes them: lazy arrays by the node evaluated for
    them, plain values as they are (copies of arrays and lists). None: something a replay cannot
    make again (an object the recording does not see into), and the tape says why."""
    if isinstance(x, LazyArray):
        return marks[id(x)]
    if isinstance(x, lazyrandom.LazyGenerator):
        return ("handle", x._handle)
    t = type(x)
    if t is tuple:
        parts = [_call_recipe(i, marks, tape) for i in x]
        return None if any(p is None for p in parts) else ("tuple", parts)
    if t is list:
        parts = [_call_recipe(i, marks, tape) for i in x]
        return None if any(p is None for p in parts) else ("list", parts)
    if t is dict:
        parts = [(k, _call_recipe(v, marks, tape)) for k, v in x.items()]
        return None if any(p is None for _, p in parts) else ("dict", parts)
    if isinstance(x, np.ndarray):
        return ("array", np.array(x, copy=True))
    if x is None or x is Ellipsis or isinstance(x, (bool, int, float, complex, str, bytes, slice, range,
                                                    np.generic, np.dtype, type, np.ufunc)) or callable(x) \
            and (getattr(x, "_fuse_real", None) is not None or getattr(x, "__module__", "") in ("numpy", None)):
        return ("lit", x)
    tape.unreplayable(f"a call outside the trace was given a {type(x).__name__}: a replay cannot make it again")
    return None


def _result_recipe(r: Any, out: Any, sub: dict, real_target: Any, tape: Any, what: str) -> Any:
    """How a replay binds what the call returned to the nodes the cell's arrays read."""
    if r is real_target and real_target is not None:
        return ("ignore",)
    if isinstance(r, np.ndarray) and any(r is v for v in sub.values()):  # (an argument returned: np.asarray(x);
        return ("ignore",)  # not a NumPy scalar, which may be the very object of an argument: np.False_)
    if isinstance(out, lazyrandom.LazyGenerator):
        return ("obj", out._handle)  # a generator the call made: the replay's call makes its own
    if isinstance(out, LazyArray):
        node = out._buf.node
        if node not in tape.eager_nodes:  # a view of an array the cell already holds (np.diag(A)): later
            return ("ignore",)  # steps read it through that array's storage and the view's chain, as here
        arr = np.asarray(r)
        return ("arr", node, out._chain, out.scalar, arr.dtype, arr.shape)
    if isinstance(r, (tuple, list)) and isinstance(out, (tuple, list)) and len(r) == len(out):
        parts = [_result_recipe(a, b, sub, real_target, tape, what) for a, b in zip(r, out)]
        return None if any(p is None for p in parts) else (type(r).__name__, parts)
    if r is None or isinstance(r, (bool, int, float, complex, str, bytes, np.generic)):
        return ("value", r)  # Python saw this value: a replay must see the same, or trace anew
    tape.unreplayable(f"{what} returned a {type(r).__name__}: a replay cannot bind it")
    return None


def _record_eager(s: Any, what: str, reason: str, read: list, result: Any, elapsed: float, **extra: Any) -> dict:
    """The kernel list's entry for a call that ran outside the trace (returned: a replay reports it too)."""
    s.report.times["run"] += elapsed
    line = s.line()
    static = {"name": s.eager_name(what, line), "kind": "eager", "ops": [what],
              "lines": [ln for ln in [line] if ln is not None],
              "bytes_read": _nbytes(read), "bytes_written": _nbytes(result),
              "source": None, "fallback": reason, **extra}
    s.report.launched(static, elapsed)
    return static


def _device_call(s: Any, func: Callable, twin: str, args: tuple, kwargs: dict, what: str, reason: str) -> Any:
    """``func`` as CuPy's own function on the device (see ``CupyBackend.device_call``), or None."""
    call = getattr(s.backend, "device_call", None)
    if call is None:  # not on the cupy backend
        return None
    leaves = _leaves((args, kwargs))
    lazies = [a for a in leaves if isinstance(a, LazyArray)]
    if not lazies or any(isinstance(a, np.ndarray) and not isinstance(a, LazyArray) for a in leaves):
        return None  # a host array among the arguments: NumPy on the host
    if any(lz.ndim > 1 and not lz._ghost().flags.c_contiguous for lz in lazies):
        return None  # (NumPy lays some results out as their argument, a transpose's cumsum; CuPy in C order)
    others = list({id(lz): lz for lz in lazies}.values())
    values = s.evaluate([lz._current() for lz in others])
    sub = {id(lz): v for lz, v in zip(others, values)}
    t0 = time.perf_counter()
    result = call(func, twin, _replace(args, sub), _replace(kwargs, sub), values)
    elapsed = time.perf_counter() - t0
    if result is None or any(r.size == 0 for r in (result if isinstance(result, tuple) else (result,))):
        return None  # (an empty result runs as NumPy's on the host: its strides are then NumPy's (`np.tile`
        # of an empty array has (4, 4), a new empty array (0, 0)), and a write keeps them, in place)
    route = f"cupy.{twin[1:] if twin.startswith('.') else twin}"
    s.record_fallback(what, f"{reason}: it runs as {route} on the GPU, where its arguments are")
    _record_eager(s, what, reason, values, result, elapsed, route=f"{route} (on the device)")
    return tuple(_device_input(s, r) for r in result) if isinstance(result, tuple) else _device_input(s, result)


def _device_input(s: Any, value: Any) -> LazyArray:
    """A result on the device as a lazy array: kernels read it there; the cell's end copies it back."""
    s.keepalive.append(value)
    return LazyArray(s, Buffer(s.add_input(value)), ())


def _leaves(x: Any) -> list[Any]:
    """The values inside nested tuples, lists and dicts (an argument list's arrays and scalars)."""
    if isinstance(x, (tuple, list)):
        return [leaf for i in x for leaf in _leaves(i)]
    if isinstance(x, dict):
        return [leaf for i in x.values() for leaf in _leaves(i)]
    return [x]


def _nbytes(x: Any) -> int:
    """Bytes of the arrays in ``x`` (the memory a fallback read or wrote)."""
    if isinstance(x, np.ndarray) or hasattr(x, "__cuda_array_interface__"):
        return int(x.nbytes)
    if isinstance(x, (list, tuple)):
        return sum(_nbytes(i) for i in x)
    return 0


def _qualname(real: Callable, name: str) -> str:
    """``np.linalg.norm`` rather than ``np.norm``: the public module path of a NumPy function."""
    parts = [p for p in str(getattr(real, "__module__", None) or "numpy").split(".") if not p.startswith("_")]
    return ".".join(["np"] + parts[1:] + [name]) if parts and parts[0] == "numpy" else f"np.{name}"


def _register_storage(s: Any, bufs: list, storages: list) -> None:
    """Map each buffer's real storage to the buffer, so that a view the eager function returns
    (``np.moveaxis``, ``np.flip``, ``.diagonal()``) aliases the lazy array it was taken from."""
    for buf, storage in zip(bufs, storages):
        known = s.buffers.get(id(storage))
        if known is None:
            known = s.made_buffers.get(id(storage))
        if isinstance(storage, np.ndarray) and storage.base is None and storage.flags.c_contiguous \
                and buf.node.layout is None and known in (None, buf):
            # (weakly for a lazy temporary's: held while the cell holds it, see trace.wrap_array)
            (s.buffers if buf.origin is not None else s.made_buffers)[id(storage)] = buf
            s.keepalive.append(storage)  # its id stays this array's while the cell runs


def _collect(x: Any, out: list[LazyArray]) -> None:
    out.extend(a for a in _leaves(x) if isinstance(a, LazyArray))


def _replace(x: Any, sub: dict[int, Any]) -> Any:
    if isinstance(x, LazyArray):
        return sub[id(x)]
    if isinstance(x, lazyrandom.LazyGenerator):
        return x._fuse_real
    if isinstance(x, tuple):
        return tuple(_replace(i, sub) for i in x)
    if isinstance(x, list):
        return [_replace(i, sub) for i in x]
    if isinstance(x, dict):
        return {k: _replace(v, sub) for k, v in x.items()}
    return x


def _wrap_result(r: Any, tape: Any = None, s: Any = None) -> Any:
    """Arrays an eager call returned, as lazy inputs. Under a recording ``tape`` each new array is an
    input the call's step binds (not a constant), and a NumPy scalar becomes a lazy 0-d value, so a
    replay computes with its new value instead of one baked into a plan."""
    if isinstance(r, np.ndarray) and r.dtype.kind in "biufc":
        if tape is None:
            return wrap_array(session(), r, origin=False)
        with tape.claiming(r):
            return wrap_array(s, r, origin=False)
    if tape is not None and isinstance(r, np.generic) and r.dtype.kind in "biufc":
        arr = np.asarray(r)
        with tape.claiming(arr):
            lz = wrap_array(s, arr, origin=False)
        lz.scalar = True
        return lz
    if isinstance(r, lazyrandom.GENERATORS):
        return lazyrandom.wrap(r, None, "a generator the cell made")
    if isinstance(r, tuple):
        return _tuple_like(r, [_wrap_result(i, tape, s) for i in r])
    if isinstance(r, list) and any(isinstance(i, np.ndarray) for i in r):
        return [_wrap_result(i, tape, s) for i in r]
    return r


_MUTATING_METHODS = frozenset({"sort", "fill", "partition", "put", "itemset", "resize", "byteswap",
                               "setfield", "setflags"})


def eager_method(lz: LazyArray, name: str) -> Any:
    """``x.name`` for ndarray attributes the tracer does not model."""
    # (a NumPy scalar: its own attribute of its value: `.real` is a float64, `.is_integer()` a bool)
    attr = getattr(lz.dtype.type if lz.scalar else np.ndarray, name)
    if not callable(attr):  # a property: .real, .imag (a replay reads them again), .flags, .base, ...
        return eager_call(operator.attrgetter(name), (lz,), {}, f".{name}",
                          f".{name} is not traced: it is read from the computed array")
    mutating = name in _MUTATING_METHODS and not lz.scalar
    reason = (f".{name}() mutates the array: ran eagerly" if mutating
              else f".{name}() is not supported lazily")

    def method(*args: Any, **kwargs: Any) -> Any:
        return eager_call(lambda arr, *a, **k: getattr(arr, name)(*a, **k), (lz,) + args, kwargs,
                          f".{name}()", reason, mutates=0 if mutating else None,
                          twin=None if lz.scalar else f".{name}")

    return method


# -- ufuncs ----------------------------------------------------------------------------

_REDUCE_ARGS = ("axis", "dtype", "out", "keepdims")


def ufunc_call(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``__array_ufunc__``: trace what we can, run the rest eagerly."""
    name = UFUNCS.get(ufunc)
    if method == "__call__" and len(inputs) > ufunc.nin and "out" not in kwargs:
        # NumPy's positional outputs: np.add(x, y, z) is np.add(x, y, out=z) (both spellings: NumPy raises)
        outs = inputs[ufunc.nin:]
        inputs = inputs[:ufunc.nin]
        if any(o is not None for o in outs):
            kwargs = dict(kwargs, out=outs)
    try:
        if method == "__call__" and ufunc is np.matmul and not kwargs:
            return matmul(*inputs)
        if method == "__call__" and name is not None and set(kwargs) <= {"out", "dtype"}:
            out = kwargs.get("out")
            out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
            if out is None:
                return elementwise(name, list(inputs), dtype=kwargs.get("dtype"))
            if isinstance(out, LazyArray) and out.scalar:  # NumPy's words: a NumPy scalar is no output array
                raise TypeError("return arrays must be of ArrayType")
            if isinstance(out, LazyArray) and "dtype" not in kwargs:
                return ufunc_out(name, list(inputs), out)
        if method == "reduce" and name in UFUNC_REDUCE:
            kw = dict(zip(_REDUCE_ARGS, inputs[1:]), **kwargs)
            if set(kw) <= {"axis", "dtype", "keepdims"}:
                return _method_reduce(UFUNC_REDUCE[name], operand(inputs[0]), kw.get("axis", 0),
                                      kw.get("dtype"), None, kw.get("keepdims", False), {})
    except Unsupported:
        pass
    label = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    mutates: int | str | None = 0 if method == "at" else ("out" if "out" in kwargs else None)
    fn = ufunc if method == "__call__" else getattr(ufunc, method)
    return eager_call(fn, inputs, kwargs, label, f"{label} with these arguments is not traced", mutates)


class LazyUfunc:
    """A ufunc that traces when it is given arrays."""

    __slots__ = ("_ufunc",)

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, (LazyArray, np.ndarray)) for a in args) or isinstance(kwargs.get("out"), LazyArray):
            return ufunc_call(self._ufunc, "__call__", args, kwargs)
        return self._ufunc(*args, **kwargs)

    def _method(self, method: str) -> Callable:
        fn = lambda *args, **kwargs: ufunc_call(self._ufunc, method, args, kwargs)  # noqa: E731
        fn._fuse_real = getattr(self._ufunc, method)  # type: ignore[attr-defined]  # what finalize hands back
        return fn

    def __getattr__(self, name: str) -> Any:
        if name in ("reduce", "accumulate", "outer", "at", "reduceat"):
            return self._method(name)
        return getattr(self._ufunc, name)

    def __repr__(self) -> str:
        return repr(self._ufunc)


# -- traced functions ---------------------------------------------------------------------

def _lazy(x: Any) -> LazyArray:
    x = operand(x)
    if not isinstance(x, LazyArray):
        x = wrap_array(session(), np.asarray(x), origin=False)
    return x


def _reducer(name: str, has_dtype: bool, has_ddof: bool = False) -> Callable:
    def fn(a, axis=None, *args, **kwargs):
        names = (["dtype"] if has_dtype else []) + ["out"] + (["ddof"] if has_ddof else []) + ["keepdims"]
        kw = dict(zip(names, args), **kwargs)
        dtype, out, keepdims = kw.pop("dtype", None), kw.pop("out", None), kw.pop("keepdims", False)
        return _method_reduce(name, _lazy(a), axis, dtype, out, keepdims, kw)

    fn.__name__ = name
    return fn


def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kw: Any) -> Any:
    if kw or out is not None and not (isinstance(out, LazyArray) and not out.scalar):
        raise Unsupported("clip(**kwargs)")
    a = _lazy(a)
    np.clip(np.zeros((), a.dtype), views_probe(a_min), views_probe(a_max))  # NumPy validates
    if a.dtype.kind in "iu":  # NumPy's _clip: out-of-range Python int bounds are no bounds (NEP 50)
        info = np.iinfo(a.dtype)
        a_min = None if type(a_min) is int and a_min <= info.min else a_min
        a_max = None if type(a_max) is int and a_max >= info.max else a_max
    op, args = (("positive", [a]) if a_min is None and a_max is None else ("minimum", [a, a_max]) if a_min is None
                else ("maximum", [a, a_min]) if a_max is None else ("clip", [a, a_min, a_max]))  # (NumPy's _clip)
    return elementwise(op, args) if out is None else ufunc_out(op, args, out)  # (np.clip(T, 0, 1, out=T))


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """``np.roll``: a copy laid out like ``a`` (NumPy's ``empty_like``), its values moved, never computed
    (exactly NumPy's): one ``roll`` op of a C-ordered array, else each rolled axis written as its two
    slices, one axis after another."""
    a = _lazy(a)
    if a.scalar or isinstance(shift, LazyArray) or isinstance(axis, LazyArray):
        raise Unsupported("np.roll of a scalar, or by a lazy shift")
    if axis is None:
        return roll(a.ravel(), shift, 0).reshape(a.shape)
    try:
        both = np.broadcast(shift, axis)
    except ValueError:
        raise Unsupported("np.roll: NumPy says why") from None
    pairs = list(both)
    if both.ndim > 1 or any(not isinstance(x, (int, np.integer)) for pair in pairs for x in pair):
        raise Unsupported("np.roll: NumPy says why")
    shifts = dict.fromkeys(range(a.ndim), 0)
    for sh, ax in pairs:
        shifts[normalize_axis_tuple(int(ax), a.ndim)[0]] += int(sh)
    moved = {ax: sh % a.shape[ax] for ax, sh in shifts.items() if a.shape[ax] and sh % a.shape[ax]}
    if moved and views.like_order(a._ghost()) is None:
        # one op reading each element from where the roll moves it from: it fuses into the kernel of
        # whatever reads it (a stencil's ``np.roll(Z, 1, axis=0) + ...``), its argument read from memory
        src = a._current()
        if src.op == "copy" and src.args[0].dtype == src.dtype:  # (the copied values: np.roll by 0 is a copy)
            src = src.args[0]
        if src.op == "roll":  # a roll of a roll (the game of life's neighbours) is one roll of its argument
            both = roll_moves(src)
            for ax, k in moved.items():
                both[ax] = (both.get(ax, 0) + k) % a.shape[ax]
            if any(both.values()):
                src, moved = src.args[0], {ax: k for ax, k in sorted(both.items()) if k}
        params = (("shift", tuple(moved.values())), ("axis", tuple(moved)))
        return fresh(session().bind("roll", (src,), params, a.dtype, a.shape))
    out = a  # (another memory order: NumPy's empty_like keeps it; written as the two slices of each axis)
    for ax, sh in shifts.items():
        n = a.shape[ax]
        k = sh % n if n else 0
        if k:
            src, out = out, out.copy(order="K")
            head = (slice(None),) * ax
            out[head + (slice(k, None),)] = src[head + (slice(None, n - k),)]
            out[head + (slice(None, k),)] = src[head + (slice(n - k, None),)]
    return a.copy(order="K") if out is a else out


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """``np.concatenate`` of C-ordered pieces: a new array written piece by piece (values moved,
    never computed). Other layouts, ``out=``, ``dtype=`` and whatever NumPy rejects run in NumPy."""
    if out is not None or dtype is not None or casting != "same_kind" or type(arrays) not in (list, tuple):
        raise Unsupported("np.concatenate with these arguments")
    parts = [_lazy(a) for a in arrays]
    if not parts or any(p.ndim == 0 for p in parts):
        raise Unsupported("np.concatenate: NumPy says why")
    if axis is None:
        parts, axis = [p.ravel() for p in parts], 0
    nd = parts[0].ndim
    if isinstance(axis, LazyArray) or any(p.ndim != nd for p in parts):
        raise Unsupported("np.concatenate: NumPy says why")
    ax = normalize_axis_tuple(axis, nd)[0]
    rest = [p.shape[:ax] + p.shape[ax + 1:] for p in parts]
    if any(r != rest[0] for r in rest) or any(nd > 1 and views.like_order(p._ghost()) is not None for p in parts):
        raise Unsupported("np.concatenate: other shapes or memory orders")  # (NumPy's result keeps their order)
    result_dtype = np.result_type(*[p.dtype for p in parts])
    _require_traceable(result_dtype)
    shape = parts[0].shape[:ax] + (sum(p.shape[ax] for p in parts),) + parts[0].shape[ax + 1:]
    res = zeros(shape, dtype=result_dtype)
    start, head = 0, (slice(None),) * ax
    for p in parts:
        n = p.shape[ax]
        if n:
            res[head + (slice(start, start + n),)] = p
        start += n
    return res


def stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    if type(arrays) not in (list, tuple) or not arrays:
        raise Unsupported("np.stack: NumPy says why")
    parts = [_lazy(a) for a in arrays]
    if any(p.shape != parts[0].shape for p in parts):
        raise Unsupported("np.stack: NumPy says why")
    ax = normalize_axis_tuple(axis, parts[0].ndim + 1)[0]
    return concatenate([expand_dims(p, ax) for p in parts], ax, out, dtype=dtype, casting=casting)


def _at_least(p: LazyArray, nd: int) -> LazyArray:
    return p.reshape((1,) * (nd - p.ndim) + p.shape) if p.ndim < nd else p  # (1-D to 2-D: a row)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    if type(tup) not in (list, tuple):
        raise Unsupported("np.vstack of a generator")
    return concatenate([_at_least(_lazy(a), 2) for a in tup], 0, dtype=dtype, casting=casting)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    if type(tup) not in (list, tuple):
        raise Unsupported("np.hstack of a generator")
    parts = [_at_least(_lazy(a), 1) for a in tup]
    return concatenate(parts, 0 if parts and parts[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def outer(a: Any, b: Any, out: Any = None) -> Any:
    """``np.outer``: NumPy's own ``multiply(a.ravel()[:, None], b.ravel()[None, :])``."""
    if out is not None:
        raise Unsupported("np.outer(out=)")
    return elementwise("multiply", [_lazy(a).ravel()[:, None], _lazy(b).ravel()[None, :]])


def diff(a: Any, n: int = 1, axis: int = -1, **kw: Any) -> Any:
    """``np.diff`` as NumPy computes it: ``n`` differences of neighbouring slices."""
    if kw or type(n) is not int or n < 0:
        raise Unsupported("np.diff with prepend/append, or NumPy says why")
    if n == 0:
        return a
    a = _lazy(a)
    if a.ndim == 0 or isinstance(axis, LazyArray):
        raise Unsupported("np.diff: NumPy says why")
    ax = normalize_axis_tuple(axis, a.ndim)[0]
    head = (slice(None),) * ax
    op = "not_equal" if a.dtype == np.bool_ else "subtract"
    for _ in range(n):
        a = elementwise(op, [a[head + (slice(1, None),)], a[head + (slice(None, -1),)]])
    return a


def views_probe(x: Any) -> Any:
    return np.zeros((), x.dtype) if isinstance(x, LazyArray) else x


def dot(a: Any, b: Any, out: Any = None) -> Any:
    a, b = _lazy(a), _lazy(b)
    if out is None and a.ndim == 0 or b.ndim == 0:
        return elementwise("multiply", [a, b])
    if out is None and a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return eager_call(np.dot, (a, b), {} if out is None else {"out": out}, "np.dot",
                      "np.dot of arrays with more than 2 dimensions is not traced",
                      mutates="out" if out is not None else None)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """``np.linalg.norm``'s default case, as NumPy computes it: ``sqrt(x.dot(x))`` over the flat array
    (the 2-norm of a vector, the Frobenius norm of a matrix; an integer array as float64 first), and its
    vector norms along one axis (``np.linalg.norm(X[:, None] - C[None], axis=2)``, k-means' distances).
    Other orders, axes and dtypes run as NumPy's call."""
    x = _lazy(x)
    if axis is not None:
        return _norm_along(x, ord, axis, keepdims)
    whole = ord is None or isinstance(ord, str) and ord in ("f", "fro") and x.ndim == 2 or (
        type(ord) in (int, float) and ord == 2 and x.ndim == 1)
    if not whole or axis is not None or keepdims or x.dtype.kind not in "biuf" or x.dtype.kind == "f" and (
            x.dtype not in (np.float32, np.float64)) or not x._ghost().flags.c_contiguous:
        raise Unsupported("np.linalg.norm with an order, an axis, keepdims, or this dtype or layout")
    if x.dtype.kind != "f":
        x = x.astype(float)
    flat = x.reshape(-1)  # (x.ravel(order='K') of a C-contiguous array)
    return elementwise("sqrt", [matmul(flat, flat)])


def _norm_along(x: LazyArray, ord: Any, axis: Any, keepdims: bool) -> Any:
    """NumPy's vector norms along one axis, its own expressions (``numpy/linalg/_linalg.py``): 2 (or
    None) is ``sqrt(add.reduce((x.conj() * x).real))``, ``x * x`` for real data; 1 ``add.reduce(abs(x))``;
    inf and -inf ``abs(x).max()`` and ``.min()``; 0 the count of nonzeros as floats."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(axes) != 1 or x.dtype.kind not in "biuf" or isinstance(ord, str) or not (
            ord is None or type(ord) in (int, float) and ord in (0, 1, 2, np.inf, -np.inf)):
        raise Unsupported("np.linalg.norm with an order, an axis, keepdims, or this dtype or layout")
    if x.dtype.kind != "f":
        x = x.astype(float)
    if ord == 0:
        return reduction("sum", elementwise("not_equal", [x, 0]).astype(x.dtype), axis=axes, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        return reduction("max" if ord > 0 else "min", elementwise("absolute", [x]), axis=axes, keepdims=keepdims)
    if ord == 1:
        return reduction("sum", elementwise("absolute", [x]), axis=axes, keepdims=keepdims)
    return elementwise("sqrt", [reduction("sum", elementwise("multiply", [x, x]), axis=axes, keepdims=keepdims)])


def round_(a: Any, decimals: int = 0, out: Any = None) -> Any:
    a = _lazy(a)
    if out is None and decimals == 0 and a.dtype.kind == "f":
        return elementwise("rint", [a])
    if out is None and decimals >= 0 and a.dtype.kind in "iu":
        r = a.copy(order="K")  # (in the input's memory order, as NumPy's)
        r.scalar = a.ndim == 0  # NumPy rounds a 0-d array (or a Python int) to a NumPy scalar
        return r
    return eager_call(np.round, (a, decimals), {} if out is None else {"out": out}, "np.round",
                      "np.round with decimals != 0 is not traced", mutates="out" if out is not None else None)


def where(cond: Any, *xy: Any) -> Any:
    if len(xy) != 2:
        return eager_call(np.where, (cond,) + xy, {}, "np.where(cond)",
                          "np.where with one argument has a data-dependent shape")
    return elementwise("where", [cond, *xy])


def expand_dims(a: Any, axis: Any) -> LazyArray:
    a = _lazy(a)
    axes = normalize_axis_tuple(axis, a.ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1))
    dims = iter(a.shape)
    # NumPy's expand_dims is a reshape (the new axes' strides are a reshape's, not those of x[None])
    return a._view("reshape", tuple(1 if i in axes else next(dims) for i in range(a.ndim + len(axes))))


def broadcast_to(a: Any, shape: Any, subok: bool = False) -> LazyArray:
    a = _lazy(a)
    shape = (operator.index(shape),) if isinstance(shape, (int, np.integer)) else tuple(map(operator.index, shape))
    return a._view("broadcast", shape, writeable=False)


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, **kw: Any) -> Any:
    if isinstance(a, LazyArray) and not kw:
        g = a._ghost()
        laid_out = order in (None, "K", "A") or (g.flags.c_contiguous if order == "C" else g.flags.f_contiguous)
        if copy or not laid_out or dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:  # NumPy's own words
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return _as_0d_array(a.astype(a.dtype if dtype is None else dtype, order=order or "K"))
        return _as_0d_array(a)
    return _array_like(np.asarray, a, dtype=dtype, order=order, copy=copy, **kw)


def array(a: Any, dtype: Any = None, *, copy: bool = True, **kw: Any) -> Any:
    if isinstance(a, LazyArray) and not kw:
        return _as_0d_array(a.astype(a.dtype if dtype is None else dtype, copy=copy))
    return _array_like(np.array, a, dtype=dtype, copy=copy, **kw)


def ascontiguousarray(a: Any, dtype: Any = None, **kw: Any) -> Any:
    """NumPy's ``array(a, dtype, copy=None, order='C', ndmin=1)``: ``a`` itself when it is already a
    C-contiguous array of that dtype, a 1-element view of a 0-d array, else a C-ordered copy."""
    if not isinstance(a, LazyArray) or kw:
        return _array_like(np.ascontiguousarray, a, dtype=dtype, **kw)
    out = asarray(a, dtype)
    if out.ndim == 0:
        out = out.reshape(1)
    return out if out._ghost().flags.c_contiguous else out.copy()


def _ghost_list(x: Any, idx: tuple[int, ...], parts: list) -> Any:
    """The list with zeros of each lazy part's dtype and shape; the parts (index, value) go into ``parts``.
    (A module function: a nested recursive one is a reference cycle, which would keep the parts' lazy
    arrays alive until the garbage collector runs, and a live array changes what a plan stores.)"""
    if isinstance(x, LazyArray):
        parts.append((idx, x))
        return np.zeros(x.shape, x.dtype)
    if isinstance(x, (list, tuple)):
        return [_ghost_list(v, idx + (i,), parts) for i, v in enumerate(x)]
    if isinstance(x, (bool, int, float, complex, np.generic)):
        parts.append((idx, x))
        return x
    raise Unsupported("not a list of arrays and numbers")


# np.array of more parts than this, few of them still to compute (a list the cell filled in a loop whose
# steps synced: ``xs.append(x)``, a vote per test point), is one NumPy call on their values: assigned one
# by one, each part is a kernel. Parts computed in one graph (a value per step of a loop that did not
# sync) are assigned: the compiled replay copies them in its loop.
MAX_PARTS = 16


def _traced_list(a: list | tuple, dtype: Any) -> LazyArray | str:
    """``np.array([x, y, z])`` of lazy arrays and numbers (a state vector of an ODE step, rows
    stacked), traced: a new array of the dtype and shape NumPy gives, its parts assigned one by one.
    Where the list is not that (ragged, other objects, many parts), why: the eager call then does what
    NumPy does."""
    parts: list[tuple[tuple[int, ...], Any]] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (NumPy's warnings come from the eager call, once)
            proto = np.array(_ghost_list(a, (), parts), dtype=dtype)
    except Exception:  # noqa: BLE001 - ragged, or what NumPy rejects: the eager call says so
        return "it is not an array NumPy makes without objects"
    if proto.dtype.kind not in "biufc" or any(
            proto.ndim != len(idx) + (x.ndim if isinstance(x, LazyArray) else 0) for idx, x in parts):
        return "it is not an array NumPy makes without objects"
    if len(parts) > MAX_PARTS and sum(1 for _, x in parts if isinstance(x, LazyArray) and not x._computed()) \
            <= MAX_PARTS:
        return (f"its {len(parts)} parts, computed, are copied by one NumPy call (an assignment kernel each "
                f"costs more, past {MAX_PARTS})")
    if proto.ndim == 1 and 2 <= len(parts) <= MAX_PARTS and all(
            not isinstance(x, LazyArray) or x.ndim == 0 and (x.dtype.kind != "c" or proto.dtype.kind == "c")
            and not through_int(x, proto.dtype) for _, x in parts):  # (those raise: assigned, checked)
        # numbers (an ODE's right-hand side): one elementwise select, which fuses
        # with what computes them and what reads the vector (assignments one by one cut a kernel each)
        iota = arange(len(parts))
        # (a part of the vector's dtype is selected as it is: a copy would be one more op to trace and plan)
        vals = [(x if x.dtype == proto.dtype else x.astype(proto.dtype)) if isinstance(x, LazyArray) else proto[idx]
                for idx, x in parts]
        out = vals[-1]
        for i in reversed(range(len(vals) - 1)):
            out = where(iota == i, vals[i], out)
        return out
    try:
        out = zeros(proto.shape, proto.dtype)
    except Unsupported as e:
        return str(e)
    for idx, x in parts:
        out[idx] = x
    return out


def _as_0d_array(x: LazyArray) -> LazyArray:
    """np.asarray of a NumPy scalar is a new 0-d array."""
    return scalar_as_array(x) if x.scalar else x


def _array_like(fn: Callable, a: Any, **kw: Any) -> Any:
    kw = {k: v for k, v in kw.items() if v is not None}
    lazies: list[LazyArray] = []
    _collect(a, lazies)
    if lazies:
        if isinstance(a, (list, tuple)) and set(kw) <= {"dtype", "copy"} and kw.get("copy", True):
            out = _traced_list(a, kw.get("dtype"))
            if isinstance(out, LazyArray):
                return out
            return eager_call(fn, (a,), kw, f"np.{fn.__name__}", f"np.{fn.__name__} of this list: {out}")
        return eager_call(fn, (a,), kw, f"np.{fn.__name__}", f"np.{fn.__name__} of this list of lazy arrays is not traced")
    return _wrap_result(fn(a, **kw))


# -- creation -------------------------------------------------------------------------------

def _shape(shape: Any) -> tuple[int, ...]:
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(map(operator.index, shape))
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _create(op: str, params: tuple, dtype: np.dtype, shape: tuple[int, ...]) -> LazyArray:
    return fresh(session().bind(op, (), params, dtype, shape))


def zeros(shape: Any, dtype: Any = float, order: str = "C", **kw: Any) -> LazyArray:
    shape, dtype = _shape(shape), np.dtype(dtype)
    _require_traceable(dtype)
    return _create("zeros", (shape, dtype.str), dtype, shape)


def ones(shape: Any, dtype: Any = None, order: str = "C", **kw: Any) -> LazyArray:
    shape, dtype = _shape(shape), np.dtype(float if dtype is None else dtype)
    _require_traceable(dtype)
    return _create("ones", (shape, dtype.str), dtype, shape)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", **kw: Any) -> LazyArray:
    shape = _shape(shape)
    if isinstance(fill_value, LazyArray) or not isinstance(fill_value, (bool, int, float, complex, np.generic)):
        raise Unsupported("full() with an array fill value")
    dtype = np.full((), fill_value, dtype).dtype
    _require_traceable(dtype)
    return _create("full", (shape, fill_value, dtype.str), dtype, shape)


def _require_traceable(dtype: np.dtype) -> None:
    if dtype.kind not in "biufc":
        raise Unsupported(f"{dtype} arrays are not traced")


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, **kw: Any) -> LazyArray:
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    for v in (start, stop, step):
        if isinstance(v, LazyArray) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise Unsupported("arange() with non-real or lazy arguments")
    # NumPy's dtype from the types of all three (start * 0 keeps the type) and its ZeroDivisionError
    rdtype = np.arange(start * 0, stop * 0, step, dtype=dtype).dtype
    _require_traceable(rdtype)
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        n = max(0, -((int(start) - int(stop)) // int(step)))
    else:
        n = max(0, int(np.ceil((float(stop) - float(start)) / float(step))))
    return _create("arange", (start, stop, step, rdtype.str), rdtype, (n,))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    if retstep or not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, LazyArray)
                          for v in (start, stop)):
        raise Unsupported("linspace(retstep=True) or array endpoints")
    num = operator.index(num)
    rdtype = np.linspace(start, stop, num=min(num, 2), endpoint=endpoint, dtype=dtype).dtype
    return _create("linspace", (start, stop, num, bool(endpoint), rdtype.str), rdtype, (num,))


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float, **kw: Any) -> LazyArray:
    dtype = np.dtype(dtype)
    _require_traceable(dtype)
    N, M = operator.index(N), operator.index(N if M is None else M)
    return _create("eye", (N, M, operator.index(k), dtype.str), dtype, _shape((N, M)))


def identity(n: int, dtype: Any = None) -> LazyArray:
    return eye(n, dtype=float if dtype is None else dtype)


def _like(maker: Callable, takes_fill: bool = False) -> Callable:
    """``zeros_like``-style: shape and dtype from ``a`` unless given."""
    def fn(a: Any, *args: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> Any:
        fill, rest = (args[:1], args[1:]) if takes_fill else ((), args)
        dtype = rest[0] if rest else dtype
        a_shape, a_dtype = (a.shape, a.dtype) if isinstance(a, LazyArray) else (np.shape(a), np.asarray(a).dtype)
        dtype = a_dtype if dtype is None else dtype
        axes = views.order_axes(a._ghost(), order) if isinstance(a, LazyArray) and shape is None else None
        if axes is not None:  # NumPy's order='K': laid out like ``a``
            return maker(tuple(a_shape[d] for d in axes), *fill, dtype=dtype)._view("transpose", views.inverse(axes))
        return maker(a_shape if shape is None else shape, *fill, dtype=dtype)

    return fn


# -- the function table: name -> traced implementation ------------------------------------------

FUNCS: dict[str, Callable] = {
    **{n: _reducer(n, has_dtype=True) for n in ("sum", "prod", "mean")},
    **{n: _reducer(n, has_dtype=False) for n in ("max", "min", "any", "all", "argmax", "argmin")},
    "amax": _reducer("max", has_dtype=False), "amin": _reducer("min", has_dtype=False),
    "var": _reducer("var", has_dtype=True, has_ddof=True), "std": _reducer("std", has_dtype=True, has_ddof=True),
    "reshape": lambda a, shape=None, order="C", **kw: _lazy(a).reshape(shape, order=order, **kw),
    "transpose": lambda a, axes=None: _lazy(a).transpose(axes),
    "swapaxes": lambda a, a1, a2: _lazy(a).swapaxes(a1, a2),
    "squeeze": lambda a, axis=None: _lazy(a).squeeze(axis),
    "ravel": lambda a, order="C": _lazy(a).ravel(order),
    "copy": lambda a, order="K", subok=False: _as_0d_array(_lazy(a).copy(order)),  # (a NumPy scalar's is 0-d)
    "astype": lambda x, dtype, copy=True, **kw: _lazy(x).astype(dtype, copy=copy),
    "expand_dims": expand_dims, "broadcast_to": broadcast_to,
    "where": where, "clip": clip, "dot": dot, "roll": roll, "diff": diff, "outer": outer,
    "concatenate": concatenate, "stack": stack, "vstack": vstack, "hstack": hstack, "round": round_, "around": round_,
    "shape": lambda a: np.shape(a) if not isinstance(a, LazyArray) else a.shape,
    "ndim": lambda a: np.ndim(a) if not isinstance(a, LazyArray) else a.ndim,
    "size": lambda a, axis=None: (a.size if axis is None else a.shape[axis]) if isinstance(a, LazyArray) else np.size(a, axis),
    "asarray": asarray, "asanyarray": asarray, "array": array,
    "ascontiguousarray": ascontiguousarray,
    "zeros": zeros, "ones": ones, "empty": zeros, "full": full,
    "arange": arange, "linspace": linspace, "eye": eye, "identity": identity,
    "zeros_like": _like(zeros), "ones_like": _like(ones), "empty_like": _like(zeros), "full_like": _like(full, takes_fill=True),
}


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    if not isinstance(a, LazyArray):
        raise Unsupported("not a lazy array")
    return a.diagonal(offset, axis1, axis2)


def diag(v: Any, k: int = 0) -> Any:
    """``np.diag`` of a 2-D array is its diagonal (a view); of a 1-D one a new matrix (run as NumPy)."""
    if not isinstance(v, LazyArray) or v.ndim != 2:
        raise Unsupported("np.diag builds a matrix")
    return v.diagonal(k)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Any:
    """The sum of a diagonal, as NumPy's ``trace`` adds it (an ``add.reduce`` of the diagonal)."""
    if not isinstance(a, LazyArray) or a.ndim != 2 or out is not None:
        raise Unsupported("np.trace of this array")
    return a.diagonal(offset, axis1, axis2).sum(dtype=dtype)


FUNCS.update(diagonal=diagonal, diag=diag, trace=trace)


SUBMODULE_FUNCS: dict[str, dict[str, Callable]] = {"linalg": {"norm": norm}}  # np.linalg.norm


def array_function(func: Callable, args: tuple, kwargs: dict) -> Any:
    """``__array_function__``: a real NumPy function was called with a lazy array."""
    name = getattr(func, "__name__", "")
    impl = FUNCS.get(name) if getattr(np, name, None) is func else None
    if impl is not None:
        try:
            return impl(*args, **kwargs)
        except Unsupported:
            pass
    return eager_call(func, args, kwargs, f"np.{name}", f"np.{name} is not supported lazily",
                      twin=name if getattr(np, name, None) is func else None)


def _traced(name: str, impl: Callable, real: Callable) -> Callable:
    """A namespace function: traced, falling back to NumPy when it cannot be."""
    def fn(*args: Any, **kwargs: Any) -> Any:
        try:
            return impl(*args, **kwargs)
        except Unsupported:
            lazies: list[LazyArray] = []
            _collect((args, kwargs), lazies)
            if not lazies:
                return _wrap_result(real(*args, **kwargs))
            label = f"np.{name}" if getattr(np, name, None) is real else _qualname(real, name)  # (np.linalg.norm)
            return eager_call(real, args, kwargs, label, f"{label} with these arguments is not traced",
                              twin=name if getattr(np, name, None) is real else None)

    fn.__name__ = name
    fn.__doc__ = getattr(real, "__doc__", None)
    fn._fuse_real = real  # type: ignore[attr-defined]  # what finalize hands back to the user
    return fn


def _eager(name: str, real: Callable, reason: str | None = None, always: bool = False) -> Callable:
    """A namespace function we do not trace: NumPy runs it, lazy arguments computed first."""
    def fn(*args: Any, **kwargs: Any) -> Any:
        lazies: list[LazyArray] = []
        _collect((args, kwargs), lazies)
        s = active()
        label = _qualname(real, name)  # np.linalg.solve, not np.solve
        if not lazies and not always:
            if s is None or s.tape is None or name in _PURE and reason != _RANDOM_REASON or name in _ERROR_STATE:
                return _wrap_result(real(*args, **kwargs))
            # a replay makes the call again (np.random.seed resets what later draws give)
            return eager_call(real, args, kwargs, label, "", quiet=True)
        mutates = 0 if name in _MUTATING_FUNCS else ("out" if "out" in kwargs else None)
        return eager_call(real, args, kwargs, label, reason or f"{label} is not supported lazily", mutates,
                          twin=name if getattr(np, name, None) is real else None)

    fn.__name__ = name
    fn.__doc__ = getattr(real, "__doc__", None)
    fn._fuse_real = real  # type: ignore[attr-defined]
    return fn


# NumPy functions without lazy arguments that a replay may skip: pure functions of guarded values
_PURE = frozenset({"isscalar", "result_type", "promote_types", "can_cast", "min_scalar_type", "iscomplexobj",
                   "isrealobj", "isfortran", "broadcast_shapes", "iinfo", "finfo", "dtype", "issubdtype"})
# the error state's calls: a replay sets the modes each step ran under (``cache.Tape._under``), not the calls
_ERROR_STATE = frozenset({"seterr", "geterr"})
_MUTATING_FUNCS = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal", "shuffle", "put_along_axis"})
_RANDOM_REASON = ("random draws run eagerly, so NumPy's global random state advances exactly as without "
                  "%%fuse")


class LazyModule(types.ModuleType):
    """``numpy`` (or a submodule) as seen from inside a ``%%fuse`` cell."""

    def __init__(self, real: types.ModuleType, funcs: dict[str, Callable] | None = None,
                 eager_reason: str | None = None, always: bool = False) -> None:
        super().__init__(real.__name__, real.__doc__)
        self._real, self._funcs, self._reason, self._always = real, funcs or {}, eager_reason, always
        self._cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            return getattr(self._real, name)
        try:
            return self._cache[name]
        except KeyError:
            pass
        real = getattr(self._real, name)  # AttributeError exactly as NumPy's
        if name in self._funcs:
            value: Any = _traced(name, self._funcs[name], real)
        elif isinstance(real, np.ufunc):
            value = LazyUfunc(real)
        elif isinstance(real, types.ModuleType) and real.__name__.startswith("numpy."):
            value = LazyModule(real, SUBMODULE_FUNCS.get(name), eager_reason=_RANDOM_REASON if name == "random"
                               else None, always=name == "random")
            if name == "random":  # generators the cell makes are held as recorded objects
                value._cache.update(lazyrandom.OVERRIDES)
        elif isinstance(real, (types.FunctionType, types.BuiltinFunctionType)) or (
                callable(real) and not isinstance(real, type) and hasattr(real, "__module__")
                and str(getattr(real, "__module__", "")).startswith("numpy")):
            value = _eager(name, real, self._reason, self._always and name not in _RANDOM_PASSTHROUGH)
        else:
            value = real  # types, dtypes, constants, classes
        self._cache[name] = value
        return value

    def __dir__(self) -> list[str]:
        return dir(self._real)

    def __repr__(self) -> str:
        return f"<lazy module {self._real.__name__!r} (jupyter_fuse)>"


# np.random functions that draw nothing: they run as they are.
_RANDOM_PASSTHROUGH = frozenset({"seed", "default_rng", "get_state", "set_state", "Generator", "RandomState",
                                 "SeedSequence", "PCG64", "MT19937", "Philox", "SFC64", "BitGenerator"})

class _Concatenator:
    """``np.r_`` / ``np.c_`` in a cell: NumPy's builds the array from lazy items with ``np.array``
    (``__array__``: computed, but not recorded, so the cell could not be replayed); here the build is
    an eager call like any other NumPy function: recorded, and made again by a replay."""

    __slots__ = ("_fuse_real", "_build")

    def __init__(self, name: str, real: Any) -> None:
        def build(key: Any) -> Any:
            return real[key]

        build.__module__ = "numpy"  # (named np.c_ in reports)
        self._fuse_real, self._build = real, _eager(name, build)

    def __getitem__(self, key: Any) -> Any:
        return self._build(key)

    def __len__(self) -> int:
        return 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fuse_real, name)


_PRINTOPTIONS: list[dict] = []  # the options each np.printoptions block found, for its end


def _enter_printoptions(*args: Any, **kwargs: Any) -> None:
    _PRINTOPTIONS.append(np.get_printoptions())
    np.set_printoptions(*args, **kwargs)


def _exit_printoptions() -> None:
    np.set_printoptions(**_PRINTOPTIONS.pop())


_enter_printoptions.__module__ = _exit_printoptions.__module__ = "numpy"  # (named np.printoptions in reports)
_ENTER, _EXIT = _eager("printoptions", _enter_printoptions), _eager("printoptions", _exit_printoptions)


@contextlib.contextmanager
def _printoptions(*args: Any, **kwargs: Any) -> Iterator[dict]:
    """``np.printoptions`` in a cell: its start and its end are calls a replay makes again (the printed
    text of a replay is formatted under the options of its line), with the options found then."""
    _ENTER(*args, **kwargs)
    try:
        yield np.get_printoptions()
    finally:
        _EXIT()


LAZY_NUMPY = LazyModule(np, FUNCS)
LAZY_NUMPY._cache.update({name: _Concatenator(name, getattr(np, name)) for name in ("r_", "c_")})
LAZY_NUMPY._cache["printoptions"] = _printoptions


from .lazyfuncs import FUNCS as _MORE  # noqa: E402 - (it builds on this module: np.pad, np.cumsum, np.tile, ...)

FUNCS.update(_MORE)
