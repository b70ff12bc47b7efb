"""NumPy's global state a cell sets (np.errstate blocks, np.seterr, np.set_printoptions, np.printoptions):
a replay sets it where the traced run did, so it warns, raises and prints as NumPy does, and leaves the
state as the cell leaves it."""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest

import jupyter_fuse
from helpers import Twin
from jupyter_fuse import program


def _ns() -> dict:
    return {"np": np, "w": np.array([0.0, 1.0, 2.0]), "s": np.array([0.0, 1.0, 3.0])}


def _run(source: str, ns: dict, backend: str | None) -> tuple[list[str], str, dict, object]:
    """One run under warnings and default-like error modes: (its warnings, sorted; what it printed; the error
    modes it left; the report, or None for plain NumPy)."""
    text, report = io.StringIO(), None
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"), \
            contextlib.redirect_stdout(text):
        warnings.simplefilter("always")
        if backend is None:
            exec(source, ns)
        else:
            report = jupyter_fuse.run_cell(source, ns, backend=backend)
        left = np.geterr()
    return sorted(str(c.message) for c in caught), text.getvalue(), left, report


def _inputs(k: int) -> dict:
    """The k-th run's inputs: zeros where some runs divide by them."""
    return {"w": np.array([0.0, 1.0, 2.0]) - (k % 2), "s": np.array([0.0, 1.0, 3.0]) * (k + 1)}


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("source", [
    'with np.errstate(divide="ignore", invalid="ignore"):\n    p = np.where(w > 0, s / w, 1.0)\nr = p.sum()\n',
    "y = s / w\nwith np.errstate(divide='ignore', invalid='ignore'):\n    z = s / w\nt = y + z\n",
    "out = []\nfor i in range(3):\n    d = w - i\n    with np.errstate(divide='ignore', invalid='ignore'):\n        q = s / d\n"
    "    out.append(np.nan_to_num(q).sum())\n",
    "with np.errstate(invalid='ignore'):\n    z = s / w\n    v = np.sqrt(z - 1)\nm = v[1:].max()\nn = np.log(w)\n",
    "np.seterr(divide='ignore')\nq = s / w\nr = np.log(w - 1)\n",
])
def test_cells_with_errstate_blocks_replay_and_warn_where_numpy_warns(source, backend, monkeypatch):
    """The error modes each plan ran under are steps of the tape: a replay sets them before the plans that
    ran under them (and the modes the cell leaves, np.seterr's, at its end), so it warns of what NumPy warns
    of on the new inputs, inside the block and out. (The cpu backend's compiled kernels warn of nothing:
    there, no warning NumPy did not give.)"""
    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)  # (the replays as compiled programs where they compile)
    plain, fused = _ns(), _ns()
    for k in range(4):
        for ns in (plain, fused):
            ns.update(_inputs(k))
        want, _, left_p, _ = _run(source, plain, None)
        got, _, left_f, r = _run(source, fused, backend)
        assert r.cache == ("miss" if k == 0 else "hit"), (k, r.miss_reasons)
        if backend == "numpy":
            assert got == want, k
        else:
            assert set(got) <= set(want), (k, got, want)
        assert left_f == left_p
        for name in ("p", "r", "t", "out", "m", "n", "q"):
            if name in plain:
                np.testing.assert_array_equal(np.asarray(fused[name]), np.asarray(plain[name]))


def test_a_replay_begins_in_the_error_state_its_cell_began_in():
    """The steps set absolute modes: a run that begins in other modes is a miss that names them."""
    source = "with np.errstate(divide='ignore'):\n    q = s / w\nr = np.log(w)\n"
    ns = _ns()
    _run(source, ns, "numpy")
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = jupyter_fuse.run_cell(source, ns, backend="numpy")
    assert r.cache == "miss" and "error state" in r.miss_reasons[0] and "invalid='warn' -> 'ignore'" \
        in r.miss_reasons[0], r.miss_reasons


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_raising_errstate_block_replays_and_raises_where_numpy_raises(backend, monkeypatch):
    """Under ``np.errstate(divide='raise')`` NumPy raises at the line: the replay runs kernel by kernel
    (compiled code sets no FloatingPointError), and a replay that raises is traced instead, which raises
    as NumPy does."""
    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    source = "with np.errstate(divide='raise'):\n    q = s / w\nr = q.sum()\n"
    twin = Twin(lambda: {"np": np, "s": np.ones(3), "w": np.array([1.0, 2.0, 4.0])}, backend=backend)
    assert twin.run(source).cache == "miss"
    twin.change(lambda ns: ns.update(w=np.array([2.0, 4.0, 8.0])))
    r = twin.run(source)
    assert r.cache == "hit" and "kernel by kernel" in r.program_note, r.program_note
    assert backend == "numpy" or "raise" in r.program_note, r.program_note
    twin.change(lambda ns: ns.update(w=np.array([2.0, 0.0, 8.0])))
    assert twin.run(source) is None  # (both raised FloatingPointError: Twin compares the exceptions)


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("source", [
    "np.set_printoptions(precision=3, suppress=True)\nprint(x / 3)\nprint(f'{x.sum() / 7}')\n",
    "print(x / 3)\nnp.set_printoptions(precision=2)\nprint(x / 7)\nnp.set_printoptions(precision=8)\nprint(x / 7)\n",
    "with np.printoptions(precision=2, suppress=True):\n    print(x / 3)\nprint(x / 3)\n",
    "with np.printoptions(precision=2) as opts:\n    print(x / 3, opts['precision'])\n",
    "for d in (3, 7):\n    with np.printoptions(precision=d):\n        print(x / d)\n",
])
def test_print_options_a_cell_sets_replay_and_print_as_numpy_prints(source, backend):
    plain, fused = {"np": np}, {"np": np}
    for k in range(3):
        x = np.linspace(0.0, 1.0, 5) + k
        plain["x"], fused["x"] = x.copy(), x.copy()
        with np.printoptions():  # (each run begins with NumPy's default options, and gives back what it set)
            _, want, _, _ = _run(source, plain, None)
            options = np.get_printoptions()
        with np.printoptions():
            _, got, _, r = _run(source, fused, backend)
            assert np.get_printoptions() == options
        assert got == want and r.cache == ("miss" if k == 0 else "hit"), (k, r.miss_reasons)


def test_a_replay_that_fails_gives_back_the_print_options_it_began_with():
    """The replay set the options, then a branch went the other way: the cell is traced instead, from
    the options the run began with (its first print is formatted under them)."""
    source = "print(x / 3)\nnp.set_printoptions(precision=2)\nif x.sum() > 10:\n    y = 1\nprint(x / 7)\n"
    plain, fused = {"np": np}, {"np": np}
    for k, x in enumerate([np.ones(3), np.full(3, 2.0), np.full(3, 5.0)]):
        plain["x"], fused["x"] = x.copy(), x.copy()
        with np.printoptions():
            _, want, _, _ = _run(source, plain, None)
        with np.printoptions():
            _, got, _, r = _run(source, fused, "numpy")
        assert got == want and r.cache == ["miss", "hit", "miss"][k], (k, r.cache, r.miss_reasons)
