"""``%%fuse`` displays the bundle; ``--compare`` checks against eager NumPy and never hides a mismatch."""

from __future__ import annotations

import numpy as np
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

import jupyter_fuse as jf
from jupyter_fuse.dashboard import HISTORY, mime
from jupyter_fuse.dashboard.compare import compare_cell, diff


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()  # start_ipython returns None once the test shell runs
    shell.run_line_magic("load_ext", "jupyter_fuse")
    shell.run_cell("import numpy as np; x = np.linspace(0, 1, 100)")
    return shell


def _run(ip, cell):
    with capture_output() as cap:
        result = ip.run_cell(cell)
    result.raise_error()
    return cap


def test_cell_displays_the_bundle_and_records_it(ip):
    before = len(HISTORY.runs)
    cap = _run(ip, "%%fuse -b numpy\ny = np.sin(x) * 2")
    (out,) = [o for o in cap.outputs if mime.REPORT_MIME in o.data]
    assert out.data[mime.REPORT_MIME]["ops"] == 2 and "text/html" in out.data
    assert out.data["text/plain"].startswith("fuse[numpy]: 2 ops")
    assert len(HISTORY.runs) == before + 1


def test_quiet_displays_nothing_but_records(ip):
    before = len(HISTORY.runs)
    cap = _run(ip, "%%fuse -q -b numpy\ny = np.cos(x)")
    assert not cap.outputs and not cap.stdout
    assert len(HISTORY.runs) == before + 1


def test_compare_agrees(ip):
    cap = _run(ip, "%%fuse -b numpy --compare -o rep\nx2 = x.copy()\nx2 += 1\nz = (x2 * 3).astype(np.float32)\nz")
    (out,) = [o for o in cap.outputs if mime.COMPARE_MIME in o.data]
    c = out.data[mime.COMPARE_MIME]
    assert c["agree"] and {"x2", "z", "(cell value)"} <= set(c["checked"])
    assert c["eager"]["kernels"] == c["eager"]["ops"]
    assert "results agree with eager NumPy" in out.data["text/html"]
    assert ip.user_ns["z"].dtype == np.float32 and ip.user_ns["rep"].ops == c["fused"]["ops"]


def test_dashboard_magic(ip):
    cap = _run(ip, "%fuse_dashboard")
    (out,) = cap.outputs
    assert "jupyter_fuse session" in out.data["text/plain"] and "<table" in out.data["text/html"]


def test_mismatch_is_loud_even_when_quiet(ip, monkeypatch):
    from jupyter_fuse import magic

    def wrong(source, ns, backend, **kw):  # a "fused" run that gets the dtype wrong
        report = jf.run_cell(source, ns, backend, **kw)
        if kw.get("fuse") is not False:  # the eager run is the one without fusion
            ns["y"] = ns["y"].astype(np.float32)
        return report

    monkeypatch.setattr(magic, "run_cell", wrong)
    with capture_output() as cap:
        ip.run_cell("%%fuse -q -b numpy --compare\ny = x * 2")
    assert "RESULTS DIFFER FROM EAGER NUMPY" in cap.stderr and "y: dtype float32" in cap.stderr


def test_compare_cell_copies_the_namespace():
    ns = {"np": np, "a": np.arange(4.0)}
    ns["b"] = ns["a"]
    report, c = compare_cell(jf.run_cell, "a += 1\nc = b.sum()", ns, "numpy")
    assert c.agree, c.mismatches
    assert ns["a"].tolist() == [1, 2, 3, 4] and ns["b"] is ns["a"]  # mutated once, not twice
    assert c.eager.kernels >= 1 and c.speedup > 0


@pytest.mark.parametrize("draw", ["np.random.rand(5)", "rng.random(5)", "np.random.default_rng(7).random(5)"])
def test_compare_draws_what_numpy_draws(draw):
    ns = {"np": np, "x": np.arange(5.0), "rng": np.random.default_rng(3)}
    np.random.seed(0)
    report, c = compare_cell(jf.run_cell, f"y = {draw} + x", ns, "cpu")
    assert c.agree, c.mismatches
    state = np.random.get_state()[1].copy()
    np.random.seed(0)
    plain = {"np": np, "x": np.arange(5.0), "rng": np.random.default_rng(3)}
    exec(f"y = {draw} + x", plain)
    np.testing.assert_array_equal(ns["y"], plain["y"])  # the user's y is the first draw, not the second
    np.testing.assert_array_equal(state, np.random.get_state()[1])  # states consumed once, as NumPy does
    assert ns["rng"].random() == plain["rng"].random()


def test_compare_reports_exceptions():
    ns = {"np": np, "a": np.arange(4.0)}

    def raising(source, namespace, backend, **kw):
        if backend != "numpy":
            raise ValueError("boom")
        return jf.run_cell(source, namespace, backend, **kw)

    with pytest.raises(ValueError), capture_output() as cap:
        compare_cell(raising, "c = a * 2", ns, "cpu")
    assert "RESULTS DIFFER" in cap.stderr and "ValueError: boom" in cap.stderr


@pytest.mark.parametrize("fused, eager, expect", [
    (np.float64(1.0), 1.0, "type float64, eager NumPy gives float"),
    (np.ones(3, np.float32), np.ones(3), "dtype float32"),
    (np.ones(3), np.ones(4), "shape (3,)"),
    (np.array([1.0, 2.0]), np.array([1.0, 2.5]), "1 of 2 values differ"),
    (np.array([1.0, np.nan]), np.array([1.0 + 1e-12, np.nan]), None),
    (np.arange(3), np.arange(3), None),
    ([1, np.float32(2)], [1, np.float64(2)], "[1]: type float32"),
])
def test_diff(fused, eager, expect):
    got = diff(fused, eager)
    assert (got is None) if expect is None else (expect in got), got


def test_compare_checks_what_the_cell_wrote():
    """Not every global: the names the cell assigns or mutates, and its value."""
    ns = {"np": np, "a": np.arange(4.0), "u": np.ones(6), "lst": [1, 2]}
    ns.update({f"unrelated{i}": np.arange(3.0) + i for i in range(16)})
    _, c = compare_cell(jf.run_cell, "b = a * 2\nu[1:-1] = b\nlst.append(3)\na.sort()", ns, "numpy")
    assert c.agree, c.mismatches
    assert sorted(c.checked) == ["(cell value)", "a", "b", "lst", "u"]
    assert c.checked_text().startswith("checked 5 values:")


def test_compare_leaves_the_plan_cache_alone(ip):
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    _run(ip, "%%fuse -b numpy --compare\ny = np.sin(x) * 3")
    backends = {(key[1], key[2]) for key in PLAN_CACHE.cells}
    assert backends == {("numpy", True)}  # the fused run's entry only: no "[numpy, no fuse]"


def test_compare_draws_fused_against_eager(ip):
    cap = _run(ip, "%%fuse -b numpy --compare\ny = np.sin(x) * 3")
    (out,) = [o for o in cap.outputs if mime.COMPARE_MIME in o.data]
    page = out.data["text/html"]
    assert "kernels launched" in page and "bytes moved" in page and "kernel time" in page  # the chart's rows
    from jupyter_fuse.dashboard import figures

    report, c = compare_cell(jf.run_cell, "y = np.sin(x) * 3", {"np": np, "x": np.ones(5)}, "numpy")
    fig = figures.compare_figure(c)
    assert [t.name for t in fig.data] == ["kernels launched", "bytes moved", "kernel time"]
    assert list(fig.data[0].y) == [c.eager.kernels, c.fused.kernels]
