"""CPU benchmark: plain NumPy against %%fuse -b cpu, numexpr, hand-written numba and jax.jit.

    .venv/bin/python bench/cpu.py            # full sizes (one NumPy run takes 50 ms to 2 s)
    .venv/bin/python bench/cpu.py --quick    # small sizes, a smoke test of the script itself
    .venv/bin/pip install -e '.[bench]'      # (once) jax, the third contender; without it its column says "-"

Every result is checked against NumPy. The jax.jit contender runs each program's own cell source
with ``np`` bound to ``jax.numpy`` (float64 enabled), its inputs already jax arrays, its outputs
waited for and handed back as NumPy arrays. "fused first" is the first run in a
process with an empty kernel cache (trace, plan, numba compile, run); "fused
warm" is the best of the following runs with the plan cache off (kernels
compiled, the cell traced again each time); "replay" is a re-run that hits the
plan cache (guards checked, no tracing). Times are the best of ``--repeat``
runs, in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from typing import Any, Callable

import numpy as np

os.environ.setdefault("JUPYTER_FUSE_CACHE_DIR", tempfile.mkdtemp(prefix="jf-bench-"))  # first run compiles
os.environ.setdefault("JUPYTER_FUSE_PLAIN", "off")  # (it times replays: one NumPy beats would run as plain NumPy)

import numba  # noqa: E402
import numexpr as ne  # noqa: E402
from numba import njit, prange  # noqa: E402

import jupyter_fuse as jf  # noqa: E402

# the normal CDF by the Abramowitz-Stegun polynomial (as in the numba and CuPy Black-Scholes examples)
A = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429)


# -- the programs, as a %%fuse cell would hold them -------------------------------------------

BLACK_SCHOLES = """
sq = v * np.sqrt(T)
d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / sq
d2 = d1 - sq
k1 = 1.0 / (1.0 + 0.2316419 * np.abs(d1))
k2 = 1.0 / (1.0 + 0.2316419 * np.abs(d2))
p1 = 0.3989422804 * np.exp(-0.5 * d1 * d1) * (k1 * (0.31938153 + k1 * (-0.356563782 + k1 * (1.781477937 + k1 * (-1.821255978 + k1 * 1.330274429)))))
p2 = 0.3989422804 * np.exp(-0.5 * d2 * d2) * (k2 * (0.31938153 + k2 * (-0.356563782 + k2 * (1.781477937 + k2 * (-1.821255978 + k2 * 1.330274429)))))
n1 = np.where(d1 > 0, 1.0 - p1, p1)
n2 = np.where(d2 > 0, 1.0 - p2, p2)
disc = K * np.exp(-r * T)
call = S * n1 - disc * n2
put = call - S + disc
del sq, d1, d2, k1, k2, p1, p2, n1, n2, disc
"""
SOFTMAX = """
e = np.exp(X - X.max(axis=1, keepdims=True))
p = e / e.sum(axis=1, keepdims=True)
del e
"""
STENCIL = """
out = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1])
"""
NBODY = """
dx = px[None, :] - px[:, None]
dy = py[None, :] - py[:, None]
r2 = dx * dx + dy * dy + 0.01
inv = m[None, :] / (r2 * np.sqrt(r2))
ax = (dx * inv).sum(axis=1)
ay = (dy * inv).sum(axis=1)
del dx, dy, r2, inv
"""
COLNORM = """
mu = x.mean(axis=0)
var = ((x - mu) ** 2).mean(axis=0)
z = (x - mu) / np.sqrt(var + 1e-5) * g
"""
COLSUM = """
s = y.sum(axis=0)
"""
LOOP = """
x = x0.copy()
w = w0.copy()
for step in range(20):
    w = w - 0.01 * (x * x * x - x)
    x = x + 0.01 * w
"""
# split-step phase rotations (a Schrodinger solver's potential and kinetic half steps, without its FFTs):
# a chain of complex products per element
PHASE = """
psi = psi0.copy()
for step in range(50):
    psi = half * psi
    psi = kin * psi
    psi = half * psi
