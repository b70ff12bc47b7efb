"""The CuPy backend: fused CUDA kernels, device residency and the transfer ledger.

Rendering lives in ``cuda_render``; this module decides where every value
lives, compiles, caches and launches. The backends share one base class, so
they share every decision about what moves between host and device (and the
GPU and the emulator share the argument list of a launch, ``_launch_fused``):

* :class:`CupyBackend` runs on a GPU. Arrays read from the namespace are
  copied to the device the first time a kernel needs them (once per run);
  arrays the cell creates (``np.zeros``, ``np.arange``...) are made by the
  kernels on the device; results come back as NumPy arrays at the end of the
  cell (``--keep``: they stay on the device as CuPy arrays, and a later cell
  reading them transfers nothing). A value Python needs (``print``, ``if``,
  ``float``) is copied back at that line. ``matmul`` is cuBLAS (CuPy); an op
  no kernel can compute runs as CuPy's own function when CuPy has one, else
  as NumPy on the host, with its transfers. So does a NumPy call the tracer
  does not model (``np.sort``, ``.cumsum()``: ``DEVICE_TWINS``) when every
  array it reads is on the device already; otherwise NumPy runs it on the host.
* :class:`DryRunBackend` (``--dry-run``) needs no GPU: it renders the same
  kernels, compiles each one with NVRTC for ``sm_90`` (and the present
  device's architecture, if any) without launching, computes the values with
  the NumPy oracle, and keeps the ledger the real run would have kept.
* ``cuda_emulate.EmulatedBackend`` (``--emulate``) needs no GPU either: the dry
  run, with each kernel also compiled by the host C++ compiler and executed on
  the CPU as a GPU would launch it, so the values are the CUDA kernels' own.

Every transfer is one entry of ``report.transfers`` (direction, bytes,
variable name, cause, line); ``report.bytes_h2d``/``bytes_d2h`` are the sums.
Compiled modules are cached in memory by source text, and on disk by CuPy's
own kernel cache (``~/.cupy/kernel_cache``).
"""

from __future__ import annotations

import os
import re
import sys
import time
import weakref
from typing import Any

import numpy as np

from .. import views
from ..fuse import Kernel, Plan, reduce_axes
from ..ir import Node
from ..ops import CREATION, OPS, REDUCTIONS, family, render_key
from .cuda_render import SUPPORTED_DTYPES, CannotRender, CudaRendered, param_value, render
from .numpy import as_result, resolve, run_node

DRY_RUN_ARCHS = ("sm_90",)
NVRTC_OPTIONS = ("-std=c++14",)
GRID_PER_SM = 32  # grid-stride loops: this many blocks per multiprocessor at most


def strict() -> bool:
    """In tests a kernel that fails to render or compile is an error, not a quiet fallback."""
    return bool(os.environ.get("JUPYTER_FUSE_STRICT"))


class CudaCompileError(RuntimeError):
    """A rendered kernel did not compile (strict mode raises it; otherwise the kernel runs on the CPU)."""


# -- NVRTC, offline ---------------------------------------------------------------------------

_NVRTC_CACHE: dict[tuple[str, str], tuple[bool, str, float]] = {}


