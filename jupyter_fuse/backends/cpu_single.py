"""A kernel NumPy runs (``single``: a matmul, a library op) called from a compiled replay program.

A program (``cpu_program``) calls numba kernels only; a time step holding one matmul would leave the
whole step to Python, kernel by kernel. Here such a kernel becomes a small numba function that makes
its operands' views from the program's flat arrays and calls NumPy's own op through numba's object
mode (``numba.objmode``: a few microseconds a call, less than a kernel launch from Python). The op is
NumPy's, so the values are NumPy's to the bit; the program's loop rolls around it like around any kernel.
A call that ran outside the trace (``np.linalg.inv(S)`` every step) is called the same way
(``python_call``): the program is not cut at it.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable

import numpy as np

from ..ir import Node
from . import cpu_blas, cpu_index
from ..views import element_layout
from .cpu_render import KERNEL_DTYPES
from .numpy import as_result, run_node

# what ``run_node`` and ``as_result`` read of a node: a stand-in keeps no graph alive
_Op = namedtuple("_Op", "op params shape dtype layout")
_FNS: dict[tuple, Any] = {}


def single_call(kernel: Any) -> tuple[Any, list[tuple]] | None:
    """(dispatcher, the call's arguments as ``CpuBackend.call_spec`` lists them) for a kernel of one op
    NumPy runs, or None where a program cannot call it (an assignment, a 0-d operand, a strided
    storage, a dtype the program does not hold)."""
    if len(kernel.nodes) != 1:
        return None
    node: Node = kernel.nodes[0]
    if node.op in ("setitem", "view") or node.layout is not None:
        return None
    args = _arguments(node.args, node)
    if args is None:
        return None
    op = _Op(node.op, node.params, node.shape, node.dtype, None)
    operands = [(a.ndim, a.dtype.itemsize) for a in node.args]
    if node.op == "matmul" and node.dtype in (np.float64, np.float32) and cpu_blas.available() \
            and all(a.dtype == node.dtype and a.ndim <= 2 for a in node.args):
        # NumPy's loop itself, natively (``cpu_blas``): one function per operands' ranks serves every shape
        key: tuple = ("blas", node.dtype, node.args[0].ndim, node.args[1].ndim, node.ndim)
        return _function(key, lambda: _numpy_op(op), operands, blas=node.dtype), args
    key = (node.op, repr(node.params), node.dtype, node.shape, tuple((a.dtype, a.shape) for a in node.args))
    return _function(key, lambda: _numpy_op(op), operands), args


def python_call(key: tuple, make: Callable[[], Callable[..., None]], nodes: list[Node],
                out: Node, what: tuple | None = None) -> tuple[Any, list[tuple]] | None:
    """(dispatcher, arguments) for a call the program makes in object mode: ``make()`` gives the Python
    function, called with a view of each of ``nodes`` and then ``out`` (the program's array for the
    result, which it fills). ``key`` names the function: calls with one key share one compile. Where
    ``cpu_index`` makes the call (``what``: function, arguments, written chain), its numba function is
    called instead, without object mode. None where an operand cannot be read from the program's flat arrays."""
    args = _arguments(nodes, out)
    if args is None:
        return None
    operands = [(a.ndim, a.dtype.itemsize) for a in nodes]
    made = cpu_index.native(*what[:3], nodes, out, what[3]) if what is not None else None
    if made is not None:
        return _function(("native", made[0], tuple(map(repr, made[1])), tuple(operands)), make, operands,
                         native=made), args
    return _function(key, make, operands), args


def _arguments(nodes: Any, out: Node) -> list[tuple] | None:
    """The call's arguments: each operand's shape, then its storage with the offset and strides of its
    elements there, and the output; None where the program does not hold one of them (a 0-d or strided
    operand, a dtype it does not compile)."""
    if out.dtype not in KERNEL_DTYPES:
        return None
    args: list[tuple] = []
    for a in nodes:
        flat = element_layout(a, a.shape) if a.shape and a.dtype in KERNEL_DTYPES else None
        if flat is None:
            return None
        args += [("const", int(d)) for d in a.shape]
        args.append(("read", a.storage(), (flat[0],) + flat[1]))
    args.append(("out", out))
    return args


def _function(key: tuple, make: Callable[[], Callable[..., None]], operands: list[tuple[int, int]],
              blas: Any = None, native: tuple | None = None) -> Any:
    fn = _FNS.get(key)
    if fn is None:
        if len(_FNS) > 256:  # a bound: forget the oldest
            _FNS.pop(next(iter(_FNS)))
        fn = _FNS[key] = _compile(make() if native is None else None, operands, blas, native)
    return fn


def _native_matmul(nd1: int, nd2: int) -> str:
    """The call of ``cpu_blas``'s matmul as NumPy's loop sees the operands: a 1-D operand's missing core
    dimension has size 1 and stride 0, and so has the output's (C-ordered: the program's array)."""
    dm, sam = ("n0_0", "t0_0") if nd1 == 2 else ("one", "zero")
    dn, san = ("n0_1", "t0_1") if nd1 == 2 else ("n0_0", "t0_0")
    dp, sbp = ("n1_1", "t1_1") if nd2 == 2 else ("one", "zero")
    osm, osp = {(2, 2): (dp, "one"), (2, 1): ("one", "zero"), (1, 2): ("zero", "one"), (1, 1): ("zero", "zero")}[(nd1, nd2)]
    # (int64 values, not literals: numba would compile the matmul again for each pattern of literals)
    return (f"    one, zero = np.int64(1), np.int64(0)\n    matmul({dm}, {dn}, {dp}, in0, o0, {sam}, {san}, in1, o1, "
            f"t1_0, {sbp}, out.reshape(out.size), {osm}, {osp})\n")


def _numpy_op(op: _Op) -> Callable[..., None]:
    """The object-mode body of a kernel of one NumPy op: its operands' views, then the output."""
    if op.op == "matmul" and op.shape:  # (the most common: NumPy writes into the program's array, its own
        def call(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:  # loop, so its own bits, with no copy)
            np.matmul(a, b, out=out)
    elif op.op == "matmul":  # (a 0-d result: the program's array holds its one element)
        def call(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
            out[0] = np.matmul(a, b)
    else:
        def call(*arrays: np.ndarray) -> None:  # (Python, in object mode: NumPy's op, then into the program's array)
            arrays[-1][...] = as_result(op, run_node(op, list(arrays[:-1])))
    return call


def _compile(call: Callable[..., None] | None, operands: list[tuple[int, int]], blas: Any = None,
             native: tuple | None = None) -> Any:
    """The numba function: ``(dims..., flat, offset, strides...)`` per operand, then the output. ``blas``:
    the dtype of a float64 or float32 matmul of operands of rank 1 or 2, NumPy's loop called natively
    (``cpu_blas``), not ``call``; ``native``: (a numba function, its arguments) from ``cpu_index``."""
    import numba

    params, lines = [], []
    for j, (nd, item) in enumerate(operands):
        dims = [f"n{j}_{d}" for d in range(nd)]
        strides = [f"t{j}_{d}" for d in range(nd)]
        params += dims + [f"in{j}", f"o{j}"] + strides
        lines.append(f"    v{j} = as_strided(in{j}[o{j}:], ({', '.join(dims)},), "
                     f"({', '.join(f'{t} * {item}' for t in strides)},))")
    views = "".join(f"v{j}, " for j in range(len(operands)))
    if blas is not None:
        body = _native_matmul(operands[0][0], operands[1][0])
    elif native is not None:
        named = [f"v{a[1]}" if a[0] == "a" else "out" if a[0] == "out" else repr(a[1]) for a in native[1]]
        body = "\n".join(lines) + f"\n    native({', '.join(named)})\n"
    else:
        body = "\n".join(lines) + f"\n    with objmode():\n        call({views}out)\n"
    source = f"def kernel({', '.join(params + ['out'])}):\n" + body

    namespace: dict[str, Any] = {"as_strided": np.lib.stride_tricks.as_strided, "objmode": numba.objmode,
                                 "call": call}
    if blas is not None:
        namespace.update(matmul=cpu_blas.matmul(blas), np=np)
    if native is not None:
        namespace["native"] = native[0]
    exec(compile(source, "<jupyter_fuse single>", "exec"), namespace)  # noqa: S102 - our generated code
    return numba.njit(namespace["kernel"])