"""


def setup(quick: bool) -> dict[str, dict]:
    rng = np.random.default_rng(0)
    n_bs, (n_r, n_c), n_st, n_nb, n_loop, (n_cr, n_cc), n_cs = (
        (20_000, (200, 100), 200, 200, 20_000, (256, 64), 256) if quick
        else (4_000_000, (4000, 2000), 4000, 2000, 4_000_000, (4096, 512), 4096))
    return {
        "black_scholes": dict(S=rng.uniform(50, 150, n_bs), K=rng.uniform(50, 150, n_bs), r=0.03, v=0.25, T=1.5),
        "softmax": dict(X=rng.normal(size=(n_r, n_c))),
        "stencil": dict(u=rng.random((n_st, n_st))),
        "nbody": dict(px=rng.random(n_nb), py=rng.random(n_nb), m=rng.random(n_nb)),
        "loop": dict(x0=rng.normal(size=n_loop), w0=rng.normal(size=n_loop)),
        # reductions over the outer (strided) axis: a layer norm per column in float32, a column sum
        "colnorm": dict(x=rng.normal(size=(n_cr, n_cc)).astype(np.float32), g=rng.normal(size=n_cc).astype(np.float32)),
        "colsum": dict(y=rng.normal(size=(n_cs, n_cs))),
        "phase": {k: np.exp(1j * rng.uniform(-0.1, 0.1, n_cs * n_cs // (64 if quick else 16))) for k in ("psi0", "half", "kin")},
    }


PROGRAMS = {"black_scholes": BLACK_SCHOLES, "softmax": SOFTMAX, "stencil": STENCIL, "nbody": NBODY, "loop": LOOP,
            "colnorm": COLNORM, "colsum": COLSUM, "phase": PHASE}
OUTPUTS = {"black_scholes": ("call", "put"), "softmax": ("p",), "stencil": ("out",), "nbody": ("ax", "ay"),
           "loop": ("x", "w"), "colnorm": ("mu", "var", "z"), "colsum": ("s",), "phase": ("psi",)}


# -- numexpr: the elementwise parts; reductions stay NumPy ---------------------------------------

def ne_black_scholes(S, K, r, v, T):
    sq = v * np.sqrt(T)
    d1 = ne.evaluate("(log(S / K) + (r + 0.5 * v * v) * T) / sq")
    d2 = ne.evaluate("d1 - sq")
    cnd = ("where({d} > 0, 1.0 - {p}, {p})")
    p = ("0.3989422804 * exp(-0.5 * {d} * {d}) * ({k} * (0.31938153 + {k} * (-0.356563782 + {k} * (1.781477937"
         " + {k} * (-1.821255978 + {k} * 1.330274429)))))")
    k1 = ne.evaluate("1.0 / (1.0 + 0.2316419 * abs(d1))")
    k2 = ne.evaluate("1.0 / (1.0 + 0.2316419 * abs(d2))")
    n1 = ne.evaluate(cnd.format(d="d1", p=p.format(d="d1", k="k1")))
    n2 = ne.evaluate(cnd.format(d="d2", p=p.format(d="d2", k="k2")))
    disc = ne.evaluate("K * exp(-r * T)")
    call = ne.evaluate("S * n1 - disc * n2")
    return {"call": call, "put": ne.evaluate("call - S + disc")}


def ne_softmax(X):
    mx = X.max(axis=1, keepdims=True)
    e = ne.evaluate("exp(X - mx)")
    s = e.sum(axis=1, keepdims=True)
    return {"p": ne.evaluate("e / s")}


def ne_stencil(u):
    c, n, s, w, e = u[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1], u[1:-1, :-2], u[1:-1, 2:]
    return {"out": ne.evaluate("c + 0.1 * (n + s + w + e - 4.0 * c)")}


def ne_nbody(px, py, m):
    pxr, pxc, pyr, pyc, mr = px[None, :], px[:, None], py[None, :], py[:, None], m[None, :]
    dx = ne.evaluate("pxr - pxc")
    dy = ne.evaluate("pyr - pyc")
    inv = ne.evaluate("mr / ((dx * dx + dy * dy + 0.01) * sqrt(dx * dx + dy * dy + 0.01))")
    return {"ax": ne.evaluate("sum(dx * inv, axis=1)"), "ay": ne.evaluate("sum(dy * inv, axis=1)")}


def ne_colnorm(x, g):
    mu = x.mean(axis=0)
    var = ne.evaluate("(x - mu) ** 2").mean(axis=0)
    eps = np.float32(1e-5)  # (a Python float would make numexpr compute in float64)
    return {"mu": mu, "var": var, "z": ne.evaluate("(x - mu) / sqrt(var + eps) * g")}


def ne_colsum(y):
    return {"s": ne.evaluate("sum(y, axis=0)")}


def ne_phase(psi0, half, kin):
    psi = psi0.copy()
    for _ in range(50):
        psi = ne.evaluate("half * kin * half * psi")  # (a step's products in one pass)
    return {"psi": psi}


def ne_loop(x0, w0):
    x, w = x0.copy(), w0.copy()
    for _ in range(20):
        w = ne.evaluate("w - 0.01 * (x * x * x - x)")
        x = ne.evaluate("x + 0.01 * w")
    return {"x": x, "w": w}


# -- hand-written numba ---------------------------------------------------------------------------

@njit
def _cnd(d):
    k = 1.0 / (1.0 + 0.2316419 * abs(d))
    p = 0.3989422804 * np.exp(-0.5 * d * d) * (k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4])))))
    return 1.0 - p if d > 0 else p


@njit(parallel=True)
def _nb_bs(S, K, r, v, T, call, put):
    sq = v * np.sqrt(T)
    disc0 = np.exp(-r * T)
    for i in prange(S.shape[0]):
        d1 = (np.log(S[i] / K[i]) + (r + 0.5 * v * v) * T) / sq
        d2 = d1 - sq
        disc = K[i] * disc0
        call[i] = S[i] * _cnd(d1) - disc * _cnd(d2)
        put[i] = call[i] - S[i] + disc


def nb_black_scholes(S, K, r, v, T):
    call, put = np.empty_like(S), np.empty_like(S)
    _nb_bs(S, K, r, v, T, call, put)
    return {"call": call, "put": put}


@njit(parallel=True)
def _nb_softmax(X, out):
    for i in prange(X.shape[0]):
        mx = -np.inf
        for j in range(X.shape[1]):
            mx = max(mx, X[i, j])
        s = 0.0
        for j in range(X.shape[1]):
            out[i, j] = np.exp(X[i, j] - mx)
            s += out[i, j]
        for j in range(X.shape[1]):
            out[i, j] /= s


def nb_softmax(X):
    out = np.empty_like(X)
    _nb_softmax(X, out)
    return {"p": out}


@njit(parallel=True)
def _nb_stencil(u, out):
    for i in prange(1, u.shape[0] - 1):
        for j in range(1, u.shape[1] - 1):
            c = u[i, j]
            out[i - 1, j - 1] = c + 0.1 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * c)


def nb_stencil(u):
    out = np.empty((u.shape[0] - 2, u.shape[1] - 2))
    _nb_stencil(u, out)
    return {"out": out}


@njit(parallel=True)
def _nb_nbody(px, py, m, ax, ay):
    n = px.shape[0]
    for i in prange(n):
        sx = 0.0
        sy = 0.0
        for j in range(n):
            dx = px[j] - px[i]
            dy = py[j] - py[i]
            r2 = dx * dx + dy * dy + 0.01
            inv = m[j] / (r2 * np.sqrt(r2))
            sx += dx * inv
            sy += dy * inv
        ax[i] = sx
        ay[i] = sy


def nb_nbody(px, py, m):
    ax, ay = np.empty_like(px), np.empty_like(px)
    _nb_nbody(px, py, m, ax, ay)
    return {"ax": ax, "ay": ay}


@njit(parallel=True)
def _nb_loop(x0, w0, x, w):
    for i in prange(x0.shape[0]):
        xi, wi = x0[i], w0[i]
        for _ in range(20):
            wi = wi - 0.01 * (xi * xi * xi - xi)
            xi = xi + 0.01 * wi
        x[i], w[i] = xi, wi


def nb_loop(x0, w0):
    x, w = np.empty_like(x0), np.empty_like(w0)
    _nb_loop(x0, w0, x, w)
    return {"x": x, "w": w}


@njit(parallel=True)
def _nb_colnorm(x, g, mu, var, z):
    # the columns split between threads; each streams the rows of its columns three times, through row
    # slices (1-D loops numba vectorizes: x[i, j] in the loop is 1.8x slower)
    n, m = x.shape
    nch = max(1, min(numba.get_num_threads(), m // 64))
    for c in prange(nch):
        lo, hi = c * m // nch, (c + 1) * m // nch
        w = hi - lo
        acc = np.zeros(w, np.float32)
        for i in range(n):
            row = x[i, lo:hi]
            for j in range(w):
                acc[j] += row[j]
        mc = mu[lo:hi]
        for j in range(w):
            mc[j] = acc[j] / n
            acc[j] = 0
        for i in range(n):
            row = x[i, lo:hi]
            for j in range(w):
                d = row[j] - mc[j]
                acc[j] += d * d
        vc, gc = var[lo:hi], g[lo:hi]
        for j in range(w):
            vc[j] = acc[j] / n
            acc[j] = gc[j] / np.sqrt(vc[j] + np.float32(1e-5))
        for i in range(n):
            row, out = x[i, lo:hi], z[i, lo:hi]
            for j in range(w):
                out[j] = (row[j] - mc[j]) * acc[j]


def nb_colnorm(x, g):
    m = x.shape[1]
    mu, var, z = np.empty(m, x.dtype), np.empty(m, x.dtype), np.empty_like(x)
    _nb_colnorm(x, g, mu, var, z)
    return {"mu": mu, "var": var, "z": z}


@njit(parallel=True)
def _nb_colsum(y, s):
    n, m = y.shape
    nch = max(1, min(numba.get_num_threads(), m // 64))
    for c in prange(nch):
        lo, hi = c * m // nch, (c + 1) * m // nch
        acc = s[lo:hi]
        acc[:] = 0.0
        for i in range(n):
            row = y[i, lo:hi]
            for j in range(hi - lo):
                acc[j] += row[j]


@njit(parallel=True)
def _nb_phase(psi0, half, kin, psi):
    for i in prange(psi0.shape[0]):
        p, h, k = psi0[i], half[i], kin[i]
        for _ in range(50):
            p = h * (k * (h * p))
        psi[i] = p


def nb_phase(psi0, half, kin):
    psi = np.empty_like(psi0)
    _nb_phase(psi0, half, kin, psi)
    return {"psi": psi}


def nb_colsum(y):
    s = np.empty(y.shape[1])
    _nb_colsum(y, s)
    return {"s": s}


# -- jax.jit: the cell's own source, traced by jax ---------------------------------------------------

def jax_contenders() -> dict[str, Callable[..., dict]] | None:
    """jax.jit versions of every program (None where jax is not installed: ``pip install -e '.[bench]'``)."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)  # (the programs are float64 but colnorm's float32)
    import jax.numpy as jnp

    def make(name: str) -> Callable[..., dict]:
        outs = OUTPUTS[name]

        def cell(**kw: Any) -> tuple:
            ns = {"np": jnp, **kw}
            exec(PROGRAMS[name], ns)  # noqa: S102 - the benchmark's own cell, traced once by jax
            return tuple(ns[k] for k in outs)

        fn = jax.jit(cell)
        on_device: dict[int, dict] = {}  # (the inputs copied into jax's arrays once, outside the timings)

        def run(**data: Any) -> dict:
            key = id(data[next(iter(data))])
            if key not in on_device:
                on_device.clear()
                on_device[key] = {k: jnp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in data.items()}
            got = jax.block_until_ready(fn(**on_device[key]))
            return {k: np.asarray(v) for k, v in zip(outs, got)}
        return run

    return {name: make(name) for name in PROGRAMS}


