"""A replay compiled as one program: the tape's kernels in order, loops rolled back up.

A replay walks its tape (``cache.Tape``) in Python: one launch per kernel, a dict of values
between them. Here the tape's kernels become *instructions* over numbered variables (one per
array a kernel writes, SSA: written once), runs of them become *blocks* that a backend compiles
into one function (``backends/cpu_program.py``: one numba function), and a block whose
instructions repeat — the same kernels, their arrays rotating from one iteration to the next, as a
time-stepping loop's do — holds a loop of ``T`` iterations around one copy of the body instead of
``T`` copies. What Python needs to see (a sync's value, a print, a call that runs outside the
trace) is read from the block's outputs after it ran, or ends the block.

Backend-neutral: a backend that can compile programs has ``call_spec(kernel, plan)`` (how a
program calls one kernel, or None) and ``compile_program(source, kernels)``; this module decides
what goes in a block and how it loops, the backend's ``emit`` writes it.
"""

from __future__ import annotations

import contextlib
import functools
import re

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import views
from .ir import Node
from .views import c_strides

MIN_REPEATS = 3  # a stretch repeating fewer times stays unrolled
# A program costs a numba compile (0.3 s for one kernel, seconds for a long loop body) and saves the
# launches' Python (~15 us each) on every replay: a tape of a few kernels replays kernel by kernel.
MIN_LAUNCHES = 32
MAX_PERIOD = 4096  # units in a loop body we look for
# A value every iteration leaves for Python (a float() of a residual each step, checked after the
# program ran) is kept in a history array, one row per iteration, when a row is this small; a larger
# one only when every iteration's is kept (``rows.append(u)``: the memory NumPy's run holds too).
HISTORY_MAX = 64
# numba's compile time grows with the calls a function holds (about 10 ms each): a tape that does
# not roll up (each step reads another slice) stays kernel by kernel past this many calls
MAX_CALLS = 256
# ... and faster than linearly with the arrays it takes, returns and puts in tuples (one per step of
# a list of values the cell keeps): past this many the tape stays kernel by kernel too
MAX_ARRAYS = 128


class NotCompiled(Exception):
    """Why a tape replays kernel by kernel (said in the report's ``program_note``)."""


@dataclass
class Instr:
    """One kernel launch: its call (the backend's spec), the variables it reads (in the order of the
    spec's reads, then a destination's storage) and writes (outputs, then the destination)."""
    spec: Any
    name: str  # the kernel's name in the cell's report
    ins: list[int]
    outs: list[int]
    kid: int = -1  # its key's number in its block (``_kid``)
    # its scalar arguments where they are not the spec's: a plan serves every step of its structure,
    # whatever the values of its float constants (``ops.const_key``), and this step passes its own
    scalars: tuple | None = None

    @functools.cached_property
    def params(self) -> tuple:
        """The call's scalar arguments, in order: its sizes (``const``), scalars (``param``), the strides
        of its reads and destination and the shapes of its outputs (the program allocates them). A loop's
        iterations may pass others to the same kernel (``1 - beta1 ** t``: a coefficient that changes every
        step; ``s[2 * d::d]``: a slice of another length and stride each step; ``V[:i + 1]``: a shorter
        result each step): ``_tables`` tables those that differ, and the program reads them per step."""
        floats = iter(self.scalars if self.scalars is not None else ())
        out: list[Any] = []
        for a in self.spec.args:
            kind = a[0]
            if kind == "const":
                out.append(np.int64(a[1]))
            elif kind == "param":
                out.append(next(floats, a[1]))
            elif kind == "read":
                out += [np.int64(x) for x in a[2][1:]]
            elif kind == "out":
                out += [np.int64(d) for d in a[1].shape]
            elif kind == "dst":
                out += [np.int64(x) for x in a[4][1:]]
        return tuple(out)


@dataclass
class Loop:
    """``count`` iterations of ``body``, one unit of a block like an instruction, with ``ins`` (the
    variables it reads from before it) and ``outs`` (what its last iteration leaves for after it).

    Each body unit's reads are ``("in", j, q)`` (output ``q`` of body unit ``j``, this iteration),
    ``("prev", j, q)`` (the same, last iteration: a carried variable, first set from ``ins``), or
    ``("ext", i)`` (``ins[i]``, the same every iteration), or ``("each", (i0, i1, ...))`` (``ins[i_t]`` at
    iteration ``t``: each step copies its own value, ``np.array(values)``). ``carried`` lists the (j, q) slots that
    pass between iterations or out of the loop, with the index in ``ins`` they start from (-1: only
    read after the loop); ``outs`` are the slots read after it, in order."""
    count: int
    body: list[tuple[Any, list]]  # (Instr or Loop, its reads)
    carried: dict[tuple[int, int], int]
    ins: list[int]
    outs: list[int]
    out_slots: list[tuple[int, int]]
    key: tuple = ()
    # slots every iteration leaves for after the loop: (slot, history variable, row size, dtype); each
    # history is an output too, after ``out_slots``' (``outs`` lists it), and the variables the
    # iterations wrote there are rows of it (``aliases``)
    history: list[tuple[tuple[int, int], int, int, np.dtype]] = field(default_factory=list)
    aliases: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    # where each body unit's reads and destination start (``offsets``), at the first iteration, and
    # how far they move per iteration: a loop over columns or shifted windows, not only time steps
    base: tuple[int, ...] = ()
    deltas: list[tuple[int, ...]] = field(default_factory=list)
    # (body unit, its scalar argument) -> the argument's value at each iteration, where they differ
    tables: dict[tuple[int, int], tuple] = field(default_factory=dict)
    # (body unit, its offset) -> how far it is from the first iteration's at each iteration, where it
    # does not move by one step (a slice or element a Python index from data picks)
    moved: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)
    kid: int = -1

    @functools.cached_property
    def params(self) -> tuple:
        """Its body's scalar arguments, in order (an instruction's, then an inner loop's own, flattened): the
        value of each, or where a table holds it, the table (a value per iteration). Not in its key: a loop
        around it tables those that differ between its runs (``_tables``; an RK4 step's ``np.cos(w * t)``
        inside a loop of ten steps inside a loop of decades reads a table of decade x step)."""
        return tuple(self.tables.get((j, q), v) for j, (u, _) in enumerate(self.body) for q, v in enumerate(u.params))


