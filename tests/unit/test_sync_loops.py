"""Loops that read a value each step (``jupyter_fuse/syncloops.py``): a residual's ``float()``, a ``while`` on
arrays, a ``break`` on a test. Once two steps make one plan, each step runs it and only the loop's Python of
numbers runs; everything the user sees stays NumPy's, and the loops it must not run so are traced as before."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import jupyter_fuse
from jupyter_fuse import loops
from harness import check
from test_fast_forward import _forwarded

SETUP = ("u = np.linspace(0.0, 1.0, 50) ** 2\nv = np.arange(50.0)\nc = np.linspace(1.0, 30.0, 40)\n"
         "hi = np.maximum(c, 1.0)\ntol = 1e-9\nnt = 300\nA = np.eye(6) * 3 + 0.1\nx = np.ones(6)\nb = np.arange(6.0)\n")

JACOBI = ("it = 0\nres = 1.0\nwhile it < 200 and res > 1e-12:\n    un = u.copy()\n"
          "    u[1:-1] = 0.5 * (un[2:] + un[:-2])\n    res = float(np.abs(u - un).max())\n    it += 1\n")

RUN_AHEAD = {
    "a residual's float, a while on it": JACOBI,
    "a while on arrays (bisection)": "lo = np.zeros_like(c)\nit = 0\nwhile np.max(hi - lo) > tol:\n"
                                     "    mid = 0.5 * (lo + hi)\n    f = mid ** 3 - c\n"
                                     "    lo = np.where(f < 0, mid, lo)\n    hi = np.where(f >= 0, mid, hi)\n    it += 1\n",
    "a break on a test of arrays": "for it in range(nt):\n    un = u.copy()\n    u[1:-1] = 0.5 * (un[2:] + un[:-2])\n"
                                   "    err = np.abs(u - un).max()\n    if err < 1e-5:\n        break\n",
    "an element's float each step": "s = 0.0\nfor k in range(nt):\n    u = u * 0.5 + 1.0\n    s = s + float(u[3])\n",
    "a history and a print now and then": "hist = []\nfor k in range(nt):\n    u = u * 0.99 + 0.01\n"
                                          "    hist.append(u.sum().item())\n    if k % 50 == 0:\n        print(k, hist[-1])\n",
    "an int count of a mask": "n = 0\nfor k in range(nt):\n    u = np.sqrt(u + 0.5)\n    n += int((u > 1.2).sum())\n",
    "a relative tolerance on the first residual": "hist = []\nfor it in range(nt):\n    un = u.copy()\n"
                                                  "    u[1:-1] = 0.5 * (un[2:] + un[:-2])\n    r = float(np.sqrt(((u - un) ** 2).mean()))\n"
                                                  "    hist.append(r)\n    if r < 1e-3 * hist[0]:\n        break\n",
    "a residual checked before the update": "for k in range(nt):\n    r = b - A @ x\n"
                                            "    res = float(np.sqrt((r * r).sum()))\n    if res < 1e-12:\n        break\n"
                                            "    x = x + 0.2 * r\n",
    "power iteration": "for k in range(nt):\n    y = A @ x\n    lam = float(x @ y)\n    x = y / np.sqrt((y * y).sum())\n",
    "the update last, the loop run to its end": "it = 0\nwhile it < 100:\n    r = b - A @ x\n    res = float(np.abs(r).max())\n"
                                                "    it += 1\n    x = x + 0.2 * r\n",
    "a name taking what another computed (lam = lam_new)": "lam = 0.0\nq = x + np.arange(6.0)\nfor it in range(nt):\n"
                                                           "    w = A @ q\n    lam_new = q @ w\n    q = w / np.sqrt(w @ w)\n"
                                                           "    if abs(lam_new - lam) < 1e-14 * abs(lam_new):\n"
                                                           "        break\n    lam = lam_new\n",
    "a checkpoint keeping a mean": "it = 0\nchange = 1.0\nmean_u = []\nwhile change > 1e-12 and it < 300:\n"
                                   "    un = u.copy()\n    u[1:-1] = 0.5 * (un[2:] + un[:-2])\n"
                                   "    change = float(np.max(np.abs(u - un)))\n    it += 1\n    if it % 25 == 0:\n"
                                   "        mean_u.append(u.mean())\nm = np.array(mean_u)\n",
    "a value kept each step, unread": "costs = []\nfor k in range(nt):\n    u = u * 0.99 + 0.01\n    r = float(u[0])\n"
                                      "    costs.append(np.mean(u ** 2))\nc = np.array(costs)\n",
    "arrays printed now and then": "for k in range(nt):\n    u = u * 0.99 + 0.01\n    r = float(u[0])\n"
                                   "    if k % 100 == 0:\n        print(k, u[:3], r)\n",
    "inside an outer loop (one entry)": "for outer in range(5):\n    it = 0\n    res = 1.0\n"
                                        "    while it < 100 and res > 1e-12:\n        un = u.copy()\n"
                                        "        u[1:-1] = 0.5 * (un[2:] + un[:-2])\n        res = float(np.abs(u - un).max())\n"
                                        "        it += 1\n    u = u + 1.0\n",
    "a loop in a function of the cell's": "def relax(a, steps):\n    k = 0\n    while float(a.max()) > 0.1 and k < steps:\n"
                                         "        a = a * 0.99\n        k += 1\n    return a, k\nw, count = relax(u + 1.0, 250)\n",
}


@pytest.mark.parametrize("name", list(RUN_AHEAD))
@pytest.mark.parametrize("backend", ["numpy", "cpu", "cupy-dry"])
def test_a_loop_reading_a_value_each_step_runs_ahead_with_numpys_results(name, backend):
    (loop,) = _forwarded(RUN_AHEAD[name], SETUP, backend).loops
    assert loop["reads"] and loop["iterations"] >= 25 and loop["iterations"] == loop["units"], loop


def _on_and_off(source: str, monkeypatch) -> list[tuple[dict, jupyter_fuse.Report]]:
    """The cell run (cpu, no plan cache) with fast-forward on, then off: its namespace and report each time."""
    runs = []
    for on in ("on", "off"):
        monkeypatch.setenv("JUPYTER_FUSE_FASTFORWARD", on)
        ns = {"np": np}
        exec(SETUP, ns)
        runs.append((ns, jupyter_fuse.run_cell(source, ns, backend="cpu", cache=False)))
    return runs


def test_the_steps_run_ahead_are_the_traced_ones_to_the_bit(monkeypatch):
    """The same plans on the same values: bit for bit what tracing every step gives, the same op count, the
    same number of steps (Python read the same values)."""
    (a, ra), (b, rb) = _on_and_off(JACOBI, monkeypatch)
    assert ra.loops and not rb.loops
    assert a["u"].tobytes() == b["u"].tobytes() and a["it"] == b["it"] and a["res"] == b["res"] and type(a["res"]) is float
    assert ra.ops == rb.ops and len(ra.syncs) == len(rb.syncs)


@pytest.mark.parametrize("ends", ["", "    if res < 1e-9:\n        break\n"])
def test_array_statements_after_the_site_are_the_next_steps_plans_and_run_where_the_loop_ends(ends, monkeypatch):
    """``x = x + 0.2 * r`` after the value read: each step's plan computes it with the next step's arrays; where the
    loop runs to its end (not by the ``break``), Python runs it once more (its ``else``); bit for bit as traced."""
    src = ("for k in range(60):\n    r = b - A @ x\n    res = float(np.abs(r).max())\n" + ends.replace("1e-9", "1e-6")
           + "    x = x + 0.2 * r\n")
    (a, ra), (b, rb) = _on_and_off(src, monkeypatch)
    assert ra.loops and not rb.loops and a["k"] == b["k"] and (a["k"] < 59) == bool(ends)
    assert a["x"].tobytes() == b["x"].tobytes() and ra.ops == rb.ops


def test_a_steps_kernels_run_as_one_compiled_call_to_the_bit(monkeypatch):
    """After a few steps kernel by kernel (``syncloops.PROGRAM_AFTER``), each step's kernels are one call of a
    compiled program (``loops._program`` of one unit): the values, the steps and the op count of launching each."""
    runs = []
    for compiled in (True, False):
        ns = {"np": np}
        exec(SETUP, ns)
        r = jupyter_fuse.run_cell(JACOBI, ns, backend="cpu", cache=False, compile_plan=compiled)
        runs.append((ns["u"], ns["it"], r))
    (a, ita, ra), (b, itb, rb) = runs
    assert ra.loops[0]["how"] == "step" and rb.loops[0]["how"] == ""
    assert "each step's kernels as one compiled call" in repr(ra)
    assert a.tobytes() == b.tobytes() and ita == itb and ra.ops == rb.ops


NOT_AHEAD = {  # loops it must trace: what skipping their array statements would change is not in the plan
    "the site reads a number the loop changes": "it = 0\nwhile it < nt:\n    u = u * 0.5 + 1.0\n"
                                                "    it += 1\n    s = float((u * it).sum())\n",
    "an array statement reads a number the loop changes": "res = 1.0\nfor k in range(nt):\n    u = u * 0.5 + res\n"
                                                          "    res = float(u.max())\n",
    "two values read a step": "for k in range(nt):\n    u = u * 0.5 + 1.0\n    a = float(u[0])\n    b = float(u[1])\n",
    "numbers after an array statement after the site": "for k in range(nt):\n    u = u * 0.5 + 1.0\n"
                                                       "    r = float(u.sum())\n    v = v + u\n    t = r * 2\n",
    "a break between arrays and the site": "for k in range(nt):\n    u = u * 0.5 + 1.0\n    if k > 250:\n        break\n"
                                           "    r = float(u.sum())\n",
    "a site the test may not reach": "it = 0\nwhile it < nt and u.max() > 0.0:\n    u = u * 0.5\n    it += 1\n",
    "a site inside a branch": "r = 0.0\nfor k in range(nt):\n    u = u * 0.5 + 1.0\n    if k % 2:\n        r = float(u[0])\n",
    "a list of arrays": "h = []\nfor k in range(nt):\n    u = u * 0.5 + 1.0\n    h.append(u)\n    r = float(u[0])\n",
    "a view kept after the site": "h = []\nfor k in range(nt):\n    u = u * 0.5 + 1.0\n    r = float(u[0])\n"
                                  "    h.append(u[1:3])\n",  # (each step's view: not one updated array)
    "arrays read before the site": "h = []\nfor k in range(nt):\n    u = u * 0.99 + 0.01\n    h.append(u.sum() * 2)\n"
                                   "    r = float(u[0])\n",  # (run ahead, the step's arrays are computed at the site)
}


@pytest.mark.parametrize("name", list(NOT_AHEAD))
def test_a_loop_whose_python_does_more_than_count_is_traced(name):
    r = check(NOT_AHEAD[name], SETUP, backend="cpu", cache=False).report
    assert not r.loops


def test_a_name_the_counting_reads_holds_an_array_so_the_loop_is_traced():
    """Checked when the loop would go ahead: ``len(w)`` of an array is Python's, but what a scalar statement
    reads must be a number (or a list of them), or the plan could not stand for the statements it skips."""
    r = check("n = 0\nfor k in range(nt):\n    u = u * 0.5 + 1.0\n    n = n + len(w) + int(u[0] > 1)\n",
              SETUP + "w = np.ones(3)\n", backend="cpu", cache=False).report
    assert not r.loops


def test_names_that_trade_buffers_end_as_numpys():
    """Each step keeps a name on its own buffer and sets its value, one the step before kept where the name took
    another's (``un`` below); the user's own arrays trading names are traced (which of them a name ends in
    depends on the count: ``loops._SWAPPED``)."""
    r = check("res = 1.0\nwhile res > 1e-6:\n    un = u.copy()\n    un[1:-1] = 0.5 * (u[2:] + u[:-2])\n"
              "    res = float(np.abs(un - u).max())\n    u, un = un, u\n", SETUP, backend="cpu", cache=False).report
    assert r.loops and r.loops[0]["iterations"] > 1000
    r = check("res = 1.0\nwhile res > 1e-6:\n    v[1:-1] = 0.5 * (u[2:] + u[:-2])\n    res = float(np.abs(v - u).max())\n"
              "    u, v = v, u\n", SETUP + "v = u.copy()\n", backend="cpu", cache=False).report
    assert not r.loops


def test_an_error_of_a_step_run_ahead_raises_at_numpys_step():
    """The counting runs as Python: it raises where NumPy's run raises, with everything before it done."""
    check("it = 0\nwhile True:\n    u = u * 0.5 + 1.0\n    r = float(u[0])\n    it += 1\n    q = 1 // (60 - it)\n",
          SETUP, backend="cpu", cache=False)


