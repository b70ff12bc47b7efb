"""Abandoning a hopeless traced run, for plain NumPy.

A loop over array elements that reads a value back into Python every few ops (``max(m, abs(c))``
in a Gauss-Seidel sweep, ``int(np.argmax(Q[s]))`` in Q-learning, union-find over ``parent[i]``) makes
each read a sync: the pending ops are planned and launched as a tiny kernel, at a few hundred
microseconds where NumPy's own op takes one. Its traced run takes seconds (bench/realworld.py:
percolation_uf 7 s where NumPy takes 8 ms), and the runner only finds out at its end that fusion does not
pay for the cell (``runner.HOPELESS_TRACE``). So a traced run that has made ``SYNCS`` syncs in
``AFTER`` seconds, ``OVERHEAD`` of it or more outside kernels, is abandoned at its next sync: the cell runs again
from the start as plain NumPy, and keeps running so (``runner._run_abandoned``).

Running a cell again is only right where the abandoned run did nothing the user can see. Until finalize
the cell writes its own namespace (``capture.Namespace``) and lazy copies of the user's arrays, so the
conditions are about everything else (``Watch.safe``): nothing printed, no module the source scan
calls impure (``guards.scan``), no handler that would catch the abandonment (a bare ``except:``) or run
on its way out (``finally:``), and every value read from outside plain data (numbers, strings, numeric
arrays, tuples of those, pure modules). Random generators read from outside, and NumPy's global generator,
error modes and print options, are put back as they were.
"""

from __future__ import annotations

import ast
import functools
import time
import types
from typing import Any

import numpy as np

from . import fmt, lazyrandom
from .guards import pure_module

AFTER = 1.0  # seconds a traced run goes on before it may be abandoned
SYNCS = 1000  # ... the syncs it has made by then
OVERHEAD = 0.8  # ... and the share of its time outside kernels (its first run's kernels run as NumPy meanwhile)
CHECK_EVERY = 128  # syncs between two looks at the clock

PLAIN = (bool, int, float, complex, str, bytes, type(None), range, slice, np.generic)


class Abandoned(BaseException):
    """Raised at a sync of an abandoned traced run (not an Exception: the cell's `except Exception:` lets it
    through); ``why`` says what the run had cost."""

    def __init__(self, why: str, watch: "Watch", outside: float) -> None:
        super().__init__(why)
        self.why, self.watch, self.outside = why, watch, outside


@functools.lru_cache(maxsize=256)
def watchable(source: str) -> bool:
    """May a traced run of this cell be abandoned and the cell run again (the module docstring)? The source
    scan's reasons (``guards.scan``) are the runner's to ask: a cell it finds impure is not watched."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and (
                node.type is None or any(isinstance(n, ast.Name) and n.id == "BaseException" for n in ast.walk(node.type))):
            return False  # (it would catch the abandonment and go on)
        if isinstance(node, ast.Try) and node.finalbody:
            return False  # (it would run on the way out: a print there would be printed twice)
    return True


def plain_data(x: Any, depth: int = 0) -> bool:
    """A value read from outside that no run of the cell can change: a number, a string, a numeric array
    (its writes wait for finalize), a tuple of such, a pure module."""
    if isinstance(x, PLAIN):
        return True
    if type(x) is np.ndarray:
        return x.dtype.kind in "biufc"  # (object arrays are the cell's to write at once)
    if isinstance(x, types.ModuleType):
        return pure_module(x.__name__)
    if type(x) in (tuple, frozenset):
        return depth < 3 and all(plain_data(i, depth + 1) for i in x)
    return isinstance(x, (np.random.Generator, np.random.RandomState))  # (put back: ``Watch.restore``)


class Watch:
    """Looks at a traced run every ``CHECK_EVERY`` syncs (``Session.record_sync``) and raises ``Abandoned``
    once it is hopeless and may be run again."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        # NumPy's global state a cell may set and put back (`old = np.seterr(all="ignore")` ... `np.seterr(**old)`),
        # put back as it was: an abandoned run may have stopped in between
        self.random, self.errors, self.printing = np.random.get_state(), np.geterr(), np.get_printoptions()

    def __call__(self, s: Any) -> None:
        if s.sync_events % CHECK_EVERY:
            return
        elapsed = time.perf_counter() - self.t0
        if elapsed < AFTER or s.sync_events < SYNCS:
            return
        kernels = sum(k["time"] for k in s.report.kernel_list)
        outside = 1.0 - kernels / elapsed
        if outside < OVERHEAD:
            return
        s.watch = None  # (decided: no second look)
        if not self.safe(s):
            return
        per = round(s.report.ops / s.sync_events)
        raise Abandoned(
            f"its traced run was abandoned after {fmt.seconds(elapsed)}: {fmt.count(s.sync_events)} syncs by then (Python "
            f"read an array's value every {'op' if per <= 1 else f'{per} ops'}, and each read planned and launched the "
            f"ops before it), {outside:.0%} of the time outside kernels", self, outside)

    @staticmethod
    def safe(s: Any) -> bool:
        ns = s.namespace
        return not s.printed and ns is not None and all(plain_data(v) for v in ns.reads.values())

    def restore(self, s: Any) -> None:
        """Put back what the abandoned run may have changed: NumPy's error modes and print options, its global
        generator, and the generators read from outside."""
        np.seterr(**self.errors)
        np.set_printoptions(**self.printing)
        np.random.set_state(self.random)
        for real, state in s.generator_states:
            lazyrandom.set_state(real, state)