@dataclass
class Block:
    """A run of instructions compiled as one function."""
    parts: list[Any] = field(default_factory=list)  # Instr, or Loop
    inputs: list[tuple[int, Node]] = field(default_factory=list)  # variables read from the replay's values
    outputs: list[tuple[int, list[Node]]] = field(default_factory=list)  # variables the values get back
    params: list[Any] = field(default_factory=list)  # the kernels' scalar arguments, in order
    vars: dict[int, tuple[np.dtype, int]] = field(default_factory=dict)  # variable -> (dtype, size)
    # a variable rolled into a loop's history -> (history variable, offset, size): where its value is
    aliases: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    returns: list[int] = field(default_factory=list)  # the variables the compiled function returns
    picks: list[tuple[int, int, int]] = field(default_factory=list)  # per output: (return, offset, size; -1: all)
    key_ids: dict[tuple, int] = field(default_factory=dict)  # unit keys, numbered (``_kid``)
    # the deferred ``float()`` syncs, checked at once: (returned array, offsets, expected values), and
    # the deferred steps left when they all hold (``checks_hold``)
    checks: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)
    unchecked: list[tuple] = field(default_factory=list)
    later: set[Node] = field(default_factory=set)  # nodes read after the block (its outputs besides syncs')
    check_only: int = 0  # outputs (the last ones) only batched syncs read: stored when a check fails
    deferred: list[tuple] = field(default_factory=list)  # syncs and prints, checked after the block ran
    names: dict[Node, int] = field(default_factory=dict)  # instance node -> the variable holding it
    launches: list[tuple[dict, int]] = field(default_factory=list)  # (report entry, launches) per kernel
    steps: list[tuple] = field(default_factory=list)  # the tape's steps it holds, in order
    handles: list[Any] = field(default_factory=list)  # the generators its draws call (``GENERATORS``)
    exports: list[tuple[int, Any]] = field(default_factory=list)  # (return, key): returned whole to later blocks
    source: str = ""
    fn: Any = None
    entry: dict = field(default_factory=dict)  # the report's entry for the whole block
    called: bool = False


class Program:
    """A tape as blocks and Python steps; ``run`` is what a replay calls instead of walking the tape."""

    def __init__(self, actions: list[tuple]) -> None:
        self.actions = actions  # ("block", Block) | a tape step run as before

    @property
    def blocks(self) -> list[Block]:
        return [a[1] for a in self.actions if a[0] == "block"]

    @functools.cached_property
    def loose_launches(self) -> int:
        """The kernel launches a run still makes one by one (its tape's steps outside the blocks)."""
        return sum(len(a[4]) for a in self.actions if a[0] == "eval")

    @functools.cached_property
    def steps(self) -> int:
        """What a run calls one at a time: each block, each Python step, each kernel launched outside the
        blocks (a replay's host cost is about ``runner.LAUNCH_COST`` for each)."""
        return sum(len(a[4]) if a[0] == "eval" else 1 for a in self.actions)

    @functools.cached_property
    def text(self) -> str:
        """``describe()``, made once (a replay reports it every time)."""
        return self.describe()

    def describe(self) -> str:
        """In words: what runs compiled (``500 iterations of (k0, k1)``) and what Python still runs."""
        out: list[str] = []
        run = 0  # Python steps of one kind in a row: said with their count
        for i, a in enumerate(self.actions):
            if a[0] == "block":
                out.append(f"compiled: {describe_units(a[1].parts)}")
            elif a[0] == "eval":
                out.append(f"kernel by kernel: {', '.join(a[4])}")
            else:
                run += 1
                if i + 1 == len(self.actions) or self.actions[i + 1][0] != a[0]:
                    out.append(f"python: {a[0]}" if run == 1 else f"python: {run} {a[0]}s")
                    run = 0
        return "; ".join(_repeats(out))


def _repeats(items: list[str]) -> list[str]:
    """Runs of the same steps with other kernels, said once: a call outside the trace per row and a
    kernel after it, 200 times, is ``200 times (python: call; compiled: k8 ... python: call;
    compiled: k207)``, not 400 items."""
    shapes = [re.sub(r"\bk\d+\b", "k", t) for t in items]
    out, i = [], 0
    while i < len(items):
        for p in range(1, 5):
            n = 1
            while shapes[i + n * p:i + (n + 1) * p] == shapes[i:i + p] and i + (n + 1) * p <= len(items):
                n += 1
            if n >= MIN_REPEATS:
                first, last = "; ".join(items[i:i + p]), "; ".join(items[i + (n - 1) * p:i + n * p])
                out.append(f"{n} times ({first}{f' ... {last}' if last != first else ''})")
                i += n * p
                break
        else:
            out.append(items[i])
            i += 1
    return out


# -- building --------------------------------------------------------------------------------

