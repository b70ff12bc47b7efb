"""The differential harness: the same cell under plain NumPy and under ``run_cell``.

``check(source, setup)`` builds two identical namespaces from ``setup`` (a
source string run with plain NumPy, or a function returning a fresh dict),
runs ``source`` once with ``exec`` and once through :func:`jupyter_fuse.run_cell`
(stdout captured, NumPy's global random state reset to the same point), and
asserts that everything the user can observe is the same: the names, their
types, dtypes, shapes, strides and values, which arrays are the very objects that were
there before, which pairs of arrays share memory, the printed text, the
cell's value, the random state afterwards, and, when NumPy raises, the
exception type and the cell line it was raised from.
"""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import re
import sys
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import jupyter_fuse
from jupyter_fuse.capture import Namespace
from jupyter_fuse.lazynp import LazyModule, LazyUfunc
from jupyter_fuse.trace import Buffer, LazyArray

_LAZY_TYPES = (LazyArray, LazyModule, LazyUfunc, Buffer)
_counter = itertools.count()


# -- no lazy object anywhere ----------------------------------------------------------------

def assert_no_lazy(namespace: dict, where: str = "namespace") -> None:
    """Nothing reachable from ``namespace`` is one of jupyter_fuse's lazy objects."""
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [(f"{where}[{k!r}]", v) for k, v in namespace.items() if k != "__builtins__"]
    while stack:
        path, x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        assert not isinstance(x, _LAZY_TYPES), f"lazy object escaped at {path}: {type(x).__name__}"
        assert not (isinstance(x, type) and issubclass(x, _LAZY_TYPES)), f"lazy class escaped at {path}: {x}"
        assert not (isinstance(x, types.FunctionType) and (x.__module__ or "").startswith("jupyter_fuse")), (
            f"a function of jupyter_fuse's lazy namespace escaped at {path}: {x}")
        stack.extend(_children(path, x))


def _children(path: str, x: Any) -> list[tuple[str, Any]]:
    if isinstance(x, (str, bytes, int, float, complex, np.generic, types.ModuleType)):
        return []
    if isinstance(x, np.ndarray):
        return [(f"{path}.flat[{i}]", v) for i, v in enumerate(x.flat)] if x.dtype == object else []
    if isinstance(x, (list, tuple)):
        return [(f"{path}[{i}]", v) for i, v in enumerate(x)]
    if isinstance(x, (set, frozenset)):
        return [(f"{path}{{}}", v) for v in x]
    if isinstance(x, dict):
        return [(f"{path}[{k!r}]", v) for k, v in x.items() if k != "__builtins__"]
    out: list[tuple[str, Any]] = []
    if isinstance(x, types.FunctionType):
        for i, c in enumerate(x.__closure__ or ()):
            try:
                out.append((f"{path}.<closure {i}>", c.cell_contents))
            except ValueError:
                pass
        out += [(f"{path}.__defaults__[{i}]", v) for i, v in enumerate(x.__defaults__ or ())]
        out += [(f"{path}.__kwdefaults__[{k!r}]", v) for k, v in (x.__kwdefaults__ or {}).items()]
        # a function defined in the cell must run against the user's namespace, not the recording one
        assert not isinstance(x.__globals__, Namespace), f"{path}: its globals are the cell's recording namespace"
        return out
    if isinstance(x, type):
        return [(f"{path}.{k}", v) for k, v in vars(x).items() if not k.startswith("__")]
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict):
        out += [(f"{path}.{k}", v) for k, v in d.items()]
    for cls in type(x).__mro__:  # __slots__ attributes
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if hasattr(x, name) and name not in ("__dict__", "__weakref__"):
                out.append((f"{path}.{name}", getattr(x, name)))
    return out


# -- running ---------------------------------------------------------------------------------

