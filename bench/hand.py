"""Hand-written ``@njit(parallel=True)`` versions of the loop programs in ``bench/programs.py``.

These are the target that ``bench/loops.py`` compares the re-run of a ``%%fuse`` cell against
(issue 13): what an expert writes by hand with numba. For each program the WHOLE time loop runs
inside one ``@numba.njit(parallel=True, cache=False, fastmath=False)`` function. Its kernels are
short ``inline="always"`` helpers, inlined into that function before numba's parallel pass, so
their ``prange`` loops become the time loop's own parallel loops and no step returns to Python.
``prange`` goes on the outer spatial loop where it is legal and pays; sequential dependencies
(the ADI sweeps' recurrences, the solver's residual and stop test) stay sequential. Where the
loops are too small to pay for threads (the tiny and small sizes, mostly), the wrapper runs the
function's serial twin, the same source compiled with ``parallel=False`` (see ``PAR_MIN``).

``run_<name>(ns)`` takes the namespace made by ``Program.setup`` and leaves in it the program's
outputs with the values, dtypes and Python types ``exec(program.source, ns)`` leaves: arrays the
cell mutates in place are mutated in place, names the cell rebinds are rebound to new arrays.
Loop temporaries the cell also binds (``un``, ``pn``, ``out``, loop counters) are not set.

Arithmetic follows the NumPy expressions operation for operation (same association, ``x * x``
for ``x**2``, scalar coefficients formed as Python forms them), so with ``fastmath=False`` the
results are NumPy's bit for bit, except nbody's (its force sums, see there).

Run ``python bench/hand.py`` to check every program against NumPy at every size and time it.
"""

from __future__ import annotations

import math
from typing import Callable

import numba
import numpy as np
from numba import prange

JIT = dict(cache=False, fastmath=False)

# Kernels: inlined at the IR level into the time-loop function that calls them, before numba's
# parallel pass, so their prange loops are that function's own parallel loops.
kernel = numba.njit(inline="always", **JIT)

# Below about this many element updates per parallel loop, waking and joining the threads costs
# more than it saves: ~3 µs a loop even on one thread, milliseconds on a loaded machine. A run
# whose loops are smaller runs the serial twin of the time-loop function instead.
PAR_MIN = 32_768
SERIAL: dict[Callable, Callable] = {}  # parallel time-loop function -> its serial twin


def loop(fn: Callable) -> Callable:
    """The time-loop function, ``@njit(parallel=True)``; its serial twin (the same source
    compiled with ``parallel=False``, where prange is range) goes in SERIAL."""
    par = numba.njit(parallel=True, **JIT)(fn)
    SERIAL[par] = numba.njit(parallel=False, **JIT)(fn)
    return par


def pick(par: Callable, work: int) -> Callable:
    """``par`` for parallel loops of ``work`` >= PAR_MIN element updates, else its serial twin."""
    return par if work >= PAR_MIN and numba.get_num_threads() > 1 else SERIAL[par]