def test_mark_gives_the_loop_a_body_of_its_numbers_and_keeps_the_cells_lines():
    tree = ast.parse("x = 1\n" + JACOBI)
    assert loops.mark(tree) == 1
    text = ast.unparse(tree)
    assert "res = float(_jupyter_fuse_loop4.value())" in text and "_jupyter_fuse_loop4.site(np.abs(u - un).max())" in text
    loop = next(n for n in ast.walk(tree) if isinstance(n, ast.While))
    assert loop.lineno == 4 and loop.body[0].orelse[1].lineno == 6  # (the traced body: the user's lines)


@pytest.mark.parametrize("source", [s for name, s in NOT_AHEAD.items() if name not in ("a list of arrays", "a view kept after the site")])
def test_mark_leaves_loops_alone_whose_numbers_meet_their_arrays(source):
    assert "syncloops" not in ast.unparse(_marked(source))


def _marked(source: str) -> ast.Module:
    tree = ast.parse(source)
    loops.mark(tree)
    return tree


def test_the_loops_state_leaves_no_name_in_the_cell():
    ns = {"np": np}
    exec(SETUP, ns)
    jupyter_fuse.run_cell(JACOBI, ns, backend="cpu", cache=False)
    assert not [k for k in ns if k.startswith("_jupyter_fuse")]


