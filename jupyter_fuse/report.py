"""The Report: everything one run of a cell did. Displays only ever read these.

No UI imports here: the dashboard and the labextension consume
``Report.to_dict()`` (schema ``SCHEMA_VERSION``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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
    graph: str = ""  # the executed graph, printed like a jaxpr
    # the executed graph as data: {id, op, kind, dtype, shape, args: [ids], lines, kernel, params}
    nodes: list[dict[str, Any]] = field(default_factory=list)
    graph_truncated: bool = False  # ``nodes`` stops at session.MAX_GRAPH_NODES (a long loop's first ones)
    source: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # the user's exception, if the cell raised
    result: Any = field(default=None, repr=False, compare=False)  # the cell's value (not serialized)
    # kernel name -> its kernel_list entry; (line, what) -> its sync or fallback entry: a loop that runs
    # a kernel (or syncs, or falls back) 100,000 times keeps one entry with a count, not 100,000
    _entries: dict = field(default_factory=dict, repr=False, compare=False)

    def launched(self, static: dict, elapsed: float, **extra: Any) -> None:
        """One kernel launch. ``static`` is what every launch of this kernel shares (name, ops, lines,
        bytes, source); a kernel that already ran in this cell counts into its entry (``launches``,
        total ``time`` and bytes), so ``kernels`` counts launches and ``kernel_list`` kernels."""
        self.kernels += 1
        e = self._entries.get(("k", static["name"]))
        if e is None:
            e = self._entries[("k", static["name"])] = {**static, "time": elapsed, **extra, "launches": 1}
            self.kernel_list.append(e)
            return
        e["launches"] += 1
        e["time"] += elapsed
        e["bytes_read"] += static["bytes_read"]
        e["bytes_written"] += static["bytes_written"]
        if extra.get("compile_time"):
            e["compile_time"] = e.get("compile_time", 0.0) + extra["compile_time"]

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
    def bytes_moved(self) -> int:
        """Bytes the launched kernels read and wrote."""
        return sum(k.get("bytes_read", 0) + k.get("bytes_written", 0) for k in self.kernel_list)

    def summary(self) -> str:
        """The one line the magic prints, e.g. ``fuse[numpy]: 37 ops -> 37 kernels · ...``."""
        t = self.times
        label = backend_label(self.backend, self.options)
        parts = [f"fuse[{label}]: {self.ops} op{'s' * (self.ops != 1)} -> {self.kernels} "
                 f"kernel{'s' * (self.kernels != 1)}"]
        if self.cache != "off":
            parts.append(f"cache {self.cache}")
        parts.append(f"trace {_ms(t['trace'])}")
        if t["compile"]:
            parts.append(f"compile {_ms(t['compile'])}")
        parts.append(f"run {_ms(t['run'])}")
        cuda = [k for k in self.kernel_list if "compiled" in k]
        if cuda:
            parts.append(f"{sum(bool(k['compiled']) for k in cuda)}/{len(cuda)} CUDA kernels compiled"
                         + (", emulated on the CPU" if self.options.get("emulate") else ""))
        if self.fallbacks:
            parts.append(f"{len(self.fallbacks)} fallback{'s' * (len(self.fallbacks) > 1)}")
        if self.bytes_h2d or self.bytes_d2h:
            parts.append(f"h2d {_bytes(self.bytes_h2d)} d2h {_bytes(self.bytes_d2h)}")
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "result" and not k.startswith("_")}
        d["schema"] = SCHEMA_VERSION
        d["bytes_moved"] = self.bytes_moved
        return json.loads(json.dumps(d, default=str))  # guarantees JSON-serializable

    def __repr__(self) -> str:
        lines = [self.summary()]
        for k in self.kernel_list:
            times = f" x{k['launches']}" if k.get("launches", 1) > 1 else ""
            lines.append(
                f"  {k['name']}{times}: {', '.join(k['ops'])} (lines {_lines(k['lines'])}) "
                f"{_bytes(k['bytes_read'])} in, {_bytes(k['bytes_written'])} out, {_ms(k['time'])}"
            )
        reasons: dict[str, int] = {}
        for b in self.breaks:
            reasons[b["reason"]] = reasons.get(b["reason"], 0) + 1
        for reason, n in reasons.items():
            lines.append(f"  break{f' x{n}' if n > 1 else ''}: {reason}")
        for f in self.fallbacks:
            times = f" x{f['count']}" if f.get("count", 1) > 1 else ""
            lines.append(f"  fallback (line {f['line']}){times}: {f['op']}: {f['reason']}")
        for s in self.syncs:
            times = f" x{s['count']}" if s.get("count", 1) > 1 else ""
            lines.append(f"  sync (line {s['line']}){times}: {s['cause']}")
        return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # unreachable


def _lines(lines: list[int]) -> str:
    return ",".join(map(str, lines)) or "?"