@kernel
def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src for C-contiguous arrays of one shape."""
    d, s = dst.reshape(-1), src.reshape(-1)
    for k in prange(d.size):
        d[k] = s[k]


# --- heat1d ------------------------------------------------------------------------------------
# NumPy copies u to un every step; here two buffers swap roles (same values: the ends are never
# written and start equal), and the result is copied back into u when it ends in un.

@kernel
def _heat1d_step(dst: np.ndarray, src: np.ndarray, c: float) -> None:
    for i in prange(1, src.size - 1):
        dst[i] = src[i] + c * (src[i + 1] - 2 * src[i] + src[i - 1])


@loop
def _heat1d(u: np.ndarray, nt: int, c: float) -> None:
    un = u.copy()
    for n in range(nt):
        if n % 2 == 0:
            _heat1d_step(un, u, c)
        else:
            _heat1d_step(u, un, c)
    if nt % 2 == 1:
        _copy(u, un)


def run_heat1d(ns: dict) -> None:
    c = ns["nu"] * ns["dt"] / ns["dx"] ** 2  # the scalar the cell forms first, formed the same way
    pick(_heat1d, ns["u"].size)(ns["u"], ns["nt"], c)


# --- jacobi1d ----------------------------------------------------------------------------------
# B and A are distinct arrays, so each half-step is a plain parallel loop writing in place.

@kernel
def _jacobi1d_half(dst: np.ndarray, src: np.ndarray) -> None:
    for i in prange(1, src.size - 1):
        dst[i] = 0.33 * (src[i - 1] + src[i] + src[i + 1])


@loop
def _jacobi1d(a: np.ndarray, b: np.ndarray, steps: int) -> None:
    for t in range(steps):
        _jacobi1d_half(b, a)
        _jacobi1d_half(a, b)


def run_jacobi1d(ns: dict) -> None:
    pick(_jacobi1d, ns["A"].size)(ns["A"], ns["B"], ns["steps"])


# --- heat2d ------------------------------------------------------------------------------------
# Swapped buffers again. The boundary is the constant 1 after every step, so the step writes it
# into dst along with the interior: prange over rows, the contiguous row inside.

@kernel
def _heat2d_step(dst: np.ndarray, src: np.ndarray, cx: float, cy: float) -> None:
    ny, nx = src.shape
    for i in prange(ny):
        if i == 0 or i == ny - 1:
            for j in range(nx):
                dst[i, j] = 1.0
        else:
            dst[i, 0] = 1.0
            dst[i, nx - 1] = 1.0
            for j in range(1, nx - 1):
                c = src[i, j]
                dst[i, j] = (c + cx * (src[i, j + 1] - 2 * c + src[i, j - 1])
                             + cy * (src[i + 1, j] - 2 * c + src[i - 1, j]))


@loop
def _heat2d(u: np.ndarray, nt: int, cx: float, cy: float) -> None:
    un = np.empty_like(u)
    for n in range(nt):
        if n % 2 == 0:
            _heat2d_step(un, u, cx, cy)
        else:
            _heat2d_step(u, un, cx, cy)
    if nt % 2 == 1:
        _copy(u, un)


def run_heat2d(ns: dict) -> None:
    nu, dt = ns["nu"], ns["dt"]
    cx, cy = nu * dt / ns["dx"] ** 2, nu * dt / ns["dy"] ** 2
    pick(_heat2d, ns["u"].size)(ns["u"], ns["nt"], cx, cy)


# --- cavity ------------------------------------------------------------------------------------
# Per time step: b from (u, v), nit Jacobi sweeps for p, then u and v from their copies and p.
# The pressure sweeps are the hot loop: they swap p with one buffer instead of copying, which
# gives NumPy's values because the cell's boundary rules rebuild every boundary value from the
# new interior (true when both sides are >= 3; run_cavity checks). Boundaries are written by
# plain sequential loops in the cell's order (the corners depend on it): O(n), not worth threads.

@kernel
def _build_up_b(b: np.ndarray, rho: float, dt: float, u: np.ndarray, v: np.ndarray,
                dx: float, dy: float) -> None:
    ny, nx = u.shape
    for i in prange(1, ny - 1):
        for j in range(1, nx - 1):
            ux = (u[i, j + 1] - u[i, j - 1]) / (2 * dx)
            vy = (v[i + 1, j] - v[i - 1, j]) / (2 * dy)
            cross = (u[i + 1, j] - u[i - 1, j]) / (2 * dy) * (v[i, j + 1] - v[i, j - 1]) / (2 * dx)
            b[i, j] = rho * (1 / dt * (ux + vy) - ux * ux - 2 * cross - vy * vy)


@kernel
def _poisson_sweep(dst: np.ndarray, src: np.ndarray, b: np.ndarray, dx: float, dy: float) -> None:
    ny, nx = src.shape
    dx2, dy2 = dx * dx, dy * dy
    den = 2 * (dx2 + dy2)
    cb = dx2 * dy2 / den
    for i in prange(1, ny - 1):
        for j in range(1, nx - 1):
            dst[i, j] = ((src[i, j + 1] + src[i, j - 1]) * dy2
                         + (src[i + 1, j] + src[i - 1, j]) * dx2) / den - cb * b[i, j]
    for i in range(ny):
        dst[i, nx - 1] = dst[i, nx - 2]
    for j in range(nx):
        dst[0, j] = dst[1, j]
    for i in range(ny):
        dst[i, 0] = dst[i, 1]
    for j in range(nx):
        dst[ny - 1, j] = 0.0


@kernel
def _cavity_velocity(u: np.ndarray, v: np.ndarray, un: np.ndarray, vn: np.ndarray, p: np.ndarray,
                     dt: float, dx: float, dy: float, rho: float, nu: float) -> None:
    ny, nx = u.shape
    for i in prange(1, ny - 1):  # u and v read only un, vn and p: one loop for both
        for j in range(1, nx - 1):
            uc, vc = un[i, j], vn[i, j]
            u[i, j] = (uc
                       - uc * dt / dx * (uc - un[i, j - 1])
                       - vc * dt / dy * (uc - un[i - 1, j])
                       - dt / (2 * rho * dx) * (p[i, j + 1] - p[i, j - 1])
                       + nu * (dt / (dx * dx) * (un[i, j + 1] - 2 * uc + un[i, j - 1])
                               + dt / (dy * dy) * (un[i + 1, j] - 2 * uc + un[i - 1, j])))
            v[i, j] = (vc
                       - uc * dt / dx * (vc - vn[i, j - 1])
                       - vc * dt / dy * (vc - vn[i - 1, j])
                       - dt / (2 * rho * dy) * (p[i + 1, j] - p[i - 1, j])
                       + nu * (dt / (dx * dx) * (vn[i, j + 1] - 2 * vc + vn[i, j - 1])
                               + dt / (dy * dy) * (vn[i + 1, j] - 2 * vc + vn[i - 1, j])))
    for i in range(ny):
        u[i, 0] = u[i, nx - 1] = 0.0
        v[i, 0] = v[i, nx - 1] = 0.0
    for j in range(nx):
        u[0, j] = v[0, j] = v[ny - 1, j] = 0.0
        u[ny - 1, j] = 1.0  # last in the cell: the lid's corners are 1


@loop
def _cavity(u: np.ndarray, v: np.ndarray, p: np.ndarray, nt: int, nit: int, dt: float, dx: float,
            dy: float, rho: float, nu: float) -> None:
    un, vn = np.empty_like(u), np.empty_like(v)
    b = np.zeros(u.shape)
    pn = p.copy()
    for n in range(nt):
        _copy(un, u)
        _copy(vn, v)
        _build_up_b(b, rho, dt, u, v, dx, dy)
        for q in range(nit):
            if q % 2 == 0:
                _poisson_sweep(pn, p, b, dx, dy)
            else:
                _poisson_sweep(p, pn, b, dx, dy)
        if nit % 2 == 1:
            _copy(p, pn)
        _cavity_velocity(u, v, un, vn, p, dt, dx, dy, rho, nu)


def run_cavity(ns: dict) -> None:
    # the cell's `u, v, p = cavity_flow(...)` rebinds the names to the same, mutated arrays
    u = ns["u"]
    assert u.shape == (ns["ny"], ns["nx"]) and min(u.shape) >= 3
    pick(_cavity, u.size)(u, ns["v"], ns["p"], ns["nt"], ns["nit"], ns["dt"], ns["dx"], ns["dy"],
                          ns["rho"], ns["nu"])


# --- adi ---------------------------------------------------------------------------------------
# The row sweep is a recurrence down the rows: sequential in i, parallel over bands of columns
# (each thread walks its bands down all rows; a band is contiguous in a row). Parallel over i
# instead would be wrong; over single columns, strided. The column sweep is a recurrence along
# each row: parallel over rows, sequential in j, and `u *= scale` is fused into it row by row
# (a row's column sweep reads only that row).

ADI_BAND = 64  # columns per band: 512 bytes of a row


@kernel
def _adi_rows(u: np.ndarray, n: int, a: float) -> None:
    ncols = u.shape[1]
    for band in prange((ncols + ADI_BAND - 1) // ADI_BAND):
        j0, j1 = band * ADI_BAND, min((band + 1) * ADI_BAND, ncols)
        for i in range(1, n):
            for j in range(j0, j1):
                u[i, j] = u[i, j] - a * u[i - 1, j]


@kernel
def _adi_cols_scale(u: np.ndarray, n: int, a: float, scale: float) -> None:
    nrows, ncols = u.shape
    for i in prange(nrows):
        for j in range(1, n):
            u[i, j] = u[i, j] - a * u[i, j - 1]
        for j in range(ncols):
            u[i, j] *= scale


@loop
def _adi(u: np.ndarray, n: int, steps: int, a: float, scale: float) -> None:
    for s in range(steps):
        _adi_rows(u, n, a)
        _adi_cols_scale(u, n, a, scale)


def run_adi(ns: dict) -> None:
    u = ns["u"]
    assert u.shape == (ns["n"], ns["n"])
    pick(_adi, u.size)(u, ns["n"], ns["steps"], ns["a"], ns["scale"])


# --- solver ------------------------------------------------------------------------------------
# The while loop and its stop test stay inside the loop function (no float() round trip per
# iteration). Each sweep is parallel over rows and leaves each row's largest change in rowmax;
# a max is exact in any order, so res is NumPy's bit for bit. Buffers swap as in heat1d.

@kernel
def _solver_sweep(dst: np.ndarray, src: np.ndarray, b: np.ndarray, h: float,
                  rowmax: np.ndarray) -> None:
    ny, nx = src.shape
    for i in prange(1, ny - 1):
        m = 0.0  # the boundary does not change: |p - pn| is 0 there
        for j in range(1, nx - 1):
            new = 0.25 * (src[i, j + 1] + src[i, j - 1] + src[i + 1, j] + src[i - 1, j]
                          - b[i, j] * h * h)
            dst[i, j] = new
            d = abs(new - src[i, j])
            if d > m or d != d:  # a NaN sticks, as in ndarray.max
                m = d
        rowmax[i] = m


@kernel
def _max_nan(x: np.ndarray) -> float:
    m = x[0]
    for k in range(1, x.size):
        if x[k] > m or x[k] != x[k]:
            m = x[k]
    return m


@loop
def _solver(p: np.ndarray, b: np.ndarray, h: float, maxit: int, tol: float) -> tuple[float, int]:
    pn = p.copy()
    rowmax = np.zeros(p.shape[0])
    it = 0
    res = 1.0
    while it < maxit and res > tol:
        if it % 2 == 0:
            _solver_sweep(pn, p, b, h, rowmax)
        else:
            _solver_sweep(p, pn, b, h, rowmax)
        res = _max_nan(rowmax)
        it += 1
    if it % 2 == 1:
        _copy(p, pn)
    return res, it


def run_solver(ns: dict) -> None:
    res, it = pick(_solver, ns["p"].size)(ns["p"], ns["b"], ns["h"], ns["maxit"], ns["tol"])
    ns["res"], ns["it"] = float(res), int(it)


# --- conv --------------------------------------------------------------------------------------
# `img = out / w.sum()` rebinds img to a new array each pass and leaves the input untouched:
# passes alternate between two new buffers. The 9 products are summed in the cell's order.

@kernel
def _conv_pass(dst: np.ndarray, src: np.ndarray, w: np.ndarray, wsum: float) -> None:
    ny, nx = src.shape
    edge = 0.0 / wsum  # the cell's zero boundary divided by w.sum() (NaN if that is 0)
    for i in prange(ny):
        if i == 0 or i == ny - 1:
            for j in range(nx):
                dst[i, j] = edge
        else:
            dst[i, 0] = edge
            dst[i, nx - 1] = edge
            for j in range(1, nx - 1):
                acc = 0.0
                for di in range(-1, 2):
                    for dj in range(-1, 2):
                        acc += w[di + 1, dj + 1] * src[i + di, j + dj]
                dst[i, j] = acc / wsum


@loop
def _conv(img: np.ndarray, w: np.ndarray, wsum: float, passes: int) -> np.ndarray:
    a, b = np.empty_like(img), np.empty_like(img)
    _conv_pass(a, img, w, wsum)
    for k in range(1, passes):
        if k % 2 == 1:
            _conv_pass(b, a, w, wsum)
        else:
            _conv_pass(a, b, w, wsum)
    return a if passes % 2 == 1 else b


def run_conv(ns: dict) -> None:
    img = ns["img"]
    assert img.shape == (ns["n"], ns["n"])
    if ns["passes"] > 0:  # no pass: the cell leaves img bound to the input
        wsum = float(ns["w"].sum())  # by NumPy, in its (pairwise) summation order
        ns["img"] = pick(_conv, 9 * img.size)(img, ns["w"], wsum, ns["passes"])


# --- nbody -------------------------------------------------------------------------------------
# All-pairs forces, parallel over bodies i (each writes only vel[i]); positions move in a
# second parallel loop once every force has read the old positions. The sum over j runs in
# order j = 0..n-1 while NumPy's `@` (BLAS) sums in its own blocked order, and `r2 ** -1.5` is
# written 1 / (r2 * sqrt(r2)), as one writes it by hand (a pow costs ~25 ns, this ~5 ns): the
# results differ from NumPy's in the last bits, far inside the benchmark's tolerance.

@kernel
def _nbody_kick(pos: np.ndarray, vel: np.ndarray, mass: np.ndarray, dt: float, eps: float) -> None:
    n = pos.shape[0]
    for i in prange(n):
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = ay = az = 0.0
        for j in range(n):
            dx, dy, dz = pos[j, 0] - xi, pos[j, 1] - yi, pos[j, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + eps
            inv = 1.0 / (r2 * math.sqrt(r2))
            ax += dt * (dx * inv) * mass[j]
            ay += dt * (dy * inv) * mass[j]
            az += dt * (dz * inv) * mass[j]
        vel[i, 0] += ax
        vel[i, 1] += ay
        vel[i, 2] += az


@kernel
def _nbody_drift(pos: np.ndarray, vel: np.ndarray, dt: float) -> None:
    for i in range(pos.shape[0]):  # O(n) next to the kick's O(n^2): not worth waking threads
        for k in range(3):
            pos[i, k] += dt * vel[i, k]


@loop
def _nbody(pos: np.ndarray, vel: np.ndarray, mass: np.ndarray, steps: int, dt: float,
           eps: float) -> None:
    for step in range(steps):
        _nbody_kick(pos, vel, mass, dt, eps)
        _nbody_drift(pos, vel, dt)


def run_nbody(ns: dict) -> None:
    n = ns["pos"].shape[0]
    run = pick(_nbody, 10 * n * n)  # a pair costs a sqrt and a divide: some 10 simple updates
    run(ns["pos"], ns["vel"], ns["mass"], ns["steps"], ns["dt"], ns["eps"])


# --- scalar ------------------------------------------------------------------------------------
# Elementwise, so the loops interchange: parallel over blocks of elements, each block carried
# through all the steps while it sits in L1 (one pass over memory instead of `steps`), the
# elements of a block independent so the inner loop vectorizes (one element at a time would be
# a chain of dependent multiply-adds, ~10x slower). The per-step coefficient is formed once, as
# Python forms it. x is rebound to a new array, as `x = x * ... + 0.01` does.

SCALAR_BLOCK = 512  # elements: 4 KiB


@loop
def _scalar(x: np.ndarray, steps: int) -> np.ndarray:
    coef = np.empty(steps)
    for i in range(steps):
        coef[i] = 1.0 - 1.0 / (i + 2)
    out = x.copy()
    for blk in prange((out.size + SCALAR_BLOCK - 1) // SCALAR_BLOCK):
        o = out[blk * SCALAR_BLOCK: min((blk + 1) * SCALAR_BLOCK, out.size)]
        for i in range(steps):
            c = coef[i]
            for k in range(o.size):
                o[k] = o[k] * c + 0.01
    return out


def run_scalar(ns: dict) -> None:
    if ns["steps"] > 0:  # no step: the cell leaves x bound to the input
        run = pick(_scalar, ns["x"].size * ns["steps"])  # one parallel loop does all the steps
        ns["x"] = run(ns["x"], ns["steps"])


# --- mandelbrot --------------------------------------------------------------------------------
# Points are independent, so each runs all its iterations in registers (no array per step). The
# product and the magnitude are written as NumPy computes them on this machine (fused multiply-adds,
# its own scaled magnitude: jupyter_fuse/backends/cpu_complex.py, whose ``fma`` this borrows), else
# points near |z| = 2 would escape a step apart from NumPy's.
from jupyter_fuse.backends.cpu_complex import HELPERS, fma  # noqa: E402

_helpers: dict = {"np": np, "njit": lambda **kw: numba.njit(**{**kw, "cache": False}), "fma": fma}
exec(HELPERS["cabs"], _helpers)  # noqa: S102 - NumPy's magnitude, as the fused kernels write it
_cabs = _helpers["cabs"]


@loop
def _mandelbrot(x: np.ndarray, y: np.ndarray, iters: int, z: np.ndarray, count: np.ndarray) -> None:
    for i in prange(y.size):
        ci = y[i]
        for j in range(x.size):
            cr = x[j] + fma(0.0, ci, -0.0)  # (1j * y, then + x, as NumPy forms c: the signed zeros too)
            zr, zi, n = 0.0, 0.0, 0
            for k in range(iters):
                zr, zi = fma(zr, zr, -(zi * zi)) + cr, fma(zr, zi, zi * zr) + ci
                if _cabs(complex(zr, zi)) <= 2.0:
                    n += 1
                else:
                    zr, zi = 2.0, 0.0
            z[i, j] = complex(zr, zi)
            count[i, j] = n


def run_mandelbrot(ns: dict) -> None:
    x, y = ns["x"], ns["y"]
    z, count = np.zeros((y.size, x.size), np.complex128), np.zeros((y.size, x.size), np.int64)
    pick(_mandelbrot, x.size * y.size * ns["iters"])(x, y, ns["iters"], z, count)
    ns.update(z=z, count=count)  # (the outputs bench/loops.py compares)


HAND: dict[str, Callable[[dict], None]] = {
    "heat1d": run_heat1d,
    "jacobi1d": run_jacobi1d,
    "heat2d": run_heat2d,
    "cavity": run_cavity,
    "adi": run_adi,
    "solver": run_solver,
    "conv": run_conv,
    "nbody": run_nbody,
    "scalar": run_scalar,
    "mandelbrot": run_mandelbrot,
}


if __name__ == "__main__":
    import os
    import sys
    import time

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from programs import PROGRAMS, BY_NAME, Program  # noqa: F401  (BY_NAME: for interactive use)

    REPEAT = 3
    SIZES = ("tiny", "small", "large")

    def run_once(fn: Callable[[dict], None], ns: dict) -> float:
        t0 = time.perf_counter()
        fn(ns)
        return time.perf_counter() - t0

    def timed(fn: Callable[[dict], None], setup: Callable[[], dict]) -> tuple[float, dict, dict]:
        """Best-of-REPEAT milliseconds (setup excluded), the last namespace and its inputs."""
        best, ns, before = math.inf, {}, {}
        for _ in range(REPEAT):
            ns = setup()
            before = dict(ns)
            best = min(best, run_once(fn, ns))
        return best * 1e3, ns, before

    def same(name: str, ref: dict, ref_in: dict, got: dict, got_in: dict) -> str:
        """'yes', or what differs: Python type, dtype, values, or in place versus rebound."""
        a, b = ref[name], got[name]
        if type(a) is not type(b):
            return f"{name}: type {type(a).__name__} != {type(b).__name__}"
        if np.asarray(a).dtype != np.asarray(b).dtype:
            return f"{name}: dtype {np.asarray(a).dtype} != {np.asarray(b).dtype}"
        if np.shape(a) != np.shape(b) or not np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True):
            return f"{name}: values"
        if (a is ref_in.get(name)) != (b is got_in.get(name)):
            return f"{name}: in place versus rebound"
        return "yes"

    def numpy_run(p: Program) -> Callable[[dict], None]:
        return lambda ns: exec(p.source, ns)

    rows = [("program", "size", "numpy ms", "hand ms", "speedup", "same")]
    ok = True
    for p in PROGRAMS:
        for size in SIZES:
            def setup(p=p, size=size) -> dict:
                return p.setup(p.sizes[size])

            np_ms, ref, ref_in = timed(numpy_run(p), setup)
            run_once(HAND[p.name], setup())  # compile (once per signature) and warm up
            hand_ms, got, got_in = timed(HAND[p.name], setup)
            bad = [v for v in (same(o, ref, ref_in, got, got_in) for o in p.outputs) if v != "yes"]
            ok &= not bad
            rows.append((p.name, size, f"{np_ms:.3f}", f"{hand_ms:.3f}", f"{np_ms / hand_ms:.1f}x",
                         "; ".join(bad) or "yes"))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.rjust(w) if 2 <= k <= 4 else c.ljust(w)
                        for k, (c, w) in enumerate(zip(r, widths))))
    print(f"numba {numba.__version__}, numpy {np.__version__}, {numba.get_num_threads()} threads "
          f"({numba.threading_layer()}); serial twins below {PAR_MIN} updates per parallel loop")
    sys.exit(0 if ok else 1)
