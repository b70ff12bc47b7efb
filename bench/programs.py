"""Loop programs written the way NumPy users write them: the realistic workload of bench/loops.py.

Each program is a cell (source text) and a setup that builds its namespace at a size. They are
what notebooks bring to ``%%fuse``: time-stepping loops over slices, helper functions defined in
the cell that mutate their arguments, boundary rows set every step, inner iterations, a
``float()`` of a residual every step, many small arrays. ``tests/unit/test_programs.py`` runs
each at a tiny size against NumPy; ``bench/loops.py`` times them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Program:
    name: str
    source: str
    setup: Callable[[dict], dict]  # size parameters -> a fresh namespace
    sizes: dict[str, dict]  # "tiny" (tests), "small" (NumPy under ~20 ms), "large"
    outputs: tuple[str, ...]  # names whose values are compared with NumPy's
    steers: bool = False  # Python reads a value (a residual) that changes as the state evolves


def _rng() -> np.random.Generator:
    return np.random.default_rng(1234)


# 1-D diffusion, as in the "12 steps to Navier-Stokes" course: copy, then a slice update
HEAT1D = """\
for n in range(nt):
    un = u.copy()
    u[1:-1] = un[1:-1] + nu * dt / dx**2 * (un[2:] - 2 * un[1:-1] + un[:-2])
"""


def _heat1d(nx: int, nt: int) -> dict:
    u = np.ones(nx)
    u[nx // 4: nx // 2] = 2.0
    return {"np": np, "u": u, "nt": nt, "nu": 0.3, "dx": 2.0 / (nx - 1), "dt": 0.2 * (2.0 / (nx - 1)) ** 2 / 0.3}


# 1-D Jacobi with two buffers swapping roles
JACOBI1D = """\
for t in range(steps):
    B[1:-1] = 0.33 * (A[:-2] + A[1:-1] + A[2:])
    A[1:-1] = 0.33 * (B[:-2] + B[1:-1] + B[2:])
"""


def _jacobi1d(n: int, steps: int) -> dict:
    a = _rng().random(n)
    return {"np": np, "A": a, "B": a.copy(), "steps": steps}


# 2-D diffusion with the boundary set every step
HEAT2D = """\
for n in range(nt):
    un = u.copy()
    u[1:-1, 1:-1] = (un[1:-1, 1:-1]
                     + nu * dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                     + nu * dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1]))
    u[0, :] = 1
    u[-1, :] = 1
    u[:, 0] = 1
    u[:, -1] = 1
"""


def _heat2d(n: int, nt: int) -> dict:
    u = np.ones((n, n))
    u[n // 4: n // 2, n // 4: n // 2] = 2.0
    dx = 2.0 / (n - 1)
    return {"np": np, "u": u, "nt": nt, "nu": 0.05, "dx": dx, "dy": dx, "dt": 0.2 * dx * dx / 0.05}


# lid-driven cavity flow (step 11 of the course), helpers that mutate their arguments
CAVITY = """\
def build_up_b(b, rho, dt, u, v, dx, dy):
    b[1:-1, 1:-1] = (rho * (1 / dt *
                    ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) -
                    ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx))**2 -
                    2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx)) -
                    ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))**2))
    return b

def pressure_poisson(p, dx, dy, b):
    pn = np.empty_like(p)
    for q in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) /
                         (2 * (dx**2 + dy**2)) -
                         dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1])
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0
    return p

def cavity_flow(nt, u, v, dt, dx, dy, p, rho, nu):
    un = np.empty_like(u)
    vn = np.empty_like(v)
    b = np.zeros((ny, nx))
    for n in range(nt):
        un = u.copy()
        vn = v.copy()
        b = build_up_b(b, rho, dt, u, v, dx, dy)
        p = pressure_poisson(p, dx, dy, b)
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] -
                         un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2]) -
                         vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1]) -
                         dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2]) +
                         nu * (dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2]) +
                               dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] -
                         un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2]) -
                         vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1]) -
                         dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1]) +
                         nu * (dt / dx**2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2]) +
                               dt / dy**2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0
    return u, v, p

u, v, p = cavity_flow(nt, u, v, dt, dx, dy, p, rho, nu)
"""


def _cavity(n: int, nt: int, nit: int = 50) -> dict:
    return {"np": np, "nx": n, "ny": n, "nt": nt, "nit": nit, "dx": 2.0 / (n - 1), "dy": 2.0 / (n - 1),
            "rho": 1.0, "nu": 0.1, "dt": 0.001, "u": np.zeros((n, n)), "v": np.zeros((n, n)),
            "p": np.zeros((n, n))}


# alternating-direction sweeps: a recurrence along rows, then along columns
ADI = """\
for s in range(steps):
    for i in range(1, n):
        u[i, :] = u[i, :] - a * u[i - 1, :]
    for j in range(1, n):
        u[:, j] = u[:, j] - a * u[:, j - 1]
    u *= scale
