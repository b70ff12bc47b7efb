"""Float sums, means, variances on the cpu backend are NumPy's to the bit: pairwise summation in the
input's own float dtype, in NumPy's order (numpy/_core/src/umath/loops_utils.h.src).

A value recorded while numba compiles (NumPy computed it) is compared with the compiled replay's, so a
one-ulp difference abandons the replay: these tests compare with ``==``, NaN-aware, signs of zeros too.
The cases are those whose order NumPy's iterator fixes and ``test_numpy_order`` checks: a contiguous
run of the reduced axes (1-D, a full reduction of a C-ordered array, trailing axes) as one pairwise
tree, reduced axes before it added one run at a time, and a cast (an int mean, ``dtype=np.float64``
of float32) in pairwise trees of NumPy's buffer size (8192) added one after the other.
"""

from __future__ import annotations

import numpy as np
import pytest

from jupyter_fuse.backends import cpu
from jupyter_fuse.runner import run_cell

SIZES = [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 8191, 8192, 8193, 20000]


def _data(shape, dtype, seed=0, specials=False):
    """Values of many magnitudes (float32 sums round at every add), optionally with -0.0, NaN, inf."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, size=shape)
    if specials and x.size:
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] = -0.0
    return x.astype(dtype)


def _same(got, want, what=""):
    assert type(got) is type(want), f"{what}: {type(got)} != {type(want)}"
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, f"{what}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
    assert np.array_equal(g, w, equal_nan=True), f"{what}: {got!r} != {want!r} (numpy)"
    assert np.array_equal(np.signbit(g), np.signbit(w)), f"{what}: signs of zeros differ"


def _check(src: str, **arrays):
    """Run ``src`` on the cpu backend and as plain NumPy; every name it assigns is the same to the bit."""
    want = {"np": np, **{k: v.copy(order="K") if isinstance(v, np.ndarray) else v for k, v in arrays.items()}}
    with np.errstate(all="ignore"):
        exec(src, want)
    ns = {"np": np, **arrays}
    rep = run_cell(src, ns, backend="cpu", cache=False)
    for name in want:
        if name not in ("np", "__builtins__") and name not in arrays:
            _same(ns[name], want[name], f"{name} in {src!r}")
    return rep


def _same_values(got, want, what=""):
    _same(np.asarray(got), np.asarray(want), what)


# -- NumPy's own order, emulated: the tests below rest on it --------------------------------------

def _pairwise(a: np.ndarray) -> np.generic:
    """NumPy's pairwise_sum of the 1-D ``a``, in its dtype."""
    t = a.dtype.type
    n = len(a)
    if n < 8:
        res = t(-0.0)
        for v in a:
            res = t(res + v)
        return res
    if n <= 128:
        r = a[:8].copy()
        m = n - n % 8
        for i in range(8, m, 8):
            r = r + a[i:i + 8]
        res = t(t(t(r[0] + r[1]) + t(r[2] + r[3])) + t(t(r[4] + r[5]) + t(r[6] + r[7])))
        for v in a[m:]:
            res = t(res + v)
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return t(_pairwise(a[:n2]) + _pairwise(a[n2:]))