class _Builder:
    def __init__(self, backend: Any, effects_reads: set[Node]) -> None:
        self.backend = backend
        self.actions: list[tuple] = []
        self.block: Block | None = None
        self.var_of: dict[Node, int] = {}  # instance node -> variable, in the open block
        self.made: dict[int, list[Node]] = {}  # variable -> the instance nodes it holds
        self.count = 0
        self.specs: dict[tuple[int, int], Any] = {}
        self.effects_reads = effects_reads
        self.first_refusal = ""  # the first kernel that cannot be called from compiled code, in words

    def new_var(self, node: Node) -> int:
        self.count += 1
        v = self.count
        self.block.vars[v] = (node.dtype, max(node.size, 1))
        return v

    def read(self, node: Node) -> int:
        """The variable holding ``node`` (a storage), an input of the block if it is not made here."""
        v = self.var_of.get(node)
        if v is None:
            v = self.var_of[node] = self.new_var(node)
            self.block.inputs.append((v, node))
        return v

    def close(self) -> None:
        if self.block is not None and self.block.parts:
            self.block.names = dict(self.var_of)
            self.actions.append(("block", self.block))
        elif self.block is not None:  # nothing compiled: its deferred steps run as they are
            self.actions.extend(self.block.deferred)
        self.block, self.var_of, self.made = None, {}, {}

    def eval_step(self, step: tuple) -> None:
        _, tmpl, leaves, outs, names = step
        plan = tmpl.plan
        specs = []
        for i, k in enumerate(plan.kernels):
            key = (id(plan), i)
            if key not in self.specs:
                self.specs[key] = self.backend.call_spec(k, plan)
            specs.append(self.specs[key])
        if any(sp is None for sp in specs) or not _writes_c_ordered(tmpl, leaves, specs):
            if not self.first_refusal:
                k = next((k for k, sp in zip(plan.kernels, specs) if sp is None), None)
                self.first_refusal = (f"{names[plan.kernels.index(k)]} ({'+'.join(n.op for n in k.nodes)}) runs "
                                      "through NumPy" if k is not None else "a write into a Fortran-ordered array")
            self.close()
            self.actions.append(step)
            return
        if self.block is None:
            self.block = Block()
        self.block.steps.append(step)
        frame = tmpl.frame
        local: dict[Node, Node] = {frame[i]: n for i, n in zip(tmpl.leaves, leaves)}
        local.update({frame[i]: n for i, (n, _) in zip(tmpl.outs, outs)})
        mine: dict[Node, int] = {}  # this step's nodes (frame's) -> variables

        def var(node0: Node) -> int:
            v = mine.get(node0)
            if v is None:
                inst = local.get(node0)
                v = mine[node0] = self.read(inst) if inst is not None else -1
            return v

        for k, spec, name in zip(plan.kernels, specs, names):
            ins, outs_v = [], []
            for a in spec.args:
                if a[0] == "read":
                    ins.append(var(a[1]))
                elif a[0] == "out":
                    v = self.new_var(a[1])
                    mine[a[1]] = v
                    outs_v.append(v)
                elif a[0] == "dst":
                    src = var(a[1])
                    ins.append(src)
                    v = self.new_var(a[2])
                    mine[a[2]] = v
                    outs_v.append(v)
            if any(v == -1 for v in ins):  # a value the step reads that no step made: not expected
                raise ValueError(f"kernel {name}: a read has no value")
            own = getattr(spec, "params_for", None)
            self.block.parts.append(Instr(spec, name, ins, outs_v, scalars=own(local) if own is not None else None))
        for node0, inst in local.items():  # what the cell keeps under the replay's names
            if node0 in mine and inst not in self.var_of:
                self.var_of[inst] = mine[node0]
        for n, ref in outs:
            if ref is not None and n in self.var_of:
                self.var_of[ref] = self.var_of[n]

    def call_step(self, step: tuple) -> bool:
        """A call outside the trace made by the block itself, in object mode (``python_call_spec``), where
        it is a function of the cell's arrays (and constants) that returns a new array: ``np.linalg.inv(S)``
        each step no longer cuts the program (and its loop) in two. False: it stays a Python step."""
        make_spec = getattr(self.backend, "python_call_spec", None)
        got = _pure_call(step) if make_spec is not None else None
        if got is None:
            return False
        key, make, nodes, out, what = got
        spec = make_spec(key, make, nodes, out, step[5], what)
        if spec is None:
            return False
        if self.block is None:
            self.block = Block()
        self.block.steps.append(step)
        ins = [self.read(n.storage()) for n in nodes]
        if type(step[1]) is tuple:  # a draw: the block binds its generator when it runs
            self.block.handles.append(step[1][1])
        v = self.var_of[out] = self.new_var(out)
        self.block.parts.append(Instr(spec, step[5]["name"], ins, [v]))
        return True

    def deferred(self, step: tuple) -> None:
        if self.block is None:
            self.actions.append(step)
        else:
            self.block.deferred.append(step)
            self.block.steps.append(step)

    def finish(self) -> list[tuple]:
        self.close()
        return self.actions


def _writes_c_ordered(tmpl: Any, leaves: list[Node], specs: list) -> bool:
    """A program holds arrays flat, in memory order, and copies a destination before writing it as
    it is: a write into a storage that is not C-ordered (a Fortran-ordered input) stays with the
    launchers, which copy it C-ordered first."""
    local = {tmpl.frame[i]: n for i, n in zip(tmpl.leaves, leaves)}
    for spec in specs:
        for a in spec.args:
            if a[0] == "dst" and a[1] in local:
                n = local[a[1]]
                if n.layout is not None and tuple(n.layout[1]) != c_strides(n.shape, n.dtype.itemsize):
                    return False
    return True


# the generators a running block's draws call (``Block.handles``): set by ``run_block``, as the replay binds them
GENERATORS: dict[Any, Any] = {}


def _pure_call(step: tuple) -> tuple[tuple, Any, list[Node], Node, tuple] | None:
    """(key, a maker of the Python function, the array operands, the result node) for a call step a
    program can make: arrays and constants in, one new C-ordered array out (no ``out=``). A call that
    writes into an array (``u[idx] = v``, ``np.add.at(u, idx, 1)``: ``Tape.on_call``'s ``mut``) is made
    on a copy of that array's storage, which is its result, as a replay makes it. A random draw is made
    as Python makes it, in the same order: the generator advances alike (and a replay that fails
    restores it). The last item: (function, positional and keyword arguments as described, the written
    array's view chain or None), for a backend that makes some calls natively. None otherwise."""
    _, func, recipe, mut, result, static, line = step
    if static is None or result is None or recipe is None or type(func) is tuple and func[0] != "method":
        return None
    nodes: list[Node] = []
    if mut is None:
        if result[0] != "arr" or result[2]:
            return None
        out, dtype, shape = result[1], result[4], result[5]
    else:  # (its result is the written array: what it returns must be None, as Python saw)
        if result != ("value", None) and result != ("ignore",):
            return None
        src, out, chain = mut
        dtype, shape = out.dtype, out.shape
        nodes.append(src)
    if out.layout != (0, c_strides(shape, dtype.itemsize)) or not out.size:
        return None

    def part_of(part: tuple) -> tuple | None:
        """("a", operand index), ("t",) the target, ("c", array), ("v", value), ("tuple", parts): an index
        of arrays and numbers (``pos[below, 1]``)."""
        if part[0] == "node" and not part[2]:
            nodes.append(part[1])
            return ("a", len(nodes) - 1)
        if part[0] == "target":
            return ("t",)
        if part[0] == "array":
            return ("c", part[1])
        got = _constant(part)
        if got is None and part[0] == "tuple":
            items = [part_of(p) for p in part[1]]
            return None if any(i is None for i in items) else ("tuple", items)
        return got

    if recipe[0] == "made":  # (arguments that are all values, made when recorded: ``rng.normal(size=3)``)
        template, kwargs = [("v", a) for a in recipe[1]], [(k, ("v", v)) for k, v in recipe[2].items()]
    elif recipe[0] == "tuple":
        template = [part_of(part) for part in recipe[1][0][1]]
        kwargs = [(k, part_of(part)) for k, part in recipe[1][1][1]]
        if any(t is None for t in template) or any(t is None for _, t in kwargs):
            return None
    else:
        return None
    key = ("call", func, repr(template), repr(kwargs), tuple((n.dtype, n.ndim) for n in nodes), dtype, shape, line,
           repr(mut[2]) if mut is not None else None)

    def make() -> Any:
        def arg(t: tuple, arrays: tuple, target: Any) -> Any:
            kind = t[0]
            if kind == "tuple":
                return tuple(arg(i, arrays, target) for i in t[1])
            return arrays[t[1]] if kind == "a" else target if kind == "t" else t[1].copy() if kind == "c" else t[1]

        def call(*arrays: np.ndarray) -> None:  # (in object mode: the operands' views, then the program's array)
            f = func if type(func) is not tuple else getattr(GENERATORS[func[1]], func[2])
            target = None
            if mut is not None:
                arrays[-1][...] = arrays[0]  # (the written array's storage, copied: then written through its view)
                target = views.apply_chain(arrays[-1], mut[2])
            r = f(*[arg(t, arrays, target) for t in template], **{k: arg(t, arrays, target) for k, t in kwargs})
            if mut is not None:
                if r is not None and r is not target:  # (the replay stops; the cell is traced instead; a ufunc
                    # given out= returns it)
                    raise ValueError(f"line {line}: a call outside the trace now returns {type(r).__name__}, not None")
                return
            r = np.asarray(r)
            if r.dtype != dtype or r.shape != shape:  # (the replay stops; the cell is traced instead)
                raise ValueError(f"line {line}: a call outside the trace now returns {r.dtype}{list(r.shape)}, "
                                 f"not {dtype}{list(shape)}")
            arrays[-1][...] = r
        return call

    chain = None if mut is None else mut[2]
    if chain and views.geometry(dtype, shape, out.layout, chain) == views.geometry(dtype, shape, out.layout, ()):
        chain = ()  # (a chain there and back, or over the whole array, as a write moved to new storage names it)
    what = (func, template, kwargs, chain)  # (a backend may make it natively)
    return key, make, nodes, out, what


