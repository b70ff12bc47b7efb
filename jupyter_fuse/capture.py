"""The recording namespace a cell runs in, and the hand-back of its results.

Reads of names the cell did not assign go through :class:`Namespace`, which
records them (the roots of the reference graph) and hands the cell lazy
stand-ins: arrays become lazy inputs, ``numpy`` becomes the lazy namespace.
At the end, :func:`finalize` computes every lazy value still reachable,
writes in-place changes into the user's own arrays, and replaces every lazy
object with its concrete value, so nothing lazy escapes.
"""

from __future__ import annotations

import builtins
import collections
import sys
import types
from typing import Any

import numpy as np

from . import buffers, lazyrandom, views
from .guards import path_text
from .ir import Node
from .lazynp import LAZY_NUMPY, LazyModule, LazyUfunc
from .session import Session
from .trace import Buffer, LazyArray, root_of, wrap_array


def wrap_value(s: Session, value: Any) -> Any:
    """What the cell sees for a value from outside (or one it stores)."""
    if type(value) in _AS_IS:  # (a loop at the cell's top level stores its counter every step)
        return value
    if isinstance(value, LazyArray):  # first: a LazyArray also passes isinstance(x, np.ndarray)
        return value
    if isinstance(value, np.ndarray) and not isinstance(value, np.matrix) and value.dtype.kind in "biufc":
        return wrap_array(s, value)
    if (lz := wrap_device(s, value)) is not None:  # a CuPy array kept on the GPU by an earlier cell
        return lz
    if value is np:
        return LAZY_NUMPY
    if isinstance(value, types.ModuleType) and value.__name__.startswith("numpy."):
        try:
            return getattr(LAZY_NUMPY, value.__name__.split(".", 1)[1].split(".")[0])
        except AttributeError:
            return value
    if type(value) in _CALLABLES:  # `from numpy import sin`, `from numpy.random import rand`
        return lazy_twin(value)
    if type(value) in lazyrandom.GENERATORS:  # its draws are recorded calls
        tape = s.tape
        path = tape.rec.known.get(id(value)) if tape is not None else None
        if tape is not None and path is None and id(value) not in s.generators:
            tape.unreplayable(f"the cell made a {type(value).__name__} other than by np.random.default_rng(...) or "
                              "np.random.RandomState(...): a replay could not make it again")
        return lazyrandom.wrap(value, path, path_text(path) if path else "a generator")
    return value


_AS_IS = frozenset({int, float, bool, complex, str, type(None), tuple, list, dict, LazyArray})
_CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.BuiltinMethodType, np.ufunc,
              type(np.dot))  # (NumPy's Python-level functions: _ArrayFunctionDispatcher)
_TWINS: dict[int, Any] = {}  # id(a NumPy function) -> the lazy namespace's version (or itself)
_TWIN_MODULES = ("", "random", "linalg", "fft", "lib.stride_tricks")


def lazy_twin(f: Any) -> Any:
    """What ``np.<name>`` is inside a cell, for a NumPy function bound to another name: traced, or
    recorded as a call outside the trace (a random draw must be made again by a replay)."""
    got = _TWINS.get(id(f))
    if got is None:
        got = f
        name = getattr(f, "__name__", None)
        if isinstance(name, str) and not name.startswith("_"):
            for sub in _TWIN_MODULES:
                real, lazy = np, LAZY_NUMPY
                for part in sub.split(".") if sub else ():
                    real, lazy = getattr(real, part), getattr(lazy, part)
                if getattr(real, name, None) is f:
                    got = getattr(lazy, name)
                    break
        if got is not f or not isinstance(f, types.FunctionType) or (f.__module__ or "").startswith("numpy"):
            _TWINS[id(f)] = got  # (a function of the cell is not kept: it would keep its namespace alive)
            _TWINS[id(got)] = got  # (keeps f's id ours: f is held by the numpy module)
    return got


