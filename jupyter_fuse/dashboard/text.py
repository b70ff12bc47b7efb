"""``text/plain``: what terminal IPython prints after a ``%%fuse`` cell.

The first line is always ``Report.summary()``, so a one-line reader (or a
test grepping stdout) sees what it saw before the dashboard existed.
"""

from __future__ import annotations

from typing import Any

from .. import fmt
from ..report import break_reason, summary_line
from . import stats

MAX_KERNELS = 8  # a 40-kernel eager cell should not flood a terminal


def render(report: Any, comparison: Any = None) -> str:
    d = stats.as_dict(report)
    h = stats.headline(d)
    lines = [summary_line(d), f"  {stats.moved_text(h)}"]
    rows = stats.kernel_rows(d)
    for k in rows[:MAX_KERNELS]:
        lines.append(f"  {k['label']}: {k['ops']} ({fmt.lines(k['lines']) or 'line ?'}) "
                     f"{fmt.nbytes(k['bytes_in'])} in, {fmt.nbytes(k['bytes_out'])} out, {fmt.seconds(k['time'])}")
    if len(rows) > MAX_KERNELS:
        lines.append(f"  ... {fmt.plural(len(rows) - MAX_KERNELS, 'more kernel')}")
    reasons: dict[str, int] = {}
    for b in d.get("breaks", []):
        reason = break_reason(d, b)
        reasons[reason] = reasons.get(reason, 0) + 1
    lines += [f"  break{f' ×{n}' if n > 1 else ''}: {r}" for r, n in reasons.items()]
    lines += [f"  fallback (line {f['line']}): {f['op']}: {f['reason']}" for f in d.get("fallbacks", [])]
    lines += [f"  sync (line {s['line']}): {s['cause']}" for s in d.get("syncs", [])]
    if d.get("transfers"):
        lines.append(f"  {stats.transfers_note(d)}")
    for g in stats.guard_rows(d):
        if g["changed"]:
            lines.append(f"  changed since the last plan: {g['text']}: {g['old']} -> {g['new']}")
    if stats.time_note(d):
        lines.append(f"  {stats.time_note(d)}")
    if comparison is not None:
        lines += ["  " + line for line in comparison.lines()]
    return "\n".join(lines)
