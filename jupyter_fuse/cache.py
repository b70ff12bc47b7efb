"""The plan cache: re-running a cell replays its recorded plan while every guard holds.

A traced run under the cache records a :class:`Tape`: the guards of what the
cell read (``guards.Recorder``), every plan ``Session.evaluate`` executed, each
sync with the Python value it produced, what ``print`` wrote, and finalize's
effects (names bound, arrays written back into the user's own objects). A
re-run checks the guards of the cell's entries (newest first) and, on a hit,
:func:`replay`\\ s the tape: input slots are bound to the current arrays, the
recorded plans run on the backend (kernels come from its kernel cache), every
sync value is recomputed and compared — a different one abandons the replay
before anything reaches the user — and only then are names bound, writes
copied into the user's arrays and the printed text written. No user Python
runs, nothing is traced or partitioned.

Entries: at most ``PER_CELL`` per cell (LRU), at most ``MAX_BYTES`` in all
(copies of small constant arrays and of guarded container contents).
"""

from __future__ import annotations

import collections
import contextlib
import io
import math
import os
import sys
import time
import types
import warnings
import weakref
from collections import OrderedDict
from typing import Any, Iterator

import numpy as np

from . import fmt, fperrors, fstrings, guards, lazyrandom, program, views
from .fperrors import errors_raise
from .backends import compiler
from .backends.numpy import resolve as resolve_value  # (a view of available storage, computed)
from .buffers import rebind
from .guards import Recorder, Unguardable, path_text, resolve
from .trace import LazyArray, root_of

PER_CELL = 8
# the steps a tape records at most (plans run, syncs, calls, prints: ~0.7 kB each): past it the cell is
# traced every run, and a loop of 100,000 iterations with a sync in each keeps its memory flat
MAX_STEPS = int(os.environ.get("JUPYTER_FUSE_MAX_STEPS", 50_000))
MAX_BYTES = int(os.environ.get("JUPYTER_FUSE_PLAN_CACHE_BYTES", 256 << 20))
STORM = 3  # consecutive re-traces of one cell before we warn


class RecompileWarning(UserWarning):
    """A cell keeps missing the plan cache: every run is traced again."""


class Abandon(Exception):
    """A replay found a sync value that would steer the cell differently: trace instead."""


# the calls that set NumPy's print options (``lazynp._printoptions``'s start and end)
PRINT_OPTIONS = frozenset({"set_printoptions", "_enter_printoptions", "_exit_printoptions"})
# why a sync's value moved by a few units in the last place, where the traced run ran kernels as NumPy
MEANWHILE = ("(in the last bits: the traced run computed it with NumPy while numba compiled the kernels, "
             "which round some functions otherwise (exp, tanh, power, ... where NumPy has its own vector "
             "code); this run records the compiled kernels' value)")


# -- recording ------------------------------------------------------------------------------

