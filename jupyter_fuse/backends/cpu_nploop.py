"""NumPy's own inner loops, called from compiled kernels.

NumPy computes ``exp``, ``log``, ``tanh``, ``power``, ``sin`` and the other transcendental functions
with its own vector code where the CPU has it (AVX2/AVX-512), not with the C library's functions that
numba calls: 3-7x faster than ``math.exp`` per element here, and rounded otherwise in the last bit. A
kernel calls NumPy's loop for such an op instead, a block of elements at a time
(``place``): its values are then NumPy's to the bit, at NumPy's speed, and the rest of
the kernel stays fused around it.

The loop comes from NumPy's experimental low-level ufunc API (``ufunc._resolve_dtypes_and_context``,
``ufunc._get_strided_loop``, NumPy >= 1.24): a function pointer, a context and auxiliary data, passed to
the kernel as integer arguments (``param_value`` of a ``nploop`` node), so a kernel compiled and cached
on disk by one process runs in another. ``np_loop1``/``np_loop2`` are numba intrinsics that call it.

A rendered kernel (``cpu_render``) marks where such an op is computed; ``place`` then rewrites the loop
around each mark, once the kernel's loop nest is written::

    for i1 in range(s1):                    for blk_1 in range((s1 + 511) // 512):
        v2 = in0[...]                           lo_1 = blk_1 * 512; n_1 = min(512, s1 - lo_1)
        #np_loop 0  (v1 = np.exp(v2))   ->      for i1 in range(lo_1, lo_1 + n_1):
        v3 = (v1 * p0)                              v2 = in0[...]; bv2[i1 - lo_1] = v2
        out0[i0, i1] = v3                       np_loop1(p1, p2, p3, n_1, bv2.ctypes.data, 8, bv1.ctypes.data, 8)
                                                for i1 in range(lo_1, lo_1 + n_1):
                                                    v1 = bv1[i1 - lo_1]; v3 = (v1 * p0); out0[i0, i1] = v3

Each element still sees its ops in the kernel's order (an accumulation adds in the same order); what a
later part of the block reads waits in buffers of ``BLOCK`` elements, made once per thread.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Node

# ufuncs whose float loops NumPy may compute with its own vector code: called as NumPy's. (sqrt, fabs,
# rint, floor, ... are correctly rounded everywhere, and stay inline where LLVM vectorizes them.)
NUMPY_LOOPS = frozenset({
    "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "arctan2", "power",
    "hypot", "logaddexp", "logaddexp2",
})
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
# ufuncs on complex values a kernel computes by NumPy's loop: every one whose bits are not plain exact
# arithmetic. NumPy multiplies complex numbers with fused multiply-adds where the CPU has them, and
# computes ``absolute`` with a scaled formula of its own, neither as numba's complex type does.
COMPLEX_LOOPS = frozenset({
    "multiply", "divide", "square", "reciprocal", "absolute", "sqrt", "exp", "expm1", "log", "log2", "log10",
    "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "power",
})
_CAPSULE = b"numpy_1.24_ufunc_call_info"
_API = hasattr(np.ufunc, "_get_strided_loop") and hasattr(np.ufunc, "_resolve_dtypes_and_context")


def routed(op: str, ins: list[np.dtype], out: np.dtype, result: np.dtype) -> bool:
    """Is ``op`` on loop dtypes ``ins -> out`` (cast to ``result``) computed by NumPy's own loop?
    (``JUPYTER_FUSE_NUMPY_LOOPS=off``: kernels call C's functions, as before; asked per kernel rendered.)"""
    if _API and ins and ins[0] in _COMPLEX:  # (no other way for these: NumPy's loops are always called)
        return op in COMPLEX_LOOPS and result == out and all(d == ins[0] for d in ins) and (
            out == ins[0] or op == "absolute" and out == np.dtype(ins[0].char.lower()))  # (D -> d, F -> f)
    return (_API and op in NUMPY_LOOPS and out in _FLOATS and result == out and all(d == out for d in ins)
            and os.environ.get("JUPYTER_FUSE_NUMPY_LOOPS", "on") != "off")


BLOCK = 512  # elements computed before each call of NumPy's loop: a few buffers of them stay in L1
CHUNK = 16  # blocks a thread of a parallel loop computes in a row, with one set of buffers
SHARES = 4  # shares per thread of a parallel loop around a blocked one (each makes its buffers once)
SHARES_MARK = "# shares of the threads' work"  # (the kernel then takes an ``nthreads`` argument)


class Unplaced(Exception):
    """A marked op sits in a loop ``place`` does not rewrite (a parallel one that accumulates; one where a
    variable is made in a branch, an operand outside the loop, or a name other than a load from memory is
    set in one pass and read in another): the kernel is rendered with C's functions instead."""


@dataclass
class Call:
    """``out = np.<op>(*args)`` by NumPy's loop: ``args`` are variables or scalar arguments (``p3``);
    ``strides`` the byte strides NumPy reads them with (``loop_strides``); ``loop`` names the kernel's three
    integer arguments (the loop, its context, its auxiliary data)."""
    out: str
    op: str
    args: list[str]
    strides: tuple[int, ...]
    dtype: np.dtype  # the operands'
    loop: list[str]
    out_dtype: np.dtype  # the output's (a complex ``absolute``: a float)


def marker(i: int) -> str:
    return f"#np_loop {i}"


def loop_strides(node: Node, dtype: np.dtype, result: np.dtype | None = None) -> tuple[int, ...]:
    """The byte strides of NumPy's call for ``node`` on operands of ``dtype`` (into ``result``, where it
    differs): 0 for ``steady`` operands, else the item size; the output's last."""
    item = dtype.itemsize
    return tuple(0 if st else item for st in steady(node)) + ((result or dtype).itemsize,)


def steady(node: Node) -> list[bool]:
    """Which operands of ``node`` NumPy's iterator reads with stride 0: those broadcast along its inner axis
    (the result's last one longer than 1; of a one-element result, an operand with fewer axes), 0-d ones and
    scalars. NumPy's loop may take other paths for them (its `power` squares for an exponent 2.0 read so:
    ``ops.power_fast_paths``). Such an operand is one value along the kernel's innermost axis too."""
    shape = node.shape
    inner = next((d for d in range(len(shape) - 1, -1, -1) if shape[d] != 1), None)
    out = []
    for a in node.args:
        if a.op == "const" or not a.shape:
            out.append(True)
        elif inner is None:
            out.append(len(a.shape) < len(shape))
        else:
            k = inner - (len(shape) - len(a.shape))
            out.append(k < 0 or a.shape[k] == 1)
    return out


def _signature(dtype: np.dtype, result: np.dtype | None) -> str:
    return dtype.str if result in (None, dtype) else f"{dtype.str}->{result.str}"


def loop_node(op: str, dtype: np.dtype, strides: tuple[int, ...], j: int, result: np.dtype | None = None) -> Node:
    """The kernel's integer argument ``j`` (0: the loop, 1: its context, 2: its auxiliary data) for NumPy's
    loop of ``op`` on ``dtype`` (into ``result``, where it differs) called with these byte strides (inputs,
    then the output)."""
    return Node.make("nploop", (), (op, _signature(dtype, result), strides, j), None, ())


def available(op: str, dtype: np.dtype, strides: tuple[int, ...], result: np.dtype | None = None) -> bool:
    """Does this NumPy give its loop for ``op`` on ``dtype`` at these strides (its API is experimental: where
    it does not, the kernel calls C's function, as before)?"""
    try:
        _pointers(op, _signature(dtype, result), strides)
    except Exception:  # noqa: BLE001 - any failure of a private API means: not this way
        return False
    return True


def loop_value(node: Node) -> int:
    """A ``loop_node``'s value in this process."""
    op, dtype, strides, j = node.params
    return _pointers(op, dtype, strides)[j]


@functools.lru_cache(maxsize=None)  # (the capsule holds the context and auxiliary data: kept for good)
def _pointers(op: str, dtype: str, strides: tuple[int, ...]) -> tuple[int, int, int, Any]:
    uf = getattr(np, op)
    ins, _, out = dtype.partition("->")
    dt = np.dtype(ins)
    _, capsule = uf._resolve_dtypes_and_context((dt,) * uf.nin + (np.dtype(out or ins),) * uf.nout)
    uf._get_strided_loop(capsule, fixed_strides=strides)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    info = get(capsule, _CAPSULE)  # (strided_loop, context, auxdata, requires_pyapi, ...)
    loop, context, aux = (ctypes.c_void_p * 3).from_address(info)
    if ctypes.c_bool.from_address(info + 3 * ctypes.sizeof(ctypes.c_void_p)).value:  # (object loops only)
        raise RuntimeError(f"NumPy's {op} loop on {dtype} needs the Python API")
    return loop or 0, context or 0, aux or 0, capsule


_HEAD = re.compile(r"for (i\d+) in (p?range)\((.*)\):$")
_VAR = re.compile(r"\bv\d+\b")
_DEF = re.compile(r"(v\d+) = ")
_STORE = re.compile(r"[A-Za-z_]\w*\[.*\] = ")


def _depth(line: str) -> int:
    return (len(line) - len(line.lstrip(" "))) // 4


def place(body: list[str], calls: list[Call], dtypes: dict[str, np.dtype]) -> list[str]:
    """``body`` (the kernel function's lines) with each marked op computed by NumPy's loop: the loop right
    around it (over ``range``; over ``prange`` only where nothing accumulates) runs in blocks (``_blocks``);
    a mark outside any loop (a 0-d kernel, a reduction's result) calls the loop on one element. Raises
    ``Unplaced`` where neither fits."""
    body = list(body)
    serial = 0
    while True:
        at = next((i for i, ln in enumerate(body) if ln.lstrip().startswith("#np_loop ")), None)
        if at is None:
            return body
        depth = _depth(body[at])
        h = at - 1
        while h >= 0 and _depth(body[h]) >= depth:
            h -= 1
        head = _HEAD.match(body[h].strip()) if h >= 0 else None
        if head is None:  # (one element)
            c = calls[int(body[at].split()[1])]
            body[at:at + 1] = ["    " * depth + ln for ln in _single(c)]
            continue
        top = _depth(body[h])
        end = h + 1
        while end < len(body) and _depth(body[end]) > top:
            end += 1
        inner: list[list[str]] = []  # the body's statements: a line, with the lines of its block if it heads one
        for ln in body[h + 1:end]:
            if _depth(ln) == top + 1:
                inner.append([ln[4 * (top + 1):]])
            else:
                inner[-1].append(ln[4 * (top + 1):])
        if head.group(2) == "prange" and any(  # (an accumulation: numba's parallel reduction, left as it is)
                len(u) > 1 or not (_DEF.match(u[0]) or _STORE.match(u[0]) or u[0].startswith("#np_loop ")) for u in inner):
            raise Unplaced(body[h].strip())
        serial += 1
        here = head.group(2) == "prange"  # (its blocks are the threads' work: each makes its buffers)
        blocked, alloc = _blocks(head, inner, calls, dtypes, serial, here)
        body[h:end] = ["    " * top + ln for ln in blocked]
        if not here:  # once per thread: in each share of the outermost parallel loop around it, else at the start
            par = [i for i in _ancestors(body, h) if " in prange(" in body[i]]
            if par and _HEAD.match(body[par[-1]].strip()):  # (not yet cut into shares: see _shares)
                body[par[-1]:] = _shares(body[par[-1]:], serial)
                par[-1] += 1
            at = par[-1] + 1 if par else 0
            body[at:at] = ["    " * (_depth(body[par[-1]]) + 1 if par else 0) + ln for ln in alloc]


def _shares(body: list[str], serial: int) -> list[str]:
    """``body``, headed by a parallel loop ``for iK in prange(...)``, with that loop cut into a few shares
    per thread (``for sh_N in prange(ns_N)``, each running its part of ``iK`` in order): buffers made at the
    top of a share are made a few times per thread, not once per ``iK`` (a 64x64 kernel's rows: 64 times
    six buffers took a third of its time)."""
    top = _depth(body[0])
    i, _, bounds = _HEAD.match(body[0].strip()).groups()
    end = 1
    while end < len(body) and _depth(body[end]) > top:
        end += 1
    lo, hi = _bounds(bounds)
    size, ns, sh = f"({hi} - ({lo}))", f"ns_{serial}", f"sh_{serial}"
    pad = "    " * top
    return [pad + f"{ns} = max(1, min({size}, {SHARES} * nthreads))  {SHARES_MARK}",
            pad + f"for {sh} in prange({ns}):",
            pad + f"    for {i} in range({lo} + {sh} * {size} // {ns}, {lo} + ({sh} + 1) * {size} // {ns}):"] \
        + ["    " + ln for ln in body[1:end]] + body[end:]


def _bounds(bounds: str) -> tuple[str, str]:
    """A loop head's ``range`` arguments ``lo, hi`` or ``hi`` as (lo, hi) (the comma outside parentheses)."""
    depth, split = 0, None
    for pos, ch in enumerate(bounds):
        depth += ch == "(" or -(ch == ")")
        if ch == "," and depth == 0:
            split = pos
    return ("0", bounds) if split is None else (bounds[:split].strip(), bounds[split + 1:].strip())


def _ancestors(body: list[str], h: int) -> list[int]:
    """The lines heading the blocks around line ``h``, innermost first."""
    out, d = [], _depth(body[h])
    for i in range(h - 1, -1, -1):
        if d == 0:
            break
        if _depth(body[i]) < d:
            out.append(i)
            d = _depth(body[i])
    return out


def _single(c: Call) -> list[str]:
    """The call on one element: every operand in a one-element buffer of its own (``k``)."""
    lines = [f"b{c.out} = np.empty(1, np.{c.out_dtype.name})"]
    for a in c.args:
        lines += _one(a, c.dtype)
    return lines + [_invoke(c, "1", [f"k{a}.ctypes.data" for a in c.args]), f"{c.out} = b{c.out}[0]"]


def _one(a: str, dtype: np.dtype) -> list[str]:
    """A one-element buffer (``k``) holding ``a``: a scalar argument NumPy reads with stride 0, or a value of
    a call on one element."""
    return [f"k{a} = np.empty(1, np.{dtype.name})", f"k{a}[0] = {a}"]


def _invoke(c: Call, n: str, ptrs: list[str]) -> str:
    """The call on ``n`` elements, operand ``k`` read from address ``ptrs[k]`` (a block buffer, a one-element
    one, or the input itself: ``_direct``)."""
    args = ", ".join(f"{ptr}, {st}" for ptr, st in zip(ptrs, c.strides))
    return (f"np_loop{len(c.args)}({', '.join(c.loop)}, {n}, {args}, b{c.out}.ctypes.data, "
            f"{c.out_dtype.itemsize})  # {c.out} = np.{c.op}({', '.join(c.args)}): NumPy's own loop")


def _blocks(head: Any, inner: list[list[str]], calls: list[Call], dtypes: dict[str, np.dtype], serial: int,
            here: bool) -> tuple[list[str], list[str]]:
    """The loop ``head`` over ``inner`` (its body's statements, marks among them) in blocks of ``BLOCK``, and
    the buffers it needs (made inside each block where ``here``: a parallel loop's blocks are its threads')."""
    i, rng, bounds = head.groups()
    lo, hi = _bounds(bounds)
    segments, at = _levels(inner, calls)
    mine = [c for level in at for c in level]
    outs = {c.out for c in mine}  # (held in their buffers: every later segment reading one loads it)
    made = {m.group(1): s for s, seg in enumerate(segments) for m in (_DEF.match(u[0]) for u in seg) if m}
    if any(_DEF.match(ln) for seg in segments for u in seg for ln in u[1:]) or any(
            a[0] == "v" and a not in made and a not in outs for c in mine for a in c.args):
        raise Unplaced(f"for {i}: a variable made in a branch, or an operand made outside the loop")
    direct = _direct(segments, mine, outs, dtypes, i, f"lo_{serial}")
    kept = outs | {a for c in mine for a in c.args if a[0] == "v" and a not in direct}
    text = [ln for seg in segments for u in seg for ln in u]
    dead = {a for a in direct if sum(len(re.findall(rf"\b{a}\b", ln)) for ln in text) == 1}  # (only its load)
    segments = [[u for u in seg if not (len(u) == 1 and (_DEF.match(u[0]) or [None, None])[1] in dead)]
                for seg in segments]
    loads = []
    for s, seg in enumerate(segments):
        later = [v for v in dict.fromkeys(_VAR.findall("\n".join(ln for u in seg for ln in u)))
                 if v in outs or made.get(v, s) < s]
        kept.update(later)
        loads.append(later)
    again = _reloads(segments)
    lo_, n_, j = f"lo_{serial}", f"n_{serial}", f"np.uint64({i} - lo_{serial})"  # (unsigned: no wraparound test, vectorized)
    blocks = f"(({hi} - ({lo}) + {BLOCK - 1}) // {BLOCK})"
    alloc = [f"b{v} = np.empty({BLOCK}, np.{dtypes[v].name})" for v in sorted(kept, key=lambda v: int(v[1:]))]
    for c in mine:
        alloc += [ln for a in c.args if a[0] == "p" for ln in _one(a, c.dtype)]
    lines = []
    if here:  # (a parallel loop: each thread's share of CHUNK blocks makes its buffers once)
        lines = [f"for ch_{serial} in prange(({blocks} + {CHUNK - 1}) // {CHUNK}):"] + ["    " + ln for ln in alloc]
        rng = f"range(ch_{serial} * {CHUNK}, min(ch_{serial} * {CHUNK} + {CHUNK}, {blocks})"
    else:
        rng = f"range({blocks}"
    lines += [f"for blk_{serial} in {rng}):", f"    {lo_} = {lo} + blk_{serial} * {BLOCK}",
              f"    {n_} = min({BLOCK}, {hi} - {lo_})"]
    for s, seg in enumerate(segments):
        part = again[s] + [f"{v} = b{v}[{j}]" for v in loads[s]]
        for u in seg:
            part += [_unsigned(ln, i) for ln in u]
            m = _DEF.match(u[0])
            if m and m.group(1) in kept:
                part.append(f"b{m.group(1)}[{j}] = {m.group(1)}")
        if part:
            lines += [f"    for {i} in range({lo_}, {lo_} + {n_}):"] + ["        " + ln for ln in part]
        for c in at[s] if s < len(at) else ():
            lines.append("    " + _invoke(c, n_, [f"k{a}.ctypes.data" if a[0] == "p" else direct[a] if a in direct
                                                  else f"b{a}.ctypes.data" for a in c.args]))
    if here:  # (the block loop inside the chunk loop)
        cut = 1 + len(alloc)
        lines = lines[:cut] + ["    " + ln for ln in lines[cut:]]
    return lines, ([] if here else alloc)


_OUT = re.compile(r"(out\d+)\[([^\[\]]*)\] = ")


def _unsigned(line: str, i: str) -> str:
    """An output's store at the block's index ``i`` made with an unsigned index: a block's loop starts at a
    variable, so numba's check for a negative index stays in it and keeps LLVM from vectorizing the pass
    (bench/vector_math.py --blocks: a multiply pass into the output 1.5x slower)."""
    m = _OUT.match(line)
    if m is None:
        return line
    index = ", ".join(f"np.uint64({t})" if t == i else t for t in m.group(2).split(", "))
    return f"{m.group(1)}[{index}] = {line[m.end():]}"


_LOAD = re.compile(r"(v\d+) = (in\d+)\[np\.uint64\((.*)\)\]")


def _direct(segments: list[list[list[str]]], calls: list[Call], outs: set[str], dtypes: dict[str, np.dtype],
            i: str, lo: str) -> dict[str, str]:
    """Operands NumPy's loop reads straight from the kernel's input (their address at the block's start),
    not copied into a buffer first: a load of an input element by the block's index itself (consecutive
    elements, the stride the loop was fetched for) in the call's dtype. Not in an assignment's kernel
    (``dst``), whose writes may land where its reads lie: there each element is loaded before any write."""
    lines = [ln for seg in segments for u in seg for ln in u]
    if any(ln.startswith("dst[") for ln in lines):
        return {}
    loads = {m.group(1): m for m in map(_LOAD.fullmatch, lines) if m}
    out: dict[str, str] = {}
    for c in calls:
        for a, st in zip(c.args, c.strides):
            m = loads.get(a)
            if m is None or a in outs or dtypes.get(a) != c.dtype or st != c.dtype.itemsize:
                continue
            terms = m.group(3).split(" + ")  # (rejoined as split: a parenthesized term comes back whole)
            if terms.count(i) != 1 or any(re.search(rf"\b{i}\b", t) for t in terms if t != i):
                continue
            offset = " + ".join(lo if t == i else t for t in terms)
            out[a] = f"{m.group(2)}.ctypes.data + np.uint64({c.dtype.itemsize} * ({offset}))"
    return out


def _levels(inner: list[list[str]], calls: list[Call]) -> tuple[list[list[list[str]]], list[list[Call]]]:
    """The loop body's statements in segments, and the calls between them (``at[s]``: after segment ``s``):
    each statement as early as what it reads allows, each call right after its operands' segment, so calls
    that do not feed each other share one pass over the block (Black-Scholes' log and exp(-r T), then its
    two exps: three passes, not five, and numba compiles fewer loops). Definitions of ``v`` variables are
    pure and move freely; any other statement (a store, an accumulation, a branch) and a read of memory keep
    their order among such statements."""
    avail: dict[str, int] = {}  # a name -> the segment from which it holds its value
    placed: list[tuple[int, list[str]]] = []
    at: list[list[Call]] = []
    last = 0  # the segment of the latest statement whose order is kept
    for u in inner:
        if u[0].startswith("#np_loop "):
            c = calls[int(u[0].split()[1])]
            level = max((avail.get(a, 0) for a in c.args), default=0)
            at += [[] for _ in range(level + 1 - len(at))]
            at[level].append(c)
            avail[c.out] = level + 1
            continue
        m = _DEF.match(u[0])
        text = "\n".join(u)
        reads = set(_NAME.findall(text if m is None else text[m.end():]))
        level = max((avail.get(n, 0) for n in reads), default=0)
        if m is None or len(u) > 1 or "[" in text:
            level = last = max(level, last)
        for ln in u:
            d = _SET.match(ln)
            if d:
                avail[d.group(1)] = level
        placed.append((level, u))
    segments: list[list[list[str]]] = [[] for _ in range(max([len(at)] + [lv + 1 for lv, _ in placed]))]
    for level, u in placed:
        segments[level].append(u)
    return segments, at


_SET = re.compile(r"([A-Za-z_]\w*) (?:[-+*/]?=) ")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _reloads(segments: list[list[list[str]]]) -> list[list[str]]:
    """Per segment, the loads it repeats: a name other than a ``v`` variable that an earlier segment set per
    element and this one reads (a column reduction's accumulator, ``a1 = a1_c[...]``, added to after the
    call) is loaded again, which is right only for a load from an array nothing in between writes, set
    once; anything else is ``Unplaced``."""
    sets: list[dict[str, list[str]]] = []  # per segment: name -> the lines setting it
    stored: list[set[str]] = []  # per segment: arrays written
    for seg in segments:
        d: dict[str, list[str]] = {}
        arrays: set[str] = set()
        for ln in (ln for u in seg for ln in u):
            m = _SET.match(ln)
            if m:
                d.setdefault(m.group(1), []).append(ln)
            elif _STORE.match(ln):
                arrays.add(ln.split("[", 1)[0])
        sets.append(d)
        stored.append(arrays)
    out: list[list[str]] = []
    for t, seg in enumerate(segments):
        text = "\n".join(ln for u in seg for ln in u)
        used = set(_NAME.findall(text))
        again = []
        for name in sorted(used):
            if name.startswith("v") and name[1:].isdigit():
                continue
            earlier = [(s, ln) for s in range(t) for ln in sets[s].get(name, [])]
            if not earlier:
                continue
            if len(earlier) != 1:
                raise Unplaced(f"{name} is set in several parts of a block")
            s, ln = earlier[0]
            rhs = ln.split(" = ", 1)[1] if " = " in ln else ""
            src = rhs.split("[", 1)[0]
            if not re.fullmatch(r"[A-Za-z_]\w*\[.*\]", rhs) or _VAR.search(rhs) or any(
                    src in stored[r] for r in range(s, t)):
                raise Unplaced(f"{name} is computed in one part of a block and read in another")
            again.append(ln)
        out.append(again)
    return out


def _codegen(nargs: int) -> Any:
    """LLVM for a call of NumPy's strided loop on ``nargs`` arrays (inputs, then the output): the
    arguments ``(fn, context, aux, n, ptr0, stride0, ptr1, stride1, ...)`` are integers, the loop's
    ``data``, ``dimensions`` and ``strides`` arrays live on the kernel's stack."""
    from llvmlite import ir

    def codegen(cgctx, builder, signature, args):
        i8p, i64 = ir.IntType(8).as_pointer(), ir.IntType(64)
        fnty = ir.FunctionType(ir.IntType(32), [i8p, i8p.as_pointer(), i64.as_pointer(), i64.as_pointer(), i8p])
        data = builder.alloca(i8p, nargs)
        strides = builder.alloca(i64, nargs)
        dims = builder.alloca(i64, 1)
        builder.store(args[3], dims)
        for k in range(nargs):
            builder.store(builder.inttoptr(args[4 + 2 * k], i8p), builder.gep(data, [ir.Constant(i64, k)]))
            builder.store(args[5 + 2 * k], builder.gep(strides, [ir.Constant(i64, k)]))
        call = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(call, [builder.inttoptr(args[1], i8p), data, dims, strides, builder.inttoptr(args[2], i8p)])

    return codegen


def _make(name: str) -> Any:
    from numba import types
    from numba.extending import intrinsic

    if name == "np_loop1":
        def np_loop1(typingctx, fn, context, aux, n, a, sa, o, so):
            return types.int32(*[types.intp] * 8), _codegen(2)
        return intrinsic(np_loop1)

    def np_loop2(typingctx, fn, context, aux, n, a, sa, b, sb, o, so):
        return types.int32(*[types.intp] * 10), _codegen(3)
    return intrinsic(np_loop2)


def __getattr__(name: str) -> Any:
    """``np_loop1`` (a unary ufunc's loop) and ``np_loop2`` (a binary one's), made when a kernel imports
    them: importing numba costs 0.4 s, which a cell that compiles nothing does not pay."""
    if name in ("np_loop1", "np_loop2"):
        fn = globals()[name] = _make(name)
        return fn
    raise AttributeError(name)
