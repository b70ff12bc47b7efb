"""The one formatter (jupyter_fuse/fmt.py): the table of cases the labextension's format.ts is held to too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jupyter_fuse import fmt
from jupyter_fuse.report import Report

CASES = json.loads((Path(__file__).resolve().parents[2] / "labextension" / "src" / "__tests__" /
                    "format_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind", ["seconds", "nbytes", "rate", "count", "percent", "lines"])
def test_the_shared_cases(kind):
    for value, text in CASES[kind]:
        assert getattr(fmt, kind)(value) == text, (kind, value)


def test_bound_writes_cases():  # (report.bound_writes_text; the labextension's boundWritesText)
    from jupyter_fuse.report import bound_writes_text

    for writes, text in CASES["bound_writes"]:
        assert bound_writes_text({"bound_writes": writes}) == text


def test_plural_cases():
    for n, word, many, text in CASES["plural"]:
        assert fmt.plural(n, word, many) == text


@pytest.mark.parametrize("t", [10 ** (e / 7) for e in range(-50, 14)])
def test_times_never_read_like_2382_ms(t):
    """At most three significant digits and one unit per magnitude, whatever the value."""
    text = fmt.seconds(t)
    number = re.match(r"^(\d+(?:\.\d+)?) (µs|ms|s)$", text)
    if number is None:
        assert re.match(r"^\d+ min \d\d s$", text), text
        return
    digits = number.group(1).replace(".", "").lstrip("0")
    assert len(digits) <= 3 and float(number.group(1)) < 1000, text


@pytest.mark.parametrize("n", [2 ** (e / 3) for e in range(0, 130)])
def test_bytes_are_binary_with_three_digits(n):
    text = fmt.nbytes(n)
    value, unit = text.split(" ")
    assert unit in ("B", "KiB", "MiB", "GiB", "TiB") and float(value) < 1024, text
    assert unit == "B" or len(value.replace(".", "").lstrip("0")) <= 3, text


def test_the_summary_uses_the_formatter():
    r = Report(backend="cpu", ops=10, kernels=1, times={"guard": 0.0, "trace": 0.0012, "plan": 0.00031,
                                                          "compile": 2.3826, "run": 0.0041, "total": 2.3902},
               kernel_list=[{"name": "k0", "ops": ["add"] * 10, "lines": [1], "bytes_read": 3 * 2 ** 20,
                             "bytes_written": 2 ** 20, "time": 0.004}])
    line = r.summary()
    assert line.startswith("fuse[cpu]: 10 ops -> 1 kernel · ")
    assert "compile 2.38 s" in line and "run 4.10 ms" in line and "plan 310 µs" in line
    assert "total 2.39 s (kernels <1%, compile 100%, overhead <1%)" in line
    assert "k0: add, add" in repr(r) and "(line 1) 3.00 MiB in, 1.00 MiB out, 4.00 ms" in repr(r)
