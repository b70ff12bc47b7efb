"""Guards: when would the graph change? (the RefGraph of one traced run, checked on a re-run)

Every value a cell reads from outside is recorded when it is first read, at a
*path* from the user's namespace (``x``, ``cfg.alpha``, ``params['lr']``), as
a list of guards — plain tuples ``(kind, path, expected, text)`` that
:func:`check` runs in one loop:

=========  ===================================================================
kind       holds while
=========  ===================================================================
array      type ndarray, dtype, shape, strides, writeable, and the same view
           of the same-layout base array (a kernel input: contents not guarded)
data       the contents of an array reached *inside* a container or object
           (Python code may have used it eagerly, which the trace cannot see)
value      a scalar's exact type and value (baked into the plan, or steering)
is         the very same object (modules, functions, classes; kept alive)
type       the exact type of a container or object
len/keys   a container's length, a dict's keys, an object's attribute names
alias      which array inputs share a base array, or overlap in memory
=========  ===================================================================

A guard never raises: an odd object (a property that raises, ``__eq__``
returning arrays, no ``__dict__``) makes the cell *unreplayable* with the
reason, and a check that hits an exception is a miss. :func:`scan` finds the
effects no replay can reproduce in the cell's source before it runs.
"""

from __future__ import annotations

import ast
import math
import types
from typing import Any, Callable

import numpy as np

from .trace import root_of

MAX_DEPTH = 6  # containers nested deeper than this are not guarded: unreplayable
MAX_ITEMS = 1000  # elements guarded per container
MAX_DATA_BYTES = 1 << 22  # contents guarded per array inside a container (4 MiB), else unreplayable

# builtins whose use a replay cannot reproduce (I/O, introspection of ids and frames, dynamic code)
IMPURE_BUILTINS = frozenset({"exec", "eval", "compile", "open", "input", "__import__", "globals", "locals", "vars",
                             "breakpoint", "exit", "quit", "help", "id", "setattr", "delattr", "memoryview"})
# NumPy calls that change global state the replay does not restore
# (np.errstate/np.seterr: a step of the replay sets the modes each plan ran under; np.set_printoptions and
# np.printoptions' start and end: calls a replay makes again)
STATEFUL_NUMPY = frozenset({"seterrcall", "setbufsize"})
# (no global state a replay would have to advance: not ``random``; heapq's and bisect's functions work on the
# lists they are given, which a replay rebuilds as the traced run left them)
PURE_MODULES = frozenset({"math", "cmath", "operator", "builtins", "functools", "itertools", "typing", "numbers",
                          "collections", "heapq", "bisect", "statistics", "copy", "dataclasses", "enum", "string",
                          "_functools", "_operator", "_collections", "_heapq", "_bisect", "_statistics"})
# (functools.reduce's __module__ is _functools, deque's collections, heappush's _heapq)


def pure_module(name: str) -> bool:
    """Modules whose functions compute from their arguments only (numpy's are traced or recorded)."""
    root = name.split(".")[0]
    return root == "numpy" or root in PURE_MODULES


def pure_object(x: Any) -> bool:
    """A function or class of a pure module (``math.sqrt``, ``functools.partial``): the same object
    every run, nothing to record."""
    if not isinstance(x, (types.BuiltinFunctionType, types.FunctionType, type, np.ufunc)):
        return False
    mod = getattr(x, "__module__", None) or getattr(getattr(x, "__self__", None), "__name__", None)
    return isinstance(mod, str) and mod.split(".")[0] in PURE_MODULES


class Unguardable(Exception):
    """A value the guards cannot describe; the message says why."""


# -- paths -------------------------------------------------------------------------------

def path_text(path: tuple) -> str:
    out = path[0]
    for kind, key in path[1:]:
        out += f".{key}" if kind == "attr" else f"[{key!r}]"
    return out


def resolve(user: Any, path: tuple) -> Any:
    x = user[path[0]]
    for kind, key in path[1:]:
        x = getattr(x, key) if kind == "attr" else x[key]
    return x


# -- the source scan -------------------------------------------------------------------------