def nvrtc_compile(source: str, arch: str) -> tuple[bool, str, float]:
    """Compile ``source`` to a cubin for ``arch`` with NVRTC (no device needed): (ok, log, seconds)."""
    key = (source, arch)
    if key in _NVRTC_CACHE:
        ok, log, _ = _NVRTC_CACHE[key]
        return ok, log, 0.0
    from cupy.cuda import nvrtc

    t0 = time.perf_counter()
    prog = nvrtc.createProgram(source, "kernel.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(prog, [f"--gpu-architecture={arch}", *NVRTC_OPTIONS])
            nvrtc.getCUBIN(prog)
            ok = True
        except nvrtc.NVRTCError:
            ok = False
        log = nvrtc.getProgramLog(prog)
    finally:
        nvrtc.destroyProgram(prog)
    result = (ok, (log or "").strip(), time.perf_counter() - t0)
    _NVRTC_CACHE[key] = result
    return result


def device_arch() -> str | None:
    """``sm_XY`` of the present device, or None without one."""
    from . import cuda_available

    if not cuda_available():
        return None
    import cupy

    return f"sm_{cupy.cuda.Device().compute_capability}"


def compile_message(kernel: Kernel, source: str, log: str, arch: str, compiler: str = "NVRTC") -> str:
    """The error for a kernel that did not compile: its name, the offending lines, the log
    (NVRTC's ``kernel.cu(12): error`` and the host compiler's ``kernel.cu:12:5: error`` alike)."""
    lines = source.splitlines()
    found = re.findall(r"\.cu(?:\((\d+)\)|:(\d+):\d+): (?:catastrophic |fatal )?error", log)
    bad = sorted({int(a or b) for a, b in found})
    shown: list[str] = []
    for n in bad[:5]:
        for i in range(max(1, n - 1), min(len(lines), n + 1) + 1):
            mark = ">" if i == n else " "
            shown.append(f"  {mark}{i:4d} | {lines[i - 1]}")
        shown.append("")
    at = f" (cell lines {', '.join(map(str, kernel.lines))})" if kernel.lines else ""
    return (f"CUDA kernel {kernel.name} ({kernel.kind}: {', '.join(n.op for n in kernel.nodes)}){at} "
            f"failed to compile for {arch}:\n" + "\n".join(shown) + f"\n{compiler} log:\n" + log)


# -- what runs where --------------------------------------------------------------------------

def _cupy_module():
    try:
        import cupy

        return cupy
    except Exception:  # pragma: no cover - cupy is installed with the package's cuda/test extras
        return None


def single_route(node: Node) -> tuple[str, str]:
    """Where a node no fused kernel computes runs: ("cupy", what) or ("numpy", why)."""
    cp = _cupy_module()
    op = node.op
    if cp is None:
        return "numpy", "CuPy is not installed"
    if op == "matmul":
        return "cupy", "cupy.matmul (cuBLAS)"
    if op in ("cumsum", "cumprod"):
        return "cupy", f"cupy.{op}"  # (as its device twin: DEVICE_TWINS)
    if op == "einsum":
        return "numpy", "np.einsum on the host (CuPy's sums in another order)"
    if op in ("view", "reshape", "astype", "copy", "setitem"):
        return "cupy", f"CuPy {op}"
    if op in ("arange", "linspace"):
        return "numpy", f"np.{op} on the host (its values are exactly NumPy's)"
    if op in ("zeros", "ones", "full", "eye", "identity", "empty"):
        return "cupy", f"cupy.{op}"
    name = op if op in OPS else None
    if name is not None and hasattr(cp, name) and (op in REDUCTIONS or family(op) == "elementwise"):
        return "cupy", f"cupy.{name}"
    return "numpy", f"CuPy has no `{op}`"


# Untraced NumPy calls (functions and methods, ``.name``) that run as CuPy's own function when every
# array they read is on the device already, with the positional arguments (the arrays included) and
# keywords CuPy takes as NumPy does. Left out on purpose: what returns views (np.flip), scalars
# (np.median), may order ties differently (argsort) or mutates (.sort(), out=); np.unique (CuPy's
# NaN handling and inverse shapes vary by version) and np.convolve (CuPy uses an FFT for floats).
DEVICE_TWINS: dict[str, tuple[int, frozenset]] = {  # name: (positional arguments, keywords) CuPy takes
    "sort": (2, frozenset({"axis"})),
    "cumsum": (3, frozenset({"axis", "dtype"})), "cumprod": (3, frozenset({"axis", "dtype"})),
    ".cumsum": (3, frozenset({"axis", "dtype"})), ".cumprod": (3, frozenset({"axis", "dtype"})),
    "diff": (5, frozenset({"n", "axis", "prepend", "append"})),
    "tril": (2, frozenset({"k"})), "triu": (2, frozenset({"k"})), "outer": (2, frozenset()),
    "cross": (6, frozenset({"axisa", "axisb", "axisc", "axis"})),
    "bincount": (3, frozenset({"weights", "minlength"})), "searchsorted": (3, frozenset({"side"})),
    "roll": (3, frozenset({"shift", "axis"})), "repeat": (3, frozenset({"repeats", "axis"})),
    ".repeat": (3, frozenset({"repeats", "axis"})), "tile": (2, frozenset({"reps"})),
    "nonzero": (1, frozenset()), ".nonzero": (1, frozenset()), "argwhere": (1, frozenset()),
    "flatnonzero": (1, frozenset()),
}
# arguments CuPy wants in one form ("array" (or None): a device array; "same": one of the first's dtype,
# as CuPy's searchsorted compares raw values; "ints": ints or a tuple of them; "value": not an array)
_FORMS: dict[str, dict[tuple[int, str], str]] = {
    "searchsorted": {(1, "v"): "same"}, "outer": {(0, "a"): "array", (1, "b"): "array"},
    "bincount": {(1, "weights"): "array or None"}, "repeat": {(1, "repeats"): "ints"}, ".repeat": {(1, "repeats"): "ints"},
    "tile": {(1, "reps"): "value"}, "roll": {(1, "shift"): "value"},
}
_ACCUMULATES = frozenset({"cumsum", "cumprod", ".cumsum", ".cumprod"})  # given NumPy's dtype explicitly


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and not isinstance(x, np.generic)


def _in_form(x: Any, form: str, first: Any) -> bool:
    if form.startswith("array"):
        return _is_array(x) or form == "array or None" and x is None
    if form == "same":
        return _is_array(x) and _is_array(first) and x.dtype == first.dtype
    if form == "ints":
        return all(type(i) is int or isinstance(i, np.integer) for i in (x if type(x) is tuple else (x,)))
    return not _is_array(x)


def twin_takes(twin: str, args: tuple, kwargs: dict) -> bool:
    """Does CuPy's ``twin`` take these arguments as NumPy does? Arrays, scalars, None, strings and
    tuples of ints only (CuPy refuses lists where NumPy takes them), each in its ``_FORMS`` form."""
    spec = DEVICE_TWINS.get(twin)
    if spec is None or len(args) > spec[0] or not set(kwargs) <= spec[1]:
        return False
    for (position, keyword), form in _FORMS.get(twin, {}).items():
        x = args[position] if position < len(args) else kwargs.get(keyword)
        if not _in_form(x, form, args[0] if args else None):
            return False
    plain = (int, float, bool, str, type(None), np.generic, np.dtype, type)
    return all(hasattr(a, "shape") or isinstance(a, plain)
               or isinstance(a, tuple) and all(isinstance(i, int) for i in a)
               for a in list(args) + list(kwargs.values()))


def run_node_cupy(node: Node, args: list[Any]) -> Any:
    """One node with CuPy's own functions (the device twin of ``numpy.run_node``)."""
    import cupy as cp

    op, p = node.op, node.params
    if op == "view":
        return device_apply_chain(args[0], p)
    if op in REDUCTIONS:
        kw = {k: v for k, v in p if v is not None}
        kw.setdefault("axis", None)
        if isinstance(kw.get("dtype"), str):
            kw["dtype"] = np.dtype(kw["dtype"])
        out = getattr(cp, op)(args[0], **kw)
    elif op == "astype":
        out = args[0].astype(p[0])
    elif op == "copy":
        out = cp.array(args[0], copy=True, order="C")
    elif op == "setitem":  # (a write keeps a dense storage's layout: views.kept_layout)
        out = cp.array(args[0], copy=True, order="C" if node.layout is None else "K")
        device_apply_chain(out, p[0])[...] = args[1]
    elif op == "reshape":
        out = cp.ascontiguousarray(cp.reshape(args[0], p[0]))
    elif op == "matmul":
        out = cp.matmul(args[0], args[1])
    elif op in ("zeros", "ones", "empty"):
        out = cp.zeros(p[0], dtype=p[1]) if op != "ones" else cp.ones(p[0], dtype=p[1])
    elif op == "full":
        out = cp.full(p[0], p[1], dtype=p[2])
    elif op in ("eye", "identity"):
        out = cp.eye(p[0], p[1], k=p[2], dtype=p[3])
    else:
        kw = {k: (np.dtype(v) if k == "dtype" else v) for k, v in p} if p else {}
        out = getattr(cp, op)(*args, **kw)
    out = cp.asarray(out)
    if out.dtype != node.dtype:  # a CuPy promotion rule that differs from NumPy's: NumPy's wins
        out = out.astype(node.dtype)
    if out.shape != node.shape:
        raise AssertionError(f"jupyter_fuse bug: cupy {op} gave {out.shape}, traced as {node.shape}")
    return out if out.flags.c_contiguous else cp.ascontiguousarray(out)


def device_apply_chain(x: Any, chain: tuple) -> Any:
    """``views.apply_chain`` for CuPy arrays (NumPy decided at trace time that each step is a view)."""
    import cupy as cp

    for kind, p in chain:
        if kind == "getitem":
            x = x[views.index_from_key(p)]
        elif kind == "transpose":
            x = x.transpose(p)
        elif kind == "reshape":
            x = x.reshape(p)
        elif kind == "broadcast":
            x = cp.broadcast_to(x, p)
        elif kind == "asstrided":
            offset, shape, strides = p
            x = cp.ndarray(shape, x.dtype, memptr=x.data + offset, strides=strides)
        else:
            raise ValueError(f"unknown view kind {kind!r}")
    return x


def _is_cupy_array(x: Any) -> bool:
    return type(x).__module__.startswith("cupy") and hasattr(x, "__cuda_array_interface__")


def _root(x: Any) -> Any:
    """The array owning ``x``'s memory (NumPy's .base chain, through as_strided's wrapper)."""
    while True:
        base = getattr(x, "base", None)
        if base is not None and not hasattr(base, "shape") and hasattr(getattr(base, "base", None), "shape"):
            base = base.base
        if base is None or not hasattr(base, "shape"):
            return x
        x = base


def _probe_dtypes(func: Any, args: tuple, kwargs: dict) -> list[np.dtype] | None:
    """The dtypes NumPy's own function gives, from small host stand-ins of the arrays (each axis at
    most 3 long, empty ones empty: np.bincount's dtype depends on it); None if NumPy refuses them."""
    def probe(x: Any) -> Any:
        if isinstance(x, (tuple, list)):
            return type(x)(probe(i) for i in x)
        if isinstance(x, dict):
            return {k: probe(v) for k, v in x.items()}
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return np.ones(tuple(min(d, 3) for d in x.shape), x.dtype)
        return x

    try:
        out = func(*probe(args), **probe(kwargs))
    except Exception:  # noqa: BLE001 - on the host, NumPy itself decides (and raises its own error)
        return None
    return [np.asarray(o).dtype for o in (out if isinstance(out, tuple) else (out,))]


# -- the ledger -------------------------------------------------------------------------------

class Ledger:
    """Every host<->device copy of one run, with its cause. Real and dry runs feed it the same events."""

    def __init__(self, report: Any) -> None:
        self.report = report

    def add(self, direction: str, nbytes: int, name: str | None, cause: str, line: int | None,
            kernel: str | None = None, fallback: str | None = None, seconds: float | None = None) -> dict:
        entry = {"direction": direction, "bytes": int(nbytes), "name": name or "?", "cause": cause, "line": line}
        if seconds is not None:  # measured on the host around the copy (a dry run copies nothing: no time)
            entry["time"] = seconds
        if kernel:
            entry["kernel"] = kernel
        self.report.transfers.append(entry)
        if direction == "h2d":
            self.report.bytes_h2d += int(nbytes)
        else:
            self.report.bytes_d2h += int(nbytes)
        if fallback is not None:  # the fallback's own record lists its transfers too
            for fb in reversed(self.report.fallbacks):
                if fb.get("op") == fallback:
                    fb.setdefault("transfers", []).append(entry)
                    break
        return entry


# -- the shared logic -------------------------------------------------------------------------

class _CudaBase:
    name = "cupy"
    fuses = True
    dry_run = False

    def __init__(self, keep: bool = False) -> None:
        self.keep = keep
        self._supported: dict[tuple, str | None] = {}
        self._h2d: dict[int, tuple[Any, Any]] = {}  # id(host array) -> (host, device twin)
        self._host: dict[int, tuple[Any, Any]] = {}  # id(device value) -> (device, host copy)
        self._ledger: Ledger | None = None
        self._report: Any = None
        self._names: dict[int, str] = {}  # id(input array) -> its name, when no session knows it (a replay)
        self.context: Any = None  # the cell's answers for the ledger (``attach``); None in a replay

    # -- what can be fused -------------------------------------------------------------
    def supports(self, node: Node) -> str | None:
        dts = [a.dtype for a in node.args if a.dtype is not None] + [node.dtype]
        bad = next((d for d in dts if d not in SUPPORTED_DTYPES), None)
        if bad is not None:
            return (f"`{node.op}` on {bad} is not fused (CUDA kernels compile bool, ints and float32/64): "
                    f"it runs as {single_route(node)[1]}")
        if family(node.op) not in ("elementwise", "source", "reduce"):
            return None
        key = (node.op, node.params, node.dtype, node.shape == (),
               tuple((a.op == "const", a.dtype, type(a.params[1]) if a.op == "const" else None) for a in node.args),
               *render_key(node))
        if key not in self._supported:
            self._supported[key] = _render_check(node)
        return self._supported[key]

    # -- the ledger's events -----------------------------------------------------------------
    def _copy_time(self, t0: float) -> float | None:
        return None if self.dry_run else time.perf_counter() - t0

    def ledger(self, report: Any) -> Ledger:
        if self._ledger is None or self._ledger.report is not report:
            self._ledger = Ledger(report)
        return self._ledger

    def attach(self, context: Any) -> None:
        """The cell this backend runs for: ``context`` (``capture.CellContext``) answers the ledger's
        questions about it (``report``, ``input_name(host)``, ``holder(node)``, ``made_by(host)``)."""
        self.context = context

    def replaying(self, report: Any, names: dict[int, str]) -> None:
        """A plan-cache replay runs no session: the report and the inputs' names come from the replay."""
        self._report, self._names = report, names

    def _input_name(self, host: Any) -> str | None:
        if id(host) in self._names:
            return self._names[id(host)]
        return self.context.input_name(host) if self.context is not None else None

    def _holder(self, node: Node) -> str | None:
        """The cell variable whose array holds ``node`` (a fallback's result has no name of its own)."""
        return self.context.holder(node) if self.context is not None else None

    def _h2d_cause(self, node: Node, host: Any) -> tuple[str, str | None]:
        """Why a host value goes to the device: an input, or what a NumPy fallback made."""
        what = self.context.made_by(host) if self.context is not None else None
        if what is not None:
            if what.endswith("(a random draw)"):
                what = what[:-len(" (a random draw)")]
                return f"random draw ({what} ran on the host, so values and random state are NumPy's)", what
            return f"fallback to NumPy: the result of {what} goes back to the device", what
        if node.op != "input":
            return f"fallback to NumPy: the result of `{node.op}` goes back to the device", node.op
        return "input", None

    def device_value(self, node: Node, values: dict, report: Any, kernel: Kernel | None = None) -> Any:
        """The device copy of a value a kernel reads (views resolved on the device)."""
        if node.op == "view" and node not in values:  # through the storage: the real run copies whole inputs, once
            return self._view(self.device_value(node.args[0], values, report, kernel), node.params)
        value = values[node]
        if not isinstance(value, np.ndarray) or self._is_device(value):
            return value
        hit = self._h2d.get(id(value))
        if hit is None:  # once per run
            cause, fallback = self._h2d_cause(node, value)
            name = self._input_name(value) or self._holder(node) or fallback or node.op
            line = kernel.lines[0] if kernel is not None and kernel.lines else None
            t0 = time.perf_counter()
            hit = self._h2d[id(value)] = (value, self._copy_h2d(value))
            self.ledger(report).add("h2d", value.nbytes, name, cause, line, kernel.name if kernel else None,
                                    fallback, self._copy_time(t0))
        return hit[1]

    def to_host(self, value: Any, cause: str, name: str | None = None, line: int | None = None,
                like: Any = None, result: bool = False, fallback: str | None = None) -> Any:
        """A value Python needs, on the host (one d2h copy per device value per run)."""
        if not self._is_device(value):
            return np.asarray(value) if result and not isinstance(value, np.ndarray) else value
        if like is not None and self._is_device(like):
            return value  # an in-place update of an array that lives on the device: stays there
        if result and self.keep and like is None and value.ndim > 0:
            self._kept(value)
            return value  # --keep
        hit = self._host.get(id(value))
        if hit is not None:
            return hit[1]
        root = self._root_of(value)
        if root is not value and id(root) in self._host and self._derivable(root):
            host = self._derive(self._host[id(root)][1], root, value)
        else:
            report = self._report if self._report is not None else self.context.report
            t0 = time.perf_counter()
            host = self._copy_d2h(value)  # (synchronous: it waits for the kernels before it, as Python does)
            self.ledger(report).add("d2h", value.nbytes, name, cause, line, fallback=fallback,
                                    seconds=self._copy_time(t0))
        self._host[id(value)] = (value, host)
        return host

    # -- untraced calls -----------------------------------------------------------------------
    def device_call(self, func: Any, twin: str, args: tuple, kwargs: dict, arrays: list) -> Any:
        """An untraced NumPy call (``np.sort(y)``, ``y.cumsum()``) as CuPy's own function, when every
        array it reads (``arrays``, also in ``args``/``kwargs``) lives on the device already: running
        NumPy instead would copy them to the host and its result back. Returns the result, on the
        device, or None: then it runs as NumPy."""
        if not arrays or not twin_takes(twin, args, kwargs) or not all(self._is_device(a) for a in arrays):
            return None
        expected = _probe_dtypes(func, args, kwargs)
        if expected is None:
            return None
        if twin in _ACCUMULATES and kwargs.get("dtype") is None and (len(args) < 3 or args[2] is None):
            if len(args) == 3:  # accumulate in NumPy's dtype, not CuPy's
                args = args[:2] + (expected[0],)
            else:
                kwargs = dict(kwargs, dtype=expected[0])
        try:
            result = self._twin(func, twin, args, kwargs)
        except Exception:  # noqa: BLE001 - CuPy refused: NumPy on the host decides
            return None
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(expected) or any(
                not hasattr(r, "shape") or not r.ndim or r.dtype not in SUPPORTED_DTYPES
                or any(r is a for a in arrays) for r in results):
            return None  # a scalar, or an argument handed back (np.diff(y, n=0)): NumPy on the host
        results = tuple(self._contiguous(r if r.dtype == d else r.astype(d)) for r, d in zip(results, expected))
        for r in results:
            self._mark(r)
        return results if isinstance(result, tuple) else results[0]

    # -- running a plan ----------------------------------------------------------------------
    def execute(self, plan: Any, values: dict, report: Any) -> None:
        self._report = report
        for kernel, free in zip(plan.kernels, plan.free_after):
            if kernel.kind == "single":
                self._single(kernel, values, report, kernel.reason)
            else:
                self._fused(kernel, plan, values, report)
            for node in free:
                values.pop(node, None)
        for node in plan.keep:
            if node.op == "view" and node not in values and node.storage() in values:
                storage = self._storage_value(node, values)
                if self._is_device(storage):
                    values[node] = self._view(storage, _chain(node))
                else:
                    resolve(node, values)
        self._finish(report)

    def _storage_value(self, node: Node, values: dict) -> Any:
        return values[node.storage()]

    def _single(self, kernel: Kernel, values: dict, report: Any, reason: str) -> None:
        t0 = time.perf_counter()
        read, routes = 0, []
        for node in kernel.nodes:
            where, what = single_route(node)
            routes.append(what)
            if where == "cupy":
                args = [self.device_value(a, values, report, kernel) if a.op != "const" else values[a]
                        for a in node.args]
                values[node] = self._run_cupy(node, args, values)
            else:
                report.fallbacks.append({"line": kernel.lines[0] if kernel.lines else None, "op": node.op,
                                         "reason": f"{reason}; it runs as NumPy on the host ({what})",
                                         "transfers": []})
                args = [self.to_host(self._read(a, values), f"fallback to NumPy: `{node.op}` needs its argument",
                                     name=None, line=kernel.lines[0] if kernel.lines else None, fallback=node.op)
                        if a.op != "const" else values[a] for a in node.args]
                values[node] = as_result(node, run_node(node, args))
            read += sum(a.nbytes for a in node.args if a.op != "const" and a.dtype is not None)
        e = _entry(kernel, time.perf_counter() - t0, read, None, reason=reason, route=", ".join(routes))
        report.launched(e, e["time"])

    def _read(self, node: Node, values: dict) -> Any:
        """A value as it is stored (device or host), views resolved where the storage is."""
        if node.op == "view" and node not in values:
            base = self._read(node.args[0], values)
            return self._view(base, node.params) if self._is_device(base) else views.apply_chain(np.asarray(base), node.params)
        return values[node]

    def _fused(self, kernel: Kernel, plan: Any, values: dict, report: Any) -> None:
        try:
            rendered = render_cached(kernel)
        except CannotRender as e:
            if strict():
                raise
            return self._single(kernel, values, report, f"could not render as CUDA: {e}")
        entry = self._compile(kernel, rendered, report)
        if not entry["compiled"]:
            message = compile_message(kernel, rendered.source, entry["log"], entry.get("failed_arch", "?"),
                                      entry.get("compiler", "NVRTC"))
            if strict():
                raise CudaCompileError(message)
            print(f"jupyter_fuse: {message}\n{kernel.name} runs on the CPU backend instead; the cell completes "
                  "there.", file=sys.stderr)
            return self._on_cpu(kernel, plan, values, report, message, entry)
        self._run_fused(kernel, rendered, plan, values, report, entry)

    def _on_cpu(self, kernel: Kernel, plan: Any, values: dict, report: Any, message: str, entry: dict) -> None:
        """A kernel that did not compile runs on the CPU backend (NumPy when numba is missing)."""
        host: dict = {}
        for a in kernel.inputs:
            src = a.storage()
            host[src] = self.to_host(values[src], f"fallback to the CPU: {kernel.name} did not compile",
                                     line=kernel.lines[0] if kernel.lines else None)
        for n in kernel.nodes:
            for a in n.args:
                if a.op == "const":
                    host[a] = values[a]
        mini = Plan([kernel], [], set(kernel.outputs), [[]], plan.inplace)
        before = len(report.kernel_list)
        try:
            from .cpu import CpuBackend

            CpuBackend().execute(mini, host, report)
        except ImportError:
            from .numpy import NumpyBackend

            NumpyBackend().execute(mini, host, report)
        for e in report.kernel_list[before:]:
            e.update(fallback=f"the CUDA kernel did not compile; it ran on the CPU: {message.splitlines()[0]}",
                     cuda_source=entry["source"], compiled=False, log=entry["log"], language="python")
        for out in kernel.outputs:
            values[out] = host[out]
        report.fallbacks.append({"line": kernel.lines[0] if kernel.lines else None, "op": kernel.name,
                                 "reason": "the CUDA kernel did not compile; it ran on the CPU backend"})

    # -- a fused kernel's launch: on the GPU and in the emulator, one argument list -----------
    def _launch_fused(self, kernel: Kernel, r: CudaRendered, plan: Any, values: dict, report: Any,
                      entry: dict) -> None:
        """Launch ``r``'s entries with the arguments ``cuda_render._signature`` declares: the shape, the
        sizes, the scalars, each read with its element strides (a broadcast is stride 0), the outputs,
        the scatter target with its strides, a full reduction's partials. ``self._xp`` makes the
        arrays (CuPy on a GPU, NumPy in the emulator); ``_launch`` runs them."""
        xp = self._xp
        cfg = launch_config(kernel, r, self.sms)
        args: list[Any] = [np.int64(d) for d in kernel.shape]
        if r.mode == "ew":
            args.append(np.int64(cfg["n"]))
        else:
            args += [np.int64(cfg["nout"]), np.int64(cfg["nred"])]
            if r.mode == "full":
                args.append(np.int64(cfg["nparts"]))
        for node, dt in r.params:
            v = param_value(node, dt, values)
            args.append(np.uint8(bool(v)) if dt == np.bool_ else v)
        nbytes: dict[Node, int] = {}
        for node, shape in r.reads:
            arr = self.device_value(node, values, report, kernel)
            nbytes[node] = arr.nbytes
            b = xp.broadcast_to(arr, shape) if shape else arr.reshape(())
            args.append(b)
            args += [np.int64(st // b.itemsize) for st in b.strides]
        outs = [xp.empty(n.shape, n.dtype) for n in r.outputs]
        args += outs
        dest = None
        if r.scatter:
            node = next(n for n in kernel.nodes if n.op == "setitem")
            storage = self.device_value(node.args[0], values, report, kernel)
            storage = storage if node in plan.inplace else xp.array(storage, copy=True,
                                                                      order="C" if node.layout is None else "K")
            target = self._view(storage, node.params[0])
            args.append(target)
            args += [np.int64(st // target.itemsize) for st in target.strides]
            dest = (node, storage)
        if r.mode == "full":
            for red, acc in r.reductions:
                args.append(xp.empty(cfg["nparts"], acc))
                if red.op in ("argmax", "argmin"):
                    args.append(xp.empty(cfg["nparts"], np.int64))
        t0 = time.perf_counter()
        handle = self._launch(kernel, r, cfg, tuple(args))
        elapsed = time.perf_counter() - t0
        for node, arr in zip(r.outputs, outs):
            values[node] = arr
            self._mark(arr)
        if dest is not None:
            values[dest[0]] = dest[1]
            self._mark(dest[1])
        read, written = _kernel_bytes(kernel, r, nbytes)
        e = _entry(kernel, elapsed, read, r.source, written=written, mode=r.mode, entries=r.entries,
                   block=r.block, launch=cfg, **{k: v for k, v in entry.items() if k != "source"})
        self._launched(report.launched(e, e["time"]), handle)

    # -- backend-specific -------------------------------------------------------------------
    def _is_device(self, value: Any) -> bool:
        raise NotImplementedError

    def _launch(self, kernel: Kernel, r: CudaRendered, cfg: dict, args: tuple) -> Any:
        """Run ``r``'s entries on ``cfg["grids"]`` with ``args``; returns what ``_launched`` records."""
        raise NotImplementedError

    def _launched(self, e: dict, handle: Any) -> None:
        """The kernel's report entry ``e`` is made: add what the launch measured."""

    def _kept(self, value: Any) -> None:
        """``--keep`` leaves ``value`` on the device for later cells."""

    def _mark(self, value: Any) -> None:
        """``value`` was made on the device (the real run knows it from its type; the dry run records it)."""

    def _root_of(self, value: Any) -> Any:
        return _root(value)

    def _derivable(self, root: Any) -> bool:
        return True

    def _finish(self, report: Any) -> None:
        pass


def _chain(view: Node) -> tuple:
    """The view chain from the storage node to ``view`` (views of views concatenate)."""
    steps: list = []
    node = view
    while node.op == "view":
        steps[:0] = list(node.params)
        node = node.args[0]
    return tuple(steps)


def _entry(kernel: Kernel, elapsed: float, read: int, source: str | None, reason: str | None = None,
           written: int | None = None, **extra: Any) -> dict:
    return {
        "name": kernel.name, "kind": kernel.kind, "ops": [n.op for n in kernel.nodes], "lines": kernel.lines,
        "bytes_read": int(read),
        "bytes_written": int(written if written is not None else sum(n.nbytes for n in kernel.outputs)),
        "time": elapsed, "device_time": None, "source": source, **({"fallback": reason} if reason else {}), **extra,
    }


def _kernel_bytes(kernel: Kernel, r: CudaRendered, values_nbytes: dict[Node, int]) -> tuple[int, int]:
    read = sum(values_nbytes.get(n, n.nbytes) for n in dict.fromkeys(n for n, _ in r.reads))
    written = sum(n.nbytes for n in r.outputs)
    if r.scatter:
        node = next(n for n in kernel.nodes if n.op == "setitem")
        written += int(np.prod(node.params[1], dtype=np.int64)) * node.dtype.itemsize
    return read, written


def render_cached(kernel: Kernel) -> CudaRendered:
    return render(kernel)  # cheap; the compiled module is what is cached (by source text)


def launch_config(kernel: Kernel, r: CudaRendered, sms: int = 132) -> dict[str, Any]:
    """Sizes and grid of each launch: a pure function of the kernel (dry and real runs agree)."""
    shape = kernel.shape
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    cap = max(1, sms * GRID_PER_SM)
    if r.mode == "ew":
        return {"n": size, "grids": [min(cap, max(1, -(-size // r.block)))] if size else [0]}
    nred = int(np.prod([shape[d] for d in kernel.axes], dtype=np.int64)) if kernel.axes else 1
    nout = size // nred if nred else int(np.prod([shape[d] for d in range(len(shape)) if d not in kernel.axes],
                                                 dtype=np.int64))
    if r.mode == "block":
        return {"nout": nout, "nred": nred, "grids": [min(cap, nout) if nout else 0]}
    nparts = min(cap, max(1, -(-nred // r.block)))
    return {"nout": 1, "nred": nred, "nparts": nparts, "grids": [nparts, 1]}


# -- the dry run ------------------------------------------------------------------------------

# What `--dry-run --keep` cells left "on the device": NumPy arrays (the dry run computes on the host)
# that later dry runs read without a copy, as a real run reads the CuPy arrays --keep leaves. Weak:
# an array the user drops is forgotten (and the output buffer pool never recycles a weakly held one).
_KEPT: "weakref.WeakValueDictionary[int, np.ndarray]" = weakref.WeakValueDictionary()


class DryRunBackend(_CudaBase):
    """``--dry-run``: render and NVRTC-compile every kernel; compute with NumPy; keep the real run's ledger."""

    dry_run = True

    def __init__(self, keep: bool = False) -> None:
        super().__init__(keep)
        self._device_ids: dict[int, Any] = {}  # id(array) -> array: what the real run would hold on the device
        arch = device_arch()
        self.archs = list(DRY_RUN_ARCHS) + ([arch] if arch and arch not in DRY_RUN_ARCHS else [])

    def _is_device(self, value: Any) -> bool:
        if not isinstance(value, np.ndarray):
            return False
        root = _root(value)
        return id(root) in self._device_ids or _KEPT.get(id(root)) is root

    def _kept(self, value: Any) -> None:
        root = _root(value)
        _KEPT[id(root)] = root

    def _view(self, base: Any, chain: tuple) -> Any:
        return views.apply_chain(base, chain)

    def _copy_h2d(self, host: Any) -> Any:
        return host  # the dry run computes on the host: the copy is only recorded

    def _copy_d2h(self, value: Any) -> Any:
        return value

    def _derive(self, host_root: Any, root: Any, value: Any) -> Any:
        return value

    def _mark(self, value: Any) -> None:
        if isinstance(value, np.ndarray):
            self._device_ids[id(_root(value))] = _root(value)

    def _run_cupy(self, node: Node, args: list, values: dict) -> Any:
        out = as_result(node, run_node(node, [resolve(a, values) if a.op != "const" else values[a] for a in node.args]))
        if node.op == "view":
            return out
        self._mark(out)
        return out

    def _twin(self, func: Any, twin: str, args: tuple, kwargs: dict) -> Any:
        return func(*args, **kwargs)  # the dry run computes with NumPy; ``device_call`` marks the result

    def _contiguous(self, value: Any) -> Any:
        return np.ascontiguousarray(value)

    def _compile(self, kernel: Kernel, r: CudaRendered, report: Any) -> dict:
        logs, ok, seconds, failed = [], True, 0.0, None
        for arch in self.archs:
            good, log, dt = nvrtc_compile(r.source, arch)
            seconds += dt
            if log:
                logs.append(f"[{arch}] {log}")
            if not good and failed is None:
                failed, ok = arch, False
        report.times["compile"] += seconds
        entry = {"source": r.source, "compiled": ok, "log": "\n".join(logs), "archs": list(self.archs),
                 "compile_time": seconds}
        if failed:
            entry["failed_arch"] = failed
        return entry

    def _run_fused(self, kernel: Kernel, r: CudaRendered, plan: Any, values: dict, report: Any, entry: dict) -> None:
        for node, _ in r.reads:  # the ledger: what the real run would copy to the device
            self.device_value(node, values, report, kernel)
        t0 = time.perf_counter()
        mine = set(kernel.nodes)
        for node in kernel.nodes:
            args = [resolve(a, values) for a in node.args]
            values[node] = as_result(node, run_node(node, args))
        elapsed = time.perf_counter() - t0
        keep = set(kernel.outputs)
        for node in mine - keep:
            values.pop(node, None)
        for out in kernel.outputs:
            self._mark(values[out])
        read, written = _kernel_bytes(kernel, r, {})
        cfg = launch_config(kernel, r)
        e = _entry(kernel, elapsed, read, r.source, written=written, mode=r.mode, entries=r.entries,
                   block=r.block, launch=cfg, dry_run=True, **{k: v for k, v in entry.items() if k != "source"})
        report.launched(e, e["time"])


# -- the real thing ---------------------------------------------------------------------------

_MODULES: dict[str, Any] = {}


class CupyBackend(_CudaBase):
    """Fused kernels on the GPU, through CuPy."""

    def __init__(self, keep: bool = False) -> None:
        super().__init__(keep)
        import cupy

        self._cp = self._xp = cupy
        self.sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        self._events: list[tuple[dict, Any, Any]] = []
        self._roots: dict[int, tuple[Any, Any]] = {}  # id(device view) -> (view, root array)

    def _is_device(self, value: Any) -> bool:
        return isinstance(value, self._cp.ndarray)

    def _view(self, base: Any, chain: tuple) -> Any:
        v = device_apply_chain(base, chain)
        root = self._root_of(base)
        self._roots[id(v)] = (v, root)
        return v

    def _root_of(self, value: Any) -> Any:
        hit = self._roots.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        return _root(value)

    def _derivable(self, root: Any) -> bool:
        return bool(root.flags.c_contiguous)

    def _copy_h2d(self, host: Any) -> Any:
        axes = views.dense_axes(host)  # views read through byte offsets of the root: the same layout
        if axes is None:
            return self._cp.asarray(host)
        return self._cp.asarray(host.transpose(axes)).transpose(np.argsort(axes))

    def _copy_d2h(self, value: Any) -> Any:
        return self._cp.asnumpy(value)

    def _derive(self, host_root: Any, root: Any, value: Any) -> Any:
        offset = value.data.ptr - root.data.ptr
        return np.ndarray(value.shape, value.dtype, buffer=host_root, offset=offset, strides=value.strides)

    def is_device_array(self, value: Any) -> bool:
        """A CuPy array (``--keep`` of an earlier cell): capture makes it an input already on the device."""
        return isinstance(value, self._cp.ndarray)

    def apply_chain(self, base: Any, chain: tuple) -> Any:
        return device_apply_chain(base, chain) if self._is_device(base) else views.apply_chain(base, chain)

    def _twin(self, func: Any, twin: str, args: tuple, kwargs: dict) -> Any:
        if twin.startswith("."):  # a method: of the CuPy array
            return getattr(args[0], twin[1:])(*args[1:], **kwargs)
        return getattr(self._cp, twin)(*args, **kwargs)

    def _contiguous(self, value: Any) -> Any:
        return self._cp.ascontiguousarray(value)  # (cupy.cumsum along axis 0 returns a strided array)

    def _run_cupy(self, node: Node, args: list, values: dict) -> Any:
        return run_node_cupy(node, args)

    def _compile(self, kernel: Kernel, r: CudaRendered, report: Any) -> dict:
        entry = {"source": r.source, "compiled": True, "log": "", "archs": [device_arch()], "cache": "memory"}
        if r.source in _MODULES:
            return entry
        t0 = time.perf_counter()
        try:
            mod = self._cp.RawModule(code=r.source, options=NVRTC_OPTIONS)
            for name in r.entries:
                mod.get_function(name)  # compiles (or loads CuPy's disk cache) now, not at launch
        except Exception as e:  # cupy.cuda.compiler.CompileException carries NVRTC's log
            entry.update(compiled=False, log=str(getattr(e, "get_message", lambda: e)()) or str(e),
                         failed_arch=entry["archs"][0])
            return entry
        _MODULES[r.source] = mod
        entry["cache"] = "compiled"
        entry["compile_time"] = time.perf_counter() - t0
        report.times["compile"] += entry["compile_time"]
        return entry

    def _run_fused(self, kernel: Kernel, r: CudaRendered, plan: Any, values: dict, report: Any, entry: dict) -> None:
        self._launch_fused(kernel, r, plan, values, report, entry)

    def _launch(self, kernel: Kernel, r: CudaRendered, cfg: dict, args: tuple) -> tuple[Any, Any]:
        mod = _MODULES[r.source]
        start, end = self._cp.cuda.Event(), self._cp.cuda.Event()
        start.record()
        for name, grid in zip(r.entries, cfg["grids"]):
            if grid:
                mod.get_function(name)((grid,), (r.block,), args)
        end.record()
        return start, end

    def _launched(self, e: dict, events: tuple[Any, Any]) -> None:
        self._events.append((e, *events))

    def _finish(self, report: Any) -> None:
        """Device time per kernel from its CUDA events (one synchronization per plan)."""
        if not self._events:
            return
        self._events[-1][2].synchronize()
        for e, start, end in self._events:
            e["device_time"] = self._cp.cuda.get_elapsed_time(start, end) / 1e3
        self._events.clear()


def _render_check(node: Node) -> str | None:
    """None if a kernel holding just this node renders as CUDA; else why not."""
    kind = "reduce" if family(node.op) == "reduce" else "scatter" if node.op == "setitem" else "ew"
    shape = node.args[0].shape if kind == "reduce" else node.params[1] if kind == "scatter" else node.shape
    axes = reduce_axes(node) if kind == "reduce" else ()  # (as the partitioner: axis 0 of a 0-d array is none)
    k = Kernel("check", kind, shape, [node], axes=axes, phase={node: "red" if kind == "reduce" else "pro"},
               outputs=[node])
    try:
        render(k)
    except CannotRender as e:
        return f"{e}: it runs as {single_route(node)[1]}"
    return None


__all__ = ["CupyBackend", "DryRunBackend", "Ledger", "nvrtc_compile", "single_route", "launch_config",
           "compile_message", "device_apply_chain", "CREATION"]
