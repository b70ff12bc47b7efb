"""Run one cell again and again on a persistent namespace, plain NumPy beside %%fuse with the plan cache."""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any, Callable

import numpy as np

import jupyter_fuse
import harness
from harness import _split, assert_no_lazy, assert_same_value


class Twin:
    """Two namespaces built alike: one for plain exec, one for run_cell (cache on)."""

    def __init__(self, setup: Callable[[], dict], backend: str = "numpy") -> None:
        self.plain, self.fused, self.backend = setup(), setup(), backend
        self.reports: list[Any] = []

    def change(self, fn: Callable[[dict], None]) -> None:
        fn(self.plain)
        fn(self.fused)

    def run(self, source: str, **options: Any) -> Any:
        before_p, before_f = dict(self.plain), dict(self.fused)
        out_p, out_f = io.StringIO(), io.StringIO()
        err_p = err_f = None
        res_p = res_f = None
        np.random.seed(7)
        with contextlib.redirect_stdout(out_p), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                body, last = _split(source, "<plain>")
                exec(body, self.plain)
                if last is not None:
                    res_p = eval(last, self.plain)
            except Exception as e:  # noqa: BLE001
                err_p = e
        state_p = np.random.get_state()
        np.random.seed(7)
        report = None
        with contextlib.redirect_stdout(out_f), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                report = jupyter_fuse.run_cell(source, self.fused, self.backend, **options)
                res_f = report.result
            except Exception as e:  # noqa: BLE001
                err_f = e
        state_f = np.random.get_state()
        self.reports.append(report)
        assert type(err_p) is type(err_f), f"exception {err_p!r} (numpy) != {err_f!r} (fused)"
        assert harness.same_text(out_p.getvalue(), out_f.getvalue()), f"printed:\n{out_p.getvalue()}\n!=\n{out_f.getvalue()}" \
            f"\n(cache {report and report.cache})"
        assert_no_lazy(self.fused)
        names = sorted(k for k in self.plain if not k.startswith("__"))
        assert names == sorted(k for k in self.fused if not k.startswith("__")), "names differ"
        for k in names:
            assert_same_value(self.plain[k], self.fused[k], f"{k} (cache {report and report.cache})")
            if k in before_p and isinstance(self.plain[k], (np.ndarray, list, dict)):  # immutables: no identity
                assert (self.plain[k] is before_p[k]) == (self.fused[k] is before_f[k]), f"{k}: identity differs"
        for i, k1 in enumerate(names):
            for k2 in names[i + 1:]:
                a, b = self.plain[k1], self.plain[k2]
                if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
                    assert np.shares_memory(a, b) == np.shares_memory(self.fused[k1], self.fused[k2]), \
                        f"shares_memory({k1}, {k2}) differs"
        assert_same_value(res_p, res_f, "<cell value>")
        assert state_p[0] == state_f[0] and np.array_equal(state_p[1], state_f[1]) and state_p[2:] == state_f[2:], \
            "random state differs"
        return report