def _constant(part: tuple) -> tuple | None:
    """("v", value) for a recipe part that is a constant the call cannot change (no list, no function
    of ours: one that reads the session), else None."""
    if part[0] == "lit":
        x = part[1]
        return None if callable(x) and not isinstance(x, type) else ("v", x)
    if part[0] == "tuple":
        items = [_constant(p) for p in part[1]]
        return None if any(i is None for i in items) else ("v", tuple(i[1] for i in items))
    return None


def launches(entry: Any) -> int:
    """The kernel launches of one replay of the entry's tape."""
    return sum(len(step[4]) for step in entry.steps if step[0] == "eval")  # (its kernels' names)


def build(entry: Any, backend: Any) -> Program | None:
    """The entry's tape as a program for ``backend``, or None when nothing in it compiles. Calls outside
    the trace are made inside the blocks (``_Builder.call_step``) unless a block holding one grows past
    what pays to compile (``_too_big``): then they cut the blocks, as Python steps between them."""
    if getattr(backend, "call_spec", None) is None:
        return None
    actions, too_big, cut = _assemble(entry, backend, True)
    if cut:
        actions, too_big, _ = _assemble(entry, backend, False)
    if not any(a[0] == "block" for a in actions):
        raise NotCompiled(too_big)
    return Program(actions)


def _assemble(entry: Any, backend: Any, calls: bool) -> tuple[list[tuple], str, bool]:
    """(the program's actions, why a block runs kernel by kernel or "", whether one that does holds a
    call outside the trace). ``calls``: make those calls inside the blocks where they can be."""
    buffers = entry.effects[0]
    effects_reads = {node for node, *_ in buffers} | {node for node, _ in entry.slots}
    b = _Builder(backend, effects_reads)
    for step in entry.steps:
        kind = step[0]
        if kind == "eval":
            b.eval_step(step)
        elif kind in ("sync", "print"):
            b.deferred(step)
        elif kind != "call" or not (calls and b.call_step(step)):  # (a call outside the trace, NumPy's error
            # state set where it changes): Python, between blocks
            b.close()
            b.actions.append(step)
    actions = b.finish()
    if not any(a[0] == "block" for a in actions):
        raise NotCompiled(f"no kernel in it can be called from compiled code ({b.first_refusal})")
    _outputs(actions, effects_reads)
    kept: list[tuple] = []
    too_big, cut = "", False
    unrolled = 0  # kernel calls of the blocks compiled so far that hardly roll (``_too_big``'s budget)
    rows: dict[Node, tuple[Block, int, int, int]] = {}  # a compiled block's output that is a row of what it returns
    for a in actions:
        if a[0] != "block":
            kept.append(a)
            continue
        blk = a[1]
        _import_rows(blk, rows)
        blk.parts = roll(blk.parts, {v for v, _ in blk.outputs}, blk)
        roots = [_root(blk, v) for v, _ in blk.outputs]
        blk.returns = list(dict.fromkeys(r for r, _, _ in roots))
        own = _unrolled_calls(blk.parts)
        why = _too_big(blk, unrolled, own)
        if not why:
            unrolled += own
        if why:  # this block's steps run as they are (their values all go back to the replay's values)
            too_big = too_big or why
            cut = cut or any(s[0] == "call" for s in blk.steps)
            kept.extend(blk.steps)
            continue
        blk.picks = [(blk.returns.index(r), off, size if r != v else -1)
                     for (v, _), (r, off, size) in zip(blk.outputs, roots)]
        for (_, nodes), (i, off, size) in zip(blk.outputs, blk.picks):
            if size >= 0:
                rows.update((n, (blk, i, off, size)) for n in nodes)
        _batch_checks(blk)
        _launches(blk)
        kept.append(a)
    return kept, too_big, cut


def unit_loop(backend: Any, runs: list[tuple[Any, list[Node], list[Node]]], count: int,
              moves: bool = False) -> Block | None:
    """A fast-forwarded loop (``loops.py``) as one block: ``count`` runs of a plan, each on what the run before
    kept. ``runs`` are such runs' (plan, leaves, kept values), each reading the one before's where a run reads
    the run before: the first two, or all ``count`` where their constants differ (``loops``' numbers of the
    loop variable: the program reads a table of them, ``_tables``). Built from those alone: the loop ``_loop``
    finds in them runs ``count`` times, where nothing but the carried arrays (and tabled constants) changes
    between runs (no history, no moving offset unless ``moves``: the caller has checked that every run's
    windows lie as far on as the second's from the first's). The block's inputs are the first run's leaves,
    its outputs the last run's kept values. None where that does not hold or a kernel cannot be called from
    compiled code."""
    if getattr(backend, "call_spec", None) is None or len(runs) not in (2, count):
        return None
    b = _Builder(backend, set())
    for tmpl, leaves, outs in runs:
        b.eval_step(("eval", tmpl, leaves, [(o, None) for o in outs], tuple(k.name for k in tmpl.plan.kernels)))
    actions = b.finish()
    if len(actions) != 1 or actions[0][0] != "block":
        return None
    blk = actions[0][1]
    _outputs(actions, set(runs[-1][2]))
    period = len(blk.parts) // len(runs)
    if sum(len(nodes) for _, nodes in blk.outputs) != len(runs[-1][2]) or not period \
            or not {n for _, n in blk.inputs} <= set(runs[0][1]):
        return None  # (a kept value no kernel makes, or a leaf no run before made: not a rotation)
    last_read = {v: i for i, u in enumerate(blk.parts) for v in u.ins}
    loop = _loop(blk.parts, 0, period, len(runs), {v for v, _ in blk.outputs}, last_read, blk, False)
    if loop is None or loop.history or loop.tables and len(runs) != count or loop.moved \
            or not moves and any(any(d) for d in loop.deltas):
        return None
    loop.count = count
    loop.key = (loop.key[0], count, *loop.key[2:])
    blk.parts = [loop]
    roots = [_root(blk, v) for v, _ in blk.outputs]
    blk.returns = list(dict.fromkeys(r for r, _, _ in roots))
    blk.picks = [(blk.returns.index(r), off, size if r != v else -1) for (v, _), (r, off, size) in zip(blk.outputs, roots)]
    if _too_big(blk, 0, 0):
        return None
    _batch_checks(blk)
    _launches(blk)
    return blk


