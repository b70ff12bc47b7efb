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

import io
import os
import sys
import time
import warnings
from collections import OrderedDict
from typing import Any

import numpy as np

from . import fmt, guards, views
from .buffers import rebind
from .guards import Recorder, Unguardable, path_text, resolve
from .trace import LazyArray, root_of

PER_CELL = 8
MAX_BYTES = int(os.environ.get("JUPYTER_FUSE_PLAN_CACHE_BYTES", 256 << 20))
STORM = 3  # consecutive re-traces of one cell before we warn


class RecompileWarning(UserWarning):
    """A cell keeps missing the plan cache: every run is traced again."""


class Abandon(Exception):
    """A replay found a sync value that would steer the cell differently: trace instead."""


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

    def unreplayable(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    def read(self, name: str, value: Any) -> None:
        self.rec.read(name, value)

    def on_input(self, node: Any, value: Any) -> None:
        if self.reasons:  # unreplayable already (an eager call's result on the GPU cannot be copied here)
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

    def on_eval(self, plan: Any) -> None:
        self.steps.append(("eval", plan))

    def on_sync(self, node: Any, scalar: bool, convert: Any, out: Any, cause: str, name: str | None) -> None:
        if isinstance(out, np.ndarray):
            self.nbytes += out.nbytes
        self.steps.append(("sync", node, scalar, convert, out, cause, self.s.line(), name))

    def on_print(self, items: list, sep: str, end: str) -> None:
        self.steps.append(("print", items, sep, end, self.s.line()))

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
            slot_of = {id(s.inputs[node.params[0]]): i for i, (node, _) in enumerate(self.slots)}
            buffers, index = [], {}
            for buf in bufs:
                slot = slot_of.get(id(buf.origin)) if buf.origin is not None else None
                if buf.origin is not None and slot is None:
                    raise Unguardable("an array of unknown origin reached the namespace")
                index[id(buf)] = len(buffers)
                path_slot = slot is not None and self.slots[slot][1][0] == "root"
                buffers.append((buf.node, slot, bool(buf.dirty), path_slot))
            recipe = _Recipes(self.rec, index)
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
        return Entry(self.rec.guards, self.rec.keep, self.slots, self.consts, self.steps, self.effects,
                     self.nbytes + self.rec.data_bytes,
                     {"ops": r.ops, "syncs": list(r.syncs), "graph": r.graph, "nodes": r.nodes,
                      "breaks": len(r.breaks)})


def _resolve_or_none(user: Any, path: tuple) -> Any:
    try:
        return resolve(user, path)
    except Exception:  # noqa: BLE001
        return None


_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype, range, slice)


class _Recipes:
    """How to rebuild a value the cell leaves in the namespace, without running the cell."""

    def __init__(self, rec: Recorder, buffers: dict) -> None:
        self.rec, self.buffers = rec, buffers
        self.memo: dict[int, int] = {}
        self.count = 0

    def of(self, x: Any, where: str) -> tuple:
        from .capture import _real_numpy

        if isinstance(x, LazyArray):
            if x._origin is not None and id(x._origin) in self.rec.known:
                return ("ref", self.rec.known[id(x._origin)])
            return ("lazy", self._id(x), self.buffers[id(x._buf)], x._chain, x.scalar, x._writeable)
        if x is LazyArray:
            return ("obj", np.ndarray)
        real = _real_numpy(x)
        if real is not None:
            return ("obj", real)
        if isinstance(x, _IMMUTABLE):
            if type(x) is tuple:  # pragma: no cover - tuples are not in _IMMUTABLE
                pass
            return ("obj", x)
        if id(x) in self.rec.known:
            return ("ref", self.rec.known[id(x)])
        if isinstance(x, (np.ufunc, type)) and guards._foreign(x if isinstance(x, type) else type(x)) \
                or isinstance(x, type(np)) and guards._is_numpy(x):
            return ("obj", x)
        t = type(x)
        if t is list:
            return ("list", self._id(x), [self.of(v, where) for v in x])
        if t is tuple:
            return ("tuple", [self.of(v, where) for v in x])
        if t is dict:
            return ("dict", self._id(x), [(self.of(k, where), self.of(v, where)) for k, v in x.items()])
        raise Unguardable(f"{where} is a {t.__qualname__}: a replay rebuilds only arrays, scalars and "
                          "lists/tuples/dicts of them")

    def _id(self, x: Any) -> int:
        key = id(x)
        if key not in self.memo:
            self.memo[key] = len(self.memo)
        return self.memo[key]


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
        self.prepared: dict[int, Any] = {}  # step -> backend launcher (``backend.prepare(plan)``), made once
        self._holds: Any = None  # the generated guard function, made at the first lookup


def misses(entry: Entry, user: dict) -> list[str]:
    """Why ``entry``'s plan cannot be replayed on ``user``'s values (empty: every guard holds)."""
    holds = guard_function(entry)
    if holds is not None and holds(user):
        return []
    return guards.check(entry.guards, user)