class Tape:
    """What one traced run did, in the order it did it."""

    def __init__(self, session: Any) -> None:
        self.s = session
        self.rec = Recorder()
        self.reasons: list[str] = []
        self.steps: list[tuple] = []
        self.slots: list[tuple] = []  # (input node, ("root", path) | ("const", array copy))
        self.consts: dict = {}
        self.nbytes = 0
        self.effects: tuple | None = None
        self.syncs = 0
        self.modules: dict[str, Any] = {}  # modules the cell binds (imports): checked before a replay
        self._claimed: int | None = None
        self.eager_nodes: set = set()  # inputs an eager call's step binds
        self.random = False  # a step draws from NumPy's global generator (a replay saves its state)
        self.printing = False  # a step sets NumPy's print options (a replay that fails restores them)
        self.formats: list[tuple] = []  # f-string pieces formatted since the last print (on_format)
        # a value a recorded plan computed -> the leaf the tape names it by: a step holding the node itself
        # would hold the whole graph that computed it, and a long loop's memory would grow with every op
        self._leaves: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
        # NumPy's error state (np.geterr()) the cell began in, and the one the last step ran under: a change
        # (an np.errstate block, np.seterr) is a step of its own, so a replay warns, or not, where NumPy did
        self.errmodes = self._errmodes = fperrors.modes()

    def unreplayable(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    def read(self, name: str, value: Any) -> None:
        self.rec.read(name, value)

    @contextlib.contextmanager
    def claiming(self, value: Any) -> Iterator[None]:
        """While an eager call's result is wrapped: its input is the call's output, not a constant."""
        self._claimed = id(root_of(value))
        try:
            yield
        finally:
            self._claimed = None

    def on_input(self, node: Any, value: Any) -> None:
        if self.reasons:  # unreplayable already (an eager call's result on the GPU cannot be copied here)
            return
        if id(value) == self._claimed:
            self.slots.append((node, ("eager", None)))
            self.eager_nodes.add(node)
            return
        if not isinstance(value, np.ndarray):  # a CuPy array kept by an earlier cell (--keep): no guard knows it
            self.unreplayable(f"it reads a {type(value).__module__}.{type(value).__name__} kept on the device by "
                              "an earlier cell (--keep); replays read NumPy arrays only")
            return
        path = self.rec.roots.get(id(value))
        if path is not None:
            self.slots.append((node, ("root", path)))
        else:  # made by the cell's Python from guarded values (a list literal, ...): the same every run
            copy = np.array(value, copy=True)
            self.nbytes += copy.nbytes
            self.slots.append((node, ("const", copy)))

    def on_const(self, node: Any, value: Any) -> None:
        self.consts[node] = value

    def on_eval(self, tmpl: Any, leaves: list, outs: list, modes: dict, names: tuple | None = None) -> None:
        """A plan ran (``plans.Template``) on these leaves under NumPy's error ``modes``; ``outs``: (node,
        the leaf the cell's buffers hold for it from now on, or None). The kernels' names are this cell's
        (a template is shared); ``names``: they, where asking the template would make it (``windows.Placed``)."""
        if self.reasons:  # (unreplayable: nothing more to record)
            return
        self._under(modes)
        named = []
        for n, ref in outs:
            if n.kind == "op":  # (named by the leaf the buffers now hold, or a new one)
                leaf = self._leaves[n] = ref if ref is not None else self.s.leaf_for(n)
                named.append((leaf, None))
            else:
                named.append((self._leaf(n), ref))
        self._add(("eval", tmpl, tuple(map(self._leaf, leaves)), tuple(named),
                   names if names is not None else tuple(k.name for k in tmpl.plan.kernels)))

    def _under(self, modes: dict) -> None:
        """The next step runs under NumPy's error ``modes``: a step that sets them where they change."""
        if modes is not self._errmodes and modes != self._errmodes:
            self._add(("errstate", modes))
        self._errmodes = modes

    def _add(self, step: tuple) -> None:
        if len(self.steps) >= MAX_STEPS:
            self.unreplayable(f"it ran more than {MAX_STEPS:,} steps (plans, syncs, calls outside the trace, prints): "
                              "a replay would hold them all, so it is traced each run")
        if self.reasons:  # (no replay will read them)
            self.steps.clear()
            self.formats.clear()
            return
        self.steps.append(step)

    def _leaf(self, n: Any) -> Any:
        """The node a step records for ``n``: the leaf naming a computed value (``on_eval``), a view of it."""
        if n.kind == "op":
            return self._leaves.get(n, n)
        if n.kind == "view":
            base = self._leaf(n.args[0])
            if base is not n.args[0]:
                return type(n).make("view", (base,), n.params, n.dtype, n.shape, n.layout)
        return n

    def _leaf_recipe(self, r: Any) -> Any:
        """A call's argument recipe (``lazynp._call_recipe``) with its nodes named as ``_leaf`` names them."""
        kind = r[0]
        if kind == "node":
            return ("node", self._leaf(r[1]), r[2])
        if kind in ("tuple", "list"):
            return (kind, [self._leaf_recipe(p) for p in r[1]])
        if kind == "dict":
            return (kind, [(k, self._leaf_recipe(p)) for k, p in r[1]])
        return r

    def on_sync(self, node: Any, scalar: bool, convert: Any, out: Any, cause: str, name: str | None) -> None:
        if self.reasons:  # (unreplayable: nothing more to record)
            return
        if isinstance(out, np.ndarray):
            self.nbytes += out.nbytes
        node = self._leaf(node)
        self._add(("sync", node, scalar, convert, out, cause, self.s.line(), name))

    def on_call(self, func: Any, recipe: Any, mut: Any, result: Any, static: dict | None) -> None:
        """A call that ran outside the trace (``lazynp.eager_call``): ``recipe`` makes its arguments
        from the replay's values, ``mut`` (the node copied, the storage's input, the view chain) the
        array it writes into, ``result`` binds what it returns; ``static`` is its report entry."""
        if result is None or self.reasons:
            return  # (the recipe said why: unreplayable)
        owner = getattr(func, "__self__", None)  # (a generator's method: lazyrandom saves its state)
        if isinstance(owner, (np.random.RandomState, np.random.Generator)) or \
                str(getattr(func, "__module__", None) or "").startswith("numpy.random"):
            self.random = True
        if getattr(func, "__name__", None) in PRINT_OPTIONS:
            self.printing = True
        if recipe is not None:
            recipe = self._leaf_recipe(recipe)
        if mut is not None:
            mut = (self._leaf(mut[0]), *mut[1:])
        if recipe is not None and _literal(recipe):  # (arguments that are all values: made once, not at every replay's call)
            recipe = ("made", *_made(recipe, {}, None))
        self._under(fperrors.modes())
        self._add(("call", func, recipe, mut, result, static, self.s.line()))

    def on_format(self, code: Any, where: tuple[int, int, int], text: str, spec: str) -> None:
        """The sync just recorded formatted a piece of an f-string that goes straight into ``print``
        (``fstrings``): the print may take its value in place of the check (``on_print``)."""
        step = self.steps[-1] if self.steps else None
        if step is not None and step[0] == "sync":
            self.formats.append((id(code), *where, step, text, spec))

    def on_print(self, items: list, sep: str, end: str, call: tuple[int, int] | None = None,
                 texts: dict[int, str] | None = None) -> None:
        """``print`` wrote ``items``; ``texts`` (argument position -> its string) and ``call`` (id of the
        code, offset) find f-strings whose lazy pieces it formats again on a replay, uncompared."""
        pieces = [f for f in self.formats if call is not None and f[0] == call[0] and f[1] <= call[1] < f[2]]
        self.formats = []
        if self.reasons:  # (unreplayable: nothing more to record)
            return
        items = [it if it[0] == "text" else (it[0], self._leaf(it[1]), *it[2:]) for it in items]
        done = []
        for j, text in (texts or {}).items():
            mine = [f for f in pieces if f[3] == j]  # (code, first, after, argument, sync step, text, spec)
            parts = fstrings.template(text, [(f[4][1], f[4][2], f[6], f[5]) for f in mine]) if mine else None
            if parts is not None:
                items[j] = ("fstr", parts)
                done += [f[4] for f in mine]
        for step in reversed(done):  # the syncs they replace: a replay prints the new value instead
            for k in range(len(self.steps) - 1, -1, -1):
                if self.steps[k] is step:
                    del self.steps[k]
                    break
        self._add(("print", items, sep, end, self.s.line()))

    # -- finalize's effects ----------------------------------------------------------------
    def on_finalize(self, ns: Any, bufs: list, extra: list) -> None:
        """Recipes for what finalize hands the user, taken before it converts anything."""
        if self.reasons:
            return
        s = self.s
        try:
            for lz in list(s.wrapped.values()):
                if lz._origin is not None and lz._origin.shape != lz.shape:
                    raise Unguardable("the cell assigns an array's .shape")
            slot_of = {id(s.inputs[node.params[0]]): i for i, (node, _) in enumerate(self.slots)
                       if node.params[0] in s.inputs}
            buffers, index = [], {}
            for buf in bufs:
                slot = slot_of.get(id(buf.origin)) if buf.origin is not None else None
                if buf.origin is not None and slot is None:
                    raise Unguardable("an array of unknown origin reached the namespace")
                index[id(buf)] = len(buffers)
                path_slot = slot is not None and self.slots[slot][1][0] == "root"
                buffers.append((self._leaf(buf.node), slot, bool(buf.dirty), path_slot))
            recipe = _Recipes(self.rec, index, ns, {id(c) for c in s.classes})
            self.modules = recipe.modules
            names = []
            for k in [k for k in dict.keys(ns) if k in ns.assigned]:  # in finalize's order (ledger names)
                names.append((k, recipe.of(dict.__getitem__(ns, k), k)))
            deleted = [k for k in ns.deleted]
            result = [recipe.of(x, "the cell's value") for x in extra]
            self.effects = (tuple(buffers), tuple(names), tuple(deleted), tuple(result))
        except Unguardable as e:
            self.unreplayable(str(e))
        except Exception as e:  # noqa: BLE001 - never lose the cell over the cache
            self.unreplayable(f"recording the cell's effects raised {type(e).__name__}: {e}")

    def finish(self, ns: Any) -> "Entry | None":
        """The entry to cache, or None (``reasons`` says why) — after finalize succeeded."""
        if not self.reasons:
            self._under(fperrors.modes())  # (the state the cell leaves: np.seterr)
            self.rec.finish()
            try:  # did the cell change what it read (a dict item, a list it appended to)?
                changed = guards.check(self.rec.guards, ns.reads)
                if not changed:
                    changed = [f"{path_text(p)} was replaced" for p, obj in self.rec.identity
                               if _resolve_or_none(ns.reads, p) is not obj]
            except Exception as e:  # noqa: BLE001
                changed = [f"checking raised {type(e).__name__}"]
            if changed:
                self.unreplayable(f"the cell changes an object it read ({changed[0]}); a replay would not")
        self.reasons = self.rec.reasons + self.reasons
        if self.reasons or self.effects is None:
            return None
        r = self.s.report
        entry = Entry(self.rec.guards, self.rec.keep, self.slots, self.consts, self.steps, self.effects,
                      self.nbytes + self.rec.data_bytes,
                      {"ops": r.ops, "syncs": list(r.syncs), "graph": r.graph, "nodes": r.nodes,
                       "graph_truncated": r.graph_truncated,
                       "breaks": list(r.breaks), "fallbacks": list(r.fallbacks),
                       "bound_writes": list(r.bound_writes), "meanwhile": r._meanwhile,
                       "launches": r.kernels,
                       "kernel_bytes": sum(k["bytes_read"] + k["bytes_written"] for k in r.kernel_list)})
        entry.modules, entry.random, entry.printing = tuple(self.modules.items()), self.random, self.printing
        states = [step[1] for step in self.steps if step[0] == "errstate"]
        if states:  # (the steps set absolute modes: the replay must begin where the traced run began)
            entry.errmodes, entry.raises = self.errmodes, any(map(fperrors.raising, states))
        entry.generators = tuple((g._handle, g._handle.path) for g in self.s.generators.values()
                                 if g._handle.path is not None)
        return entry


def _resolve_or_none(user: Any, path: tuple) -> Any:
    try:
        return resolve(user, path)
    except Exception:  # noqa: BLE001
        return None


_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype, range, slice)
_MAPPINGS = (collections.Counter, collections.defaultdict, collections.OrderedDict)  # dicts a replay rebuilds too
_CLASS_SKIP = frozenset({"__dict__", "__weakref__", "__module__", "__qualname__"})
# the methods ``@dataclass`` may write (``__hash__``: or set to None)
_DATACLASS_METHODS = frozenset({"__init__", "__repr__", "__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
                                "__setattr__", "__delattr__", "__getstate__", "__setstate__"})


