"""Output buffers: the memory of a dead array, reused for the next result of its shape and dtype.

A fresh buffer costs page faults on first touch (about 5 ms per 32 MiB on these
machines), and a re-run cell (`y = f(x)`) drops last run's `y` exactly when it
makes the new one. An array is recycled only when nothing but the namespace held
it, checked at the moment its name is rebound, so nobody can observe the reuse.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np

MIN_BYTES = 1 << 20  # below this malloc is cheap and pages are few: not worth keeping
MAX_BYTES = 512 << 20  # the pool never holds more than this (memory NumPy would have freed)

_pool: dict[tuple, list[np.ndarray]] = {}
_held = 0


def rebind(namespace: dict, key: str, value: Any) -> None:
    """``namespace[key] = value``; the value it replaces is recycled if that was its last reference."""
    global _held
    old = namespace.get(key)
    namespace[key] = value
    # two references: `old` here and getrefcount's argument; anything else holds it and we keep out
    if (type(old) is np.ndarray and old.nbytes >= MIN_BYTES and old is not value and old.base is None
            and old.flags.c_contiguous and old.flags.writeable and _held + old.nbytes <= MAX_BYTES
            and sys.getrefcount(old) == 2 and not weakref.getweakrefcount(old)):
        _pool.setdefault((old.shape, old.dtype.str), []).append(old)
        _held += old.nbytes


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``np.empty``, from the pool when a recycled buffer fits exactly."""
    global _held
    if not _pool:  # (the common case on small arrays: nothing is waiting to be reused)
        return np.empty(shape, dtype)
    key = (shape, dtype.str)
    got = _pool.get(key)
    if got is None:
        return np.empty(shape, dtype)
    arr = got.pop()
    if not got:
        del _pool[key]
    _held -= arr.nbytes
    return arr


def clear() -> None:
    global _held
    _pool.clear()
    _held = 0
