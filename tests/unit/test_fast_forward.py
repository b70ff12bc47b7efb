"""Fast-forward (``jupyter_fuse/loops.py``): a loop whose iterations make one graph runs the rest of them as
that graph's plan, without their Python; everything the user sees stays NumPy's, and the loops it must not
skip are traced as before."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import jupyter_fuse
from jupyter_fuse import loops
from harness import check

HEAT = ("for n in range(nt):\n    un = u.copy()\n"
        "    u[1:-1] = un[1:-1] + nu * (un[2:] - 2 * un[1:-1] + un[:-2])\n")
SETUP = "u = np.linspace(0.0, 1.0, 50) ** 2\nnt = 300\nnu = 0.3\nv = np.arange(50.0)\nt = 0.0\n"

FORWARDED = {
    "heat": HEAT,
    "ping-pong": "for t2 in range(nt):\n    v[1:-1] = 0.33 * (u[:-2] + u[1:-1] + u[2:])\n"
                 "    u[1:-1] = 0.33 * (v[:-2] + v[1:-1] + v[2:])\n",
    "names rotated": "w = u * 0\nfor k in range(nt):\n    u, v, w = v * 0.5, w + 1.0, u\n",
    "boundary rows": "g = np.ones((8, 8))\nfor k in range(nt):\n    gn = g.copy()\n"
                     "    g[1:-1, 1:-1] = 0.25 * (gn[2:, 1:-1] + gn[:-2, 1:-1] + gn[1:-1, 2:] + gn[1:-1, :-2])\n"
                     "    g[0, :] = 1\n    g[:, -1] = 0\n",
    "a reduction each step": "for k in range(nt):\n    u = u - u.mean() * nu\n    v += np.abs(u).max()\n",
    "an else clause": HEAT + "else:\n    done = n\n",
    "np.roll and np.cumsum (traced)": "for k in range(nt):\n    u = np.roll(u, 1) * 0.5 + np.cumsum(v) * 1e-3\n",
    "an inner loop": "p = u * 0\nfor n in range(4):\n    un = u.copy()\n    for q in range(nt):\n        pn = p.copy()\n"
                     "        p[1:-1] = 0.5 * (pn[2:] + pn[:-2]) - 0.1 * u[1:-1]\n        p[0] = p[1]\n"
                     "    u[1:-1] = un[1:-1] - 0.01 * p[1:-1]\n",
    "a function's loop": "def relax(p, b, nit):\n    for q in range(nit):\n        pn = p.copy()\n"
                         "        p[1:-1] = 0.5 * (pn[2:] + pn[:-2]) - b[1:-1]\n        p[-1] = 0\n    return p\n"
                         "for n in range(3):\n    v = relax(v, u * 0.01, nt)\n",
    "a function of the cell's": "def step(a, k):\n    a[1:-1] += k * (a[:-2] - 2 * a[1:-1] + a[2:])\n    return a\n"
                                "for n in range(nt):\n    u = step(u, nu)\n",
    "functions calling functions": "f = lambda x: x * 0.5 + t\ndef g(x, y):\n    z = f(x) - y\n    return np.abs(z)\n"
                                   "for k in range(nt):\n    u = g(u, v)\n",
    "leapfrog (names trade buffers)": "u_prev = u * 1.0\nfor k in range(nt):\n    u_next = u.copy()\n"
                                      "    u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + 0.01 * (u[2:] - 2 * u[1:-1] + u[:-2])\n"
                                      "    u_prev, u = u, u_next\n",
    "an int accumulator array": "c = np.zeros(50, dtype=np.int64)\nfor k in range(nt):\n"
                                "    c += (u > 0.5)\n    u = np.where(u > 0.5, u * 0.5, u + 0.1)\n",
}

WINDOWS_RECURRENCE = ("r = np.linspace(-0.02, 0.02, 500) ** 2\ns2 = np.zeros(500)\ns2[0] = 1e-4\n",
                      "for t in range(1, len(r)):\n    s2[t] = 1e-6 + 0.1 * r[t - 1] + 0.85 * s2[t - 1]\n")


def _forwarded(source: str, setup: str = SETUP, backend: str = "numpy"):
    opts = {"backend": "cupy", "dry_run": True} if backend == "cupy-dry" else {"backend": backend}
    return check(source, setup, cache=False, **opts).report


@pytest.mark.parametrize("name", list(FORWARDED))
@pytest.mark.parametrize("backend", ["numpy", "cpu", "cupy-dry"])
def test_a_loop_of_one_graph_is_fast_forwarded_with_numpys_results(name, backend):
    r = _forwarded(FORWARDED[name], backend=backend)
    assert r.loops and all(loop["iterations"] > 200 for loop in r.loops), r.loops


@pytest.mark.parametrize("backend, setup, source, name, ops", [
    ("numpy", SETUP, HEAT, "u", 300 * 7), ("cpu", SETUP, HEAT, "u", 300 * 7),
    ("cpu", *WINDOWS_RECURRENCE, "s2", 499 * 5),  # (its windows moved: ``test_a_loop_whose_windows_move...``)
])
def test_fast_forwarded_values_are_the_traced_ones_to_the_bit(backend, setup, source, name, ops, monkeypatch):
    """The same plan on the same values: bit for bit what tracing every iteration gives, the same op and
    kernel counts."""
    runs = []
    for on in ("on", "off"):
        monkeypatch.setenv("JUPYTER_FUSE_FASTFORWARD", on)
        ns = {"np": np}
        exec(setup, ns)
        r = jupyter_fuse.run_cell(source, ns, backend=backend, cache=False)
        runs.append((ns[name], r))
    (a, ra), (b, rb) = runs
    assert ra.loops and not rb.loops
    assert a.tobytes() == b.tobytes()
    assert ra.ops == rb.ops == ops


NOT_FORWARDED = {  # loops it must trace: what their Python does is not in the graph
    "a float each step into a number the arrays read": "s = 0.0\nfor k in range(nt):\n    u = u * 0.5 + s\n"
                                                        "    s = s + float(u[3])\n",  # (one they do not: test_sync_loops.py)
    "a Python number": "for k in range(nt):\n    u = u * 0.5 + t\n    t = t + 0.01\n",
    "a list appended": "h = []\nfor k in range(nt):\n    u = u * 0.5 + 1.0\n    h.append(u)\n",
    "a random draw": "rng = np.random.default_rng(3)\nfor k in range(nt):\n    u = u + rng.random(50)\n",
    "an untraced call": "for k in range(nt):\n    u = np.sort(u) * 0.5\n",
    "a print": "for k in range(nt):\n    u = u * 0.5\n    print(k)\n",
    "a function appending": "h = []\ndef f(x):\n    h.append(x)\n    return x * 0.5\nfor k in range(nt):\n    u = f(u)\n",
    "a function's name rebound": "def f(x):\n    return x * 0.5\nf = np.sqrt\nfor k in range(nt):\n    u = f(u) + 0.1\n",
}


@pytest.mark.parametrize("name", list(NOT_FORWARDED))
def test_a_loop_whose_python_does_more_is_traced(name):
    r = _forwarded(NOT_FORWARDED[name])
    assert not r.loops


@pytest.mark.parametrize("source", [
    "for k in range(nt):\n    u[k % 50] = 0.0\n",  # the loop variable: another graph each iteration
    "def f(x):\n    print(x)\n    return x * 0.5\nfor k in range(nt):\n    u = f(u)\n",  # a function that prints
    "def f(x):\n    if x[0] > 0:\n        return x\n    return x * 0.5\nfor k in range(nt):\n    u = f(u)\n",  # a branch
    "for k in range(nt):\n    if k > 3:\n        u = u * 0.5\n",  # a branch
    "for k in [1, 2, 3]:\n    u = u * 0.5\n",  # not a range
    "for k in range(nt):\n    u = u * 0.5\n    np.random.seed(1)\n",  # NumPy's generator
    "for k in range(nt):\n    u = np.array([x * 0.5 for x in u])\n",  # a comprehension
    "for k in range(nt):\n    obj.x = u\n",  # an attribute
])
def test_mark_leaves_loops_alone_whose_body_is_not_only_array_math(source):
    assert loops.mark(ast.parse(source)) == 0


def test_mark_keeps_the_lines_of_the_cell():
    tree = ast.parse("x = 1\nfor k in range(5):\n    u = u * 0.5\n")
    assert loops.mark(tree) == 1
    assert tree.body[1].iter.lineno == 2 and "loops.driver(range(5), 2" in ast.unparse(tree)


def test_a_fast_forwarded_cell_replays_with_numpys_results():
    """The plan cache records the units it ran: the replay runs them again on the new values."""
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    first = check(HEAT, SETUP, backend="cpu").report
    assert first.loops
    second = check(HEAT, SETUP.replace("** 2", "** 3"), backend="cpu").report
    assert second.cache == "hit"


def test_the_loop_variable_and_the_users_array_end_as_numpys():
    ns = {"np": np}
    exec(SETUP, ns)
    user_u = ns["u"]
    ref = {"np": np}
    exec(SETUP, ref)
    r = jupyter_fuse.run_cell(HEAT, ns, backend="cpu", cache=False)
    exec(HEAT, ref)
    assert r.loops
    assert ns["n"] == ref["n"] == 299 and type(ns["n"]) is int
    assert ns["u"] is user_u  # (written in place, as NumPy writes it)
    np.testing.assert_array_equal(ns["u"], ref["u"])


def test_the_report_says_which_loop_ran_ahead():
    r = _forwarded(HEAT)
    (loop,) = r.loops
    assert loop["line"] == 1 and loop["iterations"] == loop["unit"] * loop["units"]
    assert "fast-forwarded" in repr(r)


def test_a_function_the_cell_defined_runs_its_loop_later_outside_a_cell():
    """Its loop calls the driver by import: outside a traced run it is the plain loop."""
    src = "def smooth(x, k):\n    for i in range(k):\n        x = 0.5 * (x + x[::-1])\n    return x\ny = smooth(u, 1000)\n"
    ns = {"np": np, "u": np.arange(50.0)}
    r = jupyter_fuse.run_cell(src, ns, backend="numpy", cache=False)
    assert r.loops
    ref = {"np": np, "u": np.arange(50.0)}
    exec(src, ref)
    np.testing.assert_array_equal(ns["y"], ref["y"])
    np.testing.assert_array_equal(ns["smooth"](np.arange(50.0), 30), ref["smooth"](np.arange(50.0), 30))


@pytest.mark.parametrize("unit_ops", [1, 2, 48])  # (units of one, two, many iterations)
@pytest.mark.parametrize("source", [
    "for k in range(nt):\n    B[:] = 0.5 * A + 1.0\n    A, B = B, A\n",  # the user's arrays swap names
    "old = u * 1\nfor k in range(nt):\n    old, u = u, 0.5 * (u + old)\n",  # a name holds the step before's value
    "for k in range(nt):\n    v[1:] = u[:-1]\n    u, v = v * 1, u\n",
])
def test_names_that_swap_arrays_end_as_numpys(source, unit_ops, monkeypatch):
    """Which array a name ends in depends on how many iterations ran: a unit run ahead keeps each name's
    buffer, so a loop whose names trade buffers between units is not run ahead (with units of an even number of
    iterations it is), and a name holding the unit before's value gets it."""
    monkeypatch.setattr(loops, "UNIT_OPS", unit_ops)
    check(source, SETUP.replace("nt = 300", "nt = 301") + "A = np.arange(50.0)\nB = np.ones(50)\n",  # (an odd count)
          backend="numpy", cache=False)