"""


def _adi(n: int, steps: int) -> dict:
    return {"np": np, "u": _rng().random((n, n)), "n": n, "steps": steps, "a": 0.3, "scale": 0.9}


# Jacobi for a Poisson problem, stopping on the residual read back every iteration
SOLVER = """\
it = 0
res = 1.0
while it < maxit and res > tol:
    pn = p.copy()
    p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1] - b[1:-1, 1:-1] * h * h)
    res = float(np.abs(p - pn).max())
    it += 1
"""


def _solver(n: int, maxit: int) -> dict:
    b = np.zeros((n, n))
    b[n // 4, n // 4], b[3 * n // 4, 3 * n // 4] = 100.0, -100.0
    return {"np": np, "p": np.zeros((n, n)), "b": b, "h": 1.0 / (n - 1), "maxit": maxit, "tol": 1e-12}


# a 3x3 convolution as nested loops over small shifted windows, a few passes
CONV = """\
for k in range(passes):
    out = np.zeros_like(img)
    for di in range(-1, 2):
        for dj in range(-1, 2):
            out[1:-1, 1:-1] += w[di + 1, dj + 1] * img[1 + di:n - 1 + di, 1 + dj:n - 1 + dj]
    img = out / w.sum()
"""


def _conv(n: int, passes: int) -> dict:
    return {"np": np, "img": _rng().random((n, n)), "n": n, "passes": passes,
            "w": np.array([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]])}


# n-body time stepping: pairwise forces by broadcasting, in-place velocity and position updates
NBODY = """\
for step in range(steps):
    dx = pos[:, 0][None, :] - pos[:, 0][:, None]
    dy = pos[:, 1][None, :] - pos[:, 1][:, None]
    dz = pos[:, 2][None, :] - pos[:, 2][:, None]
    inv = (dx**2 + dy**2 + dz**2 + eps) ** -1.5
    vel[:, 0] += dt * (dx * inv) @ mass
    vel[:, 1] += dt * (dy * inv) @ mass
    vel[:, 2] += dt * (dz * inv) @ mass
    pos += dt * vel
"""


def _nbody(n: int, steps: int) -> dict:
    r = _rng()
    return {"np": np, "pos": r.random((n, 3)), "vel": np.zeros((n, 3)), "mass": r.random(n) / n,
            "steps": steps, "dt": 0.001, "eps": 0.01}


# a long loop of updates with a coefficient that changes every step
SCALAR = """\
for i in range(steps):
    x = x * (1.0 - 1.0 / (i + 2)) + 0.01
"""


def _scalar(n: int, steps: int) -> dict:
    return {"np": np, "x": np.linspace(0.0, 1.0, n).copy(), "steps": steps}  # (linspace gives a view)


# Gauss-Seidel sweeps one element at a time, as a numerical-methods course writes them first: each
# update reads the neighbours just updated, and Python keeps the largest change (a read of each value)
GAUSS_SEIDEL = """\
sweeps = 0
change = 1.0
while change > tol and sweeps < max_sweeps:
    change = 0.0
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            new = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - h * h * f[i, j])
            change = max(change, abs(new - u[i, j]))
            u[i, j] = new
    sweeps += 1
"""


def _gauss_seidel(n: int, max_sweeps: int) -> dict:
    y, x = np.mgrid[0:n, 0:n] / (n - 1)
    f = -10.0 * np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.02)
    u = np.zeros((n, n))
    u[0, :] = 1.0
    return {"np": np, "u": u, "f": f, "n": n, "h": 1.0 / (n - 1), "tol": 1e-8, "max_sweeps": max_sweeps}


# escape-time Mandelbrot on complex arrays, every point iterated (escaped ones parked at 2)
MANDELBROT = """\
c = x[None, :] + 1j * y[:, None]
z = np.zeros_like(c)
count = np.zeros(c.shape, dtype=np.int64)
for k in range(iters):
    z = z * z + c
    inside = np.abs(z) <= 2.0
    count += inside
    z = np.where(inside, z, 2.0)