class _Returned:
    """What an earlier block returned whole (a loop's history), a later block's input: the replay's values
    hold it under this key (``run_block``)."""

    __slots__ = ("dtype", "op")

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype, self.op = dtype, "returned"


def _import_rows(blk: Block, rows: dict[Node, tuple[Block, int, int, int]]) -> None:
    """Inputs of ``blk`` that are rows of one array an earlier block returned (a value per step an earlier
    loop kept, read after a Python step: a list the cell makes an array of) become one input, that array,
    and the rows views of it: one argument for the program instead of one per row (MAX_ARRAYS)."""
    written = {v for u in blk.parts for v in _destinations(u)}
    groups: dict[tuple[int, int], list[tuple[int, Block, int, int, int]]] = {}
    for v, node in blk.inputs:
        got = rows.get(node)
        if got is not None and v not in written:
            groups.setdefault((id(got[0]), got[1]), []).append((v, *got))
    for members in groups.values():
        if len(members) < MIN_REPEATS:
            continue
        src, i = members[0][1], members[0][2]
        dtype, size = src.vars[src.returns[i]]
        hv = max(blk.vars) + 1
        blk.vars[hv] = (dtype, size)
        marker = _Returned(dtype)
        for v, _, _, off, n in members:
            blk.aliases[v] = (hv, off, n)
        mine = {m[0] for m in members}
        blk.inputs = [(v, node) for v, node in blk.inputs if v not in mine] + [(hv, marker)]
        src.exports.append((i, marker))


def _destinations(instr: Instr) -> list[int]:
    """The variables an instruction writes into (its assignments' destinations, read in ``ins``)."""
    out, k = [], 0
    for a in instr.spec.args:
        if a[0] in ("read", "dst"):
            if a[0] == "dst":
                out.append(instr.ins[k])
            k += 1
    return out


def _too_big(blk: Block, unrolled: int, own: int) -> str:
    """Why the rolled-up block is not compiled (numba's compile time grows faster than linearly with its
    calls and its arrays), or "" when it is. ``unrolled``: the calls of the program's blocks compiled before
    it that hardly roll (as many calls as launches, or nearly): such blocks, cut apart by calls outside the
    trace (a random draw each step), share one budget of MAX_CALLS; past it compiling them costs seconds
    for each few microseconds a replay saves. ``own``: this block's share of that budget (``_unrolled_calls``)."""
    calls = _calls(blk.parts)
    if calls > MAX_CALLS:
        return (f"rolled up, it still makes {calls} kernel calls (the steps differ): compiling them would "
                f"cost more than it saves, from {MAX_CALLS}")
    if unrolled + own > MAX_CALLS:
        return (f"rolled up, its blocks still make {unrolled + calls} kernel calls (the steps differ): compiling "
                f"them would cost more than it saves, from {MAX_CALLS}")
    arrays = len(blk.inputs) + len(blk.returns) + _tupled(blk.parts, blk)
    if arrays > MAX_ARRAYS:
        return (f"a block of it holds {arrays} arrays (values the cell keeps, one per step): compiling it "
                f"would cost more than it saves, from {MAX_ARRAYS}")
    return ""


def _batch_checks(blk: Block) -> None:
    """A loop that reads a residual with ``float()`` every step leaves one sync per step to check
    after the program ran: those reading one element of a returned array are compared at once,
    as bits (a NaN's payload aside, as ``cache._same`` compares: -0.0 is not 0.0), and only a
    mismatch runs them one by one, for the message."""
    where = {n: pick for (_, nodes), pick in zip(blk.outputs, blk.picks) for n in nodes}
    rows: dict[int, list[tuple[int, float]]] = {}
    for step in blk.deferred:
        if step[0] == "sync" and step[3] is float and type(step[4]) is float and step[1] in where \
                and step[1].size == 1 and step[1].dtype.kind in "fiub":
            i, off, _ = where[step[1]]
            rows.setdefault(i, []).append((off, step[4]))
        else:
            blk.unchecked.append(step)
    blk.checks = [(i, np.array([o for o, _ in r], np.int64), np.array([e for _, e in r], np.float64))
                  for i, r in rows.items()]
    # outputs nothing but those syncs reads go last: a replay whose checks hold never stores them
    needed = blk.later | {n for step in blk.unchecked for n in _reads(step)}
    pairs = sorted(zip(blk.outputs, blk.picks), key=lambda op: not any(n in needed for n in op[0][1]))
    blk.outputs, blk.picks = [o for o, _ in pairs], [p for _, p in pairs]
    blk.check_only = sum(1 for (_, nodes), _ in pairs if not any(n in needed for n in nodes))


def store(blk: Block, got: tuple, values: dict, stop: int, start: int = 0) -> None:
    """Outputs ``start:stop`` of what the block's function returned, into the replay's values."""
    for (_, nodes), (i, off, size) in zip(blk.outputs[start:stop], blk.picks[start:stop]):
        arr = got[i] if size < 0 else got[i][off:off + size]
        shaped: dict[tuple, np.ndarray] = {}
        for n in nodes:  # (an empty array's variable has one element: ``_Builder.new_var``)
            if n.shape not in shaped:
                shaped[n.shape] = _shaped(arr if n.size else arr[:0], n.shape, len(nodes) == 1)
            values[n] = shaped[n.shape]


SMALL_COPY = 4096  # bytes: a copy is cheaper than an array over the program's buffer (~5 us)


