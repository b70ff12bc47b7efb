"""The %%fuse magic in a real IPython shell."""

from __future__ import annotations

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.testing.globalipapp import start_ipython

import jupyter_fuse
from harness import assert_no_lazy


def _shell():
    """IPython's global test shell (start_ipython returns None once it is running)."""
    from IPython import get_ipython

    return start_ipython() or get_ipython()


@pytest.fixture(scope="module")
def ip():
    shell = _shell()
    shell.run_line_magic("load_ext", "jupyter_fuse")
    yield shell
    shell.run_line_magic("unload_ext", "jupyter_fuse")


@pytest.fixture(autouse=True)
def fresh_ns(ip):
    ip.user_ns.update({"np": np, "x": np.arange(6.0)})
    yield
    assert_no_lazy(ip.user_ns)
    for k in ("y", "r", "s", "z", "t"):
        ip.user_ns.pop(k, None)


def test_load_registers_and_unload_removes(ip):
    shell = ip
    shell.run_line_magic("unload_ext", "jupyter_fuse")
    assert "fuse" not in shell.magics_manager.magics["cell"]
    assert "fuse_dashboard" not in shell.magics_manager.magics["line"]
    shell.run_line_magic("load_ext", "jupyter_fuse")
    assert "fuse" in shell.magics_manager.magics["cell"]


def test_cell_runs_and_prints_summary(ip, capsys):
    x = ip.user_ns["x"]
    result = ip.run_cell_magic("fuse", "-b numpy", "y = np.sin(x) * 2\nx += 1\n")
    out = capsys.readouterr().out
    assert result is None
    first = out.splitlines()[0]
    assert first.startswith("fuse[numpy]:") and "ops ->" in first and "kernels" in first
    np.testing.assert_allclose(ip.user_ns["y"], np.sin(np.arange(6.0)) * 2)
    assert ip.user_ns["x"] is x and np.array_equal(x, np.arange(6.0) + 1)


def test_cell_value_is_returned(ip):
    value = ip.run_cell_magic("fuse", "-q -b numpy", "y = x * 2\ny.sum()")
    assert type(value) is np.float64 and value == 30.0


def test_quiet_and_output_report(ip, capsys):
    ip.run_cell_magic("fuse", "-q -b numpy -o r", "y = x + 1\nprint(y.sum())")
    assert capsys.readouterr().out == "21.0\n"
    r = ip.user_ns["r"]
    assert isinstance(r, jupyter_fuse.Report) and r.backend == "numpy" and r.kernels >= 1
    assert r.syncs and r.syncs[0]["line"] == 3  # as the editor numbers it: the %%fuse line is line 1


def test_expect_kernels(ip, capsys):
    ip.run_cell_magic("fuse", "-q -b numpy --expect-kernels 5", "y = x + 1")
    from jupyter_fuse.runner import KernelCountError

    with pytest.raises(KernelCountError, match="--expect-kernels 0: the cell launched 1 kernel"):
        ip.run_cell_magic("fuse", "-b numpy --expect-kernels 0", "y = x + 1")
    assert isinstance(ip.user_ns["y"], np.ndarray)
    assert capsys.readouterr().out.startswith("fuse[numpy]: 1 op -> 1 kernel")  # the panel is shown first


def test_expect_kernels_error_is_one_line_with_the_panel(ip, capsys):
    """The broken promise reads as one line, after the panel that shows the cuts; no frame of ours."""
    res = ip.run_cell("%%fuse -b numpy --expect-kernels 1\ny = np.sin(x) * 2\n")
    assert res.error_in_exec is not None
    out = capsys.readouterr()
    text = out.out + out.err
    assert "k0: sin (line 2)" in text and "k1: multiply (line 2)" in text  # the panel's text
    error = [ln for ln in text.splitlines() if "KernelCountError" in ln]
    assert error == ["KernelCountError: --expect-kernels 1: the cell launched 2 kernels (cut 1 time: the numpy "
                     "backend is the reference: one NumPy call per op, never fused (-b cpu or -b cupy fuse))"]
    assert "magic.py" not in text and "runner.py" not in text and "Traceback" not in text


