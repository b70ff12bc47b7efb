"""A block of a replay (``program.Block``) as one numba function.

Every array is a flat variable in memory order; a kernel is called as its launcher would call it
(``CpuBackend.call_spec``: shapes, scalars, flat reads with their offsets and strides, outputs,
a destination), and a rolled-up loop is a ``for`` around one copy of its body, the arrays that
pass from one iteration to the next carried in variables. A sample, a 1-D Jacobi loop of 500
steps (two scatter kernels a step, ``B[1:-1] = 0.33 * (A[:-2] + A[1:-1] + A[2:])`` and back)::

    def program(x0, x1, p0, p1, p2, p3, p4):
        c2_1_0 = x0.copy()  # (written in place every step: copied once, here)
        c2_0_0 = x1.copy()
        for _t2 in range(500):  # the cell's loop (lines 2, 3), rolled back up
            fn0(p0, p1, c2_1_0, p2, c2_1_0, p3, c2_1_0, p4, c2_0_0, p3)  # k0 (line 2)
            fn0(p0, p1, c2_0_0, p2, c2_0_0, p3, c2_0_0, p4, c2_1_0, p3)  # k1 (line 3)
        return (c2_0_0, c2_1_0, )

(``fn0`` is the kernel both steps launch, numba-compiled once; ``k0``, ``k1`` are the launches'
names in the report, its arguments the shapes, offsets and strides as parameters, so that one
compiled kernel serves every slice.)
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..program import Block, Instr, Loop, history_rows, offsets
from .cpu_render import np_type


def emit(blk: Block) -> tuple[str, dict[str, Any]]:
    """The block's source and the kernels it calls (name -> dispatcher); fills ``blk.params``."""
    e = _Emitter(blk)
    names = e.names
    for part in blk.parts:
        outs = e.unit(part, [_name(names, blk, v) for v in part.ins], 1, f"v{e.fresh()}_")
        names.update(zip(part.outs, outs))
    ret = [names[v] for v in blk.returns]
    e.lines.append("    return (" + "".join(f"{r}, " for r in ret) + ")")  # (always a tuple)
    args = [f"x{i}" for i in range(len(blk.inputs))] + [f"p{i}" for i in range(len(blk.params))]
    return "\n".join([f"def program({', '.join(args)}):"] + e.lines) + "\n", e.kernels


def _name(names: dict[int, str], blk: Block, v: int) -> str:
    """A variable's name; one an earlier iteration of a rolled loop left is its row of the loop's
    history (a kernel after the loop reads the value of step 3 of 50)."""
    if v in names:
        return names[v]
    hv, off, size = blk.aliases[v]
    return f"{_name(names, blk, hv)}[{off}:{off + size}]"