def _shaped(arr: np.ndarray, shape: tuple[int, ...], alone: bool = False) -> np.ndarray:
    """``arr`` (flat) in ``shape``. A reshape is a view whose ``base`` is the flat array, where the
    traced run's result owned its memory: a guard of the next run would see another base and trace
    again. Memory the program allocated (numba's, a buffer, not an array) gets an array of the shape
    over it instead, or a copy when it is small and ``alone`` (no other node shares the memory: a
    reduction's scalar); an input's memory written in place stays a view of that input."""
    if not arr.size:  # (no memory to share: a new empty array, as the traced run's; NumPy's strides, not a slice's)
        return np.empty(shape, arr.dtype)
    if arr.shape == shape:
        return arr
    base = arr.base
    if base is not None and not isinstance(base, np.ndarray):
        if alone and arr.nbytes <= SMALL_COPY:
            return arr.reshape(shape).copy()
        with contextlib.suppress(TypeError, ValueError):  # (no buffer protocol: a view, as before)
            start = np.frombuffer(base, np.uint8).__array_interface__["data"][0]
            offset = arr.__array_interface__["data"][0] - start
            return np.ndarray(shape, arr.dtype, buffer=base, offset=offset)
    return arr.reshape(shape)


def checks_hold(blk: Block, got: tuple) -> bool:
    """Do all of the block's batched syncs read the values the traced run read?"""
    for i, offsets, expected in blk.checks:
        now = got[i].reshape(-1)[offsets].astype(np.float64)
        if now.tobytes() != expected.tobytes():  # (as bits: faster than np.array_equal on a few values)
            return False
    return True


def _tupled(units: list[Any], blk: Block) -> int:
    """Arrays the program puts in tuples (a loop reading another variable each iteration, but for rows
    of a history: ``history_rows``): numba's compile time grows with them as with its arguments."""
    total = 0
    for u in units:
        if isinstance(u, Loop):
            total += _tupled([b for b, _ in u.body], blk)
            total += sum(len(r[1]) for _, reads in u.body for r in reads
                         if r[0] == "each" and history_rows(blk, tuple(u.ins[i] for i in r[1])) is None)
    return total


def history_rows(blk: Block, vs: tuple[int, ...]) -> tuple[int, int, int] | None:
    """(history variable, first offset, row size) when the variables ``vs`` are its rows in turn (an
    earlier loop kept a value per iteration, ``K`` of a Kalman step, and this one reads them one an
    iteration): the loop reads the row at its iteration, not a tuple of the rows."""
    first = blk.aliases.get(vs[0])
    if first is None:
        return None
    hv, off, size = first
    if any(blk.aliases.get(v) != (hv, off + t * size, size) for t, v in enumerate(vs)):
        return None
    return first


def _calls(units: list[Any]) -> int:
    """Kernel calls written in the program's source (a loop's body once)."""
    return sum(_calls([b for b, _ in u.body]) if isinstance(u, Loop) else 1 for u in units)


def _launched(units: list[Any]) -> int:
    """Kernel launches the units make (a loop's body as many times as it runs)."""
    return sum(u.count * _launched([b for b, _ in u.body]) if isinstance(u, Loop) else 1 for u in units)


def _unrolled_calls(units: list[Any]) -> int:
    """The units' kernel calls where they hardly roll (more than half a call per launch), else 0: what they
    take of ``_too_big``'s budget."""
    calls = _calls(units)
    return calls if 2 * calls > _launched(units) else 0


def _root(blk: Block, v: int) -> tuple[int, int, int]:
    """(the variable whose array holds ``v``'s value, offset, size): ``v`` itself, or a row of a
    loop's history (a row of a row, for loops within loops)."""
    off, size = 0, blk.vars[v][1]
    while v in blk.aliases:
        v, o, _ = blk.aliases[v]
        off += o
    return v, off, size


def _reads(step: tuple) -> set[Node]:
    """The storage nodes a Python step reads (views are made from their storage)."""
    kind = step[0]
    if kind == "eval":
        return {n.storage() for n in step[2]}
    if kind == "sync":
        return {step[1].storage()}
    if kind == "print":
        return {n.storage() for it in step[1] if it[0] != "text"
                for n in ([p[1] for p in it[1] if p[0] == "value"] if it[0] == "fstr" else [it[1]])}
    if kind == "call":
        out = {_m.storage() for _m in _nodes(step[2])}
        if step[3] is not None:
            out.add(step[3][0].storage())
        return out
    return set()


def _nodes(r: Any) -> list[Node]:
    if not isinstance(r, tuple) or not r:
        return []
    if r[0] == "node":
        return [r[1]]
    if r[0] in ("tuple", "list"):
        return [n for p in r[1] for n in _nodes(p)]
    if r[0] == "dict":
        return [n for _, p in r[1] for n in _nodes(p)]
    return []


def _outputs(actions: list[tuple], effects_reads: set[Node]) -> None:
    """Each block hands back exactly what something after it reads (a later step, a later block,
    the effects), and what its own deferred syncs and prints read."""
    later = set(effects_reads)
    for a in reversed(actions):
        if a[0] != "block":
            later |= _reads(a)
            continue
        blk = a[1]
        deferred = {n for s in blk.deferred for n in _reads(s)}  # (a print of values from blocks before it too)
        wanted = later | deferred
        made: dict[int, list[Node]] = {}
        inputs = {v for v, _ in blk.inputs}
        for node, v in blk.names.items():
            if node in wanted and v not in inputs:
                made.setdefault(v, []).append(node)
        blk.outputs = sorted(made.items())
        blk.later = set(later)
        later |= {n for _, n in blk.inputs} | deferred


# -- loops ------------------------------------------------------------------------------------

def roll(units: list[Any], live_out: set[int], blk: Block) -> list[Any]:
    """The units (instructions, loops), with repeating stretches as ``Loop``s, nested: a pass rolls
    every run of the shortest body that repeats (an inner loop first), and passes repeat until
    nothing rolls (then the loop around it, whose body is short now too). ``live_out``: variables
    read after these units; ``blk``: their block (its variables, and the histories loops keep)."""
    while True:
        live = {_root(blk, v)[0] for v in live_out}  # (a value rolled into a history: the history)
        rolled = _roll_once(units, live, blk)
        if len(rolled) == len(units):
            return rolled
        units = rolled


def _roll_once(units: list[Any], live_out: set[int], blk: Block) -> list[Any]:
    """One pass: each run of the shortest period that rolls becomes a loop (linear in the units:
    a 10,000-step loop's tape is 20,000 units). Loops reading a tuple of variables, one an iteration
    (``_each``), roll only where nothing else does: the loops that keep those values may roll first,
    and then they are rows of a history (``np.array(energies)`` after a loop appending a sum a step)."""
    n = len(units)
    if n < MIN_REPEATS:
        return list(units)
    keys = [_kid(u, blk.key_ids) for u in units]
    last_read: dict[int, int] = {}  # variable -> the last unit reading it
    for i, u in enumerate(units):
        for v in u.ins:
            last_read[v] = i
    for tuples in (False, True):
        rolled = _roll_periods(units, keys, live_out, last_read, blk, tuples)
        if rolled is not None:
            return rolled
    return list(units)


