"""The Report: everything one run of a cell did. Displays only ever read these.

No UI imports here: the dashboard and the labextension consume
``Report.to_dict()`` (schema ``SCHEMA_VERSION``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from . import fmt

SCHEMA_VERSION = 1
PHASES = ("guard", "trace", "plan", "compile", "run", "total")


def backend_label(backend: str, options: dict[str, Any]) -> str:
    """``cupy --dry-run`` / ``cupy --emulate`` (their timings are the host's, not a GPU's), else the backend."""
    return backend + (" --dry-run" if options.get("dry_run") else " --emulate" if options.get("emulate") else "")


def _times() -> dict[str, float]:
    return dict.fromkeys(PHASES, 0.0)


@dataclass
class Report:
    backend: str
    ops: int = 0  # array operations traced: what eager NumPy would have launched
    kernels: int = 0  # kernels launched (fallbacks included)
    kernel_list: list[dict[str, Any]] = field(default_factory=list)
    breaks: list[dict[str, Any]] = field(default_factory=list)
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    syncs: list[dict[str, Any]] = field(default_factory=list)
    transfers: list[dict[str, Any]] = field(default_factory=list)
    bytes_h2d: int = 0
    bytes_d2h: int = 0
    times: dict[str, float] = field(default_factory=_times)
    cache: str = "off"
    guards: list[str] = field(default_factory=list)
    miss_reasons: list[str] = field(default_factory=list)
    # the executed graph, printed like a jaxpr (``graph``): its text, or what makes it when first read (printing
    # a loop's 400 nodes costs a traced run milliseconds, and few reports are printed whole)
    _graph: str | Callable[[], str] = field(default="", repr=False, compare=False)
    # the executed graph as data: {id, op, kind, dtype, shape, args: [ids], lines, kernel, params}
    nodes: list[dict[str, Any]] = field(default_factory=list)
    program: str = ""  # a replay run as one compiled program: what it ran ("500 iterations of k0, k1")
    program_note: str = ""  # a replay run kernel by kernel: why not as one program
    # values written at the cell's end only because a name still holds them: {names, kernel, bytes, lines}
    bound_writes: list[dict[str, Any]] = field(default_factory=list)
    # loops fast-forwarded (``loops``): {line, iterations, of, unit, units, kernels, time, runs, how, moves, numbers}
    loops: list[dict[str, Any]] = field(default_factory=list)
    graph_truncated: bool = False  # ``nodes`` stops at session.MAX_GRAPH_NODES (a long loop's first ones)
    source: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # the user's exception, if the cell raised
    result: Any = field(default=None, repr=False, compare=False)  # the cell's value (not serialized)
    # kernel name -> its kernel_list entry; (line, what) -> its sync or fallback entry: a loop that runs
    # a kernel (or syncs, or falls back) 100,000 times keeps one entry with a count, not 100,000
    _entries: dict = field(default_factory=dict, repr=False, compare=False)
    # a kernel ran as NumPy while numba compiled it: its values may differ from the compiled kernel's in
    # the last bit (a replay's sync that differs so says why: ``cache.replay``)
    _meanwhile: bool = field(default=False, repr=False, compare=False)

    def launched(self, static: dict, elapsed: float, count: int = 1, **extra: Any) -> dict:
        """One kernel launch. ``static`` is what every launch of this kernel shares (name, ops, lines,
        bytes, source); ``count`` launches at once (a compiled program's loop); a kernel that already ran
        in this cell counts into its entry (``launches``,
        total ``time`` and bytes), so ``kernels`` counts launches and ``kernel_list`` kernels. Returns the
        entry (a backend may add what it measures afterwards)."""
        self.kernels += count
        e = self._entries.get(("k", static["name"]))
        if e is None:
            e = self._entries[("k", static["name"])] = {**static, "time": elapsed, **extra, "launches": count}
            if count > 1:
                e["bytes_read"], e["bytes_written"] = static["bytes_read"] * count, static["bytes_written"] * count
            self.kernel_list.append(e)
            return e
        e["launches"] += count
        e["time"] += elapsed
        e["bytes_read"] += static["bytes_read"] * count
        e["bytes_written"] += static["bytes_written"] * count
        if extra.get("compile_time"):
            e["compile_time"] = e.get("compile_time", 0.0) + extra["compile_time"]
        return e

    def counted(self, kind: str, entry: dict) -> bool:
        """Add a sync or fallback entry (``kind`` is "syncs" or "fallbacks"), or count a repeat of one
        at the same line (``count``). True when the entry is new."""
        key = (kind, entry.get("line"), entry.get("cause", entry.get("op")), entry.get("reason"))
        e = self._entries.get(key)
        if e is not None:
            e["count"] += 1
            return False
        entry["count"] = 1
        self._entries[key] = entry
        getattr(self, kind).append(entry)
        return True

    @property
    def graph(self) -> str:
        if not isinstance(self._graph, str):
            self._graph = self._graph()
        return self._graph

    @graph.setter
    def graph(self, text: str | Callable[[], str]) -> None:
        self._graph = text

    @property
    def bytes_moved(self) -> int:
        """Bytes the launched kernels read and wrote."""
        return sum(k.get("bytes_read", 0) + k.get("bytes_written", 0) for k in self.kernel_list)

    def summary(self) -> str:
        """The one line the magic prints, e.g. ``fuse[cpu]: 10 ops -> 1 kernel · ...``: every phase."""
        return summary_line(self._fields())

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "result" and not k.startswith("_")}
        d["graph"] = self.graph
        d["schema"] = SCHEMA_VERSION
        d["bytes_moved"] = self.bytes_moved
        return json.loads(json.dumps(d, default=str))  # guarantees JSON-serializable

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Report":
        """The Report a ``to_dict()`` (or a saved file) describes; derived keys are dropped."""
        names = {f.name for f in fields(cls)} - {"result"}
        r = cls(**{k: v for k, v in d.items() if k in names})
        r.graph = d.get("graph", "")
        return r

    def save(self, path: str | os.PathLike) -> Path:
        """Write the report to ``path``: ``.json`` is ``to_dict()``; ``.html`` (or ``.htm``) a standalone
        page (the panel's static rendering, with the JSON embedded). :func:`load` reads both back."""
        from .dashboard.export import save  # plain string building: no UI library

        return save(self, path)

    def _fields(self) -> dict[str, Any]:
        """The dict form without the JSON round trip (what the summary needs, cheaply)."""
        return {**self.__dict__, "graph": self.graph, "bytes_moved": self.bytes_moved}

    def __repr__(self) -> str:
        d = self._fields()
        lines = [summary_line(d)]
        for k in self.kernel_list:
            where = fmt.lines(k.get("lines", [])) or "line ?"
            lines.append(
                f"  {kernel_label(k)}: {', '.join(k['ops'])} ({where}) "
                f"{fmt.nbytes(k.get('bytes_read', 0))} in, {fmt.nbytes(k.get('bytes_written', 0))} out, "
                f"{fmt.seconds(k.get('time', 0.0))}" + (f" · ran as NumPy: {k['fallback']}" if k.get("fallback") else "")
            )
        reasons: dict[str, int] = {}
        for b in self.breaks:
            reason = break_reason(d, b)
            reasons[reason] = reasons.get(reason, 0) + 1
        for reason, n in reasons.items():
            lines.append(f"  break{f' ×{n}' if n > 1 else ''}: {reason}")
        for f in self.fallbacks:
            times = f" x{f['count']}" if f.get("count", 1) > 1 else ""
            lines.append(f"  fallback (line {f['line']}){times}: {f['op']}: {f['reason']}")
        for s in self.syncs:
            times = f" x{s['count']}" if s.get("count", 1) > 1 else ""
            lines.append(f"  sync (line {s['line']}){times}: {s['cause']}")
        bound = bound_writes_text(d)
        if bound:
            lines.append(f"  {bound}")
        for loop in self.loops:
            lines.append(f"  loop (line {loop['line']}): {loop_text(loop)}")
        return "\n".join(lines)


def load(path: str | os.PathLike) -> Report:
    """A Report saved by :meth:`Report.save`, from its ``.json`` or its standalone ``.html`` page."""
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix.lower() in (".html", ".htm"):
        from .dashboard.export import report_json

        text = report_json(text)
    return Report.from_dict(json.loads(text))


# -- the words every display shares (they read the dict form, so the labextension's copy can match) --

FIRST_RUN = "no plan recorded for this cell yet"  # cache.py's reason on a cell's first traced run
NO_FUSE_REASON = "fusion is off (--no-fuse): one kernel per op"  # fuse.py's reason with fusion off
NUMPY_REFERENCE = "the numpy backend is the reference: one NumPy call per op, never fused (-b cpu or -b cupy fuse)"
LOAD_PHASE = "load"  # first use: heavy modules (numba, cupy) loaded during the run; the magic measures it


def bound_writes_text(d: dict[str, Any]) -> str:
    """The cost of names the cell leaves bound to its temporaries (issue 16), or "" when there is none."""
    writes = d.get("bound_writes") or []
    if not writes:
        return ""
    names = [n for w in writes for n in w.get("names", [])]
    total = sum(int(w.get("bytes", 0)) for w in writes)
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return (f"written only because a name still holds it: {shown} ({fmt.nbytes(total)}; no other kernel "
            f"reads {'them' if len(names) > 1 else 'it'}: `del` a temporary and it stays inside its kernel)")


def launches(k: dict[str, Any]) -> int:
    """How many times a kernel-list entry ran (a loop's kernel is one entry with its total time and bytes)."""
    n = k.get("launches", 1)
    return n if isinstance(n, int) and n > 0 else 1


def kernel_label(k: dict[str, Any]) -> str:
    """``k0``, or ``k0 ×100`` for an entry that ran 100 times."""
    n = launches(k)
    return f"{k['name']} ×{fmt.count(n)}" if n > 1 else str(k["name"])


def break_reason(d: dict[str, Any], b: dict[str, Any]) -> str:
    """A cut's reason as the user should read it. With fusion off, the partitioner says ``--no-fuse``
    whether the user passed it or chose the numpy backend; the latter is the one-op-per-kernel reference."""
    reason = str(b.get("reason", "?"))
    if reason == NO_FUSE_REASON and d.get("backend") == "numpy" and (d.get("options") or {}).get("fuse", True):
        return NUMPY_REFERENCE
    return reason


def kernel_seconds(d: dict[str, Any]) -> float:
    """Time spent inside kernels (NumPy calls included), at most the run phase."""
    inside = sum(float(k.get("time") or 0.0) for k in d.get("kernel_list", []))
    return min(inside, float(d.get("times", {}).get("run", inside)))


def time_shares(d: dict[str, Any]) -> dict[str, float]:
    """The cell's time as shares of its total: ``kernels``, ``compile``, ``load`` (first use) and
    ``overhead`` (guards, tracing, planning, launching: everything the kernels did not do)."""
    t = d.get("times", {})
    total = float(t.get("total") or 0.0)
    if total <= 0:
        return {}
    parts = {"kernels": kernel_seconds(d), "compile": float(t.get("compile") or 0.0),
             "load": float(t.get(LOAD_PHASE) or 0.0)}
    shares = {k: min(1.0, v / total) for k, v in parts.items() if v > 0 or k == "kernels"}
    shares["overhead"] = max(0.0, 1.0 - sum(shares.values()))
    return shares


def loop_text(loop: dict[str, Any]) -> str:
    """A fast-forwarded loop (``loops``) in words."""
    runs = loop.get("runs", 1)
    return (f"{fmt.count(loop['iterations'])} of its {fmt.count(loop['of'])} iterations"
            f"{f' (over {runs} runs of the loop)' if runs > 1 else ''} fast-forwarded: each "
            f"{loop['unit']} iteration{'s' * (loop['unit'] != 1)} made one graph"
            f"{' with its windows moved on' if loop.get('moves') else ''}"
            f"{' with the constants its loop variable computes' if loop.get('numbers') else ''}, so its plan "
            f"({fmt.plural(loop['kernels'], 'kernel')}) ran {fmt.count(loop['units'])} times more "
            f"{_READS if loop.get('reads') else _SKIPS}"
            f"{_HOW.get(loop.get('how', ''), '')}, in {fmt.seconds(loop['time'])}")


_SKIPS = "without the loop's Python"
# (``syncloops.py``: a loop reading a value each step runs its Python of numbers, on the value its plan computes)
_READS = "with its arrays untraced: only the loop's Python of numbers ran, on the value the plan computed each step"


_HOW = {"compiled": ", as one compiled program (a loop around its kernels)",
        "step": ", each step's kernels as one compiled call",
        "compiling": ", kernel by kernel while numba compiles them as one program"}


def cache_phrase(d: dict[str, Any]) -> str:
    """The plan cache in a few words: what happened, not every reason (the Guards tab has those)."""
    state, reasons = d.get("cache", "off"), _unique(d.get("miss_reasons") or [])
    more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
    if state == "hit":
        if d.get("program"):  # the teaching point: the Python loop is gone
            return f"replayed as one compiled program ({d['program']})"
        return "replayed (every guard held)"
    if state == "miss":
        if not reasons or all(r.startswith(FIRST_RUN) for r in reasons):
            return "first run: plan recorded for replay"
        return f"traced again: {reasons[0]}{more}"
    if state == "unreplayable":
        return f"traced every run: {reasons[0]}{more}" if reasons else "traced every run"
    if state == "numpy":  # (runner.PLAIN_MIN: a cell fusion does not pay for)
        return reasons[0] if reasons else "ran as plain NumPy"
    return "cache off"


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def summary_line(d: dict[str, Any]) -> str:
    """``fuse[cpu]: 10 ops -> 1 kernel · first run: ... · guard 0 s · trace 1.20 ms · plan 310 µs ·
    compile 1.10 s · run 4.10 ms · total 1.12 s (kernels 0.4%, compile 98%, overhead 1.6%)``."""
    t = d.get("times", {})
    opts = d.get("options") or {}
    dry, emulated = bool(opts.get("dry_run")), bool(opts.get("emulate"))
    parts = [f"fuse[{backend_label(d['backend'], opts)}]: {fmt.plural(d['ops'], 'op')} -> "
             f"{fmt.plural(d['kernels'], 'kernel')}"]
    if d.get("cache", "off") != "off":
        parts.append(cache_phrase(d))
    if t.get(LOAD_PHASE):
        parts.append(f"first use {fmt.seconds(t[LOAD_PHASE])}")
    for phase in PHASES[:-1]:
        host = " (NumPy on the host)" if dry else " (emulated on the CPU)" if emulated else ""
        parts.append(f"{phase} {fmt.seconds(t.get(phase, 0.0))}" + (host if phase == "run" else ""))
    shares = time_shares(d)
    if shares:
        parts.append(f"total {fmt.seconds(t.get('total', 0.0))} ("
                     + ", ".join(f"{k} {fmt.percent(v)}" for k, v in shares.items()) + ")")
    cuda = [k for k in d.get("kernel_list", []) if "compiled" in k]
    if cuda:
        parts.append(f"{sum(bool(k['compiled']) for k in cuda)}/{len(cuda)} CUDA kernels compiled"
                     + (", emulated on the CPU" if emulated else ""))
    if d.get("fallbacks"):
        parts.append(fmt.plural(len(d["fallbacks"]), "fallback"))
    if d.get("bytes_h2d") or d.get("bytes_d2h"):
        parts.append(f"h2d {fmt.nbytes(d.get('bytes_h2d', 0))} d2h {fmt.nbytes(d.get('bytes_d2h', 0))}")
    return " · ".join(parts)
