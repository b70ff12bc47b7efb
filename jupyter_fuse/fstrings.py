"""Does a value formatted into an f-string go straight into ``print``?

``print(f"step {i}: loss {loss:.4f}")`` formats a lazy value: a sync. A replay must show the new
loss, not compare it with the old one and give up. That is safe only when the formatted text
goes nowhere but into ``print``'s argument: then a replay may format the new value into the same
place. This module reads the cell's bytecode around the ``FORMAT_VALUE`` that asked, simulating
the stack of the statement it is in: the formatted piece must be consumed by ``BUILD_STRING``
(the f-string) and that string by a ``CALL`` of the name ``print`` as a positional argument,
with nothing in between that could keep or inspect it. Anything it does not understand (a jump,
a store, an opcode outside its table, another Python version's bytecode) answers None, and the
value stays a sync whose replay compares it.
"""

from __future__ import annotations

import dis
import types
from typing import Any

_PLAIN = {  # opcode -> (pops, pushes) for opcodes whose counts do not depend on the argument
    "NOP": (0, 0), "RESUME": (0, 0), "CACHE": (0, 0), "PRECALL": (0, 0), "KW_NAMES": (0, 0),
    "PUSH_NULL": (0, 1), "LOAD_CONST": (0, 1), "LOAD_NAME": (0, 1), "LOAD_FAST": (0, 1), "LOAD_DEREF": (0, 1),
    "LOAD_CLOSURE": (0, 1), "LOAD_ATTR": (1, 1), "LOAD_METHOD": (1, 2), "BINARY_OP": (2, 1),
    "BINARY_SUBSCR": (2, 1), "COMPARE_OP": (2, 1), "UNARY_NEGATIVE": (1, 1), "UNARY_NOT": (1, 1),
    "UNARY_INVERT": (1, 1), "FORMAT_SIMPLE": (1, 1), "FORMAT_WITH_SPEC": (2, 1), "CONVERT_VALUE": (1, 1),
}
_BOUNDARY = {"POP_TOP", "STORE_NAME", "STORE_FAST", "STORE_GLOBAL", "STORE_DEREF", "STORE_ATTR",
             "STORE_SUBSCR", "RESUME", "FOR_ITER", "NOP"}


def _boundary(ins: dis.Instruction) -> bool:
    """Does a statement start after ``ins``? (A store, a discarded value, a jump.)"""
    return ins.opname in _BOUNDARY or "JUMP" in ins.opname


_OURS = object()  # on the simulated stack: the formatted piece, or the string that holds it
_CACHE: dict[tuple[int, int], Any] = {}  # (id(code), offset) -> answer (codes are kept alive: _CODES)
_CODES: list[types.CodeType] = []


def print_argument(code: types.CodeType, offset: int) -> tuple[int, int, int] | None:
    """For the format instruction at ``offset``: (where the ``print`` call its f-string goes into
    starts, where it ends, that argument's position), or None. (A caller's ``f_lasti`` during the
    call lies in the call's instructions and their inline caches.)"""
    key = (id(code), offset)
    if key not in _CACHE:
        _CODES.append(code)
        try:
            _CACHE[key] = _analyse(list(dis.get_instructions(code)), offset)
        except Exception:  # noqa: BLE001 - an answer we cannot give is None
            _CACHE[key] = None
    return _CACHE[key]


def _effect(ins: dis.Instruction) -> tuple[int, int] | None:
    op, arg = ins.opname, ins.arg or 0
    if op in _PLAIN:
        return _PLAIN[op]
    if op == "LOAD_GLOBAL":
        return (0, 2) if arg & 1 else (0, 1)  # (3.11: the low bit pushes a NULL first)
    if op == "FORMAT_VALUE":
        return (2 if arg & 4 else 1), 1
    if op in ("BUILD_STRING", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SLICE"):
        return arg, 1
    if op == "CALL":
        return arg + 2, 1
    return None


def _analyse(instrs: list[dis.Instruction], offset: int) -> tuple[int, int, int] | None:
    at = next(i for i, ins in enumerate(instrs) if ins.offset == offset)
    if instrs[at].opname not in ("FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"):
        return None  # format(x), str.format: not an f-string's piece
    start = at
    while start > 0 and not _boundary(instrs[start - 1]) and not instrs[start].is_jump_target:
        start -= 1
    stack: list[Any] = []  # what pushed each item: the instruction, or OURS (the piece, the f-string)
    kwnames = 0
    for i in range(start, len(instrs)):
        ins = instrs[i]
        eff = _effect(ins)
        if eff is None or ins.is_jump_target and i > start:
            return None
        pops, pushes = eff
        if ins.opname == "KW_NAMES":
            kwnames = len(ins.argval) if isinstance(ins.argval, tuple) else 0
        if len(stack) < pops:  # below where the statement started (a loop's iterator): not ours
            stack = [None] * (pops - len(stack)) + stack
        popped, stack = stack[len(stack) - pops:], stack[:len(stack) - pops]
        ours = any(p is _OURS for p in popped)
        if i == at:
            stack.append(_OURS)
            continue
        if ours:
            if ins.opname in ("BUILD_STRING", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC") and i > at:
                stack.append(_OURS)  # the f-string now holds the piece
                continue
            if ins.opname == "CALL" and i > at:
                func, args = popped[1], popped[2:]
                positional = len(args) - kwnames
                j = next(k for k, p in enumerate(args) if p is _OURS)
                named_print = isinstance(func, dis.Instruction) and func.opname in ("LOAD_NAME", "LOAD_GLOBAL") \
                    and func.argval == "print"
                first = instrs[i - 1].offset if instrs[i - 1].opname == "PRECALL" else ins.offset
                after = instrs[i + 1].offset if i + 1 < len(instrs) else ins.offset + 2
                return (first, after, j) if named_print and j < positional else None
            return None
        if ins.opname == "CALL":
            kwnames = 0
        stack.extend([ins] * pushes)
    return None


def template(text: str, pieces: list[tuple[Any, bool, str, str]]) -> list[tuple] | None:
    """``text`` (a printed f-string) as literal parts and the ``pieces`` (node, scalar, spec, their
    text) formatted into it, in order; None where a piece's place is not certain (its text is
    missing, or there more than once)."""
    parts: list[tuple] = []
    pos = 0
    for node, scalar, spec, piece in pieces:
        k = text.find(piece, pos)
        if not piece or k < 0 or text.count(piece) != 1:
            return None
        parts += [("text", text[pos:k]), ("value", node, scalar, spec)]
        pos = k + len(piece)
    return parts + [("text", text[pos:])]
