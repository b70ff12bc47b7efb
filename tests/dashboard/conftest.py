"""Known Reports to build displays from: one hand-made fused run, one real NumPy run."""

from __future__ import annotations

import numpy as np
import pytest

import jupyter_fuse as jf
from jupyter_fuse.report import Report

SOURCE = "y = np.sin(x) ** 2 + np.cos(x) ** 2\nm = y.mean()\nz = (y - m) * 2\n"


def _node(i, op, kind, args=(), kernel=None, lines=(), dtype="float64", shape=(1000,), params=""):
    return {"id": i, "op": op, "kind": kind, "dtype": dtype, "shape": list(shape), "args": list(args),
            "lines": list(lines), "kernel": kernel, "params": params}


def fused_report() -> Report:
    """What a fusing backend reports for SOURCE: 2 kernels, a reduction cut, a cache miss, transfers."""
    nodes = [
        _node(0, "input", "input", params="input slot 0"),
        _node(1, "sin", "op", [0], "k0", [1]),
        _node(2, "const", "input", dtype="None", shape=(), params="constant 2"),
        _node(3, "power", "op", [1, 2], "k0", [1]),
        _node(4, "cos", "op", [0], "k0", [1]),
        _node(5, "power", "op", [4, 2], "k0", [1]),
        _node(6, "add", "op", [3, 5], "k0", [1]),
        _node(7, "mean", "op", [6], "k0", [2], shape=()),
        _node(8, "subtract", "op", [6, 7], "k1", [3]),
        _node(9, "multiply", "op", [8, 2], "k1", [3]),
    ]
    kernels = [
        {"name": "k0", "ops": ["sin", "power", "cos", "power", "add", "mean"], "lines": [1, 2],
         "bytes_read": 8000, "bytes_written": 8008, "time": 0.002, "source": "def k0(x):\n    return x\n"},
        {"name": "k1", "ops": ["subtract", "multiply"], "lines": [3], "bytes_read": 8008, "bytes_written": 8000,
         "time": 0.001, "source": "def k1(y, m):\n    return (y - m) * 2\n"},
    ]
    return Report(
        backend="cpu", ops=8, kernels=2, kernel_list=kernels, nodes=nodes, source=SOURCE,
        breaks=[{"from": "k0", "to": "k1", "line": 3, "reason": "reduction boundary: mean must finish first"}],
        transfers=[{"direction": "h2d", "bytes": 8000, "name": "x", "cause": "input read by k0"},
                   {"direction": "d2h", "bytes": 8000, "name": "z", "cause": "result left the cell"}],
        bytes_h2d=8000, bytes_d2h=8000, cache="miss",
        guards=["x.shape == (1000,)", "x.dtype == float64"], miss_reasons=["x.shape (500,) -> (1000,)"],
        times={"guard": 0.0001, "trace": 0.001, "plan": 0.0002, "compile": 0.3, "run": 0.003, "total": 0.305},
    )


@pytest.fixture
def fused() -> Report:
    return fused_report()


@pytest.fixture
def eager() -> Report:
    ns = {"np": np, "x": np.linspace(0, 1, 1000)}
    return jf.run_cell(SOURCE, ns, "numpy", fuse=False)
