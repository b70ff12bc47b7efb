"""np.roll stencils under %%fuse against plain NumPy: a five-point periodic Laplacian update, and the game of
life's neighbour count (rolls of rolls), at three sizes. Kernels compile before timing (JUPYTER_FUSE_COMPILE=sync
is set here), the replay is timed, never plain NumPy in its place (JUPYTER_FUSE_PLAIN=off); each figure is the
best of 7 runs after 3 warm ones, and every result is checked against NumPy's.

    .venv/bin/python bench/rolls.py
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from typing import Callable

import numpy as np

os.environ.setdefault("JUPYTER_FUSE_COMPILE", "sync")
os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")

import jupyter_fuse as jf  # noqa: E402

STENCIL = """
L = np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0) + np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z
Z2 = Z + 0.1 * L
"""
LIFE = """
N = sum(np.roll(np.roll(G, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i != 0 or j != 0))
G2 = (N == 3) | (G & (N == 2))
"""
CELLS: list[tuple[str, str, Callable[[int], dict]]] = [
    ("stencil", STENCIL, lambda n: {"Z": np.random.default_rng(0).random((n, n))}),
    ("life", LIFE, lambda n: {"G": np.random.default_rng(0).random((n, n)) < 0.3}),
]


def best(run: Callable[[], None], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    print("| program | size | NumPy ms | replay ms | NumPy / replay | kernels |")
    print("|---|---|---:|---:|---:|---:|")
    for name, source, make in CELLS:
        for n in (64, 512, 2048):
            fused, plain = {"np": np, **make(n)}, {"np": np, **make(n)}
            with contextlib.redirect_stdout(io.StringIO()):
                for _ in range(3):
                    report = jf.run_cell(source, fused, "cpu")
            t_fused = best(lambda: jf.run_cell(source, fused, "cpu"))
            t_numpy = best(lambda: exec(source, plain))
            for k in plain:
                if k not in ("np", "__builtins__"):
                    assert np.array_equal(fused[k], plain[k]), (name, n, k)
            print(f"| {name} | {n}x{n} | {t_numpy * 1e3:.3f} | {t_fused * 1e3:.3f} | {t_numpy / t_fused:.1f}x "
                  f"| {report.kernels} |")


if __name__ == "__main__":
    main()