# -- the units run ahead as one compiled program (cpu backend) --------------------------------------

def _heat_run(backend: str = "cpu"):
    ns = {"np": np}
    exec(SETUP, ns)
    return ns, jupyter_fuse.run_cell(HEAT, ns, backend=backend, cache=False)


def test_units_run_ahead_as_one_compiled_program_to_the_bit(monkeypatch):
    """A loop around one unit's kernels, its arrays carried from unit to unit: the values, op and kernel
    counts of launching every kernel, and the report says so."""
    ns, r = _heat_run()
    monkeypatch.setattr(loops, "_program", lambda *a: (None, ""))  # (launch by launch)
    ns2, r2 = _heat_run()
    (loop,) = r.loops
    assert loop["how"] == "compiled" and r2.loops[0]["how"] == ""
    assert ns["u"].tobytes() == ns2["u"].tobytes()
    assert (r.ops, r.kernels) == (r2.ops, r2.kernels)
    (prog,) = [k for k in r.kernel_list if k.get("kind") == "program"]
    assert prog["name"] == "loop1" and "as one compiled program" in repr(r)


def test_a_compiled_fast_forward_passes_this_runs_constants():
    """The program is made once per plan; a float constant is a value of the run (``nu``), not of the plan:
    another ``nu`` computes with its own (bench/fuzz.py --kind loops, seed 998036: the first run's)."""
    for nu in ("0.3", "0.1", "0.3"):
        r = check(HEAT, SETUP.replace("nu = 0.3", f"nu = {nu}"), backend="cpu", cache=False).report
        assert r.loops[0]["how"] == "compiled"


