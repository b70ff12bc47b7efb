"""The machine's copy bandwidth, measured once per process: the floor every kernel is held against.

A kernel that reads and writes ``B`` bytes cannot finish faster than ``B`` over
the memory bandwidth; a plain array copy is the best any kernel of ours does at
moving bytes, so its rate is the honest floor (a roofline with one roof: our
kernels do a few flops per element, so it is memory that bounds them).
Measured, not quoted from a data sheet: a shared 2-core VM and a laptop differ
by 10x, and students should compare against the machine in front of them.
No UI imports.
"""

from __future__ import annotations

import functools
import time

COPY_BYTES = 32 << 20  # per array: well past the caches, and about 10 ms of copying on a slow machine
REPEATS = 5  # the best of these: the floor is what the memory can do, not what a busy moment allowed


@functools.cache
def copy_rate(device: str = "host") -> float | None:
    """Bytes per second a copy into an existing array moves (read plus write), on ``host`` (NumPy)
    or ``gpu`` (CuPy); None when that memory is not there. Cached for the process."""
    if device == "gpu":
        return _gpu_rate()
    import numpy as np

    src = np.ones(COPY_BYTES // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # the first touch pays the page faults; do not time it
    best = min(_timed(lambda: np.copyto(dst, src)) for _ in range(REPEATS))
    return 2 * src.nbytes / best


def _gpu_rate() -> float | None:
    try:
        import cupy

        if not cupy.is_available():
            return None
        src = cupy.ones(COPY_BYTES // 8)
        dst = cupy.empty_like(src)
        cupy.copyto(dst, src)
        stream = cupy.cuda.get_current_stream()
        stream.synchronize()

        def once() -> None:
            cupy.copyto(dst, src)
            stream.synchronize()

        best = min(_timed(once) for _ in range(REPEATS))
        return 2 * src.nbytes / best
    except Exception:  # noqa: BLE001 - no device, no driver: there is no floor to draw
        return None


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return max(time.perf_counter() - t0, 1e-9)


def device_of(d: dict) -> str:
    """Where a report's kernels ran: the GPU for a real cupy run, the host otherwise (a dry run too)."""
    dry = (d.get("options") or {}).get("dry_run")
    return "gpu" if d.get("backend") == "cupy" and not dry else "host"


def floor_for(d: dict) -> float | None:
    """The copy bandwidth to hold this report's kernels against (measured on first use)."""
    return copy_rate(device_of(d))
