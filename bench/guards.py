"""Guard checks: the generated guard function against checking guard by guard, and what generating costs.

    .venv/bin/python bench/guards.py

Rows (microseconds per call, best of 7 repeats):

replay cell       the guards of bench/replay.py's cell (two arrays and their alias guard)
dict of N floats  a cell reading a dict of N Python floats (N + 2 guards)
errstate check    fperrors.errors_raise (memoized on NumPy's error-state object) against asking
                  np.geterr() each time, as before the memo

``generate ms`` is what ``guards.compile_check`` takes once per cache entry; entries with more
than ``cache.GENERATED_MAX`` guards are not generated (they are checked one by one).
"""

from __future__ import annotations

import time
import timeit

import numpy as np

from jupyter_fuse import guards
from jupyter_fuse.cache import GENERATED_MAX
from jupyter_fuse.fperrors import errors_raise


def per_call_us(fn, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=7)) / number * 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    cases = {"replay cell": {"x": rng.random(1000), "y": rng.random(1000)}}
    for n in (20, GENERATED_MAX, 1000):
        cases[f"dict of {n} floats"] = {"x": rng.random(1000), "d": {f"k{i}": float(i) for i in range(n)}}
    print("| guards of | guards | check one by one us | generated us | generate ms |")
    print("|---|---:|---:|---:|---:|")
    for name, ns in cases.items():
        rec = guards.Recorder.of(ns)
        assert not rec.reasons, rec.reasons
        g = rec.guards
        t0 = time.perf_counter()
        holds = guards.compile_check(g)
        made = (time.perf_counter() - t0) * 1e3
        assert holds(ns) and not guards.check(g, ns)
        number = max(10, 20000 // len(g))
        print(f"| {name} | {len(g)} | {per_call_us(lambda: guards.check(g, ns), number):.2f} | "
              f"{per_call_us(lambda: holds(ns), number):.2f} | {made:.2f} |")

    def geterr_check() -> bool:
        modes = np.geterr().values()
        return "raise" in modes or "call" in modes

    print(f"\nerrstate check: {per_call_us(geterr_check, 100000):.2f} us asking np.geterr(), "
          f"{per_call_us(errors_raise, 100000):.2f} us memoized (fperrors.errors_raise)")


if __name__ == "__main__":
    main()