class _Recipes:
    """How to rebuild a value the cell leaves in the namespace, without running the cell.

    Arrays come from the replay's buffers; containers, functions, classes and instances the cell
    made are rebuilt (one object per object, cycles included); objects the cell read are found
    again at their path; modules are looked up in ``sys.modules`` (``modules``: a replay checks
    first that each is still the module recorded)."""

    def __init__(self, rec: Recorder, buffers: dict, ns: Any = None, classes: "set[int] | None" = None) -> None:
        self.rec, self.buffers, self.ns, self.classes = rec, buffers, ns, classes or set()
        self.memo: dict[int, int] = {}
        self.alive: list[Any] = []
        self.building: set[int] = set()
        self.modules: dict[str, Any] = {}
        self.count = 0

    def of(self, x: Any, where: str) -> tuple:
        from .capture import _real_numpy

        if isinstance(x, LazyArray):
            if x._origin is not None and id(x._origin) in self.rec.known:
                return ("ref", self.rec.known[id(x._origin)])
            return ("lazy", self._id(x), self.buffers[id(x._buf)], x._chain, x.scalar, x._writeable)
        if x is LazyArray:
            return ("obj", np.ndarray)
        if isinstance(x, lazyrandom.LazyGenerator):  # found again where it was read, or made by the replay
            path = x._handle.path
            return ("ref", path) if path is not None else ("handle", x._handle)
        real = _real_numpy(x)
        if real is not None:
            return ("obj", real)
        if isinstance(x, _IMMUTABLE):
            return ("obj", x)
        if id(x) in self.rec.known:
            return ("ref", self.rec.known[id(x)])
        if id(x) in self.building:  # a cycle: a function in its own closure, a class in its methods' `__class__`
            return ("made", self._id(x))
        if isinstance(x, (np.ufunc, type)) and guards._foreign(x if isinstance(x, type) else type(x)) \
                or isinstance(x, (type(np), type(np.dot))) and guards._is_numpy(x):
            return ("obj", x)
        t = type(x)
        if t is list:
            return ("list", self._id(x), [self.of(v, where) for v in x])
        if t is tuple:
            return ("tuple", [self.of(v, where) for v in x])
        if isinstance(x, tuple) and guards.named_tuple_type(t):
            # (a state the cell made, `State(x, v)`; a result NumPy returned, ``np.linalg.svd``'s)
            return ("ntuple", self.of(t, where), [self.of(v, where) for v in x])
        if t is dict:
            return ("dict", self._id(x), [(self.of(k, where), self.of(v, where)) for k, v in x.items()])
        if t is set:  # (of hashable values: `set(labels[0].tolist())`)
            return ("set", self._id(x), [self.of(v, where) for v in x])
        if t is frozenset:
            return ("frozenset", [self.of(v, where) for v in x])
        if t is collections.deque:  # (a breadth-first search's queue)
            return ("deque", self._id(x), [self.of(v, where) for v in x], x.maxlen)
        if t in _MAPPINGS:  # (a Counter of labels, a defaultdict(list) of groups)
            factory = self.of(x.default_factory, where) if t is collections.defaultdict else None
            return ("mapping", self._id(x), t, factory, [(self.of(k, where), self.of(v, where)) for k, v in x.items()])
        if isinstance(x, types.ModuleType):
            return self._module(x, where)
        if isinstance(x, types.BuiltinFunctionType) or guards.pure_object(x):
            if guards.pure_object(x):
                return ("obj", x)
            raise Unguardable(f"{where} is the builtin {getattr(x, '__name__', x)} of a module whose calls "
                              "are not recorded")
        self.building.add(id(x))
        try:
            if t is types.FunctionType:
                return self._function(x, where)
            if t in (staticmethod, classmethod):
                return ("wrap", t, self.of(x.__func__, where))
            if t is property:
                return ("property", [self.of(f, where) for f in (x.fget, x.fset, x.fdel)], x.__doc__)
            if isinstance(x, type):
                return self._class(x, where)
            return self._instance(x, where)
        finally:
            self.building.discard(id(x))

    def _module(self, m: types.ModuleType, where: str) -> tuple:
        name = m.__name__
        if not guards.pure_module(name):
            raise Unguardable(f"{where} is the module {name}: calls into it are not recorded")
        self.modules[name] = m
        return ("module", name)

    def _function(self, f: types.FunctionType, where: str) -> tuple:
        """A function the cell defined (``def``, ``lambda``): its code is the cell's, its globals
        the user's namespace; defaults, closure cells and attributes are rebuilt."""
        if self.ns is None or f.__globals__ is not self.ns:
            raise Unguardable(f"{where} is the function {f.__qualname__}, which the cell did not define: "
                              "the reads inside it are not recorded")
        closure = [("cell", self._id(c), self.of(c.cell_contents, where) if _full(c) else None)
                   for c in f.__closure__ or ()]
        kwdefaults = None if f.__kwdefaults__ is None else self.of(dict(f.__kwdefaults__), where)
        return ("func", self._id(f), f.__code__, f.__name__, f.__qualname__, self.of(f.__defaults__, where),
                kwdefaults, closure, self.of(dict(f.__dict__), where), f.__doc__, dict(f.__annotations__))

    def _class(self, cls: type, where: str) -> tuple:
        """A class the cell defined: rebuilt by ``type(name, bases, namespace)``; one the cell made with
        ``collections.namedtuple``, by calling it again."""
        if id(cls) not in self.classes and guards.namedtuple_class(cls) \
                and cls.__module__ == dict.get(self.ns or {}, "__name__", "__main__"):  # (namedtuple's own default)
            defaults = [self.of(cls._field_defaults[f], where) for f in cls._fields if f in cls._field_defaults]
            return ("ntclass", self._id(cls), cls.__name__, cls._fields, defaults, cls.__module__)
        if id(cls) not in self.classes:
            raise Unguardable(f"{where} is the class {cls.__qualname__}, which the cell did not define: "
                              "its code is not recorded")
        if type(cls) is not type or "__slots__" in vars(cls):
            raise Unguardable(f"{where} is the class {cls.__qualname__}: only plain classes (no metaclass, "
                              "no __slots__) are rebuilt by a replay")
        fields = vars(cls).get("__dataclass_fields__")
        skip = _CLASS_SKIP if fields is None else _CLASS_SKIP | self._generated(cls)
        items = [(k, self.of(v, f"{where}.{k}")) for k, v in vars(cls).items() if k not in skip]
        return ("class", self._id(cls), cls.__name__, cls.__qualname__, cls.__module__,
                [self.of(b, where) for b in cls.__bases__], items,
                None if fields is None else self._dataclass(cls, fields, where))

    def _generated(self, cls: type) -> set[str]:
        """What ``@dataclass`` added to the class (its fields, its parameters, the methods it wrote from
        them, whose code is not the cell's): a replay applies ``dataclass`` again to the rest."""
        made = {"__dataclass_fields__", "__dataclass_params__", "__annotations__"}
        for k, v in vars(cls).items():
            if k in _DATACLASS_METHODS and (v is None or isinstance(v, types.FunctionType)
                                            and v.__globals__ is not self.ns):
                made.add(k)
        return made

    def _dataclass(self, cls: type, fields: dict, where: str) -> tuple:
        """(``dataclass``'s parameters, its annotations, each field's ``dataclasses.field`` arguments)."""
        import dataclasses

        p = cls.__dataclass_params__
        params = {k: getattr(p, k) for k in ("init", "repr", "eq", "order", "unsafe_hash", "frozen")}
        out = []
        annotations = vars(cls).get("__annotations__", {})  # (types, typing's forms, strings: the same objects)
        for f in fields.values():
            if f.name not in annotations:  # (a base class's field: ``dataclass`` finds it there again)
                continue
            if f._field_type is not dataclasses._FIELD:  # type: ignore[attr-defined]
                raise Unguardable(f"{where} is the dataclass {cls.__qualname__}, whose field {f.name} is a "
                                  "ClassVar or InitVar: a replay rebuilds dataclasses of plain fields only")
            args = {k: getattr(f, k) for k in ("init", "repr", "hash", "compare", "kw_only")}
            for k in ("default", "default_factory"):
                if getattr(f, k) is not dataclasses.MISSING:
                    args[k] = getattr(f, k)
            if f.metadata:
                args["metadata"] = dict(f.metadata)
            out.append((f.name, self.of(args, f"{where}.{f.name}")))
        return params, [(k, v) for k, v in annotations.items()], out

    def _instance(self, x: Any, where: str) -> tuple:
        """A plain object of a class the cell defined (or a SimpleNamespace): its attributes."""
        t = type(x)
        d = getattr(x, "__dict__", None)
        if not (id(t) in self.classes or t is types.SimpleNamespace) or not isinstance(d, dict) \
                or t.__new__ is not object.__new__ and t is not types.SimpleNamespace:
            raise Unguardable(f"{where} is a {t.__qualname__}: a replay rebuilds only arrays, scalars, "
                              "containers, and the functions, classes and plain objects the cell defines")
        return ("inst", self._id(x), self.of(t, where), [(k, self.of(v, f"{where}.{k}")) for k, v in d.items()])

    def _id(self, x: Any) -> int:
        key = id(x)
        if key not in self.memo:
            self.memo[key] = len(self.memo)
            self.alive.append(x)  # (a dict made here, a function's attributes: its id is not reused meanwhile)
        return self.memo[key]


