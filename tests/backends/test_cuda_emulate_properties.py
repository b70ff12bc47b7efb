"""Random programs (the drop-in tests' generator) and changes between runs (the replay tests' cells)
under ``-b cupy --emulate``: every kernel they render runs as CUDA on the CPU, against NumPy.

Each example compiles its kernels with the host compiler (about 0.4 s each, cached on disk), so
the example counts are bounded separately from the profile.
"""

from __future__ import annotations

import os
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(TESTS, "unit"), os.path.join(TESTS, "replay")]

from harness import check  # noqa: E402
from helpers import Twin  # noqa: E402
from hypothesis import given, note, settings, strategies as st  # noqa: E402
from test_properties import _setup, programs  # noqa: E402
from test_soundness import CELLS, CHANGES, _setup as _replay_setup  # noqa: E402

CI = os.environ.get("HYPOTHESIS_PROFILE", "dev") == "ci"


@settings(max_examples=8 if CI else 60)
@given(programs())
def test_random_programs_emulated(prog):
    arrays, view_index, source = prog
    note(f"arrays: { {k: (v.dtype, v.shape) for k, v in arrays.items()} }, va = a{view_index}\n{source}")
    check(source, _setup(arrays, view_index), backend="cupy", emulate=True)


# not cell 0: it prints a float sum, whose last digit depends on the order of the additions (a CUDA
# reduction tree's is not NumPy's pairwise order; the values themselves are compared within tolerance)
@settings(max_examples=6 if CI else 40)
@given(cell=st.sampled_from(range(1, len(CELLS))),
       changes=st.lists(st.sampled_from(sorted(CHANGES)), min_size=1, max_size=3))
def test_changes_between_runs_match_numpy_emulated(cell, changes):
    from jupyter_fuse.cache import PLAN_CACHE

    PLAN_CACHE.clear()
    twin = Twin(_replay_setup, "cupy")
    twin.run(CELLS[cell], emulate=True)
    for name in changes:
        twin.change(CHANGES[name])
        twin.run(CELLS[cell], emulate=True)
        twin.run(CELLS[cell], emulate=True)  # unchanged: a replay when the first was traced
    PLAN_CACHE.clear()