NUMEXPR = {"black_scholes": ne_black_scholes, "softmax": ne_softmax, "stencil": ne_stencil,
           "nbody": ne_nbody, "loop": ne_loop, "colnorm": ne_colnorm, "colsum": ne_colsum, "phase": ne_phase}
NUMBA = {"black_scholes": nb_black_scholes, "softmax": nb_softmax, "stencil": nb_stencil,
         "nbody": nb_nbody, "loop": nb_loop, "colnorm": nb_colnorm, "colsum": nb_colsum, "phase": nb_phase}


# -- timing ---------------------------------------------------------------------------------------

def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def run_numpy(src: str, data: dict) -> dict:
    ns = {"np": np, **data}
    exec(src, ns)
    return ns


def run_fused(src: str, data: dict, cache: bool = True) -> dict:
    ns = {"np": np, **data}
    ns["_report"] = jf.run_cell(src, ns, backend="cpu", cache=cache)
    return ns


def check(name: str, ref: dict, got: dict, label: str) -> None:
    for k in OUTPUTS[name]:
        tol = 1e-5 if ref[k].dtype == np.float32 else 1e-9  # (a hand-written float32 kernel rounds otherwise)
        np.testing.assert_allclose(got[k], ref[k], rtol=tol, atol=tol * np.abs(ref[k]).max(),
                                   err_msg=f"{name}/{label}/{k}")
        assert got[k].dtype == ref[k].dtype, f"{name}/{label}/{k}: dtype {got[k].dtype} != {ref[k].dtype}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    rows = []
    jaxed = jax_contenders()
    for name, data in setup(args.quick).items():
        if args.only and name not in args.only:
            continue
        src = PROGRAMS[name]
        ref = run_numpy(src, data)
        t_np = best(lambda: run_numpy(src, data), args.repeat)
        t0 = time.perf_counter()
        first = run_fused(src, data)
        t_first = (time.perf_counter() - t0) * 1e3
        check(name, ref, first, "fused")
        report = first["_report"]
        jf.wait_for_compiles()  # (warm and replay time compiled kernels: a long kernel compiles for seconds)
        t_warm = best(lambda: run_fused(src, data, cache=False), args.repeat)
        check(name, ref, run_fused(src, data), "replay")
        replayed = run_fused(src, data)
        assert replayed["_report"].cache == "hit", (name, replayed["_report"].cache, replayed["_report"].miss_reasons)
        t_replay = best(lambda: run_fused(src, data), args.repeat)
        check(name, ref, NUMEXPR[name](**data), "numexpr")
        t_ne = best(lambda: NUMEXPR[name](**data), args.repeat)
        check(name, ref, NUMBA[name](**data), "numba")  # (compiles once)
        t_nb = best(lambda: NUMBA[name](**data), args.repeat)
        t_jax = float("inf")
        if jaxed is not None:
            check(name, ref, jaxed[name](**data), "jax")  # (compiles once)
            t_jax = best(lambda: jaxed[name](**data), args.repeat)
        rows.append((name, report.ops, report.kernels, t_np, t_warm, t_replay, t_first, t_ne, t_nb, t_jax))
        print(f"{name}: done", file=sys.stderr, flush=True)
    print_table(rows)