@dataclass
class Outcome:
    ns: dict
    before: dict  # the namespace's objects before the cell (same objects, for identity)
    stdout: str
    error: BaseException | None = None
    error_line: int | None = None
    result: Any = None
    random_state: Any = None
    report: Any = field(default=None, repr=False)


def _split(source: str, filename: str):
    """Like IPython: a final expression statement gives the cell's value."""
    tree = ast.parse(source, filename, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval")
    return compile(tree, filename, "exec"), last


def _cell_line(tb: Any, filename: str) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _fresh(setup: str | Callable[[], dict] | None) -> dict:
    if callable(setup):
        return setup()
    ns: dict = {"np": np, "__name__": "__main__"}
    if setup:
        exec(compile(setup, "<setup>", "exec"), ns)
    return ns


def run_plain(source: str, setup: Any = None, seed: int = 1234) -> Outcome:
    ns = _fresh(setup)
    before = dict(ns)
    filename = f"<plain-cell-{next(_counter)}>"
    np.random.seed(seed)
    out = io.StringIO()
    o = Outcome(ns, before, "")
    with contextlib.redirect_stdout(out), np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            body, last = _split(source, filename)
            exec(body, ns)
            if last is not None:
                o.result = eval(last, ns)
        except Exception as e:  # noqa: BLE001 - compared with the fused run
            o.error, o.error_line = e, _cell_line(e.__traceback__, filename)
    o.stdout, o.random_state = out.getvalue(), np.random.get_state()
    return o


def run_fused(source: str, setup: Any = None, seed: int = 1234, backend: str = "numpy", **options: Any) -> Outcome:
    ns = _fresh(setup)
    before = dict(ns)
    filename = f"<fused-cell-{next(_counter)}>"
    np.random.seed(seed)
    out = io.StringIO()
    o = Outcome(ns, before, "")
    with contextlib.redirect_stdout(out), np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            o.report = jupyter_fuse.run_cell(source, ns, backend=backend, filename=filename, **options)
            o.result = o.report.result
        except Exception as e:  # noqa: BLE001
            o.error, o.error_line = e, _cell_line(e.__traceback__, filename)
    o.stdout, o.random_state = out.getvalue(), np.random.get_state()
    return o


# -- comparing -------------------------------------------------------------------------------

def assert_same_value(p: Any, f: Any, path: str = "value") -> None:
    """Same Python type, dtype, shape and values (NaN-aware, tight float tolerance)."""
    if type(p) is not type(f) and type(p).__module__ == "__main__":  # a class the cell defined: one per run
        assert type(p).__qualname__ == type(f).__qualname__, f"{path}: type {type(p)} != {type(f)}"
    else:
        assert type(p) is type(f), f"{path}: type {type(p).__name__} (numpy) != {type(f).__name__} (fused)"
    if isinstance(p, (np.ndarray, np.generic)):
        assert p.dtype == f.dtype, f"{path}: dtype {p.dtype} (numpy) != {f.dtype} (fused)"
        assert np.shape(p) == np.shape(f), f"{path}: shape {np.shape(p)} (numpy) != {np.shape(f)} (fused)"
        if isinstance(p, np.ndarray):
            assert p.flags.writeable == f.flags.writeable, f"{path}: writeable differs"
            # the memory layout NumPy chose (order='K' keeps the inputs' order): a later reshape copies or not by it
            assert p.strides == f.strides, f"{path}: strides {p.strides} (numpy) != {f.strides} (fused)"
        if p.dtype == object:
            for i, (a, b) in enumerate(zip(np.asarray(p).flat, np.asarray(f).flat)):
                assert_same_value(a, b, f"{path}.flat[{i}]")
        else:
            _assert_values(np.asarray(p), np.asarray(f), path)
    elif isinstance(p, (bool, int, str, bytes, type(None))):
        assert p == f, f"{path}: {p!r} (numpy) != {f!r} (fused)"
    elif isinstance(p, (float, complex)):
        _assert_values(np.asarray(p), np.asarray(f), path)
    elif isinstance(p, (list, tuple)):
        assert len(p) == len(f), f"{path}: length {len(p)} != {len(f)}"
        for i, (a, b) in enumerate(zip(p, f)):
            assert_same_value(a, b, f"{path}[{i}]")
    elif isinstance(p, dict):
        assert list(p) == list(f), f"{path}: keys {list(p)} != {list(f)}"
        for k in p:
            assert_same_value(p[k], f[k], f"{path}[{k!r}]")
    elif isinstance(p, np.random.Generator):
        assert p.bit_generator.state == f.bit_generator.state, f"{path}: generator state differs"
    elif isinstance(p, np.random.RandomState):
        a, b = p.get_state(), f.get_state()
        assert a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:], f"{path}: generator state differs"
    elif isinstance(p, (types.FunctionType, type, types.ModuleType)):
        assert getattr(p, "__name__", None) == getattr(f, "__name__", None), f"{path}: different {type(p).__name__}"
    elif hasattr(p, "__dict__"):
        assert_same_value(dict(vars(p)), dict(vars(f)), f"{path}.__dict__")


