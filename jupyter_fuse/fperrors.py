"""NumPy's floating-point error mode: the one piece of NumPy's global state a plan depends on.

Below the tracer on purpose: the tracer asks it per traced op (NumPy raises ``FloatingPointError`` at
the user's line under ``np.errstate(...='raise')``), a backend per plan (compiled kernels cannot
raise it, NumPy's own loops do).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

try:  # NumPy >= 2.0 keeps the error state in a context variable (private: without it, ask every time)
    from numpy._core._ufunc_config import _extobj_contextvar as _EXTOBJ
except ImportError:  # pragma: no cover
    _EXTOBJ = None
_errors: list = [object(), {}, False]  # NumPy's error-state object, its modes, do they raise?
_internal = [0]  # depth of the tracer's own quiet() blocks: not a state the cell's ops are made under


def state() -> Any:
    """NumPy's current error-state object: a new one each time np.errstate/np.seterr changes the state."""
    return _EXTOBJ.get() if _EXTOBJ is not None else None


def internal() -> bool:
    """Is the tracer inside its own ``quiet()`` block?"""
    return _internal[0] > 0


@contextlib.contextmanager
def quiet() -> Any:
    """``np.errstate(all='ignore')`` around the tracer's own work (an op on no elements, a cast computed
    at once): ops made inside it belong to the cell's error state, not to this one."""
    _internal[0] += 1
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        _internal[0] -= 1


def _current() -> list:
    """[state object, ``np.geterr()``, do they raise?] for NumPy's current error state, kept per
    error-state object (a new object each time errstate/seterr changes it; the one kept stays alive,
    so its id is not reused): asked once per traced op and per replayed plan."""
    now = state()
    if now is None or now is not _errors[0]:
        modes = np.geterr()
        _errors[:] = [now, modes, raising(modes)]
    return _errors


def errors_raise() -> bool:
    """Does np.errstate/np.seterr ask for floating-point errors to raise (or call a function)?"""
    return _current()[2]


def modes() -> dict:
    """``np.geterr()`` now (the same dict while the state is the same object: do not change it)."""
    return _current()[1]


def raising(modes: dict) -> bool:
    return "raise" in modes.values() or "call" in modes.values()


def pending_errstate(errors: bool) -> Any:
    """The error state pending values are computed under: NumPy checked each op's errors where the op
    ran, and every op made under a raising state ran at once (``trace.fresh``), so a value computed later
    was made where errors did not raise and must not raise now (``errors``: the op ``fresh`` runs itself)."""
    if errors or not errors_raise():
        return contextlib.nullcontext()
    return np.errstate(**{k: "ignore" if v in ("raise", "call") else v for k, v in np.geterr().items()})