class _Emitter:
    def __init__(self, blk: Block) -> None:
        self.blk = blk
        self.names: dict[int, str] = {v: f"x{i}" for i, (v, _) in enumerate(blk.inputs)}  # top-level variable -> name
        self.lines: list[str] = []
        self.kernels: dict[str, Any] = {}
        self._fn: dict[int, str] = {}
        self._param: dict[tuple, int] = {}
        self._count = 0

    def fresh(self) -> int:
        self._count += 1
        return self._count

    def fn(self, spec: Any) -> str:
        name = self._fn.get(id(spec.fn))
        if name is None:
            name = self._fn[id(spec.fn)] = f"fn{len(self._fn)}"  # (a compiled kernel; k0... name launches)
            self.kernels[name] = spec.fn
        return name

    def param(self, value: Any) -> str:
        key = (type(value), repr(value))  # (0.0 and -0.0, and NaNs, kept apart)
        i = self._param.get(key)
        if i is None:
            i = self._param[key] = len(self.blk.params)
            self.blk.params.append(value)
        return f"p{i}"

    def table(self, values: tuple) -> str:
        """A loop's per-iteration values of one scalar argument, as one array argument of the program."""
        self.blk.params.append(np.array(values, dtype=np.asarray(values[0]).dtype))
        return f"p{len(self.blk.params) - 1}"

    def unit(self, u: Any, ins: list[str], indent: int, prefix: str, in_place: bool = False,
             moves: list[tuple] | None = None, tables: dict[int, str] | None = None) -> list[str]:
        """Emit an instruction or a loop reading ``ins`` (names, in the unit's ``ins`` order);
        returns the names of its ``outs``. ``in_place``: the instruction's destination is dead
        after it, so it may write there instead of into a copy. ``moves``: per offset of the unit
        (``program.offsets``), the (iteration variable, step) of each loop around it. ``tables``:
        scalar arguments (by position among them) read from a table at the loop's iteration."""
        moves = moves if moves is not None else [()] * len(offsets(u))
        if isinstance(u, Loop):
            return self.loop(u, ins, indent, prefix, moves, tables or {})
        return self.call(u, ins, indent, prefix, in_place, moves, tables or {})

    def offset(self, base: int, moves: tuple) -> str:
        """An offset: the first iteration's, plus a step per iteration of each loop it moves in (or
        a table's entry, ``(p3[_t1], 1)``, where it moves unevenly)."""
        return self.param(np.int64(base)) + "".join(f" + {t}" + (f" * {d}" if d != 1 else "") for t, d in moves if d)

    def call(self, instr: Instr, ins: list[str], indent: int, prefix: str, in_place: bool,
             moves: list[tuple], tables: dict[int, str]) -> list[str]:
        pad = "    " * indent
        reads = iter(ins)
        outs = iter(instr.outs)
        offs = iter(zip(instr.spec.offsets, moves))
        names: list[str] = []
        args: list[str] = []
        slot = iter(range(len(instr.params)))

        def scalar() -> str:  # the next of ``instr.params``: this step's row of a table, or the value
            q = next(slot)  # (an argument, not a literal: numba would compile a kernel per literal)
            return tables.get(q) or self.param(instr.params[q])

        for a in instr.spec.args:
            kind = a[0]
            if kind in ("const", "param"):
                args.append(scalar())
            elif kind == "read":
                args.append(next(reads))
                args += [self.offset(*next(offs))] + [scalar() for _ in a[2][1:]]
            elif kind == "out":
                var = next(outs)
                name = f"{prefix}{len(names)}"
                dtype = self.blk.vars[var][0]
                dims = [scalar() for _ in a[1].shape]  # (this step's: a loop's results may shrink step by step)
                size = " * ".join(dims) or "1"
                # (an empty result's variable has one element, ``_Builder.new_var``: none of it is the array)
                self.lines.append(f"{pad}{name} = np.empty(max({size}, 1), {np_type(dtype)})")
                names.append(name)
                args.append(name if len(dims) <= 1 else f"{name}[:{size}].reshape(({', '.join(dims)},))")
            elif kind == "dst":
                src = next(reads)
                next(outs)
                if a[3] or in_place:  # in place: the destination is dead after this write
                    name = src
                else:
                    name = f"{prefix}{len(names)}"
                    self.lines.append(f"{pad}{name} = {src}.copy()")
                names.append(name)
                args.append(name)
                args += [self.offset(*next(offs))] + [scalar() for _ in a[4][1:]]
        self.lines.append(f"{pad}{self.fn(instr.spec)}({', '.join(args)})  # {instr.name}{_lines(instr)}")
        return names

    def loop(self, loop: Loop, ins: list[str], indent: int, prefix: str, moves: list[tuple],
             given: dict[int, str]) -> list[str]:
        """``given``: the loop's scalar arguments (by position in ``loop.params``) a loop around it reads
        from its own tables: the value, or this loop's table, for the outer loop's iteration."""
        pad = "    " * indent
        tag = self.fresh()
        carried = {slot: f"c{tag}_{slot[0]}_{slot[1]}" for slot in loop.carried}
        overwritten = _overwritten(loop)
        for slot, name in carried.items():
            i = loop.carried[slot]
            if i >= 0:  # (written in place every iteration: its first value copied once, here)
                self.lines.append(f"{pad}{name} = {ins[i]}{'.copy()' if slot in overwritten else ''}")
            else:  # only read after the loop: a placeholder of its type until the first iteration
                dtype = self.blk.vars[_slot_var(loop, slot)][0]
                self.lines.append(f"{pad}{name} = np.empty(0, {np_type(dtype)})")
        history = [f"h{tag}_{i}" for i in range(len(loop.history))]  # a row per iteration, for Python
        for (_, _, size, dtype), name in zip(loop.history, history):
            self.lines.append(f"{pad}{name} = np.empty({size * loop.count}, {np_type(dtype)})")
        tables: dict[int, dict[int, str]] = {}  # body unit -> its scalar arguments read per iteration
        at = 0  # (the argument's position in ``loop.params``)
        for j, (u, _) in enumerate(loop.body):
            for q in range(len(u.params)):
                own, outer = loop.tables.get((j, q)), given.get(at)
                if own is not None:  # (a row of the outer loop's table, or a table of its own)
                    tables.setdefault(j, {})[q] = f"{outer if outer is not None else self.table(own)}[_t{tag}]"
                elif outer is not None:
                    tables.setdefault(j, {})[q] = outer
                at += 1
        each: dict[tuple[int, ...], str] = {}  # a read of another variable each iteration: a tuple of them
        for r in (r for _, reads in loop.body for r in reads if r[0] == "each"):
            if r[1] not in each:
                rows = history_rows(self.blk, tuple(loop.ins[i] for i in r[1]))
                if rows is not None and rows[0] in self.names:  # rows of an earlier loop's history, in turn
                    h, off, size = self.names[rows[0]], rows[1], rows[2]
                    each[r[1]] = f"{h}[{off} + _t{tag} * {size}:{off} + (_t{tag} + 1) * {size}]"
                    continue
                each[r[1]] = name = f"e{tag}_{len(each)}"
                self.lines.append(f"{pad}{name} = ({', '.join(ins[i] for i in r[1])},)")
                each[r[1]] += f"[_t{tag}]"
        self.lines.append(f"{pad}for _t{tag} in range({loop.count}):  # the cell's loop{_lines(loop)}, rolled back up")
        body: dict[tuple[int, int], str] = {}
        at = 0  # where unit j's offsets start in the loop's
        for j, (u, reads) in enumerate(loop.body):
            names = [body[(r[1], r[2])] if r[0] == "in" else carried[(r[1], r[2])] if r[0] == "prev"
                     else each[r[1]] if r[0] == "each" else ins[r[1]] for r in reads]
            n = len(offsets(u))
            mine = [m + (((f"{self.table(loop.moved[(j, o)])}[_t{tag}]", 1),) if (j, o) in loop.moved else
                         ((f"_t{tag}", d),)) for o, (m, d) in enumerate(zip(moves[at:at + n], loop.deltas[j]))]
            at += n
            outs = self.unit(u, names, indent + 1, f"b{tag}_{j}_", overwritten.get(reads[-1][1:]) == j
                             if reads and reads[-1][0] == "prev" else False, mine, tables.get(j))
            body.update({(j, q): name for q, name in enumerate(outs)})
        # this iteration's rows first: a value written in place into a carried array (a snapshot's rows
        # scattered into the zeros the last iteration made) is that array until the carried names move on
        for (slot, _, size, _), name in zip(loop.history, history):
            self.lines.append(f"{pad}    {name}[_t{tag} * {size}:(_t{tag} + 1) * {size}] = {body[slot]}")
        # the carried names move on at once: one of them may be another's new value (buffers written in
        # place and swapped, ``u, v = v, u``: one by one, the second would read the first's new value)
        moves = [(name, body[slot]) for slot, name in carried.items() if body[slot] != name]  # (in place: there)
        if moves:
            self.lines.append(f"{pad}    {', '.join(m[0] for m in moves)} = {', '.join(m[1] for m in moves)}")
        return [carried[slot] for slot in loop.out_slots] + history