def print_table(rows: list[tuple]) -> None:
    print(f"machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cores, "
          f"numpy {np.__version__}, numba {numba.__version__} ({numba.get_num_threads()} threads), "
          f"numexpr {ne.__version__}, jax {_version('jax')}, python {platform.python_version()}")
    print("(warm / best and replay / best: times over the best contender's time; below 1.0 the fused run is ahead)")
    print()
    print("| program | ops -> kernels | NumPy ms | fused warm ms (x NumPy) | replay ms (x NumPy) | fused first ms |"
          " numexpr ms | numba ms | jax.jit ms | warm / best | replay / best |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, ops, kernels, t_np, t_warm, t_replay, t_first, t_ne, t_nb, t_jax in rows:
        best_other = min(t_ne, t_nb, t_jax)
        jx = f"{t_jax:.1f}" if t_jax < float("inf") else "-"
        print(f"| {name} | {ops} -> {kernels} | {t_np:.1f} | {t_warm:.1f} ({t_np / t_warm:.2f}x) |"
              f" {t_replay:.1f} ({t_np / t_replay:.2f}x) | {t_first:.0f} |"
              f" {t_ne:.1f} | {t_nb:.1f} | {jx} | {t_warm / best_other:.2f} | {t_replay / best_other:.2f} |")


def _version(module: str) -> str:
    try:
        return __import__(module).__version__
    except ImportError:
        return "not installed"


if __name__ == "__main__":
    main()
