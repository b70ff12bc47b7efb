"""NumPy's answers a traced reduction or matmul needs (its result dtype; its own error for a bad axis,
dtype or shape) are asked of NumPy once per distinct question, not at every call of a loop, and are
the same answers as asking every time."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check

from jupyter_fuse import trace

SETUP = "x = np.arange(12.0).reshape(3, 4); i8 = np.arange(12, dtype=np.int8).reshape(3, 4); b = x > 3"

CELLS = [
    "r = [float(x.sum()) for _ in range(3)]",
    "r = [i8.sum(axis=0) for _ in range(2)] + [i8.sum(axis=0, dtype=np.int8), i8.sum(axis=0)]",  # dtype in the key
    "r = [b.sum(), b.sum(axis=1), b.mean(axis=True), b.any(axis=0)]",  # bool axis and int axis kept apart
    "r = [x.var(ddof=1), x.var(ddof=1.0), x.var(ddof=0), x.std(axis=[0, 1])]",  # a list axis: asked every time
    "r = [x.sum(axis=-1, keepdims=True), x.sum(axis=-1), x[:0].sum(axis=0), x[:0].max(axis=1)]",
    "r = [x @ x.T, x @ x.T, i8 @ x.T, (i8 @ i8.T).dtype]",
]


@pytest.mark.parametrize("source", CELLS)
def test_remembered_answers_are_numpys(source):
    check(source, SETUP, backend="cpu")


@pytest.mark.parametrize("source", ["r = x.sum(axis=2)", "r = x.sum(axis=(0, 0))", "r = x @ x",
                                    "r = x.sum(dtype='not a dtype')"])
def test_numpys_error_every_time_not_only_the_first(source):
    """A question NumPy refuses is not remembered: the second run raises NumPy's error again."""
    for _ in range(2):
        check(source, SETUP, backend="cpu", cache=False)


def test_a_loop_of_reductions_asks_numpy_once(monkeypatch):
    asked = []
    real = trace.REDUCTIONS["sum"]
    monkeypatch.setitem(trace.REDUCTIONS, "sum", lambda a, **kw: asked.append(kw) or real(a, **kw))
    monkeypatch.setattr(trace, "_REDUCE_RULES", {})
    f = check("s = 0.0\nfor k in range(20):\n    s += float((x * k).sum(axis=1).sum())", SETUP, backend="cpu",
              cache=False)
    assert f.error is None
    assert len(asked) == 2, asked  # (axis=1 on a 2-D array, then axis=None on a 1-D one)