def _lines(u: Any) -> str:
    """`` (line 3)``: the cell lines a call's kernel (or a loop's body) came from."""
    found: set[int] = set()

    def walk(x: Any) -> None:
        if isinstance(x, Loop):
            for b, _ in x.body:
                walk(b)
        else:
            found.update(x.spec.entry.get("lines") or ())

    walk(u)
    lines = sorted(found)
    return f" (line{'s' * (len(lines) > 1)} {', '.join(map(str, lines))})" if lines else ""


def _overwritten(loop: Loop) -> dict[tuple[int, int], int]:
    """Carried arrays an assignment in the body may overwrite in place (slot -> the body unit that
    writes it): the last iteration's value is read by that assignment alone, as its destination,
    and by no unit after it (those before it have read it already). The loop then copies the
    array once before its first iteration, not once per iteration (a time step's full copy)."""
    readers: dict[tuple[int, int], list[tuple[int, int]]] = {}  # slot -> (unit, read position)
    for j, (_, reads) in enumerate(loop.body):
        for pos, r in enumerate(reads):
            if r[0] == "prev":
                readers.setdefault(r[1:], []).append((j, pos))
    out: dict[tuple[int, int], int] = {}
    for slot, where in readers.items():
        j, pos = where[-1]
        u, reads = loop.body[j]
        if (isinstance(u, Instr) and any(a[0] == "dst" for a in u.spec.args) and pos == len(reads) - 1
                and sum(1 for jj, _ in where if jj == j) == 1 and loop.carried.get(slot, -1) >= 0):
            out[slot] = j
    return out


def _slot_var(loop: Loop, slot: tuple[int, int]) -> int:
    return loop.outs[loop.out_slots.index(slot)]


# a program's source lines up to which LLVM optimizes it (``compile_source``); the environment sets it for a bench
# (JUPYTER_FUSE_OPTIMIZED_LINES=0: every program unoptimized; =100000: every one optimized)
OPTIMIZED_LINES = int(os.environ.get("JUPYTER_FUSE_OPTIMIZED_LINES", 400))


def compile_source(source: str, kernels: dict[str, Any]) -> Any:
    """The program as a numba function (compiled at its first call)."""
    from numba import njit
    from numba.core.cpu import CPUTargetOptions

    namespace: dict[str, Any] = {"np": np, **kernels}
    exec(compile(source, "<jupyter_fuse program>", "exec"), namespace)  # noqa: S102 - our generated code
    # a long program (a block that did not roll all the way) is left unoptimized by LLVM: its work is in the
    # kernels it calls, compiled and optimized on their own, and optimizing its glue took time that grows much
    # faster than its length (bench/realworld.py's inventory_sim, 718 lines: its background compile took 67 s,
    # 28 s unoptimized; its replay 3.8 ms instead of 2.3, NumPy's 9.4). A short one keeps LLVM's loops: adi's
    # replay (bench/loops.py) took twice as long unoptimized, for a compile of 2 s.
    # (``_dbg_optnone`` is numba's own option, not a public one: where a numba lacks it, every program is optimized)
    long = source.count("\n") > OPTIMIZED_LINES and hasattr(CPUTargetOptions, "_dbg_optnone")
    return njit(_dbg_optnone=True)(namespace["program"]) if long else njit(namespace["program"])