def _roll_periods(units: list[Any], keys: list[int], live_out: set[int], last_read: dict[int, int], blk: Block,
                  tuples: bool) -> list[Any] | None:
    n = len(units)
    for period in sorted(_periods(keys)):
        out: list[Any] = []
        i = done = 0  # units before `done` are placed (in `out`, or in a loop)
        while i + period < n:  # runs where the unit `period` later is the same
            if keys[i] != keys[i + period]:
                i += 1
                continue
            j = i
            while j + period < n and keys[j] == keys[j + period]:
                j += 1
            skip = None
            for start in range(i, i + period):  # (the first phase whose data flows alike)
                count = (j + period - start) // period
                if count < MIN_REPEATS:
                    break
                cut: list[int] = []
                loop = _loop(units, start, period, count, live_out, last_read, blk, tuples, cut)
                if loop is None and cut:  # (the iterations up to where one read stops being a history's rows,
                    count = min(cut)  # or up to the first whose large value is read after the loop)
                    if count < MIN_REPEATS:  # (that one comes too soon: look again after it)
                        skip = start + period * count
                        break
                    loop = _loop(units, start, period, count, live_out, last_read, blk, tuples)
                if loop is not None:
                    for _, hv, size, dtype in loop.history:
                        blk.vars[hv] = (dtype, size * count)
                    blk.aliases.update(loop.aliases)
                    out += units[done:start]
                    out.append(loop)
                    done = start + period * count
                    break
            i = max(j + 1, done) if skip is None else max(skip, done)
        if done:
            return out + units[done:]
    return None


def _periods(keys: list) -> list[int]:
    """Candidate loop periods: the distances at which a unit recurs, most frequent first."""
    last: dict[Any, int] = {}
    gaps: dict[int, int] = {}
    for i, k in enumerate(keys):
        j = last.get(k)
        if j is not None and i - j <= MAX_PERIOD:
            gaps[i - j] = gaps.get(i - j, 0) + 1
        last[k] = i
    top = [p for p, c in sorted(gaps.items(), key=lambda pc: -pc[1]) if c >= MIN_REPEATS - 1][:6]
    # a body of two same kernels whose buffers swap (A from B, then B from A) recurs every kernel
    # but flows every second one: multiples are candidates too
    return list(dict.fromkeys(m * p for p in top for m in (1, 2, 3, 4) if m * p <= MAX_PERIOD))


def _key(u: Any) -> tuple:
    return u.key if isinstance(u, Loop) else (u.spec.key, len(u.ins), len(u.outs))


def _tables(bodyunits: list[Any], units: list[Any], start: int, period: int, count: int) -> dict:
    """The scalar arguments of the body's units that change from one iteration to the next (their values,
    one per iteration; an inner loop's arguments are its ``params``, a table of its own among them)."""
    tables = {}
    for j, u in enumerate(bodyunits):
        if u.params:
            rows = [units[start + k * period + j].params for k in range(count)]
            for q, first in enumerate(u.params):
                col = tuple(r[q] for r in rows)
                if any(type(x) is not type(first) or repr(x) != repr(first) for x in col):  # (0.0 and -0.0 differ)
                    tables[(j, q)] = col
    return tables


def _kid(u: Any, ids: dict[tuple, int]) -> int:
    """The unit's key as a small int (a loop's key is a deep tuple: hashed once, not per compare)."""
    if u.kid < 0:
        u.kid = ids.setdefault(_key(u), len(ids))
    return u.kid


def offsets(u: Any) -> tuple[int, ...]:
    """Where a unit's reads and destination start (a loop's: its body's, at its first iteration)."""
    return u.base if isinstance(u, Loop) else u.spec.offsets


def _loop(units: list[Any], start: int, period: int, count: int, live_out: set[int], last_read: dict[int, int],
          blk: Block, tuples: bool = True, cut: list[int] | None = None) -> Loop | None:
    """The stretch as a loop, if its data flows the same way every iteration."""
    where: dict[int, tuple[int, int, int]] = {}  # variable -> (iteration, position, slot)
    for k in range(count):
        for j in range(period):
            for q, v in enumerate(units[start + k * period + j].outs):
                where[v] = (k, j, q)
    forms: list[list] = []
    for k in range(count):
        form = []
        for j in range(period):
            reads = []
            for v in units[start + k * period + j].ins:
                w = where.get(v)
                if w is None:
                    reads.append(("ext", v))
                elif w[0] == k and w[1] < j:
                    reads.append(("in", w[1], w[2]))
                elif w[0] == k - 1:
                    reads.append(("prev", w[1], w[2]))
                else:
                    return None  # reads an older iteration's value: not a rotation of buffers
            form.append(reads)
        forms.append(form)
    body = forms[1]
    each = _each(forms, blk, tuples, cut)
    if each is None:
        return None
    ins: list[int] = []
    index: dict[int, int] = {}

    def ext(v: int) -> int:
        if v not in index:
            index[v] = len(ins)
            ins.append(v)
        return index[v]

    carried: dict[tuple[int, int], int] = {}
    for j, (r0, r1) in enumerate(zip(forms[0], body)):
        for pos, (a, b) in enumerate(zip(r0, r1)):
            if (j, pos) in each:
                continue
            if b[0] == "prev":
                if a[0] != "ext":
                    return None
                # every read of a carried value starts from one value: a step that wrote `u` whole with `v`
                # (`u[:] = v`) reads `v`'s value through both names from then on, not at the first step
                if carried.setdefault((b[1], b[2]), ext(a[1])) != index[a[1]]:
                    return None
            elif a != b:
                return None
    body_forms = [[("each", tuple(ext(v) for v in each[(j, pos)])) if (j, pos) in each else
                   ("ext", ext(r[1])) if r[0] == "ext" else r for pos, r in enumerate(reads)]
                  for j, reads in enumerate(body)]
    deltas = []  # how far each offset moves per iteration; one that moves unevenly reads a table
    moved: dict[tuple[int, int], tuple[int, ...]] = {}  # (``cm[t, p] += 1`` with t, p from data)
    for j in range(period):
        rows = [offsets(units[start + k * period + j]) for k in range(count)]
        d = tuple(b - a for a, b in zip(rows[0], rows[1]))
        for m, (a, step) in enumerate(zip(rows[0], d)):
            if any(r[m] != a + k * step for k, r in enumerate(rows)):
                moved[(j, m)] = tuple(r[m] - a for r in rows)
        deltas.append(tuple(0 if (j, m) in moved else step for m, step in enumerate(d)))
    last, end = count - 1, start + period * count
    outs, out_slots = [], []
    kept: dict[tuple[int, int], dict[int, int]] = {}  # slot -> {iteration: variable} read after the loop
    for v, (k, j, q) in sorted(where.items(), key=lambda kv: kv[1]):
        if v in live_out or last_read.get(v, -1) >= end:  # read after the loop
            kept.setdefault((j, q), {})[k] = v
    history, aliases = [], {}
    top = max(blk.vars) if blk.vars else 0
    for slot, by_k in kept.items():
        if set(by_k) == {last}:  # the last iteration's value: carried out of the loop
            carried.setdefault(slot, -1)
            outs.append(by_k[last])
            out_slots.append(slot)
            continue
        dtype, size = blk.vars[by_k[min(by_k)]]
        if any(blk.vars[v][1] != size for v in by_k.values()):  # (rows of one size: a result shorter each step is not)
            return None
        if size > HISTORY_MAX and len(by_k) < count:
            # some earlier iterations' large values are read after the loop (a snapshot every 25th step): a
            # history would hold all; the loop up to the first of them carries its value out (``cut``)
            if cut is not None:
                cut.append(min(by_k) + 1)
            return None
        top += 1  # (the loop's history variable: a row per iteration)
        history.append((slot, top, size, dtype))
        aliases.update({units[start + k * period + slot[0]].outs[slot[1]]: (top, k * size, size) for k in range(count)})
    outs += [h[1] for h in history]
    bodyunits = [units[start + j] for j in range(period)]
    tables = _tables(bodyunits, units, start, period, count)
    key = ("loop", count, tuple(_kid(u, blk.key_ids) for u in bodyunits), tuple(tuple(f) for f in body_forms),
           tuple(sorted(carried.items())), tuple(out_slots), tuple((h[0], h[2]) for h in history), tuple(deltas),
           tuple(sorted(tables)), tuple(sorted(moved.items())))  # (which arguments a table holds; the values not)
    base = tuple(o for u in bodyunits for o in offsets(u))
    return Loop(count, list(zip(bodyunits, body_forms)), carried, ins, outs, out_slots, key, history, aliases,
                base, deltas, tables, moved)


