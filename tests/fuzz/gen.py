"""A seeded generator of random NumPy cells, and the comparison of each with plain NumPy.

``generate(seed)`` builds one program: a setup (input arrays of every dtype, 0-d and size-0 shapes,
C/Fortran/transposed/reversed/strided layouts, views aliasing other inputs, NumPy and Python scalars)
and a cell of statements drawn from the ground issue 12 lists: elementwise operators and ufuncs with
broadcasting, slicing with negative steps, transposes and reshapes, in-place operators and slice
assignment (aliasing: ``x[1:] += x[:-1]``), fancy and boolean reads and writes, positional and keyword
``out=``, reductions with axis/keepdims/dtype/ddof, casts and copies, ``np.errstate`` blocks, syncs
(``if``, ``float``, ``print``, ``round``), small loops, functions defined in the cell, and operations
that raise. Statements are chosen against the live values: each is run on plain NumPy as it is drawn,
so most programs are valid and a few end in NumPy's own exception. Two in five programs are drawn
without what makes a cell unreplayable (fancy writes, raising statements), so that the plan cache's
replays are exercised too (``np.errstate`` blocks and functions defined in the cell included).

``check_program(program, backend)`` runs the cell three times on persistent namespaces, under plain
NumPy and under ``run_cell`` (the plan cache on): a first run, a run on fresh inputs of the same kinds
(a plan-cache replay where the cell is replayable) and a run after the inputs were mutated in place.
After each it compares what the user can observe (tests/harness.py: names, Python types, dtypes,
shapes, strides, values, identity, aliasing, printed text, the exception and its line).

Deviations NumPy itself calls platform-defined are classified, not hidden (``PLATFORM``): values of
casts NumPy warns about ("invalid value encountered in cast"), the sign of a zero that a max/min
reduction, or ``np.fmax``/``np.fmin``, picks among tied -0.0 and 0.0 (NumPy's SIMD lanes decide it: an
fmax of 0.0 and -0.0 gives -0.0 in the vector body and 0.0 in the tail of the same array), and what an in-place op leaves
in its target when its loop raised midway (NumPy writes back a cast buffer it never filled: its own
result varies from run to run). Deviations filed for the cupy backend are classified too (``KNOWN``).
See bench/RESULTS.md.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import traceback
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

import harness
import jupyter_fuse

os.environ.setdefault("JUPYTER_FUSE_STRICT", "1")  # a kernel that fails to compile is an error, not a fallback
os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")  # replays are compared with NumPy, not swapped for it

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
COMMON = ["int64", "float64", "float32", "int32", "bool", "uint8", "complex128", "int8"]  # drawn more often
LAYOUTS = ["C", "C", "C", "F", "T", "rev", "step"]
PLATFORM = ("platform: invalid cast", "platform: signed zero of a max/min reduction or fmax/fmin",
            "platform: in-place target of a loop that raised (NumPy's own result varies)",
            "rounding: float32 arithmetic (NumPy's SIMD loops and pairwise sums vs libm and float64 accumulators)",
            "platform: NumPy's own SIMD math (exp, log, pow, tanh, ... on AVX2/AVX-512) vs the C library's, "
            "which the kernels call: the program agrees with NumPy run without it")
# NumPy's dispatch targets above x86-64's baseline (NumPy 2's names): disabled, NumPy computes exp, log, pow, ...
# with the C library, as the compiled kernels do (``_agrees_without_simd_math``)
SIMD_MATH_OFF = "X86_V4 AVX512_ICL AVX512_SPR X86_V3"
# Deviations filed elsewhere (issue 12's items 16 and 17 belong to the cupy backend's engineer): counted
# and listed apart, so that they neither hide new deviations nor fail the bounded profile.
KNOWN: dict[str, Callable[[str], bool]] = {
    "known: issue 12 item 17 (cupy dry run: KeyError Node(setitem) in device_value)":
        lambda m: "KeyError: Node(setitem" in m and "in device_value" in m,
    "known: issue 12 item 16 (cupy dry run: a 0-d reduction with an axis)":
        lambda m: "in _render_reduce" in m and "IndexError" in m,
}


# -- programs ------------------------------------------------------------------------------------------

@dataclass
class Input:
    name: str
    kind: str  # "array" | "view" (of another input) | "npscalar" | "pyscalar"
    dtype: str = "float64"
    shape: tuple[int, ...] = ()
    layout: str = "C"
    of: str = ""  # kind "view": the input it views, and the index expression
    index: str = ""


@dataclass
class Program:
    seed: int
    inputs: list[Input]
    stmts: list[str]  # top-level statements (a block is one statement)
    raises: bool = False  # the last statement raises under plain NumPy
    replayable: bool = False  # drawn without what makes a cell unreplayable (fancy writes, raisers)

    @property
    def source(self) -> str:
        return "\n".join(self.stmts)

    def setup(self, data_seed: int) -> str:
        """The setup source: the inputs with values drawn from ``data_seed`` (same kinds for every seed)."""
        rng = random.Random(self.seed * 7919 + data_seed)
        lines = ["nan, inf = np.nan, np.inf"]
        for inp in self.inputs:
            lines.append(f"{inp.name} = {_input_expr(rng, inp)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"# setup (seed {self.seed})\n{self.setup(1)}\n# cell\n{self.source}"


def _values(rng: random.Random, dtype: str, n: int) -> list:
    kind = np.dtype(dtype).kind
    special = rng.random() < 0.3
    out: list = []
    for _ in range(n):
        if kind == "b":
            out.append(rng.random() < 0.5)
        elif kind == "u":
            big = np.iinfo(dtype).max
            out.append(rng.choice([0, 1, 2, 3, 5, 7, big, big - 1]) if special else rng.randint(0, 9))
        elif kind == "i":
            info = np.iinfo(dtype)
            out.append(rng.choice([0, -1, 1, info.min, info.max, -7]) if special else rng.randint(-6, 9))
        elif kind == "f":
            out.append(rng.choice(["nan", "inf", "-inf", "-0.0", "0.0", "1e30", "-2.5"]) if special and rng.random() < 0.4
                       else rng.choice([rng.randint(-5, 8) + 0.0, rng.randint(-20, 20) / 4]))
        else:
            re_, im = rng.randint(-4, 5) / 2, rng.randint(-4, 5) / 2
            out.append(complex(re_, im))
    return out


def _fmt(v: Any) -> str:
    if isinstance(v, str):
        return v if v in ("nan", "inf") or v.startswith("-") and v[1:] in ("inf",) else f"float('{v}')" if v in ("-0.0",) else v
    return repr(v)


def _array_src(rng: random.Random, dtype: str, shape: tuple[int, ...]) -> str:
    n = int(np.prod(shape, dtype=np.int64))
    vals = ", ".join(_fmt(v) for v in _values(rng, dtype, n))
    if shape == ():
        return f"np.array({vals.split(', ')[0] if n else 0}, dtype=np.{dtype})"
    return f"np.array([{vals}], dtype=np.{dtype}).reshape({shape})"


def _input_expr(rng: random.Random, inp: Input) -> str:
    if inp.kind == "view":
        return f"{inp.of}{inp.index}"
    if inp.kind == "npscalar":
        return f"np.{inp.dtype}({_fmt(_values(rng, inp.dtype, 1)[0])})"
    if inp.kind == "pyscalar":
        v = _values(rng, inp.dtype, 1)[0]
        return _fmt(v) if not isinstance(v, str) else f"float('{v}')"
    shape, lay = inp.shape, inp.layout
    if lay == "F":
        return f"np.asfortranarray({_array_src(rng, inp.dtype, shape)})"
    if lay == "T":  # a transposed view of a C-ordered base
        return f"{_array_src(rng, inp.dtype, tuple(reversed(shape)))}.T"
    if lay == "rev":  # a negative-step view
        return f"{_array_src(rng, inp.dtype, shape)}[::-1]"
    if lay == "step":  # a strided view of a base twice as long in its first axis
        return f"{_array_src(rng, inp.dtype, (2 * shape[0],) + shape[1:])}[::2]"
    return _array_src(rng, inp.dtype, shape)


def _random_shape(rng: random.Random) -> tuple[int, ...]:
    r = rng.random()
    if r < 0.1:
        return ()
    if r < 0.16:
        return rng.choice([(0,), (2, 0), (0, 3)])
    nd = rng.choice([1, 1, 2, 2, 2, 3])
    return tuple(rng.choice([1, 2, 3, 4]) for _ in range(nd))


def _random_inputs(rng: random.Random) -> list[Input]:
    inputs: list[Input] = []
    base_shape = _random_shape(rng)
    for name in "abc"[:rng.choice([1, 2, 2, 3])]:
        dtype = rng.choice(COMMON) if rng.random() < 0.7 else rng.choice(DTYPES)
        shape = base_shape if rng.random() < 0.5 else (_random_shape(rng) if rng.random() < 0.5
                                                        else base_shape[rng.randint(0, len(base_shape)):])
        layout = rng.choice(LAYOUTS) if len(shape) >= 1 else "C"
        if layout == "T" and len(shape) < 2 or layout in ("rev", "step") and (not shape or shape[0] == 0):
            layout = "C"
        inputs.append(Input(name, "array", dtype, shape, layout))
    if rng.random() < 0.3 and inputs[0].shape and inputs[0].shape[0] > 1:  # an input aliasing another
        inputs.append(Input("d", "view", of="a", index=rng.choice(["[1:]", "[::-1]", "[:1]", "[::2]"])))
    if rng.random() < 0.3:
        inputs.append(Input("s", "npscalar", rng.choice(["float64", "float32", "int64", "int16", "uint8", "bool"])))
    if rng.random() < 0.4:
        inputs.append(Input("k", "pyscalar", rng.choice(["int64", "float64", "bool"])))
    return inputs


# -- running plain NumPy ---------------------------------------------------------------------------

def _exec_plain(source: str, ns: dict) -> None:
    with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "<gen>", "exec"), ns)


def _fresh_ns(setup: str) -> dict:
    ns: dict = {"np": np, "__name__": "__main__"}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (1e30 as a float16 is inf: as meant)
        exec(compile(setup, "<setup>", "exec"), ns)
    return ns


# -- drawing statements against live values -----------------------------------------------------------

_EINSUMS = ["ij,ij->i", "ij,kj->ik", "i,i", "ij,jk", "...,...->...", "ijk,ijk->k", "i,j->ij"]  # (most raise: shapes)
_IJ = ", indexing='ij'"  # (np.meshgrid's other indexing; a constant: an f-string cannot quote it)
_BINOPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>", "<", "<=", "==", "!=", ">", ">="]
_ARITH = ["+", "-", "*", "/", "//", "%", "**"]
_PY_INT = re.compile(r"^[-+()\d* ]+$")  # an expression of Python int literals only
_UNARY = ["-{}", "+{}", "abs({})", "~{}", "np.sqrt({})", "np.exp({})", "np.sin({})", "np.log({})", "np.floor({})",
          "np.isnan({})", "np.sign({})", "np.square({})", "np.negative({})", "np.log1p({})", "np.tanh({})",
          "np.reciprocal({})", "np.rint({})", "np.isfinite({})", "np.conjugate({})", "np.logical_not({})"]
_UFUNC2 = ["np.add", "np.subtract", "np.multiply", "np.divide", "np.maximum", "np.minimum", "np.fmax", "np.power",
           "np.floor_divide", "np.remainder", "np.arctan2", "np.hypot", "np.logical_and", "np.bitwise_xor",
           "np.copysign", "np.fmod", "np.heaviside", "np.greater", "np.equal"]
_REDUCTIONS = ["sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin", "var", "std"]


class _Draw:
    """Draws source text for expressions and statements from the values in ``ns``."""

    def __init__(self, rng: random.Random, ns: dict, replayable: bool = False) -> None:
        self.rng, self.ns, self.replayable = rng, ns, replayable

    # names whose values are arrays (or NumPy scalars) of a traced kind
    def arrays(self, writable: bool = False, nd_min: int = 0) -> list[str]:
        out = []
        for k, v in self.ns.items():
            if k.startswith("_") or k in ("np", "nan", "inf"):
                continue
            if isinstance(v, np.ndarray) and v.dtype.kind in "biufc" and v.ndim >= nd_min:
                if not writable or v.flags.writeable:
                    out.append(k)
            elif isinstance(v, np.generic) and not writable and nd_min == 0:
                out.append(k)
        return out

    def pick(self, names: list[str]) -> str | None:
        return self.rng.choice(names) if names else None

    def view(self, name: str) -> str:
        """``name`` or a basic view of it."""
        v, r = self.ns[name], self.rng
        if not isinstance(v, np.ndarray) or r.random() < 0.55:
            return name
        opts = []
        if v.ndim >= 1:
            opts += [f"{name}[::-1]", f"{name}[1:]", f"{name}[:-1]", f"{name}[::2]", f"{name}[..., ::-1]"]
            if v.shape[0]:
                opts += [f"{name}[0]", f"{name}[-1]"]
        if v.ndim >= 2:
            opts += [f"{name}.T", f"{name}[:, 1:]", f"{name}[1:, ::-2]", f"{name}.transpose()", f"{name}.reshape(-1)",
                     f"{name}.swapaxes(0, 1)", f"{name}[:, None]", f"{name}.ravel()"]
        if v.ndim == 3:
            opts += [f"{name}.transpose(1, 2, 0)", f"{name}[:, 0]", f"{name}.reshape({v.shape[0]}, -1)"]
        opts += [f"{name}[None]", f"{name}[...]"]
        if v.ndim and v.size and r.random() < 0.2:
            opts += [f"{name}.reshape({tuple(reversed(v.shape))})" if v.ndim > 1 else f"{name}.reshape(-1, 1)",
                     f"np.expand_dims({name}, 0)", f"{name}.squeeze()"]
        return r.choice(opts)

    def scalar(self) -> str:
        r = self.rng
        return r.choice(["2", "-1", "0", "3", "1.5", "-0.5", "0.0", "2.0", "True", "False", "1j", "(1+2j)", "np.float32(1.5)",
                         "np.int8(3)", "np.uint8(200)", "np.float64(-0.0)", "np.int64(-2)", "np.nan", "np.inf", "255", "-300",
                         "2**40", "np.bool_(True)", "np.float16(0.5)", "7"])

    def operand(self) -> str:
        names = self.arrays()
        if not names or self.rng.random() < 0.2:
            return self.scalar()
        return self.view(self.pick(names))

    def expr(self, depth: int = 0) -> str:
        r = self.rng
        x = r.random()
        if depth > 1 or x < 0.15:
            return self.operand()
        if x < 0.45:
            a, op, b = self.expr(depth + 1), r.choice(_BINOPS if r.random() < 0.4 else _ARITH), self.expr(depth + 1)
            if op in ("**", "<<") and _PY_INT.match(a) and _PY_INT.match(b):
                op = "*"  # (Python's own ints: -300 ** 2**40 would run for hours, in NumPy's run too)
            return f"({a} {op} {b})"
        if x < 0.58:
            return r.choice(_UNARY).format(self.expr(depth + 1))
        if x < 0.68:
            return f"{r.choice(_UFUNC2)}({self.expr(depth + 1)}, {self.expr(depth + 1)})"
        if x < 0.8:
            return self.reduction()
        if x < 0.87:
            return self.cast()
        if x < 0.93 or self.replayable:
            c = self.expr(depth + 1)
            return r.choice([f"np.where({c} > 0, {self.expr(depth + 1)}, {self.expr(depth + 1)})",
                             f"np.clip({c}, {r.choice(['0', '-1', 'None', '1.5'])}, {r.choice(['3', '2.5', 'None'])})",
                             f"{c}.clip(0, 5)",
                             f"np.roll({c}, {r.choice(['1', '-2', '(1, 1)', '0', '5'])}"
                             f"{r.choice(['', ', axis=0', ', axis=-1', ', axis=(0, -1)'])})",
                             f"np.{r.choice(['concatenate', 'stack', 'vstack', 'hstack'])}([{c}, {c}])",
                             f"np.concatenate([{c}, {c}], axis={r.choice(['-1', 'None', '1'])})",
                             f"np.diff({c}{r.choice(['', ', 2', ', axis=0'])})",
                             # NumPy functions traced as NumPy writes them (lazyfuncs), or computed by it
                             f"np.cumsum({c}{r.choice(['', ', axis=0', ', axis=-1', ', dtype=np.float32'])})",
                             f"np.pad({c}, {r.choice(['1', '(0, 2)'])}, mode={r.choice(['constant', 'edge'])!r})",
                             f"np.tile({c}, {r.choice(['2', '(2, 1)'])})", f"np.repeat({c}, 2{r.choice(['', ', axis=0'])})",
                             f"np.{r.choice(['tril', 'triu'])}({c}{r.choice(['', ', 1', ', -1'])})",
                             f"np.isclose({c}, {self.expr(depth + 1)})", f"np.ptp({c}{r.choice(['', ', axis=0'])})",
                             f"np.nan_to_num({c})", f"np.average({c}{r.choice(['', ', axis=-1'])})",
                             f"np.meshgrid({c}, {c}{r.choice(['', _IJ, ', sparse=True'])})[{r.choice('01')}]",
                             f"np.einsum({r.choice(_EINSUMS)!r}, {c}, {c})"])
        return self.fancy_read()

    def reduction(self) -> str:
        r = self.rng
        name = self.pick(self.arrays())
        if name is None:
            return self.scalar()
        v = self.ns[name]
        nd = getattr(v, "ndim", 0)
        red = r.choice(_REDUCTIONS)
        kw = []
        if r.random() < 0.6 and nd:
            ax = r.choice([str(r.randrange(-nd, nd)), "None"] + ([f"({r.randrange(nd)}, {r.randrange(nd)})",
                                                                    "(0, -1)"] if nd > 1 else []) + ["0"])
            if red in ("argmax", "argmin") and ax.startswith("("):
                ax = "0"
            kw.append(f"axis={ax}")
        if r.random() < 0.3 and red not in ("argmax", "argmin") or r.random() < 0.1:
            kw.append("keepdims=True")
        if red in ("sum", "prod", "mean", "var", "std") and r.random() < 0.25:
            kw.append(f"dtype=np.{r.choice(['float32', 'float64', 'int64', 'int8', 'complex128', 'uint16'])}")
        if red in ("var", "std") and r.random() < 0.4:
            kw.append(f"ddof={r.choice([0, 1, 2])}")
        src = self.view(name)
        if r.random() < 0.5:
            return f"{src}.{red}({', '.join(kw)})"
        fn = {"max": r.choice(["max", "amax"]), "min": r.choice(["min", "amin"])}.get(red, red)
        return f"np.{fn}({', '.join([src] + kw)})"

    def cast(self) -> str:
        r = self.rng
        name = self.pick(self.arrays())
        src = self.view(name) if name is not None else "np.arange(3)"
        return r.choice([f"{src}.astype(np.{r.choice(DTYPES)})", f"np.copy({src})", f"{src}.copy()", f"np.array({src})",
                         f"np.asarray({src}, dtype=np.{r.choice(DTYPES)})", f"np.ascontiguousarray({src})",
                         f"np.zeros_like({src})", f"np.ones_like({src}, dtype=np.{r.choice(DTYPES)})", f"np.full_like({src}, 2)",
                         f"{src}.astype(np.{r.choice(DTYPES)}, casting='{r.choice(['safe', 'same_kind'])}')",
                         f"{src}.copy(order='{r.choice('CFAK')}')",
                         f"np.round({src}, {r.choice([0] if self.replayable else [0, 1, -1])})"])

    def fancy_read(self) -> str:
        name = self.pick(self.arrays(nd_min=1))
        if name is None:
            return self.operand()
        v, r = self.ns[name], self.rng
        n = v.shape[0]
        return r.choice([f"{name}[{name} > 0]", f"{name}[[0, -1]]" if n else f"{name}[{name} != 0]",
                         f"{name}[np.array([{r.randrange(max(n, 1))}, 0])]" if n else f"{name}[[]]",
                         f"{name}[[True] * {n}]" if v.ndim == 1 else f"{name}[{name} < 2]"])

    def target(self) -> str | None:
        """An array name or a writable basic view of one, as an assignment target."""
        name = self.pick(self.arrays(writable=True, nd_min=0))
        if name is None:
            return None
        v, r = self.ns[name], self.rng
        opts = [name, name, f"{name}[...]"]
        if v.ndim >= 1:
            opts += [f"{name}[1:]", f"{name}[::-1]", f"{name}[:1]", f"{name}[::2]"]
            if v.shape[0]:
                opts.append(f"{name}[0]")
        if v.ndim >= 2:
            opts += [f"{name}.T", f"{name}[:, ::-1]", f"{name}[:, 0]"]
        return r.choice(opts)

    # -- statements ----------------------------------------------------------------------------
    def stmt(self, fresh_name: Callable[[], str], depth: int = 0) -> str:
        r = self.rng
        x = r.random()
        if self.replayable and (0.52 <= x < 0.57 or x >= 0.95):  # (fancy writes and raisers: not replayed)
            x = 0.0
        if x < 0.30:
            return f"{fresh_name()} = {self.expr()}"
        if x < 0.42:
            t = self.target()
            return f"{t} {r.choice(_ARITH + ['&', '|', '^', '<<', '>>'])}= {self.expr(1)}" if t else f"{fresh_name()} = {self.expr()}"
        if x < 0.52:
            t = self.target()
            if t is None:
                return f"{fresh_name()} = {self.expr()}"
            name = t.split("[")[0].split(".")[0]
            return r.choice([f"{t} = {self.expr(1)}", f"{name}[1:] += {name}[:-1]", f"{name}[::-1] = {name}",
                             f"{name}[:-1] = {name}[1:]", f"{name}[...] = {self.scalar()}", f"{t}[...] = {self.operand()}"])
        if x < 0.57:
            name = self.pick(self.arrays(writable=True, nd_min=1))
            if name is None:
                return f"{fresh_name()} = {self.expr()}"
            m = fresh_name()
            return r.choice([f"{name}[{name} > 1] = {self.scalar()}", f"{name}[[0]] += 1",
                             f"{name}[{name} != 0] *= 2", f"{name}[np.array([0, 0])] = {self.scalar()}",
                             # a masked statement (masked.py: the reads through the mask are whole arrays)
                             f"{m} = {name} > 1\n{name}[{m}] = {name}[{m}] * {self.scalar()} - 1",
                             f"{m} = {name} != 0\n{name}[{m}] = np.sqrt(np.abs({name}[{m}])) + {name}[{m}]"])
        if x < 0.63:
            name = self.pick(self.arrays(writable=True))
            a, b = self.operand(), self.operand()
            if name is None:
                return f"{fresh_name()} = np.add({a}, {b})"
            fn = r.choice(["np.add", "np.multiply", "np.subtract", "np.maximum", "np.negative", "np.sqrt", "np.true_divide"])
            args = f"{a}" if fn in ("np.negative", "np.sqrt") else f"{a}, {b}"
            return r.choice([f"{fn}({args}, out={name})", f"{fn}({args}, {name})", f"{fresh_name()} = {fn}({args}, out={name})",
                             f"{fn}({args}, out=({name},))"])
        if x < 0.72:
            return self.sync(fresh_name)
        if depth > 0:
            return f"{fresh_name()} = {self.expr()}"
        if x < 0.78:
            mode = r.choice(["ignore", "raise", "warn"])
            kind = r.choice(["all", "divide", "invalid", "over"])
            return (f"with np.errstate({kind}='{mode}'):\n    " + self.stmt(fresh_name, 1).replace("\n", "\n    ")
                    + "\n    " + self.stmt(fresh_name, 1).replace("\n", "\n    "))
        if x < 0.84:
            body = self.stmt(fresh_name, 1).replace("\n", "\n    ")
            return f"for i in range({r.choice([1, 2, 3])}):\n    {body}"
        if x < 0.9:
            names = self.arrays()
            cond = f"{self.reduction()} > {r.choice(['0', '1', '2.5'])}" if names else "True"
            return (f"if {cond}:\n    " + self.stmt(fresh_name, 1).replace("\n", "\n    ")
                    + "\nelse:\n    " + self.stmt(fresh_name, 1).replace("\n", "\n    "))
        if x < 0.95:
            fname = fresh_name().replace("v", "f")
            arg = self.pick(self.arrays()) or "2"
            body = self.expr(1)
            body = re.sub(rf"\b{re.escape(arg)}\b", "u", body) if arg in body else f"(u * 2 + {body})"
            return f"def {fname}(u, w=2):\n    return {body} * w\n{fresh_name()} = {fname}({arg})"
        return self.raiser(fresh_name)

    def sync(self, fresh_name: Callable[[], str]) -> str:
        r = self.rng
        e = self.reduction() if r.random() < 0.6 else self.operand()
        view = self.view(self.pick(self.arrays())) if self.arrays() else e  # (a view's strides, read in the cell)
        return r.choice([f"print({e})", f"{fresh_name()} = float({e})", f"{fresh_name()} = round({e}, 2)",
                         f"{fresh_name()} = round({e})", f"{fresh_name()} = int({e})", f"{fresh_name()} = bool({e})",
                         f"{fresh_name()} = {e}.item()", f"{fresh_name()} = {e}.tolist()", f"print({self.expr()})",
                         f"{fresh_name()} = complex({e})", f"{fresh_name()} = len({e})", f"{fresh_name()} = {e}.shape",
                         f"{fresh_name()} = {e}.strides", f"{fresh_name()} = {view}.strides",
                         f"print(repr({e}), str({e}))", f"{fresh_name()} = f'{{{e}:.3}}'"])

    def raiser(self, fresh_name: Callable[[], str]) -> str:
        """An operation that (usually) raises: NumPy's exception, at this line."""
        r = self.rng
        a = self.pick(self.arrays()) or "np.arange(3)"
        return r.choice([f"{fresh_name()} = {a} + np.ones((7, 5))", f"{fresh_name()} = {a}.sum(axis=5)",
                         f"{fresh_name()} = {a}.reshape(7, 11)", f"{a} += 1.5", f"{fresh_name()} = {a}[100]",
                         f"{fresh_name()} = np.arange(3) ** -1", f"{fresh_name()} = {a}.astype(np.int8, casting='safe')",
                         f"with np.errstate(all='raise'):\n    {fresh_name()} = {a} / 0",
                         f"{fresh_name()} = {a}.T @ {a}", f"{a}[0] = 'x'", f"{fresh_name()} = bool({a})",
                         f"{fresh_name()} = np.sqrt({a}, out={a})"])


