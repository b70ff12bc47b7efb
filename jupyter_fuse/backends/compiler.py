"""Compiling in the background: a small kernel's first run does not wait for numba.

numba takes 0.3-1.5 s to compile one kernel, while NumPy runs a kernel over a thousand elements in
microseconds: a time-stepping cell on small arrays with twenty distinct kernels would wait ten
seconds on its first run for what NumPy does in milliseconds. So, by default, a kernel that numba
has never compiled (nothing in memory or in the disk cache) and that is small (``SMALL``: its elements
times its ops) runs on NumPy — the
oracle itself, so the values are NumPy's — while one background thread compiles it; its next
launch, once compiled, is the fused kernel. A replay compiled as one program (``program.py``) is
made the same way: the replays run kernel by kernel until the program is ready. Compiles start only
between cells (``cell_running``), while the user reads the result.

``JUPYTER_FUSE_COMPILE=sync`` compiles every kernel where it first runs, as before (the tests and
the kernel-by-kernel comparisons of the benchmarks use it); ``wait()`` blocks until the
background is idle (a benchmark's "kernels compiled" runs, a test of this module).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import queue
import sys
import threading
from typing import Any, Callable, Iterator

# elements times ops: below this a kernel's NumPy run (a few ns an element an op: under 50 ms) costs
# far less than waiting for numba (0.3-1.5 s a kernel); past it the kernel compiles where it runs
SMALL = 1 << 24
# ... unless it has many ops: numba's compile time grows with them (a 20-step Mandelbrot fused into one
# kernel of about 120 ops made a first run take 4.0 s, bench/loops.py; NumPy: 0.15 s), so such a kernel
# runs on NumPy meanwhile where NumPy's run (NUMPY_PER_OP an element an op) takes less than its compile
# (COMPILE_PER_OP an op). Kernels of few ops keep the rule above.
MANY_OPS = 32
NUMPY_PER_OP = 3e-9
COMPILE_PER_OP = 0.015


def meanwhile(work: int, ops: int) -> bool:
    """Does a kernel of ``ops`` ops over ``work`` element-ops run on NumPy while numba compiles it (else it
    compiles where it runs)?"""
    return work < SMALL or ops >= MANY_OPS and work * NUMPY_PER_OP < ops * COMPILE_PER_OP


def background() -> bool:
    """Whether small kernels and programs compile in the background (the default)."""
    return os.environ.get("JUPYTER_FUSE_COMPILE", "background") != "sync"


class _Job:
    __slots__ = ("work", "done", "error")

    def __init__(self, work: Callable[[], Any]) -> None:
        self.work, self.done, self.error = work, threading.Event(), None


_JOBS: dict[Any, _Job] = {}  # key -> its job, pending or done (a key is compiled once per process)
_QUEUE: "queue.Queue[_Job | None]" = queue.Queue()
_LOCK = threading.Lock()
_THREAD: list[threading.Thread] = []
_IDLE = threading.Condition()  # a job starts only while no cell runs: numba holds the GIL for long
_CELLS = [0]  # cells running now
# Python's switch interval while compiles are queued or running: a NumPy call of a cell that lets go of the
# GIL (a ufunc over a few thousand elements) waits up to the interval (5 ms by default) to take it back from
# numba's thread, once per call. A cell run right after the one whose replay program began compiling (a
# script, a benchmark: no pause for the user to read) took 0.8-1.2 s where NumPy takes 10 ms (bench/loops.py's
# cavity, its 2nd run); at 0.1 ms, NumPy's time (at 0.5 ms: 0.46 s; lowered only once the compile had
# started: 0.13 s).
SWITCH_INTERVAL = 1e-4
_SAVED_INTERVAL: list[float] = []  # the interval before, while lowered


class _CellRunning:
    """While a cell runs, no compile starts (one already started finishes, the cell taking the GIL back
    sooner: ``SWITCH_INTERVAL``): the cell's own Python and NumPy calls would share the GIL with
    numba's. Compiles run between cells, as the user reads. (A class, not a generator: a replay pays for
    this twice per run.)"""

    def __enter__(self) -> None:
        with _IDLE:
            _CELLS[0] += 1

    def __exit__(self, *exc: Any) -> None:
        with _IDLE:
            _CELLS[0] -= 1
            if _THREAD and not _CELLS[0]:
                _IDLE.notify_all()


# Python's collector thresholds while a cell is traced. Tracing allocates nodes, arrays, kernels and
# launchers that mostly live until the cell ends: at the default (700 allocations a young collection,
# every 10th of them an older one) a loop's trace spent a large share of its time collecting (confusion_loop's
# first run, seen with gc.callbacks in a diagnostic script).
# Fewer, larger young collections still free what a loop drops each step (memory stays flat:
# bench/memory.py --loops).
TRACED_GC = (50_000, 20, 10)


@contextlib.contextmanager
def old_objects_frozen() -> Iterator[None]:
    """A traced cell: the objects alive when it starts are frozen out of the garbage collector until it
    ends (``gc.freeze``). Tracing a loop allocates enough to trigger full collections, each of which would
    walk numba's tens of thousands of objects (``bench/traced.py``: its worst runs). Not for a replay,
    which allocates little and was slower frozen (kalman's, in a diagnostic run)."""
    if gc.get_freeze_count():  # (a cell inside a cell: the outer one unfreezes)
        yield
        return
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(*TRACED_GC)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()  # (the cell's garbage and the older are collected as before, from now on)


_CELL_RUNNING = _CellRunning()


def cell_running() -> _CellRunning:
    """The context a cell runs in (see ``_CellRunning``)."""
    return _CELL_RUNNING


def _worker() -> None:
    """Runs the jobs one by one, each only while no cell runs. After the last queued job it collects
    garbage: a numba compile leaves tens of thousands of objects that survive into Python's oldest
    generation, so the next full collection (100-200 ms with numba's objects alive) would otherwise
    fall inside a later cell, often the first compiled replay; here it falls between cells."""
    while True:
        job = _QUEUE.get()
        if job is None:
            return
        with _IDLE:
            _IDLE.wait_for(lambda: _CELLS[0] == 0)
        try:
            job.work()
            if _QUEUE.empty():
                gc.collect()  # numba's garbage: see ``_worker``'s docstring
        except BaseException as e:  # noqa: BLE001 - kept for the launch that asks (it compiles again, in sight)
            job.error = e
        finally:
            job.work = None  # (what it compiled is kept by whoever asked, not by the queue)
            with _LOCK:
                if _QUEUE.unfinished_tasks <= 1 and _SAVED_INTERVAL:  # (this one's task_done follows)
                    sys.setswitchinterval(_SAVED_INTERVAL.pop())
            job.done.set()
            _QUEUE.task_done()


def submit(key: Any, work: Callable[[], Any]) -> _Job:
    """Run ``work`` on the background thread, once per ``key``; the job tells when it is done."""
    with _LOCK:
        job = _JOBS.get(key)
        if job is None:
            job = _JOBS[key] = _Job(work)
            if not _SAVED_INTERVAL:
                _SAVED_INTERVAL.append(sys.getswitchinterval())
                sys.setswitchinterval(SWITCH_INTERVAL)
            if not _THREAD:  # a daemon: a script's exit does not wait for compiles nobody will use
                _THREAD.append(threading.Thread(target=_worker, name="jupyter_fuse compiler", daemon=True))
                _THREAD[0].start()
            _QUEUE.put(job)
        return job


def pending() -> int:
    """How many jobs are queued or running."""
    return sum(not j.done.is_set() for j in list(_JOBS.values()))


def wait(timeout: float | None = None) -> bool:
    """Block until every job submitted so far is done; False when ``timeout`` ran out first."""
    jobs = [j for j in list(_JOBS.values()) if not j.done.is_set()]
    return all(j.done.wait(timeout) for j in jobs)


@atexit.register
def _drop_queued() -> None:
    """At exit, jobs not started are dropped (the one running ends with the process)."""
    while True:
        try:
            job = _QUEUE.get_nowait()
        except queue.Empty:
            return
        if job is not None:
            job.done.set()
