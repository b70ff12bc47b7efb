"""While a cell runs, the objects from before it are out of the garbage collector's walks (runner's
_old_objects_frozen): a full collection in a traced loop would otherwise walk the whole notebook heap."""

from __future__ import annotations

import gc

import numpy as np

from jupyter_fuse.runner import run_cell


def test_objects_from_before_the_cell_are_frozen_while_it_runs_and_thawed_after():
    seen = []
    ns = {"np": np, "x": np.arange(5.0), "seen": seen, "gc": gc}
    run_cell("y = x * 2\nseen.append(gc.get_freeze_count())", ns, backend="numpy", cache=False)
    assert seen[0] > 1000  # the interpreter, NumPy, the test session...
    assert gc.get_freeze_count() == 0
    np.testing.assert_array_equal(ns["y"], np.arange(5.0) * 2)


def test_garbage_the_cell_makes_is_still_collected():
    class Cyclic:
        def __init__(self) -> None:
            self.me = self

    import weakref
    refs: list = []
    ns = {"np": np, "Cyclic": Cyclic, "refs": refs, "weakref": weakref, "gc": gc}
    run_cell("for i in range(100):\n    refs.append(weakref.ref(Cyclic()))\ngc.collect()", ns, backend="numpy",
             cache=False)
    assert all(r() is None for r in refs)


def test_a_freeze_of_the_users_own_is_left_alone():
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        run_cell("y = x + 1", {"np": np, "x": np.ones(3)}, backend="numpy", cache=False)
        assert 0 < gc.get_freeze_count() <= before  # still frozen (less whatever the run freed)
    finally:
        gc.unfreeze()