def _full(cell: Any) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


# -- an entry and its replay --------------------------------------------------------------------

GENERATED_MAX = 200  # guards per entry turned into one generated function; more: ``guards.check``
# (generating costs ~0.05 ms per guard, once per entry, on every traced run's first lookup;
# bench/guards.py measures it and what the function saves per lookup)


class Entry:
    def __init__(self, guard_list, keep, slots, consts, steps, effects, nbytes, report) -> None:
        self.guards, self.keep, self.slots, self.consts = guard_list, keep, slots, consts
        self.steps, self.effects, self.nbytes, self.report = steps, effects, nbytes, report
        self.texts = [g[3] for g in guard_list]  # the guards in words
        # what a replay starts from: the fixed values (constants), then the arrays read, by path
        self.fixed = {**consts, **{node: src for node, (kind, src) in slots if kind == "const"}}
        self.inputs = [(node, src) for node, (kind, src) in slots if kind == "root"]
        self.hits = 0
        self.modules: tuple = ()  # (name, module) the cell binds: still what sys.modules holds?
        self.random = False  # a step draws from NumPy's global generator
        self.printing = False  # a step sets NumPy's print options
        self.generators: tuple = ()  # (handle, path): generators the cell reads by name (lazyrandom)
        self.program: Any = None  # the tape as a compiled program (program.py): None until tried, False: none
        self.program_error: str | None = None
        self.program_jobs: list = []  # its compiles in the background (backends/compiler.py), if any
        self.errmodes: dict | None = None  # np.geterr() the cell began under, where a step sets the modes
        self.raises = False  # a step sets modes that raise: compiled code raises no FloatingPointError
        self._holds: Any = None  # the generated guard function, made at the first lookup


