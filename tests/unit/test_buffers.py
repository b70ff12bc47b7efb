"""Output buffers: a dead result's memory is reused only when nobody else can see it."""

from __future__ import annotations

import numpy as np

import jupyter_fuse as jf
from jupyter_fuse import buffers

N = 1 << 18  # float64: 2 MiB, above buffers.MIN_BYTES


def _rerun(ns: dict, times: int = 3) -> list[int]:
    """Addresses of `y`'s memory over re-runs of `y = x * 2 + 1` on the cpu backend."""
    addrs = []
    for _ in range(times):
        jf.run_cell("y = x * 2 + 1", ns, backend="cpu")
        np.testing.assert_array_equal(ns["y"], ns["x"] * 2 + 1)
        addrs.append(ns["y"].ctypes.data)
    return addrs


def test_a_rebound_result_is_recycled():
    buffers.clear()
    ns = {"np": np, "x": np.arange(N, dtype=np.float64)}
    a = _rerun(ns, 4)
    assert a[2] == a[0] and a[3] == a[1]  # run n reuses the memory run n-2 left behind


def test_a_result_still_referenced_is_never_reused():
    buffers.clear()
    ns = {"np": np, "x": np.arange(N, dtype=np.float64)}
    held = []
    for _ in range(3):
        jf.run_cell("y = x * 2 + 1", ns, backend="cpu")
        held.append(ns["y"])  # the user keeps every result
    assert len({h.ctypes.data for h in held}) == 3
    for h in held:
        np.testing.assert_array_equal(h, ns["x"] * 2 + 1)
    view = ns["y"][::2]  # a view keeps its base alive: not recycled either
    jf.run_cell("y = x * 3", ns, backend="cpu")
    jf.run_cell("y = x * 4", ns, backend="cpu")
    np.testing.assert_array_equal(view, (ns["x"] * 2 + 1)[::2])


def test_small_read_only_and_non_owning_arrays_are_not_kept():
    buffers.clear()
    small, ro, base = np.zeros(10), np.zeros(N), np.zeros(2 * N)
    ro.flags.writeable = False
    for v in (small, ro, base[:N]):
        ns = {"y": v}
        del v
        buffers.rebind(ns, "y", 0)
    assert buffers._held == 0 and not buffers._pool