def generate(seed: int, n_stmts: tuple[int, int] = (3, 10), keep_raise: float = 0.1) -> Program:
    """One random program; the same seed gives the same program."""
    rng = random.Random(seed)
    prog = Program(seed, _random_inputs(rng), [], replayable=rng.random() < 0.4)
    setup = prog.setup(1)
    ns = _fresh_ns(setup)
    counter = [0]

    def fresh_name() -> str:
        counter[0] += 1
        return f"v{counter[0]}"

    target = rng.randint(*n_stmts)
    tries = 0
    while len(prog.stmts) < target and tries < 6 * target:
        tries += 1
        saved = counter[0]
        stmt = _Draw(rng, ns, prog.replayable).stmt(fresh_name)
        try:
            _exec_plain(stmt, ns)
        except Exception:  # noqa: BLE001 - NumPy raised: end the program here, or draw another statement
            if rng.random() < keep_raise:
                prog.stmts.append(stmt)
                prog.raises = True
                break
            counter[0] = saved
            ns = _fresh_ns(setup)
            try:
                _exec_plain(prog.source, ns)
            except Exception:  # noqa: BLE001 - (a program whose earlier lines raise on a rerun: stop)
                break
            continue
        prog.stmts.append(stmt)
    return prog


# -- comparing with plain NumPy ---------------------------------------------------------------------------