def scan(source: str) -> list[str]:
    """Reasons, found in the source, why no replay can reproduce this cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    reasons: list[str] = []

    def add(node: ast.AST, why: str) -> None:
        line = getattr(node, "lineno", None)
        reasons.append(f"line {line}: {why}" if line else why)

    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            # importing a module already imported only binds names (the replay binds them again);
            # calls into modules other than numpy and a few pure ones are not recorded
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            bad = [m for m in mods if node.__dict__.get("level", 0) or not pure_module(m)]
            if bad:
                add(node, f"`import {bad[0] or '.'}`: calls into {bad[0] or 'a relative module'} are not recorded")
        elif isinstance(node, ast.Delete) and not all(isinstance(t, ast.Name) for t in node.targets):
            add(node, "`del` of an item or attribute changes an object from outside")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in IMPURE_BUILTINS:
            add(node, f"`{node.id}` (I/O, object ids or dynamic code) cannot be replayed")
        elif isinstance(node, ast.Attribute) and node.attr in STATEFUL_NUMPY:
            add(node, f"`{node.attr}` changes NumPy's global state")
        elif isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)) and False:  # pragma: no cover
            pass
    return reasons


# -- recording ----------------------------------------------------------------------------

def _is_numpy(obj: Any) -> bool:
    mod = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    return isinstance(mod, str) and (mod == "numpy" or mod.startswith("numpy."))


def namedtuple_class(cls: Any) -> bool:
    """A class ``collections.namedtuple`` made: its code is generated from its field names, nothing of the
    user's runs in it (its ``__new__`` is evaluated in a namespace of its own, named after the class)."""
    return isinstance(cls, type) and cls.__bases__ == (tuple,) and hasattr(cls, "_fields") \
        and getattr(cls.__new__, "__globals__", {}).get("__name__") == f"namedtuple_{cls.__name__}"


def named_tuple_type(t: type) -> bool:
    """A named tuple's class a replay can rebuild instances of (``cls._make``) and guard like a tuple: one
    ``collections.namedtuple`` made, or NumPy's (``np.linalg.svd``'s ``SVDResult``)."""
    return namedtuple_class(t) or _foreign(t) and issubclass(t, tuple) and hasattr(t, "_make")


def _foreign(cls: type) -> bool:
    mod = getattr(cls, "__module__", "") or ""
    return mod in ("builtins", "types") or mod.split(".")[0] == "numpy"


_SCALAR_TYPES = (bool, int, float, complex, str, bytes, type(None), np.generic)


def _data_object(cls: type) -> str | None:
    """None if instances of this user class hold plain data only; else why not."""
    for klass in cls.__mro__[:-1]:
        for name, attr in vars(klass).items():
            if name in ("__getattr__", "__getattribute__", "__setattr__"):
                return f"its class overrides {name}"
            if isinstance(attr, (property, types.FunctionType, classmethod, staticmethod)) \
                    and not (name.startswith("__") and name.endswith("__")):
                return f"its class has `{name}`, code the recording does not see into"
            if hasattr(type(attr), "__get__") and not isinstance(attr, (types.FunctionType, types.MemberDescriptorType,
                                                                         types.GetSetDescriptorType)) \
                    and not (name.startswith("__") and name.endswith("__")) and not isinstance(attr, _SCALAR_TYPES):
                return f"its class has the descriptor `{name}`"
    return None