def test_no_compile_plan_runs_the_units_kernel_by_kernel():
    ns = {"np": np}
    exec(SETUP, ns)
    r = jupyter_fuse.run_cell(HEAT, ns, backend="cpu", cache=False, compile_plan=False)
    assert r.loops and r.loops[0]["how"] == "" and not any(k.get("kind") == "program" for k in r.kernel_list)


def test_a_compiled_fast_forward_replays_and_its_plan_rolls():
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    first = check(HEAT, SETUP, backend="cpu").report
    assert first.loops[0]["how"] == "compiled"
    again = check(HEAT, SETUP.replace("** 2", "** 3"), backend="cpu").report
    assert again.cache == "hit" and again.program.startswith("compiled: 300 iterations of")


def test_a_compiled_fast_forward_waits_for_its_background_compile(monkeypatch):
    """Where compiles run in the background, the units launch one by one until the program is compiled."""
    from jupyter_fuse.backends import compiler

    monkeypatch.setenv("JUPYTER_FUSE_COMPILE", "background")
    monkeypatch.setattr(loops, "_PROGRAMS", {})
    ns = {"np": np}
    exec(SETUP, ns)
    with compiler.cell_running():
        r = jupyter_fuse.run_cell(HEAT, ns, backend="cpu", cache=False)
    assert r.loops[0]["how"] == "compiling" and "while numba compiles" in repr(r)
    assert compiler.wait(120)
    ns, r = _heat_run()
    assert r.loops[0]["how"] == "compiled"