def test_unknown_backend_is_usage_error(ip):
    with pytest.raises(UsageError, match="cpu.*numpy.*cupy|numpy"):
        ip.run_cell_magic("fuse", "-b tpu", "y = x + 1")
    assert "y" not in ip.user_ns


def test_cupy_without_device_names_cpu(ip):
    from jupyter_fuse.backends import cuda_available

    if cuda_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(UsageError, match="-b cpu"):
        ip.run_cell_magic("fuse", "-b cupy", "y = x + 1")


def test_bad_option_is_usage_error(ip):
    with pytest.raises(UsageError):
        ip.run_cell_magic("fuse", "--no-such-option", "y = x + 1")


def test_syntax_error_is_ordinary(ip):
    with pytest.raises(SyntaxError):
        ip.run_cell_magic("fuse", "-q -b numpy", "y = (x +\n")


def test_raising_cell_leaves_concrete_namespace(ip):
    with pytest.raises(ZeroDivisionError):
        ip.run_cell_magic("fuse", "-q -b numpy", "y = x * 3\nt = [y + 1, {'k': y.T}]\nz = 1 / 0\n")
    assert isinstance(ip.user_ns["y"], np.ndarray) and "z" not in ip.user_ns
    assert isinstance(ip.user_ns["t"][1]["k"], np.ndarray)


def test_run_cell_shows_user_line_in_traceback(ip, capsys):
    res = ip.run_cell("%%fuse -q -b numpy\ny = x * 2\ns = y.reshape(4)\n")
    assert isinstance(res.error_in_exec, ValueError)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "s = y.reshape(4)" in text
    assert "jupyter_fuse/runner.py" not in text and "jupyter_fuse/trace.py" not in text
    assert isinstance(ip.user_ns["y"], np.ndarray)


def test_help_is_the_docstring(ip):
    doc = ip.magics_manager.magics["cell"]["fuse"].__doc__
    assert doc.startswith("usage: %%fuse [-b BACKEND]") and "::" not in doc
    flat = " ".join(doc.split())  # argparse wraps the option help
    for needle in ("lazily", "-o NAME", "--expect-kernels", "%fuse_dashboard", "%fuse_cache",
                   "no panel and no summary", "numpy (the reference: one plain NumPy call per op",
                   "cpu (numba, fused", "the times are NumPy's on the host"):
        assert needle in flat, needle
    assert "-b numpy" not in doc.split("Example")[1].split("\n\n")[1]  # the example uses the default backend


def test_the_help_example_is_true(ip, capsys):
    """What the help says the example gives (5 ops -> 1 kernel on the cpu backend) is what it gives."""
    pytest.importorskip("numba")
    ip.run_cell_magic("fuse", "-b cpu", "y = np.sin(x) ** 2 + np.cos(x) ** 2")
    assert capsys.readouterr().out.startswith("fuse[cpu]: 5 ops -> 1 kernel · ")
    ip.run_cell_magic("fuse", "-b numpy", "y = np.sin(x) ** 2 + np.cos(x) ** 2")
    assert capsys.readouterr().out.startswith("fuse[numpy]: 5 ops -> 5 kernels · ")


def test_cell_numbers_are_the_prompts(ip, capsys):
    """The dashboard's In[n] and a traceback's Cell In[n] are the cell's own prompt number."""
    from jupyter_fuse.dashboard import HISTORY

    number = ip.execution_count
    ip.run_cell("%%fuse -q -b numpy\ny = x * 2\n", store_history=True)
    assert HISTORY.runs[-1].number == number and HISTORY.runs[-1].label.startswith(f"In [{number}]:")
    res = ip.run_cell("%%fuse -q -b numpy\ny = x * undefined_name\n", store_history=True)
    assert isinstance(res.error_in_exec, NameError)
    out = capsys.readouterr()
    assert f"Cell In[{number + 1}], line 2" in out.out + out.err  # line 2: the editor's numbering


