"""``x.flags.writeable`` inside a cell: an array the cell makes read-only raises on its later writes, as NumPy
does (the flag was set on a computed copy and every later write went through), and its views inherit it."""

from __future__ import annotations

import numpy as np
import pytest
from harness import check

BACKENDS = [pytest.param({"backend": "numpy"}, id="numpy"), pytest.param({"backend": "cpu"}, id="cpu"),
            pytest.param({"backend": "cupy", "dry_run": True}, id="cupy-dry")]

SETUP = "x = np.arange(6.0); y = np.arange(12.0).reshape(3, 4)[:, 1:]; ro = np.arange(3.0); ro.flags.writeable = False"

CASES = [
    "a = x.copy()\na.flags.writeable = False\na[0] = 5", "a = x * 2\na.flags['WRITEABLE'] = False\nv = a[1:]\nv[0] = 1",
    "a = x * 2\na.flags.writeable = False\na += 1", "a = x.copy()\na.flags.writeable = False\nb = a + 1\nf = a.flags.writeable",
    "a = x.copy()\na.flags.writeable = False\na.flags.writeable = True\na[0] = 3\nf = a.flags['W']",
    "a = x.copy()\nv = a[::2]\na.flags.writeable = False\nv[0] = 7\nw = a * 1", "s = x.sum()\nf = s.flags.writeable",
    "a = x.copy()\nv = a[::2]\nv.flags.writeable = False\na[0] = 1\nv[1] = 2", "a = x.copy()\nc = a.flags.c_contiguous",
    "x.flags.writeable = False\nz = x + 1", "v = y.copy()\nv.flags.writeable = False\nnp.add(v, 1, out=v)",
    "a = ro.copy()\na.flags.writeable = True\na[0] = 1", "v = ro[1:]\nv.flags.writeable = True",
]


@pytest.mark.parametrize("opts", BACKENDS)
@pytest.mark.parametrize("source", CASES, ids=[s.replace("\n", "; ")[:60] for s in CASES])
def test_flags_a_cell_sets_are_numpys(source, opts):
    check(source, SETUP, **opts)