"""


def _mandelbrot(n: int, iters: int) -> dict:
    return {"np": np, "x": np.linspace(-2.0, 1.0, n).copy(), "y": np.linspace(-1.5, 1.5, n).copy(),  # (views: see _scalar)
            "iters": iters}


# implicit heat steps, each a tridiagonal solve (the Thomas algorithm) written element by element as a
# numerical-methods course writes it: a forward sweep and a back substitution, each reading the element
# the last iteration wrote
THOMAS = """\
for step in range(nsteps):
    d = u.copy()
    cp[0] = c / b
    dp[0] = d[0] / b
    for i in range(1, n):
        m = b - a * cp[i - 1]
        cp[i] = c / m
        dp[i] = (d[i] - a * dp[i - 1]) / m
    u[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        u[i] = dp[i] - cp[i] * u[i + 1]
"""


def _thomas(n: int, nsteps: int) -> dict:
    r = 0.4  # (dt / dx**2 of the implicit scheme: -r u[i-1] + (1 + 2r) u[i] - r u[i+1] = d[i])
    return {"np": np, "u": np.sin(np.linspace(0.0, np.pi, n)) + 0.1 * _rng().random(n), "cp": np.zeros(n),
            "dp": np.zeros(n), "n": n, "nsteps": nsteps, "a": -r, "b": 1.0 + 2.0 * r, "c": -r}


# 1-D advection-diffusion as a course notebook runs it: every few steps the state is kept for a plot and
# its mass read back as a float (a checkpoint: ``if n % every == 0``, jupyter_fuse/loops.py runs ahead between)
SNAPSHOTS = """\
mass, snaps = [], []
for n in range(nt):
    un = u.copy()
    u[1:-1] = un[1:-1] - c * (un[1:-1] - un[:-2]) + nu * (un[2:] - 2 * un[1:-1] + un[:-2])
    if n % every == 0:
        mass.append(float(u.sum() * dx))
        snaps.append(u.copy())
"""


def _snapshots(nx: int, nt: int, every: int) -> dict:
    u = np.ones(nx)
    u[nx // 10: nx // 5] = 2.0
    return {"np": np, "u": u, "nt": nt, "every": every, "c": 0.4, "nu": 0.2, "dx": 1.0 / (nx - 1)}


PROGRAMS = [
    Program("heat1d", HEAT1D, lambda s: _heat1d(**s),
            {"tiny": dict(nx=50, nt=20), "small": dict(nx=1000, nt=500), "large": dict(nx=2_000_000, nt=20)},
            ("u",)),
    Program("jacobi1d", JACOBI1D, lambda s: _jacobi1d(**s),
            {"tiny": dict(n=40, steps=10), "small": dict(n=1000, steps=500), "large": dict(n=2_000_000, steps=10)},
            ("A", "B")),
    Program("heat2d", HEAT2D, lambda s: _heat2d(**s),
            {"tiny": dict(n=12, nt=5), "small": dict(n=64, nt=200), "large": dict(n=1024, nt=20)}, ("u",)),
    Program("cavity", CAVITY, lambda s: _cavity(**s),
            {"tiny": dict(n=9, nt=3, nit=5), "small": dict(n=41, nt=10, nit=50),
             "large": dict(n=401, nt=5, nit=50)}, ("u", "v", "p")),
    Program("adi", ADI, lambda s: _adi(**s),
            {"tiny": dict(n=8, steps=2), "small": dict(n=64, steps=5), "large": dict(n=1024, steps=2)}, ("u",)),
    Program("solver", SOLVER, lambda s: _solver(**s),
            {"tiny": dict(n=10, maxit=10), "small": dict(n=64, maxit=300), "large": dict(n=1024, maxit=30)},
            ("p", "res", "it"), steers=True),
    Program("conv", CONV, lambda s: _conv(**s),
            {"tiny": dict(n=10, passes=2), "small": dict(n=128, passes=20), "large": dict(n=2048, passes=4)},
            ("img",)),
    Program("nbody", NBODY, lambda s: _nbody(**s),
            {"tiny": dict(n=8, steps=3), "small": dict(n=64, steps=100), "large": dict(n=1500, steps=5)},
            ("pos", "vel")),
    Program("scalar", SCALAR, lambda s: _scalar(**s),
            {"tiny": dict(n=16, steps=50), "small": dict(n=1000, steps=2000), "large": dict(n=2_000_000, steps=50)},
            ("x",)),
    Program("gauss_seidel", GAUSS_SEIDEL, lambda s: _gauss_seidel(**s),
            {"tiny": dict(n=5, max_sweeps=3), "small": dict(n=12, max_sweeps=20), "large": dict(n=40, max_sweeps=20)},
            ("u", "sweeps", "change"), steers=True),
    Program("thomas", THOMAS, lambda s: _thomas(**s),
            {"tiny": dict(n=20, nsteps=2), "small": dict(n=300, nsteps=4), "large": dict(n=20000, nsteps=2)},
            ("u", "cp", "dp")),
    Program("snapshots", SNAPSHOTS, lambda s: _snapshots(**s),
            {"tiny": dict(nx=50, nt=30, every=10), "small": dict(nx=1000, nt=500, every=25),
             "large": dict(nx=2_000_000, nt=20, every=5)}, ("u", "mass", "snaps"), steers=True),
    Program("mandelbrot", MANDELBROT, lambda s: _mandelbrot(**s),
            {"tiny": dict(n=12, iters=6), "small": dict(n=200, iters=30), "large": dict(n=1000, iters=20)},
            ("z", "count")),
]

BY_NAME = {p.name: p for p in PROGRAMS}
