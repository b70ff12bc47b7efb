"""``text/plain``: what terminal IPython prints after a ``%%fuse`` cell.

The first line is always ``Report.summary()``, so a one-line reader (or a
test grepping stdout) sees what it saw before the dashboard existed.
"""

from __future__ import annotations

from typing import Any

from . import stats

MAX_KERNELS = 8  # a 40-kernel eager cell should not flood a terminal


def render(report: Any, comparison: Any = None) -> str:
    d = stats.as_dict(report)
    h = stats.headline(d)
    lines = [_summary(report, d)]
    lines.append(f"  bytes moved {stats.fmt_bytes(h['moved'])} (eager NumPy {stats.fmt_bytes(h['eager'])}, "
                 f"saved by fusion {stats.fmt_bytes(h['saved'])}) · total {stats.fmt_ms(h['total'])}")
    if d.get("cache", "off") != "off":
        lines.append(f"  {h['cache']}")
    rows = stats.kernel_rows(d)
    for k in rows[:MAX_KERNELS]:
        lines.append(f"  {k['name']}: {k['ops']} (line {','.join(map(str, k['lines'])) or '?'}) "
                     f"{stats.fmt_bytes(k['bytes_in'])} in, {stats.fmt_bytes(k['bytes_out'])} out, "
                     f"{stats.fmt_ms(k['time'])}")
    if len(rows) > MAX_KERNELS:
        lines.append(f"  ... {len(rows) - MAX_KERNELS} more kernels")
    reasons: dict[str, int] = {}
    for b in d.get("breaks", []):
        reasons[b["reason"]] = reasons.get(b["reason"], 0) + 1
    lines += [f"  break{f' x{n}' if n > 1 else ''}: {r}" for r, n in reasons.items()]
    lines += [f"  fallback (line {f['line']}): {f['op']}: {f['reason']}" for f in d.get("fallbacks", [])]
    lines += [f"  sync (line {s['line']}): {s['cause']}" for s in d.get("syncs", [])]
    if d.get("transfers"):
        lines.append(f"  {stats.transfers_note(d)}")
    for g in stats.guard_rows(d):
        if g["failed"]:
            lines.append(f"  guard failed: {g['text']}: {g['old']} -> {g['new']}")
    if comparison is not None:
        lines += ["  " + line for line in comparison.lines()]
    return "\n".join(lines)


def _summary(report: Any, d: dict) -> str:
    if hasattr(report, "summary"):
        return report.summary()
    return f"fuse[{stats.backend_label(d)}]: {d['ops']} ops -> {d['kernels']} kernels"