def test_summary_shows_every_phase_and_the_overhead_share(ip, capsys):
    ip.run_cell_magic("fuse", "-b numpy", "y = x * 2 + 1")
    first = capsys.readouterr().out.splitlines()[0]
    for phase in ("guard", "trace", "plan", "compile", "run"):
        assert f" {phase} " in first, phase
    assert "(kernels " in first and "overhead " in first


def test_same_as_plain_cell(ip):
    src = "y = (x[::-1] + 1).reshape(2, 3)\ny[0] *= 2\ns = float(y.sum())\nt = y.T @ y\n"
    ip.run_cell(src)
    plain = {k: ip.user_ns[k] for k in ("y", "s", "t")}
    ip.user_ns["x"] = np.arange(6.0)
    ip.run_cell_magic("fuse", "-q -b numpy", src)
    for k, v in plain.items():
        assert type(ip.user_ns[k]) is type(v)
        np.testing.assert_array_equal(ip.user_ns[k], v)


def test_compile_progress_is_a_status_line_the_panel_replaces(ip, monkeypatch, capsys):
    """In a notebook a slow compile is said on a status line under the cell, emptied when the run ends:
    nothing on stderr, nothing left in the saved notebook."""
    from jupyter_fuse import magic, progress

    shown: list[tuple[str, dict]] = []

    class Handle:
        def update(self, data, raw=False):
            shown.append(("update", data))

    def display(data, raw=False, display_id=False):
        shown.append(("display", data))
        return Handle()

    def slow_run(source, ns, backend, **kw):
        progress.say("compiling k0 (ew, 2 ops) with numba...")  # what the cpu backend says after 0.5 s
        return jupyter_fuse.run_cell(source, ns, backend, **kw)

    monkeypatch.setattr("IPython.display.display", display)
    monkeypatch.setattr(ip, "kernel", object(), raising=False)  # as inside a Jupyter kernel
    monkeypatch.setattr(magic, "run_cell", slow_run)
    ip.run_cell_magic("fuse", "-q -b numpy", "y = x + 1")
    assert shown[0][0] == "display" and "jupyter_fuse: compiling k0" in shown[0][1]["text/plain"]
    assert shown[-1] == ("update", {"text/plain": ""})
    assert "compiling" not in capsys.readouterr().err


def test_the_readme_leads_with_the_default_backend():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    first = readme[readme.index("%%fuse"):].splitlines()[0]
    assert first == "%%fuse"  # not `-b numpy`: the reference backend fuses nothing
    assert "y = np.sin(x) ** 2 + np.cos(x) ** 2" in readme and "5 ops -> 1 kernel" in readme


def test_no_compile_plan_replays_kernel_by_kernel(ip):
    """A loop's replay runs as one compiled program, unless --no-compile-plan asks for kernels."""
    cell = "for i in range(40):\n    x[1:] = x[1:] * 0.5 + x[:-1]\n"
    ip.run_cell_magic("fuse", "-q -b cpu -o r", cell)
    ip.run_cell_magic("fuse", "-q -b cpu --no-compile-plan -o r", cell)
    slow = ip.user_ns["r"]
    assert slow.cache == "hit" and not slow.program and "--no-compile-plan" in slow.program_note
    ip.run_cell_magic("fuse", "-q -b cpu -o r", cell)
    fast = ip.user_ns["r"]
    assert fast.cache == "hit" and "40 iterations of (k0)" in fast.program and not fast.program_note
    expect = np.arange(6.0)
    for _ in range(120):
        expect[1:] = expect[1:] * 0.5 + expect[:-1]
    np.testing.assert_allclose(ip.user_ns["x"], expect)
