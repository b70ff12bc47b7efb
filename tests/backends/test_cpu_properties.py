"""Random programs through the cpu backend (fused, and with --no-fuse) against plain NumPy.

Each example compiles its kernels, so the example count is bounded separately from
the profile (compiled kernels are cached on disk for the next run).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit"))

from harness import check  # noqa: E402
from hypothesis import given, note, settings  # noqa: E402
from test_properties import _setup, programs  # noqa: E402  (the drop-in tests' program generator)

EXAMPLES = 20 if os.environ.get("HYPOTHESIS_PROFILE", "dev") == "ci" else 80


@settings(max_examples=EXAMPLES)
@given(programs())
def test_random_programs_fused(prog):
    arrays, view_index, source = prog
    note(f"arrays: { {k: (v.dtype, v.shape) for k, v in arrays.items()} }, va = a{view_index}\n{source}")
    check(source, _setup(arrays, view_index), backend="cpu")


@settings(max_examples=EXAMPLES // 2)
@given(programs())
def test_random_programs_unfused(prog):
    arrays, view_index, source = prog
    note(f"arrays: { {k: (v.dtype, v.shape) for k, v in arrays.items()} }, va = a{view_index}\n{source}")
    check(source, _setup(arrays, view_index), backend="cpu", fuse=False)
