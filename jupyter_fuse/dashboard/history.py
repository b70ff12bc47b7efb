"""The session's record of ``%%fuse`` runs, which the live dashboard draws. No UI imports.

Every run is recorded (quiet ones too), so a dashboard opened late still
shows the whole session. Reports are kept without their cell value, which
may be a large array the user has since dropped.
"""

from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, replace
from typing import Any

MAX_RUNS = 500  # a long session should not grow without bound


@dataclass
class CellRun:
    number: int | None  # IPython's execution count, when there is one
    label: str
    report: Any  # Report, with result dropped
    comparison: Any = None


def _strip(report: Any) -> Any:
    if isinstance(report, dict):
        return report
    r = copy.copy(report)
    r.result = None
    return r


class History:
    def __init__(self) -> None:
        self.runs: list[CellRun] = []
        self._listeners: "weakref.WeakSet[Any]" = weakref.WeakSet()

    def record(self, report: Any, number: int | None = None, comparison: Any = None) -> CellRun:
        src = report["source"] if isinstance(report, dict) else report.source
        first = next((line.strip() for line in src.splitlines() if line.strip()), "")
        label = f"In [{number if number is not None else len(self.runs) + 1}]: {first[:48]}"
        if comparison is not None:
            comparison = replace(comparison, fused=_strip(comparison.fused), eager=_strip(comparison.eager))
        run = CellRun(number, label, _strip(report), comparison)
        self.runs.append(run)
        del self.runs[:-MAX_RUNS]
        for listener in list(self._listeners):
            listener.on_run(run)
        return run

    def subscribe(self, listener: Any) -> None:
        """``listener.on_run(run)`` is called after every recorded run (held weakly)."""
        self._listeners.add(listener)

    def clear(self) -> None:
        self.runs.clear()


HISTORY = History()


def session_summary(runs: list[CellRun]) -> str:
    """One line over the session, e.g. ``3 cells · 41 ops -> 5 kernels · 1 replay, 1 miss · moved ...``."""
    from .. import fmt
    from .stats import as_dict

    if not runs:
        return "no %%fuse cell has run yet; this updates after each one"
    ds = [as_dict(r.report) for r in runs]
    moved = fmt.nbytes(sum(d.get("bytes_moved", 0) for d in ds))
    bus = sum(d.get("bytes_h2d", 0) + d.get("bytes_d2h", 0) for d in ds)
    return (f"{fmt.plural(len(runs), 'cell')} · {fmt.plural(sum(d['ops'] for d in ds), 'op')} -> "
            f"{fmt.plural(sum(d['kernels'] for d in ds), 'kernel')} · plan cache "
            f"{fmt.plural(sum(d.get('cache') == 'hit' for d in ds), 'replay')}, "
            f"{fmt.plural(sum(d.get('cache') == 'miss' for d in ds), 'miss', 'misses')} · moved {moved} · "
            + (f"transfers {fmt.nbytes(bus)}" if bus else "no host<->device transfers"))


def session_text(runs: list[CellRun]) -> str:
    """``text/plain`` of the dashboard: one line per cell."""
    from .. import fmt
    from .stats import as_dict

    lines = [f"jupyter_fuse session: {session_summary(runs)}"]
    for r in runs:
        d = as_dict(r.report)
        lines.append(f"  {r.label}  {fmt.plural(d['ops'], 'op')} -> {fmt.plural(d['kernels'], 'kernel')} · "
                     f"cache {d.get('cache', 'off')} · {fmt.seconds(d['times'].get('total', 0.0))} · "
                     f"moved {fmt.nbytes(d.get('bytes_moved', 0))}")
    return "\n".join(lines)
