"""The NumPy backend: the oracle. Every op node is one NumPy call, one "kernel".

This *is* eager NumPy, measured: the same calls a plain cell would make, so its
kernel count is what fusion is compared against. ``run_node`` is also the
reference interpreter the compiled backends fall back to for single ops.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from .. import views
from ..ir import Node
from ..ops import CREATION, OPS, REDUCTIONS


def run_node(node: Node, args: list[Any], in_place: bool = False) -> Any:
    """Compute one node from its argument values with NumPy. ``in_place``: an assignment writes into its
    destination's value (which nothing reads afterwards) instead of a copy of it."""
    op, p = node.op, node.params
    if op == "view":
        return views.apply_chain(np.asarray(args[0]), p)
    if op in REDUCTIONS:
        kw = {k: v for k, v in p if v is not None}
        kw.setdefault("axis", None)
        return REDUCTIONS[op](args[0], **kw)
    if op == "astype":
        return np.asarray(args[0]).astype(p[0])
    if op == "copy":
        return np.array(args[0], copy=True, order="C")
    if op == "setitem":  # (a write keeps a dense storage's layout: views.kept_layout)
        out = args[0] if in_place and args[0].flags.writeable else np.array(args[0], copy=True, order="C" if node.layout is None else "K")
        views.apply_chain(out, p[0])[...] = args[1]
        return out
    if op == "reshape":
        return np.reshape(args[0], p[0]).copy(order="C")
    if op == "matmul":
        return np.matmul(args[0], args[1])
    if op in CREATION:
        return _create(op, p)
    info = OPS[op]
    kw = {k: v for k, v in p} if p else {}
    if kw.pop("scalar_math", False):  # NumPy scalars' ``**``: C's pow (the ufunc squares for 2.0)
        base, exp = (a[()] if isinstance(a, np.ndarray) else a for a in args)  # (a Python number stays weak)
        return np.asarray(base ** exp)
    return info.fn(*args, **kw)


def _create(op: str, p: tuple) -> np.ndarray:
    if op in ("zeros", "ones", "empty"):
        return CREATION[op](p[0], dtype=p[1])
    if op == "full":
        return np.full(p[0], p[1], dtype=p[2])
    if op == "arange":
        return np.arange(p[0], p[1], p[2], dtype=p[3])
    if op == "linspace":
        return np.linspace(p[0], p[1], num=p[2], endpoint=p[3], dtype=p[4])
    if op in ("eye", "identity"):
        return np.eye(p[0], p[1], k=p[2], dtype=p[3])
    raise ValueError(f"no creation rule for {op}")


def as_result(node: Node, value: Any) -> np.ndarray:
    """Results are C-contiguous arrays of exactly the node's dtype and shape (or have its layout)."""
    value = np.asarray(value)
    if value.shape != node.shape or value.dtype != node.dtype:  # a tracer rule disagrees with NumPy
        raise AssertionError(f"jupyter_fuse bug: {node.op} gave {value.dtype}{value.shape}, "
                             f"traced as {node.dtype}{node.shape}")
    if node.layout is not None and value.strides == node.layout[1]:
        return value
    if value.flags.c_contiguous and (1 not in value.shape and 0 not in value.shape  # (only then can strides differ)
                                     or value.strides == views.c_strides(node.shape, value.itemsize)):
        return value
    return np.array(value, order="C")  # (NumPy's order='K' can give a size-1 axis another stride: C's here)


def resolve(node: Node, values: dict) -> Any:
    """A value, computing views of available storage on the way."""
    try:
        return values[node]
    except KeyError:
        if node.op != "view":
            raise
        value = values[node] = views.apply_chain(np.asarray(resolve(node.args[0], values)), node.params)
        return value


def execute_plan(plan: Any, values: dict, report: Any, run_kernel: Callable[[Any], None]) -> None:
    """The loop every backend shares: each kernel in order, values freed after their last
    reader, views of kept values made real (the session reports the plan's breaks)."""
    for kernel, free in zip(plan.kernels, plan.free_after):
        run_kernel(kernel)
        for node in free:
            values.pop(node, None)
    for node in plan.keep:
        if node.op == "view" and node not in values and node.storage() in values:
            resolve(node, values)


