"""The partitioner: cut a graph into kernels, with a reason for every cut.

Backend-neutral: it sees only the IR and the op table's families. A kernel is
a connected group of nodes that one launch computes; ``outputs`` are the nodes
whose values leave the kernel (wanted by the caller, still held by a live
array, or read by a later kernel). Everything else inside a kernel is never
written to memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import Node, toposort
from .ops import family


@dataclass
class Kernel:
    name: str
    nodes: list[Node]  # the op nodes it computes, in dependency order
    inputs: list[Node]  # values it reads (inputs, earlier results, views of them)
    outputs: list[Node]  # values it writes
    lines: list[int] = field(default_factory=list)

    @property
    def family(self) -> str:
        fams = {family(n.op) for n in self.nodes}
        return "reduce" if "reduce" in fams else fams.pop() if len(fams) == 1 else "elementwise"


@dataclass
class Plan:
    kernels: list[Kernel]
    breaks: list[dict]
    keep: set[Node]  # values to keep after the plan ran (targets and live arrays)
    free_after: list[list[Node]]  # per kernel: values no longer needed after it


def partition(targets: list[Node], computed: dict, keep: set[Node], fuse: bool = True,
              lines: dict[Node, list[int]] | None = None) -> Plan:
    """Kernels computing ``targets`` from the values in ``computed``."""
    lines = lines or {}
    order = [n for n in toposort(targets, stop=computed) if n not in computed and n.kind == "op"]
    keep = set(targets) | keep
    keep |= {n.storage() for n in keep}
    kernels = []
    breaks = []
    for i, node in enumerate(order):
        ins = list(dict.fromkeys(node.args))
        kernels.append(Kernel(f"k{i}", [node], ins, [node], list(lines.get(node, []))))
        if i:
            breaks.append({"after": f"k{i - 1}", "line": (lines.get(node) or [None])[0],
                           "reason": "fusion is off: one kernel per op (eager NumPy)"})
    return Plan(kernels, breaks, keep, _free_after(kernels, keep))


def _free_after(kernels: list[Kernel], keep: set[Node]) -> list[list[Node]]:
    """For each kernel, the computed values whose last reader it was."""
    last: dict[Node, int] = {}
    for i, k in enumerate(kernels):
        for out in k.outputs:
            last.setdefault(out, i)
        for inp in k.inputs:
            base = inp.storage()
            if base in last:
                last[base] = i
    free: list[list[Node]] = [[] for _ in kernels]
    for node, i in last.items():
        if node not in keep:
            free[i].append(node)
    return free