def misses(entry: Entry, user: dict) -> list[str]:
    """Why ``entry``'s plan cannot be replayed on ``user``'s values (empty: every guard holds)."""
    holds = guard_function(entry)
    if not (holds is not None and holds(user)):
        why = guards.check(entry.guards, user)
        if why:
            return why
    for name, module in entry.modules:
        if sys.modules.get(name) is not module:
            return [f"module {name}: no longer the module imported when the plan was recorded"]
    now = fperrors.modes()
    if entry.errmodes is not None and now != entry.errmodes:
        changed = ", ".join(f"{k}={entry.errmodes[k]!r} -> {now[k]!r}" for k in now if now[k] != entry.errmodes[k])
        return [f"NumPy's error state (np.seterr/np.errstate) is not the one the cell began in last time: {changed}"]
    return []


def guard_function(entry: Entry) -> Any:
    """The entry's generated guard function, made on first use; None past ``GENERATED_MAX`` guards."""
    if entry._holds is None:
        entry._holds = guards.compile_check(entry.guards) if len(entry.guards) <= GENERATED_MAX else False
    return entry._holds or None


def replay(entry: Entry, user: dict, backend: Any, report: Any, compiled: bool = True) -> Any:
    """Run the tape on the current inputs; returns the cell's value. Raises Abandon before any write.
    ``compiled``: as one compiled program where the backend makes one (``--no-compile-plan``: not)."""
    values = dict(entry.fixed)
    for node, path in entry.inputs:
        values[node] = root_of(resolve(user, path))
    host = _copier(entry, values, backend, report)
    state = np.random.get_state() if entry.random else None
    options = np.get_printoptions() if entry.printing else None
    drawn = []  # the generators the cell reads, and their states: a replay that fails restores them
    for handle, path in entry.generators:
        values[handle] = g = resolve(user, path)
        drawn.append((g, lazyrandom.state(g)))
    try:
        printed = _run_tape(entry, values, backend, report, host, compiled)
    except BaseException as e:
        if entry.errmodes is not None:  # (and in the error state it began in)
            np.seterr(**entry.errmodes)
        if state is not None:  # the cell is traced instead: it draws the same numbers again
            np.random.set_state(state)
        if options is not None:
            np.set_printoptions(**options)
        for g, st in drawn:
            lazyrandom.set_state(g, st)
        if getattr(e, "last_bit", False) and entry.report.get("meanwhile"):
            raise Abandon(f"{e} {MEANWHILE}") from None
        raise
    storage, writes = _results(entry, values, host)
    _, names, deleted, result = entry.effects
    rebuild = _Rebuild(user, storage, getattr(backend, "apply_chain", views.apply_chain), values)
    new = [(k, rebuild.of(r)) for k, r in names]
    value = [rebuild.of(r) for r in result]
    rebuild.finish()
    # every check passed and everything is built: now, and only now, the user sees the effects
    for out, v in writes:
        np.copyto(views.writable(out), v)  # (a writeable view may write a read-only base: NumPy's rule)
    for k, v in new:
        rebind(user, k, v)
    for k in deleted:
        user.pop(k, None)
    if printed:
        sys.stdout.write("".join(printed))
    return value[0] if value else None


def _copier(entry: Entry, values: dict, backend: Any, report: Any) -> Any:
    """A device backend's ``to_host``, told it is replaying: what Python sees is copied back and
    recorded in its ledger as the traced run recorded it. None on a host backend (nothing to copy)."""
    to_host = getattr(backend, "to_host", None)
    if to_host is None:
        return None
    backend.replaying(report, {id(values[node]): path_text(src) for node, (kind, src) in entry.slots
                               if kind == "root"})
    return to_host


def _run_tape(entry: Entry, values: dict, backend: Any, report: Any, host: Any, compiled: bool = False) -> list[str]:
    """The recorded plans on the current values, each sync checked; returns the text to print.
    ``compiled``: run the tape as a compiled program where the backend makes one (``program.py``)."""
    printed: list[str] = []
    steps: Any = entry.steps
    if not compiled:
        report.program_note = "replayed kernel by kernel (--no-compile-plan)"
    elif host is not None or getattr(backend, "call_spec", None) is None:
        report.program_note = f"replayed kernel by kernel (the {backend.name} backend compiles no programs)"
    elif _raises(entry):
        report.program_note = "replayed kernel by kernel (under np.errstate(...='raise'): compiled code raises no FloatingPointError)"
    else:
        prog = _program(entry, backend, report)
        if prog is not None:
            steps = prog.actions
            report.program = prog.text
        elif entry.program_jobs:
            report.program_note = "replayed kernel by kernel while numba compiles it as one program in the background"
        else:
            report.program_note = entry.program_error or "replayed kernel by kernel (nothing in it compiles)"
    for step in steps:
        _step(step, values, backend, report, host, printed)
    return printed


def _step(step: tuple, values: dict, backend: Any, report: Any, host: Any, printed: list[str]) -> None:
    kind = step[0]
    if kind == "block":
        blk = step[1]
        got = program.run_block(blk, values, report, resolve_value)
        held = program.checks_hold(blk, got)
        if not held:  # the syncs one by one, for the message: they read the values the checks read
            program.store(blk, got, values, len(blk.outputs), len(blk.outputs) - blk.check_only)
        for s in blk.unchecked if held else blk.deferred:
            _step(s, values, backend, report, host, printed)
    elif kind == "eval":
        _, tmpl, leaves, outs, names = step
        for k, name in zip(tmpl.plan.kernels, names):
            k.name = name
        tmpl.run(backend, leaves, [n for n, _ in outs], values, report)
        for n, ref in outs:
            if ref is not None:
                values[ref] = values[n]
    elif kind == "call":
        _call(step, values, report)
    elif kind == "errstate":
        np.seterr(**step[1])
    elif kind == "sync":
        _, node, scalar, convert, expected, cause, line, name = step
        v = resolve_value(node, values)
        v = v if host is None else host(v, _sync_cause(cause, line), line=line, name=name)
        now = convert(v[()] if scalar else v)
        if not _same(now, expected):
            err = Abandon(f"line {line} ({cause}): value {_short(expected)} -> {_short(now)}")
            err.last_bit = _last_bit(expected, now)
            raise err
    else:
        _, items, sep, end, line = step
        parts = []
        for it in items:
            if it[0] == "text":
                parts.append(it[1])
            elif it[0] == "fstr":  # an f-string: its lazy pieces formatted anew
                text = []
                for p in it[1]:
                    if p[0] == "text":
                        text.append(p[1])
                    else:
                        v = resolve_value(p[1], values)
                        v = v if host is None else host(v, _sync_cause("format()", line), line=line)
                        text.append(format(v[()] if p[2] else v, p[3]))
                parts.append("".join(text))
            else:
                v = resolve_value(it[1], values)
                v = v if host is None else host(v, _sync_cause("str()/print", line), line=line)
                parts.append(str(v[()] if it[2] else v))
        printed.append(sep.join(parts) + end)


