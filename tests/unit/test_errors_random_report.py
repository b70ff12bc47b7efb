"""Exceptions (type, line, namespace left behind), random draws, and the Report's fields."""

from __future__ import annotations

import json
import traceback

import numpy as np
import pytest

import jupyter_fuse
from harness import assert_no_lazy, check, run_fused
from test_dropin import SETUP, cases


# -- exceptions -----------------------------------------------------------------------------

@cases(
    "c = a * 2\nL.append(c)\nD['x'] = a + 1\no.attr = a.sum()\nraise KeyError('x')",
    "c = a * 2\nL.append(c)\nd = a + b[:3]",
    "a += 1\nb += 1.5", "a[0] += 1\nc = a.reshape(7)", "c = a.sum()\nd = c[0]", "c = a * 2\nd = c.nonexistent",
    "c = a + 'x'", "c = a + None", "c = np.sin('x')", "c = u8 + -1", "c = i8 + np.int64(2**40)\nd = i8 + 2**40",
    "c = b ** -1", "c = np.zeros((2, 2)) @ np.zeros((3, 3))", "c = a @ 'x'", "c = a.clip('x')",
    "x = a.sum()\ny = undefined_name", "c = a * 2\nraise ValueError('boom')",
    "def f(x):\n    return x.sum() + q\nq = 1\nc = f(a * 2)\nd = f(a.reshape(5))",
    "c = [a * i for i in range(3)]\nd = {'s': c[0].sum(), 't': (c[1], c[2])}\ne = c[0] + None",
    "def mk(s):\n    return lambda: s\nf = mk(a + 1)\nraise RuntimeError",
    "s = {1, 2}\nt = (a * 2, b)\nraise TypeError", "del a\nc = a",
    "c = a * 2\nif c.sum() > 10:\n    raise ValueError(c.max())",
    "for i in range(3):\n    a[i] += i\n    if i == 1:\n        raise IndexError(i)",
    "c = a.T\nc += 1\nd = c.reshape(2, 2)",
    "c = np.broadcast_to(b, (3, 4))\nc += 1",
    "c = a.transpose(0, 0)", "c = np.zeros(-1)", "c = a.astype('not a dtype')",
)
def test_exception_type_line_and_namespace(source):
    f = check(source, SETUP)
    assert f.error is not None
    assert f.report is None
    assert_no_lazy(f.ns)


def test_traceback_points_at_the_user_line():
    ns = {"np": np, "a": np.arange(6.0)}
    with pytest.raises(ValueError) as info:
        jupyter_fuse.run_cell("b = a * 2\nc = b + 1\nd = c.reshape(4)\n", ns, filename="<tb-cell>")
    frames = traceback.extract_tb(info.value.__traceback__)
    cell = [fr for fr in frames if fr.filename == "<tb-cell>"]
    assert cell and cell[-1].lineno == 3
    # frames above the cell are the callers (run_cell itself); below it, none of ours
    inner = frames[[fr.filename for fr in frames].index("<tb-cell>"):]
    assert not any("jupyter_fuse" in fr.filename for fr in inner), [fr.filename for fr in inner]
    assert isinstance(ns["b"], np.ndarray) and isinstance(ns["c"], np.ndarray) and "d" not in ns
    np.testing.assert_array_equal(ns["c"], np.arange(6.0) * 2 + 1)


def test_syntax_error_is_ordinary():
    with pytest.raises(SyntaxError) as info:
        jupyter_fuse.run_cell("x = (1,\n", {"np": np})
    assert type(info.value) in (SyntaxError,) or issubclass(type(info.value), SyntaxError)
    assert "jupyter_fuse" not in type(info.value).__module__


def test_unknown_backend():
    with pytest.raises(ValueError, match="numpy"):
        jupyter_fuse.run_cell("x = 1", {}, backend="nope")


def test_report_error_field():
    f = run_fused("c = a * 2\nraise KeyError('k')", SETUP)
    assert isinstance(f.error, KeyError)
    assert isinstance(f.ns["c"], np.ndarray)


# -- random draws -------------------------------------------------------------------------------

