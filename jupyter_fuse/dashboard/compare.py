"""``%%fuse --compare``: run the cell eagerly on NumPy too, check the results agree, show both.

The eager run goes first, on a copy of the namespace (arrays copied, aliases
kept), so both runs start from the same state and only the fused run's
results stay in the user's namespace. It does not use the plan cache: it is a
reference, not a run of the user's to replay. What is checked is what the cell
wrote: the names it assigns, mutates (``u[1:-1] = ...``, ``x += 1``,
``x.sort()``, ``out=x``) or deletes, and its value. No UI imports here.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends import BackendUnavailable
from ..runner import KernelCountError
from .. import fmt

_SKIP = {"In", "Out", "get_ipython", "exit", "quit", "open"}
_MISSING = object()
_TOL = {"e": 1e-2, "f": 1e-4, "d": 1e-7, "g": 1e-7}  # rtol by float kind char: rounding, reassociation


@dataclass
class Comparison:
    fused: Any  # Report
    eager: Any  # Report
    mismatches: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.mismatches

    @property
    def speedup(self) -> float:
        """Eager NumPy's compute time over everything the fused cell cost (trace, plan, compile, run).

        The eager side is its kernels' time only: our tracing overhead is not
        something plain NumPy would pay, so counting it would flatter fusion.
        """
        return _ratio(self.eager.times["run"], self.fused.times["total"])

    @property
    def kernel_speedup(self) -> float:
        """Kernels against kernels: what fusion buys once the plan is compiled (and cached)."""
        return _ratio(self.eager.times["run"], self.fused.times["run"])

    def checked_text(self) -> str:
        names = ", ".join(self.checked[:12]) + (" ..." if len(self.checked) > 12 else "")
        return f"checked {fmt.plural(len(self.checked), 'value')}: {names or 'none'}"

    def rows(self) -> list[tuple[str, str, str]]:
        e, f = self.eager, self.fused
        return [("kernels", fmt.count(e.kernels), fmt.count(f.kernels)),
                ("bytes moved", fmt.nbytes(e.bytes_moved), fmt.nbytes(f.bytes_moved)),
                ("kernel time", fmt.seconds(e.times["run"]), fmt.seconds(f.times["run"])),
                ("cell time", fmt.seconds(e.times["run"]), fmt.seconds(f.times["total"])),  # eager pays no tracing
                ("speedup, cell", "1.00x", _times(self.speedup)),
                ("speedup, kernels", "1.00x", _times(self.kernel_speedup))]

    def chart_rows(self) -> list[tuple[str, float, float, Any]]:
        """``(what, eager, fused, formatter)``: the three measures a fused-vs-eager chart draws."""
        e, f = self.eager, self.fused
        return [("kernels launched", e.kernels, f.kernels, fmt.count),
                ("bytes moved", e.bytes_moved, f.bytes_moved, fmt.nbytes),
                ("kernel time", e.times["run"], f.times["run"], fmt.seconds)]

    def lines(self) -> list[str]:
        head = (f"compare: agrees with eager NumPy ({self.checked_text()})" if self.agree else
                "compare: RESULTS DIFFER FROM EAGER NUMPY: " + "; ".join(self.mismatches))
        return [head] + [f"  {label:<16} eager {e:>12}   fused {f:>12}" for label, e, f in self.rows()]

    def to_dict(self) -> dict[str, Any]:
        return {"agree": self.agree, "mismatches": self.mismatches, "checked": self.checked,
                "speedup": _finite(self.speedup), "kernel_speedup": _finite(self.kernel_speedup), "eager": self.eager.to_dict(), "fused": self.fused.to_dict()}


def _times(x: float) -> str:
    return f"{x:.2f}x" if x == x else "?"


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def _finite(x: float) -> float | None:
    return x if x == x and abs(x) != float("inf") else None  # JSON has no NaN


def compare_cell(run: Any, source: str, namespace: dict, backend: str, **options: Any) -> tuple[Any, Comparison]:
    """Run ``source`` eagerly (NumPy, no fusion) on a copy, then fused on ``namespace``.

    ``run`` is ``runner.run_cell``. Returns ``(fused report, comparison)``; if the
    fused run raises, the comparison is printed to stderr before the exception
    propagates (a mismatch is never hidden).
    """
    __tracebackhide__ = True
    written = written_names(source)
    eager_ns = _copy_namespace(namespace)
    eager_out = io.StringIO()
    eager_report, eager_error = None, None
    global_rng = np.random.get_state()
    with contextlib.redirect_stdout(eager_out):
        try:
            eager_report = run(source, eager_ns, "numpy", fuse=False, cache=False)
        except Exception as e:  # compared with the fused run's exception below
            eager_error = e
        finally:  # the fused run draws the same numbers, and leaves the state as NumPy would
            np.random.set_state(global_rng)
    fused_out = _Tee(sys.stdout)
    try:
        with contextlib.redirect_stdout(fused_out):
            fused = run(source, namespace, backend, **options)
    except (BackendUnavailable, KernelCountError):
        raise  # about the run, not the cell's results
    except Exception as e:
        if eager_error is None or type(eager_error) is not type(e):
            print(f"jupyter_fuse --compare: RESULTS DIFFER FROM EAGER NUMPY: the fused run raised "
                  f"{type(e).__name__}: {e}; eager NumPy "
                  f"{'raised ' + type(eager_error).__name__ if eager_error else 'did not raise'}", file=sys.stderr)
        raise
    if eager_error is not None:
        eager_report = copy.copy(fused)  # nothing to measure: keep the table readable
        mismatches = [f"eager NumPy raised {type(eager_error).__name__}: {eager_error}; the fused run did not"]
        return fused, Comparison(fused, eager_report, mismatches, [])
    c = Comparison(fused, eager_report)
    for name in sorted(written):
        f, e = namespace.get(name, _MISSING), eager_ns.get(name, _MISSING)
        if f is _MISSING and e is _MISSING:
            continue  # deleted by both, or a function's local the walk saw
        if not _user_value(name, f if f is not _MISSING else e):
            continue
        _check(c, name, f, e)
    _check(c, "(cell value)", fused.result, eager_report.result)
    if eager_out.getvalue() != fused_out.captured.getvalue():
        c.mismatches.append(f"printed output differs: eager {eager_out.getvalue()[:200]!r}, "
                            f"fused {fused_out.captured.getvalue()[:200]!r}")
    return fused, c


_MUTATORS = {"sort", "fill", "resize", "put", "partition", "itemset", "setfield", "byteswap", "append", "extend",
             "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "add", "discard", "shuffle"}
_WRITES_FIRST_ARG = {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis", "shuffle"}


def written_names(source: str) -> set[str]:
    """The names a cell writes: assigns (``=``, ``+=``, ``for``, ``with``, ``import``), mutates through an
    index or attribute (``u[1:-1] = ...``), through a mutating method (``x.sort()``), an ``out=`` argument
    or a NumPy function that writes its first argument (``np.copyto(x, ...)``), or deletes."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.update(_root(node))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
                out.update(_root(func.value))
            if isinstance(func, ast.Attribute) and func.attr in _WRITES_FIRST_ARG and node.args:
                out.update(_root(node.args[0]))
            for kw in node.keywords:
                if kw.arg == "out":
                    out.update(n for v in ast.walk(kw.value) if isinstance(v, ast.Name) for n in [v.id])
    return out