def _raises(entry: Entry) -> bool:
    """Does a floating-point error raise in this replay (NumPy's state now, or a step's)? Compiled code raises
    no FloatingPointError: such a replay runs kernel by kernel."""
    return errors_raise() or entry.raises


def _program(entry: Entry, backend: Any, report: Any) -> Any:
    """The entry's tape compiled as a program (made at the first replay that can use one), or None.
    Where compiles run in the background (``backends/compiler.py``), the program is built and compiled
    there, and the replays run kernel by kernel until it is ready."""
    if entry.program is None:
        entry.program = False
        n = program.launches(entry)
        if n < program.MIN_LAUNCHES:
            entry.program_error = (f"{n} kernel launch{'es' * (n != 1)} per replay: replayed kernel by kernel "
                                   f"(a compiled program pays from {program.MIN_LAUNCHES})")
            return None
        if compiler.background() and getattr(backend, "compile_block", None) is not None:
            entry.program_jobs = [compiler.submit(("program", id(entry), object()),
                                                  lambda: _make_program(entry, backend, True))]
        else:
            t0 = time.perf_counter()
            _make_program(entry, backend, False)
            report.times["compile"] += time.perf_counter() - t0
    if entry.program_jobs:
        job = entry.program_jobs[0]
        if not job.done.is_set():
            return None
        entry.program_jobs = []
        if job.error is not None:
            entry.program = False
            entry.program_error = (f"replayed kernel by kernel (compiling it as one program failed: "
                                   f"{type(job.error).__name__}: {job.error})")
    return entry.program or None


def compiling(entry: Entry, backend: Any, report: Any) -> bool:
    """Is the entry's program compiling in the background (its build started here, if not yet)? A replay
    now would run kernel by kernel; False where no program will come (none pays, or compiles run at once)."""
    if not compiler.background() or getattr(backend, "compile_block", None) is None or _raises(entry):
        return False
    _program(entry, backend, report)
    return bool(entry.program_jobs) and not entry.program_jobs[0].done.is_set()


def _make_program(entry: Entry, backend: Any, now: bool) -> None:
    """Build the entry's program and compile it (``now``; else numba compiles it at its first call)."""
    try:
        prog = program.build(entry, backend)
        if prog is not None:
            for i, blk in enumerate(prog.blocks):
                blk.source, blk.fn = backend.compile_program(blk)
                program.name_block(blk, f"program{i}")
                if now:
                    backend.compile_block(blk)
            entry.program = prog
    except program.NotCompiled as e:
        entry.program_error = f"replayed kernel by kernel: {e}"
    except Exception as e:  # noqa: BLE001 - the tape still replays kernel by kernel
        if os.environ.get("JUPYTER_FUSE_DEBUG"):
            raise
        entry.program_error = f"replayed kernel by kernel (compiling it as one program failed: {type(e).__name__}: {e})"


def _call(step: tuple, values: dict, report: Any) -> None:
    """A call that ran outside the trace, made again on the replay's values (``Tape.on_call``)."""
    _, func, recipe, mut, result, static, line = step
    target = None
    if mut is not None:
        src, storage_node, chain = mut
        storage = values[storage_node] = np.array(resolve_value(src, values), copy=True, order="K")
        target = views.apply_chain(storage, chain)
    args, kwargs = _made(recipe, values, target)
    if type(func) is tuple:  # ("method", handle, name): a draw from a generator of this replay's
        func = getattr(values[func[1]], func[2])
    t0 = time.perf_counter()
    out = func(*args, **kwargs)
    elapsed = time.perf_counter() - t0
    _bind(result, out, values, line)
    if static is not None:
        report.times["run"] += elapsed
        report.launched(static, elapsed)


def _literal(r: Any, top: bool = True) -> bool:
    """Is the recipe of a call's (args, kwargs) made of values only (a draw ``rng.normal()``): no node,
    array copy, generator or written target, and nothing mutable the call could change (a list)?"""
    kind = r[0]
    if top:
        return kind == "tuple" and len(r[1]) == 2 and r[1][0][0] == "tuple" and r[1][1][0] == "dict" and \
            all(_literal(p, False) for p in r[1][0][1]) and all(_literal(p, False) for _, p in r[1][1][1])
    return kind == "lit" or kind == "tuple" and all(_literal(p, False) for p in r[1])


def _made(r: Any, values: dict, target: Any) -> Any:
    kind = r[0]
    if kind == "made":  # (args, kwargs) made when it was recorded (``_literal``)
        return r[1], r[2]
    if kind == "node":
        v = resolve_value(r[1], values)
        return v[()] if r[2] else v
    if kind == "target":
        return target
    if kind == "lit":
        return r[1]
    if kind == "array":
        return r[1].copy()  # (the call may write into it)
    if kind == "handle":
        return values[r[1]]
    if kind == "tuple":
        return tuple(_made(p, values, target) for p in r[1])
    if kind == "list":
        return [_made(p, values, target) for p in r[1]]
    return {k: _made(p, values, target) for k, p in r[1]}  # "dict"


def _bind(r: tuple, out: Any, values: dict, line: int | None) -> None:
    """What the call returned, bound as the trace bound it; anything Python saw must be the same."""
    kind = r[0]
    if kind == "ignore":
        return
    if kind == "obj":  # a generator the call made (lazyrandom): later draws name it
        values[r[1]] = out
        return
    if kind == "arr":
        _, node, chain, scalar, dtype, shape = r
        arr = np.asarray(out)
        if arr.dtype != dtype or arr.shape != shape:
            raise Abandon(f"line {line}: a call outside the trace now returns {arr.dtype}{list(arr.shape)}, "
                          f"not {dtype}{list(shape)}")
        root = root_of(arr) if isinstance(out, np.ndarray) else arr
        if root.strides != tuple(node.layout[1]) or root.shape != node.shape or (
                chain and chain != (("asstrided", (arr.__array_interface__["data"][0]
                                                   - root.__array_interface__["data"][0], arr.shape, arr.strides)),)):
            raise Abandon(f"line {line}: a call outside the trace now returns an array laid out differently")
        values[node] = root
        return
    if kind == "value":
        if not _same(out, r[1]):
            raise Abandon(f"line {line}: a call outside the trace now returns {_short(out)}, not {_short(r[1])}")
        return
    if type(out).__name__ != kind or len(out) != len(r[1]):
        raise Abandon(f"line {line}: a call outside the trace now returns a different structure")
    for part, o in zip(r[1], out):
        _bind(part, o, values, line)