def test_a_cell_whose_loop_read_values_replays_and_follows_new_values():
    """The plan cache records each step run ahead and the value Python read: a re-run replays while Python would
    read the same values; another input reads others, and is run anew (NumPy's results both times)."""
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    check(JACOBI, SETUP, backend="cpu")
    assert check(JACOBI, SETUP, backend="cpu").report.cache == "hit"
    r = check(JACOBI, SETUP.replace("** 2", "** 3"), backend="cpu").report
    assert r.cache != "hit" and r.loops


def test_the_report_and_the_graph_say_the_numbers_ran_as_python():
    from jupyter_fuse.dashboard.graph import draw

    r = check(JACOBI, SETUP, backend="cpu", cache=False).report
    assert "only the loop's Python of numbers ran" in repr(r)
    notes = draw(r.to_dict()).notes
    assert any("its Python only read a value each step" in n for n in notes), notes


@pytest.mark.parametrize("setup, source", [
    ("x = np.array(2.0)\n", "it = 0\nwhile float(x) > 1e-3:\n    x = x * 0.9\n    it += 1\n"),  # 0-d (traced: a bare name)
    ("u = np.zeros(0)\n", "for k in range(50):\n    u = u * 0.5 + 1\n    r = float(u.sum())\n    if r > 1:\n        break\n"),
    ("u = np.linspace(0, 1, 20)\n", "hist = []\nfor k in range(10000):\n    u = u * 0.999 + 0.001\n    r = float(u[0])\n"
                                    "    hist.append(r)\n"),
    ("g = np.asfortranarray(np.arange(12.0).reshape(3, 4))\n",
     "for k in range(100):\n    g = g * 0.9 + 0.1\n    r = float(g.max())\n    if r < 1.5:\n        break\n"),
], ids=["0-d", "empty", "10,000 steps", "Fortran order"])
@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_odd_arrays_and_long_loops_leave_what_numpy_leaves_and_replay(setup, source, backend):
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    check(source, setup, backend=backend)
    check(source, setup, backend=backend)  # (a replay, or plain NumPy over the held plan)
