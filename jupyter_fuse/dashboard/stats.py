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

from .. import report

# Plotly's default qualitative colours: kernels get the same colour in SVG and plotly.
PALETTE = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a",
           "#19d3f3", "#ff6692", "#b6e880", "#ff97ff", "#fecb52")
CUT_COLOUR = "#d62728"
PHASES = ("guard", "trace", "plan", "compile", "run", "transfers")
MAX_GRAPH_NODES = 400  # beyond this a drawing teaches nothing; say so instead


def as_dict(report: Any) -> dict[str, Any]:
    return report if isinstance(report, dict) else report.to_dict()


def fmt_bytes(n: float) -> str:
    sign, n = ("-" if n < 0 else ""), abs(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{sign}{n:.0f} {unit}" if unit == "B" else f"{sign}{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # unreachable


def fmt_ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.2f} ms" if ms < 10 else f"{ms:.1f} ms" if ms < 1000 else f"{seconds:.2f} s"


def kernel_colour(d: dict, name: str | None) -> str:
    names = [k["name"] for k in d.get("kernel_list", [])]
    return PALETTE[names.index(name) % len(PALETTE)] if name in names else "#9e9e9e"


# -- bytes ---------------------------------------------------------------------

def node_nbytes(node: dict) -> int:
    dtype = node.get("dtype")
    if dtype in (None, "None"):
        return 0  # a weak Python scalar: baked into the kernel, never read from memory
    import numpy as np

    return int(np.dtype(dtype).itemsize * math.prod(node.get("shape") or []))


def eager_bytes(d: dict) -> int:
    """What eager NumPy moves: every op reads all its operands and writes its result, and the
    calls that ran outside the trace (``np.sort``: kind ``eager``) move what they moved here."""
    nodes = {n["id"]: n for n in d.get("nodes", [])}
    total = sum(k.get("bytes_read", 0) + k.get("bytes_written", 0) for k in d.get("kernel_list", [])
                if k.get("kind") == "eager")
    for n in nodes.values():
        if n["kind"] == "op":
            total += node_nbytes(n) + sum(node_nbytes(nodes[a]) for a in n["args"] if a in nodes)
    return total


def bytes_saved(d: dict) -> int:
    """Memory traffic fusion avoided (negative if the plan recomputes more than it saves)."""
    return eager_bytes(d) - d.get("bytes_moved", 0)


# -- headline ------------------------------------------------------------------

def cache_text(d: dict) -> str:
    state = d.get("cache", "off")
    why = "; ".join(d.get("miss_reasons") or [])
    if state == "off":
        return "cache off"
    if state == "hit":
        return "cache hit (plan replayed)"
    if state == "unreplayable":
        return "never replayed" + (f": {why}" if why else "")
    return f"cache {state}" + (f": {why}" if why else "")


def backend_label(d: dict) -> str:
    """``cupy --dry-run``/``--emulate`` (their timings are the host's), else the backend, as in the summary."""
    return report.backend_label(d["backend"], d.get("options") or {})


def headline(d: dict) -> dict[str, Any]:
    eager = eager_bytes(d)
    return {
        "backend": backend_label(d), "ops": d["ops"], "kernels": d["kernels"],
        "title": f"{d['ops']} ops -> {d['kernels']} kernel{'s' * (d['kernels'] != 1)}",
        "cache": cache_text(d), "total": d["times"].get("total", 0.0),
        "moved": d.get("bytes_moved", 0), "eager": eager, "saved": eager - d.get("bytes_moved", 0),
        "error": d.get("error"),
    }


# -- kernels -------------------------------------------------------------------

def compact_ops(ops: list[str]) -> str:
    """``['sin', 'power', 'cos', 'power']`` -> ``'sin, power x2, cos'`` (first-seen order)."""
    return ", ".join(op if n == 1 else f"{op} x{n}" for op, n in Counter(ops).items())


def source_line(d: dict, line: int | None) -> str:
    lines = (d.get("source") or "").splitlines()
    return lines[line - 1].strip() if line and 0 < line <= len(lines) else ""


def kernel_rows(d: dict) -> list[dict[str, Any]]:
    return [{
        "name": k["name"], "ops": compact_ops(k.get("ops", [])), "n_ops": len(k.get("ops", [])),
        "lines": list(k.get("lines", [])), "bytes_in": k.get("bytes_read", 0),
        "bytes_out": k.get("bytes_written", 0), "time": k.get("time", 0.0), "source": k.get("source"),
        "language": k.get("language") or ("cuda" if d["backend"] == "cupy" else "python"),
        "failed_source": k.get("cuda_source"), "log": k.get("log") or "", "fallback": k.get("fallback"),
        "runs_on": k.get("runs_on"),  # "CUDA, emulated on the CPU" (--emulate): its time is the emulator's
    } for k in d.get("kernel_list", [])]


def no_source_note(d: dict, name: str) -> str:
    """Why kernel ``name`` shows no generated source: a fallback, a library call, or the NumPy backend."""
    k = next((k for k in d.get("kernel_list", []) if k["name"] == name), None) or {}
    ops = ", ".join(op if op.startswith("np.") else f"np.{op}" for op in k.get("ops", [])) or "none"
    if k.get("fallback"):
        how = k.get("route") or "plain NumPy"  # the cupy backend's library route (cupy.sort on the device, ...)
        return f"{name} has no generated source: it ran as {how} ({ops}) because {k['fallback']}."
    if d["backend"] == "numpy":
        return (f"{name} generated no source: the numpy backend runs it as plain NumPy calls ({ops}). "
                "Compiled backends (cpu, cupy) show their kernel code here.")
    return f"{name} generated no source: the {d['backend']} backend ran it as plain NumPy calls ({ops})."


# -- time ----------------------------------------------------------------------

def phase_times(d: dict) -> list[tuple[str, float]]:
    """Seconds per phase. The cupy backend times each copy in its ledger; those copies happened
    while the plan ran, so they come out of ``run`` into ``transfers``."""
    t = dict(d.get("times", {}))
    transfers = sum(x.get("time", 0.0) for x in d.get("transfers", []))
    t["run"] = max(0.0, t.get("run", 0.0) - transfers)
    t["transfers"] = transfers
    return [(p, float(t.get(p, 0.0))) for p in PHASES]


# -- transfers -----------------------------------------------------------------

def transfer_rows(d: dict) -> list[dict[str, Any]]:
    return [{"direction": x.get("direction", "?"), "bytes": int(x.get("bytes", 0)),
             "name": x.get("name", "?"), "cause": x.get("cause", "")} for x in d.get("transfers", [])]


def transfers_note(d: dict) -> str:
    if d.get("transfers"):
        return (f"{len(d['transfers'])} transfers: host->device {fmt_bytes(d.get('bytes_h2d', 0))}, "
                f"device->host {fmt_bytes(d.get('bytes_d2h', 0))}")
    if d["backend"] == "cupy":
        return "Nothing moved: every input was already on the device and no result was read back."
    return (f"No transfers: the {d['backend']} backend computes in host memory, where the arrays already "
            "are. On the cupy backend every copy of an input to the GPU and every result read back "
            "(to print it, branch on it, or leave the cell) is listed here with its cause.")


# -- guards --------------------------------------------------------------------

_MISS = re.compile(r"^(?P<what>\S+?):?\s+(?P<old>.+?)\s*(?:->|→)\s*(?P<new>.+)$")


def guard_rows(d: dict) -> list[dict[str, Any]]:
    """The guards, the failed ones marked with old and new value (parsed from ``miss_reasons``).

    A miss reason reads ``x.shape (1000,) -> (2000,)`` or ``x: dtype float64 -> float32``;
    the guard it names is the one that mentions ``x.shape`` (``x``). A changed value
    matching no guard still gets a row. A reason that names no change (``no plan
    recorded for this cell yet``) is not a failed guard: the headline shows it.
    """
    rows = [{"text": g, "failed": False, "old": None, "new": None, "reason": None} for g in d.get("guards", [])]
    for reason in d.get("miss_reasons", []):
        m = _MISS.match(reason.strip())
        if m is None:
            continue
        what = m["what"]
        row = next((r for r in rows if not r["failed"] and _mentions(r["text"], what)), None)
        if row is None:
            row = {"text": what, "failed": False, "old": None, "new": None, "reason": None}
            rows.append(row)
        row.update(failed=True, reason=reason, old=m["old"], new=m["new"])
    return rows


def _mentions(text: str, what: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(what)}(?![\w])", text) is not None


def guards_note(d: dict) -> str:
    if d.get("cache") == "unreplayable":
        return ("This cell is traced on every run, never replayed: "
                f"{'; '.join(d.get('miss_reasons') or ['its Python must run each time'])}.")
    if d.get("guards"):
        state, why = d.get("cache", "off"), "; ".join(d.get("miss_reasons") or [])
        lead = ("Every guard held: the recorded plan was replayed. " if state == "hit" else
                f"The cell was traced ({why}). " if why else "")
        return lead + "The plan is replayed only while every guard holds."
    if d.get("cache", "off") == "off":
        return ("No guards: this run did not go through the plan cache, so nothing was recorded "
                "to check on a re-run. With the cache, each input the cell reads becomes a guard "
                "(its shape, dtype, a scalar's value) and a re-run that keeps them all replays the plan.")
    return "No guards: the plan depends on nothing outside the cell."