def _root(expr: ast.AST) -> set[str]:
    """The variable an index/attribute chain starts from: ``a.b[1].c`` -> ``a``."""
    while isinstance(expr, (ast.Subscript, ast.Attribute, ast.Starred)):
        expr = expr.value
    return {expr.id} if isinstance(expr, ast.Name) else set()


def _check(c: Comparison, name: str, fused: Any, eager: Any) -> None:
    if fused is _MISSING or eager is _MISSING:
        c.mismatches.append(f"{name}: {'only the eager run' if fused is _MISSING else 'only the fused run'} set it")
        return
    problem = diff(fused, eager)
    c.checked.append(name)
    if problem:
        c.mismatches.append(f"{name}: {problem}")


def diff(fused: Any, eager: Any) -> str | None:
    """Why ``fused`` is not what eager NumPy gave (None when it is, within float rounding)."""
    if type(fused) is not type(eager):
        return f"type {type(fused).__name__}, eager NumPy gives {type(eager).__name__}"
    if isinstance(fused, (np.ndarray, np.generic)):
        if fused.dtype != eager.dtype:
            return f"dtype {fused.dtype}, eager NumPy gives {eager.dtype}"
        if fused.shape != eager.shape:
            return f"shape {fused.shape}, eager NumPy gives {eager.shape}"
        return _values(np.asarray(fused), np.asarray(eager))
    if isinstance(fused, (float, complex)):
        return _values(np.asarray(fused), np.asarray(eager))
    if isinstance(fused, (list, tuple)):
        if len(fused) != len(eager):
            return f"length {len(fused)}, eager NumPy gives {len(eager)}"
        return next((f"[{i}]: {p}" for i, (a, b) in enumerate(zip(fused, eager)) if (p := diff(a, b))), None)
    try:
        return None if bool(fused == eager) else f"{fused!r:.80}, eager NumPy gives {eager!r:.80}"
    except Exception:  # objects without a usable == are not compared
        return None


def _values(f: np.ndarray, e: np.ndarray) -> str | None:
    if f.dtype.kind in "fc":
        rtol = _TOL.get(f.dtype.char.lower(), 1e-7) if f.dtype.kind == "f" else 1e-7
        finite = np.abs(e[np.isfinite(e)])
        scale = float(finite.max()) if finite.size else 0.0
        ok = np.isclose(f, e, rtol=rtol, atol=rtol * scale, equal_nan=True)
    else:
        ok = f == e
    ok = np.asarray(ok)
    if ok.all():
        return None
    bad = int(ok.size - ok.sum())
    idx = np.unravel_index(int(np.argmin(ok)), ok.shape) if ok.shape else ()
    return (f"{bad} of {ok.size} values differ (e.g. at {idx if idx else 'scalar'}: "
            f"{f[idx]!r}, eager NumPy gives {e[idx]!r})")


def _user_value(name: str, value: Any) -> bool:
    return not (name.startswith("_") or name in _SKIP or isinstance(value, (types.ModuleType, types.FunctionType,
                                                                           type, types.BuiltinFunctionType)))


_COPIED = (np.ndarray, list, dict, set, np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def _copy_namespace(ns: dict) -> dict:
    """Arrays, containers and random generators copied (one memo, so ``b = a`` stays aliased, and
    the eager run draws what the fused run will); the rest shared."""
    memo: dict[int, Any] = {}
    out = {}
    for k, v in ns.items():
        if _user_value(k, v) and isinstance(v, _COPIED):
            try:
                out[k] = copy.deepcopy(v, memo)
                continue
            except Exception:  # not copyable: share it (an in-place change would then show in both)
                pass
        out[k] = v
    return out


class _Tee(io.TextIOBase):
    """Writes through to the real stdout and keeps a copy to compare."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.captured = stream, io.StringIO()

    def write(self, s: str) -> int:
        self.captured.write(s)
        return self.stream.write(s)

    def flush(self) -> None:
        self.stream.flush()