def wrap_device(s: Session, value: Any) -> LazyArray | None:
    """A device array in the namespace (``--keep`` of an earlier cell) as a lazy input that lives on
    the device already; None if ``value`` is not one (the backend says: ``is_device_array``)."""
    owns = getattr(s.backend, "is_device_array", None)
    if owns is None or not owns(value):
        return None
    cached = s.wrapped.get(id(value))
    if cached is not None:
        return cached
    buf = s.buffers.get(id(value))
    if buf is None:
        buf = s.buffers[id(value)] = Buffer(s.add_input(value), origin=value)
        s.keepalive.append(value)
    lz = s.wrapped[id(value)] = LazyArray(s, buf, (), origin=value)
    return lz


class CellContext:
    """What a device backend asks about the cell it runs, for its transfer ledger (given to it with
    ``backend.attach``, so that backends never import the tracer): the run's report, the name an
    input was read under, the variable holding a value, what NumPy call made a host array."""

    def __init__(self, s: Session, ns: "Namespace") -> None:
        self.session, self.namespace = s, ns

    @property
    def report(self) -> Any:
        return self.session.report

    def input_name(self, host: Any) -> str | None:
        """The name (or path, ``params['w']``) the cell read the input array ``host`` under."""
        for k, v in self.namespace.reads.items():
            if v is host or (isinstance(v, np.ndarray) and root_of(v) is host):
                return k
        tape = self.session.tape
        path = tape.rec.roots.get(id(host)) if tape is not None else None
        return path_text(path) if path is not None else None

    def holder(self, node: Node) -> str | None:
        """The cell variable whose array holds ``node`` (a fallback's result has no name of its own)."""
        return next((k for k, v in dict.items(self.namespace) if isinstance(v, LazyArray) and v._buf.node is node),
                    None)

    def made_by(self, host: Any) -> str | None:
        """The NumPy call (run on the host) that returned ``host``, if one did."""
        return self.session.eager_results.get(id(host))


def unwrap_module(value: Any) -> Any:
    real = _real_numpy(value)
    return value if real is None else real


class Namespace(dict):
    """The cell's globals. Lookups fall through to the user's namespace, recorded."""

    def __init__(self, user: dict, session: Session) -> None:
        super().__init__()
        self.user, self.session = user, session
        self.reads: dict[str, Any] = {}  # name -> the object read (reference-graph roots)
        # (ordered, not sets: the cell's final plan is made in this order, the same under any hash seed)
        self.assigned: dict[str, None] = {}
        self.deleted: dict[str, None] = {}
        self.cached: dict[str, Any] = {}  # name -> what __missing__ put in the dict for a read
        dict.__setitem__(self, "__builtins__", _Builtins(self, user.get("__builtins__", builtins)))
        if "__name__" in user:  # class bodies read it with a plain dict lookup: their __module__
            dict.__setitem__(self, "__name__", user["__name__"])
            self.cached["__name__"] = user["__name__"]

    def __missing__(self, key: str) -> Any:
        # (not __getitem__: a name the cell has read or bound is then found by dict's own lookup, in C; every
        # name a loop body loads costed a Python call, a tenth of a traced stencil step)
        if key in self.deleted or key not in self.user:
            raise KeyError(key)  # Python then tries builtins
        value = self.user[key]
        if key not in self.reads and self.session.tape is not None:
            self.session.tape.read(key, value)  # guards now, before the cell can touch it
        self.reads.setdefault(key, value)
        wrapped = wrap_value(self.session, value)
        if wrapped is value and isinstance(value, np.ndarray):  # object/string arrays and np.matrix
            self.session.note_untraced(key, value)
        dict.__setitem__(self, key, wrapped)
        self.cached[key] = wrapped
        return wrapped

    def __setitem__(self, key: str, value: Any) -> None:
        self.assigned[key] = None
        self.deleted.pop(key, None)
        dict.__setitem__(self, key, wrap_value(self.session, value))

    def global_stores(self) -> None:
        """Names bound by ``global x; x = ...`` (STORE_GLOBAL writes the dict directly, not through
        ``__setitem__``): anything in the dict that is neither a cached read nor known is one."""
        for k, v in list(dict.items(self)):
            if k != "__builtins__" and k not in self.assigned and self.cached.get(k, self) is not v:
                self.assigned[k] = None
                self.deleted.pop(k, None)

    def __delitem__(self, key: str) -> None:
        if dict.__contains__(self, key):
            dict.__delitem__(self, key)
        elif key in self.deleted or key not in self.user:
            raise KeyError(key)
        self.deleted[key] = None
        self.assigned.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (key in self.user and key not in self.deleted)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default