# -- moving windows: the loop variable as a term of an index ------------------------------------------

WINDOWS = {  # loops whose windows move by as much each iteration (``windows.indexes_only``)
    "row sweep": ("g = np.linspace(0.0, 1.0, 2400).reshape(300, 8)\n",
                  "for i in range(1, 300):\n    g[i, :] = g[i, :] - 0.3 * g[i - 1, :]\n"),
    "column sweep": ("g = np.linspace(0.0, 1.0, 2400).reshape(8, 300)\n",
                     "for j in range(1, 299):\n    g[:, j] = 0.5 * (g[:, j - 1] + g[:, j + 1])\n"),
    "recurrence": WINDOWS_RECURRENCE,
    "backward pass": ("d = np.linspace(1.0, 2.0, 300)\nc = np.linspace(0.1, 0.2, 300)\nx = np.zeros(300)\n",
                      "for i in range(298, -1, -1):\n    x[i] = d[i] - c[i] * x[i + 1]\n"),
    "a row kept each step": ("state = np.ones(3)\ntraj = np.zeros((300, 3))\n",
                             "for i in range(300):\n    state = state * 0.99 + 0.01\n    traj[i] = state\n"),
    "a window of three": ("x = np.linspace(0.0, 1.0, 400)\ny = np.zeros(400)\n",
                          "for i in range(398):\n    y[i] = x[i:i + 3].sum() * 2\n"),
    "from the end": ("x = np.linspace(0.0, 1.0, 400)\ny = np.zeros(400)\n",
                     "for i in range(1, 400):\n    y[-i] = x[i] + y[-i + 1]\n"),
    "range steps of three": ("x = np.linspace(0.0, 1.0, 1200)\ny = np.zeros(1200)\n",
                             "for k in range(3, 1197, 3):\n    y[k:k + 3] = x[k:k + 3] * 2 + y[k - 3:k]\n"),
}


@pytest.mark.parametrize("name", list(WINDOWS))
@pytest.mark.parametrize("backend", ["numpy", "cpu", "cupy-dry"])
def test_a_loop_whose_windows_move_is_fast_forwarded_with_numpys_results(name, backend):
    """As one compiled program (cpu); elsewhere traced: launched one by one, each unit's kernels would be
    bound anew at their new places, which costs more than tracing the unit."""
    setup, source = WINDOWS[name]
    r = _forwarded(source, setup, backend=backend)
    if backend != "cpu":
        assert not r.loops
        return
    (loop,) = r.loops
    assert loop["iterations"] > 150 and loop["moves"] and loop["how"] == "compiled", loop
    assert "with its windows moved on" in repr(r)