def run_on_numpy(kernel: Any, values: dict, report: Any, reason: str | None = None, inplace: Any = ()) -> None:
    """A kernel's nodes one NumPy call each; ``reason`` says why when another backend does this;
    ``inplace``: the plan's assignments that may write into their destination (``Plan.inplace``)."""
    numpy_launcher(kernel, reason, inplace)(values, report)


def numpy_launcher(kernel: Any, reason: str | None, inplace: Any = (), source: str | None = None) -> Callable[[dict, Any], None]:
    """``run_on_numpy`` for a kernel launched again and again (a replay's matmul every step): the
    report entry is made at its first launch only. ``source``: the kernel's own code, shown while it
    compiles (NumPy runs it meanwhile)."""
    entry: dict = {}
    owned: Any = None  # (worked out at the first launch: a compiled kernel's fallback may never run)
    drops: list[list[Node]] = []

    def launch(values: dict, report: Any) -> None:
        nonlocal owned
        t0 = time.perf_counter()
        read = 0
        if owned is None:
            owned = _written_in_place(kernel.nodes, inplace) if inplace else frozenset()
            drops.extend(_dropped_after(kernel))
        for node, drop in zip(kernel.nodes, drops):
            args = [resolve(a, values) for a in node.args]
            if not entry:
                read += sum(a.nbytes for a in args if isinstance(a, np.ndarray))
            values[node] = as_result(node, run_node(node, args, node in owned))
            for done in drop:
                values.pop(done, None)
        if not entry:
            entry.update(kernel_entry(kernel, 0.0, read, source, reason=reason))
        entry["name"] = kernel.name  # (a plan shared between cells is named in each cell anew)
        report.launched(entry, time.perf_counter() - t0)

    return launch


def _dropped_after(kernel: Any) -> list[list[Node]]:
    """Per op of the kernel, its values that no later op reads and nothing outside it needs (not an output):
    run op by op, a fused chain would otherwise hold every intermediate array at once (a 20-step Mandelbrot
    on a million points, run on NumPy while numba compiles it: about a hundred 16 MB arrays at once)."""
    inside, needed = set(kernel.nodes), set(kernel.outputs)
    last: dict[Node, int] = {}
    for i, n in enumerate(kernel.nodes):
        for a in n.args:
            src = a._base or a
            if src in inside and src not in needed:
                last[src] = i
    drops: list[list[Node]] = [[] for _ in kernel.nodes]
    for n, i in last.items():
        drops[i].append(n)
    return drops


def _written_in_place(nodes: list[Node], inplace: Any) -> frozenset:
    """The assignments among ``nodes`` that may write into their destination as NumPy would, without a
    copy of it (a row sweep ``u[i, :] = u[i, :] - a * u[i - 1, :]`` would copy all of ``u`` per row): the
    plan allows it (nothing outside the kernel reads the old destination) and, run op by op, no later op
    of the kernel reads it either (in a compiled kernel each element is read before it is written)."""
    owned, last_read = [], {}
    for i, n in enumerate(nodes):
        for a in n.args:
            last_read[a._base or a] = i
    for i, n in enumerate(nodes):
        if n.op == "setitem" and n in inplace and last_read.get(n.args[0], i) <= i:
            owned.append(n)
    return frozenset(owned)


def kernel_entry(kernel: Any, elapsed: float, read: int, source: str | None, reason: str | None = None,
                 written: int | None = None, **extra: Any) -> dict:
    """One ``report.kernel_list`` entry."""
    return {
        "name": kernel.name, "kind": kernel.kind, "ops": [n.op for n in kernel.nodes], "lines": kernel.lines,
        "bytes_read": int(read),
        "bytes_written": int(written if written is not None else sum(n.nbytes for n in kernel.outputs)),
        "time": elapsed, "source": source, **({"fallback": reason} if reason else {}), **extra,
    }


class NumpyBackend:
    name = "numpy"
    fuses = False  # the oracle is eager NumPy: one kernel per op, whatever the plan

    def supports(self, node: Node) -> str | None:
        return None

    def execute(self, plan: Any, values: dict, report: Any) -> None:
        execute_plan(plan, values, report, lambda kernel: run_on_numpy(kernel, values, report, inplace=plan.inplace))