class _Builtins(dict):
    """The cell's builtins. A class body looks names up in its globals with a plain dict lookup
    (bypassing Namespace.__missing__), then in builtins with a real one: so builtins fall back to
    the namespace, and `class K: scale = x * 2` sees the user's `x` (recorded, made lazy)."""

    def __init__(self, ns: Namespace, real: Any) -> None:
        real = vars(real) if isinstance(real, types.ModuleType) else real
        super().__init__((k, v) for k, v in real.items() if k not in ns.user)  # the user's names shadow
        self.ns = ns
        if "print" in self:
            self["print"] = _recording_print(ns.session, self["print"])
        if "__build_class__" in self:
            self["__build_class__"] = _recording_build_class(ns.session, self["__build_class__"])

    def __missing__(self, key: str) -> Any:
        return self.ns[key]


def _recording_build_class(s: Session, real: Any) -> Any:
    """``class`` statements: the classes the cell defines are known, so a replay may rebuild them."""
    def __build_class__(*args: Any, **kwargs: Any) -> Any:
        cls = real(*args, **kwargs)
        s.classes.append(cls)
        return cls

    return __build_class__


def _recording_print(s: Session, real_print: Any) -> Any:
    """``print``: the same text; under the plan cache the call is recorded, so that a replay prints
    the new values (the values printed are then not guards)."""
    def print(*args: Any, sep: Any = " ", end: Any = "\n", file: Any = None, flush: bool = False) -> None:
        s.printed = True
        tape = s.tape
        if tape is None or file is not None or not isinstance(sep or "", str) or not isinstance(end or "", str):
            if tape is not None and file is not None:
                tape.unreplayable("print(file=...) writes to a file")
            return real_print(*args, sep=sep, end=end, file=file, flush=flush)
        sep, end = " " if sep is None else sep, "\n" if end is None else end
        items, parts, texts = [], [], {}
        for j, a in enumerate(args):
            if isinstance(a, LazyArray):
                node = a._current()  # (the node evaluated: afterwards the array holds a leaf for it)
                value = a._value("str()/print")
                items.append(("node", node, a.scalar))
                parts.append(str(value))
            else:
                text = str(a)
                items.append(("text", text))
                parts.append(text)
                if type(a) is str:
                    texts[j] = a
        caller = sys._getframe(1)
        tape.on_print(items, sep, end, (id(caller.f_code), caller.f_lasti), texts)
        out = sys.stdout
        out.write(sep.join(parts) + end)
        if flush:
            out.flush()

    return print


# -- the hand-back ---------------------------------------------------------------------------