def test_a_window_that_would_wrap_around_stops_the_run_ahead_there(monkeypatch):
    """``x[i - 300]`` counts from the end until ``i`` reaches 300: no unit is run ahead past it; the units
    after it are matched anew and run ahead in turn."""
    ran = _counted(monkeypatch)
    r = _forwarded("for i in range(400):\n    y[i] = x[i - 300] * 2\n",
                   "x = np.linspace(0.0, 1.0, 400)\ny = np.zeros(400)\n", backend="cpu")
    (loop,) = r.loops
    assert loop["iterations"] > 350 and loop["of"] == 400 and loop["runs"] == 1, loop
    assert len([units for units, _ in ran if units]) == 2, ran


def _counted(monkeypatch) -> list:
    """(units run ahead, whether its windows moved) of each fast-forward."""
    ran, forward = [], loops._forward

    def counted(s, last, *a):
        got = forward(s, last, *a)
        ran.append((got[0], last.move is not None))
        return got
    monkeypatch.setattr(loops, "_forward", counted)
    return ran


def test_an_index_past_the_end_raises_numpys_error_at_numpys_iteration(monkeypatch):
    """The run ahead stops before the window leaves the array; the iteration NumPy fails at is traced, and
    raises NumPy's IndexError with everything before it written."""
    ran = _counted(monkeypatch)
    check("for i in range(420):\n    y[i] = x[i] * 2\n", "x = np.linspace(0.0, 1.0, 400)\ny = np.zeros(400)\n",
          cache=False, backend="cpu")
    assert ran and ran[0][0] > 10 and ran[0][1], ran


@pytest.mark.parametrize("source", [
    "for i in range(1, n):\n    u[i, :] = u[i, :] - a * u[i - 1, :]\n",
    "for i in range(n):\n    x[i:i + w] = y[n - 1 - i] * 2\n",
    "for i in range(n):\n    x[-i] = y[+i]\n",
])
def test_mark_takes_loops_whose_variable_is_a_term_of_their_indices(source):
    assert loops.mark(ast.parse(source)) == 1


@pytest.mark.parametrize("source", [
    "for i in range(n):\n    x[perm[i]] = 1.0\n",  # another array's element: not an even move
    "for i in range(n):\n    x[2 * i] = 1.0\n",
    "for i in range(n):\n    x[i] = y[i] * i\n",  # the variable as a value too
    "for i in range(n):\n    x[::i] = 1.0\n",  # a step
    "for i in range(n):\n    x[i - i] = 1.0\n",
])
def test_mark_leaves_indices_that_do_not_move_evenly(source):
    assert loops.mark(ast.parse(source)) == 0


def test_a_cell_whose_windows_ran_ahead_replays_with_numpys_results():
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    setup, source = WINDOWS["recurrence"]
    assert check(source, setup, backend="cpu").report.loops
    assert check(source, setup.replace("1e-4", "2e-4"), backend="cpu").report.cache == "hit"


def test_the_cells_functions_that_only_compute_arrays():
    """``def`` and ``lambda`` at the cell's top level; a function calling one that does more is not one; each
    with the names it reads from outside, those of the functions it calls among them."""
    tree = ast.parse("f = lambda x: x * c\n"
                     "def g(a, k=2.0):\n    '''doc'''\n    b = f(a) + k\n    a[0] = b[1]\n    return b, a\n"
                     "def h(a):\n    print(a)\n    return a\n"
                     "def j(a):\n    return h(a) * 2\n"
                     "def r(*a):\n    return a\n")
    got = loops._functions(tree)
    assert set(got) == {"f", "g"}
    assert got["f"] == (1, ("c",)) and got["g"][0] == 2 and set(got["g"][1]) == {"f", "c"}


def test_a_long_loop_whose_windows_move_runs_ahead_in_units_its_tape_can_hold():
    """100,000 steps: units of several iterations, so the plan cache's tape stays under ``cache.MAX_STEPS``
    and the cell replays."""
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    setup = "r = np.linspace(-0.02, 0.02, 100_000) ** 2\ns2 = np.zeros(100_000)\ns2[0] = 1e-4\n"
    source = "for t in range(1, len(r)):\n    s2[t] = 1e-6 + 0.1 * r[t - 1] + 0.85 * s2[t - 1]\n"
    (loop,) = check(source, setup, backend="cpu").report.loops
    assert loop["moves"] and loop["unit"] >= 100_000 // loops.MAX_UNITS, loop
    assert check(source, setup.replace("1e-4", "2e-4"), backend="cpu").report.cache == "hit"


# -- checkpoints: ``if step % 50 == 0: ...`` in a time-stepping loop ------------------------------------