def _each(forms: list[list], blk: Block, tuples: bool = True,
          cut: list[int] | None = None) -> dict[tuple[int, int], tuple[int, ...]] | None:
    """The reads whose variable differs from one iteration to the next, all from before the loop
    (``np.array(values)``: a copy of each step's own value): (unit, read) -> the variable of each
    iteration, which the program reads from a tuple of them. None when the iterations differ otherwise.
    Histories' rows are not among them (a slice: another array type than a variable's)."""
    body = forms[1]
    each: dict[tuple[int, int], tuple[int, ...]] = {}
    if all(f == body for f in forms[2:]):  # (the usual case, compared at once: a 10,000-step loop's forms)
        return each
    for j, reads in enumerate(body):
        for pos, r in enumerate(reads):
            col = [f[j][pos] for f in forms]
            if all(c == r for c in col[2:]):
                continue
            if any(c[0] != "ext" for c in col):
                return None
            vs = tuple(c[1] for c in col)
            dtype = blk.vars[vs[0]][0]
            if any(blk.vars[v][0] != dtype for v in vs):
                return None
            if any(v in blk.aliases for v in vs) and history_rows(blk, vs) is None:
                # (rows of one history are read in turn as rows; where they stop, and other variables or
                # another history's rows follow (a loop flushed in chunks kept a history per chunk), ``cut``
                # says at which iteration: the loop rolls up to there)
                first = blk.aliases.get(vs[0])
                k = 0 if first is None else next(
                    (t for t, v in enumerate(vs) if blk.aliases.get(v) != (first[0], first[1] + t * first[2], first[2])),
                    len(vs))
                if cut is not None and k >= MIN_REPEATS:
                    cut.append(k)
                return None
            if not tuples and history_rows(blk, vs) is None:
                return None
            each[(j, pos)] = vs
    return each


# -- running ----------------------------------------------------------------------------------

def _launches(blk: Block) -> None:
    counts: dict[str, list] = {}

    def walk(units: list[Any], times: int) -> None:
        for u in units:
            if isinstance(u, Loop):
                walk([b for b, _ in u.body], times * u.count)
            else:
                got = counts.setdefault(u.name, [dict(u.spec.entry, name=u.name), 0])
                got[1] += times

    walk(blk.parts, 1)
    blk.launches = [(e, n) for e, n in counts.values()]


def describe_units(units: list[Any]) -> str:
    """``k0; 500 iterations of (k1, k2; 50 iterations of (k3))``."""
    out = []
    for u in units:
        if isinstance(u, Loop):
            out.append(f"{u.count} iterations of ({describe_units([b for b, _ in u.body])})")
        else:
            out.append(u.name)
    return ", ".join(out)


def name_block(blk: Block, name: str) -> None:
    """The block's entry in a replay's report: the kernels it runs, its source; its launch is the
    one timed (its kernels' launches are counted in their own entries)."""
    names = [e["name"] for e, _ in blk.launches]
    blk.entry = {"name": name, "kind": "program", "ops": names, "loops": describe_units(blk.parts),
                 "lines": sorted({ln for e, _ in blk.launches for ln in e.get("lines", [])}),
                 "bytes_read": 0, "bytes_written": 0, "source": blk.source}


def run_block(blk: Block, values: dict, report: Any, resolve: Any) -> tuple:
    """The block's compiled function on the replay's values; its outputs go back into them (and
    are returned, as the function returned them)."""
    args = []
    for _, node in blk.inputs:
        arr = np.asarray(resolve(node, values))
        if arr.ndim != 1 or not arr.flags.c_contiguous:
            arr = arr.ravel(order="K")
        if not arr.flags.writeable:  # (a read-only input would give the program another type)
            arr = arr.copy()
        args.append(arr)
    for h in blk.handles:
        GENERATORS[h] = values[h]
    t0 = time.perf_counter()
    try:
        got = blk.fn(*args, *blk.params)
    finally:
        elapsed = time.perf_counter() - t0
        for h in blk.handles:
            GENERATORS.pop(h, None)
    if not blk.called:  # the first call compiles the program (numba compiles at a first call)
        blk.called = True
        report.times["compile"] += elapsed
    for i, key in blk.exports:
        values[key] = got[i]
    store(blk, got, values, len(blk.outputs) - blk.check_only)
    report.times["run"] += elapsed
    for e, n in blk.launches:  # (each kernel's time is the program's: it is reported once, there)
        report.launched(e, 0.0, count=n)
    report.launched(blk.entry, elapsed, count=0)
    return got