def finalize(ns: Namespace, extra: list[Any] = ()) -> list[Any]:
    """Write the cell's effects into the user's namespace; returns ``extra`` made concrete."""
    s = ns.session
    ns.global_stores()
    roots = [dict.__getitem__(ns, k) for k in ns.assigned if dict.__contains__(ns, k)]
    roots += list(ns.reads.values()) + list(extra)
    lazies = _find_lazies(roots)
    bufs = list({id(b): b for b in [lz._buf for lz in lazies] + [b for b in [*s.buffers.values(), *s.made_buffers.values()] if b.dirty]}.values())
    values = s.evaluate([b.node for b in bufs], final=True)
    if s.tape is not None:
        s.tape.on_finalize(ns, bufs, list(extra))
    storage: dict[int, np.ndarray] = {}  # id(buffer) -> its concrete storage
    claimed: set[int] = set()
    names = {id(v._buf): k for k, v in list(dict.items(ns)) + list(ns.reads.items()) if isinstance(v, LazyArray)}
    for buf, value in zip(bufs, values):
        if buf.origin is not None:
            if buf.dirty and value is not buf.origin:
                value = s.to_host(value, "result", name=names.get(id(buf)), like=buf.origin)
                if isinstance(buf.origin, np.ndarray):
                    np.copyto(views.writable(buf.origin), value)  # (a writeable view may write a read-only base)
                else:  # a CuPy array kept by an earlier cell (--keep): written where it lives
                    buf.origin[...] = value
            storage[id(buf)] = buf.origin
        else:
            value = s.to_host(value, "result", name=names.get(id(buf)), result=True)
            storage[id(buf)] = value.copy() if id(value) in claimed else value
        claimed.add(id(storage[id(buf)]))
    for lz in list(s.wrapped.values()):  # the cell assigned `x.shape = ...`: so does the user's own x
        if lz._origin is not None and lz._origin.shape != lz.shape:
            lz._origin.shape = lz.shape
    memo: dict[int, Any] = {}

    made: dict[int, Any] = {}  # id(lazy) -> its value: one lazy array is one object (`d = c` keeps `d is c`)

    def concrete(lz: LazyArray) -> Any:
        if lz._origin is not None:
            return lz._origin
        if id(lz) in made:
            return made[id(lz)]
        base = storage[id(lz._buf)]
        if lz._writeable and lz._chain and isinstance(base, np.ndarray):  # a view of a base marked read-only
            base = views.writable(base)  # after the view it came from was taken: writeable, as in NumPy
        out = s.apply_chain(base, lz._chain) if lz._chain else base
        if not lz._writeable and getattr(out.flags, "writeable", False):  # broadcast_to, .diagonal(): read-only as in NumPy
            out = out.view()
            out.flags.writeable = False
        made[id(lz)] = out = out[()] if lz.scalar else out
        return out

    def convert(x: Any) -> Any:
        return _convert(x, concrete, ns, memo)

    for k in list(ns.assigned):
        if dict.__contains__(ns, k):
            buffers.rebind(ns.user, k, unwrap_module(convert(dict.__getitem__(ns, k))))
    for k in ns.deleted:
        ns.user.pop(k, None)
    for v in ns.reads.values():
        convert(v)  # containers and objects from outside may now hold lazy values
    return [convert(x) for x in extra]


def _find_lazies(roots: list[Any]) -> list[LazyArray]:
    found: list[LazyArray] = []
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, LazyArray):
            found.append(x)
        else:
            stack.extend(_children(x))
    return found


def _children(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple, set, frozenset, collections.deque)):
        return list(x)
    if isinstance(x, dict):
        return list(x.keys()) + list(x.values())  # keys too: a NumPy scalar can be one (`d[a[1]] = v`)
    if isinstance(x, types.FunctionType):
        return [c.cell_contents for c in (x.__closure__ or ()) if _cell_full(c)] + list(x.__defaults__ or ())
    if isinstance(x, type):  # class attributes of the user's classes (`Config.scale = x * 2`)
        return [] if _foreign_class(x) else list(vars(x).values())
    if isinstance(x, np.ndarray):  # an object array can hold lazy values (`arr[0] = x * 2`)
        return list(x.flat) if x.dtype == object else []
    if isinstance(x, (types.ModuleType, np.generic, str, bytes, int, float, complex)):
        return []
    d = getattr(x, "__dict__", None)
    return (list(d.values()) if isinstance(d, dict) else []) + [v for _, v in _slot_items(x)]


def _foreign_class(cls: type) -> bool:
    """Builtin and library classes hold no values of the cell."""
    return cls.__module__ in ("builtins", "abc", "typing") or cls.__module__.split(".")[0] in ("numpy", "jupyter_fuse")


