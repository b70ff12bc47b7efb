"""%%fuse -b cupy --dry-run in a real IPython shell (no GPU needed)."""

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
    for k in ("y", "r"):
        shell.user_ns.pop(k, None)
    shell.run_line_magic("unload_ext", "jupyter_fuse")


def test_the_magic_takes_dry_run(ip, capsys):
    ip.run_cell_magic("fuse", "-b cupy --dry-run -o r", "y = np.sin(x) * 2")
    out = capsys.readouterr().out
    assert "fuse[cupy --dry-run]" in out and "1/1 CUDA kernels compiled" in out
    assert ip.user_ns["r"].kernel_list[0]["compiled"] is True
    np.testing.assert_allclose(ip.user_ns["y"], np.sin(np.arange(6.0)) * 2)


@pytest.mark.skipif(cuda_available(), reason="a CUDA device is present")
def test_cupy_without_a_device_names_dry_run_and_cpu(ip):
    with pytest.raises(UsageError, match=r"-b cpu.*--dry-run"):
        ip.run_cell_magic("fuse", "-b cupy", "y = x + 1")
    with pytest.raises(UsageError, match="--dry-run"):
        ip.run_cell_magic("fuse", "-b cpu --dry-run", "y = x + 1")
    assert "y" not in ip.user_ns