@dataclass
class Deviation:
    seed: int
    backend: str
    phase: str  # "first" | "fresh inputs" | "mutated inputs"
    category: str  # "deviation" or one of PLATFORM
    message: str
    program: str = ""
    cache: str | None = None

    def __str__(self) -> str:
        return (f"[{self.category}] seed {self.seed}, {self.backend}, {self.phase} run (cache {self.cache}):\n"
                f"{self.message}\n{self.program}")


@dataclass
class Result:
    deviations: list[Deviation] = field(default_factory=list)
    runs: int = 0
    hits: int = 0  # replays served by the plan cache

    def real(self) -> list[Deviation]:
        """Deviations that are neither platform-defined nor already filed (``PLATFORM``, ``KNOWN``)."""
        return [d for d in self.deviations if d.category == "deviation"]


_OPTIONS = {"numpy": {"backend": "numpy"}, "cpu": {"backend": "cpu"}, "cupy-dry": {"backend": "cupy", "dry_run": True}}


def _run(source: str, ns: dict, fused: dict | None, filename: str) -> tuple[harness.Outcome, list[str]]:
    """One run of ``source`` on ``ns``: plain NumPy (``fused`` None) or run_cell with those options."""
    before = dict(ns)
    o = harness.Outcome(ns, before, "")
    out = io.StringIO()
    np.random.seed(1234)
    with contextlib.redirect_stdout(out), np.errstate(all="warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if fused is None:
                body, last = harness._split(source, filename)
                exec(body, ns)
                if last is not None:
                    o.result = eval(last, ns)
            else:
                o.report = jupyter_fuse.run_cell(source, ns, filename=filename, **fused)
                o.result = o.report.result
        except Exception as e:  # noqa: BLE001 - compared with the other run
            o.error, o.error_line = e, harness._cell_line(e.__traceback__, filename)
    o.stdout, o.random_state = out.getvalue(), np.random.get_state()
    return o, [str(w.message) for w in caught]


def _compare(p: harness.Outcome, f: harness.Outcome) -> str | None:
    for o in (p, f):  # identity is the user's to see for mutable objects only (CPython shares small ints, ...)
        o.before = {k: v for k, v in o.before.items() if isinstance(v, (np.ndarray, list, dict, set))}
    try:
        harness.assert_same(p, f)
        harness.assert_same_aliasing(p, f)
    except AssertionError as e:
        return str(e) or "assertion failed"
    except Exception as e:  # noqa: BLE001 - a comparison that crashes is a difference too
        return f"comparison raised {type(e).__name__}: {e}"
    return None


@contextlib.contextmanager
def _zero_signs_ignored():
    """harness._assert_values without its check of the signs of zeros."""
    real = harness._assert_values

    def relaxed(p: np.ndarray, f: np.ndarray, path: str) -> None:
        if p.dtype.kind in "fc":
            np.testing.assert_allclose(f, p, rtol=1e-5, equal_nan=True, err_msg=path)
        else:
            real(p, f, path)

    harness._assert_values = relaxed
    try:
        yield
    finally:
        harness._assert_values = real


# dtypes whose float results are float16/float32 (NumPy's exp of int16 data is float32, of int8 or bool
# float16): NumPy's SIMD loops round them differently from libm
_LOW_PRECISION = re.compile(r"\b(float32|float16|complex64|half|single|csingle|u?int8|u?int16|bool)\b")


def _close_text(p: str, f: str) -> bool:
    """The same text but for numbers that agree to float32's precision."""
    return harness.close_text(p, f, rtol=1e-5, atol=1e-6)


@contextlib.contextmanager
def _float32_rounding():
    """harness.assert_same at float32's tolerance, for values and for numbers in printed text: a program
    computing in float32 rounds its intermediates, and float64 results computed from them differ by as much."""
    real_values, real_text = harness._assert_values, harness.same_text

    def relaxed(p: np.ndarray, f: np.ndarray, path: str) -> None:
        if p.dtype.kind in "fc":
            finite = np.abs(p[np.isfinite(p)])
            atol = 8 * float(np.finfo(np.float32).eps) * float(finite.max()) if finite.size else 0.0
            np.testing.assert_allclose(f, p, rtol=1e-5, atol=atol, equal_nan=True, err_msg=path)
        else:
            real_values(p, f, path)

    harness._assert_values, harness.same_text = relaxed, _close_text
    try:
        yield
    finally:
        harness._assert_values, harness.same_text = real_values, real_text


# a reduction into an integer dtype casts each float element first: NumPy warns of an invalid cast there as
# "invalid value encountered in reduce" (`x.mean(dtype=np.uint16)` of -inf, seed 7600009)
_INT_REDUCE = re.compile(r"dtype=np\.u?int(8|16|32|64)\b")
_MINMAX = re.compile(r"\b(max|min|amax|amin|maximum\.reduce|minimum\.reduce|fmax|fmin)\(")
_VALUE_MSG = ("Not equal to tolerance", "Arrays are not equal", "Mismatched elements")  # (numpy.testing's words)


def _classify(prog_source: str, message: str, p: harness.Outcome, f: harness.Outcome, warned: list[str],
              backend: str, setup: str = "") -> str:
    if backend == "cupy-dry":
        known = next((k for k, matches in KNOWN.items() if matches(message)), None)
        if known is not None:
            return known
    first = message.strip().splitlines()[0] if message.strip() else ""
    values_only = any(m in message for m in _VALUE_MSG)
    scalar_value = bool(re.match(r"[^:]+: (?!type |dtype |shape |strides |object identity)", first)) and "(numpy) !=" in first
    if (values_only or scalar_value or first.startswith("printed text differs")) \
            and any("invalid value encountered in cast" in w or "invalid value encountered in reduce" in w
                    and _INT_REDUCE.search(prog_source) for w in warned):
        return PLATFORM[0]  # NumPy: the value of this cast (and what is computed from it) is platform-defined
    if values_only and _MINMAX.search(prog_source):
        with _zero_signs_ignored():
            if _compare(p, f) is None:
                return PLATFORM[1]
    if (values_only or first.startswith("printed text differs")) and _LOW_PRECISION.search(setup + prog_source):
        with _float32_rounding():
            if _compare(p, f) is None:
                return PLATFORM[3]
    return "deviation"


def _mutate(objs: list[tuple[np.ndarray, ...]], rng: random.Random) -> None:
    """The same in-place change to each input in every namespace (new values, same objects)."""
    for same in objs:
        p = same[0]
        if p.size and all(x.flags.writeable for x in same) and p.dtype.kind in "biufc":
            vals = np.asarray(_values(rng, p.dtype.name, p.size), dtype=object)
            vals = np.array([complex(v) if p.dtype.kind == "c" else (float(v) if isinstance(v, str) else v)
                             for v in vals.flat], dtype=object)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                new = vals.astype(p.dtype).reshape(p.shape)
            for x in same:
                x[...] = new


def _inputs(prog: Program, spaces: list[dict]) -> list[tuple[np.ndarray, ...]]:
    return [tuple(ns[inp.name] for ns in spaces) for inp in prog.inputs
            if inp.kind in ("array", "view") and isinstance(spaces[0].get(inp.name), np.ndarray)]


_INPLACE = re.compile(r"^\s*(?P<aug>[^=]+?)\s*(\*\*|//|<<|>>|[-+*/%&|^])=|out=\(?(?P<out>[\w.\[\]:, -]+?)[,)]|"
                      r"^\s*np\.\w+\(.*, (?P<pos>\w+)\)$")


def _raised_in_place(source: str, message: str, p: harness.Outcome, f: harness.Outcome) -> bool:
    """Both raised at one line, an in-place op whose target holds the only differences: NumPy checks the
    error after its loop wrote (or, casting, wrote back a buffer it never filled): those values are not
    NumPy's to promise, and differ between NumPy runs."""
    if p.error is None or type(p.error) is not type(f.error) or p.error_line != f.error_line or not p.error_line:
        return False
    if not any(m in message for m in _VALUE_MSG):
        return False
    m = _INPLACE.search(source.splitlines()[p.error_line - 1])
    name = message.strip().splitlines()[1].split(":")[0].strip() if "\n" in message.strip() else ""
    if m is None or name not in p.ns or not isinstance(p.ns[name], np.ndarray):
        return False
    try:
        target = eval(next(g for g in (m.group("aug"), m.group("out"), m.group("pos")) if g), dict(p.ns))
    except Exception:  # noqa: BLE001
        return False
    return isinstance(target, np.ndarray) and np.shares_memory(target, p.ns[name])


def _numpy_varies(prog: Program, phase: int, p: harness.Outcome) -> bool:
    """Does plain NumPy, run again (with other buffer sizes, the heap stirred between), leave something else
    than ``p``? (An in-place loop that raised midway has written back a cast buffer never filled: old bytes.)"""
    for t, bufsize in enumerate((8192, 16, 32768)):
        junk = [np.full(n, 17 * t + 3, np.uint8) for n in (64, 512, 4096, 32768, 65536, 262144)]
        del junk
        old = np.setbufsize(bufsize)
        try:
            again = _plain_again(prog, phase)
        finally:
            np.setbufsize(old)
        if _compare(p, again) is not None:
            return True
    return False


def _agrees_without_simd_math(prog: Program, backend: str) -> bool:
    """Does ``prog`` pass every run where NumPy computes its math with the C library (its SIMD dispatch off),
    while it still deviates in a fresh process where NumPy has it? Then the difference is NumPy's vector math's
    last bit (``harness.VECTOR_MATH``), not this process's state (each check in a process of its own)."""
    if os.environ.get("JUPYTER_FUSE_FUZZ_ALONE"):  # (one of those processes itself: never again)
        return False
    # (both answers seen: a process that crashed or ran out of time printed neither, and proves nothing)
    return _alone(prog, backend, SIMD_MATH_OFF) == "AGREES" and _alone(prog, backend, None) == "DIFFERS"


def _alone(prog: Program, backend: str, disable: str | None) -> str:
    """``check_program`` in a new process (NumPy's CPU features ``disable``d): "AGREES" (no deviation at all),
    "DIFFERS", or "" when it printed neither."""
    import pickle
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import pickle, sys; sys.path[:0] = sys.argv[1:]; from fuzz.gen import check_program; "
            "prog, backend = pickle.loads(sys.stdin.buffer.read()); "
            "print('AGREES' if not check_program(prog, backend).deviations else 'DIFFERS')")
    env = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    env.update(JUPYTER_FUSE_FUZZ_ALONE="1", **({"NPY_DISABLE_CPU_FEATURES": disable} if disable else {}))
    try:
        out = subprocess.run([sys.executable, "-c", code, os.path.dirname(here), here], env=env, timeout=900,
                             input=pickle.dumps((prog, backend)), capture_output=True)
    except (subprocess.TimeoutExpired, pickle.PicklingError):
        return ""
    last = out.stdout.strip().splitlines()[-1:]
    return last[0].decode() if last and last[0] in (b"AGREES", b"DIFFERS") else ""