def guard_function(entry: Entry) -> Any:
    """The entry's generated guard function, made on first use; None past ``GENERATED_MAX`` guards."""
    if entry._holds is None:
        entry._holds = guards.compile_check(entry.guards) if len(entry.guards) <= GENERATED_MAX else False
    return entry._holds or None


def replay(entry: Entry, user: dict, backend: Any, report: Any) -> Any:
    """Run the tape on the current inputs; returns the cell's value. Raises Abandon before any write."""
    values = dict(entry.fixed)
    for node, path in entry.inputs:
        values[node] = root_of(resolve(user, path))
    host = _copier(entry, values, backend, report)
    printed = _run_tape(entry, values, backend, report, host)
    # every check passed: now, and only now, the user sees the effects
    storage = _results(entry, values, host)
    _, names, deleted, result = entry.effects
    rebuild = _Rebuild(user, storage, getattr(backend, "apply_chain", views.apply_chain))
    new = [(k, rebuild.of(r)) for k, r in names]
    value = [rebuild.of(r) for r in result]
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


def _run_tape(entry: Entry, values: dict, backend: Any, report: Any, host: Any) -> list[str]:
    """The recorded plans on the current values, each sync checked; returns the text to print."""
    printed: list[str] = []
    for i, step in enumerate(entry.steps):
        kind = step[0]
        if kind == "eval":
            prepare = getattr(backend, "prepare", None)  # a launcher for this very plan, made once
            if prepare is None:  # (a backend made per run, like cupy's, holds that run's state)
                backend.execute(step[1], values, report)
                continue
            run = entry.prepared.get(i)
            if run is None:
                run = entry.prepared[i] = prepare(step[1])
            run(values, report)
        elif kind == "sync":
            _, node, scalar, convert, expected, cause, line, name = step
            v = values[node] if host is None else host(values[node], _sync_cause(cause, line), line=line, name=name)
            now = convert(v[()] if scalar else v)
            if not _same(now, expected):
                raise Abandon(f"line {line} ({cause}): value {_short(expected)} -> {_short(now)}")
        else:
            _, items, sep, end, line = step
            parts = []
            for it in items:
                if it[0] == "text":
                    parts.append(it[1])
                else:
                    v = values[it[1]] if host is None else host(values[it[1]], _sync_cause("str()/print", line), line=line)
                    parts.append(str(v[()] if it[2] else v))
            printed.append(sep.join(parts) + end)
    return printed


def _results(entry: Entry, values: dict, host: Any) -> list[Any]:
    """The storage of every buffer the cell hands back: writes into the user's own arrays done,
    new arrays owning their memory. Every copy back comes first, so a failing one writes nothing."""
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
    slot_arrays = {id(values[node]) for node, _ in entry.slots}
    storage: list[Any] = []
    claimed: set[int] = set()
    for (node, slot, dirty, path_slot), v in zip(buffers, fetched):
        if path_slot:
            out = values[entry.slots[slot][0]]
            if dirty and v is not None and v is not out:
                np.copyto(out, v)
        else:
            out = v if host is not None and not isinstance(v, np.ndarray) else np.asarray(v)  # (--keep: on the device)
            if slot is not None or id(out) in claimed or id(out) in slot_arrays:
                out = out.copy()
        storage.append(out)
        claimed.add(id(out))
    return storage


class _Rebuild:
    """The values the cell leaves, rebuilt from their recipes (``_Recipes``) and the storage."""

    def __init__(self, user: dict, storage: list[Any], apply_chain: Any) -> None:
        self.user, self.storage, self.apply_chain = user, storage, apply_chain
        self.made: dict[Any, Any] = {}  # one object per lazy array / container, as the cell had

    def of(self, r: tuple) -> Any:
        kind, made = r[0], self.made
        if kind == "obj":
            return r[1]
        if kind == "ref":
            return resolve(self.user, r[1])
        if kind == "lazy":
            _, key, bi, chain, scalar, writeable = r
            if key in made:
                return made[key]
            out = self.storage[bi]
            out = self.apply_chain(out, chain) if chain else out
            if not writeable and out.flags.writeable:
                out = out.view()
                out.flags.writeable = False
            made[key] = out = out[()] if scalar else out
            return out
        if kind == "tuple":
            return tuple(self.of(v) for v in r[1])
        key = ("c", r[1])
        if key in made:
            return made[key]
        if kind == "list":
            made[key] = out = []
            out.extend(self.of(v) for v in r[2])
            return out
        made[key] = out = {}
        for k, v in r[2]:
            out[self.of(k)] = self.of(v)  # keys too: `{a.sum(): ...}` has a NumPy scalar key
        return out


def _sync_cause(cause: str, line: int | None) -> str:
    """As ``Session.to_host`` words it, so a replay's ledger reads like the traced run's."""
    return f"sync: {cause}" + (f" at line {line}" if line is not None else "")


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
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
                             f"{fmt.plural(sum(s[0] == 'eval' for s in e.steps), 'plan')}, {fmt.plural(e.hits, 'hit')}")
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