def _numpy_order(x: np.ndarray, axes: tuple[int, ...], acc: np.dtype, chunk: int = 0) -> np.ndarray:
    """add.reduce of a C-ordered ``x`` as the kernels compute it: per output element, 0, then for each
    index of the leading reduced axes the pairwise sum (per ``chunk`` elements, when a cast goes through
    NumPy's buffer) of the trailing run of reduced axes (size-1 axes do not count)."""
    nd = x.ndim
    run = [d for d in axes if all(e in axes or x.shape[e] == 1 for e in range(d + 1, nd))]
    seq = [d for d in axes if d not in run]
    outer = [d for d in range(nd) if d not in axes]
    oshape = [x.shape[d] for d in outer]
    n_seq = int(np.prod([x.shape[d] for d in seq]))
    n_run = int(np.prod([x.shape[d] for d in run]))
    xt = np.transpose(x, outer + seq + run).reshape(int(np.prod(oshape)), n_seq, n_run).astype(acc)
    out = np.zeros(xt.shape[0], acc)
    step = chunk or max(n_run, 1)
    for o in range(xt.shape[0]):
        a = acc.type(0)
        for s in range(n_seq):
            for c in range(0, n_run, step):
                a = acc.type(a + _pairwise(xt[o, s, c:c + step]))
        out[o] = a
    return out.reshape(oshape)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_numpy_order(dtype):
    """The order the kernels render is NumPy's (this NumPy's: a change in its iterator shows here first)."""
    dt = np.dtype(dtype)
    for n in SIZES[:-1] + [3000]:
        x = _data(n, dt, seed=n)
        _same_values(np.add.reduce(x), dt.type(_numpy_order(x, (0,), dt)[()]), f"sum of {n}")
        _same_values(np.add.reduce(x[::-3]), dt.type(_numpy_order(x[::-3], (0,), dt)[()]), f"sum of [::-3] of {n}")
    for shape, axes in [((37, 300), (0, 1)), ((37, 300), (1,)), ((37, 300), (0,)), ((300, 1), (0,)),
                        ((4, 5, 300), (0, 2)), ((4, 5, 300), (1, 2)), ((4, 5, 300), (0, 1)), ((2000, 3), (1,))]:
        x = _data(shape, dt, seed=len(shape))
        _same_values(np.add.reduce(x, axis=axes), _numpy_order(x, axes, dt), f"sum{shape} over {axes}")
        _same_values(np.add.reduce(x[:, ::2], axis=-1), _numpy_order(x[:, ::2], (x.ndim - 1,), dt), f"[:, ::2]{shape}")
    f8 = np.dtype(np.float64)
    for shape, axes in [((20000,), (0,)), ((3, 9000), (1,)), ((30, 700), (0, 1)), ((30, 700), (0,))]:
        x = _data(shape, dt, seed=1)
        if dt != f8:  # (float64 in float64 is no cast: one tree)
            _same_values(np.add.reduce(x, axis=axes, dtype=f8), _numpy_order(x, axes, f8, 8192), f"f8 sum{shape} over {axes}")
        i = np.random.default_rng(2).integers(-2**62, 2**62, shape)
        _same_values(np.add.reduce(i, axis=axes, dtype=f8), _numpy_order(i, axes, f8, 8192), f"int sum{shape} over {axes}")


# -- the kernels against NumPy ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_1d_sizes(dtype):
    for n in SIZES:
        x = _data(n, dtype, seed=n, specials=True)
        _check("s = x.sum()\nm = x.mean() if len(x) else x.sum()\nf = float(((x - 1.5) ** 2).sum())", x=x)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_var_std(dtype):
    for n in [1, 9, 129, 1000, 8193, 20000]:
        x = _data(n, dtype, seed=n)
        _check("v = x.var()\nsd = x.std(ddof=1)\nw = ((x - 0.5) * 2).var()", x=x)
    x = _data((37, 300), dtype)
    _check("v = x.var(axis=1)\nsd = x.std(axis=0)\nw = x.var()\nz = x.std(axis=-1, keepdims=True)", x=x)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_parallel_full_reduction(dtype, monkeypatch):
    """Threads (their bound lowered to these sizes): leaves and subtrees in parallel, combined in NumPy's
    tree order."""
    monkeypatch.setattr(cpu, "PARALLEL_WORK", 1 << 16)
    x, y = _data(300001, dtype, 1), _data(300001, dtype, 2)
    rep = _check("s = (x * y).sum()\nm = x.mean()\nv = y.var()\nmx = x.max()", x=x, y=y)
    x2, y2 = _data((700, 450), dtype, 3), _data((700, 450), dtype, 4)
    rep2 = _check("s = float(((x2 - y2) ** 2).sum())\nm = x2.mean()\nsd = y2.std()", x2=x2, y2=y2)
    assert all(k.get("parallel") for k in rep.kernel_list + rep2.kernel_list if k.get("source"))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(37, 300), (300, 37), (5, 8193), (1, 1000), (1000, 1), (2000, 3)])