CHECKPOINTS = {  # the loop runs ahead between the iterations where a checkpoint fires; those run as Python
    "a print every 50 steps": HEAT + "    if n % 50 == 0:\n        print(n, round(float(u.sum()), 6))\n",
    "snapshots kept": "snaps, every = [], 25\n" + HEAT + "    if n % every == 0:\n        snaps.append(u.copy())\n",
    "at the top of the body": HEAT.replace("    un = u", "    if (n + 1) % 60 == 0 and n > 0:\n        v = v + u\n    un = u"),
    "a checkpoint that moves the next": "every = 7\n" + HEAT + "    if n % every == 0:\n        every += 20\n"
                                        "        nu = nu * 0.9\n",
    "two checkpoints and a break": HEAT + "    if n % 40 == 0:\n        v += u\n    if n >= 250 and n % 2 == 1:\n"
                                          "        break\n",
    "in a function": "def run(u, k):\n    h = []\n    for n in range(k):\n        u = u * 0.999 + 0.001\n"
                     "        if n % 30 == 29:\n            h.append(float(u.max()))\n    return u, h\nw, hist = run(u, nt)\n",
}


@pytest.mark.parametrize("name", list(CHECKPOINTS))
@pytest.mark.parametrize("backend", ["numpy", "cpu", "cupy-dry"])
def test_a_loop_with_checkpoints_runs_ahead_between_them_with_numpys_results(name, backend):
    r = _forwarded(CHECKPOINTS[name], backend=backend)
    assert r.loops and sum(loop["iterations"] for loop in r.loops) > 150, r.loops


@pytest.mark.parametrize("source", [
    # the test raises at iteration 120 (ZeroDivisionError): every iteration before it written, as NumPy's
    HEAT + "    if n % (n - 120) == 0:\n        v = v + 1\n",
    # the test reads an array's value: a sync each iteration, traced
    "m = u.max()\n" + HEAT + "    if m > 0.5:\n        v = v + u\n",
    # a name the test reads is not a number
    "every = [50]\n" + HEAT + "    if n % every[0] == 0:\n        v = v + u\n",
    "every = 'x'\n" + HEAT + "    if n == every:\n        v = v + u\n",
])
def test_a_checkpoint_whose_test_is_not_plain_numbers_runs_as_numpy(source):
    check(source, SETUP, backend="cpu", cache=False)


def test_the_checkpoints_iterations_run_as_python():
    """Each iteration a checkpoint fires in is traced; between them the loop runs ahead, cut nowhere else."""
    src = "h = []\n" + HEAT + "    if n % 50 == 10:\n        h.append(n)\n"
    ns = {"np": np}
    exec(SETUP, ns)
    r = jupyter_fuse.run_cell(src, ns, backend="cpu", cache=False)
    assert ns["h"] == [10, 60, 110, 160, 210, 260]
    (loop,) = r.loops
    # (traced: the 6 checkpoints, 4 of the first 10 iterations (two warm the loop up, two units of one iteration
    # are matched), the first 2 of each of the 6 stretches after a checkpoint, the loop's last one)
    assert loop["of"] == 300 and loop["runs"] == 1 and loop["iterations"] == 300 - 6 - 4 - 6 * 2 - 1, loop


def test_a_checkpoint_replays_with_numpys_results():
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    source = CHECKPOINTS["snapshots kept"]
    assert check(source, SETUP, backend="cpu").report.loops
    assert check(source, SETUP.replace("** 2", "** 3"), backend="cpu").report.cache == "hit"


@pytest.mark.parametrize("source, marked", [
    (HEAT + "    if n % 50 == 0:\n        print(n)\n", 1),
    (HEAT + "    if n % k == 0 or n == last:\n        h.append(u.copy())\n", 1),
    (HEAT + "    if n % 50 == 0:\n        print(n)\n    else:\n        pass\n", 0),  # an else
    (HEAT + "    if np.any(u > 1):\n        print(n)\n", 1),  # a test of arrays: a value read each step (syncloops.py)
    (HEAT + "    if u[0] > 1:\n        print(n)\n", 1),  # an element: the same
    (HEAT + "    if u[0] > 1:\n        print(n)\n    if u[1] > 1:\n        print(n)\n", 0),  # two values a step
    (HEAT + "    if un is u:\n        print(n)\n", 0),  # a name the body computes
    ("for n in range(nt):\n    if n % 2:\n        u = u * 0.5\n", 0),  # nothing computed but in the checkpoint
])
def test_mark_takes_loops_with_checkpoints(source, marked):
    assert loops.mark(ast.parse(source)) == marked