def _assert_values(p: np.ndarray, f: np.ndarray, path: str) -> None:
    if p.dtype.kind == "c":
        np.testing.assert_allclose(f, p, rtol=1e-12 if p.dtype.itemsize > 8 else 1e-5, equal_nan=True, err_msg=path)
    elif p.dtype.kind == "f":
        rtol = 1e-5 if p.dtype.itemsize <= 4 or p.dtype.kind == "c" and p.dtype.itemsize <= 8 else 1e-12
        # a few ulps of the array's own scale: libm and SIMD loops differ in the last bit,
        # and a difference of nearly equal values (put-call parity) keeps that absolute error
        finite = np.abs(p[np.isfinite(p)])
        atol = 8 * np.finfo(p.dtype).eps * float(finite.max()) if finite.size else 0.0
        np.testing.assert_allclose(f, p, rtol=rtol, atol=atol, equal_nan=True, err_msg=path)
        # signs of zeros and infinities are values too
        np.testing.assert_array_equal(np.signbit(f[np.isfinite(p) & (p == 0)]),
                                      np.signbit(p[np.isfinite(p) & (p == 0)]), err_msg=path)
    else:
        np.testing.assert_array_equal(f, p, err_msg=path)


def _arrays(o: Outcome) -> list[tuple[str, np.ndarray]]:
    """Every array the user can reach by name (top level and inside containers), before and after."""
    found: list[tuple[str, np.ndarray]] = []

    def walk(path: str, x: Any, depth: int = 0) -> None:
        if isinstance(x, np.ndarray):
            found.append((path, x))
        elif isinstance(x, (list, tuple)) and depth < 3:
            for i, v in enumerate(x):
                walk(f"{path}[{i}]", v, depth + 1)
        elif isinstance(x, dict) and depth < 3:
            for k, v in x.items():
                walk(f"{path}[{k!r}]", v, depth + 1)

    for k in sorted(o.ns):
        if k != "__builtins__":
            walk(k, o.ns[k])
    for k in sorted(o.before):
        if k != "__builtins__":
            walk(f"<before>{k}", o.before[k])
    return found


def _vector_math() -> bool:
    """Does NumPy compute exp, tanh, cbrt or power with its own vector code here (where the CPU has
    AVX-512), whose last bits differ from C's libm, which compiled kernels call? Then a program that
    prints a difference of nearly equal values (an error of 4.44e-16) prints another last digit."""
    import math

    x = np.linspace(-3.0, 3.0, 257)
    pairs = ((np.exp, math.exp), (np.tanh, math.tanh), (np.cbrt, math.cbrt),
             (lambda a: np.power(a, 3.3), lambda v: math.pow(v, 3.3) if v >= 0 else math.nan))
    with np.errstate(invalid="ignore"):  # (a negative number's power: NaN, in both)
        return any(not np.array_equal(f(x), np.array([g(v) for v in x.tolist()]), equal_nan=True) for f, g in pairs)


