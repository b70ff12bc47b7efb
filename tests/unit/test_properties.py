"""Property-based differential tests: small random NumPy programs, plain vs ``run_cell``.

A program is a few statements over arrays of random dtypes and broadcast-compatible
shapes (plus a view of one of them): ufunc chains, operators with weak Python and strong
NumPy scalars, reductions, views, in-place updates and syncs. Whatever NumPy does (values,
dtypes, printed text, aliasing, or the exception it raises and where) the fused run must do.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harness import check

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
UNARY = ["negative", "absolute", "sqrt", "exp", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "arctan",
         "sinh", "cosh", "tanh", "sign", "isnan", "isfinite", "floor", "ceil", "square", "logical_not", "invert",
         "exp2", "expm1", "rint", "trunc", "arcsinh", "signbit"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum", "minimum", "power",
          "equal", "less", "greater_equal", "logical_and", "logical_or", "bitwise_and", "bitwise_xor", "arctan2",
          "hypot", "fmax", "left_shift"]
OPERATORS = ["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">="]
INPLACE = ["+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^="]
REDUCTIONS = ["sum", "mean", "prod", "max", "min", "any", "all", "argmax", "argmin", "var", "std"]
SCALARS = ["0", "1", "2", "-1", "3", "7", "-3", "200", "300", "0.5", "-2.5", "-0.0", "1e10", "True", "False",
           "np.float32(1.5)", "np.int8(3)", "np.uint8(200)", "np.int64(-4)", "np.float64(0.25)", "np.bool_(True)",
           "float('nan')", "float('inf')"]


@st.composite
def shapes_and_arrays(draw):
    """Three arrays whose shapes broadcast to one base shape (size-0 and 0-d included)."""
    base = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    arrays = {}
    for name in "abc":
        ndim = draw(st.integers(0, len(base)))
        shape = tuple(d if draw(st.booleans()) else 1 for d in base[len(base) - ndim:])
        dtype = np.dtype(draw(st.sampled_from(DTYPES)))
        if dtype.kind == "f":
            elements = st.one_of(st.floats(-50, 50, width=dtype.itemsize * 8),
                                 st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.0]))
        elif dtype.kind == "b":
            elements = st.booleans()
        else:
            info = np.iinfo(dtype)
            elements = st.one_of(st.integers(max(info.min, -9), min(info.max, 9)),
                                 st.integers(int(info.min), int(info.max)))
        arrays[name] = draw(hnp.arrays(dtype, shape, elements=elements))
    return arrays


def _index(draw, ndim: int) -> str:
    """A basic index: ints, slices (negative steps), None and ``...``."""
    parts = []
    for _ in range(draw(st.integers(0, max(ndim, 1)))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        if kind == "int":
            parts.append(str(draw(st.integers(-2, 1))))
        elif kind == "slice":
            start, stop = draw(st.sampled_from(["", "1", "-1", "0"])), draw(st.sampled_from(["", "2", "-1", "3"]))
            step = draw(st.sampled_from(["", ":2", ":-1", ":-2"]))
            parts.append(f"{start}:{stop}{step}")
        elif kind == "none":
            parts.append("None")
        elif "..." not in parts:
            parts.append("...")
    return "[" + (", ".join(parts) or "...") + "]"


@st.composite
def programs(draw):
    arrays = draw(shapes_and_arrays())
    names = ["a", "b", "c", "va"]
    view_index = _index(draw, arrays["a"].ndim)
    lines = []
    for i in range(draw(st.integers(1, 6))):
        x, y = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        s = draw(st.sampled_from(SCALARS))
        t = f"t{i}"
        kind = draw(st.sampled_from(["op", "op", "scalar", "rscalar", "unary", "binary", "reduce", "reduce_fn",
                                     "view", "astype", "inplace", "inplace_view", "setitem", "where", "clip",
                                     "matmul", "sync", "pow"]))
        if kind == "op":
            lines.append(f"{t} = {x} {draw(st.sampled_from(OPERATORS))} {y}")
        elif kind == "scalar":
            lines.append(f"{t} = {x} {draw(st.sampled_from(OPERATORS))} {s}")
        elif kind == "rscalar":
            lines.append(f"{t} = {s} {draw(st.sampled_from(OPERATORS))} {x}")
        elif kind == "unary":
            lines.append(f"{t} = np.{draw(st.sampled_from(UNARY))}({x})")
        elif kind == "binary":
            lines.append(f"{t} = np.{draw(st.sampled_from(BINARY))}({x}, {draw(st.sampled_from([y, s]))})")
        elif kind in ("reduce", "reduce_fn"):
            red = draw(st.sampled_from(REDUCTIONS))
            axis = draw(st.sampled_from(["None", "0", "-1", "1", "(0, 1)", "()"]))
            kw = f"axis={axis}" + (", keepdims=True" if draw(st.booleans()) else "")
            if red in ("var", "std") and draw(st.booleans()):
                kw += ", ddof=1"
            lines.append(f"{t} = {x}.{red}({kw})" if kind == "reduce" else f"{t} = np.{red}({x}, {kw})")
        elif kind == "view":
            v = draw(st.sampled_from([_index(draw, 2), ".T", ".reshape(-1)", "[None]", ".ravel()",
                                      ".transpose()", ".squeeze()", ".copy()", "[..., None]"]))
            lines.append(f"{t} = {x}{v}")
        elif kind == "astype":
            lines.append(f"{t} = {x}.astype(np.{draw(st.sampled_from(DTYPES))})".replace("np.bool)", "bool)"))
        elif kind == "inplace":
            lines.append(f"{x} {draw(st.sampled_from(INPLACE))} {draw(st.sampled_from([y, s]))}")
        elif kind == "inplace_view":
            lines.append(f"{x}{_index(draw, 2)} {draw(st.sampled_from(INPLACE))} {draw(st.sampled_from([y, s]))}")
        elif kind == "setitem":
            lines.append(f"{x}{_index(draw, 2)} = {draw(st.sampled_from([y, s]))}")
        elif kind == "where":
            lines.append(f"{t} = np.where({x} > 0, {y}, {s})")
        elif kind == "clip":
            lines.append(f"{t} = np.clip({x}, {draw(st.sampled_from(['-1', '0', 'None', 'b']))}, 2)")
        elif kind == "matmul":
            lines.append(f"{t} = {x} @ {y}")
        elif kind == "pow":  # a scalar exponent: a negative integer one raises by its value, as in NumPy
            lines.append(f"{t} = {x} ** {draw(st.sampled_from(['2', '3', '0.5', '-1', '0', 'np.int8(2)']))}")
        else:
            lines.append(draw(st.sampled_from([f"print({x})", f"print({x}.sum())", f"{t} = float({x}.max())",
                                               f"{t} = {x}.tolist()", f"{t} = bool({x}.any())",
                                               f"if {x}.all():\n    {t} = {y} + 1", f"{t} = int({x}.size)",
                                               f"{t} = [r for r in {x}]", f"print(repr({x}.mean()))"])))
        if kind not in ("inplace", "inplace_view", "setitem", "sync") and draw(st.booleans()):
            names.append(t)
    return arrays, view_index, "\n".join(lines)


def _setup(arrays: dict, view_index: str):
    def make() -> dict:
        ns = {"np": np, "__name__": "__main__", **{k: v.copy() for k, v in arrays.items()}}
        try:
            ns["va"] = eval(f"a{view_index}", {}, ns)
        except IndexError:
            ns["va"] = ns["a"]
        return ns

    return make


@given(programs())
def test_random_programs(prog):
    arrays, view_index, source = prog
    note(f"arrays: { {k: (v.dtype, v.shape) for k, v in arrays.items()} }, va = a{view_index}\n{source}")
    check(source, _setup(arrays, view_index))


@given(shapes_and_arrays(), st.sampled_from(UNARY + BINARY), st.sampled_from(["a", "b", "c"]))
def test_every_ufunc_every_dtype(arrays, ufunc, other):
    fn = getattr(np, ufunc)
    source = f"r = np.{ufunc}(a)" if fn.nin == 1 else f"r = np.{ufunc}(a, {other})\ns = np.{ufunc}({other}, 2)"
    check(source, _setup(arrays, "[...]"))


@given(shapes_and_arrays(), st.sampled_from(REDUCTIONS), st.sampled_from([None, 0, -1, (0, 1)]), st.booleans())
def test_reductions_function_and_method(arrays, red, axis, keepdims):
    source = (f"r = a.{red}(axis={axis!r}, keepdims={keepdims})\n"
              f"s = np.{red}(b, axis={axis!r}, keepdims={keepdims})\n"
              f"t = np.{red}(a * 2 + b, {axis!r})")
    check(source, _setup(arrays, "[...]"))


@given(shapes_and_arrays(), st.sampled_from(INPLACE), st.sampled_from(["b", "c", "1", "2.5", "-1", "True"]))
def test_inplace_keeps_object_and_views(arrays, op, rhs):
    source = f"w = a.T\na {op} {rhs}\nva {op} {rhs}\nw2 = w + 0"
    check(source, _setup(arrays, "[..., ::-1]"))