@cases(
    "c = np.random.rand(3); d = np.random.normal(size=(2,))",
    "c = np.random.rand(3) + a[0, :3]; d = np.random.randint(0, 10, size=4)",
    "np.random.seed(5); c = np.random.rand(2)",
    "rng = np.random.default_rng(1); c = rng.random(3); d = rng.integers(0, 5, 3); e = rng.normal(a)",
    "rng = np.random.default_rng(0); c = rng.normal(size=3) + a[0, :3]",
    "c = np.random.permutation(b)", "np.random.shuffle(b)", "c = np.random.choice(b, 2)",
    "st = np.random.get_state(); c = np.random.rand(); np.random.set_state(st); d = np.random.rand()",
    "c = np.random.normal(a, 1.0); d = np.random.uniform(-a, a)",
    "x = a * 2\nc = np.random.standard_normal(x.shape) * x\nd = np.random.rand()",
    "rs = np.random.RandomState(3); c = rs.rand(4) * b; rng = np.random.default_rng(rs.randint(100))",
    "for _ in range(3):\n    a += np.random.rand(*a.shape)",
    "rng = np.random.default_rng(2)\nc = rng.standard_normal((2, 3))\nc += 1\nd = rng.permutation(c)",
    "c = np.random.rand(3)\nraise ValueError\nd = np.random.rand(3)",
)
def test_random_draws(source):
    check(source, SETUP)


def test_random_consumes_state_in_order():
    ns = {"np": np}
    np.random.seed(7)
    jupyter_fuse.run_cell("x = np.random.rand(2)\ny = x * 2\nz = np.random.rand(2)", ns)
    np.random.seed(7)
    assert np.array_equal(ns["x"], np.random.rand(2)) and np.array_equal(ns["z"], np.random.rand(2))
    np.testing.assert_array_equal(ns["y"], ns["x"] * 2)


def test_a_replayed_draw_must_return_the_value_python_saw():
    """Draws a cell's Python computes with (``x + rng.normal()``) replay from literal arguments made once;
    their values are compared as guards compare them: -0.0 is not 0.0, NaN is NaN."""
    from jupyter_fuse.cache import _same

    assert _same(1.5, 1.5) and _same(float("nan"), float("nan")) and _same(-0.0, -0.0)
    assert not _same(0.0, -0.0) and not _same(1.0, 1.0000000000000002) and not _same(1.0, float("nan"))
    assert not _same(1.0, np.float64(1.0)) and not _same(1, 1.0)
    source = ("rng = np.random.default_rng(seed)\nx, n = 0.0, 0\nfor i in range(50):\n    y = x + rng.normal()\n"
              "    if rng.random() < 0.5:\n        x, n = y, n + 1\n    a[i % 4] += x\n")
    for seed, state in ((3, "miss"), (3, "hit"), (4, "miss"), (4, "hit")):
        ns, ref = ({"np": np, "seed": seed, "a": np.zeros(4)} for _ in range(2))
        r = jupyter_fuse.run_cell(source, ns, backend="numpy")
        exec(source, ref)
        assert ns["x"] == ref["x"] and ns["n"] == ref["n"] and np.array_equal(ns["a"], ref["a"])
        assert ns["rng"].random() == ref["rng"].random()
        assert r.cache == state, (seed, r.cache, r.miss_reasons)


# -- the Report -------------------------------------------------------------------------------------

def _report(source: str = "c = np.sin(a) * 2 + b\nd = c.sum()\nprint(d)\ne = np.sort(c, axis=0)"):
    ns = {"np": np, "a": np.arange(12.0).reshape(3, 4), "b": np.arange(4.0)}
    return jupyter_fuse.run_cell(source, ns, backend="numpy"), ns


def test_report_fields():
    r, ns = _report()
    assert_no_lazy(ns)
    assert r.backend == "numpy"
    assert r.ops >= 5 and r.kernels >= 1
    assert isinstance(r.kernel_list, list) and r.kernel_list
    for k in r.kernel_list:
        assert {"name", "ops", "lines", "source", "bytes_read", "bytes_written", "time"} <= set(k), k
        assert isinstance(k["ops"], list) and isinstance(k["lines"], list) and k["time"] >= 0
        assert all(isinstance(line, int) and 1 <= line <= 4 for line in k["lines"]), k
    assert len({k["name"] for k in r.kernel_list}) == len(r.kernel_list)  # names are unique
    assert sum(k["bytes_read"] for k in r.kernel_list) > 0 and sum(k["bytes_written"] for k in r.kernel_list) > 0
    assert isinstance(r.breaks, list) and all("reason" in b for b in r.breaks)
    assert [s["line"] for s in r.syncs] == [3] and "print" in r.syncs[0]["cause"]
    assert [f["line"] for f in r.fallbacks] == [4] and r.fallbacks[0]["reason"] and "sort" in r.fallbacks[0]["op"]
    assert r.bytes_h2d == 0 and r.bytes_d2h == 0  # the NumPy backend moves nothing between devices
    assert {"trace", "plan", "compile", "run", "total"} <= set(r.times)
    assert all(v >= 0 for v in r.times.values())
    assert r.times["total"] >= r.times["run"]