VECTOR_MATH = _vector_math()
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf|nan)", re.I)


def close_text(p: str, f: str, rtol: float, atol: float) -> bool:
    """The same text but for numbers that agree within ``rtol`` and ``atol``."""
    if _NUMBER.sub("#", p) != _NUMBER.sub("#", f):
        return False
    a, b = (np.array([float(x) for x in _NUMBER.findall(t)]) for t in (p, f))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def same_text(p: str, f: str) -> bool:
    """Printed text is compared exactly, but where NumPy's own vector math rounds otherwise than the
    compiled kernels' libm (``VECTOR_MATH``): its numbers within rounding there (tests/fuzz relaxes this
    for float32 rounding)."""
    return p == f or VECTOR_MATH and close_text(p, f, rtol=1e-9, atol=1e-12)


def assert_same(p: Outcome, f: Outcome) -> None:
    assert_no_lazy(f.ns)
    if p.error is not None or f.error is not None:
        assert type(p.error) is type(f.error), (
            f"exception: {type(p.error).__name__}: {p.error} (numpy) != {type(f.error).__name__}: {f.error} (fused)")
        assert p.error_line == f.error_line, f"exception line: {p.error_line} (numpy) != {f.error_line} (fused)"
    assert same_text(p.stdout, f.stdout), f"printed text differs:\nnumpy:\n{p.stdout}\nfused:\n{f.stdout}"
    names_p = sorted(k for k in p.ns if not k.startswith("__"))  # not __builtins__, __warningregistry__
    names_f = sorted(k for k in f.ns if not k.startswith("__"))
    assert names_p == names_f, f"names: {names_p} (numpy) != {names_f} (fused)"
    for k1, k2 in itertools.combinations(names_p, 2):  # `d = c` leaves one object under two names
        if isinstance(p.ns[k1], (np.ndarray, list, dict)):
            assert (p.ns[k1] is p.ns[k2]) == (f.ns[k1] is f.ns[k2]), f"{k1} is {k2}: differs"
    for k in names_p:
        assert_same_value(p.ns[k], f.ns[k], k)
        # in-place operations keep the object: identity with the pre-cell object must match
        if k in p.before:
            assert (p.ns[k] is p.before[k]) == (f.ns[k] is f.before[k]), f"{k}: object identity differs"
    assert_same_value(p.result, f.result, "<cell value>")
    if p.error is None:
        assert_no_lazy({"result": f.result})
    _assert_random_state(p.random_state, f.random_state)


def assert_same_aliasing(p: Outcome, f: Outcome) -> None:
    """np.shares_memory for every pair of reachable arrays is what NumPy gives."""
    arrays_p, arrays_f = _arrays(p), _arrays(f)
    assert [n for n, _ in arrays_p] == [n for n, _ in arrays_f], "reachable arrays differ"
    for i, j in itertools.combinations(range(len(arrays_p)), 2):
        (ni, xi), (nj, xj) = arrays_p[i], arrays_p[j]
        sp = np.shares_memory(xi, xj)
        sf = np.shares_memory(arrays_f[i][1], arrays_f[j][1])
        assert sp == sf, f"shares_memory({ni}, {nj}): {sp} (numpy) != {sf} (fused)"


def _assert_random_state(p: Any, f: Any) -> None:
    assert p[0] == f[0] and p[2:] == f[2:] and np.array_equal(p[1], f[1]), "NumPy's global random state differs"


def check(source: str, setup: Any = None, **options: Any) -> Outcome:
    """Run ``source`` both ways and assert the user sees no difference. Returns the fused outcome."""
    p = run_plain(source, setup)
    f = run_fused(source, setup, **options)
    assert_same(p, f)
    assert_same_aliasing(p, f)
    return f