# -- loops inside the loop, an input's elements read each step -------------------

TAPS = ("for k in range(nt):\n    out = np.zeros_like(u)\n    for d in range(-1, 2):\n"
        "        out[1:-1] += w[d + 1] * u[1 + d:49 + d]\n    u = out / w.sum()\n")


@pytest.mark.parametrize("backend", ["numpy", "cpu", "cupy-dry"])
def test_a_loop_running_a_short_inner_loop_each_step_runs_ahead(backend):
    """A stencil's taps as an inner loop: the outer loop's units hold whole inner loops, each the same, and the
    inner loop's variable ends as NumPy's."""
    r = _forwarded(TAPS, SETUP + "w = np.array([0.25, 0.5, 0.25])\n", backend=backend)
    (loop,) = r.loops
    assert loop["line"] == 1 and loop["iterations"] > 250, loop


@pytest.mark.parametrize("source", [
    "for k in range(nt):\n    for j in range(k):\n        u = u * 0.5\n",  # the outer variable in the inner range
    "for k in range(nt):\n    for j in range(3):\n        u = u * 0.5\n        j = u\n",  # the inner variable rebound
    "for k in range(nt):\n    for j in range(3):\n        u = u * 0.5\n    else:\n        print(j)\n",
    "for k in range(nt):\n    for j in [1, 2]:\n        u = u * j\n",
])
def test_mark_leaves_inner_loops_that_change_the_graph(source):
    tree = ast.parse(source)
    loops.mark(tree)
    assert "driver(range(nt)" not in ast.unparse(tree)


@pytest.mark.parametrize("source, n, forwarded", [
    ("for k in range(30):\n    un = u.copy()\n    u[1:-1] = un[1:-1] + 0.3 * (un[2:] - 2 * un[1:-1] + un[:-2])\n",
     50, True),
    ("for k in range(30):\n    un = u.copy()\n    u[1:-1] = un[1:-1] + 0.3 * (un[2:] - 2 * un[1:-1] + un[:-2])\n",
     100_000, False),
    ("for k in range(30):\n    u = u * 0.5 + 0.25\n    v = u - 1.0\n", 50, False),
])
def test_a_short_loop_storing_into_small_arrays_runs_ahead_in_small_units(source, n, forwarded):
    """30 steps of 7 ops: units of 48 ops would need 73 steps. A loop storing into part of an array needs a kernel
    a step anyway: on small arrays it runs ahead in units of one step, 25 of them (two warm the loop up, two are
    matched, the last is Python's). On long arrays, or with no store (its steps fuse: one kernel for all thirty),
    it is planned whole."""
    r = _forwarded(source, f"u = np.linspace(0.0, 1.0, {n}) ** 2\n", backend="cpu")
    assert bool(r.loops) == forwarded and (not forwarded or r.loops[0]["iterations"] == 25), r.loops
    assert forwarded or n > 50 or r.kernels == 1, r.kernels


def test_an_inputs_elements_read_each_step_are_copied_once(monkeypatch):
    """``w[0]`` every step is one node (hash-consed) the session keeps: copied out of ``w`` once, not per step."""
    monkeypatch.setenv("JUPYTER_FUSE_FASTFORWARD", "off")
    r = check("for k in range(nt):\n    u = u * w[1] + w[0]\n    s = float(u[0])\n",
              SETUP + "w = np.array([0.5, 0.25])\n", backend="cpu", cache=False).report
    copies = [k for k in r.kernel_list if set(k["ops"]) == {"copy"} and list(k["lines"]) == [2]]
    assert copies and sum(k["launches"] for k in copies) == 1, copies


# -- numbers the loop variable computes: ``x * (1 - 1 / (k + 2))`` ------------------------------------------

NUMBERS = {
    "a coefficient each step": "for k in range(nt):\n    u = u * (1.0 - 1.0 / (k + 2)) + 0.01\n",
    "a forcing term": "for k in range(3 * nt):\n    u = u + 0.01 * np.sin(0.1 * k * nu)\n",
    "a backward range, a builtin": "for k in range(nt, 0, -1):\n    u = u * 0.5 + abs(k - 150) * 1e-3\n",
    "a float array, a float32 step": "for k in range(nt):\n    v += np.float32(k) * 0.5\n    u = u + np.exp(-k * 0.01)\n",
    "two numbers from one": "for k in range(1, nt):\n    v = v * (1 - 0.5 / k) + u / (k + 0.5)\n",
}