class Recorder:
    """The reference graph of one run: the guards of everything read from outside."""

    def __init__(self) -> None:
        self.guards: list[tuple] = []
        self.reasons: list[str] = []
        self.keep: list[Any] = []  # objects whose identity is guarded: alive, so ids are not reused
        self.roots: dict[int, tuple] = {}  # id(root storage of an array read) -> path of that array
        self.arrays: list[tuple] = []  # (path, root) of every guarded array, for the alias guard
        self.known: dict[int, tuple] = {}  # id(object read) -> its path (containers, arrays, objects)
        self.data_bytes = 0
        self.identity: list[tuple] = []  # (path, object) below the top level: the cell must not replace them

    def read(self, name: str, value: Any) -> None:
        """A name read from the user's namespace: guard it now, before the cell touches it."""
        try:
            self._guard((name,), value, 0, {})
        except Unguardable as e:
            self.reasons.append(f"{name}: {e}")
        except Exception as e:  # noqa: BLE001 - odd objects: never let a guard raise
            self.reasons.append(f"{name}: reading it for a guard raised {type(e).__name__}: {e}")

    def _guard(self, path: tuple, v: Any, depth: int, seen: dict) -> None:
        g, text = self.guards, path_text(path)
        if id(v) in seen and not isinstance(v, _SCALAR_TYPES):
            g.append(("same", path, seen[id(v)], f"{text}: the same object as {path_text(seen[id(v)])}"))
            return
        t = type(v)
        if t is np.ndarray:
            if v.dtype.kind not in "biufc":
                raise Unguardable(f"a {v.dtype} array (not traced)")
            root = root_of(v)
            offset = v.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            layout = None if root is v else (root.dtype.str, root.shape, root.strides, offset)
            exp = (v.dtype, v.shape, v.strides, bool(v.flags.writeable), layout)
            g.append(("array", path, exp, f"{text}: ndarray {v.dtype} {v.shape} {_layout_words(v, layout)}"))
            self.roots.setdefault(id(root), path)
            self.known.setdefault(id(v), path)
            self.arrays.append((path, root))
            self.keep += [v, root]
            if depth:
                self.identity.append((path, v))
            if depth:  # Python may have used it eagerly (params['w'].sum()): its contents matter
                if v.nbytes > MAX_DATA_BYTES:
                    raise Unguardable(f"{text} is an array of {v.nbytes} bytes inside a container: only arrays "
                                      "bound to names are kernel inputs; pass it by name to make the cell replayable")
                self.data_bytes += v.nbytes
                g.append(("data", path, v.copy(), f"{text}: contents (an array inside a container)"))
            return
        seen[id(v)] = path
        if isinstance(v, _SCALAR_TYPES):
            if isinstance(v, np.generic) and v.dtype.kind not in "biufc?":
                raise Unguardable(f"a NumPy {t.__name__} scalar")
            g.append(("value", path, (t, _key(v)), f"{text}: {t.__name__} {_short(v)}"))
            return
        if isinstance(v, np.dtype):
            g.append(("value", path, (t, v.str), f"{text}: dtype {v}"))
            return
        if isinstance(v, types.ModuleType) or getattr(v, "__name__", None) == "numpy" and _is_numpy(v):
            name = getattr(v, "__name__", "?")
            if not (name == "numpy" or name.startswith("numpy.") or name in PURE_MODULES):
                raise Unguardable(f"module {name}: calls into it are not recorded")
            self._is(path, v, f"{text}: module {name}")
            return
        if isinstance(v, (np.ufunc, types.BuiltinFunctionType)):
            mod = getattr(v, "__module__", None) or getattr(getattr(v, "__self__", None), "__name__", "")
            if isinstance(v, types.BuiltinFunctionType) and not (_is_numpy(v) or mod in PURE_MODULES):
                raise Unguardable(f"the builtin function {getattr(v, '__name__', v)} of {mod or '?'} is not known "
                                  "to be pure")
            self._is(path, v, f"{text}: {getattr(v, '__name__', t.__name__)} (same object)")
            return
        if isinstance(v, types.FunctionType):
            if not _is_numpy(v):
                raise Unguardable(f"function {v.__qualname__}, defined outside the cell: the reads inside it are "
                                  "not recorded")
            self._is(path, v, f"{text}: function {v.__qualname__} (same object)")
            return
        if isinstance(v, type):
            if not (_foreign(v) or namedtuple_class(v)):
                raise Unguardable(f"class {v.__qualname__}, defined outside the cell: its code is not recorded")
            self._is(path, v, f"{text}: class {v.__qualname__} (same object)")
            self.known.setdefault(id(v), path)  # (a replay's named tuples of it are of this very class)
            return
        if t in (np.random.Generator, np.random.RandomState):
            if depth:  # the cell's draws from it are recorded only when it reads it by name (capture)
                raise Unguardable(f"{text} is a {t.__name__} inside a container or object: its draws are not "
                                  "recorded; bind it to a name of its own")
            self._is_type(path, t, text)  # a replay draws from whichever generator the name holds then
            self.known.setdefault(id(v), path)
            return
        if depth >= MAX_DEPTH:
            raise Unguardable(f"{text} is nested more than {MAX_DEPTH} levels deep")
        if t in (list, tuple, dict) or named_tuple_type(t):
            if len(v) > MAX_ITEMS:
                raise Unguardable(f"{text} has {len(v)} items (guards stop at {MAX_ITEMS})")
            self._is_type(path, t, text)
            self.known.setdefault(id(v), path)
            self.keep.append(v)
            if depth:
                self.identity.append((path, v))
            if t is dict:
                keys = list(dict.keys(v))
                g.append(("keys", path, keys, f"{text}: dict with keys {_short(keys)}"))
                for k in keys:
                    if not isinstance(k, (str, int, float, bool, bytes, tuple, type(None))):
                        raise Unguardable(f"{text} has a key of type {type(k).__name__}")
                    self._guard(path + (("item", k),), dict.__getitem__(v, k), depth + 1, seen)
            else:
                g.append(("len", path, len(v), f"{text}: {t.__name__} of length {len(v)}"))
                for i in range(len(v)):
                    self._guard(path + (("item", i),), v[i], depth + 1, seen)
            return
        if t is types.SimpleNamespace or (not _foreign(t) and not isinstance(v, type)):
            why = None if t is types.SimpleNamespace else _data_object(t)
            if why:
                raise Unguardable(f"an instance of {t.__qualname__}: {why}")
            try:
                d = object.__getattribute__(v, "__dict__")
            except AttributeError:
                d = None
            slots = [n for c in t.__mro__ for n in ((c.__dict__.get("__slots__", ()),)
                                                    if isinstance(c.__dict__.get("__slots__", ()), str)
                                                    else c.__dict__.get("__slots__", ())) if n not in ("__dict__", "__weakref__")]
            if not isinstance(d, dict) and not slots:
                raise Unguardable(f"an instance of {t.__qualname__} without __dict__ or __slots__")
            self._is_type(path, t, text)
            self.keep += [v, t]
            self.known.setdefault(id(v), path)
            if depth:
                self.identity.append((path, v))
            names = sorted(d) if isinstance(d, dict) else []
            if any(not isinstance(n, str) for n in names):
                raise Unguardable(f"{text} has non-string attribute names")
            g.append(("attrs", path, (names, sorted(n for n in slots if hasattr(v, n))),
                      f"{text}: {t.__qualname__} with attributes {_short(names + slots)}"))
            for n in names:
                self._guard(path + (("attr", n),), d[n], depth + 1, seen)
            for n in slots:
                if hasattr(v, n):
                    self._guard(path + (("attr", n),), getattr(v, n), depth + 1, seen)
            return
        raise Unguardable(f"a {t.__module__}.{t.__qualname__}: reads and calls on it are not recorded")

    def _is(self, path: tuple, v: Any, text: str) -> None:
        self.keep.append(v)
        self.guards.append(("is", path, v, text))

    def _is_type(self, path: tuple, t: type, text: str) -> None:
        self.keep.append(t)
        self.guards.append(("type", path, t, f"{text}: a {t.__qualname__}"))

    @classmethod
    def of(cls, values: dict) -> "Recorder":
        """The finished record of a cell that reads every name in ``values`` (tests, benchmarks)."""
        rec = cls()
        for name, value in values.items():
            rec.read(name, value)
        rec.finish()
        return rec

    def finish(self) -> None:
        """The alias guard: which arrays read share a base, and which distinct bases overlap."""
        if len(self.arrays) < 2:
            return
        groups: dict[int, int] = {}
        pattern = tuple(groups.setdefault(id(r), len(groups)) for _, r in self.arrays)
        reps = list({id(r): r for _, r in self.arrays}.values())
        overlap = tuple((i, j) for i in range(len(reps)) for j in range(i + 1, len(reps))
                        if np.may_share_memory(reps[i], reps[j]))
        paths = tuple(p for p, _ in self.arrays)
        shared = [f"{path_text(p)} and {path_text(q)}" for k, (p, _) in enumerate(self.arrays)
                  for q, _ in self.arrays[k + 1:] if pattern[paths.index(p)] == pattern[paths.index(q)]]
        text = "aliasing: " + ("; ".join(f"{s} share memory" for s in shared) if shared else
                               "no two array inputs share memory")
        self.guards.append(("alias", paths, (pattern, overlap), text))


