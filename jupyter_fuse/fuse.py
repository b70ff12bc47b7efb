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
              lines: dict[Node, list[int]] | None = None, implicit: set[Node] | None = None) -> Plan:
    """Kernels computing ``targets`` from the values in ``computed``.

    ``implicit`` nodes are part of the eager op that made their argument (the
    cast and the write of ``a += b``): they never count as kernels of their own.
    """
    lines = lines or {}
    implicit = implicit or set()
    order = [n for n in toposort(targets, stop=computed) if n not in computed and n.kind == "op"]
    keep = set(targets) | keep
    keep |= {n.storage() for n in keep}
    kernels: list[Kernel] = []
    owner: dict[Node, Kernel] = {}
    breaks = []
    for node in order:
        producer = _implicit_producer(node, implicit, owner)
        if producer is not None:
            producer.nodes.append(node)
            producer.inputs.extend(a for a in node.args if a not in owner or owner[a] is not producer)
            producer.outputs = [node]
            owner[node] = producer
            continue
        if kernels:
            breaks.append({"from": kernels[-1].name, "to": f"k{len(kernels)}",
                           "line": (lines.get(node) or [None])[0],
                           "reason": "fusion is off: one kernel per op (eager NumPy)"})
        k = Kernel(f"k{len(kernels)}", [node], list(dict.fromkeys(node.args)), [node], list(lines.get(node, [])))
        kernels.append(k)
        owner[node] = k
    for k in kernels:  # a kernel's intermediate values are outputs only if someone needs them
        k.inputs = list(dict.fromkeys(a for a in k.inputs if owner.get(a.storage()) is not k))
    return Plan(kernels, breaks, keep, _free_after(kernels, keep))


def _implicit_producer(node: Node, implicit: set[Node], owner: dict[Node, Kernel]) -> Kernel | None:
    if node not in implicit:
        return None
    arg = node.args[-1] if node.op == "setitem" else node.args[0]
    return owner.get(arg.storage())


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