def _results(entry: Entry, values: dict, host: Any) -> tuple[list[Any], list[tuple[Any, Any]]]:
    """The storage of every buffer the cell hands back (the user's own arrays for writes into them,
    new arrays owning their memory), and the copies into the user's arrays still to make. Nothing
    is written here: every copy back from a device comes first, so a failing one writes nothing."""
    buffers, names, _, _ = entry.effects
    if host is None:
        fetched = [values[node] for node, *_ in buffers]
    else:
        named = {r[2]: k for k, r in names if r[0] == "lazy"}  # buffer -> the name it is bound to (the ledger's)
        fetched = []
        for bi, (node, slot, dirty, path_slot) in enumerate(buffers):
            v = values[node]
            if not path_slot:
                fetched.append(host(v, "result", name=named.get(bi), result=True))
            else:
                target, (_, path) = values[entry.slots[slot][0]], entry.slots[slot][1]
                fetched.append(host(v, "result", name=path_text(path), like=target) if dirty and v is not target
                               else None)
    slot_arrays = {id(values.get(node)) for node, _ in entry.slots}
    storage: list[Any] = []
    writes: list[tuple[Any, Any]] = []
    claimed: set[int] = set()
    for (node, slot, dirty, path_slot), v in zip(buffers, fetched):
        if path_slot:
            out = values[entry.slots[slot][0]]
            if dirty and v is not None and v is not out:
                writes.append((out, v))
        else:
            out = v if host is not None and not isinstance(v, np.ndarray) else np.asarray(v)  # (--keep: on the device)
            # copied: the entry's own constant, and an array already handed out or read from outside
            # (an eager call's result is this replay's own: handed out as the traced run handed it)
            kind = entry.slots[slot][1][0] if slot is not None else None
            made = values.get(entry.slots[slot][0]) if kind == "eager" else None
            if dirty and isinstance(made, np.ndarray) and isinstance(out, np.ndarray) and out is not made:
                # the traced run wrote into the eager call's own array (capture.finalize), whose layout NumPy
                # chose (a fancy index's size-1 axis keeps its own stride): so does the replay
                np.copyto(views.writable(made), out)
                out = made
            elif kind == "const" or id(out) in claimed or id(out) in slot_arrays and kind != "eager":
                out = out.copy()
        storage.append(out)
        claimed.add(id(out))
    return storage, writes


class _Rebuild:
    """The values the cell leaves, rebuilt from their recipes (``_Recipes``) and the storage."""

    def __init__(self, user: dict, storage: list[Any], apply_chain: Any, values: dict | None = None) -> None:
        self.user, self.storage, self.apply_chain, self.values = user, storage, apply_chain, values or {}
        self.made: dict[Any, Any] = {}  # one object per lazy array / container, as the cell had
        self.fills: list[tuple[Any, tuple]] = []  # closure cells, filled once everything exists

    def of(self, r: tuple) -> Any:
        kind, made = r[0], self.made
        if kind == "obj":
            return r[1]
        if kind == "ref":
            return resolve(self.user, r[1])
        if kind == "handle":  # a generator this replay's calls made
            return self.values[r[1]]
        if kind == "lazy":
            _, key, bi, chain, scalar, writeable = r
            if key in made:
                return made[key]
            out = self.storage[bi]
            if writeable and chain and isinstance(out, np.ndarray):
                out = views.writable(out)  # a writeable view of a base marked read-only (see capture.finalize)
            out = self.apply_chain(out, chain) if chain else out
            if not writeable and out.flags.writeable:
                out = out.view()
                out.flags.writeable = False
            made[key] = out = out[()] if scalar else out
            return out
        if kind == "tuple":
            return tuple(self.of(v) for v in r[1])
        if kind == "ntuple":
            return self.of(r[1])._make([self.of(v) for v in r[2]])
        if kind == "frozenset":
            return frozenset(self.of(v) for v in r[1])
        if kind == "module":
            return sys.modules[r[1]]  # (the lookup checked it is the module recorded)
        if kind == "wrap":
            return r[1](self.of(r[2]))
        if kind == "property":
            return property(*[self.of(f) for f in r[1]], doc=r[2])
        key = ("c", r[1])
        if key in made or kind == "made":
            return made[key]
        if kind == "list":
            made[key] = out = []
            out.extend(self.of(v) for v in r[2])
            return out
        if kind == "set":
            made[key] = out = set()
            out.update(self.of(v) for v in r[2])
            return out
        if kind == "dict":
            made[key] = out = {}
            for k, v in r[2]:
                out[self.of(k)] = self.of(v)  # keys too: `{a.sum(): ...}` has a NumPy scalar key
            return out
        if kind == "deque":
            made[key] = out = collections.deque(maxlen=r[3])
            out.extend(self.of(v) for v in r[2])
            return out
        if kind == "mapping":
            _, _, t, factory, items = r
            made[key] = out = t(self.of(factory)) if t is collections.defaultdict else t()
            for k, v in items:
                out[self.of(k)] = self.of(v)
            return out
        if kind == "func":
            return self._function(key, r)
        if kind == "ntclass":
            _, _, name, fields, defaults, module = r
            made[key] = cls = collections.namedtuple(name, fields, defaults=[self.of(d) for d in defaults], module=module)
            return cls
        if kind == "class":
            _, _, name, qualname, module, bases, items, dc = r
            ns = {k: self.of(v) for k, v in items}
            ns.update(__module__=module, __qualname__=qualname)
            if dc is not None:  # (its fields as ``dataclasses.field``s: ``dataclass`` makes the rest again)
                import dataclasses

                ns["__annotations__"] = dict(dc[1])
                ns.update((f, dataclasses.field(**self.of(args))) for f, args in dc[2])
            made[key] = cls = type(name, tuple(self.of(b) for b in bases), ns)
            if dc is not None:
                dataclasses.dataclass(cls, **dc[0])
            return cls
        _, _, cls, attrs = r  # "inst"
        t = self.of(cls)
        made[key] = obj = types.SimpleNamespace() if t is types.SimpleNamespace else object.__new__(t)
        obj.__dict__.update((k, self.of(v)) for k, v in attrs)
        return obj

    def _function(self, key: tuple, r: tuple) -> Any:
        _, _, code, name, qualname, defaults, kwdefaults, closure, attrs, doc, annotations = r
        cells = []
        for _, ck, contents in closure:
            cell = self.made.get(("cell", ck))
            if cell is None:
                cell = self.made[("cell", ck)] = types.CellType()
                if contents is not None:
                    self.fills.append((cell, contents))
            cells.append(cell)
        self.made[key] = f = types.FunctionType(code, self.user, name, None, tuple(cells) or None)
        f.__qualname__, f.__doc__, f.__annotations__ = qualname, doc, dict(annotations)
        f.__defaults__ = self.of(defaults)
        f.__kwdefaults__ = None if kwdefaults is None else self.of(kwdefaults)
        f.__dict__.update(self.of(attrs))
        return f

    def finish(self) -> None:
        """Closure cells get their contents last: a function's own name, a method's class."""
        while self.fills:
            cell, contents = self.fills.pop()
            cell.cell_contents = self.of(contents)


