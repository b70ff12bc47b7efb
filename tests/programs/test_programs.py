"""The realistic loop programs of bench/programs.py, at a tiny size, against plain NumPy.

Each runs traced (every name, dtype, value and alias as NumPy leaves them) and then as a user
re-runs it: replayed from the plan cache while its guards hold, on the same and on changed data.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "replay"))

from harness import check  # noqa: E402
from helpers import Twin  # noqa: E402
from programs import PROGRAMS  # noqa: E402


@pytest.fixture(autouse=True)
def _empty_plan_cache():
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()


def _setup(program):
    return lambda: {"__name__": "__main__", **program.setup(program.sizes["tiny"])}


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_matches_numpy(program, backend):
    check(program.source, _setup(program), backend=backend, cache=False)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_with_small_bounds_matches_numpy(program, monkeypatch):
    """Long loops flush their graph every BOUND ops and drop unreachable values past GC_AT: with
    both tiny, the tiny programs go through those paths many times."""
    from jupyter_fuse import session

    monkeypatch.setattr(session, "BOUND", 7)
    monkeypatch.setattr(session, "GC_AT", 4)
    check(program.source, _setup(program), backend="numpy", cache=False)
    check(program.source, _setup(program), backend="cpu")


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_replays(program):
    twin = Twin(_setup(program), backend="cpu")
    assert twin.run(program.source).cache == "miss"
    r = twin.run(program.source)  # state carried over from the first run: a user's re-run
    if program.steers:  # the residual Python reads is another one now: traced anew, and says where
        assert r.cache == "miss" and "(float()): value" in r.miss_reasons[0], r.miss_reasons
    else:
        assert r.cache == "hit", r.miss_reasons


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_replays_on_fresh_inputs(program):
    """Re-run from the same starting values (a notebook re-run after re-running its setup cell)."""
    twin = Twin(_setup(program), backend="cpu")
    twin.run(program.source)
    fresh = _setup(program)()
    twin.change(lambda ns: ns.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in fresh.items()}))
    r = twin.run(program.source)
    assert r.cache == "hit", r.miss_reasons
