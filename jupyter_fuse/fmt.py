"""The one formatter for what the displays print: times, bytes, rates, counts, line lists.

Every view (the one-line summary, the text and HTML renderings, the widgets,
the exported page) formats through these, and ``labextension/src/format.ts``
follows the same rules; both are tested against one table of cases
(``labextension/src/__tests__/format_cases.json``), so a number reads the same
wherever it is shown. Three significant digits, binary byte units, one unit
per magnitude: ``842 µs``, ``12.4 ms``, ``2.38 s``, ``3.81 MiB``, ``12.9 GiB/s``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _sig3(v: float) -> str:
    """Three significant digits, no exponent (``v >= 0``): 0.42, 1.23, 12.3, 123, 1024.

    Decided on the rounded text, so 9.996 gives ``10.0``, never ``10.00``."""
    for decimals, limit in ((2, 10), (1, 100)):
        text = f"{v:.{decimals}f}"
        if float(text) < limit:
            return text
    return f"{v:.0f}"


def seconds(t: float) -> str:
    """A duration: ``0 s``, ``842 µs``, ``12.4 ms``, ``2.38 s``, ``1 min 05 s``; ``?`` when unknown."""
    if t is None or not math.isfinite(t) or t < 0:
        return "?"
    if t == 0:
        return "0 s"
    if t >= 59.95:
        minutes, rest = divmod(round(t), 60)
        return f"{minutes} min {rest:02d} s"
    for scale, unit, bigger in ((1e-6, "µs", "ms"), (1e-3, "ms", "s"), (1.0, "s", None)):
        if t < scale * 1000 or bigger is None:
            text = _sig3(t / scale)
            return f"1.00 {bigger}" if text == "1000" and bigger else f"{text} {unit}"
    raise AssertionError("unreachable")


def nbytes(n: float) -> str:
    """A size in binary units: ``512 B``, ``1.50 KiB``, ``38.1 MiB``; a sign when negative."""
    if n is None or not math.isfinite(n):
        return "?"
    sign, v = ("-" if n < 0 else ""), abs(float(n))
    unit = 0
    while v >= 1024 and unit < len(_BYTE_UNITS) - 1:
        v /= 1024
        unit += 1
    if unit == 0:
        return f"{sign}{v:.0f} B"
    text = _sig3(v)
    if text == "1024" and unit < len(_BYTE_UNITS) - 1:  # 1023.6 KiB rounds up to the next unit
        text, unit = "1.00", unit + 1
    return f"{sign}{text} {_BYTE_UNITS[unit]}"


def rate(bytes_per_second: float) -> str:
    """A bandwidth: ``12.9 GiB/s``, ``850 MiB/s``."""
    if bytes_per_second is None or not math.isfinite(bytes_per_second) or bytes_per_second < 0:
        return "?"
    return nbytes(bytes_per_second) + "/s"


def count(n: int) -> str:
    """An integer with thousands separators: ``4,194,304``."""
    return f"{int(n):,}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 kernel``, ``3 kernels``, ``0 kernels``; ``many`` for irregular plurals."""
    return f"{count(n)} {word if n == 1 else many or word + 's'}"


def percent(share: float) -> str:
    """A share in [0, 1] as a whole percentage: ``23%``; ``<1%`` for a small non-zero share."""
    if share is None or not math.isfinite(share):
        return "?"
    if 0 < share < 0.005:
        return "<1%"
    return f"{share * 100:.0f}%"


def lines(numbers: Iterable[int]) -> str:
    """Line numbers as ranges: ``line 4``, ``lines 1-3, 7``; empty when there are none."""
    ns = sorted({int(n) for n in numbers if n is not None})
    if not ns:
        return ""
    runs: list[str] = []
    start = prev = ns[0]
    for n in ns[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        runs.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return f"{'line' if len(ns) == 1 else 'lines'} {', '.join(runs)}"
