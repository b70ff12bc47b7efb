"""The labextension's pure TypeScript helpers, unit-tested with node's test runner."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LABEXT = Path(__file__).resolve().parents[2] / "labextension"


def test_typescript_unit_tests():
    npm = shutil.which("npm")
    if npm is None or not (LABEXT / "node_modules").is_dir():
        pytest.skip("needs npm and labextension/node_modules (make install)")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    r = subprocess.run([npm, "test", "--silent"], cwd=LABEXT, env=env, capture_output=True, text=True,
                       timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "# fail 0" in out and "# pass 0" not in out, out[-3000:]