def _slot_items(x: Any) -> list[tuple[str, Any]]:
    """Attributes kept in ``__slots__`` (no ``__dict__`` entry)."""
    out = []
    for cls in type(x).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(x, name):
                out.append((name, getattr(x, name)))
    return out


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _convert(x: Any, concrete: Any, ns: Namespace, memo: dict[int, Any]) -> Any:
    """Replace lazy values inside ``x`` (in place where the container is mutable)."""
    if isinstance(x, LazyArray):
        return concrete(x)
    if x is LazyArray:  # `type(x)` in the cell; right for arrays (a lazy NumPy scalar's type is lost)
        return np.ndarray
    real = _real_numpy(x)
    if real is not None:  # `f = np.sum`, `[np]`: the lazy namespace's objects stand for NumPy's own
        return real
    key = id(x)
    if key in memo:
        return memo[key]
    memo[key] = x  # cycles: a container inside itself stays itself
    rec = lambda v: _convert(v, concrete, ns, memo)  # noqa: E731
    if isinstance(x, (list, collections.deque)):  # (a deque of arrays: L-BFGS's last m pairs)
        for i, v in enumerate(x):
            nv = rec(v)
            if nv is not v:
                x[i] = nv
    elif isinstance(x, dict) and not isinstance(x, Namespace):
        items = list(x.items())
        new = [(rec(k), rec(v)) for k, v in items]
        if any(nk is not k for (nk, _), (k, _) in zip(new, items)):  # a NumPy scalar as a key: `d[a[1]] = v`
            x.clear()
            x.update(new)
        else:
            for (k, nv), (_, v) in zip(new, items):
                if nv is not v:
                    x[k] = nv
    elif isinstance(x, (tuple, set, frozenset)):
        items = [rec(v) for v in x]
        if any(a is not b for a, b in zip(items, x)):
            memo[key] = x = type(x)(items) if not hasattr(x, "_fields") else type(x)(*items)
    elif isinstance(x, types.FunctionType):
        if x.__globals__ is ns:  # defined in the cell: give it the user's namespace (first: a closure
            memo[key] = x = _rebind(x, ns.user)  # cell holding the function itself gets this one)
        for c in x.__closure__ or ():
            if _cell_full(c):
                nv = rec(c.cell_contents)
                if nv is not c.cell_contents:
                    c.cell_contents = nv
        if x.__defaults__:
            x.__defaults__ = tuple(rec(v) for v in x.__defaults__)
    elif isinstance(x, np.ndarray) and x.dtype == object:
        for i, v in enumerate(x.flat):
            nv = rec(v)
            if nv is not v:
                x.flat[i] = nv
    elif isinstance(x, type):
        if not _foreign_class(x) or any(x is c for c in ns.session.classes):  # (a class body's
            # __module__ is "builtins" when the namespace has no __name__: the cell made it all the same)
            for name, v in list(vars(x).items()):
                if isinstance(v, types.FunctionType) and v.__globals__ is ns:
                    setattr(x, name, _rebind(v, ns.user))
                elif not name.startswith("__"):
                    nv = rec(v)
                    if nv is not v:
                        setattr(x, name, nv)
    elif not isinstance(x, (types.ModuleType, np.ndarray, np.generic, str, bytes, int, float, complex)):
        d = getattr(x, "__dict__", None)
        if isinstance(d, dict):
            for k, v in list(d.items()):
                nv = rec(v)
                if nv is not v:
                    d[k] = nv
        for k, v in _slot_items(x):
            nv = rec(v)
            if nv is not v:
                setattr(x, k, nv)
    return x


def _real_numpy(x: Any) -> Any:
    """The NumPy object a lazy-namespace object stands for, or None."""
    if isinstance(x, LazyModule):
        return x._real
    if isinstance(x, LazyUfunc):
        return x._ufunc
    if isinstance(x, lazyrandom.LazyGenerator):
        return x._fuse_real
    if isinstance(x, types.FunctionType):
        return getattr(x, "_fuse_real", None)
    return None


def _rebind(f: types.FunctionType, globals_: dict) -> types.FunctionType:
    g = types.FunctionType(f.__code__, globals_, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__, g.__qualname__, g.__doc__ = f.__kwdefaults__, f.__qualname__, f.__doc__
    g.__dict__.update(f.__dict__)
    g.__annotations__ = f.__annotations__
    return g