def test_2d_axes(dtype, shape):
    x, y = _data(shape, dtype, 1, specials=True), _data(shape, dtype, 2)
    _check("a = x.sum()\nb = x.sum(axis=-1)\nc = x.sum(axis=0)\nd = x.mean(axis=1, keepdims=True)\n"
           "e = ((x - y) ** 2).sum(axis=1)\nf = (x * y).mean(axis=0)", x=x, y=y)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_3d_axes(dtype):
    x = _data((4, 5, 300), dtype)
    _check("a = x.sum(axis=(0, 2))\nb = x.sum(axis=(1, 2))\nc = x.sum(axis=(0, 1))\nd = (x * 2).mean(axis=1)\n"
           "e = x.sum(axis=2, keepdims=True)", x=x)
    s = _data((3, 40, 20), dtype)  # runs of one leaf (20 and 800 elements), and reduced axes before them
    _check("a = s.sum(axis=(0, 2))\nb = (s * s).sum(axis=-1)\nc = s.mean(axis=(1, 2))\nd = s.std(axis=2)", s=s)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_transposed_fortran_strided(dtype):
    """NumPy reduces in memory order (a transposed or Fortran-ordered input: its memory order is C for
    the kernel too); a view strided along the reduced axis is reduced row by row, or in 1-D."""
    x = _data((300, 140), dtype)
    f = np.asfortranarray(x)
    v = _data(5000, dtype)
    _check("a = x.T.sum()\nb = x.T.sum(axis=0)\nc = f.sum()\nd = f.sum(axis=0)\ne = (f * f).sum(axis=0)\n"
           "g = x[:, ::2].sum(axis=1)\nh = x[::2].sum(axis=1)\ni = v[::3].sum()\nj = v[::-1].mean()", x=x, f=f, v=v)


def test_casts():
    """An int mean and a float32 sum in float64 go through NumPy's buffer: pairwise per 8192 elements."""
    rng = np.random.default_rng(0)
    i = rng.integers(-2**62, 2**62, 20000)
    i2 = rng.integers(-2**62, 2**62, (3, 9000))
    i3 = rng.integers(-2**62, 2**62, (500, 100))
    x = _data(20000, "float32")
    b = rng.random(30000) > 0.3
    _check("a = i.mean()\nc = i2.mean(axis=1)\nd = x.sum(dtype=np.float64)\ne = x.mean(dtype=np.float64)\n"
           "g = b.mean()\nh = i2.mean(axis=0)\nk = i2.sum(dtype=np.float64)\nv = i.var()\nw = i3.mean(axis=1)\n"
           "y = i3.var(axis=1)", i=i, i2=i2, i3=i3, x=x, b=b)


def test_specials():
    """NaN, inf, -0.0, and a float32 sum that overflows in NumPy's order."""
    big = np.full(300, 3e38, np.float32)
    big[150:] = -3e38
    z = np.full(200, -0.0)
    z32 = np.full(9, -0.0, np.float32)
    nan = _data(1000, "float64")
    nan[[3, 700]] = [np.nan, np.inf]
    inf = _data(1000, "float32")
    inf[[5, 6]] = [np.inf, -np.inf]
    _check("a = big.sum()\nb = z.sum()\nc = z32.sum()\nd = nan.sum()\ne = inf.mean()\nf = (z * 2).sum()",
           big=big, z=z, z32=z32, nan=nan, inf=inf)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_staged_kernels(dtype):
    """A softmax's shape (its exp left out: libm's and NumPy's SIMD exp differ) and a normalisation:
    reductions of a stage's values (several passes over each row)."""
    x = _data((50, 700), dtype)
    _check("e = (x - x.max(axis=1, keepdims=True)) ** 2\np = e / e.sum(axis=1, keepdims=True)\n"
           "n = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)", x=x)


def test_mixed_reductions():
    """A pairwise sum fused beside order-free reductions (max, argmin) and a product."""
    x = _data((60, 500), "float32")
    v = _data(100000, "float64")
    _check("a = x.sum(axis=1)\nb = x.max(axis=1)\nc = x.argmin(axis=1)\nd = (x * 2).sum()\ne = (x * 2).min()\n"
           "f = v.sum()\ng = v.argmax()\nh = v.mean()\nk = np.abs(v).max()", x=x, v=v)


def test_replay_value():
    """The motivating case: a value NumPy recorded and the compiled replay's are the same float."""
    ns = {"np": np, "x": np.random.default_rng(0).normal(size=12345)}
    run_cell("s = float(((x - 1.5) ** 2).sum())\nm = x.mean()\n", ns, backend="cpu", cache=False)
    assert ns["s"] == float(((ns["x"] - 1.5) ** 2).sum())
    assert ns["m"] == ns["x"].mean()