def _layout_words(v: np.ndarray, layout: tuple | None) -> str:
    kind = "C-contiguous" if v.flags.c_contiguous else "F-contiguous" if v.flags.f_contiguous else \
        f"strides {v.strides}"
    return kind + ("" if layout is None else f", a view into a {layout[1]} base at byte {layout[3]}") + \
        ("" if v.flags.writeable else ", read-only")


def _key(v: Any) -> Any:
    """An exact, hashable comparison key for a scalar (-0.0 and 0.0 differ, NaN equals NaN)."""
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return ("nan",) if f != f else (f, math.copysign(1.0, f)) if type(v) is float else (v.tobytes(),)
    if isinstance(v, (complex, np.complexfloating)):
        return (_key(v.real), _key(v.imag)) if type(v) is complex else (v.tobytes(),)
    if isinstance(v, np.generic):
        return (v.tobytes(),)
    return v


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


# -- checking ------------------------------------------------------------------------------

_MISSING = object()


def _child(parent: Any, kind: str, key: Any) -> Any:
    """One step of a path: an instance attribute before any class attribute (no property runs for
    what ``__dict__`` holds), a dict's own item, a sequence's item; ``_MISSING`` if there is none."""
    if kind == "attr":
        d = getattr(parent, "__dict__", None)
        return d[key] if isinstance(d, dict) and key in d else getattr(parent, key, _MISSING)
    return dict.get(parent, key, _MISSING) if type(parent) is dict else parent[key] if key < len(parent) else _MISSING