def test_report_kernel_count_matches_list():
    r, _ = _report()
    assert r.kernels == len(r.kernel_list)


def test_report_to_dict_is_json():
    r, _ = _report()
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    for key in ("backend", "ops", "kernels", "kernel_list", "breaks", "fallbacks", "syncs", "bytes_h2d",
                "bytes_d2h", "times"):
        assert key in d, key
    assert d["kernels"] == r.kernels and d["times"]["total"] == r.times["total"]


def test_report_repr_is_readable():
    r, _ = _report()
    text = repr(r)
    assert text.splitlines()[0] == r.summary()
    assert "fuse[numpy]" in text and "kernels" in text
    assert "fallback (line 4)" in text and "sync (line 3)" in text
    for k in r.kernel_list:
        assert k["name"] in text


@cases("c = a[[0, 1]]", "c = np.percentile(a, 50)", "a.sort()", "c = np.median(a)", "c = a.reshape(3, 4, order='F')",
       "c = a + 'x' if False else a.astype('U3')", "c = np.concatenate([a, a], dtype=np.float32)", "c = a.view(np.int64)",
       "a[a > 2] = 0", "c = np.dot(a[None], a.T[None])", "c = a.sum(out=np.zeros(()))")
def test_unsupported_is_a_reported_fallback(source):
    ns = {"np": np, "a": np.arange(12.0).reshape(3, 4)}
    r = jupyter_fuse.run_cell(source, ns)
    assert r.fallbacks and all(f["reason"] and f["line"] == 1 for f in r.fallbacks), r.fallbacks
    assert_no_lazy(ns)
    check(source, lambda: {"np": np, "__name__": "__main__", "a": np.arange(12.0).reshape(3, 4)})


def test_fully_traced_cell_has_no_fallbacks():
    r, _ = _report("c = np.sin(a) * 2 + b\nd = (c > 1).sum(axis=0)\ne = c.T @ c\na += 1")
    assert r.fallbacks == [] and r.syncs == []


def _warned(source: str, backend: str | None) -> tuple[list[str], dict]:
    """The warnings a cell gives (their texts, sorted) and its namespace: plain NumPy, or run_cell."""
    import warnings

    ns = {"np": np, "w": np.array([0.0, 1.0, 2.0]), "s": np.array([0.0, 1.0, 3.0]), "out": []}
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        if backend is None:
            exec(source, ns)
        else:
            jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
    return sorted(str(c.message) for c in caught), ns


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("source", [
    'with np.errstate(divide="ignore", invalid="ignore"):\n    p = np.where(w > 0, s / w, 1.0)\nr = p.sum()\n',
    "y = s / w\nwith np.errstate(divide='ignore', invalid='ignore'):\n    z = s / w\nt = y + z\n",
    "y = s / w\nwith np.errstate(all='raise'):\n    z = s + 1\nt = float(y[1] + z[0])\n",
    "for i in range(3):\n    d = w - i\n    with np.errstate(divide='ignore', invalid='ignore'):\n        q = s / d\n"
    "    out.append(float(np.nan_to_num(q).sum()))\n",
    "with np.errstate(invalid='ignore'):\n    z = s / w\n    v = np.sqrt(z - 1)\nm = v[1:].max()\n",
])
def test_values_computed_after_an_errstate_block_warn_as_numpy_warned_where_they_were_made(source, backend):
    """NumPy warns (or not) where an op runs, under the error state of that line; a lazy value computed after
    an ``np.errstate`` block ended warned under the state of the line that needed it (an `invalid value
    encountered in divide` the cell had silenced, from jupyter_fuse/backends/numpy.py), or raised nothing
    that NumPy had warned (a value made before a raising block, computed in it). The pending values are
    computed under the state they were made in, when it changes. (The cpu backend's compiled kernels warn of
    nothing at all: there, no warning NumPy did not give.)"""
    want, ref = _warned(source, None)
    got, ns = _warned(source, backend)
    if backend == "numpy":
        assert got == want
    else:  # (compiled kernels warn of nothing: NumPy's own loops do)
        assert set(got) <= set(want), (got, want)
    for name in ("p", "r", "t", "out", "m"):
        if name in ref:
            np.testing.assert_array_equal(np.asarray(ns[name]), np.asarray(ref[name]))
