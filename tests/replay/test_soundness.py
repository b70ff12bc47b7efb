"""Property: whatever changes between runs, a cached cell leaves what plain NumPy leaves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import Twin

CELLS = [
    # in-place write into an input, a printed value, a view, the cell's value
    "y = x * alpha + b\nx += b\nprint(y.sum(), 'total')\nz = y[::2]\n(z * 2).mean()",
    # data-dependent control flow, an int() read, a slice by it
    "if (x > 0.5).sum() > 2:\n    w = x * 2\nelse:\n    w = x - 1\nn = int(x.size)\nout = w[:n // 2]\n"
    "print(f'{float(w.max()):.3f}')",
    # a dict of parameters, a function read from outside, containers built by the cell
    "r = params['lr'] * x + params['w']\nt = f(x)\nlst = [r, t, 3]\nd = {'a': r, 'b': (t, 2.5)}",
    # aliasing: a += b with b possibly a
    "a += b\nc = a * 2\nprint(c[:3])",
    # a loop steered by data, a Python scalar carried along
    "s = 0.0\nfor i in range(int(k)):\n    s = s + float(x[i])\nm = x / (s + 1.0)",
    # the cell's functions write its names (`global`) and their closures' (`nonlocal`): STORE_GLOBAL bypasses
    # the namespace's __setitem__, and a closure cell is no name at all
    "def bump(v):\n    global calls\n    calls = calls + 1\n    return v * alpha\ncalls = 0\n"
    "def totals():\n    tot = 0.0\n    def add(v):\n        nonlocal tot\n        tot += float(v.sum())\n"
    "        return tot\n    return add\nadd = totals()\nacc = []\nfor i in range(3):\n    y = bump(x)\n"
    "    acc.append(add(y))",
]


def _setup():
    rng = np.random.default_rng(0)
    x = rng.random(8)
    return {"np": np, "x": x, "b": rng.random(8), "a": rng.random(8), "alpha": 0.5, "k": np.int64(3),
            "params": {"lr": 0.1, "w": rng.random(8)}, "f": np.sin}


def _arr(ns, n, dtype=np.float64, seed=1):
    return np.random.default_rng(seed).random(n).astype(dtype)


CHANGES = {
    "edit x in place": lambda ns: ns["x"].__imul__(1.7),
    "flip x data": lambda ns: ns["x"].__isub__(0.6),
    "x longer": lambda ns: ns.__setitem__("x", _arr(ns, 12)),
    "x float32": lambda ns: ns.__setitem__("x", _arr(ns, 8, np.float32)),
    "x strided": lambda ns: ns.__setitem__("x", _arr(ns, 16)[::2]),
    "x reversed view": lambda ns: ns.__setitem__("x", _arr(ns, 8)[::-1]),
    "b is a": lambda ns: ns.__setitem__("b", ns["a"]),
    "b new": lambda ns: ns.__setitem__("b", _arr(ns, 8, seed=5)),
    "b view of a": lambda ns: ns.__setitem__("b", ns["a"][:]),
    "alpha 0.7": lambda ns: ns.__setitem__("alpha", 0.7),
    "alpha float32": lambda ns: ns.__setitem__("alpha", np.float32(0.5)),
    "alpha int": lambda ns: ns.__setitem__("alpha", 2),
    "lr edit": lambda ns: ns["params"].__setitem__("lr", 0.3),
    "w edit in place": lambda ns: ns["params"]["w"].__iadd__(1.0),
    "params new key": lambda ns: ns["params"].__setitem__("extra", 1),
    "f cos": lambda ns: ns.__setitem__("f", np.cos),
    "f sin": lambda ns: ns.__setitem__("f", np.sin),
    "k 5": lambda ns: ns.__setitem__("k", np.int64(5)),
    "k python int": lambda ns: ns.__setitem__("k", 2),
    "nothing": lambda ns: None,
}


@given(cell=st.sampled_from(range(len(CELLS))),
       changes=st.lists(st.sampled_from(sorted(CHANGES)), min_size=1, max_size=6))
def test_any_changes_between_runs_match_numpy(cell, changes):
    _changes_between_runs(cell, changes, "numpy")


@settings(max_examples=25)  # the same property through the cupy backend's replay path, without a GPU
@given(cell=st.sampled_from(range(len(CELLS))),
       changes=st.lists(st.sampled_from(sorted(CHANGES)), min_size=1, max_size=4))
def test_any_changes_between_runs_match_numpy_on_the_cupy_dry_run(cell, changes):
    _changes_between_runs(cell, changes, "cupy", dry_run=True)


def _changes_between_runs(cell: int, changes: list[str], backend: str, **options) -> None:
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    twin = Twin(_setup, backend)
    twin.run(CELLS[cell], **options)
    for name in changes:
        twin.change(CHANGES[name])
        twin.run(CELLS[cell], **options)
        twin.run(CELLS[cell], **options)  # unchanged: a replay when the first was traced


@pytest.mark.parametrize("backend, options", [("numpy", {}), ("cupy", {"dry_run": True})])
def test_replays_really_happen(backend, options):
    twin = Twin(_setup, backend)
    for cell in CELLS:
        traced = twin.run(cell, **options)
        again = twin.run(cell, **options)
        assert again.cache == "hit", (cell, again.miss_reasons)
        # a replay makes the transfers the traced run made, named and explained alike
        strip = lambda r: [(t["direction"], t["bytes"], t["name"], t["cause"]) for t in r.transfers]  # noqa: E731
        assert strip(again) == strip(traced)
