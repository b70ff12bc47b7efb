"""What the displays show, computed from ``Report.to_dict()`` alone. No UI imports.

Every view (text, HTML, widgets, plotly) reads these helpers, so the numbers a
terminal prints and the numbers a chart draws cannot disagree. Everything
takes the dict form (what the labextension sees too) or a Report.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from .. import fmt, report
from ..report import FIRST_RUN, cache_phrase, kernel_label, launches, time_shares

# Plotly's default qualitative colours: kernels get the same colour in SVG and plotly. Beyond ten kernels
# the colours repeat, so each kernel also gets a marker shape (and its name is drawn): never colour alone.
PALETTE = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a",
           "#19d3f3", "#ff6692", "#b6e880", "#ff97ff", "#fecb52")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "pentagon", "hexagon", "star", "triangle-down")
CUT_COLOUR = "#d62728"
EAGER_COLOUR = "#8c564b"  # calls that ran outside the trace (plain NumPy)
GREY = "#9e9e9e"
PHASES = ("guard", "trace", "plan", "compile", "run", "transfers")
MAX_GRAPH_NODES = 400  # beyond this a drawing teaches nothing; say so instead


def as_dict(report: Any) -> dict[str, Any]:
    return report if isinstance(report, dict) else report.to_dict()


def kernel_index(d: dict, name: str | None) -> int | None:
    names = [k["name"] for k in d.get("kernel_list", [])]
    return names.index(name) if name in names else None


def kernel_colour(d: dict, name: str | None) -> str:
    i = kernel_index(d, name)
    return GREY if i is None else PALETTE[i % len(PALETTE)]


def kernel_symbol(d: dict, name: str | None) -> str:
    """A marker shape per block of ten kernels: k0 and k10 share a colour, not a shape."""
    i = kernel_index(d, name)
    return "circle" if i is None else SYMBOLS[(i // len(PALETTE)) % len(SYMBOLS)]


# -- bytes ---------------------------------------------------------------------

def graph_nodes(d: dict) -> list[dict]:
    """``report.nodes`` without a truncation marker (a very long loop's graph may be cut short)."""
    return [n for n in d.get("nodes", []) if isinstance(n, dict) and "id" in n and "op" in n]


def graph_truncated(d: dict) -> bool:
    return bool(d.get("nodes_truncated")) or any(isinstance(n, dict) and n.get("truncated")
                                                 for n in d.get("nodes", []))


def node_nbytes(node: dict) -> int:
    dtype = node.get("dtype")
    if dtype in (None, "None"):
        return 0  # a weak Python scalar: baked into the kernel, never read from memory
    import numpy as np

    return int(np.dtype(dtype).itemsize * math.prod(node.get("shape") or []))


def eager_bytes(d: dict) -> int | None:
    """What eager NumPy moves: every op reads all its operands and writes its result, and the
    calls that ran outside the trace (``np.sort``: kind ``eager``) move what they moved here.
    None when the recorded graph was truncated, or a loop ran iterations ahead (``loops.py``, ``syncloops.py``:
    never traced, they are not in it): the estimate would be too low."""
    if graph_truncated(d) or d.get("loops"):
        return None
    nodes = {n["id"]: n for n in graph_nodes(d)}
    total = sum(k.get("bytes_read", 0) + k.get("bytes_written", 0) for k in d.get("kernel_list", [])
                if k.get("kind") == "eager")
    for n in nodes.values():
        if n["kind"] == "op":
            total += node_nbytes(n) + sum(node_nbytes(nodes[a]) for a in n["args"] if a in nodes)
    return total


def bytes_saved(d: dict) -> int | None:
    """Memory traffic fusion avoided (negative if the plan recomputes more than it saves)."""
    eager = eager_bytes(d)
    return None if eager is None else eager - d.get("bytes_moved", 0)


# -- headline ------------------------------------------------------------------

def backend_label(d: dict) -> str:
    """``cupy --dry-run``/``--emulate`` (their timings are the host's), else the backend, as in the summary."""
    return report.backend_label(d["backend"], d.get("options") or {})


def is_dry_run(d: dict) -> bool:
    return bool((d.get("options") or {}).get("dry_run"))


def headline(d: dict) -> dict[str, Any]:
    eager = eager_bytes(d)
    moved = d.get("bytes_moved", 0)
    return {
        "backend": backend_label(d), "ops": d["ops"], "kernels": d["kernels"],
        "title": f"{fmt.plural(d['ops'], 'op')} -> {fmt.plural(d['kernels'], 'kernel')}",
        "cache": cache_phrase(d) if d.get("cache", "off") != "off" else "", "total": d["times"].get("total", 0.0),
        "moved": moved, "eager": eager, "saved": None if eager is None else eager - moved,
        "error": d.get("error"), "status": status(d),
    }


def moved_text(h: dict) -> str:
    """``moved 32.0 MiB (eager NumPy 208 MiB, saved by fusion 176 MiB)``."""
    if h["eager"] is None:
        return f"moved {fmt.nbytes(h['moved'])}"
    return (f"moved {fmt.nbytes(h['moved'])} (eager NumPy {fmt.nbytes(h['eager'])}, "
            f"saved by fusion {fmt.nbytes(h['saved'])})")


def status(d: dict) -> str:
    """What kind of run this was, in a word the badge and the headline share: ``error``, ``fallbacks``,
    ``replayed``, ``clean`` (fused, no fallback), ``reference`` (the numpy backend), ``no-fuse``."""
    if d.get("error"):
        return "error"
    if d.get("fallbacks"):
        return "fallbacks"
    if d.get("cache") == "hit":
        return "replayed"
    if d.get("backend") == "numpy":
        return "reference"
    if (d.get("options") or {}).get("fuse") is False:
        return "no-fuse"
    return "clean"


# -- kernels -------------------------------------------------------------------

def compact_ops(ops: list[str]) -> str:
    """``['sin', 'power', 'cos', 'power']`` -> ``'sin, power ×2, cos'`` (first-seen order)."""
    return ", ".join(op if n == 1 else f"{op} ×{n}" for op, n in Counter(ops).items())


def ops_preview(ops: list[str], width: int = 48) -> str:
    """The compact op list cut at an op, never inside a name: ``'add, multiply, … (+3 more)'``."""
    items = [op if n == 1 else f"{op} ×{n}" for op, n in Counter(ops).items()]
    out: list[str] = []
    for i, item in enumerate(items):
        rest = len(items) - i - 1
        tail = f", … (+{rest} more)" if rest else ""
        if out and len(", ".join(out + [item]) + tail) > width:
            return ", ".join(out) + f", … (+{len(items) - i} more)"
        out.append(item)
    return ", ".join(out)


def source_line(d: dict, line: int | None) -> str:
    lines = (d.get("source") or "").splitlines()
    return lines[line - 1].strip() if line and 0 < line <= len(lines) else ""


def kernel_rows(d: dict, copy_rate: float | None = None) -> list[dict[str, Any]]:
    """One row per kernel-list entry (a loop's kernel launched N times is one row, ``launches`` N).
    ``copy_rate``: the machine's measured copy bandwidth (bytes/s), to say how close each kernel came."""
    rows = []
    for k in d.get("kernel_list", []):
        moved = k.get("bytes_read", 0) + k.get("bytes_written", 0)
        t = float(k.get("time") or 0.0)
        rate = moved / t if t > 0 and moved else None
        rows.append({
            "name": k["name"], "label": kernel_label(k), "launches": launches(k), "kind": k.get("kind", ""),
            "ops": compact_ops(k.get("ops", [])), "preview": ops_preview(k.get("ops", [])),
            "n_ops": len(k.get("ops", [])), "lines": list(k.get("lines", [])), "bytes_in": k.get("bytes_read", 0),
            "bytes_out": k.get("bytes_written", 0), "moved": moved, "time": t, "rate": rate,
            "of_copy": rate / copy_rate if rate and copy_rate else None,
            "floor": moved / copy_rate if copy_rate and moved else None,
            "source": k.get("source"),
            "language": k.get("language") or ("cuda" if d["backend"] == "cupy" else "python"),
            "failed_source": k.get("cuda_source"), "log": k.get("log") or "", "fallback": k.get("fallback"),
            "runs_on": k.get("runs_on"),  # "CUDA, emulated on the CPU" (--emulate): its time is the emulator's
        })
    return rows


def bound_text(row: dict) -> str:
    """How a kernel did against the copy bandwidth, in words a student can use."""
    share = row["of_copy"]
    if share is None:
        return ""
    if share >= 0.5:
        return "memory-bound: near the copy bandwidth"
    if row["time"] < 50e-6:
        return "too small to tell: launch overhead dominates"
    return "below the copy bandwidth: compute or overhead bound"


def no_source_note(d: dict, name: str) -> str:
    """Why kernel ``name`` shows no generated source: a fallback, a library call, or the NumPy backend."""
    k = next((k for k in d.get("kernel_list", []) if k["name"] == name), None) or {}
    ops = ", ".join(op if op.startswith("np.") else f"np.{op}" for op in k.get("ops", [])) or "none"
    if k.get("fallback"):
        how = k.get("route") or "plain NumPy"  # the cupy backend's library route (cupy.sort on the device, ...)
        return f"{name} has no generated source: it ran as {how} ({ops}) because {k['fallback']}."
    if d["backend"] == "numpy":
        return (f"{name} generated no source: the numpy backend is the reference, one plain NumPy call per op "
                f"({ops}). The compiled backends (cpu, cupy) show their kernel code here.")
    return f"{name} generated no source: the {d['backend']} backend ran it as plain NumPy calls ({ops})."


# -- time ----------------------------------------------------------------------

def phase_times(d: dict) -> list[tuple[str, float]]:
    """Seconds per phase (a first use's module loading first, when there was one). The cupy backend
    times each copy in its ledger; those copies happened while the plan ran, so they come out of
    ``run`` into ``transfers``."""
    t = dict(d.get("times", {}))
    transfers = sum(x.get("time", 0.0) for x in d.get("transfers", []))
    t["run"] = max(0.0, t.get("run", 0.0) - transfers)
    t["transfers"] = transfers
    phases = ([("load", float(t["load"]))] if t.get("load") else []) + [(p, float(t.get(p, 0.0))) for p in PHASES]
    return phases


def shares_text(d: dict) -> str:
    """``kernels 62% · overhead 38%`` of the cell's total time."""
    return " · ".join(f"{k} {fmt.percent(v)}" for k, v in time_shares(d).items())


def time_note(d: dict) -> str:
    """What the times mean, when it is not obvious."""
    notes = []
    if is_dry_run(d):
        notes.append("A dry run: kernels were compiled for the GPU, but the times are NumPy's on the host "
                     "(no GPU ran anything).")
    if d.get("times", {}).get("load"):
        notes.append(f"First use: {fmt.seconds(d['times']['load'])} went to loading "
                     f"{(d.get('options') or {}).get('loaded') or 'the backend'} (once per session).")
    return " ".join(notes)


# -- transfers -----------------------------------------------------------------

def transfer_rows(d: dict) -> list[dict[str, Any]]:
    return [{"direction": x.get("direction", "?"), "bytes": int(x.get("bytes", 0)),
             "name": x.get("name", "?"), "cause": x.get("cause", "")} for x in d.get("transfers", [])]


def transfers_note(d: dict) -> str:
    if d.get("transfers"):
        return (f"{fmt.plural(len(d['transfers']), 'transfer')}: host->device {fmt.nbytes(d.get('bytes_h2d', 0))}, "
                f"device->host {fmt.nbytes(d.get('bytes_d2h', 0))}")
    if d["backend"] == "cupy":
        return "Nothing moved: every input was already on the device and no result was read back."
    return (f"No transfers: the {d['backend']} backend computes in host memory, where the arrays already "
            "are. On the cupy backend every copy of an input to the GPU and every result read back "
            "(to print it, branch on it, or leave the cell) is listed here with its cause.")


# -- guards --------------------------------------------------------------------

_MISS = re.compile(r"^(?P<what>\S+?):?\s+(?P<old>.+?)\s*(?:->|→)\s*(?P<new>.+)$")


def guard_rows(d: dict) -> list[dict[str, Any]]:
    """The guards, the changed ones with their old and new value (parsed from ``miss_reasons``).

    A miss reason reads ``x.shape (1000,) -> (2000,)`` or ``x: dtype float64 -> float32``;
    the guard it names is the one that mentions ``x.shape`` (``x``). A changed value
    matching no guard still gets a row. A reason that names no change (``no plan
    recorded for this cell yet``) is not a changed guard: the headline says it.
    A change is expected behaviour (the cell is traced again, both plans are kept): ``changed``.
    """
    rows = [{"text": g, "changed": False, "old": None, "new": None, "reason": None} for g in d.get("guards", [])]
    for reason in dict.fromkeys(d.get("miss_reasons", [])):
        m = _MISS.match(reason.strip())
        if m is None:
            continue
        what = m["what"]
        row = next((r for r in rows if not r["changed"] and _mentions(r["text"], what)), None)
        if row is None:
            row = {"text": what, "changed": False, "old": None, "new": None, "reason": None}
            rows.append(row)
        row.update(changed=True, reason=reason, old=m["old"], new=m["new"])
    return rows


def _mentions(text: str, what: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(what)}(?![\w])", text) is not None


def guards_title(d: dict) -> str:
    changed = sum(g["changed"] for g in guard_rows(d))
    n = len(d.get("guards", []))
    return f"Guards ({n}{f', {changed} changed' if changed else ''})" if n or changed else "Guards"


def guards_note(d: dict) -> str:
    reasons = list(dict.fromkeys(d.get("miss_reasons") or []))
    if d.get("cache") == "unreplayable":
        return ("This cell is traced on every run, never replayed, because "
                + ("; ".join(reasons) if reasons else "its Python must run each time") + ".")
    if d.get("guards"):
        state = d.get("cache", "off")
        if state == "hit":
            lead = "Every guard held, so the recorded plan was replayed without tracing. "
        elif reasons and all(r.startswith(FIRST_RUN) for r in reasons):
            lead = "First run of this cell: its plan was recorded with these guards. "
        elif reasons:
            lead = (f"Something the cell reads changed ({'; '.join(reasons)}), so it was traced again; "
                    "the new plan is kept next to the old one. ")
        else:
            lead = ""
        return lead + "A re-run replays the plan while every guard holds."
    if d.get("cache", "off") == "off":
        return ("No guards: this run did not go through the plan cache, so nothing was recorded "
                "to check on a re-run. With the cache, each input the cell reads becomes a guard "
                "(its shape, dtype, a scalar's value) and a re-run that keeps them all replays the plan.")
    return "No guards: the plan depends on nothing outside the cell."
