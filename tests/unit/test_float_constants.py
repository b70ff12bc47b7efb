"""A float constant is an argument of its plan and kernels, not part of them: a loop whose coefficient
changes every step (a Python float from a ``math.sqrt`` of a synced value, a decaying rate) plans and
renders once, and every step's kernels, launched or called from a compiled replay, use that step's value."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from jupyter_fuse import fuse, plans, program, session
from jupyter_fuse.cache import PLAN_CACHE

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "replay"))

from harness import check  # noqa: E402
from helpers import Twin  # noqa: E402

# a planet's leapfrog orbit: ``d`` is a new Python float each step, read back from the arrays
ORBIT = """\
import math
r = np.array([1.0, 0.0])
v = np.array([0.0, 1.2])
for step in range(n):
    d = math.sqrt(r[0] ** 2 + r[1] ** 2)
    v += -0.01 * r / d ** 3
    r += 0.01 * v
"""

# gradient steps with a rate that decays each step: no sync, one graph cut in chunks (a small BOUND)
DECAY = """\
lr = 0.5
for i in range(n):
    w = w - lr * (w - target) + np.float32(0.25) * lr * w
    lr *= 0.97
"""


def _counting(monkeypatch) -> list:
    made: list = []
    real = fuse.partition
    monkeypatch.setattr(fuse, "partition", lambda *a, **k: made.append(1) or real(*a, **k))
    plans.clear()
    PLAN_CACHE.clear()
    return made


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_float_computed_each_step_is_planned_once(backend, monkeypatch):
    made = _counting(monkeypatch)
    check(ORBIT, lambda: {"np": np, "n": 40}, backend=backend, cache=False)
    assert len(made) <= 4, len(made)  # (was one plan a step: ``d`` was part of the plan's key)


@pytest.mark.parametrize("opts", [{"backend": "cpu"}, {"backend": "cupy", "emulate": True}], ids=["cpu", "cuda-emulated"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chunks_with_other_float_constants_share_a_plan_and_keep_their_values(dtype, opts, monkeypatch):
    """Each chunk's kernels launch with its own rates (the CUDA kernels too, run on the host)."""
    made = _counting(monkeypatch)
    monkeypatch.setattr(session, "BOUND", 30)
    setup = lambda: {"np": np, "n": 200, "w": np.linspace(-1, 1, 16).astype(dtype),  # noqa: E731
                     "target": np.ones(16, dtype)}
    check(DECAY, setup, cache=False, **opts)
    assert len(made) <= 6, len(made)


def test_a_compiled_replay_passes_each_steps_own_float(monkeypatch):
    """The replay's program calls one kernel of one plan every step: its rate is a table of the steps'
    values (the program reads each step's constant, not the plan's first graph's)."""
    monkeypatch.setattr(session, "BOUND", 30)
    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    PLAN_CACHE.clear()
    w0 = np.linspace(-1, 1, 16)
    twin = Twin(lambda: {"np": np, "n": 200, "w": w0.copy(), "target": np.ones(16)}, backend="cpu")
    twin.run(DECAY)
    for _ in range(2):
        twin.change(lambda ns: ns.update(w=w0.copy()))
        r = twin.run(DECAY)
        assert r.cache == "hit", r.miss_reasons
        assert "compiled: " in r.program, (r.program, r.program_note)