def check(guards: list[tuple], user: Any, first_only: bool = True) -> list[str]:
    """Miss reasons (empty: every guard holds). Never raises."""
    misses: list[str] = []
    cache: dict[tuple, Any] = {}

    def get(path: tuple) -> Any:
        x = cache.get(path, cache)  # (the dict itself as "not yet": no KeyError on the hot path)
        if x is not cache:
            return x
        try:
            parent = get(path[:-1]) if len(path) > 1 else None
            if parent is _MISSING:
                x = _MISSING
            elif len(path) == 1:
                x = user[path[0]] if path[0] in user else _MISSING
            else:
                x = _child(parent, *path[-1])
        except Exception:  # noqa: BLE001
            x = _MISSING
        cache[path] = x
        return x

    for kind, path, exp, _text in guards:
        try:
            why = _check_one(kind, path, exp, get)
        except Exception as e:  # noqa: BLE001 - a guard never raises
            why = f"{path_text(path) if kind != 'alias' else 'aliasing'}: checking raised {type(e).__name__}"
        if why:
            misses.append(why)
            if first_only:
                break
    return misses


def _check_one(kind: str, path: tuple, exp: Any, get: Any) -> str | None:
    if kind == "alias":
        arrays = [get(p) for p in path]
        if any(type(a) is not np.ndarray for a in arrays):
            return None  # their own guards say so
        if (not exp[1] and all(a.base is None for a in arrays) and len({id(a) for a in arrays}) == len(arrays)
                and exp[0] == tuple(range(len(arrays)))):
            return None  # distinct arrays owning their memory, as recorded: none aliases or overlaps another
        roots = [root_of(a) for a in arrays]
        groups: dict[int, int] = {}
        pattern = tuple(groups.setdefault(id(r), len(groups)) for r in roots)
        if pattern != exp[0]:
            for i in range(len(path)):
                for j in range(i):
                    was, now = exp[0][i] == exp[0][j], pattern[i] == pattern[j]
                    if was != now:
                        return f"{path_text(path[i])}: {'now aliases' if now else 'no longer aliases'} " \
                               f"{path_text(path[j])}"
        reps = list({id(r): r for r in roots}.values())
        overlap = tuple((i, j) for i in range(len(reps)) for j in range(i + 1, len(reps))
                        if np.may_share_memory(reps[i], reps[j])) if len(reps) > 1 else ()
        if overlap != exp[1]:
            return "aliasing: array inputs now overlap in memory differently"
        return None
    x = get(path)
    if (kind == "array" and type(x) is np.ndarray and x.base is None and exp[4] is None and x.dtype == exp[0]
            and x.shape == exp[1] and x.strides == exp[2] and x.flags.writeable == exp[3]):
        return None  # the common case (an array owning its memory, unchanged), without building any text
    text = path_text(path)
    if x is _MISSING:
        return f"{text}: no longer defined"
    if kind == "array":
        if type(x) is not np.ndarray:
            return f"{text}: type ndarray -> {type(x).__name__}"
        dtype, shape, strides, writeable, layout = exp
        if x.dtype != dtype:
            return f"{text}: dtype {dtype} -> {x.dtype}"
        if x.shape != shape:
            return f"{text}: shape {shape} -> {x.shape}"
        if x.strides != strides:
            return f"{text}: strides {strides} -> {x.strides}"
        if bool(x.flags.writeable) != writeable:
            return f"{text}: {'now read-only' if writeable else 'now writeable'}"
        root = root_of(x)
        now = None if root is x else (root.dtype.str, root.shape, root.strides,
                                      x.__array_interface__["data"][0] - root.__array_interface__["data"][0])
        if now != layout:
            return f"{text}: base array {_base_words(layout)} -> {_base_words(now)}"
        return None
    if kind == "data":
        if type(x) is not np.ndarray or x.dtype != exp.dtype or x.shape != exp.shape:
            return None  # the array guard before this one says how
        return None if np.array_equal(x, exp, equal_nan=exp.dtype.kind in "fc") else f"{text}: contents changed"
    if kind == "value":
        t, key = exp
        if type(x) is not t:
            return f"{text}: type {t.__name__} -> {type(x).__name__}"
        now = (x.str if isinstance(x, np.dtype) else _key(x))
        if now != key:
            return f"{text}: value {_short(_from_key(t, key))} -> {_short(x)}"
        return None
    if kind == "is":
        return None if x is exp else f"{text}: now a different object ({_short(x)})"
    if kind == "type":
        return None if type(x) is exp else f"{text}: type {exp.__qualname__} -> {type(x).__qualname__}"
    if kind == "keys":
        keys = list(dict.keys(x))
        return None if keys == exp else f"{text}: keys {_short(exp)} -> {_short(keys)}"
    if kind == "len":
        return None if len(x) == exp else f"{text}: length {exp} -> {len(x)}"
    if kind == "attrs":
        d = getattr(x, "__dict__", None)
        names = sorted(d) if isinstance(d, dict) else []
        slots = sorted(n for n in exp[1] if hasattr(x, n))
        return None if (names, slots) == exp else f"{text}: attributes {_short(exp[0] + exp[1])} -> " \
                                                  f"{_short(names + slots)}"
    if kind == "same":
        return None if x is get(exp) else f"{text}: no longer the same object as {path_text(exp)}"
    return f"{text}: unknown guard {kind}"