def _plain_again(prog: Program, phase: int) -> harness.Outcome:
    """Plain NumPy alone through the runs up to ``phase``, on new namespaces: what NumPy leaves a second time."""
    for i in range(phase + 1):
        if i < 2:
            ns = _fresh_ns(prog.setup(1 + i))
            inputs = _inputs(prog, [ns])
        else:
            _mutate(inputs, random.Random(prog.seed + 17))
        p, _ = _run(prog.source, ns, None, f"<again-{prog.seed}-{i}>")
    return p


def _full_traceback(prog: Program, phase: int, opts: dict) -> str:
    """run_cell's exception with our own frames (JUPYTER_FUSE_DEBUG keeps them), from the runs up to ``phase``
    again: where in jupyter_fuse it came from (the user sees the cell's lines only)."""
    os.environ["JUPYTER_FUSE_DEBUG"] = "1"
    try:
        for i in range(phase + 1):
            if i < 2:
                ns = _fresh_ns(prog.setup(1 + i))
                inputs = _inputs(prog, [ns])
            else:
                _mutate(inputs, random.Random(prog.seed + 17))
            f, _ = _run(prog.source, ns, opts, f"<debug-{prog.seed}-{i}>")
    finally:
        del os.environ["JUPYTER_FUSE_DEBUG"]
    return "".join(traceback.format_exception(f.error))[-3000:] if f.error is not None else "(no exception again)"


