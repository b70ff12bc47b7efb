"""%%fuse -b cupy --dry-run and --emulate in a real IPython shell (no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest
from IPython.core.error import UsageError

from jupyter_fuse.backends import cuda_available


def _shell():
    """IPython's global test shell (start_ipython returns None once it is running)."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    return start_ipython() or get_ipython()


@pytest.fixture
def ip():
    shell = _shell()
    shell.run_line_magic("load_ext", "jupyter_fuse")
    shell.user_ns.update({"np": np, "x": np.arange(6.0)})
    yield shell
    for k in ("y", "r", "s"):
        shell.user_ns.pop(k, None)
    shell.run_line_magic("unload_ext", "jupyter_fuse")


def test_the_magic_takes_dry_run(ip, capsys):
    ip.run_cell_magic("fuse", "-b cupy --dry-run -o r", "y = np.sin(x) * 2")
    out = capsys.readouterr().out
    assert "fuse[cupy --dry-run]" in out and "1/1 CUDA kernels compiled" in out
    assert ip.user_ns["r"].kernel_list[0]["compiled"] is True
    np.testing.assert_allclose(ip.user_ns["y"], np.sin(np.arange(6.0)) * 2)


def test_the_magic_takes_emulate(ip, capsys):
    ip.run_cell_magic("fuse", "-b cupy --emulate -o r", "y = np.sin(x) * 2\ns = y.sum()")
    out = capsys.readouterr().out
    assert "fuse[cupy --emulate]" in out and "1/1 CUDA kernels compiled, emulated on the CPU" in out
    assert all(k["runs_on"] == "CUDA, emulated on the CPU" for k in ip.user_ns["r"].kernel_list)
    np.testing.assert_allclose(ip.user_ns["y"], np.sin(np.arange(6.0)) * 2)
    assert ip.user_ns["s"] == pytest.approx((np.sin(np.arange(6.0)) * 2).sum(), rel=1e-12)
    with pytest.raises(UsageError, match="--emulate runs the CUDA kernels of -b cupy"):
        ip.run_cell_magic("fuse", "-b cpu --emulate", "w = x + 1")
    assert "w" not in ip.user_ns


def test_emulate_without_a_compiler_says_what_to_install(ip, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.raises(UsageError, match=r"host C\+\+ compiler"):
        ip.run_cell_magic("fuse", "-b cupy --emulate", "w = x + 1")
    assert "w" not in ip.user_ns


@pytest.mark.skipif(cuda_available(), reason="a CUDA device is present")
def test_cupy_without_a_device_names_dry_run_and_cpu(ip):
    with pytest.raises(UsageError, match=r"-b cpu.*--dry-run"):
        ip.run_cell_magic("fuse", "-b cupy", "y = x + 1")
    with pytest.raises(UsageError, match="--dry-run"):
        ip.run_cell_magic("fuse", "-b cpu --dry-run", "y = x + 1")
    assert "y" not in ip.user_ns