def compile_check(guards: list[tuple]) -> Callable[[Any], bool]:
    """The guards as one generated function, ``holds(user) -> bool`` (MagPy's guard code).

    A replay's first cost is checking its guards, so they run as straight-line
    code: each path is resolved once, in the order :func:`check` resolves it,
    and the common cases (an array owning its memory, a scalar, an identity)
    are inline tests against constants; the rest call :func:`_check_one`. It
    only answers yes or no and never raises: on a no, :func:`check` says why.
    The source is kept as ``holds.source`` (``%fuse_cache --code`` shows it)."""
    body: list[str] = []
    consts: dict[str, Any] = {"MISSING": _MISSING, "ndarray": np.ndarray, "child": _child, "one": _check_one,
                              "key_of": _key, "copysign": math.copysign}
    var: dict[tuple, str] = {}

    def const(v: Any) -> str:  # a literal where one reads back exactly, else a named constant
        if type(v) in (int, bool, str, type(None)) or type(v) is float and math.isfinite(v):
            return repr(v)
        if any(v is t for t in (int, float, bool, complex, str, bytes)):
            return v.__name__  # the builtin itself: no name in the generated code shadows it
        # T_float32 for a type, D_float64 for a dtype, c<n> for the rest: prefixes that no builtin,
        # helper or local variable of the generated function has
        label = f"T_{v.__name__}" if isinstance(v, type) else f"D_{v}" if isinstance(v, np.dtype) else "c"
        label = "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_" for ch in label)
        name, i = label if label != "c" else "c0", 0
        while name in consts and consts[name] is not v:
            i += 1
            name = f"{label}{i}" if label == "c" else f"{label}_{i}"
        consts[name] = v
        return name

    def at(path: tuple) -> str:  # the variable holding the value at ``path``, resolved on first use
        if path not in var:
            parent = at(path[:-1]) if len(path) > 1 else None
            v = var[path] = f"v{len(var)}"
            if parent is None:
                body.append(f"{v} = user.get({path[0]!r}, MISSING)")
            else:
                body.append(f"{v} = child({parent}, {path[-1][0]!r}, {const(path[-1][1])})")
            body.append(f"if {v} is MISSING: return False")
        return var[path]

    def generic(kind: str, path: tuple, exp: Any, paths: list[tuple]) -> str:
        got = ", ".join(f"{const(p)}: {at(p)}" for p in paths)
        return f"one({kind!r}, {const(path)}, {const(exp)}, {{{got}}}.__getitem__) is not None"

    for kind, path, exp, _text in guards:
        if kind == "alias":
            vs = [at(p) for p in path]
            test = generic(kind, path, exp, list(path))
            if not exp[1] and exp[0] == tuple(range(len(path))):  # distinct arrays owning their memory
                owning = " and ".join(f"{v}.base is None" for v in vs)
                test = f"not ({owning} and len({{{', '.join(f'id({v})' for v in vs)}}}) == {len(vs)}) and {test}"
        elif kind == "array" and exp[4] is None:
            v = at(path)
            test = (f"type({v}) is not ndarray or {v}.base is not None or {v}.dtype != {const(exp[0])} or "
                    f"{v}.shape != {exp[1]!r} or {v}.strides != {exp[2]!r} or {v}.flags.writeable != {exp[3]!r}")
        elif kind == "value":
            v, (t, key) = at(path), exp
            test = f"type({v}) is not {const(t)} or "
            if t is float and key == ("nan",):
                test += f"{v} == {v}"
            elif t is float:  # a zero's sign matters (-0.0 and 0.0 give different results)
                test += f"{v} != {const(key[0])}" + (f" or copysign(1.0, {v}) != {key[1]!r}" if key[0] == 0 else "")
            elif t in (int, bool, str, bytes, type(None)):
                test += f"{v} != {const(key)}"
            else:
                test += f"{f'{v}.str' if issubclass(t, np.dtype) else f'key_of({v})'} != {const(key)}"
        elif kind in ("is", "type", "len"):
            v = at(path)
            test = {"is": f"{v} is not {const(exp)}", "type": f"type({v}) is not {const(exp)}",
                    "len": f"len({v}) != {exp!r}"}[kind]
        else:  # keys, attrs, data, same, arrays that are views: as check() does it
            test = generic(kind, path, exp, [path, exp] if kind == "same" else [path])
        body.append(f"if {test}: return False")
    body = body or ["pass"]  # a cell that reads nothing from outside: nothing to check
    source = "def holds(user):\n    try:\n" + "".join(f"        {line}\n" for line in body) + \
        "    except Exception:\n        return False\n    return True\n"
    exec(compile(source, "<jupyter_fuse guards>", "exec"), consts)
    holds = consts["holds"]
    holds.source = source
    return holds


def _base_words(layout: tuple | None) -> str:
    return "itself" if layout is None else f"{layout[1]} at byte {layout[3]}"


def _from_key(t: type, key: Any) -> Any:
    if t is float and isinstance(key, tuple):
        return float("nan") if key == ("nan",) else key[0] * 1.0
    if issubclass(t, np.generic) and isinstance(key, tuple) and isinstance(key[0], bytes):
        try:
            return np.frombuffer(key[0], dtype=np.dtype(t))[0]
        except Exception:  # noqa: BLE001
            return key
    return key