def check_program(prog: Program, backend: str, replays: bool = True) -> Result:
    """Run ``prog`` under plain NumPy and under run_cell on ``backend``: first, on fresh inputs, on mutated
    inputs. Stops at the first difference of a run (later runs would compare diverged namespaces)."""
    res = Result()
    opts = dict(_OPTIONS[backend])
    source = prog.source
    phases = ["first"] + (["fresh inputs", "mutated inputs"] if replays else [])
    plain = fused = None
    for i, phase in enumerate(phases):
        if phase != "mutated inputs":
            setup = prog.setup(1 + i)
            plain, fused = _fresh_ns(setup), _fresh_ns(setup)
            inputs = _inputs(prog, [plain, fused])
        else:
            _mutate(inputs, random.Random(prog.seed + 17))
        p, warned = _run(source, plain, None, f"<plain-{prog.seed}-{i}>")
        try:
            f, _ = _run(source, fused, opts, f"<fused-{prog.seed}-{i}>")
        except Exception as e:  # noqa: BLE001 - never lose a crash of the harness itself
            res.deviations.append(Deviation(prog.seed, backend, phase, "deviation",
                                            f"run_cell crashed outside the cell: {e!r}\n{traceback.format_exc()}", str(prog)))
            break
        res.runs += 1
        cache = getattr(f.report, "cache", None)
        res.hits += cache == "hit"
        message = _compare(p, f)
        if message is not None:
            if f.error is not None and type(f.error) is not type(p.error):
                message += "\n" + _full_traceback(prog, i, opts)
            category = _classify(source, message, p, f, warned, backend, setup)
            if category == "deviation" and p.error is None and f.error is None and harness.VECTOR_MATH \
                    and _agrees_without_simd_math(prog, backend):
                category = PLATFORM[4]
            if category == "deviation" and p.error is not None and (_raised_in_place(source, message, p, f)
                                                                    or _numpy_varies(prog, i, p)):
                category = PLATFORM[2]  # NumPy disagrees with itself
            res.deviations.append(Deviation(prog.seed, backend, phase, category, message, str(prog), cache))
            break
    return res


# -- minimizing ----------------------------------------------------------------------------------

def minimize(prog: Program, backend: str, category: str = "deviation") -> Program:
    """Drop statements (and inputs) while the program still deviates in the same category."""
    def still(candidate: Program) -> bool:
        try:
            r = check_program(candidate, backend)
        except Exception:  # noqa: BLE001
            return False
        return any(d.category == category for d in r.deviations)

    best = prog
    changed = True
    while changed:
        changed = False
        for i in range(len(best.stmts)):
            cand = replace(best, stmts=best.stmts[:i] + best.stmts[i + 1:])  # (a subclass's setup kept)
            if cand.stmts and still(cand):
                best, changed = cand, True
                break
        for j in range(len(best.inputs)):
            name = best.inputs[j].name
            if any(inp.of == name for inp in best.inputs) or re.search(rf"\b{name}\b", best.source):
                continue
            cand = replace(best, inputs=best.inputs[:j] + best.inputs[j + 1:])
            if still(cand):
                best, changed = cand, True
                break
    return best