def _sync_cause(cause: str, line: int | None) -> str:
    """As ``Session.to_host`` words it, so a replay's ledger reads like the traced run's."""
    return f"sync: {cause}" + (f" at line {line}" if line is not None else "")


def _last_bit(a: Any, b: Any) -> bool:
    """Two floats a few units in the last place apart (a rounding, not another result)."""
    if not isinstance(a, (float, np.floating)) or not isinstance(b, (float, np.floating)):
        return False
    with np.errstate(all="ignore"):
        return bool(abs(a - b) <= 8 * np.spacing(np.abs(np.asarray(a))))


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is float:  # (the common case, a draw: as guards._key compares, without building keys)
        return a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)) or a != a and b != b
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (float, complex, np.generic)):
        return guards._key(a) == guards._key(b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _short(v: Any) -> str:
    return guards._short(v)


# -- the cache ----------------------------------------------------------------------------------

class PlanCache:
    """Per cell (source + options): up to ``PER_CELL`` entries, most recently used first."""

    def __init__(self) -> None:
        self.cells: "OrderedDict[tuple, list[Entry]]" = OrderedDict()
        self.stats: dict[tuple, dict] = {}

    def lookup(self, key: tuple, user: dict) -> tuple[Entry | None, list[str]]:
        entries = self.cells.get(key)
        if not entries:
            return None, ["no plan recorded for this cell yet (first run, or the cache was cleared)"]
        first: list[str] = []
        for i, e in enumerate(entries):
            why = misses(e, user)
            if not why:
                entries.insert(0, entries.pop(i))
                self.cells.move_to_end(key)
                return e, []
            if not first:
                first = why
        return None, first

    def store(self, key: tuple, entry: Entry) -> None:
        entries = self.cells.setdefault(key, [])
        entries.insert(0, entry)
        del entries[PER_CELL:]
        self.cells.move_to_end(key)
        while self.nbytes > MAX_BYTES and self.cells:  # the least recently used cell loses its oldest entry
            oldest = next(iter(self.cells))
            lst = self.cells[oldest]
            lst.pop()
            if not lst:
                del self.cells[oldest]

    def note(self, key: tuple, state: str, reasons: list[str]) -> str | None:
        """Count consecutive re-traces; the advice to warn with when a cell keeps missing."""
        st = self.stats.get(key) or self.stats.setdefault(key, {"hit": 0, "miss": 0, "unreplayable": 0, "row": 0})
        st[state] += 1
        if state == "hit":
            st["row"] = 0
            return None
        if state == "miss" and reasons and not reasons[0].startswith("no plan recorded"):
            st["row"] += 1
        if st["row"] == STORM:
            why = reasons[0] if reasons else "?"
            if ": value " in why:
                advice = ("a Python scalar baked into the plan changes every run: keep it in a 0-d array "
                          "(alpha = np.array(0.5)) so it becomes a kernel input instead of a guard")
            elif ": shape " in why:
                advice = "the input shapes change every run: each new shape is a new plan (at most 8 are kept)"
            elif "line " in why:
                advice = "data read by Python (if/print of a value, int()/float()) steers the cell differently " \
                         "each run: move that decision out of the cell or express it with np.where"
            else:
                advice = "what the cell reads changes every run; see miss_reasons"
            return f"recompile storm: this cell was traced {STORM} times in a row ({why}). {advice}."
        return None

    @property
    def nbytes(self) -> int:
        return sum(e.nbytes for es in self.cells.values() for e in es)

    def clear(self) -> None:
        self.cells.clear()
        self.stats.clear()

    def describe(self, code: bool = False) -> str:
        if not self.cells:
            return "plan cache: empty"
        n = sum(len(es) for es in self.cells.values())
        lines = [f"plan cache: {fmt.plural(len(self.cells), 'cell')}, {fmt.plural(n, 'entry', 'entries')}, "
                 f"{fmt.nbytes(self.nbytes)} held (limit {fmt.nbytes(MAX_BYTES)})"]
        for key, es in self.cells.items():
            source, backend, fuse, dry_run, keep = key
            first = (source.strip().splitlines() or [""])[0]
            st = self.stats.get(key, {})
            flags = "".join([", no fuse"] * (not fuse) + [", dry run"] * dry_run + [", keep"] * keep)
            lines.append(f"- [{backend}{flags}] {first[:60]!r}: {fmt.plural(len(es), 'entry', 'entries')}, "
                         f"{fmt.plural(st.get('hit', 0), 'hit')}, {fmt.plural(st.get('miss', 0), 'miss', 'misses')}")
            for i, e in enumerate(es):
                lines.append(f"    entry {i}: {fmt.plural(len(e.guards), 'guard')}, "
                             f"{fmt.plural(sum(s[0] == 'eval' for s in e.steps), 'plan')} run, {fmt.plural(e.hits, 'hit')}")
                lines += [f"      {t}" for t in e.texts[:12]]
                if len(e.texts) > 12:
                    lines.append(f"      ... {len(e.texts) - 12} more")
                holds = guard_function(e) if code else None
                if holds is not None:
                    lines += [f"      {t}" for t in holds.source.splitlines()]
                elif code:
                    lines.append(f"      (more than {GENERATED_MAX} guards: checked one by one, no generated function)")
        return "\n".join(lines)


PLAN_CACHE = PlanCache()


def warn_storm(message: str) -> None:
    warnings.warn(message, RecompileWarning, stacklevel=3)


__all__ = ["PLAN_CACHE", "PlanCache", "Tape", "Entry", "replay", "Abandon", "RecompileWarning", "io", "time"]