@pytest.mark.parametrize("name", list(NUMBERS))
@pytest.mark.parametrize("backend", ["numpy", "cpu", "cupy-dry"])
def test_a_loop_whose_variable_computes_numbers_runs_ahead_with_numpys_results(name, backend):
    r = _forwarded(NUMBERS[name], backend=backend)
    assert r.loops and r.loops[0]["numbers"] and r.loops[0]["iterations"] > 200, r.loops
    assert "constants its loop variable computes" in repr(r)


@pytest.mark.parametrize("name", list(NUMBERS))
def test_units_whose_numbers_change_run_as_one_program_reading_a_table_and_replay(name):
    """Each unit's constants (``terms.Terms.ahead``) are a table the compiled program reads, unit by unit
    (``program.unit_loop``): no unit is launched from Python; the tape records each with its own constants, so
    the cell replays them (with other inputs) as NumPy computes them."""
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    setup = SETUP.replace("nt = 300", "nt = 1200")  # (units enough for a program: ``loops.MIN_PROGRAM_LAUNCHES``)
    r = check(NUMBERS[name], setup, backend="cpu").report
    assert r.loops and r.loops[0]["numbers"] and r.loops[0]["how"] == "compiled", r.loops
    assert check(NUMBERS[name], setup.replace("** 2", "** 3"), backend="cpu").report.cache == "hit"


def test_numbers_an_outer_loop_moves_launch_unit_by_unit_after_one_program(monkeypatch):
    """The inner loop's table differs in each run of it (``s`` moves its numbers): one program is made, for the
    first run's table; the later runs launch their units one by one (a program each would cost more)."""
    monkeypatch.setattr(loops, "_TABLED", {})
    monkeypatch.setattr(loops, "_PROGRAMS", {})
    r = check("for s in range(3):\n    for k in range(1200):\n        u = u * (1.0 - 1.0 / (k + 2 + s)) + 0.01\n",
              SETUP, backend="cpu", cache=False).report
    assert r.loops and r.loops[0]["runs"] == 3 and r.loops[0]["numbers"] and r.loops[0]["how"] == "", r.loops
    assert len(loops._PROGRAMS) == 1 and len(loops._TABLED) == 1


def test_a_number_that_raises_stops_the_run_ahead_before_its_iteration(monkeypatch):
    """``1.0 / (k - 600)``: the units before iteration 600 run ahead; that one is traced and raises NumPy's
    ZeroDivisionError, everything before it written."""
    ran = _counted(monkeypatch)
    check("for k in range(900):\n    u = u + 1.0 / (k - 600)\n", SETUP, backend="cpu", cache=False)
    assert ran and ran[0][0] >= 1, ran  # (units ran ahead; the values and the exception: check)


@pytest.mark.parametrize("source", [
    # a number that stays the same for a while (a branch it picks, an int: a plan per value)
    "for k in range(nt):\n    u = u + (k > 100)\n", "for k in range(nt):\n    u = u * 0.5 + (k // 100) * 0.5\n",
    "for k in range(nt):\n    u = u * 0.5 if k % 7 else u + 1.0\n", "c = u * 0\nfor k in range(nt):\n    c += k\n",
    "for k in range(nt):\n    u = np.round(u + 0.1, k // 100)\n",
])
def test_numbers_that_do_not_change_from_unit_to_unit_are_traced_with_numpys_results(source):
    """Two units that gave a number the same value cannot tell when it changes: the loop is traced."""
    r = check(source, SETUP, backend="cpu", cache=False).report
    assert not any(loop.get("numbers") for loop in r.loops), r.loops


@pytest.mark.parametrize("source", [
    "def f(a, j):\n    return a * abs(j)\nfor k in range(nt):\n    u = f(u, k)\n",  # a function of the cell's: what it computes
    "for k in range(nt):\n    u = u * k + v[k]\n",  # both an index and a number
])
def test_mark_leaves_loops_whose_variable_goes_where_its_numbers_are_not_seen(source):
    assert loops.mark(ast.parse(source)) == 0


def test_numbers_that_two_subexpressions_give_alike_are_traced():
    """``k`` and ``k * 1`` give both units' constants: which one a constant is cannot be told, the loop is traced."""
    r = check("for k in range(nt):\n    u = u * 0.5 + k + v * (k * 1)\n", SETUP, backend="cpu", cache=False).report
    assert not r.loops
