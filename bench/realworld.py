"""Real-world notebook programs under %%fuse: replayed on the second run? same as NumPy? how fast?

    JUPYTER_FUSE_CACHE_DIR=/tmp/rw_cache .venv/bin/python bench/realworld.py [--backend cpu|numpy] [--only NAME,...]

bench/programs.py holds loop programs written for the loop benchmark; these are cells as other people
write them in notebooks and course material: helpers defined in the cell (def, lambda, a class),
``import numpy as np`` / ``import math`` in the cell, convergence tests on a ``float()`` of a
residual, in-place updates, ``np.roll`` stencils, masks, fancy indexing, matmul, random draws inside
loops, lists of Python floats, f-string prints. Each is a cell source and a setup that builds its
inputs (seeded) at a size where plain NumPy takes about 1-20 ms.

For each program:

1. the cell runs under plain ``exec`` on a copy of the setup namespace, three times (best time;
   the first run's namespace and printed text are the reference);
2. it runs under ``run_cell`` three times, each on a fresh copy of the namespace: the first run
   traces (and, with the cpu backend, compiles kernels unless JUPYTER_FUSE_CACHE_DIR has them), the
   second should replay the recorded plan (``report.cache == "hit"``), the third is a replay with
   everything warm;
3. every name the cell leaves (arrays, scalars, lists, objects of a class defined in the cell, random
   generators) and the printed text are compared with NumPy's: same Python type, same dtype and
   shape, floats within rtol 1e-9 (atol 1e-12), everything else exact.

Each program runs in a process of its own (``--in-process``: all in this one), killed after
``--hard-timeout`` seconds; the kernel cache on disk (JUPYTER_FUSE_CACHE_DIR) is shared by them.
After each run the script waits for numba's background compiles (``backends/compiler.py``: small
kernels and replay programs compile between cells, while the user reads), so no compile runs while
the next run or NumPy is timed; "bg compile s" is the total of those waits. ``--timeout`` bounds
each run and each wait (SIGALRM; a run past it is reported as an error).

The table: numpy ms (best of 3), first ms, bg compile s, 2nd ms (the first replay), 3rd ms,
3rd / numpy, 4th ms (a replay right after the 3rd, as NumPy's three runs follow each other: the 3rd
follows seconds of background compiles, after which OpenBLAS's threads sleep; or a plain NumPy run: the
one run a settled replay is timed as plain NumPy, or the cell was found not to pay for fusion:
runner.PLAIN_MIN, said in the details), 6th ms (settled: the replay, or plain NumPy where that was faster;
" numpy" then; the 5th times NumPy once more where the 4th was a close call), replayed (the second run's cache state), same as NumPy (all runs), why not replayed (the second run's miss reasons), error. Details follow the table: the first run's summary,
the miss reasons, every difference from NumPy, and for an exception (or a failed replay) the
exception with its last frames inside jupyter_fuse (re-run with JUPYTER_FUSE_DEBUG=1).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import io
import json
import math
import os
import signal
import subprocess
import sys
import time
import traceback
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

os.environ.setdefault("JUPYTER_FUSE_CACHE_DIR", "/tmp/rw_cache")  # the cpu backend's compiled kernels


@dataclass(frozen=True)
class Program:
    name: str
    source: str
    setup: Callable[..., dict]  # size parameters -> a fresh namespace
    sizes: dict[str, dict]  # "tiny" (a smoke run), "small" (NumPy ~1-20 ms)


def _rng(seed: int = 2024) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- the programs ---------------------------------------------------------------------------------

# logistic regression by batch gradient descent (an ML course's first exercise)
LOGREG = """\
def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))

w = np.zeros(X.shape[1])
b = 0.0
losses = []
for epoch in range(epochs):
    p = sigmoid(X @ w + b)
    grad_w = X.T @ (p - y) / len(y)
    grad_b = np.mean(p - y)
    w -= lr * grad_w
    b -= lr * grad_b
    if epoch % 10 == 0:
        loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        losses.append(float(loss))
acc = np.mean((sigmoid(X @ w + b) > 0.5) == y)
print(f"final loss {losses[-1]:.4f}, accuracy {acc:.3f}")
"""


def _logreg(n: int, d: int, epochs: int) -> dict:
    r = _rng()
    X = r.normal(size=(n, d))
    true_w = r.normal(size=d)
    y = (X @ true_w + 0.5 * r.normal(size=n) > 0).astype(float)
    return {"np": np, "X": X, "y": y, "lr": 0.5, "epochs": epochs}


# power iteration for the dominant eigenvalue, stopping on the change of the estimate
POWER = """\
import numpy as np

v = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
lam = 0.0
for it in range(maxit):
    w = A @ v
    lam_new = v @ w
    v = w / np.linalg.norm(w)
    if abs(lam_new - lam) < tol * abs(lam_new):
        break
    lam = lam_new
print(f"dominant eigenvalue {lam_new:.6f} after {it + 1} iterations")
"""


def _power(n: int, maxit: int) -> dict:
    M = _rng().normal(size=(n, n))
    return {"A": M @ M.T / n, "maxit": maxit, "tol": 1e-10}


# k-means: distances by broadcasting, argmin, centroids as means of boolean-masked rows
KMEANS = """\
rng = np.random.default_rng(42)
centroids = X[rng.choice(len(X), k, replace=False)]
for it in range(iters):
    d = np.linalg.norm(X[:, None, :] - centroids[None, :, :], axis=2)
    labels = np.argmin(d, axis=1)
    new = np.array([X[labels == j].mean(axis=0) for j in range(k)])
    shift = np.linalg.norm(new - centroids)
    centroids = new
    if shift < 1e-8:
        break
inertia = ((X - centroids[labels]) ** 2).sum()
sizes = np.bincount(labels, minlength=k)
print(f"k-means converged after {it + 1} iterations, inertia {inertia:.3f}")
"""


def _kmeans(n: int, k: int, iters: int) -> dict:
    r = _rng()
    centers = r.normal(scale=5.0, size=(k, 2))
    X = np.concatenate([c + r.normal(size=(n // k, 2)) for c in centers])
    return {"np": np, "X": X, "k": k, "iters": iters}


# a two-layer MLP trained by full-batch gradient descent, forward and backward written out
MLP = """\
def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)

rng = np.random.default_rng(0)
W1 = rng.normal(0, 0.1, (X.shape[1], hidden))
b1 = np.zeros(hidden)
W2 = rng.normal(0, 0.1, (hidden, n_classes))
b2 = np.zeros(n_classes)
Y = np.eye(n_classes)[y]
history = []
for epoch in range(epochs):
    h = np.tanh(X @ W1 + b1)
    probs = softmax(h @ W2 + b2)
    loss = -np.sum(Y * np.log(probs + 1e-9)) / len(X)
    history.append(float(loss))
    dz2 = (probs - Y) / len(X)
    dW2 = h.T @ dz2
    db2 = dz2.sum(axis=0)
    dh = dz2 @ W2.T * (1 - h ** 2)
    dW1 = X.T @ dh
    db1 = dh.sum(axis=0)
    W1 -= lr * dW1
    b1 -= lr * db1
    W2 -= lr * dW2
    b2 -= lr * db2
pred = probs.argmax(axis=1)
acc = (pred == y).mean()
print(f"epoch {epochs}: loss {history[-1]:.4f} acc {acc:.2%}")
"""


def _mlp(n: int, d: int, hidden: int, epochs: int) -> dict:
    r = _rng()
    X = r.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1).astype(np.int64)
    return {"np": np, "X": X, "y": y, "hidden": hidden, "n_classes": 3, "lr": 0.5, "epochs": epochs}


# Monte Carlo pi with the legacy global generator seeded in the cell
MCPI = """\
np.random.seed(0)
inside = 0
total = 0
estimates = []
for batch in range(n_batches):
    pts = np.random.rand(batch_size, 2)
    inside += np.count_nonzero((pts ** 2).sum(axis=1) <= 1.0)
    total += batch_size
    estimates.append(4 * inside / total)
pi_est = 4 * inside / total
print("pi ~", pi_est, "error", abs(pi_est - np.pi))
"""


def _mcpi(n_batches: int, batch_size: int) -> dict:
    return {"np": np, "n_batches": n_batches, "batch_size": batch_size}


# random walks: a Generator made in the cell, cumsum, statistics over walkers
WALK = """\
rng = np.random.default_rng(0)
steps = rng.choice([-1, 1], size=(n_walkers, n_steps))
paths = np.cumsum(steps, axis=1)
final = paths[:, -1]
msd = np.mean(paths.astype(float) ** 2, axis=0)
max_dist = np.abs(paths).max(axis=1)
returned = np.any(paths == 0, axis=1)
frac_returned = returned.mean()
slope = np.polyfit(np.arange(1, n_steps + 1), msd, 1)[0]
print(f"mean final {final.mean():.3f}, std {final.std():.3f}, returned {frac_returned:.1%}, D~{slope / 2:.3f}")
"""


def _walk(n_walkers: int, n_steps: int) -> dict:
    return {"np": np, "n_walkers": n_walkers, "n_steps": n_steps}


# Conway's game of life with np.roll, the neighbour count by sum() over a generator
LIFE = """\
def life_step(grid):
    n = sum(np.roll(np.roll(grid, i, 0), j, 1)
            for i in (-1, 0, 1) for j in (-1, 0, 1) if (i != 0 or j != 0))
    return (n == 3) | (grid & (n == 2))

alive = []
for gen in range(generations):
    board = life_step(board)
    alive.append(int(board.sum()))
print(f"{alive[-1]} cells alive after {generations} generations")
"""


def _life(n: int, generations: int) -> dict:
    return {"np": np, "board": _rng().random((n, n)) < 0.3, "generations": generations}


# 2-D wave equation, periodic boundaries with np.roll, leapfrog with tuple swap
WAVE = """\
c2 = (c * dt / dx) ** 2
u_prev = u.copy()
for n in range(nt):
    lap = (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0)
           + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4 * u)
    u_new = 2 * u - u_prev + c2 * lap
    u_prev, u = u, u_new
energy = 0.5 * np.sum(((u - u_prev) / dt) ** 2) * dx * dx
print(f"energy {energy:.6e}, max amplitude {np.abs(u).max():.4f}")
"""


def _wave(n: int, nt: int) -> dict:
    x = np.linspace(-1, 1, n)
    X, Y = np.meshgrid(x, x)
    return {"np": np, "u": np.exp(-40 * (X ** 2 + Y ** 2)), "c": 1.0, "dx": x[1] - x[0],
            "dt": 0.4 * (x[1] - x[0]), "nt": nt}


# Mandelbrot escape times: complex arithmetic on a boolean-masked subset
MANDEL = """\
x = np.linspace(xmin, xmax, width)
y = np.linspace(ymin, ymax, height)
C = x[None, :] + 1j * y[:, None]
Z = np.zeros_like(C)
counts = np.zeros(C.shape, dtype=int)
mask = np.ones(C.shape, dtype=bool)
for i in range(max_iter):
    Z[mask] = Z[mask] ** 2 + C[mask]
    escaped = np.abs(Z) > 2
    counts[mask & escaped] = i
    mask &= ~escaped
print(f"{mask.sum()} of {mask.size} points did not escape")
"""


def _mandel(width: int, height: int, max_iter: int) -> dict:
    return {"np": np, "xmin": -2.0, "xmax": 0.6, "ymin": -1.2, "ymax": 1.2, "width": width, "height": height,
            "max_iter": max_iter}


# successive over-relaxation, row by row, stopping on the relative change
SOR = """\
omega = 1.7
history = []
for it in range(maxit):
    u_old = u.copy()
    for i in range(1, n - 1):
        u[i, 1:-1] = (1 - omega) * u[i, 1:-1] + omega * 0.25 * (
            u[i - 1, 1:-1] + u_old[i + 1, 1:-1] + u_old[i, 2:] + u_old[i, :-2] - h * h * f[i, 1:-1])
    err = np.linalg.norm(u - u_old) / np.linalg.norm(u)
    history.append(err)
    if err < tol:
        break
print(f"SOR: {it + 1} sweeps, last change {err:.2e}")
"""


def _sor(n: int, maxit: int) -> dict:
    x = np.linspace(0, 1, n)
    f = -2 * np.pi ** 2 * np.outer(np.sin(np.pi * x), np.sin(np.pi * x))
    return {"np": np, "u": np.zeros((n, n)), "f": f, "n": n, "h": 1.0 / (n - 1), "maxit": maxit, "tol": 1e-6}


# Lotka-Volterra by forward Euler, vectorized over many initial conditions, tuple unpacking
LOTKA = """\
def rhs(x, y):
    return alpha * x - beta * x * y, delta * x * y - gamma * y

x, y = x0.copy(), y0.copy()
snapshots = [np.stack([x, y])]
for k in range(nsteps):
    dxdt, dydt = rhs(x, y)
    x, y = x + dt * dxdt, y + dt * dydt
    if (k + 1) % 100 == 0:
        snapshots.append(np.stack([x, y]))
traj = np.stack(snapshots)
peak_prey = traj[:, 0, :].max(axis=0)
print(f"max prey population {peak_prey.max():.2f}")
"""


def _lotka(m: int, nsteps: int) -> dict:
    r = _rng()
    return {"np": np, "x0": r.uniform(5, 15, m), "y0": r.uniform(2, 8, m), "alpha": 1.1, "beta": 0.4,
            "delta": 0.1, "gamma": 0.4, "dt": 0.01, "nsteps": nsteps}


# softmax cross-entropy with log-sum-exp, its gradient by fancy-indexed subtraction, top-5 accuracy
XENT = """\
logits = X @ W + b
m = logits.max(axis=1, keepdims=True)
log_probs = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
nll = -log_probs[np.arange(len(y)), y]
loss = nll.mean()
probs = np.exp(log_probs)
grad = probs.copy()
grad[np.arange(len(y)), y] -= 1
grad /= len(y)
dW = X.T @ grad
db = grad.sum(axis=0)
top5 = np.argsort(-logits, axis=1)[:, :5]
top5_acc = np.mean(np.any(top5 == y[:, None], axis=1))
print(f"loss={loss:.4f} top5={top5_acc:.3f} |dW|={np.linalg.norm(dW):.4f}")
"""


def _xent(n: int, d: int, c: int) -> dict:
    r = _rng()
    return {"np": np, "X": r.normal(size=(n, d)), "W": r.normal(scale=0.1, size=(d, c)), "b": np.zeros(c),
            "y": r.integers(0, c, n)}


# box blur by slicing a padded image, then a gradient-magnitude edge map as uint8
BLUR = """\
img = image.astype(np.float64) / 255.0
for _ in range(passes):
    p = np.pad(img, 1, mode="edge")
    img = (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:]
           + p[1:-1, :-2] + p[1:-1, 1:-1] + p[1:-1, 2:]
           + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]) / 9.0
gx = img[1:-1, 2:] - img[1:-1, :-2]
gy = img[2:, 1:-1] - img[:-2, 1:-1]
edges = np.hypot(gx, gy)
edges = np.clip(edges / edges.max(), 0, 1)
out = (edges * 255).astype(np.uint8)
"""


def _blur(n: int, passes: int) -> dict:
    return {"np": np, "image": _rng().integers(0, 256, (n, n), dtype=np.uint8), "passes": passes}


# bouncing particles: a class defined in the cell with in-place updates through masks
PARTICLES = """\
class ParticleSystem:
    def __init__(self, pos, vel, mass):
        self.pos = pos.copy()
        self.vel = vel.copy()
        self.mass = mass

    def kinetic_energy(self):
        return 0.5 * np.sum(self.mass[:, None] * self.vel ** 2)

    def step(self, dt, g=-9.81):
        self.vel[:, 1] += g * dt
        self.pos += self.vel * dt
        below = self.pos[:, 1] < 0
        self.pos[below, 1] *= -1
        self.vel[below, 1] *= -restitution

sim = ParticleSystem(pos0, vel0, masses)
energies = []
for t in range(nsteps):
    sim.step(dt)
    energies.append(sim.kinetic_energy())
energies = np.array(energies)
print(f"kinetic energy {energies[0]:.1f} -> {energies[-1]:.1f}")
"""


def _particles(n: int, nsteps: int) -> dict:
    r = _rng()
    return {"np": np, "pos0": r.uniform(0, 10, (n, 2)), "vel0": r.normal(size=(n, 2)), "masses": r.uniform(1, 2, n),
            "restitution": 0.9, "dt": 0.01, "nsteps": nsteps}


# standardize, pairwise squared distances by the dot-product expansion, k nearest neighbours vote
KNN = """\
mu = X_train.mean(axis=0)
sigma = X_train.std(axis=0)
Xtr = (X_train - mu) / sigma
Xte = (X_test - mu) / sigma
d2 = (Xte ** 2).sum(axis=1)[:, None] + (Xtr ** 2).sum(axis=1)[None, :] - 2 * Xte @ Xtr.T
d2 = np.maximum(d2, 0)
nn = np.argsort(d2, axis=1)[:, :k]
votes = y_train[nn]
pred = np.array([np.bincount(v, minlength=n_classes).argmax() for v in votes])
acc = (pred == y_test).mean()
print(f"{k}-NN accuracy: {acc:.3f}")
"""


def _knn(n_train: int, n_test: int, d: int) -> dict:
    r = _rng()
    centers = r.normal(scale=2.0, size=(3, d))
    ytr, yte = r.integers(0, 3, n_train), r.integers(0, 3, n_test)
    return {"np": np, "X_train": centers[ytr] + r.normal(size=(n_train, d)), "y_train": ytr,
            "X_test": centers[yte] + r.normal(size=(n_test, d)), "y_test": yte, "k": 7, "n_classes": 3}


# scaled dot-product attention with einsum; `import math` in the cell
ATTENTION = """\
import math

def attention(Q, K, V):
    scores = np.einsum("bqd,bkd->bqk", Q, K) / math.sqrt(Q.shape[-1])
    scores -= scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=-1, keepdims=True)
    return np.einsum("bqk,bkd->bqd", w, V), w

out, weights = attention(Q, K, V)
entropy = -(weights * np.log(weights)).sum(axis=-1).mean()
print(f"attention entropy {entropy:.4f} nats (uniform would be {math.log(K.shape[1]):.4f})")
"""


def _attention(b: int, t: int, d: int) -> dict:
    r = _rng()
    return {"np": np, "Q": r.normal(size=(b, t, d)), "K": r.normal(size=(b, t, d)), "V": r.normal(size=(b, t, d))}


# ridge regression over a grid of lambdas: concatenate, solve, stack, argmin of a Python list
RIDGE = """\
Xb = np.concatenate([np.ones((X.shape[0], 1)), X], axis=1)
lambdas = np.logspace(-3, 2, 20)
coefs = []
errors = []
for lam in lambdas:
    A = Xb.T @ Xb + lam * np.eye(Xb.shape[1])
    beta = np.linalg.solve(A, Xb.T @ y)
    coefs.append(beta)
    errors.append(float(np.mean((Xb @ beta - y) ** 2)))
coefs = np.stack(coefs)
best = lambdas[int(np.argmin(errors))]
print(f"best lambda {best:.4g}, train mse {min(errors):.4f}")
"""


def _ridge(n: int, d: int) -> dict:
    r = _rng()
    X = r.normal(size=(n, d))
    return {"np": np, "X": X, "y": X @ r.normal(size=d) + r.normal(size=n)}


# a moving-average crossover "trading strategy": diff, cumsum, where, maximum.accumulate
TRADING = """\
returns = np.diff(np.log(prices))
csum = np.cumsum(np.insert(prices, 0, 0.0))
ma = (csum[window:] - csum[:-window]) / window
signal = np.where(prices[window - 1:] > ma, 1, -1)
trades = np.count_nonzero(np.diff(signal))
strategy = signal[:-1] * returns[window - 1:]
equity = np.exp(np.cumsum(strategy))
drawdown = 1 - equity / np.maximum.accumulate(equity)
max_dd = drawdown.max()
vol = returns.std() * np.sqrt(252)
sharpe = strategy.mean() / strategy.std() * np.sqrt(252)
print(f"trades {trades}, final equity {equity[-1]:.3f}, max drawdown {max_dd:.1%}, sharpe {sharpe:.2f}")
"""


def _trading(n: int) -> dict:
    r = _rng()
    return {"np": np, "prices": 100 * np.exp(np.cumsum(r.normal(0.0002, 0.01, n))), "window": 50}


# Adam on the Rosenbrock function: two-element arrays, tuple unpacking of an array, convergence test
ADAM = """\
def rosen_grad(p):
    x, y = p
    return np.array([-2 * (1 - x) - 400 * x * (y - x ** 2), 200 * (y - x ** 2)])

p = np.array([-1.5, 2.0])
m = np.zeros(2)
v = np.zeros(2)
beta1, beta2, eps = 0.9, 0.999, 1e-8
for t in range(1, maxit + 1):
    g = rosen_grad(p)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g ** 2
    mhat = m / (1 - beta1 ** t)
    vhat = v / (1 - beta2 ** t)
    p -= lr * mhat / (np.sqrt(vhat) + eps)
    if np.linalg.norm(g) < 1e-6:
        break
print(f"after {t} steps: x = {p[0]:.5f}, y = {p[1]:.5f}")
"""


def _adam(maxit: int) -> dict:
    return {"np": np, "maxit": maxit, "lr": 0.02}


# a cooling rod: explicit heat equation with out=, +=, boundary writes, np.clip(out=), snapshots
ROD = """\
lap = np.zeros_like(T)
history = []
r = alpha * dt / dx ** 2
for step in range(nsteps):
    np.subtract(T[2:], 2 * T[1:-1], out=lap[1:-1])
    lap[1:-1] += T[:-2]
    T[1:-1] += r * lap[1:-1]
    T[0] = T_left
    T[-1] = T_right
    np.clip(T, 0.0, 100.0, out=T)
    if step % 200 == 0:
        history.append(T.copy())
history = np.array(history)
print(f"r = {r:.3f}; mean temperature {T.mean():.3f}")
"""


def _rod(n: int, nsteps: int) -> dict:
    x = np.linspace(0, 1, n)
    return {"np": np, "T": 100 * np.sin(np.pi * x) ** 2, "alpha": 1.0, "dx": x[1] - x[0],
            "dt": 0.4 * (x[1] - x[0]) ** 2, "T_left": 20.0, "T_right": 0.0, "nsteps": nsteps}


# PageRank by power iteration on a dense matrix, dangling nodes by np.where, top-10 by argsort
PAGERANK = """\
n = adj.shape[0]
out_deg = adj.sum(axis=1)
P = np.where(out_deg[:, None] > 0, adj / np.maximum(out_deg, 1)[:, None], 1.0 / n)
r = np.full(n, 1.0 / n)
for it in range(100):
    r_new = d * (P.T @ r) + (1 - d) / n
    delta = np.abs(r_new - r).sum()
    r = r_new
    if delta < 1e-10:
        break
top = np.argsort(r)[::-1][:10]
print(f"converged in {it + 1} iterations; top page {top[0]} with rank {r[top[0]]:.5f}")
"""


def _pagerank(n: int) -> dict:
    r = _rng()
    adj = (r.random((n, n)) < 0.02).astype(float)
    adj[r.random(n) < 0.05] = 0.0  # some dangling pages
    return {"np": np, "adj": adj, "d": 0.85}


# histogram equalization and a percentile contrast stretch of a uint8 image
HISTEQ = """\
flat = img.ravel()
hist = np.bincount(flat, minlength=256)
cdf = hist.cumsum()
cdf_min = cdf[cdf > 0].min()
lut = np.round((cdf - cdf_min) / (flat.size - cdf_min) * 255).astype(np.uint8)
equalized = lut[img]
p2, p98 = np.percentile(img, (2, 98))
stretched = np.clip((img - p2) / (p98 - p2), 0, 1)
contrast_before, contrast_after = img.std(), equalized.std()
print(f"std {contrast_before:.2f} -> {contrast_after:.2f}")
"""


def _histeq(n: int) -> dict:
    r = _rng()
    return {"np": np, "img": np.clip(r.normal(100, 20, (n, n)), 0, 255).astype(np.uint8)}


# bootstrap confidence interval: draws in a loop filling an array element by element, np.sort
BOOTSTRAP = """\
rng = np.random.default_rng(123)
means = np.empty(n_boot)
for i in range(n_boot):
    sample = rng.choice(data, size=data.size, replace=True)
    means[i] = sample.mean()
sorted_means = np.sort(means)
lo = sorted_means[int(0.025 * n_boot)]
hi = sorted_means[int(0.975 * n_boot)]
print(f"mean {data.mean():.3f}, 95% CI [{lo:.3f}, {hi:.3f}]")
"""


def _bootstrap(n: int, n_boot: int) -> dict:
    return {"np": np, "data": _rng().exponential(2.0, n), "n_boot": n_boot}


# the Lorenz system by RK4 with a lambda building a 3-element array every call
LORENZ = """\
f = lambda s: np.array([sigma * (s[1] - s[0]), s[0] * (rho - s[2]) - s[1], s[0] * s[1] - beta * s[2]])
state = np.array([1.0, 1.0, 1.0])
traj = np.empty((nsteps, 3))
for i in range(nsteps):
    k1 = f(state)
    k2 = f(state + dt / 2 * k1)
    k3 = f(state + dt / 2 * k2)
    k4 = f(state + dt * k3)
    state = state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    traj[i] = state
print("final state:", state)
"""


def _lorenz(nsteps: int) -> dict:
    return {"np": np, "sigma": 10.0, "rho": 28.0, "beta": 8.0 / 3.0, "dt": 0.01, "nsteps": nsteps}


# cosine similarity of embeddings: norm with keepdims, fill_diagonal, argmax, top-k
COSINE = """\
E = emb / np.linalg.norm(emb, axis=1, keepdims=True)
sim = E @ E.T
np.fill_diagonal(sim, -np.inf)
nearest = sim.argmax(axis=1)
topk = np.argsort(-sim, axis=1)[:, :5]
mean_sim = sim[np.isfinite(sim)].mean()
mutual = np.mean(nearest[nearest] == np.arange(len(emb)))
print(f"mean similarity {mean_sim:.4f}, mutual nearest neighbours {mutual:.1%}")
"""


def _cosine(n: int, d: int) -> dict:
    return {"np": np, "emb": _rng().normal(size=(n, d))}


# the Jacobi method for Ax = b, residuals appended as NumPy floats, stop at a tolerance
JACOBI_LS = """\
D = np.diag(A)
R = A - np.diagflat(D)
x = np.zeros_like(b)
residuals = []
for k in range(maxit):
    x_new = (b - R @ x) / D
    res = np.linalg.norm(A @ x_new - b)
    residuals.append(res)
    x = x_new
    if res < tol:
        break
print(f"Jacobi: {len(residuals)} iterations, residual {residuals[-1]:.3e}")
"""


def _jacobi_ls(n: int, maxit: int) -> dict:
    r = _rng()
    A = r.normal(size=(n, n))
    A += np.diag(np.abs(A).sum(axis=1))  # diagonally dominant
    return {"np": np, "A": A, "b": r.random(n), "maxit": maxit, "tol": 1e-10}


# the 2-D Ising model, checkerboard Metropolis updates with draws from a Generator made in the cell
ISING = """\
rng = np.random.default_rng(7)
ii, jj = np.indices(spins.shape)
checker = (ii + jj) % 2 == 0
mags = []
for sweep in range(n_sweeps):
    for color in (checker, ~checker):
        nb = np.roll(spins, 1, 0) + np.roll(spins, -1, 0) + np.roll(spins, 1, 1) + np.roll(spins, -1, 1)
        dE = 2 * spins * nb
        accept = (rng.random(spins.shape) < np.exp(-beta * dE)) & color
        spins[accept] *= -1
    mags.append(abs(spins.mean()))
print(f"|m| after {n_sweeps} sweeps: {mags[-1]:.3f}")
"""


def _ising(n: int, n_sweeps: int) -> dict:
    return {"np": np, "spins": np.where(_rng().random((n, n)) < 0.5, -1, 1), "beta": 0.5, "n_sweeps": n_sweeps}


# Newton's method for cube roots of many numbers at once, `if np.max(...) < tol` as the test
NEWTON = """\
x = np.ones_like(a)
for it in range(50):
    fx = x ** 3 - a
    step = fx / (3 * x ** 2)
    x -= step
    if np.max(np.abs(step)) < 1e-12:
        break
err = np.max(np.abs(np.cbrt(a) - x))
print(f"{it + 1} Newton iterations, max error {err:.2e}")
"""


def _newton(n: int) -> dict:
    return {"np": np, "a": _rng().uniform(0.5, 50.0, n)}


# group-by with np.unique and np.add.at, ranking the groups
GROUPBY = """\
keys, inv, counts = np.unique(cat, return_inverse=True, return_counts=True)
sums = np.zeros(len(keys))
np.add.at(sums, inv, values)
means = sums / counts
sq = np.zeros(len(keys))
np.add.at(sq, inv, (values - means[inv]) ** 2)
stds = np.sqrt(sq / (counts - 1))
order = np.argsort(means)[::-1]
for k in order[:3]:
    print(f"group {keys[k]}: n={counts[k]}, mean={means[k]:.3f} +- {stds[k]:.3f}")
"""


def _groupby(n: int, groups: int) -> dict:
    r = _rng()
    cat = r.integers(0, groups, n)
    return {"np": np, "cat": cat, "values": r.normal(size=n) + cat * 0.01}


# an SIR epidemic by Euler steps with the parameters in a dict, `import math` and Python-float peaks
SIR = """\
import math

beta, gamma = params["beta"], params["gamma"]
S, I, R = N - I0, I0, np.zeros_like(I0)
peak_I = I.copy()
peak_day = np.zeros(I.shape, dtype=int)
for day in range(days):
    new_inf = beta * S * I / N
    new_rec = gamma * I
    S, I, R = S - new_inf, I + new_inf - new_rec, R + new_rec
    higher = I > peak_I
    peak_I = np.where(higher, I, peak_I)
    peak_day[higher] = day
R0 = beta / gamma
herd = 1 - 1 / R0
print(f"R0 = {R0:.2f}, herd immunity {herd:.0%}, e-folding {math.log(2) / (beta - gamma):.1f} days")
"""


def _sir(m: int, days: int) -> dict:
    r = _rng()
    N = r.uniform(1e4, 1e6, m)
    return {"np": np, "N": N, "I0": np.ceil(N * 1e-4), "params": {"beta": 0.3, "gamma": 0.1}, "days": days}



# EM for a 1-D Gaussian mixture, log-likelihood tracked, stopping on relative change
GMM_EM = """\
import numpy as np

def normal_pdf(x, mu, sigma):
    return np.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))

K = 3
mu = np.quantile(x, [0.1, 0.5, 0.9])
sigma = np.full(K, x.std())
pi = np.ones(K) / K
log_liks = []
for it in range(max_iter):
    # E step
    dens = pi * normal_pdf(x[:, None], mu, sigma)     # (n, K)
    total = dens.sum(axis=1, keepdims=True)
    resp = dens / total
    ll = np.log(total).sum()
    log_liks.append(float(ll))
    # M step
    Nk = resp.sum(axis=0)
    mu = (resp * x[:, None]).sum(axis=0) / Nk
    sigma = np.sqrt((resp * (x[:, None] - mu) ** 2).sum(axis=0) / Nk)
    pi = Nk / len(x)
    if it > 0 and abs(log_liks[-1] - log_liks[-2]) < 1e-8 * abs(log_liks[-1]):
        break
order = np.argsort(mu)
mu, sigma, pi = mu[order], sigma[order], pi[order]
labels = np.argmax(resp[:, order], axis=1)
print(f"EM stopped after {it + 1} iterations, log-likelihood {log_liks[-1]:.4f}")
for j in range(K):
    print(f"  component {j}: weight={pi[j]:.3f} mean={mu[j]:.3f} sd={sigma[j]:.3f} n={np.sum(labels == j)}")
"""


def _gmm(n, max_iter):
    r = _rng(2)
    comp = r.choice(3, size=n, p=[0.5, 0.3, 0.2])
    x = r.normal(np.array([-2.0, 1.0, 4.0])[comp], np.array([0.7, 0.5, 1.0])[comp])
    return {"np": np, "x": x, "max_iter": max_iter}


# DBSCAN-like clustering: pairwise distances, neighbourhood counts, core points, BFS expansion
DBSCAN = """\
from collections import deque

diff = P[:, None, :] - P[None, :, :]
dist = np.sqrt((diff ** 2).sum(axis=-1))
neighbors = dist <= eps
n_neighbors = neighbors.sum(axis=1)
core = n_neighbors >= min_pts
labels = np.full(len(P), -1)
cluster = 0
for i in np.flatnonzero(core):
    if labels[i] != -1:
        continue
    labels[i] = cluster
    queue = deque([i])
    while queue:
        j = queue.popleft()
        if not core[j]:
            continue
        for nb in np.flatnonzero(neighbors[j] & (labels == -1)):
            labels[nb] = cluster
            queue.append(nb)
    cluster += 1
noise = np.sum(labels == -1)
sizes = np.bincount(labels[labels >= 0])
print(f"{cluster} clusters, {noise} noise points, core fraction {core.mean():.2%}")
print("largest clusters:", np.sort(sizes)[::-1][:5])
"""


def _dbscan(n):
    r = _rng(9)
    centers = r.uniform(0, 10, size=(5, 2))
    P = np.concatenate([centers[r.integers(0, 5, n - n // 10)] + 0.4 * r.normal(size=(n - n // 10, 2)),
                        r.uniform(0, 10, size=(n // 10, 2))])
    return {"np": np, "P": P, "eps": 0.35, "min_pts": 5}


# a natural cubic spline as a small class, tridiagonal system solved by a hand-written sweep
SPLINE = """\
class NaturalSpline:
    def __init__(self, x, y):
        n = len(x) - 1
        h = np.diff(x)
        a = h[:-1].copy()
        b = 2 * (h[:-1] + h[1:])
        c = h[1:].copy()
        d = 6 * ((y[2:] - y[1:-1]) / h[1:] - (y[1:-1] - y[:-2]) / h[:-1])
        for i in range(1, n - 1):
            w = a[i] / b[i - 1]
            b[i] -= w * c[i - 1]
            d[i] -= w * d[i - 1]
        m = np.zeros(n - 1)
        m[-1] = d[-1] / b[-1]
        for i in range(n - 3, -1, -1):
            m[i] = (d[i] - c[i] * m[i + 1]) / b[i]
        self.M = np.concatenate(([0.0], m, [0.0]))
        self.x, self.y, self.h = x, y, h

    def __call__(self, t):
        i = np.clip(np.searchsorted(self.x, t) - 1, 0, len(self.h) - 1)
        x0, x1, h = self.x[i], self.x[i + 1], self.h[i]
        M0, M1 = self.M[i], self.M[i + 1]
        return (M0 * (x1 - t) ** 3 / (6 * h) + M1 * (t - x0) ** 3 / (6 * h)
                + (self.y[i] / h - M0 * h / 6) * (x1 - t) + (self.y[i + 1] / h - M1 * h / 6) * (t - x0))

rng = np.random.default_rng(11)
t = np.linspace(0, 1, 2001)
errors = []
for n in knots:
    x = np.sort(np.concatenate(([0.0, 1.0], rng.uniform(0, 1, n - 1))))
    s = NaturalSpline(x, np.sin(2 * np.pi * x))
    errors.append(np.abs(s(t) - np.sin(2 * np.pi * t)).max())
errors = np.array(errors)
inner = np.abs(s(t[400:1600]) - np.sin(2 * np.pi * t[400:1600])).max()
for n, e in zip(knots, errors):
    print(f"n={n:4d}  max error {e:.3e}")
print(f"interior error {inner:.3e}, M range [{s.M.min():.4f}, {s.M.max():.4f}]")
"""


def _spline(knots: list) -> dict:
    return {"np": np, "knots": knots}


# SOR (Gauss-Seidel with over-relaxation) on the 2-D Poisson problem, residual check each sweep
GS_POISSON = """\
h = 1.0 / (n + 1)
xs = np.linspace(0, 1, n + 2)
X, Y = np.meshgrid(xs, xs, indexing="ij")
f = 2 * np.pi ** 2 * np.sin(np.pi * X) * np.sin(np.pi * Y)
exact = np.sin(np.pi * X) * np.sin(np.pi * Y)
u = np.zeros((n + 2, n + 2))
omega = 2 / (1 + np.sin(np.pi * h))
fnorm = np.linalg.norm(f[1:-1, 1:-1])
res_hist = []
sweeps = 0
res = 1.0
while res > tol and sweeps < maxit:
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            gs = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] + h * h * f[i, j])
            u[i, j] += omega * (gs - u[i, j])
    r = f[1:-1, 1:-1] + (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]) / h ** 2
    res = float(np.linalg.norm(r) / fnorm)
    res_hist.append(res)
    sweeps += 1
err = np.abs(u - exact).max()
print(f"omega={omega:.4f}: {sweeps} sweeps, residual {res:.2e}, max error {err:.3e}")
"""


def _gs_poisson(n: int) -> dict:
    return {"np": np, "n": n, "tol": 1e-8, "maxit": 200}

PROGRAMS = [
    Program("logreg", LOGREG, _logreg, {"tiny": dict(n=50, d=3, epochs=20), "small": dict(n=2000, d=10, epochs=100)}),
    Program("power_iter", POWER, _power, {"tiny": dict(n=8, maxit=50), "small": dict(n=200, maxit=1000)}),
    Program("kmeans", KMEANS, _kmeans, {"tiny": dict(n=40, k=3, iters=5), "small": dict(n=1500, k=5, iters=20)}),
    Program("mlp", MLP, _mlp, {"tiny": dict(n=32, d=4, hidden=8, epochs=5),
                               "small": dict(n=300, d=10, hidden=32, epochs=15)}),
    Program("mc_pi", MCPI, _mcpi, {"tiny": dict(n_batches=3, batch_size=100),
                                   "small": dict(n_batches=10, batch_size=10000)}),
    Program("random_walk", WALK, _walk, {"tiny": dict(n_walkers=10, n_steps=20),
                                         "small": dict(n_walkers=500, n_steps=500)}),
    Program("game_of_life", LIFE, _life, {"tiny": dict(n=10, generations=3), "small": dict(n=64, generations=30)}),
    Program("wave2d", WAVE, _wave, {"tiny": dict(n=12, nt=5), "small": dict(n=100, nt=60)}),
    Program("mandelbrot", MANDEL, _mandel, {"tiny": dict(width=16, height=12, max_iter=10),
                                            "small": dict(width=120, height=100, max_iter=30)}),
    Program("sor", SOR, _sor, {"tiny": dict(n=8, maxit=5), "small": dict(n=32, maxit=25)}),
    Program("lotka_volterra", LOTKA, _lotka, {"tiny": dict(m=10, nsteps=200), "small": dict(m=1000, nsteps=500)}),
    Program("softmax_xent", XENT, _xent, {"tiny": dict(n=20, d=5, c=7), "small": dict(n=2000, d=64, c=20)}),
    Program("blur_edges", BLUR, _blur, {"tiny": dict(n=12, passes=2), "small": dict(n=256, passes=5)}),
    Program("particles_class", PARTICLES, _particles, {"tiny": dict(n=10, nsteps=10),
                                                       "small": dict(n=1000, nsteps=150)}),
    Program("knn", KNN, _knn, {"tiny": dict(n_train=30, n_test=10, d=3), "small": dict(n_train=600, n_test=200, d=8)}),
    Program("attention_einsum", ATTENTION, _attention, {"tiny": dict(b=2, t=4, d=3), "small": dict(b=4, t=128, d=32)}),
    Program("ridge_path", RIDGE, _ridge, {"tiny": dict(n=30, d=3), "small": dict(n=2000, d=20)}),
    Program("trading", TRADING, _trading, {"tiny": dict(n=200), "small": dict(n=100_000)}),
    Program("adam_rosenbrock", ADAM, _adam, {"tiny": dict(maxit=20), "small": dict(maxit=400)}),
    Program("rod_out", ROD, _rod, {"tiny": dict(n=20, nsteps=50), "small": dict(n=500, nsteps=600)}),
    Program("pagerank", PAGERANK, _pagerank, {"tiny": dict(n=20), "small": dict(n=600)}),
    Program("histeq", HISTEQ, _histeq, {"tiny": dict(n=16), "small": dict(n=300)}),
    Program("bootstrap", BOOTSTRAP, _bootstrap, {"tiny": dict(n=50, n_boot=20), "small": dict(n=500, n_boot=300)}),
    Program("lorenz_rk4", LORENZ, _lorenz, {"tiny": dict(nsteps=20), "small": dict(nsteps=500)}),
    Program("cosine_sim", COSINE, _cosine, {"tiny": dict(n=10, d=4), "small": dict(n=300, d=64)}),
    Program("jacobi_solve", JACOBI_LS, _jacobi_ls, {"tiny": dict(n=8, maxit=30), "small": dict(n=400, maxit=200)}),
    Program("ising", ISING, _ising, {"tiny": dict(n=8, n_sweeps=3), "small": dict(n=64, n_sweeps=20)}),
    Program("newton_cbrt", NEWTON, _newton, {"tiny": dict(n=20), "small": dict(n=40_000)}),
    Program("groupby", GROUPBY, _groupby, {"tiny": dict(n=50, groups=4), "small": dict(n=100_000, groups=50)}),
    Program("sir", SIR, _sir, {"tiny": dict(m=5, days=10), "small": dict(m=2000, days=300)}),
]


# -- more notebook programs, other people's styles ----------------------------------------------------

# 1-D linear advection, first-order upwind, periodic by np.roll ("12 steps to Navier-Stokes" style:
# `import numpy` without an alias, `un = u.copy()`, a print every 20 steps)
ADVECTION = """\
import numpy

nx = len(u0)
dx = L / nx
dt = cfl * dx / c
u = u0.copy()
mass0 = u.sum() * dx
for n in range(nt):
    un = u.copy()
    u = un - c * dt / dx * (un - numpy.roll(un, 1))
    if n % 20 == 0:
        print(f"step {n:4d}  mass {u.sum() * dx:.6f}  max {u.max():.4f}")
tv = numpy.abs(numpy.diff(u)).sum()
print("mass drift:", float(u.sum() * dx - mass0), "total variation:", round(float(tv), 6))
"""


def _advection(nx: int, nt: int) -> dict:
    x = np.linspace(0.0, 2.0, nx, endpoint=False)
    u0 = np.where((x > 0.5) & (x < 1.0), 2.0, 1.0) + 0.01 * _rng(5).normal(size=nx)
    return {"u0": u0, "L": 2.0, "c": 1.0, "cfl": 0.8, "nt": nt}


# red-black Gauss-Seidel for the Poisson equation, colours as boolean masks from meshgrid,
# a research script's terse names, residual as float(), stop at a tolerance
REDBLACK = """\
N = phi.shape[0]
h = 1.0 / (N - 1)
I, J = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
interior = (I > 0) & (I < N - 1) & (J > 0) & (J < N - 1)
red = interior & ((I + J) % 2 == 0)
black = interior & ((I + J) % 2 == 1)
res_hist = []
for it in range(maxit):
    for m in (red, black):
        s = np.zeros_like(phi)
        s[1:-1, 1:-1] = phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:] + phi[1:-1, :-2]
        phi[m] = 0.25 * (s[m] + h * h * rho[m])
    r = np.zeros_like(phi)
    r[1:-1, 1:-1] = (phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:] + phi[1:-1, :-2]
                     - 4 * phi[1:-1, 1:-1]) / h ** 2 + rho[1:-1, 1:-1]
    res = float(np.sqrt(np.mean(r[interior] ** 2)))
    res_hist.append(res)
    if res < tol * res_hist[0]:
        break
print(f"GS red-black: it={it}, res={res:.3e}, phi_max={phi.max():.5f}")
"""


def _redblack(n: int, maxit: int, tol: float = 1e-2) -> dict:
    x = np.linspace(0, 1, n)
    rho = 10 * np.exp(-50 * ((x[:, None] - 0.4) ** 2 + (x[None, :] - 0.6) ** 2))
    return {"np": np, "phi": np.zeros((n, n)), "rho": rho, "maxit": maxit, "tol": tol}


# a constant-velocity Kalman filter as in a tracking tutorial: 2x2 matrices, `@`, np.linalg.inv,
# functools.reduce for the covariance product, a `for z in zs` loop over an array, lists -> np.array
KALMAN = """\
from functools import reduce

F = np.array([[1.0, dt], [0.0, 1.0]])
H = np.array([[1.0, 0.0]])
Q = q * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
R = np.array([[meas_var]])
x = np.array([[zs[0]], [0.0]])
P = np.eye(2) * 500.0
xs, Ps = [], []
for z in zs:
    # predict
    x = F @ x
    P = reduce(np.matmul, [F, P, F.T]) + Q
    # update
    S = H @ P @ H.T + R
    K = P @ H.T @ np.linalg.inv(S)
    x = x + K @ (z - H @ x)
    P = (np.eye(2) - K @ H) @ P
    xs.append(x.ravel())
    Ps.append(np.diag(P))
xs = np.array(xs)
Ps = np.array(Ps)
rmse_raw = np.sqrt(np.mean((zs - truth) ** 2))
rmse_kf = np.sqrt(np.mean((xs[:, 0] - truth) ** 2))
print(f"RMSE raw {rmse_raw:.3f} -> filtered {rmse_kf:.3f}, final velocity {xs[-1, 1]:.3f}")
"""


def _kalman(n: int) -> dict:
    r = _rng(11)
    dt = 0.1
    vel = 1.0 + np.cumsum(r.normal(0, 0.05, n))
    truth = np.cumsum(vel) * dt
    return {"np": np, "zs": truth + r.normal(0, 0.5, n), "truth": truth, "dt": dt, "q": 0.05, "meas_var": 0.25}


# linear regression by gradient descent as in a Stack Overflow answer: np.c_, .dot, a `while` on
# np.linalg.norm(grad) > tol, a Python counter, printing rounded arrays, lstsq to check
GD_WHILE = """\
m = len(y)
X_b = np.c_[np.ones((m, 1)), X]
theta = np.zeros(X_b.shape[1])
grad = np.full_like(theta, np.inf)
n_iter = 0
costs = []
while np.linalg.norm(grad) > tol and n_iter < max_iter:
    error = X_b.dot(theta) - y
    grad = 2.0 / m * X_b.T.dot(error)
    theta = theta - eta * grad
    costs.append(np.mean(error ** 2))
    n_iter += 1
theta_exact = np.linalg.lstsq(X_b, y, rcond=None)[0]
print("converged in", n_iter, "iterations")
print("theta (GD):   ", np.round(theta, 4))
print("theta (lstsq):", np.round(theta_exact, 4))
"""


def _gd_while(n: int, d: int, tol: float = 1e-6) -> dict:
    r = _rng(3)
    X = r.normal(size=(n, d))
    return {"np": np, "X": X, "y": 4.0 + X @ r.uniform(-3, 3, d) + 0.3 * r.normal(size=n),
            "eta": 0.1, "tol": tol, "max_iter": 5000}


# random-walk Metropolis-Hastings on a bimodal density: scalar draws rng.normal()/rng.random() in a
# Python loop, an `if` on a log-ratio, an acceptance counter, progress prints, np.convolve smoothing
METROPOLIS = """\
def log_p(x):
    # mixture of two Gaussians, unnormalised
    return np.logaddexp(-0.5 * ((x - mu1) / s1) ** 2, -0.5 * ((x - mu2) / s2) ** 2 + np.log(w2))

rng = np.random.default_rng(seed)
x = 0.0
lp = log_p(x)
chain = np.zeros(n_samples)
n_acc = 0
for i in range(n_samples):
    x_new = x + step * rng.normal()
    lp_new = log_p(x_new)
    if np.log(rng.random()) < lp_new - lp:
        x, lp = x_new, lp_new
        n_acc += 1
    chain[i] = x
    if (i + 1) % (n_samples // 4) == 0:
        print(f"{i + 1:6d} samples, acceptance {n_acc / (i + 1):.3f}, running mean {chain[:i + 1].mean():.4f}")
burn = n_samples // 5
smooth = np.convolve(chain, np.ones(window) / window, mode="valid")
print(f"posterior mean {chain[burn:].mean():.4f} sd {chain[burn:].std():.4f}, smoothed max {smooth.max():.3f}")
"""


def _metropolis(n_samples: int) -> dict:
    return {"np": np, "mu1": -2.0, "s1": 0.7, "mu2": 2.5, "s2": 1.0, "w2": 0.6, "seed": 3, "step": 1.5,
            "n_samples": n_samples, "window": 10}


# 2-D convolution via sliding_window_view + einsum (a Stack Overflow answer), Gaussian smoothing,
# Sobel gradients, a percentile threshold
CONV_WINDOW = """\
from numpy.lib.stride_tricks import sliding_window_view

def conv2d(img, k):
    kh, kw = k.shape
    padded = np.pad(img, ((kh // 2, kh // 2), (kw // 2, kw // 2)), mode="reflect")
    windows = sliding_window_view(padded, (kh, kw))
    return np.einsum("ijkl,kl->ij", windows, k[::-1, ::-1])

gauss = np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1]) / 256.0
sobel_x = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=float)
smooth = conv2d(image, gauss)
gx = conv2d(smooth, sobel_x)
gy = conv2d(smooth, sobel_x.T)
mag = np.sqrt(gx ** 2 + gy ** 2)
theta = np.arctan2(gy, gx)
edges = mag > np.percentile(mag, 90)
print(f"edge pixels: {edges.sum()} ({edges.mean():.1%}), mean magnitude {mag.mean():.4f}")
"""


def _conv_window(n: int) -> dict:
    r = _rng(8)
    yy, xx = np.mgrid[0:n, 0:n]
    image = ((xx - n / 2) ** 2 + (yy - n / 3) ** 2 < (n / 4) ** 2).astype(float) + 0.1 * r.normal(size=(n, n))
    return {"np": np, "image": image}


# Monte Carlo option pricing (a quant blog / Kaggle notebook): GBM paths by cumsum of log-increments,
# payoffs by np.maximum, a barrier by any(), a generator expression unpacked into four names,
# Black-Scholes with math.erf in a lambda
GBM = """\
import math

rng = np.random.default_rng(seed)
dt = T / n_steps
Z = rng.standard_normal((n_paths, n_steps))
increments = (r - 0.5 * sigma ** 2) * dt + sigma * math.sqrt(dt) * Z
log_paths = np.cumsum(increments, axis=1)
S = S0 * np.exp(np.hstack([np.zeros((n_paths, 1)), log_paths]))
disc = math.exp(-r * T)
call_payoff = np.maximum(S[:, -1] - K, 0.0)
put_payoff = np.maximum(K - S[:, -1], 0.0)
asian_payoff = np.maximum(S[:, 1:].mean(axis=1) - K, 0.0)
barrier_hit = (S > barrier).any(axis=1)
up_and_out = np.where(barrier_hit, 0.0, call_payoff)
call, put, asian, uo = (disc * p.mean() for p in (call_payoff, put_payoff, asian_payoff, up_and_out))
stderr = disc * call_payoff.std(ddof=1) / math.sqrt(n_paths)
Phi = lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))
d1 = (math.log(S0 / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * math.sqrt(T))
d2 = d1 - sigma * math.sqrt(T)
bs_call = S0 * Phi(d1) - K * math.exp(-r * T) * Phi(d2)
parity = call - put - (S0 - K * disc)
print(f"call {call:.4f} +- {1.96 * stderr:.4f} (BS {bs_call:.4f}), put {put:.4f}, asian {asian:.4f}, "
      f"up-and-out {uo:.4f}")
print(f"put-call parity gap {parity:+.4f}")
"""


def _gbm(n_paths: int, n_steps: int) -> dict:
    return {"np": np, "S0": 100.0, "K": 105.0, "r": 0.03, "sigma": 0.25, "T": 1.0, "barrier": 140.0,
            "seed": 21, "n_paths": n_paths, "n_steps": n_steps}


# 1-D electrostatic particle-in-cell (two-stream instability): cloud-in-cell deposit with weighted
# np.bincount, field by cumsum, gather by fancy indexing, periodic wrap by np.mod, np.histogram
PIC = """\
L = 2 * np.pi
dx = L / ng
x = x0.copy()
v = v0.copy()
field_energy = []
for step in range(nt):
    xi = x / dx
    j = xi.astype(np.int64) % ng
    w = xi - np.floor(xi)
    rho = np.bincount(j, weights=1.0 - w, minlength=ng) + np.bincount((j + 1) % ng, weights=w, minlength=ng)
    rho = 1.0 - rho * ng / len(x)  # ions minus electrons
    E = np.cumsum(rho) * dx
    E -= E.mean()
    Ep = E[j] * (1.0 - w) + E[(j + 1) % ng] * w
    v -= Ep * dt
    x = np.mod(x + v * dt, L)
    field_energy.append(0.5 * np.sum(E ** 2) * dx)
    if step % 25 == 0:
        print(f"t={step * dt:5.2f}  W_E={field_energy[-1]:.3e}")
hist, edges = np.histogram(v, bins=24, range=(-4, 4))
centers = 0.5 * (edges[1:] + edges[:-1])
print("most populated velocity bin:", centers[np.argmax(hist)], "kinetic energy", 0.5 * np.sum(v ** 2) / len(v))
"""


def _pic(n: int, ng: int, nt: int) -> dict:
    r = _rng(17)
    x0 = r.uniform(0, 2 * np.pi, n)
    v0 = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) + 0.05 * r.normal(size=n)
    return {"np": np, "x0": x0, "v0": v0, "ng": ng, "nt": nt, "dt": 0.1}


# the elementary cellular automaton rule 30 on uint8 cells: shifts and ors, a list of rows ->
# np.vstack, bits of the centre column joined into a Python int, rows printed as '#' and '.'
RULE30 = """\
cells = np.zeros(width, dtype=np.uint8)
cells[width // 2] = 1
rows = [cells]
for t in range(steps - 1):
    left = np.roll(cells, 1)
    right = np.roll(cells, -1)
    pattern = (left << 2) | (cells << 1) | right
    cells = ((rule >> pattern) & 1).astype(np.uint8)
    rows.append(cells)
grid = np.vstack(rows)
center = grid[:, width // 2]
bits = int("".join(str(b) for b in center[:32]), 2)
density = grid.sum(axis=1) / width
half = min(20, width // 2)
for row in grid[:8]:
    print("".join("#" if c else "." for c in row[width // 2 - half: width // 2 + half]))
print(f"center-column bits {bits:#010x}, final density {density[-1]:.3f}")
"""


def _rule30(width: int, steps: int) -> dict:
    return {"np": np, "width": width, "steps": steps, "rule": 30}


# PCA by SVD the way scikit-learn does it: centring, svd_flip signs (indexing with a range),
# explained variance ratio, searchsorted for 95%, projection and reconstruction, trailing-underscore names
PCA = """\
mean_ = X.mean(axis=0)
Xc = X - mean_
U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
# svd_flip: make the largest loading in each column of U positive
max_abs_rows = np.argmax(np.abs(U), axis=0)
signs = np.sign(U[max_abs_rows, range(U.shape[1])])
U *= signs
Vt *= signs[:, np.newaxis]
explained_variance_ = S ** 2 / (X.shape[0] - 1)
explained_variance_ratio_ = explained_variance_ / explained_variance_.sum()
n_components = int(np.searchsorted(np.cumsum(explained_variance_ratio_), 0.95) + 1)
components_ = Vt[:n_components]
X_pca = Xc @ components_.T
X_back = X_pca @ components_ + mean_
recon_mse = np.mean((X - X_back) ** 2)
for i, ratio in enumerate(explained_variance_ratio_[:n_components]):
    print(f"PC{i + 1}: {ratio:.2%} of variance")
print(f"kept {n_components} of {X.shape[1]} components, reconstruction MSE {recon_mse:.5f}")
"""


def _pca(n: int, d: int) -> dict:
    r = _rng(4)
    latent = r.normal(size=(n, 3)) * np.array([5.0, 2.0, 1.0])
    X = latent @ r.normal(size=(3, d)) + 0.2 * r.normal(size=(n, d)) + r.uniform(-1, 1, d)
    return {"np": np, "X": X}


# nearest-centroid classifier, Kaggle style: np.unique, list comprehensions over classes, np.newaxis
# broadcasting, argmin, a confusion matrix filled by a zip loop with +=, a dict comprehension
CENTROID = """\
classes = np.unique(y_train)
centroids = np.array([X_train[y_train == c].mean(axis=0) for c in classes])
spread = np.array([X_train[y_train == c].std(axis=0).mean() for c in classes])
dist = np.sqrt(((X_test[:, np.newaxis, :] - centroids[np.newaxis, :, :]) ** 2).sum(axis=-1))
y_pred = classes[np.argmin(dist / spread, axis=1)]
n_cls = len(classes)
cm = np.zeros((n_cls, n_cls), dtype=int)
for t, p in zip(y_test, y_pred):
    cm[t, p] += 1
accuracy = np.trace(cm) / cm.sum()
recall = {int(c): round(float(cm[i, i] / cm[i].sum()), 4) for i, c in enumerate(classes)}
print("Accuracy:", round(accuracy, 4))
print("Per-class recall:", recall)
print(cm)
"""


def _centroid(n_train: int, n_test: int, d: int, k: int) -> dict:
    r = _rng(9)
    centers = r.normal(scale=1.5, size=(k, d))
    scales = r.uniform(0.5, 1.5, k)
    ytr, yte = r.integers(0, k, n_train), r.integers(0, k, n_test)
    return {"np": np, "X_train": centers[ytr] + scales[ytr, None] * r.normal(size=(n_train, d)), "y_train": ytr,
            "X_test": centers[yte] + scales[yte, None] * r.normal(size=(n_test, d)), "y_test": yte}


# Newton fractal for z**3 - 1 on a complex grid: meshgrid, np.where on an `active` mask, an int32
# counter += bool, `if not active.any(): break`, basins by argmin over a broadcast extra axis
NEWTON_FRACTAL = """\
roots = np.exp(2j * np.pi * np.arange(3) / 3)
xs = np.linspace(-2, 2, n)
X, Y = np.meshgrid(xs, xs)
Z = X + 1j * Y
iterations = np.zeros(Z.shape, dtype=np.int32)
active = np.ones(Z.shape, dtype=bool)
for i in range(max_iter):
    Znew = Z - (Z ** 3 - 1) / (3 * Z ** 2)
    step = np.abs(Znew - Z)
    Z = np.where(active, Znew, Z)
    iterations += active
    active &= step > tol
    if not active.any():
        break
basin = np.argmin(np.abs(Z[..., None] - roots), axis=-1)
share = np.bincount(basin.ravel(), minlength=3) / basin.size
print(f"stopped after {i + 1} iterations; basin shares " + ", ".join(f"{s:.3f}" for s in share))
print("mean iterations to converge:", iterations.mean())
"""


def _newton_fractal(n: int, max_iter: int) -> dict:
    return {"np": np, "n": n, "max_iter": max_iter, "tol": 1e-9}


# 2-D heat equation with the parameters in a dict (and results written back into it), np.copy every
# step, a boolean-mask heat source with +=, chained boundary assignments, a print every 25 steps
HEAT_DICT = """\
params = {"alpha": alpha, "nx": nx, "ny": ny, "steps": steps}
params["dx"] = 1.0 / (params["nx"] - 1)
params["dy"] = 1.0 / (params["ny"] - 1)
params["dt"] = 0.2 * min(params["dx"], params["dy"]) ** 2 / params["alpha"]
u = np.zeros((params["ny"], params["nx"]))
source = np.zeros_like(u, dtype=bool)
source[ny // 3: ny // 2, nx // 3: nx // 2] = True
rx = params["alpha"] * params["dt"] / params["dx"] ** 2
ry = params["alpha"] * params["dt"] / params["dy"] ** 2
for k in range(params["steps"]):
    un = np.copy(u)
    u[1:-1, 1:-1] = (un[1:-1, 1:-1]
                     + rx * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, :-2])
                     + ry * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[:-2, 1:-1]))
    u[source] += params["dt"] * q
    u[0, :] = u[-1, :] = 0.0
    u[:, 0] = u[:, -1] = 0.0
    if k % 25 == 0:
        print(f"step {k:3d}: max T = {u.max():.5f}, total heat = {u.sum() * params['dx'] * params['dy']:.6f}")
params["T_max"] = float(u.max())
params["hot_cells"] = int((u > 0.5 * u.max()).sum())
"""


def _heat_dict(nx: int, ny: int, steps: int) -> dict:
    return {"np": np, "alpha": 1.0, "nx": nx, "ny": ny, "steps": steps, "q": 50.0}


# the logistic map's bifurcation diagram (a dynamics course): vectorised over r, a Python list of
# x.copy() snapshots -> np.array, builtin abs() on an array, a Lyapunov exponent, np.unique per column
LOGISTIC = """\
r = np.linspace(r_min, 4.0, n_r)
x = 1e-5 * np.ones(n_r)
lyapunov = np.zeros(n_r)
attractor = []
for i in range(iterations):
    x = r * x * (1 - x)
    if i >= iterations - last:
        lyapunov += np.log(abs(r - 2 * r * x))
        attractor.append(x.copy())
attractor = np.array(attractor)
lyapunov = lyapunov / last
chaotic = lyapunov > 0
n_distinct = np.array([len(np.unique(np.round(col, 4))) for col in attractor.T])
print(f"chaotic for {chaotic.mean():.1%} of r values; first chaotic r = {r[chaotic][0]:.4f}")
print("period-2 region ends near r =", r[np.argmax(n_distinct > 2)])
"""


def _logistic(n_r: int, iterations: int) -> dict:
    return {"np": np, "r_min": 2.8, "n_r": n_r, "iterations": iterations, "last": 50}


# a tiny neural net as a class: @property, methods mutating self arrays in place, np.tanh and np.outer
# per sample, mini-batches by rng.permutation and slicing, gradient accumulation, a Python step counter
TINYNET = """\
class TinyNet:
    def __init__(self, n_in, n_hidden, seed=0):
        rng = np.random.default_rng(seed)
        self.W1 = rng.normal(0, 1 / np.sqrt(n_in), (n_hidden, n_in))
        self.b1 = np.zeros(n_hidden)
        self.w2 = rng.normal(0, 1 / np.sqrt(n_hidden), n_hidden)
        self.b2 = 0.0
        self.steps = 0

    @property
    def n_params(self):
        return self.W1.size + self.b1.size + self.w2.size + 1

    def forward(self, x):
        h = np.tanh(self.W1 @ x + self.b1)
        return self.w2 @ h + self.b2, h

    def train_batch(self, xb, yb, lr):
        gW1 = np.zeros_like(self.W1)
        gb1 = np.zeros_like(self.b1)
        gw2 = np.zeros_like(self.w2)
        gb2 = 0.0
        loss = 0.0
        for x, y in zip(xb, yb):
            out, h = self.forward(x)
            err = out - y
            dh = err * self.w2 * (1 - h ** 2)
            gW1 += np.outer(dh, x)
            gb1 += dh
            gw2 += err * h
            gb2 += err
            loss += 0.5 * err ** 2
        n = len(xb)
        self.W1 -= lr * gW1 / n
        self.b1 -= lr * gb1 / n
        self.w2 -= lr * gw2 / n
        self.b2 -= lr * gb2 / n
        self.steps += 1
        return loss

net = TinyNet(X.shape[1], hidden)
rng = np.random.default_rng(1)
epoch_loss = []
for epoch in range(epochs):
    order = rng.permutation(len(X))
    total = 0.0
    for start in range(0, len(X), batch):
        idx = order[start:start + batch]
        total += net.train_batch(X[idx], y[idx], lr)
    epoch_loss.append(total / len(X))
    print(f"epoch {epoch}: loss {epoch_loss[-1]:.5f}")
print(f"{net.n_params} parameters, {net.steps} SGD steps")
"""


def _tinynet(n: int, d: int, hidden: int, epochs: int) -> dict:
    r = _rng(12)
    X = r.uniform(-1, 1, (n, d))
    return {"np": np, "X": X, "y": np.sin(2 * X[:, 0]) * X[:, 1] + 0.1 * r.normal(size=n), "hidden": hidden,
            "epochs": epochs, "batch": 8, "lr": 0.2}


PROGRAMS += [
    Program("advection_upwind", ADVECTION, _advection, {"tiny": dict(nx=40, nt=50), "small": dict(nx=2000, nt=200)}),
    Program("redblack_gs", REDBLACK, _redblack, {"tiny": dict(n=10, maxit=40, tol=0.1),
                                                 "small": dict(n=40, maxit=60)}),
    Program("kalman", KALMAN, _kalman, {"tiny": dict(n=30), "small": dict(n=200)}),
    Program("gd_linreg_while", GD_WHILE, _gd_while, {"tiny": dict(n=30, d=2, tol=1e-2),
                                                      "small": dict(n=2000, d=5)}),
    Program("metropolis", METROPOLIS, _metropolis, {"tiny": dict(n_samples=40), "small": dict(n_samples=800)}),
    Program("conv_window", CONV_WINDOW, _conv_window, {"tiny": dict(n=10), "small": dict(n=160)}),
    Program("gbm_option", GBM, _gbm, {"tiny": dict(n_paths=20, n_steps=5), "small": dict(n_paths=2000, n_steps=100)}),
    Program("pic_two_stream", PIC, _pic, {"tiny": dict(n=64, ng=16, nt=30), "small": dict(n=4000, ng=64, nt=40)}),
    Program("rule30", RULE30, _rule30, {"tiny": dict(width=41, steps=20), "small": dict(width=401, steps=120)}),
    Program("pca_svd", PCA, _pca, {"tiny": dict(n=40, d=6), "small": dict(n=2000, d=30)}),
    Program("nearest_centroid", CENTROID, _centroid, {"tiny": dict(n_train=40, n_test=20, d=3, k=3),
                                                      "small": dict(n_train=3000, n_test=1000, d=16, k=6)}),
    Program("newton_fractal", NEWTON_FRACTAL, _newton_fractal, {"tiny": dict(n=10, max_iter=40),
                                                                "small": dict(n=100, max_iter=60)}),
    Program("heat_dict", HEAT_DICT, _heat_dict, {"tiny": dict(nx=12, ny=10, steps=30),
                                                 "small": dict(nx=100, ny=90, steps=100)}),
    Program("logistic_bifurcation", LOGISTIC, _logistic, {"tiny": dict(n_r=40, iterations=100),
                                                          "small": dict(n_r=400, iterations=200)}),
    Program("tinynet_class", TINYNET, _tinynet, {"tiny": dict(n=20, d=3, hidden=6, epochs=3),
                                                 "small": dict(n=96, d=4, hidden=16, epochs=4)}),
]


# -- more cells as people write them (session of 2026-12-05, eighth): element loops, batched matmuls,
# an RNN's helper, image gradients, preallocated trajectories, one-hot labels, a vectorized
# bisection, np.pad stencils, polynomial fits, a flood fill to a fixed point

# Burgers' equation as a CFD course's step 3 writes it first: a Python loop over the elements
BURGERS = """\
import numpy as np

u = np.ones(nx)
u[int(0.5 / dx):int(1 / dx + 1)] = 2
for n in range(nt):
    un = u.copy()
    for i in range(1, nx):
        u[i] = un[i] - un[i] * dt / dx * (un[i] - un[i - 1])
print("max u", u.max(), "at", np.argmax(u))
"""


def _burgers(nx: int, nt: int) -> dict:
    return {"nx": nx, "nt": nt, "dx": 2.0 / (nx - 1), "dt": 0.025}


# value iteration on a random MDP: a batched matmul P @ V, max over actions, a stop on the change
VALUE_ITER = """\
V = np.zeros(n_states)
for sweep in range(max_iter):
    Q = R + gamma * (P @ V)
    V_new = Q.max(axis=1)
    delta = np.max(np.abs(V_new - V))
    V = V_new
    if delta < theta:
        break
policy = np.argmax(Q, axis=1)
print(f"converged after {sweep + 1} sweeps; V[0]={V[0]:.4f}, policy[:5]={policy[:5]}")
"""


def _value_iter(n_states: int, n_actions: int) -> dict:
    r = _rng(21)
    P = r.random((n_states, n_actions, n_states))
    P /= P.sum(axis=2, keepdims=True)
    return {"np": np, "P": P, "R": r.normal(size=(n_states, n_actions)), "n_states": n_states,
            "gamma": 0.9, "theta": 1e-8, "max_iter": 500}


# a vanilla RNN's forward pass with a step helper, hidden states stored into a preallocated array
RNN = """\
def rnn_step(x_t, h_prev, Wx, Wh, b):
    return np.tanh(x_t @ Wx + h_prev @ Wh + b)

T, N, D = X.shape
H = Wh.shape[0]
h = np.zeros((N, H))
hs = np.zeros((T, N, H))
for t in range(T):
    h = rnn_step(X[t], h, Wx, Wh, b)
    hs[t] = h
out = hs[-1] @ Wy
loss = 0.5 * np.sum((out - Y) ** 2) / N
print("loss", round(loss, 6))
"""


def _rnn(T: int, N: int, D: int, H: int) -> dict:
    r = _rng(22)
    return {"np": np, "X": r.normal(size=(T, N, D)), "Wx": r.normal(scale=0.3, size=(D, H)),
            "Wh": r.normal(scale=0.3, size=(H, H)), "b": np.zeros(H), "Wy": r.normal(size=(H, 2)),
            "Y": r.normal(size=(N, 2))}


# Sobel gradients by slicing, magnitude and angle, a threshold, a histogram
SOBEL = """\
img = img.astype(np.float64)
gx = np.zeros_like(img)
gy = np.zeros_like(img)
gx[1:-1, 1:-1] = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2])
gy[1:-1, 1:-1] = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]) - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:])
mag = np.hypot(gx, gy)
mag *= 255.0 / mag.max()
theta = np.arctan2(gy, gx)
edges = (mag > thresh).astype(np.uint8)
hist, bins = np.histogram(mag, bins=16, range=(0, 255))
print("edge pixels:", edges.sum(), "hist head:", hist[:4])
"""


def _sobel(n: int) -> dict:
    r = _rng(23)
    yy, xx = np.mgrid[0:n, 0:n]
    img = (((xx - n / 2) ** 2 + (yy - n / 3) ** 2) < (n / 4) ** 2) * 200 + r.integers(0, 30, (n, n))
    return {"np": np, "img": img.astype(np.uint8), "thresh": 60.0}


# velocity Verlet for coupled springs: a force helper, a preallocated trajectory, energy every 100 steps
VERLET = """\
def accel(x):
    f = -k * x
    f[1:] += k * (x[:-1] - x[1:])
    f[:-1] += k * (x[1:] - x[:-1])
    return f / m

x = x0.copy()
v = np.zeros_like(x)
traj = np.empty((nsteps, x.size))
energy = []
a = accel(x)
for t in range(nsteps):
    x = x + v * dt + 0.5 * a * dt ** 2
    a_new = accel(x)
    v = v + 0.5 * (a + a_new) * dt
    a = a_new
    traj[t] = x
    if t % 100 == 0:
        energy.append(0.5 * m * np.sum(v ** 2) + 0.5 * k * np.sum(x ** 2))
print("energy drift:", (energy[-1] - energy[0]) / energy[0])
"""


def _verlet(n: int, nsteps: int) -> dict:
    return {"np": np, "x0": np.sin(np.linspace(0, np.pi, n)), "k": 1.0, "m": 1.0, "dt": 0.01, "nsteps": nsteps}


# softmax regression with one-hot labels from np.eye(k)[y], in-place updates, a print every 50 epochs
SOFTREG = """\
Y = np.eye(n_classes)[y]
W = np.zeros((X.shape[1], n_classes))
b = np.zeros(n_classes)
for epoch in range(epochs):
    logits = X @ W + b
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    loss = -np.mean(np.sum(Y * np.log(probs + 1e-12), axis=1))
    grad = probs - Y
    W -= lr * X.T @ grad / len(X)
    b -= lr * grad.mean(axis=0)
    if epoch % 50 == 0:
        print(f"epoch {epoch}: loss {loss:.4f}")
acc = np.mean(np.argmax(X @ W + b, axis=1) == y)
print("train accuracy", acc)
"""


def _softreg(n: int, d: int, k: int, epochs: int) -> dict:
    r = _rng(24)
    y = r.integers(0, k, n)
    X = r.normal(size=(n, d)) + np.eye(k, d)[y] * 2.0
    return {"np": np, "X": X, "y": y, "n_classes": k, "epochs": epochs, "lr": 0.5}


# cube roots of many numbers by bisection, vectorized: np.where updates, a while on the widest bracket
BISECT = """\
lo = np.zeros_like(c)
hi = np.maximum(c, 1.0)
it = 0
while np.max(hi - lo) > tol:
    mid = 0.5 * (lo + hi)
    f = mid ** 3 - c
    lo = np.where(f < 0, mid, lo)
    hi = np.where(f >= 0, mid, hi)
    it += 1
root = 0.5 * (lo + hi)
print(it, "bisections, max error", np.abs(root ** 3 - c).max())
"""


def _bisect(n: int) -> dict:
    return {"np": np, "c": _rng(25).uniform(0, 50, n), "tol": 1e-10}


# 2-D diffusion with np.pad(mode="edge") for the boundary each step, a progress print of the mean
HEAT_PAD = """\
for step in range(nsteps):
    up = np.pad(u, 1, mode="edge")
    u = u + alpha * (up[:-2, 1:-1] + up[2:, 1:-1] + up[1:-1, :-2] + up[1:-1, 2:] - 4 * u)
    if step % 20 == 0:
        print(step, round(float(u.mean()), 6))
"""


def _heat_pad(n: int, nsteps: int) -> dict:
    u = np.zeros((n, n))
    u[n // 4:n // 2, n // 4:n // 2] = 1.0
    return {"np": np, "u": u, "alpha": 0.2, "nsteps": nsteps}


# model selection by polynomial degree: np.polyfit / np.polyval per degree, RMSE in a list, argmin
POLYFIT = """\
errs = []
for deg in range(1, max_deg + 1):
    coeffs = np.polyfit(x_tr, y_tr, deg)
    pred = np.polyval(coeffs, x_te)
    errs.append(np.sqrt(np.mean((pred - y_te) ** 2)))
best = int(np.argmin(errs)) + 1
print("best degree", best, "rmse", round(float(min(errs)), 5))
"""


def _polyfit(n: int, max_deg: int) -> dict:
    r = _rng(26)
    x = r.uniform(-1, 1, 2 * n)
    y = np.sin(3 * x) + 0.1 * r.normal(size=2 * n)
    return {"np": np, "x_tr": x[:n].copy(), "y_tr": y[:n].copy(), "x_te": x[n:].copy(), "y_te": y[n:].copy(),
            "max_deg": max_deg}


# site percolation: fill from the top row through open sites until nothing changes
FLOOD = """\
filled = np.zeros_like(open_)
filled[0, :] = open_[0, :]
changed = True
sweeps = 0
while changed:
    nb = np.zeros_like(filled)
    nb[1:, :] |= filled[:-1, :]
    nb[:-1, :] |= filled[1:, :]
    nb[:, 1:] |= filled[:, :-1]
    nb[:, :-1] |= filled[:, 1:]
    new = filled | (nb & open_)
    changed = bool((new != filled).any())
    filled = new
    sweeps += 1
print("percolates:", filled[-1, :].any(), "after", sweeps, "sweeps;", filled.sum(), "sites filled")
"""


def _flood(n: int) -> dict:
    return {"np": np, "open_": _rng(27).random((n, n)) < 0.62}


# a linear autoencoder trained by full-batch gradient descent in float32, as a deep-learning-from-scratch
# notebook writes it: astype(np.float32), float32 learning rate, X @ W and its transposes, a loss list
AUTOENC32 = """\
X32 = (X - X.mean(axis=0)).astype(np.float32)
rng = np.random.default_rng(0)
W = rng.normal(0, 0.1, (X32.shape[1], k)).astype(np.float32)
lr = np.float32(0.002)
losses = []
for epoch in range(epochs):
    Z = X32 @ W
    R = Z @ W.T - X32
    losses.append(float((R ** 2).mean()))
    G = 2 * (X32.T @ (R @ W) + R.T @ Z) / len(X32)
    W -= lr * G
print(f"reconstruction loss {losses[0]:.4f} -> {losses[-1]:.4f} ({W.dtype})")
"""


def _autoenc(n: int, d: int, k: int, epochs: int) -> dict:
    r = _rng(31)
    return {"np": np, "X": r.normal(size=(n, k)) @ r.normal(size=(k, d)) + 0.1 * r.normal(size=(n, d)),
            "k": k, "epochs": epochs}


PROGRAMS += [
    Program("burgers_loops", BURGERS, _burgers, {"tiny": dict(nx=11, nt=4), "small": dict(nx=41, nt=25)}),
    Program("value_iter", VALUE_ITER, _value_iter, {"tiny": dict(n_states=6, n_actions=2),
                                                    "small": dict(n_states=60, n_actions=4)}),
    Program("rnn_forward", RNN, _rnn, {"tiny": dict(T=4, N=3, D=2, H=5), "small": dict(T=60, N=32, D=8, H=32)}),
    Program("sobel", SOBEL, _sobel, {"tiny": dict(n=12), "small": dict(n=256)}),
    Program("verlet_springs", VERLET, _verlet, {"tiny": dict(n=5, nsteps=120), "small": dict(n=100, nsteps=500)}),
    Program("softmax_reg", SOFTREG, _softreg, {"tiny": dict(n=30, d=4, k=3, epochs=60),
                                               "small": dict(n=300, d=10, k=4, epochs=150)}),
    Program("bisect_cbrt", BISECT, _bisect, {"tiny": dict(n=10), "small": dict(n=5000)}),
    Program("heat_pad", HEAT_PAD, _heat_pad, {"tiny": dict(n=8, nsteps=30), "small": dict(n=100, nsteps=100)}),
    Program("polyfit_degree", POLYFIT, _polyfit, {"tiny": dict(n=20, max_deg=4), "small": dict(n=200, max_deg=10)}),
    Program("flood_fill", FLOOD, _flood, {"tiny": dict(n=8), "small": dict(n=60)}),
    Program("autoencoder_f32", AUTOENC32, _autoenc, {"tiny": dict(n=20, d=5, k=2, epochs=10),
                                                     "small": dict(n=400, d=16, k=4, epochs=150)}),
]


# -- more cells as people write them (session of 2026-12-05, tenth): an RK4 integrator with helpers defined in
# the cell, a confusion matrix counted in a Python loop, an energy kept each step then stacked, a histogram
# deposit and gather each step (np.bincount with weights, an index array written back)

PENDULUM = """\
import math

def f(t, y):
    theta, omega = y
    return np.array([omega, -g / L * np.sin(theta) - damping * omega + A * np.cos(drive_freq * t)])

def rk4_step(t, y, dt):
    k1 = f(t, y)
    k2 = f(t + dt / 2, y + dt / 2 * k1)
    k3 = f(t + dt / 2, y + dt / 2 * k2)
    k4 = f(t + dt, y + dt * k3)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

y = np.array([theta0, np.zeros_like(theta0)])
t = 0.0
ts, thetas = [], []
for step in range(nsteps):
    y = rk4_step(t, y, dt)
    t += dt
    if step % 10 == 0:
        ts.append(t)
        thetas.append(y[0].copy())
ts = np.array(ts)
thetas = np.array(thetas)
energy = 0.5 * L**2 * y[1]**2 + g * L * (1 - np.cos(y[0]))
small_period = 2 * math.pi * math.sqrt(L / g)
print(f"t = {t:.2f} ({t / small_period:.1f} small-angle periods): mean energy {energy.mean():.4f}")
"""


def _pendulum(m: int, nsteps: int) -> dict:
    return {"np": np, "theta0": np.linspace(0.1, 3.0, m).copy(), "g": 9.81, "L": 1.0, "damping": 0.1, "A": 1.2,
            "drive_freq": 2.0 / 3.0, "dt": 0.01, "nsteps": nsteps}


CONFUSION = """\
scores = X @ W + b
y_pred = np.argmax(scores, axis=1)
k = W.shape[1]
cm = np.zeros((k, k), dtype=int)
for t, p in zip(y_true, y_pred):
    cm[t, p] += 1
precision = np.diag(cm) / np.maximum(cm.sum(axis=0), 1)
recall = np.diag(cm) / np.maximum(cm.sum(axis=1), 1)
print("accuracy", np.trace(cm) / cm.sum())
print("macro F1", np.mean(2 * precision * recall / np.maximum(precision + recall, 1e-12)))
"""


def _confusion(n: int, d: int, k: int) -> dict:
    r = _rng(21)
    X = r.normal(size=(n, d))
    W = r.normal(size=(d, k))
    return {"np": np, "X": X, "W": W, "b": r.normal(size=k) * 0.1,
            "y_true": np.argmax(X @ W + r.normal(size=(n, k)), axis=1)}


ENERGY = """\
x = x0.copy()
energies = []
for step in range(nsteps):
    x = 0.999 * x + 0.001 * np.roll(x, 1)
    energies.append((x * x).sum())
energies = np.array(energies)
drift = energies[-1] / energies[0] - 1
print(f"relative energy drift {drift:.3e}")
"""


def _energy(n: int, nsteps: int) -> dict:
    return {"np": np, "x0": _rng(22).normal(size=n), "nsteps": nsteps}


DEPOSIT = """\
x = x0.copy()
v = v0.copy()
for step in range(nt):
    cell = (x * ng).astype(np.int64) % ng
    frac = x * ng - np.floor(x * ng)
    rho = np.bincount(cell, weights=1 - frac, minlength=ng) + np.bincount((cell + 1) % ng, weights=frac, minlength=ng)
    field = np.cumsum(rho - rho.mean()) / ng
    v[fast] = v[fast] * 0.99
    v += dt * field[cell]
    x = np.mod(x + dt * v, 1.0)
print("max density", rho.max(), "mean speed", np.abs(v).mean())
"""


def _deposit(n: int, ng: int, nt: int) -> dict:
    r = _rng(23)
    return {"np": np, "x0": r.random(n), "v0": r.normal(size=n), "ng": ng, "nt": nt, "dt": 0.01,
            "fast": r.choice(n, n // 10, replace=False)}


PROGRAMS += [
    Program("pendulum_rk4", PENDULUM, _pendulum, {"tiny": dict(m=5, nsteps=30), "small": dict(m=200, nsteps=300)}),
    Program("confusion_loop", CONFUSION, _confusion, {"tiny": dict(n=30, d=3, k=3), "small": dict(n=8000, d=8, k=5)}),
    Program("energy_history", ENERGY, _energy, {"tiny": dict(n=10, nsteps=20), "small": dict(n=300, nsteps=400)}),
    Program("deposit_gather", DEPOSIT, _deposit, {"tiny": dict(n=50, ng=8, nt=5), "small": dict(n=2000, ng=64, nt=150)}),
]


# -- written by helper agents in the eleventh session (2026-12-05): scalar loops fusion does not pay for
# (a pixel at a time, a tridiagonal sweep), a NumPy scalar's ** in a float(), np.linalg.solve in a loop

# Otsu threshold from a histogram, looping over candidate thresholds
OTSU = """\
hist = np.bincount(img.ravel(), minlength=256).astype(np.float64)
p = hist / hist.sum()
levels = np.arange(256)
best_t, best_var = 0, -1.0
between = []
for t in range(1, 256):
    w0 = p[:t].sum()
    w1 = 1.0 - w0
    if w0 == 0 or w1 == 0:
        between.append(0.0)
        continue
    mu0 = (levels[:t] * p[:t]).sum() / w0
    mu1 = (levels[t:] * p[t:]).sum() / w1
    var_b = float(w0 * w1 * (mu0 - mu1) ** 2)
    between.append(var_b)
    if var_b > best_var:
        best_var, best_t = var_b, t
between = np.array(between)
mask = img >= best_t
binary = np.where(mask, 255, 0).astype(np.uint8)
fg_frac = mask.mean()
print(f"Otsu threshold {best_t}, between-class variance {best_var:.1f}, foreground {fg_frac:.1%}")
"""


def _otsu(n: int) -> dict:
    r = _rng()
    img = r.normal(80, 15, (n, n))
    yy, xx = np.mgrid[:n, :n]
    blob = (yy - n / 2) ** 2 + (xx - n / 3) ** 2 < (n / 4) ** 2
    img[blob] = r.normal(170, 20, blob.sum())
    return {"np": np, "img": np.clip(img, 0, 255).astype(np.uint8)}


# Floyd-Steinberg dithering with two nested Python loops over pixels
DITHER = """\
img = gray.astype(np.float64) / 255.0
h, w = img.shape
out = img.copy()
for y in range(h):
    for x in range(w):
        old = out[y, x]
        new = 1.0 if old >= 0.5 else 0.0
        out[y, x] = new
        err = old - new
        if x + 1 < w:
            out[y, x + 1] += err * 7 / 16
        if y + 1 < h:
            if x > 0:
                out[y + 1, x - 1] += err * 3 / 16
            out[y + 1, x] += err * 5 / 16
            if x + 1 < w:
                out[y + 1, x + 1] += err * 1 / 16
dithered = (out > 0.5).astype(np.uint8)
print(f"mean gray {img.mean():.4f}, ink {dithered.mean():.4f}, |diff| {abs(img.mean() - dithered.mean()):.4f}")
"""


def _dither(n: int) -> dict:
    yy, xx = np.mgrid[:n, :n]
    g = 127 + 100 * np.sin(xx / 5.0) * np.cos(yy / 7.0)
    return {"np": np, "gray": np.clip(g, 0, 255).astype(np.uint8)}


# backward-Euler heat equation with the tridiagonal system solved by the Thomas algorithm (a loop)
THOMAS = """\
def thomas(a, b, c, d):
    n = len(d)
    cp = np.zeros(n)
    dp = np.zeros(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.zeros(n)
    x[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x

dx = 1.0 / (nx + 1)
r = alpha * dt / dx ** 2
a = np.full(nx, -r)
b = np.full(nx, 1 + 2 * r)
c = np.full(nx, -r)
a[0] = 0.0
c[-1] = 0.0
xs = np.linspace(dx, 1 - dx, nx)
u = np.sin(np.pi * xs) + 0.5 * np.sin(3 * np.pi * xs)
peaks = []
for step in range(nsteps):
    u = thomas(a, b, c, u)
    peaks.append(u.max())
exact = np.exp(-np.pi ** 2 * alpha * dt * nsteps) * np.sin(np.pi * xs)
print(f"max after {nsteps} steps {peaks[-1]:.6f}; L2 error vs one-mode decay {np.sqrt(np.mean((u - exact) ** 2)):.3e}")
"""


def _thomas(nx: int, nsteps: int) -> dict:
    return {"np": np, "nx": nx, "nsteps": nsteps, "alpha": 1.0, "dt": 1e-3}


# a planet around a star by leapfrog (kick-drift-kick) with the energy and angular momentum each step
ORBIT = """\
import math

def accel(r):
    d = math.sqrt(r[0] ** 2 + r[1] ** 2)
    return -GM * r / d ** 3

r = np.array([1.0, 0.0])
v = np.array([0.0, 1.2])
a = accel(r)
energies = []
ang = []
for step in range(nsteps):
    v += 0.5 * dt * a
    r += dt * v
    a = accel(r)
    v += 0.5 * dt * a
    E = 0.5 * (v @ v) - GM / np.linalg.norm(r)
    energies.append(E)
    ang.append(r[0] * v[1] - r[1] * v[0])
energies = np.array(energies)
drift = (energies.max() - energies.min()) / abs(energies[0])
print(f"E0={energies[0]:.8f}, relative energy drift {drift:.3e}, L range {max(ang) - min(ang):.2e}")
"""


def _orbit(nsteps: int) -> dict:
    return {"np": np, "GM": 1.0, "dt": 0.01, "nsteps": nsteps}


# Newton's method on the discretised Bratu problem -u'' = lam*exp(u), Jacobian assembled densely
NEWTON_SYS = """\
def residual(u):
    up = np.concatenate(([0.0], u, [0.0]))
    return (2 * up[1:-1] - up[:-2] - up[2:]) / h ** 2 - lam * np.exp(u)

def jacobian(u):
    J = np.diag(np.full(n, 2.0 / h ** 2) - lam * np.exp(u))
    off = np.full(n - 1, -1.0 / h ** 2)
    J += np.diag(off, 1) + np.diag(off, -1)
    return J

h = 1.0 / (n + 1)
u = np.zeros(n)
norms = []
for it in range(20):
    F = residual(u)
    nrm = float(np.linalg.norm(F, np.inf))
    norms.append(nrm)
    if nrm < 1e-10:
        break
    du = np.linalg.solve(jacobian(u), -F)
    u += du
print(f"Newton: {it} steps, residual history {[f'{r:.1e}' for r in norms]}, max u {u.max():.8f}")
"""


def _newton_sys(n: int) -> dict:
    return {"np": np, "n": n, "lam": 2.0}


PROGRAMS += [
    Program("otsu", OTSU, _otsu, {"tiny": {"n": 32}, "small": {"n": 256}}),
    Program("dither_fs", DITHER, _dither, {"tiny": {"n": 8}, "small": {"n": 32}}),
    Program("thomas_heat", THOMAS, _thomas, {"tiny": dict(nx=10, nsteps=5), "small": dict(nx=100, nsteps=30)}),
    Program("orbit_leapfrog", ORBIT, _orbit, {"tiny": dict(nsteps=50), "small": dict(nsteps=1500)}),
    Program("newton_bratu", NEWTON_SYS, _newton_sys, {"tiny": dict(n=8), "small": dict(n=200)}),
    # written by helper agents of the twelfth session (ML from scratch; a numerical-methods course)
    Program("gmm_em", GMM_EM, _gmm, {"tiny": dict(n=60, max_iter=5), "small": dict(n=3000, max_iter=100)}),
    Program("dbscan_bfs", DBSCAN, _dbscan, {"tiny": dict(n=40), "small": dict(n=400)}),
    Program("spline_class", SPLINE, _spline, {"tiny": dict(knots=[6, 8]), "small": dict(knots=[16, 32, 64, 128, 256, 512])}),
    Program("sor_poisson", GS_POISSON, _gs_poisson, {"tiny": dict(n=4), "small": dict(n=10)}),
]


# -- written by a helper agent of the nineteenth session, as others write notebooks: a perceptron class, FDTD,
# annealing, regression with numpy.linalg, a backtest, DLA walkers, CG, Newton on systems, group statistics,
# Lax-Wendroff with snapshots, float32 mini-batches, an SEIR history array, morphology, Euler-Maruyama
# options, Neumann heat with a float() test, a sandpile --------------------------------------------------

# Rosenblatt's perceptron as a class (Raschka, "Machine Learning with PyTorch and Scikit-Learn" ch. 2):
# RandomState in fit, a loop over samples with zip(X, y), errors_ as a list of ints, np.where predict
PERCEPTRON = """\
class Perceptron:
    \"\"\"Perceptron classifier.

    eta : learning rate (between 0.0 and 1.0)
    n_iter : passes over the training dataset
    \"\"\"
    def __init__(self, eta=0.01, n_iter=50, random_state=1):
        self.eta = eta
        self.n_iter = n_iter
        self.random_state = random_state

    def fit(self, X, y):
        rgen = np.random.RandomState(self.random_state)
        self.w_ = rgen.normal(loc=0.0, scale=0.01, size=X.shape[1])
        self.b_ = np.float64(0.)
        self.errors_ = []
        for _ in range(self.n_iter):
            errors = 0
            for xi, target in zip(X, y):
                update = self.eta * (target - self.predict(xi))
                self.w_ += update * xi
                self.b_ += update
                errors += int(update != 0.0)
            self.errors_.append(errors)
        return self

    def net_input(self, X):
        return np.dot(X, self.w_) + self.b_

    def predict(self, X):
        return np.where(self.net_input(X) >= 0.0, 1, 0)

# standardize the features
X_std = np.copy(X)
X_std[:, 0] = (X[:, 0] - X[:, 0].mean()) / X[:, 0].std()
X_std[:, 1] = (X[:, 1] - X[:, 1].mean()) / X[:, 1].std()

ppn = Perceptron(eta=0.1, n_iter=n_iter)
ppn.fit(X_std, y)
y_pred = ppn.predict(X_std)
print('Misclassified examples: %d' % (y != y_pred).sum())
print(f"updates per epoch: {ppn.errors_}, accuracy {np.mean(y_pred == y):.3f}")
"""


def _perceptron(n: int, n_iter: int) -> dict:
    r = _rng(1)
    # two iris-like classes: sepal length / petal length, nearly separable
    a = r.normal([5.0, 1.5], [0.35, 0.2], size=(n // 2, 2))
    b = r.normal([5.9, 2.6], [0.5, 0.45], size=(n - n // 2, 2))
    X = np.vstack([a, b])
    y = np.concatenate([np.zeros(n // 2, dtype=int), np.ones(n - n // 2, dtype=int)])
    perm = r.permutation(n)
    return {"np": np, "X": X[perm], "y": y[perm], "n_iter": n_iter}


# 1-D FDTD (Sullivan, "Electromagnetic Simulation Using the FDTD Method", fd1d_1_4 in Python):
# ex/hy slice updates, a Gaussian pulse added at a cell each step, absorbing boundaries kept in lists
FDTD = """\
import math

ke = n_cells
ex = np.zeros(ke)
hy = np.zeros(ke)
t0 = 40
spread = 12
boundary_low = [0, 0]
boundary_high = [0, 0]

# dielectric slab from cell kstart on
cb = np.ones(ke)
cb = 0.5 * cb
cb[kstart:] = 0.5 / epsilon

energy = []
for time_step in range(1, nsteps + 1):
    # calculate the Ex field
    ex[1:ke] = ex[1:ke] + cb[1:ke] * (hy[0:ke - 1] - hy[1:ke])
    # put a Gaussian pulse in at the low end
    pulse = math.exp(-0.5 * ((t0 - time_step) / spread) ** 2)
    ex[5] = pulse + ex[5]
    # absorbing boundary conditions
    ex[0] = boundary_low.pop(0)
    boundary_low.append(ex[1])
    ex[ke - 1] = boundary_high.pop(0)
    boundary_high.append(ex[ke - 2])
    # calculate the Hy field
    hy[0:ke - 1] = hy[0:ke - 1] + 0.5 * (ex[0:ke - 1] - ex[1:ke])
    if time_step % 50 == 0:
        energy.append(float(np.sum(ex ** 2 / cb * 0.5 + hy ** 2)))

transmitted = np.abs(ex[kstart:]).max()
reflected = np.abs(ex[:kstart]).max()
print(f"T = {nsteps}: max |Ex| in slab {transmitted:.4f}, outside {reflected:.4f}, "
      f"expected reflection {(1 - math.sqrt(epsilon)) / (1 + math.sqrt(epsilon)):+.3f}")
"""


def _fdtd(n_cells: int, nsteps: int) -> dict:
    return {"np": np, "n_cells": n_cells, "nsteps": nsteps, "kstart": n_cells // 2, "epsilon": 4.0}


# simulated annealing for a small travelling-salesman tour: distance matrix by broadcasting, swap two
# cities with rng.integers, Metropolis acceptance with math.exp, geometric cooling, a best-so-far copy
TSP = """\
import math

def tour_length(tour, D):
    return D[tour, np.roll(tour, -1)].sum()

rng = np.random.default_rng(17)
n = len(cities)
D = np.sqrt(((cities[:, None, :] - cities[None, :, :]) ** 2).sum(axis=-1))
tour = rng.permutation(n)
current = tour_length(tour, D)
best, best_tour = current, tour.copy()
initial = current
T = T0
accepted = 0
history = []
for step in range(n_steps):
    i, j = rng.integers(0, n, size=2)
    if i == j:
        continue
    candidate = tour.copy()
    candidate[i], candidate[j] = candidate[j], candidate[i]
    new = tour_length(candidate, D)
    delta = new - current
    if delta < 0 or rng.random() < math.exp(-delta / T):
        tour = candidate
        current = new
        accepted += 1
        if current < best:
            best = current
            best_tour = tour.copy()
    T = T * cooling
    if step % 100 == 0:
        history.append(current)
history = np.array(history)
print(f"tour length {initial:.3f} -> {best:.3f} ({accepted} moves accepted, final T {T:.2e})")
"""


def _tsp(n_cities: int, n_steps: int) -> dict:
    r = _rng(5)
    return {"np": np, "cities": r.uniform(0, 1, (n_cities, 2)), "n_steps": n_steps, "T0": 1.0,
            "cooling": 0.001 ** (1.0 / n_steps)}


# least squares three ways (normal equations with inv, np.linalg.lstsq, solve), standard errors,
# R^2, then a k-fold cross-validation loop with rng.permutation and array_split
NORMAL_EQ = """\
from numpy.linalg import inv, lstsq, norm

# design matrix with intercept, two features and their interaction
X = np.column_stack([np.ones(len(x1)), x1, x2, x1 * x2])
n, p = X.shape

theta_ne = inv(X.T @ X) @ X.T @ y                # normal equations
theta, rss, rank, sv = lstsq(X, y, rcond=None)   # the numerically nicer way
theta_solve = np.linalg.solve(X.T @ X, X.T @ y)
print("max difference between methods:", np.abs(theta_ne - theta).max(), np.abs(theta_solve - theta).max())

y_hat = X @ theta
resid = y - y_hat
sigma2 = resid @ resid / (n - p)
se = np.sqrt(np.diag(sigma2 * inv(X.T @ X)))
t_stat = theta / se
r2 = 1 - np.sum(resid ** 2) / np.sum((y - y.mean()) ** 2)
adj_r2 = 1 - (1 - r2) * (n - 1) / (n - p)
cond = sv[0] / sv[-1]
big = np.abs(resid) > 3 * np.sqrt(sigma2)

rng = np.random.default_rng(0)
folds = np.array_split(rng.permutation(n), k)
cv_mse = []
for f in range(k):
    test = folds[f]
    train = np.concatenate([folds[g] for g in range(k) if g != f])
    th, *_ = lstsq(X[train], y[train], rcond=None)
    cv_mse.append(np.mean((y[test] - X[test] @ th) ** 2))
cv_mse = np.array(cv_mse)
table = [f"{name:>6s} {b:9.4f} {s:8.4f} {t:8.2f}"
         for name, b, s, t in zip(["const", "x1", "x2", "x1:x2"], theta, se, t_stat)]
print(f"R^2={r2:.4f} adj={adj_r2:.4f} cond={cond:.1f} outliers={big.sum()} "
      f"train mse={np.mean(resid ** 2):.4f} cv mse={cv_mse.mean():.4f} +- {cv_mse.std():.4f}")
"""


def _normal_eq(n: int, k: int) -> dict:
    r = _rng(3)
    x1 = r.uniform(0, 10, n)
    x2 = r.normal(5, 2, n)
    y = 1.5 + 0.8 * x1 - 0.3 * x2 + 0.05 * x1 * x2 + r.standard_t(4, n)
    return {"np": np, "x1": x1, "x2": x2, "y": y, "k": k}


# moving-average crossover backtest over a grid of windows: a cumsum moving average helper,
# np.convolve for the slow one, positions by np.where, cumprod equity, drawdown, results in a dict
MA_CROSS = """\
def moving_average(a, n):
    ret = np.cumsum(a, dtype=float)
    ret[n:] = ret[n:] - ret[:-n]
    return ret[n - 1:] / n

results = {}
best_key, best_sharpe = None, -np.inf
for short_w in short_windows:
    for long_w in long_windows:
        fast = moving_average(close, short_w)[long_w - short_w:]
        slow = np.convolve(close, np.ones(long_w) / long_w, mode="valid")
        px = close[long_w - 1:]
        position = np.where(fast > slow, 1.0, 0.0)
        daily = np.diff(px) / px[:-1]
        strat = position[:-1] * daily - cost * np.abs(np.diff(position))
        equity = np.cumprod(1 + strat)
        peak = np.maximum.accumulate(equity)
        max_dd = np.max(1 - equity / peak)
        sharpe = np.sqrt(252) * strat.mean() / strat.std()
        n_trades = int(np.count_nonzero(np.diff(position)))
        results[(short_w, long_w)] = (equity[-1], max_dd, sharpe, n_trades)
        if sharpe > best_sharpe:
            best_key, best_sharpe = (short_w, long_w), sharpe
buy_hold = close[-1] / close[max(long_windows) - 1]
eq, dd, sh, nt = results[best_key]
print(f"best MA({best_key[0]},{best_key[1]}): equity {eq:.3f}, max DD {dd:.1%}, Sharpe {sh:.2f}, "
      f"{nt} trades; buy & hold {buy_hold:.3f}")
"""


def _ma_cross(n: int) -> dict:
    r = _rng(8)
    close = 50 * np.exp(np.cumsum(r.normal(0.0003, 0.012, n)))
    return {"np": np, "close": close, "short_windows": [5, 10, 20], "long_windows": [50, 100, 200],
            "cost": 0.001}


# diffusion-limited aggregation, vectorised walkers: an int8 grid, integer positions, random moves by
# fancy indexing a moves table, a neighbour mask from shifted slices, stuck walkers removed by a mask
DLA = """\
rng = np.random.default_rng(12)
grid = np.zeros((n, n), dtype=np.int8)
c = n // 2
grid[c, c] = 1
arrival = np.full((n, n), -1, dtype=np.int64)
arrival[c, c] = 0
moves = np.array([[0, 1], [0, -1], [1, 0], [-1, 0]])
pos = rng.integers(0, n, size=(n_walkers, 2))
counts = []
for t in range(1, n_steps + 1):
    pos = (pos + moves[rng.integers(0, 4, size=len(pos))]) % n
    occ = grid == 1
    near = occ.copy()
    near[1:, :] |= occ[:-1, :]
    near[:-1, :] |= occ[1:, :]
    near[:, 1:] |= occ[:, :-1]
    near[:, :-1] |= occ[:, 1:]
    hit = near[pos[:, 0], pos[:, 1]]
    if hit.any():
        grid[pos[hit, 0], pos[hit, 1]] = 1
        arrival[pos[hit, 0], pos[hit, 1]] = t
        pos = pos[~hit]
    counts.append(int(grid.sum()))
    if len(pos) == 0:
        break
rows, cols = np.nonzero(grid)
r_g = np.sqrt(np.mean((rows - c) ** 2 + (cols - c) ** 2))
print(f"cluster of {grid.sum()} cells after {t} steps, radius of gyration {r_g:.2f}, "
      f"{len(pos)} walkers still free")
"""


def _dla(n: int, n_walkers: int, n_steps: int) -> dict:
    return {"np": np, "n": n, "n_walkers": n_walkers, "n_steps": n_steps}


# conjugate gradients as a function with a while loop on norm(r) > tol * norm(b), residual history,
# `from numpy.linalg import norm`, checked against np.linalg.solve and against plain steepest descent
CG = """\
from numpy.linalg import norm

def conjugate_gradient(A, b, tol=1e-8, maxiter=1000):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs_old = r @ r
    k = 0
    residuals = [norm(r)]
    while norm(r) > tol * norm(b) and k < maxiter:
        Ap = A @ p
        alpha = rs_old / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r @ r
        p = r + (rs_new / rs_old) * p
        rs_old = rs_new
        k += 1
        residuals.append(norm(r))
    return x, k, residuals

def steepest_descent(A, b, tol=1e-8, maxiter=200):
    x = np.zeros_like(b)
    r = b - A @ x
    k = 0
    while norm(r) > tol * norm(b) and k < maxiter:
        alpha = (r @ r) / (r @ (A @ r))
        x = x + alpha * r
        r = b - A @ x
        k += 1
    return x, k

x_cg, iters, res = conjugate_gradient(A, b)
x_sd, iters_sd = steepest_descent(A, b)
x_direct = np.linalg.solve(A, b)
res = np.array(res)
rate = (res[-1] / res[0]) ** (1 / iters)
print(f"CG: {iters} iterations, |x - x_direct| = {norm(x_cg - x_direct):.2e}, mean rate {rate:.3f}")
print(f"steepest descent: {iters_sd} iterations, error {norm(x_sd - x_direct):.2e}")
"""


def _cg(m: int) -> dict:
    # the 5-point Laplacian on an m x m grid as a dense matrix, plus a random right-hand side
    T = 2 * np.eye(m) - np.eye(m, k=1) - np.eye(m, k=-1)
    A = np.kron(T, np.eye(m)) + np.kron(np.eye(m), T) + 0.1 * np.eye(m * m)
    return {"np": np, "A": A, "b": _rng(4).normal(size=m * m)}


# Newton's method for a 2x2 nonlinear system from a grid of starting points: F and J as helper
# functions returning small arrays, np.linalg.solve each step, np.unique(axis=0) on the rounded roots
NEWTON2D = """\
def F(v):
    x, y = v
    return np.array([x ** 2 + y ** 2 - 4.0,
                     np.exp(x) + y - 1.0])

def J(v):
    x, y = v
    return np.array([[2 * x, 2 * y],
                     [np.exp(x), 1.0]])

roots = []
n_iter = []
for x0 in starts:
    v = np.array(x0, dtype=float)
    for k in range(max_iter):
        step = np.linalg.solve(J(v), -F(v))
        v = v + step
        if np.linalg.norm(step) < 1e-12:
            break
    roots.append(v)
    n_iter.append(k + 1)
roots = np.array(roots)
n_iter = np.array(n_iter)
ok = np.array([np.linalg.norm(F(r)) < 1e-9 for r in roots])
found, basin = np.unique(np.round(roots[ok], 6), axis=0, return_counts=True)
print(f"{ok.sum()}/{len(starts)} starts converged (mean {n_iter[ok].mean():.1f} iterations)")
for r, c in zip(found, basin):
    print(f"  root ({r[0]:+.6f}, {r[1]:+.6f}) reached from {c} starts")
"""


def _newton2d(g: int) -> dict:
    xs = np.linspace(-2.7, 2.9, g)
    ys = np.linspace(-2.8, 2.6, g)
    return {"np": np, "starts": [(x, y) for x in xs for y in ys], "max_iter": 50}


# per-group descriptive statistics: np.unique on a string column, bincount with weights, a loop
# over the groups with percentiles, IQR outliers and a histogram, the results in a list of dicts
GROUP_STATS = """\
names, inverse, counts = np.unique(region, return_inverse=True, return_counts=True)
totals = np.bincount(inverse, weights=amount)
means = totals / counts
big_orders = np.bincount(inverse, weights=(amount > 200).astype(float))
edges = np.linspace(0, np.percentile(amount, 99), 21)
summary = []
for k, name in enumerate(names):
    vals = amount[inverse == k]
    q1, med, q3 = np.percentile(vals, [25, 50, 75])
    iqr = q3 - q1
    lo, hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    n_out = int(np.sum((vals < lo) | (vals > hi)))
    hist, _ = np.histogram(vals, bins=edges)
    mode_bin = edges[np.argmax(hist)]
    items = quantity[inverse == k]
    summary.append({"region": name, "n": int(counts[k]), "mean": means[k], "median": med,
                    "iqr": iqr, "outliers": n_out, "mode_bin": mode_bin,
                    "share_big": big_orders[k] / counts[k], "items_per_order": items.mean()})
order = np.argsort(totals)[::-1]
top = summary[order[0]]
print(f"{len(names)} regions, top: {top['region']} (total {totals[order[0]]:.0f}, "
      f"median {top['median']:.2f}, {top['outliers']} outliers)")
"""


def _group_stats(n: int) -> dict:
    r = _rng(6)
    regions = np.array(["north", "south", "east", "west", "central", "islands", "overseas", "online"])
    p = np.array([0.2, 0.15, 0.15, 0.1, 0.1, 0.05, 0.05, 0.2])
    region = regions[r.choice(len(regions), size=n, p=p)]
    amount = r.lognormal(4.0, 0.8, n)
    quantity = r.poisson(3, n) + 1
    return {"np": np, "region": region, "amount": amount, "quantity": quantity}


# Lax-Wendroff for linear advection, periodic through np.roll, snapshots every few steps in a list,
# then stacked: mass conservation, total variation, error after one full period
LAX_WENDROFF = """\
nx = len(u0)
dx = L / nx
dt = cfl * dx / a
nsteps = int(round(L / a / dt))  # one period
u = u0.copy()
snapshots = [u.copy()]
times = [0.0]
for n in range(1, nsteps + 1):
    up = np.roll(u, -1)
    um = np.roll(u, 1)
    u = u - 0.5 * cfl * (up - um) + 0.5 * cfl ** 2 * (up - 2 * u + um)
    if n % save_every == 0:
        snapshots.append(u.copy())
        times.append(n * dt)
snapshots = np.array(snapshots)
times = np.array(times)
mass = snapshots.sum(axis=1) * dx
tv = np.abs(np.diff(snapshots, axis=1)).sum(axis=1)
overshoot = snapshots.max() - u0.max()
err_l1 = np.sum(np.abs(u - u0)) * dx
print(f"{nsteps} steps, {len(snapshots)} snapshots, mass drift {mass[-1] - mass[0]:.2e}, "
      f"TV {tv[0]:.2f} -> {tv[-1]:.2f}, overshoot {overshoot:.3f}, L1 error {err_l1:.4f}")
"""


def _lax_wendroff(nx: int) -> dict:
    x = np.linspace(0, 1, nx, endpoint=False)
    u0 = np.where((x > 0.1) & (x < 0.3), 1.0, 0.0) + np.exp(-200 * (x - 0.65) ** 2)
    return {"np": np, "u0": u0, "L": 1.0, "a": 1.0, "cfl": 0.8, "save_every": 25}


# a two-layer ReLU net on the cs231n spiral data, float32 weights, mini-batches from
# rng.permutation each epoch, loss.item(), L2 regularisation, the epoch loss history as a list
MINIBATCH = """\
rng = np.random.default_rng(0)
X32 = X.astype(np.float32)
n, d = X32.shape
W1 = (0.5 * rng.standard_normal((d, hidden))).astype(np.float32)
b1 = np.zeros((1, hidden), dtype=np.float32)
W2 = (0.5 * rng.standard_normal((hidden, K))).astype(np.float32)
b2 = np.zeros((1, K), dtype=np.float32)
step_size = np.float32(lr)
reg = np.float32(1e-3)
loss_history = []
for epoch in range(epochs):
    perm = rng.permutation(n)
    total = 0.0
    for start in range(0, n, batch_size):
        idx = perm[start:start + batch_size]
        xb, yb = X32[idx], y[idx]
        m = len(idx)
        hidden_layer = np.maximum(0, xb @ W1 + b1)
        scores = hidden_layer @ W2 + b2
        scores -= scores.max(axis=1, keepdims=True)
        exp_scores = np.exp(scores)
        probs = exp_scores / np.sum(exp_scores, axis=1, keepdims=True)
        data_loss = -np.log(probs[np.arange(m), yb]).mean()
        reg_loss = 0.5 * reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        total += (data_loss + reg_loss).item() * m
        dscores = probs.copy()
        dscores[np.arange(m), yb] -= 1
        dscores /= m
        dW2 = hidden_layer.T @ dscores
        db2 = np.sum(dscores, axis=0, keepdims=True)
        dhidden = dscores @ W2.T
        dhidden[hidden_layer <= 0] = 0
        dW1 = xb.T @ dhidden
        db1 = np.sum(dhidden, axis=0, keepdims=True)
        dW2 += reg * W2
        dW1 += reg * W1
        W1 += -step_size * dW1
        b1 += -step_size * db1
        W2 += -step_size * dW2
        b2 += -step_size * db2
    loss_history.append(total / n)
hidden_layer = np.maximum(0, X32 @ W1 + b1)
predicted_class = np.argmax(hidden_layer @ W2 + b2, axis=1)
print(f"epoch {epochs}: loss {loss_history[-1]:.4f}, training accuracy: {np.mean(predicted_class == y):.2f}")
"""


def _minibatch(N: int, K: int, hidden: int, epochs: int, batch_size: int) -> dict:
    r = _rng(0)
    X = np.zeros((N * K, 2))
    y = np.zeros(N * K, dtype="uint8")
    for j in range(K):
        ix = range(N * j, N * (j + 1))
        rad = np.linspace(0.0, 1, N)
        t = np.linspace(j * 4, (j + 1) * 4, N) + r.standard_normal(N) * 0.2
        X[ix] = np.c_[rad * np.sin(t), rad * np.cos(t)]
        y[ix] = j
    return {"np": np, "X": X, "y": y, "K": K, "hidden": hidden, "epochs": epochs, "batch_size": batch_size,
            "lr": 1.0}


# SEIR by forward Euler for a sweep of transmission rates, history[t] = (S, E, I, R) into a
# preallocated (steps+1, 4, m) array, a lockdown that scales beta from a given day, peaks by argmax
SEIR = """\
dt = 0.25
steps = int(days / dt)
m = len(betas)
history = np.zeros((steps + 1, 4, m))
S = np.full(m, N - E0 - I0)
E = np.full(m, E0)
I = np.full(m, I0)
R = np.zeros(m)
history[0] = S, E, I, R
for t in range(1, steps + 1):
    beta = betas * (1 - lockdown_strength) if t * dt >= lockdown_day else betas
    new_exposed = beta * S * I / N
    new_infectious = sigma * E
    new_recovered = gamma * I
    S = S - dt * new_exposed
    E = E + dt * (new_exposed - new_infectious)
    I = I + dt * (new_infectious - new_recovered)
    R = R + dt * new_recovered
    history[t] = S, E, I, R
t_axis = np.arange(steps + 1) * dt
peak_idx = history[:, 2, :].argmax(axis=0)
peak_day = t_axis[peak_idx]
peak_I = history[peak_idx, 2, np.arange(m)]
attack_rate = history[-1, 3] / N
conserved = np.abs(history.sum(axis=1) - N).max()
R0 = betas / gamma
i = int(np.argmin(np.abs(R0 - 2.5)))
print(f"R0={R0[i]:.2f}: peak {peak_I[i]:.0f} infectious on day {peak_day[i]:.1f}, "
      f"attack rate {attack_rate[i]:.1%} (population drift {conserved:.1e})")
"""


def _seir(m: int, days: int) -> dict:
    return {"np": np, "betas": np.linspace(0.15, 0.8, m).copy(), "sigma": 1 / 5.2, "gamma": 1 / 7.0, "N": 1e6,
            "E0": 20.0, "I0": 5.0, "days": days, "lockdown_day": 40.0, "lockdown_strength": 0.4}


# binary morphology on a noisy bool image: erosion/dilation from shifted slices of np.pad with
# np.logical_and / np.logical_or, opening and closing for growing radii, IoU against the clean image
MORPHOLOGY = """\
def erode(img, k=1):
    h, w = img.shape
    p = np.pad(img, k, mode="constant", constant_values=False)
    out = np.ones_like(img, dtype=bool)
    for dy in range(-k, k + 1):
        for dx in range(-k, k + 1):
            out = np.logical_and(out, p[k + dy:k + dy + h, k + dx:k + dx + w])
    return out

def dilate(img, k=1):
    h, w = img.shape
    p = np.pad(img, k, mode="constant", constant_values=False)
    out = np.zeros_like(img, dtype=bool)
    for dy in range(-k, k + 1):
        for dx in range(-k, k + 1):
            out = np.logical_or(out, p[k + dy:k + dy + h, k + dx:k + dx + w])
    return out

def iou(a, b):
    return np.logical_and(a, b).sum() / np.logical_or(a, b).sum()

scores = []
for k in radii:
    opened = dilate(erode(noisy, k), k)
    cleaned = erode(dilate(opened, k), k)     # opening then closing
    scores.append(iou(cleaned, clean))
scores = np.array(scores)
best_k = radii[int(np.argmax(scores))]
cleaned = erode(dilate(dilate(erode(noisy, best_k), best_k), best_k), best_k)
boundary = np.logical_and(cleaned, np.logical_not(erode(cleaned)))
gradient = dilate(cleaned) ^ erode(cleaned)
print(f"noisy IoU {iou(noisy, clean):.3f}, best radius {best_k}: IoU {scores.max():.3f}; "
      f"boundary pixels {boundary.sum()}, gradient {gradient.sum()}")
"""


def _morphology(n: int) -> dict:
    r = _rng(10)
    yy, xx = np.mgrid[0:n, 0:n]
    clean = ((xx - 0.3 * n) ** 2 + (yy - 0.35 * n) ** 2 < (0.18 * n) ** 2)
    clean |= ((xx - 0.7 * n) ** 2 + (yy - 0.7 * n) ** 2 < (0.12 * n) ** 2)
    clean |= (xx > 0.55 * n) & (xx < 0.9 * n) & (yy > 0.1 * n) & (yy < 0.3 * n)
    flip = r.random((n, n)) < 0.08
    return {"np": np, "clean": clean, "noisy": clean ^ flip, "radii": [1, 2, 3, 4]}


# Euler-Maruyama stock paths with the draws made inside the time loop, running path average and
# a knock-out flag updated in place, European / up-and-out / Asian payoffs, 95% confidence intervals
EULER_OPTION = """\
import math

rng = np.random.default_rng(2718)
dt = T / n_steps
S = np.full(n_paths, S0)
running_sum = np.zeros(n_paths)
alive = np.ones(n_paths, dtype=bool)
for step in range(n_steps):
    dW = math.sqrt(dt) * rng.standard_normal(n_paths)
    S = S + r * S * dt + sigma * S * dW
    S = np.maximum(S, 0.0)
    running_sum += S
    alive &= S < barrier
discount = math.exp(-r * T)
payoffs = {
    "european call": np.maximum(S - K, 0.0),
    "up-and-out call": np.where(alive, np.maximum(S - K, 0.0), 0.0),
    "asian call": np.maximum(running_sum / n_steps - K, 0.0),
}
prices = {}
for name, pay in payoffs.items():
    v = discount * pay
    mean = v.mean()
    half = 1.96 * v.std(ddof=1) / math.sqrt(n_paths)
    prices[name] = (mean, mean - half, mean + half)

def norm_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))

d1 = (math.log(S0 / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * math.sqrt(T))
d2 = d1 - sigma * math.sqrt(T)
bs = S0 * norm_cdf(d1) - K * math.exp(-r * T) * norm_cdf(d2)
p, lo, hi = prices["european call"]
print(f"European call {p:.4f}, 95% CI [{lo:.4f}, {hi:.4f}], Black-Scholes {bs:.4f}, "
      f"knocked out {1 - alive.mean():.1%}")
"""


def _euler_option(n_paths: int, n_steps: int) -> dict:
    return {"np": np, "S0": 100.0, "K": 100.0, "r": 0.05, "sigma": 0.2, "T": 1.0, "barrier": 130.0,
            "n_paths": n_paths, "n_steps": n_steps}


# explicit 2-D heat equation on a plate with insulated (Neumann) walls copied from the neighbours
# each step, a heater patch held at a fixed temperature, a while loop on float(max change)
HEAT_NEUMANN = """\
nx, ny = u0.shape
dx = 1.0 / (nx - 1)
dt = 0.2 * dx ** 2 / alpha
r = alpha * dt / dx ** 2
u = u0.copy()
heater = np.zeros_like(u, dtype=bool)
heater[nx // 4:nx // 4 + 3, ny // 3:2 * ny // 3] = True
u[heater] = T_hot
it = 0
change = 1.0
mean_T = []
while change > tol and it < max_steps:
    un = u.copy()
    u[1:-1, 1:-1] = un[1:-1, 1:-1] + r * (un[2:, 1:-1] + un[:-2, 1:-1]
                                          + un[1:-1, 2:] + un[1:-1, :-2] - 4 * un[1:-1, 1:-1])
    # insulated walls: zero normal gradient
    u[0, :] = u[1, :]
    u[-1, :] = u[-2, :]
    u[:, 0] = u[:, 1]
    u[:, -1] = u[:, -2]
    u[heater] = T_hot
    change = float(np.max(np.abs(u - un)))
    it += 1
    if it % 25 == 0:
        mean_T.append(u.mean())
mean_T = np.array(mean_T)
cold_corner = u[-5:, -5:].mean()
print(f"stopped after {it} steps (t = {it * dt:.4f}), max change {change:.2e}, "
      f"mean T {u.mean():.3f}, far corner {cold_corner:.3f}")
"""


def _heat_neumann(n: int, max_steps: int) -> dict:
    r = _rng(11)
    return {"np": np, "u0": 20.0 + 0.5 * r.random((n, n)), "alpha": 1.0, "T_hot": 100.0, "tol": 0.08,
            "max_steps": max_steps}


# the Bak-Tang-Wiesenfeld sandpile: an int64 grid, grains dropped at random sites, a toppling loop
# `while np.any(grid >= 4)`, avalanche sizes in a list, their distribution by np.unique(return_counts)
SANDPILE = """\
rng = np.random.default_rng(1987)
grid = grid0.copy()
avalanche_sizes = []
lost = 0
for grain in range(n_grains):
    i, j = rng.integers(0, n, size=2)
    grid[i, j] += 1
    size = 0
    while np.any(grid >= 4):
        topple = grid >= 4
        size += int(topple.sum())
        grid[topple] -= 4
        grid[1:, :] += topple[:-1, :]
        grid[:-1, :] += topple[1:, :]
        grid[:, 1:] += topple[:, :-1]
        grid[:, :-1] += topple[:, 1:]
        # grains falling off the edges
        lost += int(topple[0, :].sum() + topple[-1, :].sum() + topple[:, 0].sum() + topple[:, -1].sum())
    avalanche_sizes.append(size)
avalanche_sizes = np.array(avalanche_sizes)
sizes, freq = np.unique(avalanche_sizes[avalanche_sizes > 0], return_counts=True)
mask = freq > 1
slope = np.polyfit(np.log(sizes[mask]), np.log(freq[mask]), 1)[0] if mask.sum() > 1 else float("nan")
print(f"{np.count_nonzero(avalanche_sizes)} avalanches, largest {avalanche_sizes.max()}, "
      f"mean height {grid.mean():.3f}, lost {lost}, log-log slope {slope:.2f}")
"""


def _sandpile(n: int, n_grains: int) -> dict:
    return {"np": np, "grid0": _rng(12).integers(0, 4, size=(n, n)), "n": n, "n_grains": n_grains}


PROGRAMS += [
    Program("perceptron_class", PERCEPTRON, _perceptron, {"tiny": dict(n=20, n_iter=3),
                                                          "small": dict(n=100, n_iter=10)}),
    Program("fdtd_1d", FDTD, _fdtd, {"tiny": dict(n_cells=40, nsteps=60), "small": dict(n_cells=200, nsteps=600)}),
    Program("tsp_anneal", TSP, _tsp, {"tiny": dict(n_cities=8, n_steps=100), "small": dict(n_cities=30, n_steps=600)}),
    Program("normal_eq_cv", NORMAL_EQ, _normal_eq, {"tiny": dict(n=40, k=3), "small": dict(n=8000, k=10)}),
    Program("ma_crossover", MA_CROSS, _ma_cross, {"tiny": dict(n=300), "small": dict(n=5000)}),
    Program("dla_walkers", DLA, _dla, {"tiny": dict(n=16, n_walkers=30, n_steps=20),
                                       "small": dict(n=64, n_walkers=600, n_steps=200)}),
    Program("cg_while", CG, _cg, {"tiny": dict(m=4), "small": dict(m=9)}),
    Program("newton_2x2", NEWTON2D, _newton2d, {"tiny": dict(g=3), "small": dict(g=8)}),
    Program("group_stats", GROUP_STATS, _group_stats, {"tiny": dict(n=200), "small": dict(n=30000)}),
    Program("lax_wendroff", LAX_WENDROFF, _lax_wendroff, {"tiny": dict(nx=40), "small": dict(nx=400)}),
    Program("minibatch_f32", MINIBATCH, _minibatch, {"tiny": dict(N=10, K=3, hidden=8, epochs=2, batch_size=8),
                                                    "small": dict(N=100, K=3, hidden=64, epochs=10, batch_size=32)}),
    Program("seir_history", SEIR, _seir, {"tiny": dict(m=3, days=10), "small": dict(m=30, days=365)}),
    Program("morphology", MORPHOLOGY, _morphology, {"tiny": dict(n=16), "small": dict(n=160)}),
    Program("euler_option", EULER_OPTION, _euler_option, {"tiny": dict(n_paths=100, n_steps=10),
                                                          "small": dict(n_paths=5000, n_steps=100)}),
    Program("heat_neumann", HEAT_NEUMANN, _heat_neumann, {"tiny": dict(n=12, max_steps=20),
                                                          "small": dict(n=50, max_steps=500)}),
    Program("sandpile", SANDPILE, _sandpile, {"tiny": dict(n=6, n_grains=30), "small": dict(n=20, n_grains=300)}),
]


# -- a second batch by a helper agent of the nineteenth session: idioms a lazy tracer finds hard (arrays grown with
# np.append / np.insert, np.delete, recursion, generators, try/except around numpy.linalg, np.errstate blocks,
# Python builtins on arrays, a dataclass, complex arrays, bit arithmetic, np.set_printoptions) --------------

# -- an M/M/1 queue as a discrete-event simulation (a simulation course's first exercise): the
# future-event list is a pair of sorted arrays kept with np.searchsorted + np.insert, the waiting
# line grows with np.append and shrinks with np.delete, the loop runs on a served count
MM1_EVENTS = """\
rng = np.random.default_rng(seed)
ARRIVAL, DEPARTURE = 0, 1

def schedule(times, kinds, t, kind):
    '''insert an event into the (sorted) future-event list'''
    i = np.searchsorted(times, t)
    return np.insert(times, i, t), np.insert(kinds, i, kind)

ev_times = np.array([rng.exponential(1 / lam)])
ev_kinds = np.array([ARRIVAL])
clock = 0.0
line = np.empty(0)            # arrival times of the customers waiting in line
busy = False
waits = np.empty(0)
area_q = 0.0                  # integral of the queue length over time
busy_time = 0.0
served = 0
while served < n_customers:
    t, kind = ev_times[0], ev_kinds[0]
    ev_times, ev_kinds = ev_times[1:], ev_kinds[1:]
    area_q += len(line) * (t - clock)
    if busy:
        busy_time += t - clock
    clock = t
    if kind == ARRIVAL:
        ev_times, ev_kinds = schedule(ev_times, ev_kinds, clock + rng.exponential(1 / lam), ARRIVAL)
        if busy:
            line = np.append(line, clock)
        else:
            busy = True
            waits = np.append(waits, 0.0)
            ev_times, ev_kinds = schedule(ev_times, ev_kinds, clock + rng.exponential(1 / mu), DEPARTURE)
    else:
        served += 1
        if len(line) > 0:
            waits = np.append(waits, clock - line[0])
            line = np.delete(line, 0)
            ev_times, ev_kinds = schedule(ev_times, ev_kinds, clock + rng.exponential(1 / mu), DEPARTURE)
        else:
            busy = False

rho = lam / mu
print(f"simulated {served} departures up to t = {clock:.1f}, {len(line)} still waiting")
print(f"utilisation {busy_time / clock:.3f} (theory {rho:.3f})")
print(f"mean wait in queue {waits.mean():.3f} (M/M/1 theory {rho / (mu - lam):.3f})")
print(f"mean queue length {area_q / clock:.3f} (theory {rho ** 2 / (1 - rho):.3f})")
print(f"longest wait {max(waits):.3f}, {np.count_nonzero(waits) / len(waits):.1%} of customers waited, "
      f"90th percentile {np.percentile(waits, 90):.3f}")
"""


def _mm1_events(n_customers: int) -> dict:
    return {"np": np, "seed": 42, "lam": 0.8, "mu": 1.0, "n_customers": n_customers}


# -- drifting Brownian particles in a channel: a Poisson number is injected at the inlet each step
# (np.vstack / np.concatenate / np.append), particles leaving at the outlet are removed with
# np.delete on np.nonzero indices, and a random decay shrinks every array with a boolean mask
INJECTED_PARTICLES = """\
rng = np.random.default_rng(7)
pos = np.empty((0, 2))
age = np.empty(0, dtype=int)
ids = np.empty(0, dtype=int)
next_id = 0
counts = []
absorbed = decayed = 0
exit_ages = []
for step in range(n_steps):
    # births at the inlet x = 0, uniformly across the channel
    k = rng.poisson(birth_rate)
    if k > 0:
        new = np.column_stack([np.zeros(k), rng.uniform(0, width, size=k)])
        pos = np.vstack([pos, new])
        age = np.concatenate([age, np.zeros(k, dtype=int)])
        ids = np.append(ids, np.arange(next_id, next_id + k))
        next_id += k
    # drift + diffusion, reflecting walls at y = 0, y = width and at the inlet
    pos += np.array([drift, 0.0]) * dt + np.sqrt(2 * D * dt) * rng.standard_normal(pos.shape)
    pos[:, 1] = np.abs(pos[:, 1])
    pos[:, 1] = np.where(pos[:, 1] > width, 2 * width - pos[:, 1], pos[:, 1])
    pos[:, 0] = np.abs(pos[:, 0])
    age += 1
    # absorbed at the outlet x = length
    out = np.nonzero(pos[:, 0] >= length)[0]
    if len(out):
        exit_ages.extend(age[out].tolist())
        absorbed += len(out)
        pos = np.delete(pos, out, axis=0)
        age = np.delete(age, out)
        ids = np.delete(ids, out)
    # first-order decay
    alive = rng.random(len(pos)) >= decay_prob
    decayed += int(np.sum(~alive))
    pos, age, ids = pos[alive], age[alive], ids[alive]
    counts.append(len(pos))

exit_ages = np.array(exit_ages)
profile, edges = np.histogram(pos[:, 0], bins=10, range=(0, length))
print(f"{next_id} born, {absorbed} absorbed, {decayed} decayed, {len(pos)} alive "
      f"(mean over the last half {sum(counts[n_steps // 2:]) / (n_steps - n_steps // 2):.1f})")
if len(exit_ages):
    print(f"transit time {exit_ages.mean() * dt:.3f} +- {exit_ages.std() * dt:.3f} "
          f"(plug flow {length / drift:.3f}), oldest alive id {ids[np.argmax(age)] if len(ids) else -1}")
print("density profile along the channel:", profile.tolist())
"""


def _injected_particles(n_steps: int, birth_rate: float) -> dict:
    return {"np": np, "n_steps": n_steps, "birth_rate": birth_rate, "dt": 0.01, "D": 0.05,
            "drift": 1.0, "width": 1.0, "length": 2.0, "decay_prob": 0.002}


# -- Jake VanderPlas, "Understanding the FFT Algorithm": DFT_slow as a complex matrix product and a
# recursive Cooley-Tukey FFT with a base case, checked with assert np.allclose against np.fft.fft,
# a ValueError caught for a bad length, then used to multiply two big integers (carries with // and %)
FFT_RECURSIVE = """\
import math

def DFT_slow(x):
    '''Compute the discrete Fourier Transform of the 1D array x'''
    x = np.asarray(x, dtype=complex)
    N = x.shape[0]
    n = np.arange(N)
    k = n.reshape((N, 1))
    M = np.exp(-2j * np.pi * k * n / N)
    return np.dot(M, x)

def FFT(x):
    '''A recursive implementation of the 1D Cooley-Tukey FFT'''
    x = np.asarray(x, dtype=complex)
    N = x.shape[0]
    if N % 2 > 0:
        raise ValueError("size of x must be a power of 2")
    elif N <= 32:  # this cutoff should be optimized
        return DFT_slow(x)
    else:
        X_even = FFT(x[::2])
        X_odd = FFT(x[1::2])
        factor = np.exp(-2j * np.pi * np.arange(N) / N)
        return np.concatenate([X_even + factor[:N // 2] * X_odd,
                               X_even + factor[N // 2:] * X_odd])

def IFFT(X):
    return np.conj(FFT(np.conj(X))) / len(X)

x = np.random.default_rng(0).random(n_check)
assert np.allclose(DFT_slow(x[:64]), np.fft.fft(x[:64]))
assert np.allclose(FFT(x), np.fft.fft(x))
try:
    FFT(np.ones(100))
except ValueError as e:
    print("FFT(np.ones(100)):", e)

# big-integer multiplication: digits least significant first, convolution by FFT
n = 1
while n < len(a_digits) + len(b_digits):
    n *= 2
A = FFT(np.pad(a_digits, (0, n - len(a_digits))))
B = FFT(np.pad(b_digits, (0, n - len(b_digits))))
conv = np.rint(IFFT(A * B).real).astype(int)
digits = []
carry = 0
for c in conv.tolist():
    carry += c
    digits.append(carry % 10)
    carry //= 10
while carry:
    digits.append(carry % 10)
    carry //= 10
while len(digits) > 1 and digits[-1] == 0:
    digits.pop()
product = "".join(str(d) for d in reversed(digits))
a_int = int("".join(map(str, a_digits[::-1].tolist())))
b_int = int("".join(map(str, b_digits[::-1].tolist())))
assert product == str(a_int * b_int)
max_round_off = float(np.max(np.abs(IFFT(A * B).real - conv)))
print(f"{len(a_digits)}-digit x {len(b_digits)}-digit product has {len(product)} digits: "
      f"{product[:12]}...{product[-12:]}, FFT size {n}, max round-off {max_round_off:.2e}")
"""


def _fft_recursive(n_check: int, n_digits: int) -> dict:
    r = _rng(31)
    a = r.integers(0, 10, size=n_digits)
    b = r.integers(0, 10, size=n_digits - 7)
    a[-1] = 7
    b[-1] = 3
    return {"np": np, "n_check": n_check, "a_digits": a, "b_digits": b}


# -- Romberg integration (Richardson extrapolation of the trapezoid rule), vectorised over a family
# of integrands exp(-a x^2) on [0, 1]: the table is a list of lists of arrays, the refinement loop
# stops on a float() of the change of the diagonal; np.trapezoid as a check and np.polyfit in h^2
ROMBERG = """\
import math

f = lambda x: np.exp(-alpha[:, None] * x ** 2)   # one row per parameter
lo, hi = 0.0, 1.0
exact = np.array([0.5 * math.sqrt(math.pi / a) * math.erf(math.sqrt(a)) for a in alpha])

h = hi - lo
R = [[0.5 * h * (f(np.array([lo]))[:, 0] + f(np.array([hi]))[:, 0])]]
k = 0
while True:
    k += 1
    h /= 2
    mid = lo + h * np.arange(1, 2 ** k, 2)
    row = [0.5 * R[k - 1][0] + h * f(mid).sum(axis=1)]
    for j in range(1, k + 1):
        row.append(row[j - 1] + (row[j - 1] - R[k - 1][j - 1]) / (4 ** j - 1))
    R.append(row)
    change = float(np.max(np.abs(R[k][k] - R[k - 1][k - 1])))
    if change < tol or k == kmax:
        break

x = np.linspace(lo, hi, 2 ** k + 1)
assert np.allclose(np.trapezoid(f(x), x, axis=1), R[k][0])
for j, col in enumerate(R[k]):
    print(f"R[{k},{j}]: max error {np.max(np.abs(col - exact)):.2e}")

# the same extrapolation: a cubic in h^2 through the last trapezoid values, evaluated at h = 0
hs = (hi - lo) / 2.0 ** np.arange(k + 1)
T = np.array([r[0] for r in R])              # (k + 1, m)
last = min(4, k + 1)
coef = np.polyfit(hs[-last:] ** 2, T[-last:], deg=last - 1)
extrap = coef[-1]                            # the constant term
worst = int(np.argmax(alpha))
p_worst = np.polyfit(hs[-last:] ** 2, T[-last:, worst], deg=last - 1)
print(f"{k + 1} levels, last change {change:.2e}; polyfit extrapolation error "
      f"{np.max(np.abs(extrap - exact)):.2e}, at a = {alpha[worst]:.1f}: {np.polyval(p_worst, 0.0) - exact[worst]:+.2e}")
"""


def _romberg(m: int) -> dict:
    return {"np": np, "alpha": np.linspace(0.1, 12.0, m).copy(), "tol": 1e-12, "kmax": 12}


# -- spectral analysis of a noisy recording: Welch's method with a generator yielding overlapping
# segments, rfft of a Hann-windowed segment, peak picking by argsort, complex phasors of the tones,
# a frequency-domain band-pass with irfft; np.set_printoptions for the printed arrays
WELCH_DENOISE = """\
np.set_printoptions(precision=3, suppress=True)

def segments(x, nperseg, overlap=0.5):
    step = int(nperseg * (1 - overlap))
    for start in range(0, len(x) - nperseg + 1, step):
        yield x[start:start + nperseg]

window = np.hanning(nperseg)
scale = 1.0 / (fs * np.sum(window ** 2))
psd = np.zeros(nperseg // 2 + 1)
n_seg = 0
for seg in segments(x, nperseg):
    seg = seg - seg.mean()
    S = np.fft.rfft(seg * window)
    psd += scale * np.abs(S) ** 2
    n_seg += 1
psd /= n_seg
psd[1:-1] *= 2                      # one-sided spectrum
freqs = np.fft.rfftfreq(nperseg, d=1 / fs)

# the three strongest local maxima
is_peak = np.r_[False, (psd[1:-1] > psd[:-2]) & (psd[1:-1] > psd[2:]), False]
cand = np.nonzero(is_peak)[0]
top = np.sort(cand[np.argsort(psd[cand])[::-1][:3]])
print(f"{n_seg} segments of {nperseg} samples")
print("peak frequencies (Hz):", freqs[top])
print("peak PSD:", psd[top])
print(f"variance {x.var():.3f}, integrated PSD {np.trapezoid(psd, freqs):.3f}")

# amplitude and phase of each tone from the full-record spectrum (phasors)
X = np.fft.rfft(x)
f_all = np.fft.rfftfreq(len(x), d=1 / fs)
tones = {}
for f0 in freqs[top]:
    near = np.flatnonzero(np.abs(f_all - f0) < bandwidth)
    b = near[np.argmax(np.abs(X[near]))]
    phasor = 2 * X[b] / len(x)
    tones[round(float(f_all[b]), 1)] = phasor
    print(f"{f_all[b]:7.2f} Hz: amplitude {abs(phasor):.3f}, phase {np.angle(phasor, deg=True):+7.1f} deg")

# keep narrow bands around the peaks, zero the rest
mask = np.zeros(len(f_all), dtype=bool)
for f0 in freqs[top]:
    mask |= np.abs(f_all - f0) < bandwidth
y = np.fft.irfft(X * mask, n=len(x))
snr = lambda s: 10 * np.log10(np.sum(clean ** 2) / np.sum((s - clean) ** 2))
print(f"kept {mask.sum()} of {len(mask)} bins, SNR {snr(x):.1f} dB -> {snr(y):.1f} dB")
print("first samples, clean vs filtered:", np.vstack([clean[:5], y[:5]]))
np.set_printoptions(precision=8, suppress=False)
"""


def _welch_denoise(n: int, nperseg: int) -> dict:
    r = _rng(8)
    fs = 1000.0
    t = np.arange(n) / fs
    clean = (1.0 * np.sin(2 * np.pi * 50 * t + 0.3) + 0.6 * np.sin(2 * np.pi * 123 * t - 1.1)
             + 0.3 * np.cos(2 * np.pi * 310 * t))
    x = clean + 0.8 * r.standard_normal(n)
    return {"np": np, "x": x, "clean": clean, "fs": fs, "nperseg": nperseg, "bandwidth": 3.0}


# -- normal modes of a chain of masses and springs between two walls: a dataclass holding the
# arrays with methods, np.linalg.eigh of the mass-normalised stiffness, asserts against the uniform
# chain's closed form and np.linalg.eigvals of M^-1 K, a default-argument array, modal superposition
SPRING_MODES = """\
from dataclasses import dataclass

@dataclass
class SpringChain:
    '''n masses joined by n + 1 springs, fixed walls at both ends'''
    m: np.ndarray
    k: np.ndarray

    def stiffness(self):
        off = -self.k[1:-1]
        return np.diag(self.k[:-1] + self.k[1:]) + np.diag(off, 1) + np.diag(off, -1)

    def modes(self):
        s = 1.0 / np.sqrt(self.m)
        w2, V = np.linalg.eigh(s[:, None] * self.stiffness() * s[None, :])
        return np.sqrt(w2), s[:, None] * V          # mode shapes, M-orthonormal

n = len(masses)
uniform = SpringChain(np.ones(n), np.ones(n + 1))
omega_u, _ = uniform.modes()
j = np.arange(1, n + 1)
assert np.allclose(omega_u, 2 * np.sin(j * np.pi / (2 * (n + 1)))), "uniform chain"

chain = SpringChain(masses, springs)
omega, Phi = chain.modes()
M = np.diag(chain.m)
K = chain.stiffness()
assert np.allclose(Phi.T @ M @ Phi, np.eye(n))
assert np.allclose(np.sort(np.linalg.eigvals(np.linalg.solve(M, K)).real), omega ** 2)

def pluck(n, where=np.array([0.3, 0.7]), amp=1.0, halfwidth=0.15):
    '''initial displacement: triangles centred at the fractions `where` of the chain'''
    x = np.linspace(0, 1, n + 2)[1:-1]
    u = np.zeros(n)
    for c in where:
        u += amp * np.maximum(0, 1 - np.abs(x - c) / halfwidth)
    return u

u0 = pluck(n)
q0 = Phi.T @ M @ u0                         # modal coordinates
t = np.linspace(0, t_end, n_t)
U = (Phi * q0) @ np.cos(np.outer(omega, t))
V = -(Phi * q0 * omega) @ np.sin(np.outer(omega, t))
energy = 0.5 * np.sum(chain.m[:, None] * V ** 2, axis=0) + 0.5 * np.sum(U * (K @ U), axis=0)
share = q0 ** 2 * omega ** 2 / np.sum(q0 ** 2 * omega ** 2)
print(f"{n} masses, frequencies {omega[0] / (2 * np.pi):.4f} .. {omega[-1] / (2 * np.pi):.4f}, "
      f"energy drift {np.ptp(energy) / energy[0]:.1e}")
for rank, i in enumerate(np.argsort(share)[::-1][:3]):
    nodes = int(np.sum(np.diff(np.sign(Phi[:, i])) != 0))
    print(f"  #{rank + 1}: mode {i + 1} ({nodes} nodes), f = {omega[i] / (2 * np.pi):.4f}, energy share {share[i]:.1%}")
print(f"max displacement of the middle mass {np.max(np.abs(U[n // 2])):.3f}")
"""


def _spring_modes(n: int, n_t: int) -> dict:
    r = _rng(9)
    return {"np": np, "masses": r.uniform(0.5, 2.0, n), "springs": r.uniform(0.8, 1.5, n + 1),
            "t_end": 50.0, "n_t": n_t}


# -- a four-state weather Markov chain simulated day by day with Generator.choice(p=...), a
# transition count matrix, a dict of monthly count arrays updated in the loop (// and %), the
# stationary distribution from np.linalg.eig of P.T, spell lengths from np.diff, matrix_power
WEATHER_MARKOV = """\
states = ["sunny", "cloudy", "rainy", "stormy"]
rng = np.random.default_rng(3)
ns = len(states)
state = 0
path = [state]
counts = np.zeros((ns, ns), dtype=int)
monthly = {s: np.zeros(12, dtype=int) for s in states}
for day in range(n_days):
    nxt = rng.choice(ns, p=P[state])
    counts[state, nxt] += 1
    monthly[states[nxt]][day // 30 % 12] += 1
    state = nxt
    path.append(state)
path = np.array(path)

P_hat = counts / counts.sum(axis=1, keepdims=True)
w, V = np.linalg.eig(P.T)
i1 = np.argmin(np.abs(w - 1))
pi = np.real(V[:, i1])
pi /= pi.sum()
assert np.allclose(pi @ P, pi)
freq = np.bincount(path, minlength=ns) / len(path)

# spells: maximal runs of the same state
ends = np.r_[np.nonzero(np.diff(path))[0], len(path) - 1]
lengths = np.diff(np.r_[-1, ends])
spells = {s: lengths[path[ends] == i] for i, s in enumerate(states)}
for i, s in enumerate(states):
    L = spells[s]
    mean_spell = L.mean() if len(L) else float("nan")
    print(f"{s:>7}: stationary {pi[i]:.3f}, observed {freq[i]:.3f}, "
          f"mean spell {mean_spell:.2f} days (theory {1 / (1 - P[i, i]):.2f}), longest {max(L, default=0)}")
print("estimated transition matrix:")
print(np.round(P_hat, 3))
print("P^10 row 0:", np.round(np.linalg.matrix_power(P, 10)[0], 4), "second eigenvalue modulus",
      round(float(sorted(np.abs(w))[-2]), 4))
wettest = max(range(12), key=lambda mth: monthly["rainy"][mth] + monthly["stormy"][mth])
print(f"wettest month {wettest + 1}: {monthly['rainy'][wettest]} rainy and {monthly['stormy'][wettest]} stormy days")
"""


def _weather_markov(n_days: int) -> dict:
    P = np.array([[0.60, 0.25, 0.12, 0.03],
                  [0.30, 0.40, 0.25, 0.05],
                  [0.20, 0.30, 0.40, 0.10],
                  [0.10, 0.30, 0.40, 0.20]])
    return {"np": np, "P": P, "n_days": n_days}


# -- item-based collaborative filtering on a ratings matrix (a recommender-systems tutorial):
# one rating per user held out with Generator.choice, cosine similarity under np.errstate, top-k
# neighbours by argsort and fancy assignment, a loop over users with enumerate, a dict of lists
ITEM_TOPK = """\
import math

rng = np.random.default_rng(21)
R_train = R.copy()
test_item = np.zeros(len(R), dtype=int)
test_rating = np.zeros(len(R))
for u in range(len(R)):
    rated = np.nonzero(R[u])[0]
    i = rng.choice(rated)
    test_item[u], test_rating[u] = i, R[u, i]
    R_train[u, i] = 0

norms = np.linalg.norm(R_train, axis=0)
with np.errstate(divide="ignore", invalid="ignore"):
    S = (R_train.T @ R_train) / np.outer(norms, norms)
S = np.nan_to_num(S)
np.fill_diagonal(S, 0.0)

# keep the k most similar items of each item
nbrs = np.argsort(-S, axis=1)[:, :k_nbrs]
rows = np.arange(S.shape[0])[:, None]
S_k = np.zeros_like(S)
S_k[rows, nbrs] = S[rows, nbrs]

popularity = np.count_nonzero(R_train, axis=0)
recs = {}
hits = pop_hits = 0
sq_err = []
for u, row in enumerate(R_train):
    rated = row > 0
    score = S_k[:, rated] @ row[rated]
    weight = np.abs(S_k[:, rated]).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        pred = np.where(weight > 0, score / weight, row[rated].mean())
    sq_err.append((pred[test_item[u]] - test_rating[u]) ** 2)
    score[rated] = -np.inf
    recs[u] = np.argsort(score)[::-1][:top_n].tolist()
    hits += test_item[u] in recs[u]
    pop_rank = np.argsort(np.where(rated, -1, popularity))[::-1][:top_n]
    pop_hits += test_item[u] in pop_rank.tolist()

n_users = len(R)
print(f"hit rate@{top_n}: item-kNN {hits / n_users:.3f}, popularity {pop_hits / n_users:.3f}")
print(f"RMSE of held-out ratings {math.sqrt(sum(sq_err) / len(sq_err)):.3f}")
print(f"user 0 rated {int(np.count_nonzero(R_train[0]))} items, recommended {sorted(recs[0])}")
"""


def _item_topk(n_users: int, n_items: int) -> dict:
    r = _rng(22)
    U = r.normal(size=(n_users, 3))
    V = r.normal(size=(n_items, 3))
    full = np.clip(np.rint(3 + U @ V.T + 0.5 * r.normal(size=(n_users, n_items))), 1, 5)
    p_seen = 0.05 + 0.3 * np.linspace(1, 0, n_items) ** 2
    seen = r.random((n_users, n_items)) < p_seen
    seen[np.arange(n_users), r.integers(0, n_items, n_users)] = True
    seen[np.arange(n_users), r.integers(0, n_items, n_users)] = True
    seen[:, 0] = True
    return {"np": np, "R": np.where(seen, full, 0.0), "k_nbrs": 20, "top_n": 10}


# -- a genetic algorithm for the 0/1 knapsack problem: integer bit-string population, roulette-
# wheel selection with Generator.choice(p=...), single-point crossover by np.where on a cut mask,
# bit-flip mutation with ^, elitism through argsort and np.vstack; checked against the exact DP
GA_KNAPSACK = """\
rng = np.random.default_rng(11)
n_items = len(weights)

def fitness(pop):
    w = pop @ weights
    v = pop @ values
    return np.where(w <= capacity, v, v - 3 * (w - capacity) * values.max())

pop = (rng.random((pop_size, n_items)) < 0.15).astype(int)
best_fit, best_ind = -np.inf, None
history = []
for gen in range(n_gen):
    fit = fitness(pop)
    g = int(np.argmax(fit))
    if fit[g] > best_fit:
        best_fit, best_ind = fit[g], pop[g].copy()
    history.append(max(fit))
    elite = pop[np.argsort(fit)[-n_elite:]]
    prob = fit - fit.min() + 1.0
    prob = prob / prob.sum()
    n_children = pop_size - n_elite
    parents = rng.choice(pop_size, size=(n_children, 2), p=prob)
    cut = rng.integers(1, n_items, size=n_children)
    mask = np.arange(n_items) < cut[:, None]
    children = np.where(mask, pop[parents[:, 0]], pop[parents[:, 1]])
    children = children ^ (rng.random(children.shape) < p_mut)
    pop = np.vstack([elite, children])

# exact answer by dynamic programming over the capacity
best = np.zeros(capacity + 1)
for w, v in zip(weights.tolist(), values.tolist()):
    best[w:] = np.maximum(best[w:], best[:-w] + v)
optimum = best[capacity]
chosen = list(np.nonzero(best_ind)[0])
print(f"GA best value {best_fit} (weight {best_ind @ weights}/{capacity}), DP optimum {optimum:.0f}, "
      f"gap {1 - best_fit / optimum:.2%}")
print(f"{len(chosen)} items chosen: {chosen[:10]}{'...' if len(chosen) > 10 else ''}")
print("best fitness every 10 generations:", [int(h) for h in history[::10]])
"""


def _ga_knapsack(n_items: int, pop_size: int, n_gen: int) -> dict:
    r = _rng(12)
    weights = r.integers(5, 40, size=n_items)
    values = (weights * r.uniform(0.5, 1.5, n_items)).astype(int) + r.integers(1, 10, n_items)
    return {"np": np, "weights": weights, "values": values, "capacity": int(weights.sum() // 3),
            "pop_size": pop_size, "n_gen": n_gen, "n_elite": 2, "p_mut": 0.01}


# -- Hamming(7,4) codes and CRC-8 on packets of bytes: nibbles by >> and &, parity by ^, codewords
# packed with << and |, single-bit errors injected with a shifted mask, syndrome decoding with
# np.where, a bitwise CRC vectorised over packets, a table-driven CRC in plain Python as a check
HAMMING_CRC = """\
rng = np.random.default_rng(13)

def hamming_encode(nib):
    d1, d2, d3, d4 = nib & 1, (nib >> 1) & 1, (nib >> 2) & 1, (nib >> 3) & 1
    p1 = d1 ^ d2 ^ d4
    p2 = d1 ^ d3 ^ d4
    p3 = d2 ^ d3 ^ d4
    # bit i of the codeword is position i + 1: p1 p2 d1 p3 d2 d3 d4
    return p1 | (p2 << 1) | (d1 << 2) | (p3 << 3) | (d2 << 4) | (d3 << 5) | (d4 << 6)

def hamming_decode(cw):
    bit = lambda i: (cw >> (i - 1)) & 1
    s1 = bit(1) ^ bit(3) ^ bit(5) ^ bit(7)
    s2 = bit(2) ^ bit(3) ^ bit(6) ^ bit(7)
    s3 = bit(4) ^ bit(5) ^ bit(6) ^ bit(7)
    syndrome = s1 | (s2 << 1) | (s3 << 2)       # the position of a single flipped bit, 0 if none
    fixed = np.where(syndrome > 0, cw ^ (1 << np.maximum(syndrome - 1, 0)), cw)
    data = ((fixed >> 2) & 1) | (((fixed >> 4) & 1) << 1) | (((fixed >> 5) & 1) << 2) | (((fixed >> 6) & 1) << 3)
    return data, syndrome

def crc8(packets, poly=0x07):
    '''CRC-8 (polynomial x^8 + x^2 + x + 1, init 0) of each row, bit by bit'''
    crc = np.zeros(len(packets), dtype=np.int64)
    for col in range(packets.shape[1]):
        crc ^= packets[:, col]
        for _ in range(8):
            crc = np.where(crc & 0x80, (crc << 1) ^ poly, crc << 1) & 0xFF
    return crc

check = crc8(np.frombuffer(b"123456789", dtype=np.uint8).astype(np.int64)[None, :])
assert check.item() == 0xF4, hex(check.item())
table = crc8(np.arange(256)[:, None])

def crc8_table(data):
    c = 0
    for b in data:
        c = int(table[c ^ b])
    return c

msg = packets.astype(np.int64)
crc_sent = crc8(msg)
assert [crc8_table(p) for p in msg[:8].tolist()] == crc_sent[:8].tolist()

# every byte travels as two 7-bit codewords; the channel flips one bit with probability p1
# and a second one with probability p2
cw = np.stack([hamming_encode(msg & 0x0F), hamming_encode(msg >> 4)])
flip1 = (rng.random(cw.shape) < p1).astype(np.int64) << rng.integers(0, 7, size=cw.shape)
flip2 = (rng.random(cw.shape) < p2).astype(np.int64) << rng.integers(0, 7, size=cw.shape)
rx = cw ^ flip1 ^ flip2
data, syndrome = hamming_decode(rx)
decoded = data[0] | (data[1] << 4)
assert np.array_equal(hamming_decode(cw)[0][0], msg & 0x0F)

bad_packets = np.any(decoded != msg, axis=1)
crc_fail = crc8(decoded) != crc_sent
raw_bit_errors = sum(bin(v).count("1") for v in (flip1 ^ flip2).ravel().tolist())
print(f"{msg.size} bytes in {len(msg)} packets, {raw_bit_errors} bit errors on the channel, "
      f"{np.count_nonzero(syndrome)} codewords corrected")
print(f"{bad_packets.sum()} packets still wrong after decoding, CRC flags {crc_fail.sum()}, "
      f"missed {np.sum(bad_packets & ~crc_fail)}, false alarms {np.sum(crc_fail & ~bad_packets)}")
print("first CRCs:", [f"{c:02x}" for c in crc_sent[:6].tolist()])
"""


def _hamming_crc(n_packets: int, packet_len: int) -> dict:
    r = _rng(14)
    return {"np": np, "packets": r.integers(0, 256, size=(n_packets, packet_len), dtype=np.uint8),
            "p1": 0.05, "p2": 0.01}


# -- Runge-Kutta-Fehlberg 4(5) with step-size control on the Arenstorf orbit (Hairer, Norsett &
# Wanner's test problem): a Butcher tableau as arrays, while t < T with step rejection, the error
# from a float() of an inf-norm, the solution grown with np.append / np.vstack, a Jacobi-constant check
RKF45_ARENSTORF = """\
mu = 0.012277471
mu1 = 1 - mu

def f(t, y):
    x, yy, vx, vy = y
    D1 = ((x + mu) ** 2 + yy ** 2) ** 1.5
    D2 = ((x - mu1) ** 2 + yy ** 2) ** 1.5
    ax = x + 2 * vy - mu1 * (x + mu) / D1 - mu * (x - mu1) / D2
    ay = yy - 2 * vx - mu1 * yy / D1 - mu * yy / D2
    return np.array([vx, vy, ax, ay])

c = np.array([0, 1 / 4, 3 / 8, 12 / 13, 1, 1 / 2])
A = np.array([[0, 0, 0, 0, 0],
              [1 / 4, 0, 0, 0, 0],
              [3 / 32, 9 / 32, 0, 0, 0],
              [1932 / 2197, -7200 / 2197, 7296 / 2197, 0, 0],
              [439 / 216, -8, 3680 / 513, -845 / 4104, 0],
              [-8 / 27, 2, -3544 / 2565, 1859 / 4104, -11 / 40]])
b4 = np.array([25 / 216, 0, 1408 / 2565, 2197 / 4104, -1 / 5, 0])
b5 = np.array([16 / 135, 0, 6656 / 12825, 28561 / 56430, -9 / 50, 2 / 55])

t, y = 0.0, y0.copy()
h = 1e-4
ts = np.array([t])
Y = y0[None, :]
n_rejected = 0
while t < T:
    h = min(h, T - t)
    K = np.zeros((6, len(y)))
    for i in range(6):
        K[i] = f(t + c[i] * h, y + h * (A[i, :i] @ K[:i]))
    err = h * float(np.linalg.norm((b5 - b4) @ K, ord=np.inf))
    scale = atol + rtol * float(np.max(np.abs(y)))
    if err <= scale:
        t += h
        y = y + h * (b5 @ K)                  # local extrapolation: continue with the 5th-order solution
        ts = np.append(ts, t)
        Y = np.vstack([Y, y])
    else:
        n_rejected += 1
    h *= min(4.0, max(0.1, 0.9 * (scale / max(err, 1e-300)) ** 0.2))

def jacobi(Y):
    x, yy, vx, vy = Y.T
    r1 = np.sqrt((x + mu) ** 2 + yy ** 2)
    r2 = np.sqrt((x - mu1) ** 2 + yy ** 2)
    return x ** 2 + yy ** 2 + 2 * mu1 / r1 + 2 * mu / r2 - vx ** 2 - vy ** 2

C = jacobi(Y)
dist_moon = np.hypot(Y[:, 0] - mu1, Y[:, 1])
steps = np.diff(ts)
print(f"{len(ts) - 1} accepted steps, {n_rejected} rejected, h in [{steps.min():.2e}, {steps.max():.2e}]")
print(f"closure error after one period {np.linalg.norm(Y[-1, :2] - y0[:2]):.2e}, "
      f"Jacobi constant drift {np.max(np.abs(C - C[0])):.2e}")
print(f"closest approach to the moon {dist_moon.min():.4f} at t = {ts[np.argmin(dist_moon)]:.3f}")
"""


def _rkf45_arenstorf(rtol: float) -> dict:
    y0 = np.array([0.994, 0.0, 0.0, -2.00158510637908252240537862224])
    return {"np": np, "y0": y0, "T": 17.0652165601579625588917206249, "rtol": rtol, "atol": rtol * 1e-2}


# -- Princeton's "Percolation" assignment (Sedgewick & Wayne) in NumPy: open random sites in the
# order of rng.permutation until the top connects to the bottom, weighted union-find with a recursive
# find and path compression on an int array, divmod, the threshold estimate with a 95% interval
PERCOLATION_UF = """\
import math

def find(parent, i):
    if parent[i] != i:
        parent[i] = find(parent, parent[i])      # path compression
    return parent[i]

def union(parent, size, a, b):
    ra, rb = find(parent, a), find(parent, b)
    if ra == rb:
        return
    if size[ra] < size[rb]:
        ra, rb = rb, ra
    parent[rb] = ra
    size[ra] += size[rb]

rng = np.random.default_rng(2)
N = n * n
TOP, BOTTOM = N, N + 1
thresholds = []
largest = []
for trial in range(n_trials):
    parent = np.arange(N + 2)
    size = np.ones(N + 2, dtype=int)
    is_open = np.zeros((n, n), dtype=bool)
    for count, site in enumerate(rng.permutation(N), start=1):
        r, c = divmod(int(site), n)
        is_open[r, c] = True
        if r == 0:
            union(parent, size, site, TOP)
        if r == n - 1:
            union(parent, size, site, BOTTOM)
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < n and 0 <= cc < n and is_open[rr, cc]:
                union(parent, size, site, rr * n + cc)
        if find(parent, TOP) == find(parent, BOTTOM):
            thresholds.append(count / N)
            break
    roots = np.array([find(parent, i) for i in np.flatnonzero(is_open)])
    _, cluster_sizes = np.unique(roots, return_counts=True)
    largest.append(cluster_sizes.max() / N)

thresholds = np.array(thresholds)
mean = thresholds.mean()
std = thresholds.std(ddof=1) if len(thresholds) > 1 else float("nan")
half = 1.96 * std / math.sqrt(len(thresholds))
print(f"{n}x{n} grid, {n_trials} trials: p* = {mean:.4f} +- {half:.4f} (std {std:.4f}; "
      f"median {sorted(thresholds)[len(thresholds) // 2]:.4f}; site percolation 0.5927)")
print(f"largest cluster at percolation: {sum(largest) / len(largest):.3f} of the sites")
"""


def _percolation_uf(n: int, n_trials: int) -> dict:
    return {"np": np, "n": n, "n_trials": n_trials}


# -- a Leslie-matrix population model (an ecology course): a dict of scenarios, each analysed in a
# loop with np.linalg.eig (growth rate, stable age distribution, reproductive values, sensitivity
# and elasticity), R0 from the fundamental matrix under try/except LinAlgError (a plus group makes
# I - T singular), projections, and a stochastic environment drawn with Generator.choice
LESLIE = """\
def leslie(f, s, plus_group=0.0):
    n = len(f)
    L = np.zeros((n, n))
    L[0, :] = f
    L[np.arange(1, n), np.arange(n - 1)] = s
    L[-1, -1] = plus_group
    return L

scenarios = {
    "baseline": leslie(fec, surv),
    "juvenile protection": leslie(fec, np.minimum(surv * np.r_[1.25, 1.25, np.ones(len(surv) - 2)], 0.95)),
    "adult harvest": leslie(fec, surv * np.r_[1.0, 1.0, np.full(len(surv) - 2, 0.8)]),
    "plus group": leslie(fec, surv, plus_group=1.0),
}
results = {}
for name, L in scenarios.items():
    w, V = np.linalg.eig(L)
    i = np.argmax(np.abs(w))
    lam = w[i].real
    stable = np.abs(V[:, i].real)
    stable /= stable.sum()
    wl, U = np.linalg.eig(L.T)
    v = np.abs(U[:, np.argmax(np.abs(wl))].real)
    v /= v[0]                                      # reproductive value, newborns = 1
    S = np.outer(v, stable) / (v @ stable)          # sensitivity d lambda / d a_ij
    E = S * L / lam                                 # elasticity
    F = np.zeros_like(L)
    F[0] = L[0]
    T_ = L - F
    try:
        N_fund = np.linalg.inv(np.eye(len(L)) - T_)
        R0 = float(np.max(np.abs(np.linalg.eigvals(F @ N_fund))))
        life_exp = N_fund[:, 0].sum()
    except np.linalg.LinAlgError:
        R0, life_exp = float("inf"), float("inf")
    n_t = n0.copy()
    total = [n_t.sum()]
    for year in range(years):
        n_t = L @ n_t
        total.append(n_t.sum())
    results[name] = {"lambda": lam, "R0": R0, "stable": stable, "elasticity": E, "total": np.array(total)}
    print(f"{name:>20}: lambda {lam:.4f}, R0 {R0:.3f}, life expectancy {life_exp:.2f}, "
          f"N after {years} years {total[-1] / total[0]:.3g} x, largest elasticity at {tuple(map(int, np.unravel_index(np.argmax(E), E.shape)))}")

# stochastic environment: good and bad years for fecundity
rng = np.random.default_rng(4)
good, bad = leslie(fec * 1.3, surv), leslie(fec * 0.4, surv * 0.9)
env = rng.choice(2, size=stoch_years, p=[0.7, 0.3])
n_t = results["baseline"]["stable"].copy()
log_growth = []
for e in env:
    n_next = (good if e == 0 else bad) @ n_t
    log_growth.append(np.log(n_next.sum() / n_t.sum()))
    n_t = n_next / n_next.sum()
log_growth = np.array(log_growth)
lam_mean_env = max(abs(np.linalg.eigvals(0.7 * good + 0.3 * bad)))
print(f"stochastic log growth {log_growth.mean():+.4f} +- {log_growth.std() / np.sqrt(len(env)):.4f}, "
      f"log lambda of the mean matrix {np.log(lam_mean_env):+.4f}")
print("stable age distribution:", np.round(results["baseline"]["stable"], 3).tolist())
"""


def _leslie(n_ages: int, years: int, stoch_years: int) -> dict:
    r = _rng(15)
    fec = np.r_[0.0, 0.0, r.uniform(0.6, 1.8, n_ages - 2)]
    surv = np.r_[0.35, 0.55, r.uniform(0.7, 0.85, n_ages - 3)]
    n0 = r.integers(50, 200, n_ages).astype(float)
    return {"np": np, "fec": fec, "surv": surv, "n0": n0, "years": years, "stoch_years": stoch_years}


# -- histogram matching of an RGB image to a reference (Gonzalez & Woods; scikit-image's
# match_histograms): per-channel CDFs from np.bincount, a look-up table from np.searchsorted,
# the quantile version with np.unique(return_inverse, return_counts) and np.interp, a dict of LUTs
HIST_MATCH = """\
np.set_printoptions(precision=3)

def cdf(channel):
    hist = np.bincount(channel.ravel(), minlength=256)
    c = np.cumsum(hist).astype(float)
    return c / c[-1]

matched = np.empty_like(source)
luts = {}
w1 = {}
for ch, name in enumerate("RGB"):
    src, ref = source[..., ch], reference[..., ch]
    src_cdf, ref_cdf = cdf(src), cdf(ref)
    # for each source level, the first reference level whose CDF reaches the source CDF
    lut = np.clip(np.searchsorted(ref_cdf, src_cdf, side="left"), 0, 255).astype(np.uint8)
    matched[..., ch] = lut[src]
    luts[name] = lut
    # the quantile-interpolation version
    values, inverse, counts = np.unique(src.ravel(), return_inverse=True, return_counts=True)
    ref_values, ref_counts = np.unique(ref.ravel(), return_counts=True)
    src_q = np.cumsum(counts) / src.size
    ref_q = np.cumsum(ref_counts) / ref.size
    interp = np.interp(src_q, ref_q, ref_values)[inverse].reshape(src.shape)
    # Wasserstein-1 distance between the level distributions = L1 distance of the CDFs
    w1[name] = (np.abs(src_cdf - ref_cdf).sum(), np.abs(cdf(matched[..., ch]) - ref_cdf).sum())
    print(f"{name}: mean {src.mean():6.2f} -> {matched[..., ch].mean():6.2f} (reference {ref.mean():6.2f}), "
          f"W1 {w1[name][0]:.2f} -> {w1[name][1]:.2f}, LUT vs interp {np.abs(interp - matched[..., ch]).mean():.3f}, "
          f"max level {lut.max().item()}")
    print("  LUT every 32 levels:", lut[::32])

gray_src = source @ np.array([0.299, 0.587, 0.114])
gray_out = matched @ np.array([0.299, 0.587, 0.114])
print("contrast (std) before/after/reference:",
      np.array([gray_src.std(), gray_out.std(), (reference @ np.array([0.299, 0.587, 0.114])).std()]))
np.set_printoptions(precision=8)
"""


def _hist_match(n: int) -> dict:
    r = _rng(16)
    yy, xx = np.mgrid[0:n, 0:n] / n
    base = np.clip(0.5 + 0.3 * np.sin(6 * xx) * np.cos(4 * yy) + 0.1 * r.standard_normal((n, n)), 0, 1)
    src = np.stack([base ** 2.2 * 0.5, base ** 2.0 * 0.45, base ** 1.8 * 0.4], axis=-1)
    source = np.clip(src * 255 + 10, 0, 255).astype(np.uint8)
    ref = np.stack([r.beta(2, 2, (n, n)), r.beta(3, 2, (n, n)), r.beta(2, 3, (n, n))], axis=-1)
    reference = np.clip(ref * 255, 0, 255).astype(np.uint8)
    return {"np": np, "source": source, "reference": reference}


# -- random walks on the square lattice: a generator yields snapshots of all walkers, a 2-D
# histogram of the positions against the Gaussian limit on an np.meshgrid (with the lattice's parity
# by astype(int) % 2), the mean squared displacement, np.gradient and np.polyfit for D
WALK_HIST2D = """\
def walk_snapshots(rng, n_walkers, n_steps, every):
    '''lattice random walks; yields (step, positions) every `every` steps'''
    moves = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]])
    pos = np.zeros((n_walkers, 2), dtype=int)
    for step in range(1, n_steps + 1):
        pos = pos + moves[rng.integers(0, 4, size=n_walkers)]
        if step % every == 0:
            yield step, pos.copy()

R = int(4 * np.sqrt(n_steps / 2)) + 2
edges = np.arange(-R - 0.5, R + 1.5)
centers = 0.5 * (edges[1:] + edges[:-1])
X, Y = np.meshgrid(centers, centers, indexing="ij")
parity = (X + Y).astype(int) % 2

times, msd, l1_err, outside = [], [], [], []
for step, pos in walk_snapshots(np.random.default_rng(5), n_walkers, n_steps, every):
    H, _, _ = np.histogram2d(pos[:, 0], pos[:, 1], bins=[edges, edges])
    P = H / n_walkers
    s2 = step / 2                       # variance per axis
    G = np.exp(-(X ** 2 + Y ** 2) / (2 * s2)) / (2 * np.pi * s2) * 2
    G[parity != step % 2] = 0           # only sites with x + y of the step's parity are reachable
    times.append(step)
    msd.append(float(np.mean(np.sum(pos ** 2, axis=1))))
    l1_err.append(float(np.abs(P - G).sum()))
    outside.append(n_walkers - int(H.sum()))

times = np.array(times)
msd = np.array(msd)
D_local = np.gradient(msd, times) / 4          # MSD = 4 D t in two dimensions
slope, intercept = np.polyfit(times, msd, 1)
r = np.hypot(X, Y)
radial, _ = np.histogram(r, bins=8, range=(0, R), weights=P)
print(f"{n_walkers} walkers, {n_steps} steps: D = {slope / 4:.4f} (exact 0.25), "
      f"local D in [{D_local.min():.3f}, {D_local.max():.3f}], intercept {intercept:+.2f}")
print(f"L1 distance to the Gaussian limit: {l1_err[0]:.3f} -> {l1_err[-1]:.3f}, walkers outside the grid {max(outside)}")
print("probability per radial shell at the end:", [round(p, 4) for p in radial.tolist()])
"""


def _walk_hist2d(n_walkers: int, n_steps: int) -> dict:
    return {"np": np, "n_walkers": n_walkers, "n_steps": n_steps, "every": max(1, n_steps // 10)}


# -- Kepler's equation E - e sin E = M on an (e, M) grid three ways: vectorised bisection under
# while np.any(...), the secant method with np.errstate and an isfinite guard, Newton stopping on
# a float() of the residual's inf-norm; then true anomalies, np.gradient and np.trapezoid checks
KEPLER_ROOTS = """\
ee, MM = np.meshgrid(ecc, M, indexing="ij")
F = lambda E: E - ee * np.sin(E) - MM

# bisection on [0, 2 pi]
lo = np.zeros_like(MM)
hi = np.full_like(MM, 2 * np.pi)
n_bisect = 0
while np.any(hi - lo > tol):
    mid = 0.5 * (lo + hi)
    right = F(mid) > 0
    hi = np.where(right, mid, hi)
    lo = np.where(right, lo, mid)
    n_bisect += 1
E_bis = 0.5 * (lo + hi)

# secant from E0 = M, E1 = M + e sin M
E0, E1 = MM.copy(), MM + ee * np.sin(MM)
active = np.ones(MM.shape, dtype=bool)
n_secant = 0
with np.errstate(divide="ignore", invalid="ignore"):
    while np.any(active) and n_secant < 50:
        f0, f1 = F(E0), F(E1)
        E2 = E1 - f1 * (E1 - E0) / (f1 - f0)
        E2 = np.where(np.isfinite(E2), E2, E1)
        active = np.abs(E2 - E1) > tol
        E0, E1 = E1, E2
        n_secant += 1
E_sec = E1

# Newton, starting from pi for the very eccentric orbits
E = np.where(ee > 0.8, np.pi, MM)
n_newton = 0
while float(np.linalg.norm(F(E).ravel(), np.inf)) > tol:
    E = E - F(E) / (1 - ee * np.cos(E))
    n_newton += 1
assert np.allclose(E, E_bis, atol=1e-9) and np.allclose(E, E_sec, atol=1e-9)

nu = 2 * np.arctan2(np.sqrt(1 + ee) * np.sin(E / 2), np.sqrt(1 - ee) * np.cos(E / 2))
r = 1 - ee * np.cos(E)                                  # a = 1
dEdM = np.gradient(E, M, axis=1)
mean_r = np.trapezoid(r, M, axis=1) / (2 * np.pi)
print(f"{MM.size} equations: bisection {n_bisect} steps, secant {n_secant}, Newton {n_newton}")
rel = np.abs(dEdM * r - 1)[ecc <= 0.5, 1:-1]
print(f"max relative error of dE/dM = 1/(1 - e cos E) for e <= 0.5: {np.max(rel):.2e}, "
      f"time-averaged r vs 1 + e^2/2: {np.max(np.abs(mean_r - (1 + ecc ** 2 / 2))):.2e}")
for k in np.linspace(0, len(ecc) - 1, 3).astype(int):
    print(f"  e = {ecc[k]:.2f}: true anomaly at M = pi/2 is {np.degrees(nu[k, len(M) // 4]):.3f} deg")
"""


def _kepler_roots(n_e: int, n_m: int) -> dict:
    return {"np": np, "ecc": np.linspace(0.0, 0.9, n_e), "M": np.linspace(0, 2 * np.pi, n_m), "tol": 1e-12}


PROGRAMS += [
    Program("mm1_events", MM1_EVENTS, _mm1_events, {"tiny": dict(n_customers=20), "small": dict(n_customers=300)}),
    Program("injected_particles", INJECTED_PARTICLES, _injected_particles,
            {"tiny": dict(n_steps=20, birth_rate=3.0), "small": dict(n_steps=250, birth_rate=5.0)}),
    Program("fft_recursive", FFT_RECURSIVE, _fft_recursive, {"tiny": dict(n_check=64, n_digits=20),
                                                             "small": dict(n_check=1024, n_digits=300)}),
    Program("romberg_family", ROMBERG, _romberg, {"tiny": dict(m=5), "small": dict(m=300)}),
    Program("welch_denoise", WELCH_DENOISE, _welch_denoise, {"tiny": dict(n=512, nperseg=128),
                                                             "small": dict(n=20000, nperseg=512)}),
    Program("spring_modes", SPRING_MODES, _spring_modes, {"tiny": dict(n=6, n_t=20), "small": dict(n=60, n_t=400)}),
    Program("weather_markov", WEATHER_MARKOV, _weather_markov, {"tiny": dict(n_days=60), "small": dict(n_days=730)}),
    Program("item_topk", ITEM_TOPK, _item_topk, {"tiny": dict(n_users=10, n_items=8),
                                                 "small": dict(n_users=200, n_items=80)}),
    Program("ga_knapsack", GA_KNAPSACK, _ga_knapsack, {"tiny": dict(n_items=10, pop_size=10, n_gen=5),
                                                       "small": dict(n_items=40, pop_size=60, n_gen=100)}),
    Program("hamming_crc", HAMMING_CRC, _hamming_crc, {"tiny": dict(n_packets=10, packet_len=4),
                                                       "small": dict(n_packets=1000, packet_len=16)}),
    Program("rkf45_arenstorf", RKF45_ARENSTORF, _rkf45_arenstorf, {"tiny": dict(rtol=1e-3), "small": dict(rtol=1e-7)}),
    Program("percolation_uf", PERCOLATION_UF, _percolation_uf, {"tiny": dict(n=5, n_trials=2),
                                                                "small": dict(n=16, n_trials=6)}),
    Program("leslie_scenarios", LESLIE, _leslie, {"tiny": dict(n_ages=4, years=5, stoch_years=10),
                                                  "small": dict(n_ages=8, years=100, stoch_years=500)}),
    Program("hist_match", HIST_MATCH, _hist_match, {"tiny": dict(n=16), "small": dict(n=128)}),
    Program("walk_hist2d", WALK_HIST2D, _walk_hist2d, {"tiny": dict(n_walkers=50, n_steps=10),
                                                       "small": dict(n_walkers=2000, n_steps=200)}),
    Program("kepler_roots", KEPLER_ROOTS, _kepler_roots, {"tiny": dict(n_e=4, n_m=9), "small": dict(n_e=40, n_m=101)}),
]

# -- a fourth batch, by a helper agent (2026-12-06, twentieth session): idioms the programs above lack
# (np.digitize, np.correlate, np.lexsort, stable sorts, take/put_along_axis, maximum.at/minimum.at, cholesky and
# slogdet, tril/triu, ndindex/ndenumerate, itertools.product, apply_along_axis, np.unwrap, rng.shuffle,
# multivariate_normal, functools.lru_cache with a `global` counter, `while True` ... `break`, Counter/defaultdict)
# -- 1. Kaggle EDA of an insurance data set: age bands by np.digitize, per-band means and rates by
# np.bincount with weights, a defaultdict(list) summary with %-formatted rows, a cross-tab from a
# combined bincount index, a weighted np.histogram, np.quantile / np.median / np.percentile along axes
AGE_BANDS = """\
from collections import defaultdict

age_edges = np.array([18, 25, 35, 45, 55, 65])
labels = ["18-24", "25-34", "35-44", "45-54", "55-64", "65+"]
band = np.digitize(age, age_edges) - 1
counts = np.bincount(band, minlength=len(labels))
mean_charge = np.bincount(band, weights=charges, minlength=len(labels)) / np.maximum(counts, 1)
smoker_rate = np.bincount(band, weights=smoker.astype(float), minlength=len(labels)) / np.maximum(counts, 1)

summary = defaultdict(list)
for b, lab in enumerate(labels):
    sel = charges[band == b]
    if sel.size == 0:
        continue
    q1, med, q3 = np.percentile(sel, [25, 50, 75])
    summary["band"].append(lab)
    summary["median"].append(med)
    summary["iqr"].append(q3 - q1)
    print("%-6s n=%4d  mean=%9.2f  median=%9.2f  IQR=%8.2f  smokers=%4.1f%%"
          % (lab, counts[b], mean_charge[b], med, q3 - q1, 100 * smoker_rate[b]))

# BMI categories (underweight / normal / overweight / obese), right-closed intervals
bmi_cat = np.digitize(bmi, [18.5, 25.0, 30.0], right=True)
crosstab = np.bincount(band * 4 + bmi_cat, minlength=len(labels) * 4).reshape(len(labels), 4)
print("age band x BMI category counts:")
print(crosstab)

# mean charge per BMI bin from a weighted histogram
w_hist, bmi_edges = np.histogram(bmi, bins=12, range=(15, 51), weights=charges)
n_hist, _ = np.histogram(bmi, bins=bmi_edges)
with np.errstate(invalid="ignore", divide="ignore"):
    mean_by_bmi = w_hist / n_hist
print("mean charge by BMI bin:", np.round(mean_by_bmi[n_hist > 0], 1))

# monthly claims: quantiles across customers per month, each customer's median month
month_q = np.quantile(claims, [0.1, 0.5, 0.9], axis=0)
cust_median = np.median(claims, axis=1)
cap = np.percentile(claims, 95, axis=1, keepdims=True)
capped = np.minimum(claims, cap)
spread = (month_q[2] - month_q[0]) / month_q[1]
print(f"busiest month {int(np.argmax(month_q[1])) + 1}, widest spread {spread.max():.3f}, "
      f"capping removed {100 * (1 - capped.sum() / claims.sum()):.2f}% of claims")
top_decile = cust_median >= np.quantile(cust_median, 0.9)
print(f"top-decile customers: {top_decile.sum()} with median monthly claim >= {cust_median[top_decile].min():.2f}")
"""


def _age_bands(n: int) -> dict:
    r = _rng(41)
    age = r.integers(18, 80, n)
    bmi = np.clip(r.normal(30.0, 6.0, n), 14.0, 55.0)
    smoker = r.random(n) < 0.2
    charges = 1500 + 240 * age + 350 * np.clip(bmi - 30, 0, None) + 21000 * smoker + r.gamma(2.0, 1500.0, n)
    claims = r.gamma(1.5, 200.0, (n, 12)) * (1 + (age[:, None] - 18) / 60)
    return {"np": np, "age": age, "bmi": bmi, "smoker": smoker, "charges": charges, "claims": claims}


# -- 2. Gaussian-process regression as in Rasmussen & Williams, Algorithm 2.1: np.linalg.cholesky and
# triangular solves, the log marginal likelihood over an itertools.product grid of hyperparameters,
# np.linalg.slogdet as a check, posterior draws by rng.multivariate_normal
GP_GRID = """\
import itertools

f_true = lambda x: np.sin(3 * x) + 0.3 * x

def rbf(A, B, ell, sf):
    d2 = np.sum(A ** 2, axis=1)[:, None] + np.sum(B ** 2, axis=1)[None, :] - 2 * A @ B.T
    return sf ** 2 * np.exp(-0.5 * np.maximum(d2, 0.0) / ell ** 2)

def fit(ell, sf, sn):
    K = rbf(X, X, ell, sf) + sn ** 2 * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    lml = -0.5 * y @ alpha - np.log(np.diag(L)).sum() - 0.5 * len(X) * np.log(2 * np.pi)
    return L, alpha, lml

grid = list(itertools.product(ells, sfs, sns))
scores = np.empty(len(grid))
best_lml, best = -np.inf, None
for i, (ell, sf, sn) in enumerate(grid):
    _, _, scores[i] = fit(ell, sf, sn)
    if scores[i] > best_lml:
        best_lml, best = scores[i], (ell, sf, sn)
ell, sf, sn = best
print(f"best of {len(grid)}: ell={ell:.3f} sf={sf:.2f} sn={sn:.3f}  log ML {best_lml:.3f}")
table = scores.reshape(len(ells), len(sfs), len(sns))
print("log ML, best over sf and sn, by length scale:", np.round(table.max(axis=(1, 2)), 2))

L, alpha, _ = fit(ell, sf, sn)
K = L @ L.T
sign, logdet = np.linalg.slogdet(K)
print(f"log det: cholesky {2 * np.log(np.diag(L)).sum():.8f}, slogdet {logdet:.8f} (sign {sign:+.0f})")

Ks = rbf(Xs, X, ell, sf)
mu = Ks @ alpha
V = np.linalg.solve(L, Ks.T)
cov = rbf(Xs, Xs, ell, sf) - V.T @ V
std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
err = mu - f_true(Xs[:, 0])
inside = np.abs(err) < 2 * std
print(f"test RMSE {np.sqrt(np.mean(err ** 2)):.4f}, 2-sigma band covers {inside.mean():.0%}")

rng = np.random.default_rng(0)
draws = rng.multivariate_normal(mu, cov + sn ** 2 * np.eye(len(Xs)), size=n_draws, method="cholesky")
print("noisy posterior draws at x=0:", np.round(draws[:, np.argmin(np.abs(Xs[:, 0]))], 3))
"""


def _gp_grid(n: int, n_test: int, n_ell: int) -> dict:
    r = _rng(42)
    x = np.sort(r.uniform(-3, 3, n))
    y = np.sin(3 * x) + 0.3 * x + 0.1 * r.standard_normal(n)
    return {"np": np, "X": x[:, None], "y": y, "Xs": np.linspace(-3.5, 3.5, n_test)[:, None],
            "ells": np.geomspace(0.1, 2.0, n_ell), "sfs": np.array([0.5, 1.0, 2.0]), "sns": np.array([0.05, 0.1, 0.3]),
            "n_draws": 3}


# -- 3. A software-defined-radio notebook: the delay of a known pulse by np.correlate ("valid" and
# "full"), smoothing by np.convolve ("valid", "same"), IQ demodulation by np.exp(-2j pi fc t), a complex
# low-pass filter, np.angle / np.unwrap for the carrier offset, block phases from a list comprehension
IQ_DELAY = """\
t = np.arange(len(rx)) / fs
# 1. where is the known pulse? cross-correlation
xc = np.correlate(rx, pulse, mode="valid")
lag = int(np.argmax(np.abs(xc)))
print(f"pulse found at sample {lag} ({lag / fs * 1e3:.2f} ms), peak {xc[lag]:.2f}")
full = np.correlate(rx[:4 * len(pulse)], pulse, mode="full")
auto = np.correlate(pulse, pulse, mode="full")
print(f"autocorrelation peak {auto.max():.3f} at lag {int(np.argmax(auto)) - (len(pulse) - 1)}, "
      f"full-mode length {len(full)}")

# 2. smoothing: moving average and a Hann-window envelope
ma = np.convolve(rx, np.ones(9) / 9, mode="valid")
win = np.hanning(33)
win /= win.sum()
envelope = np.convolve(np.abs(rx), win, mode="same")
print(f"moving average {len(ma)} samples, envelope max {envelope.max():.3f} at {int(np.argmax(envelope))}")

# 3. IQ demodulation: mix down, low-pass, instantaneous phase and frequency
iq = rx * np.exp(-2j * np.pi * fc * t)
taps = np.sinc(2 * 0.05 * (np.arange(41) - 20)) * np.hamming(41)
taps /= taps.sum()
bb = np.convolve(iq, taps, mode="same")
wrapped = np.angle(bb)
phase = np.unwrap(wrapped)
inst_f = np.diff(phase) * fs / (2 * np.pi)
strong = np.abs(bb[1:]) > 0.5 * np.abs(bb).max()
print(f"carrier offset estimate {np.median(inst_f[strong]):+.2f} Hz (true {f_off:+.2f}), "
      f"phase wraps removed {int(np.sum(np.abs(np.diff(wrapped)) > np.pi))}")
blocks = [bb[i:i + block] for i in range(0, len(bb) - block + 1, block)]
block_phase = np.unwrap(np.array([np.angle(b.mean()) for b in blocks]))
rate = np.polyfit(np.arange(len(blocks)) * block / fs, block_phase, 1)[0] / (2 * np.pi)
print("block phases (rad):", np.round(block_phase[:6], 3), f"-> offset {rate:+.3f} Hz")
"""


def _iq_delay(n: int, m: int, block: int) -> dict:
    r = _rng(43)
    fs, fc, f_off = 8000.0, 1000.0, 3.5
    t = np.arange(n) / fs
    pulse = r.choice([-1.0, 1.0], size=m) * np.hanning(m)
    rx = (1 + 0.3 * np.sin(2 * np.pi * 2.0 * t)) * np.cos(2 * np.pi * (fc + f_off) * t + 0.3) \
        + 0.2 * r.standard_normal(n)
    delay = n // 3
    rx[delay:delay + m] += 3 * pulse
    return {"np": np, "rx": rx, "pulse": pulse, "fs": fs, "fc": fc, "f_off": f_off, "block": block}


# -- 4. A contest leaderboard: each team's best submission by np.lexsort, disqualified teams out by
# np.isin, ties broken by two argsorts with kind="stable", "1224" ranks by np.searchsorted, dense
# ranks by np.unique(return_inverse), collections.Counter, np.setdiff1d, medal zones by np.digitize
LEADERBOARD = """\
from collections import Counter

# each team's best submission: sort by team, then score (descending), then submission time
order = np.lexsort((sub_time, -score, team))
team_s, score_s, time_s = team[order], score[order], sub_time[order]
first = np.ones(len(order), dtype=bool)
first[1:] = team_s[1:] != team_s[:-1]
best_team, best_score, best_time = team_s[first], score_s[first], time_s[first]

# disqualified teams out
ok = ~np.isin(best_team, banned)
print(f"{len(best_team)} teams, {int((~ok).sum())} disqualified, {len(score)} submissions")
best_team, best_score, best_time = best_team[ok], best_score[ok], best_time[ok]

# the board: score descending, ties to the earlier submission (two stable sorts)
by_time = np.argsort(best_time, kind="stable")
rank_order = by_time[np.argsort(-best_score[by_time], kind="stable")]
board_team = best_team[rank_order]
board_score = best_score[rank_order]
board_time = best_time[rank_order]
comp_rank = np.searchsorted(-board_score, -board_score, side="left") + 1
_, dense = np.unique(board_score, return_inverse=True)
dense_rank = dense.max() - dense + 1
sorted_all = np.sort(score, kind="stable")
beats = np.searchsorted(sorted_all, board_score, side="left") / len(score)
for i in range(min(5, len(board_team))):
    print(f"{comp_rank[i]:>3} ({dense_rank[i]:>2})  team {board_team[i]:>4}  {board_score[i]:.3f}  "
          f"t={board_time[i]:>6}  beats {beats[i]:.1%}")

# activity: submissions per team, the most active, teams never above the baseline
per_team = Counter(team.tolist())
most_active = per_team.most_common(3)
teams, n_subs = np.unique(team, return_counts=True)
assert all(per_team[t] == c for t, c in zip(teams.tolist(), n_subs.tolist()))
below = np.setdiff1d(teams, team[score > baseline])
print("most active:", most_active, "| never above baseline:", len(below))
ties = np.unique(board_score, return_counts=True)[1]
print("tied groups on the board:", int((ties > 1).sum()), "largest", int(ties.max()))
# medal zones: top 10% gold, 20% silver, 40% bronze
cut = np.ceil(np.array([0.1, 0.2, 0.4]) * len(board_team)).astype(int)
medal = np.digitize(comp_rank, cut, right=True)
print("medals (gold, silver, bronze, none):", np.bincount(medal, minlength=4))
"""


def _leaderboard(n_subs: int, n_teams: int) -> dict:
    r = _rng(44)
    team = r.integers(0, n_teams, n_subs)
    skill = r.normal(0.7, 0.05, n_teams)
    score = np.round(np.clip(skill[team] + r.normal(0.0, 0.03, n_subs), 0, 1), 3)
    sub_time = r.integers(0, 100_000, n_subs)
    banned = r.choice(n_teams, size=max(1, n_teams // 20), replace=False)
    return {"np": np, "team": team, "score": score, "sub_time": sub_time, "banned": banned, "baseline": 0.7}


# -- 5. Top-k recommendations from a factor model: a "seen" mask by np.put_along_axis, np.argpartition
# then np.take_along_axis and a stable argsort of the candidates, argmax with keepdims, precision@k
# and NDCG@k by broadcasting, catalogue coverage by np.bincount, a popularity-penalised re-rank
RECSYS_TOPK = """\
scores = U @ V.T                                   # users x items
seen = np.zeros(scores.shape, dtype=bool)
np.put_along_axis(seen, rated, True, axis=1)
masked = np.where(seen, -np.inf, scores)

# top-k per user: argpartition, then sort only the k candidates
cand = np.argpartition(-masked, k, axis=1)[:, :k]
cand_scores = np.take_along_axis(masked, cand, axis=1)
order = np.argsort(-cand_scores, axis=1, kind="stable")
topk = np.take_along_axis(cand, order, axis=1)
topk_scores = np.take_along_axis(cand_scores, order, axis=1)

best = np.argmax(masked, axis=1, keepdims=True)
best_score = np.take_along_axis(masked, best, axis=1)[:, 0]
assert np.allclose(best_score, topk_scores[:, 0])

# precision@k and NDCG@k against the held-out items
hit = (topk[:, :, None] == heldout[:, None, :]).any(axis=2)
precision = hit.mean(axis=1)
discount = 1.0 / np.log2(np.arange(2, k + 2))
ndcg = (hit * discount).sum(axis=1) / discount[:min(k, heldout.shape[1])].sum()
print(f"precision@{k} {precision.mean():.4f}, NDCG@{k} {ndcg.mean():.4f}, users with a hit {np.mean(hit.any(axis=1)):.1%}")

rec_counts = np.bincount(topk.ravel(), minlength=scores.shape[1])
coverage = np.count_nonzero(rec_counts) / scores.shape[1]
top_items = np.argsort(rec_counts, kind="stable")[::-1][:5]
print(f"catalogue coverage {coverage:.1%}; most recommended {top_items.tolist()} ({rec_counts[top_items].tolist()} times)")

# re-rank for diversity: penalise popular items, a full stable sort per user
penalised = masked - alpha * np.log1p(rec_counts)[None, :]
div_topk = np.argsort(-penalised, axis=1, kind="stable")[:, :k]
changed = (div_topk != topk).any(axis=1)
in_div = (div_topk == best).any(axis=1)
rank_of_best = np.where(in_div, np.argmax(div_topk == best, axis=1), k)
print(f"re-rank changed {changed.mean():.1%} of the lists; the old best item at mean rank {rank_of_best.mean():.2f}")
"""


def _recsys(n_users: int, n_items: int, f: int, k: int) -> dict:
    r = _rng(45)
    U = r.normal(0, 1, (n_users, f)) / np.sqrt(f)
    pop = r.normal(0, 1, (n_items, f))
    pop[:, 0] += np.linspace(2, -1, n_items)          # some items are popular with everyone
    V = pop / np.sqrt(f)
    n_rated, n_held = max(2, n_items // 20), max(2, n_items // 80)
    prefs = U @ V.T + 0.5 * r.standard_normal((n_users, n_items))
    picks = np.argsort(-prefs, axis=1)[:, :n_rated + n_held]
    return {"np": np, "U": U, "V": V, "rated": picks[:, n_held:], "heldout": picks[:, :n_held], "k": k,
            "alpha": 0.05}


# -- 6. A graph network from scratch (the PyG idiom without PyG): message passing with np.add.at and
# np.maximum.at, node degrees by np.bincount, graph readouts by segment sum / max, a logistic head
# as a class with ``self.w -= lr * ...``, hop distances by np.minimum.at relaxations in ``while True``
GNN_SCATTER = """\
class GraphConv:
    def __init__(self, d_in, d_out, rng):
        scale = 1.0 / np.sqrt(d_in)
        self.W_self = rng.normal(0.0, scale, (d_in, d_out))
        self.W_nbr = rng.normal(0.0, scale, (d_in, d_out))

    def __call__(self, h, src, dst):
        n = h.shape[0]
        msg = h[src] @ self.W_nbr
        agg_sum = np.zeros((n, msg.shape[1]))
        np.add.at(agg_sum, dst, msg)
        agg_max = np.full((n, msg.shape[1]), -np.inf)
        np.maximum.at(agg_max, dst, msg)
        agg_max[np.isneginf(agg_max)] = 0.0          # isolated nodes
        deg = np.bincount(dst, minlength=n)
        return np.maximum(h @ self.W_self + agg_sum / np.maximum(deg, 1)[:, None] + agg_max, 0.0)

class Readout:
    def __init__(self, d):
        self.w = np.zeros(d)
        self.b = 0.0

    def step(self, H, y, lr):
        p = 1.0 / (1.0 + np.exp(-(H @ self.w + self.b)))
        self.w -= lr * H.T @ (p - y) / len(y)
        self.b -= lr * float(np.mean(p - y))
        return float(-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))

rng = np.random.default_rng(7)
layers = [GraphConv(feats.shape[1], hidden, rng), GraphConv(hidden, hidden, rng)]
h = feats
for layer in layers:
    h = layer(h, src, dst)

# graph-level readout: segment mean and max over each graph's nodes
sizes = np.bincount(graph_id, minlength=n_graphs)
g_sum = np.zeros((n_graphs, hidden))
np.add.at(g_sum, graph_id, h)
g_max = np.full((n_graphs, hidden), -np.inf)
np.maximum.at(g_max, graph_id, h)
H = np.concatenate([g_sum / sizes[:, None], g_max], axis=1)
H = (H - H.mean(axis=0)) / (H.std(axis=0) + 1e-8)

head = Readout(H.shape[1])
losses = [head.step(H, labels, 0.5) for _ in range(epochs)]
acc = np.mean(((H @ head.w + head.b) > 0) == labels)
print(f"{n_graphs} graphs, {len(src)} edges: loss {losses[0]:.4f} -> {losses[-1]:.4f}, train accuracy {acc:.3f}")

# hop distances from each graph's first node: Bellman-Ford relaxations
dist = np.full(len(graph_id), np.inf)
dist[np.searchsorted(graph_id, np.arange(n_graphs))] = 0.0
rounds = 0
while True:
    new = dist.copy()
    np.minimum.at(new, dst, dist[src] + 1.0)
    rounds += 1
    if np.array_equal(new, dist):
        break
    dist = new
reach = np.isfinite(dist)
print(f"relaxation rounds {rounds}, reachable {reach.mean():.1%}, mean hops {dist[reach].mean():.3f}, "
      f"max hops {int(dist[reach].max())}")
"""


def _gnn(n_graphs: int, nodes_per: int, edges_per: int, d: int, hidden: int, epochs: int) -> dict:
    r = _rng(46)
    sizes = r.integers(max(2, nodes_per // 2), nodes_per * 3 // 2 + 1, n_graphs)
    graph_id = np.repeat(np.arange(n_graphs), sizes)
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    n_nodes = len(graph_id)
    m = edges_per * n_nodes // 2
    a = r.integers(0, n_nodes, m)
    g = graph_id[a]
    b = start[g] + r.integers(0, 1 << 30, m) % sizes[g]
    keep = a != b
    src = np.concatenate([a[keep], b[keep]])
    dst = np.concatenate([b[keep], a[keep]])
    feats = r.normal(0, 1, (n_nodes, d))
    labels = (np.bincount(graph_id, weights=feats[:, 0]) / sizes > 0).astype(float)
    return {"np": np, "feats": feats, "src": src, "dst": dst, "graph_id": graph_id, "labels": labels,
            "n_graphs": n_graphs, "hidden": hidden, "epochs": epochs}


# -- 7. A combinatorics exercise: binomials by a functools.lru_cache recursion counting its calls in a
# ``global``, the Pascal matrix from a nested list comprehension, np.tril / np.triu, np.indices,
# np.linalg.det, np.trace, np.kron, Lucas' theorem by // and % digit loops, the Sierpinski triangle
PASCAL_LRU = """\
import functools

calls = 0

@functools.lru_cache(maxsize=None)
def binom(n, k):
    global calls
    calls += 1
    if k == 0 or k == n:
        return 1
    return binom(n - 1, k - 1) + binom(n - 1, k)

# lower-triangular Pascal matrix from the memoised recursion
Lp = np.array([[binom(i, j) if j <= i else 0 for j in range(N)] for i in range(N)], dtype=np.int64)
assert np.array_equal(Lp, np.tril(Lp)) and not np.triu(Lp, 1).any()
print(f"{N}x{N} Pascal matrix: binom called {calls} times, {binom.cache_info().hits} cache hits")

# the symmetric Pascal matrix S = L L^T has S[i, j] = C(i + j, i) and determinant 1
m = min(N, 12)
S = Lp[:m, :m] @ Lp[:m, :m].T
i, j = np.indices((m, m))
assert all(S[a, b] == binom(a + b, a) for a, b in zip(i.ravel().tolist(), j.ravel().tolist()))
print("det S = %.6f, trace S = %d, det L = %.1f"
      % (np.linalg.det(S.astype(float)), np.trace(S), np.linalg.det(Lp[:m, :m].astype(float))))

# the inverse of L: the same entries with alternating signs
ii, jj = np.indices(Lp.shape)
signs = np.where((ii - jj) % 2 == 0, 1, -1)
Linv = signs * Lp
assert np.array_equal(Lp[:m, :m] @ Linv[:m, :m], np.eye(m, dtype=np.int64))

# the 2-D Pascal matrix as a Kronecker product
K = np.kron(Lp[:4, :4], Lp[:4, :4])
print("kron(L4, L4): shape", K.shape, "row sums", K.sum(axis=1))

# Lucas' theorem: C(n, k) mod p is the product of the base-p digits' binomials
for p in (2, 3, 5, 7):
    digit_table = np.array([[binom(x, y) if y <= x else 0 for y in range(p)] for x in range(p)])
    n_d, k_d = ii.copy(), jj.copy()
    lucas = np.ones_like(Lp)
    while n_d.any():
        lucas = lucas * digit_table[n_d % p, k_d % p] % p
        n_d //= p
        k_d //= p
    assert np.array_equal(lucas, Lp % p * (jj <= ii)), p

# the Sierpinski triangle: Pascal's triangle mod 2, row by row
rows = np.zeros((depth, depth), dtype=np.int64)
row = np.zeros(depth, dtype=np.int64)
row[0] = 1
for r in range(depth):
    rows[r] = row
    row[1:] = (row[1:] + row[:-1]) % 2
odd_per_row = rows.sum(axis=1)
popcount = np.zeros(depth, dtype=np.int64)
bits = np.arange(depth)
while bits.any():
    popcount += bits % 2
    bits = bits // 2
assert np.array_equal(odd_per_row, 2 ** popcount)
print(f"Sierpinski depth {depth}: {rows.sum()} odd entries, density {rows.sum() / (depth * (depth + 1) / 2):.4f}, "
      f"binom calls {calls}")
"""


def _pascal(N: int, depth: int) -> dict:
    return {"np": np, "N": N, "depth": depth}


# -- 8. An econometrics course's OLS by hand: np.linalg.qr with signs fixed, np.triu, a %-formatted
# coefficient table, np.linalg.lstsq, leverages and Cook's distance, np.trace of the hat matrix,
# np.linalg.det, variance inflation factors with np.delete, a refit without the influential rows
OLS_QR = """\
n, p = X.shape
names = ["const"] + [f"x{j}" for j in range(1, p + 1)]
A = np.column_stack([np.ones(n), X])
Q, R = np.linalg.qr(A)
s = np.sign(np.diag(R))                 # make diag(R) positive
Q, R = Q * s, R * s[:, None]
assert np.allclose(R, np.triu(R)) and np.allclose(Q.T @ Q, np.eye(p + 1))
beta = np.linalg.solve(R, Q.T @ y)
beta_ls, rss_ls, rank, sv = np.linalg.lstsq(A, y, rcond=None)
resid = y - A @ beta
dof = n - p - 1
s2 = resid @ resid / dof
R_inv = np.linalg.inv(R)
se = np.sqrt(np.diag(s2 * R_inv @ R_inv.T))
tstat = beta / se
r2 = 1 - resid @ resid / np.sum((y - y.mean()) ** 2)
adj_r2 = 1 - (1 - r2) * (n - 1) / dof
print("%-6s %10s %9s %8s" % ("", "coef", "std err", "t"))
for name, b, e, t in zip(names, beta, se, tstat):
    print("%-6s %10.4f %9.4f %8.2f" % (name, b, e, t))
print("R^2 = %.4f, adj. R^2 = %.4f, rank %d, QR agrees with lstsq: %s"
      % (r2, adj_r2, rank, np.allclose(beta, beta_ls)))

# influence: leverages are the row norms of Q; the hat matrix has trace p + 1
lev = np.sum(Q ** 2, axis=1)
print("trace of the hat matrix %.6f (p + 1 = %d), det(A'A) = %.4e, cond(A) = %.2f"
      % (np.trace(Q.T @ Q), p + 1, np.linalg.det(A.T @ A), sv[0] / sv[-1]))
cooks = resid ** 2 / ((p + 1) * s2) * lev / (1 - lev) ** 2
flagged = np.flatnonzero(cooks > 4 / n)
worst = flagged[np.argsort(cooks[flagged], kind="stable")[::-1][:3]]
print("influential rows:", len(flagged), "worst", worst.tolist(), np.round(cooks[worst], 4))

# variance inflation factors: each regressor on the others
vif = np.empty(p)
for j in range(1, p + 1):
    others = np.delete(A, j, axis=1)
    coef = np.linalg.lstsq(others, A[:, j], rcond=None)[0]
    e = A[:, j] - others @ coef
    vif[j - 1] = np.sum((A[:, j] - A[:, j].mean()) ** 2) / (e @ e)
print("VIF:", np.round(vif, 2))

keep = np.ones(n, dtype=bool)
keep[flagged] = False
beta_robust = np.linalg.lstsq(A[keep], y[keep], rcond=None)[0]
print("coefficient shift without them:", np.round(beta_robust - beta, 4))
"""


def _ols(n: int, p: int) -> dict:
    r = _rng(48)
    Z = r.standard_normal((n, p))
    Z[:, 1] = 0.8 * Z[:, 0] + 0.6 * Z[:, 1]          # two collinear regressors
    X = Z * np.arange(1, p + 1) + np.arange(p)
    y = 1.5 + X @ np.linspace(-1, 1, p) + r.standard_normal(n)
    out = r.choice(n, size=max(2, n // 100), replace=False)
    y[out] += 8 * r.standard_normal(len(out))
    return {"np": np, "X": X, "y": y}


# -- 9. A mechanics textbook's rigid body: centre of mass and the inertia tensor by np.einsum with
# three operands, np.trace and np.linalg.eigh, torques by np.cross on arrays of vectors, torque-free
# rotation by Euler's equations and Rodrigues rotations, np.vstack growing a path, np.stack of a list
RIGID_BODY = """\
def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])

def rodrigues(w, dt):
    angle = np.linalg.norm(w) * dt
    K = skew(w / np.linalg.norm(w))
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)

com = np.einsum("i,ij->j", m, r) / m.sum()
rc = r - com
r2 = np.einsum("ij,ij->i", rc, rc)
I = np.einsum("i,i,jk->jk", m, r2, np.eye(3)) - np.einsum("i,ij,ik->jk", m, rc, rc)
moments, axes = np.linalg.eigh(I)
print(f"trace I = {np.trace(I):.4f} (2 sum m r^2 = {2 * np.dot(m, r2):.4f}), principal moments {np.round(moments, 4)}")

tau = np.cross(rc, F).sum(axis=0)
print("net torque", np.round(tau, 4), "| net force", np.round(F.sum(axis=0), 4))

# torque-free rotation in the principal frame
I_body = np.diag(moments)
omega = omega0.copy()
Rot = axes.copy()
L_world = []
E = []
tip = np.empty((0, 3))
for step in range(nsteps):
    Lb = I_body @ omega
    omega = omega + dt * np.linalg.solve(I_body, np.cross(Lb, omega))
    Rot = Rot @ rodrigues(omega, dt)
    L_world.append(Rot @ (I_body @ omega))
    E.append(0.5 * omega @ I_body @ omega)
    if step % 10 == 0:
        tip = np.vstack([tip, Rot @ (axes.T @ rc[0])])
L_world = np.stack(L_world)
E = np.array(E)
drift = np.linalg.norm(L_world - L_world[0], axis=1).max() / np.linalg.norm(L_world[0])
print(f"{nsteps} steps: |L| drift {drift:.3e}, energy drift {abs(E[-1] / E[0] - 1):.3e}, "
      f"tip path {len(tip)} points, spread {np.ptp(tip, axis=0).round(3)}")
vol = np.dot(rc[0], np.cross(rc[1], rc[2]))
print(f"signed volume {vol:.5f} = det {np.linalg.det(rc[:3]):.5f}")
"""


def _rigid(n: int, nsteps: int) -> dict:
    r = _rng(49)
    return {"np": np, "m": r.uniform(0.5, 2.0, n), "r": r.normal(0, 1, (n, 3)) * [1.0, 0.6, 0.3],
            "F": r.normal(0, 1, (n, 3)), "omega0": np.array([0.3, 1.0, 0.2]), "dt": 0.01, "nsteps": nsteps}


# -- 10. An image-processing course: a naive 2-D convolution over np.ndindex with every np.pad mode
# (constant with constant_values through **kwargs), the 1-D statistic modes, a results dict, border
# masks with ~, local maxima by an np.ndenumerate scan of a -inf framed image
PAD_CONV = """\
def conv2d_naive(img, kernel, mode, **kw):
    kh, kw_ = kernel.shape
    padded = np.pad(img, ((kh // 2, kh // 2), (kw_ // 2, kw_ // 2)), mode=mode, **kw)
    flipped = kernel[::-1, ::-1]
    out = np.zeros(img.shape)
    for i, j in np.ndindex(*img.shape):
        out[i, j] = np.sum(padded[i:i + kh, j:j + kw_] * flipped)
    return out

g1 = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16
gauss = np.outer(g1, g1)
border = np.ones(img.shape, dtype=bool)
border[2:-2, 2:-2] = False
results = {}
for mode in ["constant", "edge", "reflect", "symmetric", "wrap"]:
    results[mode] = conv2d_naive(img, gauss, mode)
results["constant_1"] = conv2d_naive(img, gauss, "constant", constant_values=1.0)
for mode, out in results.items():
    same_inside = np.allclose(out[~border], results["constant"][~border])
    print(f"{mode:>10}: mean {out.mean():.5f}, border mean {out[border].mean():.5f}, interior same: {same_inside}")

profile = img[img.shape[0] // 2]
for mode in ["linear_ramp", "maximum", "mean", "median", "minimum"]:
    padded = np.pad(profile, (3, 2), mode=mode)
    print(f"{mode:>11}: {np.round(padded[:4], 3)} ... {np.round(padded[-3:], 3)}")

sm = results["reflect"]
framed = np.pad(sm, 1, mode="constant", constant_values=-np.inf)
peaks = []
for (i, j), v in np.ndenumerate(sm):
    if v > thresh and v == framed[i:i + 3, j:j + 3].max():
        peaks.append((i, j, round(float(v), 4)))
print(f"{len(peaks)} peaks above {thresh}:", peaks[:4])
"""


def _pad_conv(n: int) -> dict:
    r = _rng(50)
    yy, xx = np.mgrid[0:n, 0:n] / max(n - 1, 1)
    img = 0.5 + 0.3 * np.sin(7 * xx) * np.cos(5 * yy) + 0.15 * r.standard_normal((n, n))
    return {"np": np, "img": img, "thresh": 0.6}


# -- 11. A data-cleaning notebook: np.nanmedian fills, np.apply_along_axis with a robust z-score, a
# winsorizer and a lambda over rows, np.vectorize of a Python tax-bracket function checked against an
# np.where chain, np.divide(where=...), masks with ~ & |, np.select into integer segments
CLEAN_APPLY = """\
def winsorize(col, lo=5, hi=95):
    a, b = np.percentile(col, [lo, hi])
    return np.clip(col, a, b)

def robust_z(x):
    med = np.median(x)
    mad = 1.4826 * np.median(np.abs(x - med))
    return (x - med) / mad

def tax_owed(income):
    if income <= 10_000:
        return 0.0
    elif income <= 40_000:
        return 0.1 * (income - 10_000)
    elif income <= 90_000:
        return 3_000 + 0.25 * (income - 40_000)
    return 15_500 + 0.4 * (income - 90_000)

cols = ["income", "age", "hours", "commute"]
missing = np.isnan(raw)
print("missing per column:", dict(zip(cols, missing.sum(axis=0).tolist())))
medians = np.nanmedian(raw, axis=0)
filled = np.where(missing, medians, raw)

z = np.apply_along_axis(robust_z, 0, filled)
outlier = (np.abs(z) > 3.5).any(axis=1)
clean = np.apply_along_axis(winsorize, 0, filled)
row_max_z = np.apply_along_axis(lambda row: float(np.max(np.abs(row))), 1, z)
print(f"outlier rows {outlier.sum()} ({outlier.mean():.1%}), largest |z| {row_max_z.max():.2f}")

income, age, hours, commute = clean.T
vtax = np.vectorize(tax_owed, otypes=[float])
tax = vtax(income)
tax_np = np.where(income <= 10_000, 0.0,
                  np.where(income <= 40_000, 0.1 * (income - 10_000),
                           np.where(income <= 90_000, 3_000 + 0.25 * (income - 40_000), 15_500 + 0.4 * (income - 90_000))))
assert np.allclose(tax, tax_np)
eff_rate = np.divide(tax, income, out=np.zeros_like(tax), where=income > 0)

young_high = (age < 30) & (income > 60_000)
part_time_or_retired = (hours < 20) | (age >= 65)
long_commute = commute > np.percentile(commute, 90)
target = ~outlier & ~part_time_or_retired & (young_high | long_commute)
segment = np.select([age < 30, age < 50, age < 65], [0, 1, 2], default=3)
print(f"target group {target.sum()}, effective tax {eff_rate[target].mean():.3f} vs {eff_rate[~target].mean():.3f}")
for code, s in enumerate(["young", "mid", "senior", "retired"]):
    sel = segment == code
    print("%-8s n=%5d  median income %9.0f  mean tax rate %.3f" % (s, sel.sum(), np.median(income[sel]), eff_rate[sel].mean()))
"""


def _clean(n: int) -> dict:
    r = _rng(51)
    income = r.lognormal(10.6, 0.6, n)
    age = r.uniform(18, 80, n)
    hours = np.clip(r.normal(38, 10, n), 0, 80)
    commute = r.gamma(2.0, 12.0, n)
    raw = np.column_stack([income, age, hours, commute])
    raw[r.random(raw.shape) < 0.03] = np.nan
    raw[r.choice(n, size=max(1, n // 200), replace=False), 0] *= 20      # data-entry errors
    return {"np": np, "raw": raw}


# -- 12. A float32 network from scratch on the CS231n spiral: a Dense class with momentum and weight
# decay updating its arrays in place (self.vW *= mu; self.W += self.vW), rng.permutation for the
# split, rng.shuffle of the batch order each epoch, a dict of histories, dtype float32 throughout
F32_SPIRAL = """\
class Dense:
    def __init__(self, d_in, d_out, rng):
        self.W = (rng.standard_normal((d_in, d_out)) * np.sqrt(2.0 / d_in)).astype(np.float32)
        self.b = np.zeros(d_out, dtype=np.float32)
        self.vW = np.zeros_like(self.W)
        self.vb = np.zeros_like(self.b)

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, g):
        self.dW = self.x.T @ g
        self.db = g.sum(axis=0)
        return g @ self.W.T

    def update(self, lr, mu=0.9, wd=1e-4):
        self.vW *= mu
        self.vW -= lr * (self.dW + wd * self.W)
        self.vb = mu * self.vb - lr * self.db
        self.W += self.vW
        self.b += self.vb

rng = np.random.default_rng(0)
perm = rng.permutation(len(X))
n_test = len(X) // 5
test_idx, train_idx = perm[:n_test], perm[n_test:]
Xtr, ytr, Xte, yte = X[train_idx], y[train_idx], X[test_idx], y[test_idx]

l1, l2 = Dense(2, hidden, rng), Dense(hidden, n_classes, rng)
history = {"loss": [], "train_acc": [], "test_acc": []}
idx = np.arange(len(Xtr))
for epoch in range(epochs):
    rng.shuffle(idx)
    for start in range(0, len(idx), batch_size):
        b = idx[start:start + batch_size]
        h = np.maximum(l1.forward(Xtr[b]), np.float32(0))
        logits = l2.forward(h)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.log(p[np.arange(len(b)), ytr[b]] + np.float32(1e-7)).mean()
        g = p.copy()
        g[np.arange(len(b)), ytr[b]] -= 1
        g /= len(b)
        gh = l2.backward(g)
        gh[h <= 0] = 0
        l1.backward(gh)
        l1.update(lr)
        l2.update(lr)
    predict = lambda A: np.argmax(np.maximum(l1.forward(A), 0) @ l2.W + l2.b, axis=1)
    history["loss"].append(float(loss))
    history["train_acc"].append(float(np.mean(predict(Xtr) == ytr)))
    history["test_acc"].append(float(np.mean(predict(Xte) == yte)))
    if epoch % max(1, epochs // 5) == 0 or epoch == epochs - 1:
        print(f"epoch {epoch:3d}  loss {history['loss'][-1]:.4f}  train {history['train_acc'][-1]:.3f}  "
              f"test {history['test_acc'][-1]:.3f}")
print("dtypes:", l1.W.dtype, l2.b.dtype, h.dtype, p.dtype, "| weight norms", np.linalg.norm(l1.W), np.linalg.norm(l2.W))
"""


def _spiral(n_per: int, n_classes: int, hidden: int, epochs: int, batch_size: int) -> dict:
    r = _rng(52)
    X = np.zeros((n_per * n_classes, 2), dtype=np.float32)
    y = np.zeros(n_per * n_classes, dtype=np.int64)
    for j in range(n_classes):
        ix = slice(n_per * j, n_per * (j + 1))
        rad = np.linspace(0.0, 1.0, n_per)
        t = np.linspace(j * 4, (j + 1) * 4, n_per) + 0.2 * r.standard_normal(n_per)
        X[ix] = np.c_[rad * np.sin(t), rad * np.cos(t)]
        y[ix] = j
    return {"np": np, "X": X, "y": y, "n_classes": n_classes, "hidden": hidden, "epochs": epochs,
            "batch_size": batch_size, "lr": 0.05}


# -- 13. A rates desk's scratch cell: bootstrapping discount factors from par rates in a loop,
# np.cumprod of forward growth, np.interp onto a fine grid, np.gradient and np.trapezoid against a
# hand-written cumulative trapezoid (np.cumsum), np.polyfit / np.polyval, Newton yields with a
# `break`, %-formatted rows, Vasicek short-rate paths discounted by np.cumsum and np.cumprod
YIELD_CURVE = """\
maturities = np.arange(1, len(par) + 1, dtype=float)
df = np.empty(len(par))
annuity = 0.0
for i, s in enumerate(par):
    df[i] = (1.0 - s * annuity) / (1.0 + s)
    annuity += df[i]
zero = -np.log(df) / maturities
fwd = np.log(np.r_[1.0, df[:-1]] / df)
assert np.allclose(np.cumprod(np.exp(-fwd)), df)
print("zero rates  %:", np.round(100 * zero[:6], 3), "...")
print("1y forwards %:", np.round(100 * fwd[:6], 3), "...")

t = np.linspace(0.0, maturities[-1], n_grid)
z_fine = np.interp(t, np.r_[0.0, maturities], np.r_[zero[0], zero])
inst = np.gradient(z_fine * t, t)
logdf_trap = -np.concatenate([[0.0], np.cumsum(0.5 * (inst[1:] + inst[:-1]) * np.diff(t))])
print(f"-log DF(T) by trapezoid {np.trapezoid(inst, t):.6f} vs {-np.log(df[-1]):.6f}, "
      f"cumulative max error {np.max(np.abs(logdf_trap + z_fine * t)):.2e}")

coef = np.polyfit(maturities, zero, 3)
smooth = np.polyval(coef, t[1:])
print("cubic fit coefficients:", np.round(coef, 6),
      f"max misfit {np.max(np.abs(np.polyval(coef, maturities) - zero)) * 1e4:.2f} bp")

def bond_price(c, T, y):
    times = np.arange(1, T + 1)
    return np.sum(c / (1 + y) ** times) + 1 / (1 + y) ** T

for c, T in [(0.02, 5), (0.05, 10), (0.0, len(par))]:
    times = np.arange(1, T + 1)
    price = c * df[:T].sum() + df[T - 1]
    yld = c if c > 0 else zero[T - 1]
    for _ in range(50):
        h = 1e-6
        dp = (bond_price(c, T, yld + h) - bond_price(c, T, yld - h)) / (2 * h)
        step = (bond_price(c, T, yld) - price) / dp
        yld -= step
        if abs(step) < 1e-12:
            break
    dur = np.sum(times * c * df[:T]) + T * df[T - 1]
    print("coupon %.1f%% %2dy: price %.4f, yield %.4f%%, Macaulay duration %.3f" % (100 * c, T, price, 100 * yld, dur / price))

dt = 1.0 / 12
shocks = np.random.default_rng(11).standard_normal((n_paths, 12 * 10))
rates = np.empty_like(shocks)
rates[:, 0] = zero[0]
for k in range(1, shocks.shape[1]):
    rates[:, k] = rates[:, k - 1] + 0.15 * (zero[-1] - rates[:, k - 1]) * dt + 0.01 * np.sqrt(dt) * shocks[:, k]
disc_sum = np.exp(-np.cumsum(rates * dt, axis=1))
disc_prod = np.cumprod(np.exp(-rates * dt), axis=1)
mc_df = disc_sum.mean(axis=0)[11::12]
print(f"Monte Carlo DF(10y) {mc_df[-1]:.5f} vs curve {df[9]:.5f}; cumsum/cumprod agree: {np.allclose(disc_sum, disc_prod)}")
"""


def _yield_curve(n_years: int, n_grid: int, n_paths: int) -> dict:
    r = _rng(53)
    m = np.arange(1, n_years + 1)
    par = 0.02 + 0.015 * (1 - np.exp(-m / 4)) + 0.0005 * r.standard_normal(n_years)
    return {"np": np, "par": par, "n_grid": n_grid, "n_paths": n_paths}


# -- 14. Project Euler with integer arrays: Collatz stopping times for every start at once in a
# ``while True`` loop (// and % under np.where, np.maximum(out=), bool added to int), digit sums by
# np.divmod, digital roots, a divisor-sum sieve with strided slices, perfect and amicable numbers,
# the sieve of Eratosthenes, prime gaps, last digits by np.bincount
EULER_INT = """\
n = np.arange(1, N + 1, dtype=np.int64)

cur = n.copy()
steps = np.zeros(N, dtype=np.int64)
peak = n.copy()
while True:
    active = cur != 1
    if not active.any():
        break
    cur = np.where(active, np.where(cur % 2 == 0, cur // 2, 3 * cur + 1), cur)
    np.maximum(peak, cur, out=peak)
    steps += active
longest = int(np.argmax(steps)) + 1
print(f"Collatz below {N}: longest chain from {longest} ({steps.max()} steps), highest value {peak.max():,}")
print("stopping-time histogram (bins of 20):", np.bincount(steps // 20).tolist())

digits = n.copy()
dsum = np.zeros_like(n)
while digits.any():
    digits, d = np.divmod(digits, 10)
    dsum += d
droot = 1 + (n - 1) % 9
root = dsum.copy()
while (root >= 10).any():
    root = np.where(root >= 10, root // 10 + root % 10, root)
assert np.array_equal(root, droot)

sigma = np.zeros(N + 1, dtype=np.int64)
for d in range(1, N // 2 + 1):
    sigma[2 * d::d] += d
s = sigma[1:]
perfect = n[s == n]
ok = (s <= N) & (s != n) & (s > 0)
amicable = n[ok][s[s[ok] - 1] == n[ok]]
print("perfect: %s, amicable: %s" % (perfect.tolist(), amicable.tolist()))

is_p = np.ones(N + 1, dtype=bool)
is_p[:2] = False
for q in range(2, int(N ** 0.5) + 1):
    if is_p[q]:
        is_p[q * q::q] = False
primes = np.flatnonzero(is_p)
gaps = np.diff(primes)
print(f"{len(primes)} primes, {np.sum(gaps == 2)} twin pairs, largest gap {gaps.max()} after {primes[np.argmax(gaps)]}")
print("primes mod 10 (last digits):", np.bincount(primes % 10, minlength=10).tolist())
"""


def _euler(N: int) -> dict:
    return {"np": np, "N": N}


# -- 15. A molecular-dynamics course: Brownian dynamics of soft spheres in a periodic box, minimum-image
# pair vectors by broadcasting, np.fill_diagonal, pairs from np.triu_indices, the radial distribution
# function by np.histogram (and a force-weighted one), a dict of accumulators, snapshots np.stack-ed,
# a density map through the mid-plane from an np.meshgrid distance computation
RDF_PERIODIC = """\
def min_image(d, L):
    return d - L * np.round(d / L)

rng = np.random.default_rng(3)
edges = np.linspace(0.0, box / 2, n_bins + 1)
centers = 0.5 * (edges[1:] + edges[:-1])
iu, ju = np.triu_indices(len(pos0), k=1)
acc = {"counts": np.zeros(n_bins), "force_hist": np.zeros(n_bins), "energy": []}
snapshots = []
pos = pos0.copy()
for frame in range(n_frames):
    d = min_image(pos[:, None, :] - pos[None, :, :], box)
    r2 = np.sum(d ** 2, axis=-1)
    np.fill_diagonal(r2, np.inf)
    fmag = np.where(r2 < rc ** 2, eps / sigma2 * np.exp(-r2 / (2 * sigma2)), 0.0)
    force = np.sum(fmag[:, :, None] * d, axis=1)
    pos = (pos + dt * force + np.sqrt(2 * dt * temperature) * rng.standard_normal(pos.shape)) % box
    r = np.sqrt(r2[iu, ju])
    h, _ = np.histogram(r, bins=edges)
    hf, _ = np.histogram(r, bins=edges, weights=fmag[iu, ju] * r)
    acc["counts"] += h
    acc["force_hist"] += hf
    acc["energy"].append(float(np.sum(np.where(r < rc, eps * np.exp(-r ** 2 / (2 * sigma2)), 0.0))))
    if frame % every == 0:
        snapshots.append(pos.copy())
snapshots = np.stack(snapshots)

rho = len(pos0) / box ** 3
shell = 4.0 / 3.0 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
g = acc["counts"] / n_frames / (len(pos0) / 2) / (rho * shell)
mean_force = np.divide(acc["force_hist"], acc["counts"], out=np.zeros(n_bins), where=acc["counts"] > 0)
print(f"g(r): peak {g.max():.3f} at r = {centers[np.argmax(g)]:.3f}, g -> {g[-5:].mean():.3f} at large r, "
      f"mean pair force at contact {mean_force[np.argmax(acc['counts'] > 0)]:.3f}")
print(f"pair energy {np.mean(acc['energy']):.4f} +- {np.std(acc['energy']):.4f}, snapshots {snapshots.shape}")
disp = min_image(snapshots[1:] - snapshots[:-1], box)
msd = np.mean(np.sum(np.cumsum(disp, axis=0) ** 2, axis=-1), axis=1)
print("MSD per snapshot:", np.round(msd, 3))

gx, gy = np.meshgrid(np.linspace(0, box, n_grid), np.linspace(0, box, n_grid), indexing="xy")
dx = min_image(gx[..., None] - pos[:, 0], box)
dy = min_image(gy[..., None] - pos[:, 1], box)
dz = min_image(box / 2 - pos[:, 2], box)
dens = np.exp(-(dx ** 2 + dy ** 2 + dz ** 2) / 0.5).sum(axis=-1)
peak_at = tuple(int(v) for v in np.unravel_index(np.argmax(dens), dens.shape))
print(f"mid-plane density: min {dens.min():.4f}, max {dens.max():.4f} at {peak_at}")
"""


def _rdf(n: int, n_frames: int, n_grid: int) -> dict:
    r = _rng(55)
    box = (n / 0.5) ** (1 / 3)
    return {"np": np, "pos0": r.uniform(0, box, (n, 3)), "box": box, "n_bins": 30, "n_frames": n_frames,
            "rc": 2.5, "eps": 2.0, "sigma2": 0.5, "dt": 0.01, "temperature": 1.0,
            "every": max(1, n_frames // 6), "n_grid": n_grid}


PROGRAMS += [
    Program("age_bands", AGE_BANDS, _age_bands, {"tiny": dict(n=60), "small": dict(n=4000)}),
    Program("gp_grid", GP_GRID, _gp_grid, {"tiny": dict(n=10, n_test=8, n_ell=2),
                                           "small": dict(n=60, n_test=50, n_ell=4)}),
    Program("iq_delay", IQ_DELAY, _iq_delay, {"tiny": dict(n=512, m=31, block=64),
                                              "small": dict(n=30000, m=127, block=1024)}),
    Program("leaderboard", LEADERBOARD, _leaderboard, {"tiny": dict(n_subs=80, n_teams=20),
                                                       "small": dict(n_subs=30000, n_teams=1500)}),
    Program("recsys_topk", RECSYS_TOPK, _recsys, {"tiny": dict(n_users=8, n_items=40, f=4, k=5),
                                                  "small": dict(n_users=400, n_items=300, f=16, k=10)}),
    Program("gnn_scatter", GNN_SCATTER, _gnn, {"tiny": dict(n_graphs=6, nodes_per=5, edges_per=2, d=3, hidden=4, epochs=10),
                                               "small": dict(n_graphs=80, nodes_per=20, edges_per=3, d=8, hidden=16,
                                                             epochs=60)}),
    Program("pascal_lru", PASCAL_LRU, _pascal, {"tiny": dict(N=8, depth=16), "small": dict(N=50, depth=512)}),
    Program("ols_qr", OLS_QR, _ols, {"tiny": dict(n=40, p=3), "small": dict(n=4000, p=8)}),
    Program("rigid_body", RIGID_BODY, _rigid, {"tiny": dict(n=5, nsteps=20), "small": dict(n=50, nsteps=200)}),
    Program("pad_conv", PAD_CONV, _pad_conv, {"tiny": dict(n=6), "small": dict(n=16)}),
    Program("clean_apply", CLEAN_APPLY, _clean, {"tiny": dict(n=50), "small": dict(n=2000)}),
    Program("f32_spiral", F32_SPIRAL, _spiral, {"tiny": dict(n_per=10, n_classes=3, hidden=8, epochs=3, batch_size=8),
                                               "small": dict(n_per=100, n_classes=3, hidden=32, epochs=15,
                                                             batch_size=32)}),
    Program("yield_curve", YIELD_CURVE, _yield_curve, {"tiny": dict(n_years=12, n_grid=40, n_paths=10),
                                                       "small": dict(n_years=30, n_grid=1000, n_paths=500)}),
    Program("euler_int", EULER_INT, _euler, {"tiny": dict(N=30), "small": dict(N=2000)}),
    Program("rdf_periodic", RDF_PERIODIC, _rdf, {"tiny": dict(n=10, n_frames=5, n_grid=6),
                                                 "small": dict(n=60, n_frames=20, n_grid=20)}),
]

# -- a fifth batch, by a helper agent (2026-12-06): reaction-diffusion in float32, a CNN forward pass by
# sliding_window_view and einsum, batch norm + dropout with early stopping, a character Markov chain by
# np.searchsorted, edit distances row by row, Richardson-Lucy by FFT, a ray tracer with a Sphere class,
# Lanczos, an (s, S) inventory simulation in int32, bilinear resizing of a uint8 image, a forest-fire
# automaton, a stateful biquad filter bank, Jacobi eigenvalue sweeps, an HLL shock tube, a Hough transform

# -- 1. Gray-Scott reaction-diffusion (Karl Sims' tutorial, Pearson's "spots" parameters) in float32
# throughout: a five-point Laplacian by np.roll in a helper, in-place updates, a list of float() masses
GRAY_SCOTT = """\
import numpy as np

def laplacian(Z):
    return (np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0) +
            np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z)

U = np.ones((n, n), dtype=np.float32)
V = np.zeros((n, n), dtype=np.float32)
r, c = n // 10, n // 2
U[c - r:c + r, c - r:c + r] = 0.50
V[c - r:c + r, c - r:c + r] = 0.25
U += 0.05 * noise
V += 0.05 * noise

Du, Dv = np.float32(0.16), np.float32(0.08)
F, k = np.float32(0.035), np.float32(0.065)
mass = []
for i in range(steps):
    uvv = U * V * V
    U += Du * laplacian(U) - uvv + F * (1 - U)
    V += Dv * laplacian(V) + uvv - (F + k) * V
    if i % 50 == 0:
        mass.append(float(V.sum()))
spots = int((V > 0.2).sum())
print(f"V in [{V.min():.4f}, {V.max():.4f}], mean {V.mean():.5f}, {spots} cells above 0.2, dtype {U.dtype}")
print("mass of V every 50 steps:", [round(m, 2) for m in mass])
"""


def _gray_scott(n: int, steps: int) -> dict:
    r = _rng(61)
    return {"n": n, "steps": steps, "noise": r.random((n, n), dtype=np.float32)}


# -- 2. A CNN forward pass from scratch (a deep-learning course's "conv by hand" notebook): im2col by
# sliding_window_view and einsum, checked against a loop over the kernel offsets with np.tensordot,
# 2x2 max pooling by reshape, a lambda relu, a stable softmax, predicted class counts
CNN_IM2COL = """\
from numpy.lib.stride_tricks import sliding_window_view

def conv2d(x, w, b):
    # x: (N, C, H, W), w: (F, C, kh, kw) -> (N, F, H-kh+1, W-kw+1), 'valid' cross-correlation
    kh, kw = w.shape[2:]
    cols = sliding_window_view(x, (kh, kw), axis=(2, 3))   # N, C, Ho, Wo, kh, kw
    return np.einsum("nchwij,fcij->nfhw", cols, w) + b[None, :, None, None]

def conv2d_loops(x, w, b):
    F_, C, kh, kw = w.shape
    N, _, H, W = x.shape
    out = np.zeros((N, F_, H - kh + 1, W - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + H - kh + 1, j:j + W - kw + 1]
            out += np.tensordot(patch, w[:, :, i, j], axes=([1], [1])).transpose(0, 3, 1, 2)
    return out + b.reshape(1, -1, 1, 1)

def maxpool2(x):
    N, C, H, W = x.shape
    return x[:, :, :H // 2 * 2, :W // 2 * 2].reshape(N, C, H // 2, 2, W // 2, 2).max(axis=(3, 5))

relu = lambda z: np.maximum(z, 0)

h1 = maxpool2(relu(conv2d(images, W1, b1)))
h1_check = maxpool2(relu(conv2d_loops(images, W1, b1)))
print("im2col and loop convolutions agree:", np.allclose(h1, h1_check), float(np.abs(h1 - h1_check).max()))
h2 = maxpool2(relu(conv2d(h1, W2, b2)))
flat = h2.reshape(len(images), -1)
logits = flat @ Wfc + bfc
logits -= logits.max(axis=1, keepdims=True)
probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
pred = probs.argmax(axis=1)
dead = (h2 == 0).all(axis=(0, 2, 3))
print(f"feature maps {h1.shape} -> {h2.shape}, {dead.sum()} dead filters, mean max-prob {probs.max(axis=1).mean():.4f}")
print("predicted class counts:", np.bincount(pred, minlength=Wfc.shape[1]).tolist())
"""


def _cnn(n: int, hw: int, f1: int, f2: int) -> dict:
    r = _rng(62)
    yy, xx = np.mgrid[0:hw, 0:hw] / hw
    # strokes: a random oriented bar on noise, like badly drawn digits
    ang = r.uniform(0, np.pi, n)[:, None, None]
    off = r.uniform(-0.2, 0.2, n)[:, None, None]
    bar = np.exp(-(((xx - 0.5) * np.cos(ang) + (yy - 0.5) * np.sin(ang) - off) ** 2) / 0.005)
    images = (bar + 0.1 * r.standard_normal((n, hw, hw)))[:, None]
    h = (hw - 2) // 2
    h = (h - 2) // 2
    return {"np": np, "images": images,
            "W1": r.normal(0, 0.5, (f1, 1, 3, 3)), "b1": r.normal(0, 0.1, f1),
            "W2": r.normal(0, np.sqrt(2 / (9 * f1)), (f2, f1, 3, 3)), "b2": r.normal(0, 0.1, f2),
            "Wfc": r.normal(0, np.sqrt(1 / (f2 * h * h)), (f2 * h * h, 10)), "bfc": np.zeros(10)}


# -- 3. Batch norm and inverted dropout by hand (CS231n assignment 2 in a regression setting): a seeded
# Generator for the masks and the batch order, running statistics updated through ``global`` in a
# forward function, the batch-norm backward pass, SGD with momentum over a list of parameter arrays,
# early stopping on a float() validation loss with patience and the best parameters restored
BN_DROPOUT = """\
rng = np.random.default_rng(7)
d_in = Xtr.shape[1]
W1 = rng.normal(0, np.sqrt(2 / d_in), (d_in, hidden))
gamma, beta = np.ones(hidden), np.zeros(hidden)
W2 = rng.normal(0, np.sqrt(1 / hidden), (hidden, 1))
b2 = np.zeros(1)
params = [W1, gamma, beta, W2, b2]
vel = [np.zeros_like(p) for p in params]
run_mean, run_var = np.zeros(hidden), np.ones(hidden)
eps, p_keep, mom = 1e-5, 0.8, 0.9

def forward(X, train):
    global run_mean, run_var
    z = X @ W1
    if train:
        mu, var = z.mean(0), z.var(0)
        run_mean = 0.9 * run_mean + 0.1 * mu
        run_var = 0.9 * run_var + 0.1 * var
    else:
        mu, var = run_mean, run_var
    zhat = (z - mu) / np.sqrt(var + eps)
    a = np.maximum(gamma * zhat + beta, 0)
    mask = None
    if train:
        mask = (rng.random(a.shape) < p_keep) / p_keep
        a = a * mask
    out = (a @ W2 + b2).ravel()
    return out, (z, var, zhat, a, mask)

def backward(X, y, out, cache):
    z, var, zhat, a, mask = cache
    n = len(y)
    dout = (2.0 / n) * (out - y)[:, None]
    dW2 = a.T @ dout
    db2 = dout.sum(0)
    da = dout @ W2.T * mask
    da[a <= 0] = 0
    dgamma = (da * zhat).sum(0)
    dbeta = da.sum(0)
    dzhat = da * gamma
    dz = (n * dzhat - dzhat.sum(0) - zhat * (dzhat * zhat).sum(0)) / (n * np.sqrt(var + eps))
    return [X.T @ dz, dgamma, dbeta, dW2, db2]

best, best_epoch, patience, wait = np.inf, -1, 4, 0
history = []
for epoch in range(max_epochs):
    order = rng.permutation(len(Xtr))
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        out, cache = forward(Xtr[idx], True)
        grads = backward(Xtr[idx], ytr[idx], out, cache)
        for p, v, g in zip(params, vel, grads):
            v *= mom
            v -= lr * g
            p += v
    val_out, _ = forward(Xval, False)
    val_loss = float(np.mean((val_out - yval) ** 2))
    history.append(val_loss)
    if val_loss < best - 1e-4:
        best, best_epoch, wait = val_loss, epoch, 0
        best_params = [p.copy() for p in params]
    else:
        wait += 1
        if wait >= patience:
            print(f"early stop at epoch {epoch}")
            break
W1, gamma, beta, W2, b2 = best_params
final, _ = forward(Xval, False)
print(f"best val MSE {best:.5f} at epoch {best_epoch}; restored MSE {np.mean((final - yval) ** 2):.5f}; "
      f"baseline {np.var(yval):.5f}")
print("val loss history:", np.round(history, 4))
"""


def _bn_dropout(n: int, d: int, hidden: int, max_epochs: int, batch: int) -> dict:
    r = _rng(63)
    X = r.standard_normal((n, d))
    a = r.standard_normal(d) / np.sqrt(d)
    y = np.sin(2 * X @ a) + 0.3 * (X[:, 0] * X[:, 1]) + 0.1 * r.standard_normal(n)
    m = int(0.8 * n)
    return {"np": np, "Xtr": X[:m], "ytr": y[:m], "Xval": X[m:], "yval": y[m:], "hidden": hidden,
            "max_epochs": max_epochs, "batch": batch, "lr": 0.02}


# -- 4. A character-level Markov chain ("Markov text generator" exercise): bytes by np.frombuffer,
# np.unique(return_inverse=True), bigram counts by np.add.at, rows of cumulative probabilities and a
# np.searchsorted draw per character in a Python loop, text back by bytes(); then many chains at once by
# comparing uniforms with the rows of the CDF, and the stationary distribution by power iteration
MARKOV_TEXT = """\
codes = np.frombuffer(corpus.encode("ascii"), dtype=np.uint8)
alphabet, seq = np.unique(codes, return_inverse=True)
K = len(alphabet)
counts = np.zeros((K, K), dtype=np.int64)
np.add.at(counts, (seq[:-1], seq[1:]), 1)
P = (counts + 0.01) / (counts + 0.01).sum(axis=1, keepdims=True)
cdf = np.cumsum(P, axis=1)
cdf[:, -1] = 1.0

rng = np.random.default_rng(2)
state = int(seq[0])
out = [state]
u = rng.random(length)
for t in range(length - 1):
    state = int(np.searchsorted(cdf[state], u[t], side="right"))
    out.append(state)
text = bytes(alphabet[out]).decode()
print(repr(text[:70]))

states = np.zeros(n_chains, dtype=np.int64)
visits = np.zeros(K)
for t in range(burn + 50):
    r = rng.random(n_chains)
    states = (r[:, None] > cdf[states]).sum(axis=1)
    if t >= burn:
        visits += np.bincount(states, minlength=K)
visits /= visits.sum()

pi = np.full(K, 1.0 / K)
for _ in range(300):
    pi = pi @ P
H = -(pi[:, None] * P * np.log2(P)).sum()
emp = np.bincount(out, minlength=K) / len(out)
print(f"{K} symbols, entropy rate {H:.3f} bits/char, TV(one chain, pi) = {0.5 * np.abs(emp - pi).sum():.4f}, "
      f"TV(ensemble, pi) = {0.5 * np.abs(visits - pi).sum():.4f}")
top = np.argsort(-pi)[:5]
print("most frequent:", [chr(alphabet[i]) for i in top], np.round(pi[top], 4))
"""


def _markov_text(n_words: int, length: int, n_chains: int, burn: int) -> dict:
    r = _rng(64)
    words = ("the of and to in is was that for it with as his on be at by had are but from or have an they which "
             "one you were her all she there would their we him been has when who will more no if out so said what "
             "up its about into than them can only other new some could time these two may then do first any my now "
             "such like our over man me even most made after also did many before must through back years where much "
             "your way well down should because each just those people how too little state good very make world").split()
    p = 1.0 / np.arange(1, len(words) + 1)
    idx = r.choice(len(words), size=n_words, p=p / p.sum())
    text = []
    for i in idx:
        text.append(words[i])
        if r.random() < 0.08:
            text[-1] += "."
    return {"np": np, "corpus": " ".join(text), "length": length, "n_chains": n_chains, "burn": burn}


# -- 5. Edit distances between DNA reads (a bioinformatics course): the Wagner-Fischer table filled row
# by row, substitutions and deletions by np.minimum, insertions by a running minimum
# (np.minimum.accumulate of row - j, plus j), int32 tables; a pure-Python version checks one pair;
# all pairs by itertools.combinations into a symmetric matrix, each read's nearest neighbour
LEVENSHTEIN = """\
import itertools

def lev_python(s, t):
    prev = list(range(len(t) + 1))
    for i, a in enumerate(s, 1):
        cur = [i]
        for j, b in enumerate(t, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a != b)))
        prev = cur
    return prev[-1]

def lev_numpy(s, t):
    a = np.frombuffer(s.encode(), dtype=np.uint8)
    b = np.frombuffer(t.encode(), dtype=np.uint8)
    m = len(b)
    j = np.arange(m + 1, dtype=np.int32)
    D = np.zeros((len(a) + 1, m + 1), dtype=np.int32)
    D[0] = j
    for i in range(1, len(a) + 1):
        cost = (b != a[i - 1]).astype(np.int32)
        row = np.empty(m + 1, dtype=np.int32)
        row[0] = i
        row[1:] = np.minimum(D[i - 1, 1:] + 1, D[i - 1, :-1] + cost)
        D[i] = np.minimum.accumulate(row - j) + j
    return int(D[-1, -1]), D

d_ref = lev_python(reads[0], reads[1])
d_np, table = lev_numpy(reads[0], reads[1])
assert d_ref == d_np, (d_ref, d_np)
print(f"reads 0/1: distance {d_np} (table {table.shape}, {table.dtype}), python agrees")

n = len(reads)
dist = np.zeros((n, n), dtype=np.int32)
for p, q in itertools.combinations(range(n), 2):
    dist[p, q] = dist[q, p] = lev_numpy(reads[p], reads[q])[0]
nn = np.where(np.eye(n, dtype=bool), dist.max() + 1, dist).argmin(axis=1)
print("distance matrix:")
print(dist)
print("nearest neighbour of each read:", nn.tolist(), "| mean distance", round(float(dist[np.triu_indices(n, 1)].mean()), 3))
"""


def _levenshtein(n_reads: int, length: int) -> dict:
    r = _rng(65)
    base = r.choice(list("ACGT"), size=length)
    reads = []
    for k in range(n_reads):
        s = list(base)
        for _ in range(int(r.integers(1, 1 + length // 6))):
            pos = int(r.integers(0, len(s)))
            op = r.integers(3)
            if op == 0:
                s[pos] = "ACGT"[int(r.integers(4))]
            elif op == 1:
                s.insert(pos, "ACGT"[int(r.integers(4))])
            elif len(s) > 2:
                del s[pos]
        reads.append("".join(s))
    return {"np": np, "reads": reads}


# -- 6. Richardson-Lucy deconvolution of a blurred star field (an astronomy image-processing notebook):
# a Gaussian PSF padded to the image and rolled so its centre sits at (0, 0), convolution through
# rfft2 / irfft2 in a helper, the adjoint by the conjugate OTF, np.clip, a relative change printed
# every ten iterations (nan the first time), L1 errors against the truth
RICHARDSON_LUCY = """\
import numpy as np
from numpy.fft import rfft2, irfft2

def psf_gauss(size, sigma):
    ax = np.arange(size) - size // 2
    g = np.exp(-(ax[:, None] ** 2 + ax[None, :] ** 2) / (2 * sigma ** 2))
    return g / g.sum()

def fftconv(img, otf):
    return irfft2(rfft2(img) * otf, s=img.shape)

k = psf_gauss(15, sigma)
psf = np.zeros_like(observed)
psf[:15, :15] = k
psf = np.roll(psf, (-7, -7), axis=(0, 1))
otf = rfft2(psf)
otf_adj = np.conj(otf)

est = np.full_like(observed, observed.mean())
prev = None
for it in range(n_iter):
    blurred = fftconv(est, otf)
    ratio = observed / np.maximum(blurred, 1e-12)
    est = np.clip(est * fftconv(ratio, otf_adj), 0, None)
    if it % 10 == 9:
        change = np.linalg.norm(est - prev) / np.linalg.norm(est) if prev is not None else np.nan
        print(f"iter {it + 1:3d}  relative change {change:.3e}")
        prev = est.copy()
err0 = np.abs(observed - truth).sum() / truth.sum()
err = np.abs(est - truth).sum() / truth.sum()
print(f"L1 error blurred {err0:.4f} -> deconvolved {err:.4f}; flux ratio {est.sum() / observed.sum():.5f}; "
      f"peak {est.max():.1f} (true {truth.max():.1f})")
"""


def _richardson_lucy(n: int, n_stars: int, n_iter: int) -> dict:
    r = _rng(66)
    truth = np.full((n, n), 20.0)
    ys, xs = r.integers(0, n, n_stars), r.integers(0, n, n_stars)
    np.add.at(truth, (ys, xs), r.pareto(1.5, n_stars) * 50 + 20)
    ax = np.arange(15) - 7
    g = np.exp(-(ax[:, None] ** 2 + ax[None, :] ** 2) / (2 * 1.8 ** 2))
    psf = np.zeros((n, n))
    psf[:15, :15] = g / g.sum()
    psf = np.roll(psf, (-7, -7), axis=(0, 1))
    blurred = np.fft.irfft2(np.fft.rfft2(truth) * np.fft.rfft2(psf), s=truth.shape)
    observed = r.poisson(np.maximum(blurred, 0)).astype(float)
    return {"truth": truth, "observed": observed, "sigma": 1.8, "n_iter": n_iter}


# -- 7. A ray tracer in NumPy (the "raytracing in 100 lines" gist style): a Sphere class whose intersect
# takes every ray at once (the origin one point or one per ray), ``from numpy.linalg import norm``,
# nearest hits by argmin over a stacked distance array, Lambert and Blinn-Phong shading with shadow rays
# to the other spheres, a checkered floor colour by np.floor parity, a uint8 image at the end
RAY_SPHERES = """\
from numpy.linalg import norm

class Sphere:
    def __init__(self, center, radius, color, checker=False):
        self.c = np.asarray(center, dtype=float)
        self.r = float(radius)
        self.color = np.asarray(color, dtype=float)
        self.checker = checker

    def intersect(self, O, D):
        OC = O - self.c
        b = 2 * np.sum(D * OC, axis=-1)
        c = np.sum(OC * OC, axis=-1) - self.r ** 2
        disc = b * b - 4 * c
        t = np.full(len(D), np.inf)
        hit = disc > 0
        sq = np.sqrt(disc[hit])
        t0 = (-b[hit] - sq) / 2
        t1 = (-b[hit] + sq) / 2
        th = np.where(t0 > 1e-6, t0, t1)
        th[th <= 1e-6] = np.inf
        t[hit] = th
        return t

    def color_at(self, M):
        if not self.checker:
            return np.broadcast_to(self.color, M.shape)
        odd = (np.floor(M[:, 0] * 2).astype(int) + np.floor(M[:, 2] * 2).astype(int)) % 2 == 1
        return np.where(odd[:, None], self.color, 1 - self.color)

scene = [Sphere([0.75, 0.1, 1.0], 0.6, [0.0, 0.0, 1.0]),
         Sphere([-0.75, 0.1, 2.25], 0.6, [0.5, 0.223, 0.5]),
         Sphere([-2.75, 0.1, 3.5], 0.6, [1.0, 0.572, 0.184]),
         Sphere([0.0, -1000.5, 0.0], 1000.0, [0.9, 0.9, 0.9], checker=True)]
light = np.array([5.0, 5.0, -10.0])
eye = np.array([0.0, 0.35, -1.0])

xs = np.linspace(-1.0, 1.0, w)
ys = np.linspace(h / w, -h / w, h)
X, Y = np.meshgrid(xs, ys)
D = np.stack([X.ravel(), Y.ravel(), np.zeros(X.size)], axis=1) - eye
D /= norm(D, axis=1, keepdims=True)

dist = np.stack([s.intersect(eye, D) for s in scene])
nearest = dist.argmin(axis=0)
t = dist.min(axis=0)
color = np.zeros((len(D), 3))
n_shadow = 0
for k, s in enumerate(scene):
    sel = (nearest == k) & np.isfinite(t)
    if not sel.any():
        continue
    M = eye + D[sel] * t[sel, None]
    N = (M - s.c) / s.r
    toL = light - M
    toL /= norm(toL, axis=1, keepdims=True)
    start = M + N * 1e-4
    shadow = np.zeros(len(M), dtype=bool)
    for other in scene:
        if other is not s:
            shadow |= np.isfinite(other.intersect(start, toL))
    n_shadow += int(shadow.sum())
    lam = np.maximum(np.sum(N * toL, axis=1), 0) * ~shadow
    H = toL - D[sel]
    H /= norm(H, axis=1, keepdims=True)
    spec = np.maximum(np.sum(N * H, axis=1), 0) ** 50 * ~shadow
    color[sel] = 0.05 + s.color_at(M) * lam[:, None] + spec[:, None]
img = (np.clip(color, 0, 1) * 255).astype(np.uint8).reshape(h, w, 3)
print(f"image {img.shape} {img.dtype}: {np.isfinite(t).mean():.1%} of rays hit, {n_shadow} shaded points in shadow")
print("mean RGB:", img.reshape(-1, 3).mean(axis=0).round(2), "| per object pixels:",
      np.bincount(nearest[np.isfinite(t)], minlength=len(scene)).tolist())
"""


def _ray(w: int, h: int) -> dict:
    return {"np": np, "w": w, "h": h}


# -- 8. The Lanczos method with full reorthogonalisation (Golub & Van Loan 10.1; a numerical linear
# algebra course): a function returning alpha, beta and Q with an early ``break`` on a tiny beta,
# the tridiagonal T by np.diag with offsets, Ritz values against np.linalg.eigvalsh for several
# Krylov dimensions, residual norms of the Ritz vectors, ``import math`` for the log10 of errors
LANCZOS = """\
import math

def lanczos(A, v0, m):
    n = len(v0)
    Q = np.zeros((n, m + 1))
    alpha = np.zeros(m)
    beta = np.zeros(m)
    Q[:, 0] = v0 / np.linalg.norm(v0)
    for j in range(m):
        w = A @ Q[:, j]
        alpha[j] = Q[:, j] @ w
        w = w - alpha[j] * Q[:, j] - (beta[j - 1] * Q[:, j - 1] if j > 0 else 0)
        for _ in range(2):                      # twice is enough (Kahan)
            w -= Q[:, :j + 1] @ (Q[:, :j + 1].T @ w)
        beta[j] = np.linalg.norm(w)
        if beta[j] < 1e-12:
            m = j + 1
            break
        Q[:, j + 1] = w / beta[j]
    return alpha[:m], beta[:m], Q[:, :m]

exact = np.linalg.eigvalsh(A)
print(f"n = {A.shape[0]}, spectrum [{exact[0]:.6f}, {exact[-1]:.6f}]")
for m in ms:
    alpha, beta, Q = lanczos(A, v0, m)
    T = np.diag(alpha) + np.diag(beta[:-1], 1) + np.diag(beta[:-1], -1)
    theta, S = np.linalg.eigh(T)
    Y = Q @ S
    res = np.linalg.norm(A @ Y[:, [0, -1]] - Y[:, [0, -1]] * theta[[0, -1]], axis=0)
    err_hi = abs(theta[-1] - exact[-1])
    err_lo = abs(theta[0] - exact[0])
    print(f"m = {m:3d}: top {theta[-1]:.10f} (log10 err {math.log10(err_hi + 1e-300):6.1f}), "
          f"bottom {theta[0]:.10f} (log10 err {math.log10(err_lo + 1e-300):6.1f}), "
          f"residuals {res[1]:.1e} {res[0]:.1e}, orthogonality {np.linalg.norm(Q.T @ Q - np.eye(len(alpha))):.1e}")
"""


def _lanczos(g: int, ms: tuple) -> dict:
    r = _rng(68)
    n = g * g
    T = 2 * np.eye(g) - np.eye(g, k=1) - np.eye(g, k=-1)
    A = np.kron(T, np.eye(g)) + np.kron(np.eye(g), T) + np.diag(r.uniform(0, 0.5, n))
    return {"np": np, "A": A, "v0": r.standard_normal(n), "ms": list(ms)}


# -- 9. An (s, S) inventory policy across a chain of stores (an operations-research course): int32 stock,
# a pipeline of orders in transit shifted by np.roll each day, lost sales by np.minimum, bools added
# to int32 counters, a simulate() function returning a dict, three policies compared in %-formatted rows
INVENTORY_SIM = """\
def simulate(s_level, S_level, lead=3, h_cost=0.1, k_cost=20.0, p_cost=4.0):
    n_stores, days = demand.shape
    on_hand = np.full(n_stores, S_level, dtype=np.int32)
    pipeline = np.zeros((n_stores, lead), dtype=np.int32)
    sold = np.zeros(n_stores, dtype=np.int64)
    lost = np.zeros(n_stores, dtype=np.int64)
    orders = np.zeros(n_stores, dtype=np.int32)
    stockout_days = np.zeros(n_stores, dtype=np.int32)
    holding = 0
    for day in range(days):
        on_hand += pipeline[:, 0]
        pipeline = np.roll(pipeline, -1, axis=1)
        pipeline[:, -1] = 0
        d = demand[:, day]
        sale = np.minimum(d, on_hand)
        on_hand -= sale
        sold += sale
        lost += d - sale
        stockout_days += on_hand == 0
        position = on_hand + pipeline.sum(axis=1)
        need = position <= s_level
        pipeline[:, -1] = np.where(need, S_level - position, 0)
        orders += need
        holding += int(on_hand.sum())
    cost = h_cost * holding + k_cost * int(orders.sum()) + p_cost * int(lost.sum())
    return {"fill_rate": sold.sum() / (sold.sum() + lost.sum()), "cost_per_day": cost / days,
            "orders": orders, "stockout_days": stockout_days, "on_hand": on_hand}

results = {}
for name, (s, S) in policies.items():
    res = simulate(s, S)
    results[name] = res
    print("%-8s s=%3d S=%3d  fill rate %.4f  cost/day %9.2f  orders/store %.1f  worst store %d stock-out days"
          % (name, s, S, res["fill_rate"], res["cost_per_day"], res["orders"].mean(), res["stockout_days"].max()))
best = min(results, key=lambda k: results[k]["cost_per_day"])
print(f"cheapest policy: {best}; final stock dtype {results[best]['on_hand'].dtype}, "
      f"total on hand {results[best]['on_hand'].sum()}")
"""


def _inventory(n_stores: int, days: int) -> dict:
    r = _rng(69)
    lam = r.uniform(2, 9, n_stores)
    demand = r.poisson(lam[:, None], (n_stores, days)).astype(np.int32)
    return {"np": np, "demand": demand, "policies": {"lean": (15, 30), "balanced": (25, 45), "safe": (35, 70)}}


# -- 10. Image resizing by hand (an image-processing lab): bilinear interpolation with the half-pixel
# convention, np.floor indices clipped at the border, fancy indexing of rows then columns, weights
# broadcast over the colour axis, nearest neighbour by integer arithmetic, a 2x box filter by
# reshape-mean, uint8 in and out, PSNR of round trips in a loop over scale factors
BILINEAR_RESIZE = """\
def resize_bilinear(im, new_h, new_w):
    h, w = im.shape[:2]
    ys = np.clip((np.arange(new_h) + 0.5) * h / new_h - 0.5, 0, h - 1)
    xs = np.clip((np.arange(new_w) + 0.5) * w / new_w - 0.5, 0, w - 1)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1 = np.minimum(y0 + 1, h - 1)
    x1 = np.minimum(x0 + 1, w - 1)
    wy = (ys - y0)[:, None, None]
    wx = (xs - x0)[None, :, None]
    f = im.astype(np.float64)
    top = f[y0][:, x0] * (1 - wx) + f[y0][:, x1] * wx
    bot = f[y1][:, x0] * (1 - wx) + f[y1][:, x1] * wx
    return np.clip(np.rint(top * (1 - wy) + bot * wy), 0, 255).astype(np.uint8)

def resize_nearest(im, new_h, new_w):
    h, w = im.shape[:2]
    r = np.arange(new_h) * h // new_h
    c = np.arange(new_w) * w // new_w
    return im[r[:, None], c]

def psnr(a, b):
    mse = np.mean((a.astype(np.int32) - b.astype(np.int32)) ** 2)
    return 10 * np.log10(255.0 ** 2 / mse) if mse > 0 else float("inf")

H, W = img.shape[:2]
for scale in (0.5, 0.75, 1.5):
    h2, w2 = int(H * scale), int(W * scale)
    bl = resize_bilinear(resize_bilinear(img, h2, w2), H, W)
    nn = resize_nearest(resize_nearest(img, h2, w2), H, W)
    print(f"scale {scale}: {h2}x{w2}, round-trip PSNR bilinear {psnr(img, bl):.2f} dB, nearest {psnr(img, nn):.2f} dB")

box = img.reshape(H // 2, 2, W // 2, 2, 3).mean(axis=(1, 3))
half = resize_bilinear(img, H // 2, W // 2)
diff = np.abs(box.round().astype(np.int16) - half.astype(np.int16))
blend = img // 2 + np.flipud(img) // 2
print(f"2x down: box vs bilinear max |diff| {diff.max()}, mean {diff.mean():.3f}; blend dtype {blend.dtype} "
      f"max {blend.max()}, channel means {blend.reshape(-1, 3).mean(axis=0).round(2)}")
"""


def _bilinear(n: int) -> dict:
    r = _rng(70)
    yy, xx = np.mgrid[0:n, 0:n] / n
    rgb = np.stack([xx, yy, 0.5 + 0.5 * np.sin(12 * xx * yy)], axis=-1) * 200
    for _ in range(6):
        cy, cx, rad = r.uniform(0.2, 0.8, 2).tolist() + [r.uniform(0.05, 0.2)]
        rgb[(yy - cy) ** 2 + (xx - cx) ** 2 < rad ** 2] = r.uniform(0, 255, 3)
    img = np.clip(rgb + r.normal(0, 6, rgb.shape), 0, 255).astype(np.uint8)
    return {"np": np, "img": img}


# -- 11. The Drossel-Schwabl forest-fire model (a complex-systems course, after the Rosetta Code task):
# uint8 cell states as named constants, burning neighbours by or-ing np.roll shifts over a list of offsets,
# one rng.random field per step for lightning and regrowth, boolean masks assigned into a copy, a dict of
# per-step counts, a tree-density time average over the second half
FOREST_FIRE = """\
EMPTY, TREE, FIRE = 0, 1, 2
rng = np.random.default_rng(seed)
grid = np.where(rng.random((n, n)) < 0.55, TREE, EMPTY).astype(np.uint8)
counts = {"trees": [], "fires": []}
for step in range(steps):
    burning = grid == FIRE
    near_fire = np.zeros_like(burning)
    for dy, dx in [(-1, 0), (1, 0), (0, -1), (0, 1)]:
        near_fire |= np.roll(burning, (dy, dx), axis=(0, 1))
    r = rng.random((n, n))
    new = grid.copy()
    new[burning] = EMPTY
    new[(grid == TREE) & (near_fire | (r < f))] = FIRE
    new[(grid == EMPTY) & (r < p)] = TREE
    grid = new
    counts["trees"].append(int(np.count_nonzero(grid == TREE)))
    counts["fires"].append(int(np.count_nonzero(grid == FIRE)))
trees = np.array(counts["trees"])
fires = np.array(counts["fires"])
print(f"tree density over the second half {trees[steps // 2:].mean() / n ** 2:.4f}, "
      f"peak fire {fires.max()} cells at step {fires.argmax()}, final states {np.bincount(grid.ravel(), minlength=3)}")
"""


def _forest(n: int, steps: int) -> dict:
    return {"np": np, "n": n, "steps": steps, "seed": 71, "p": 0.03, "f": 0.0005}


# -- 12. A filter bank of RBJ-cookbook biquad low-passes run sample by sample (an audio DSP notebook):
# a class holding coefficient arrays and the transposed-direct-form-II state, a step() per sample
# vectorised over the bank, process() filling rows of an output array, reset(), a step response
# checked for unit DC gain, band RMS levels in dB with math.log10
IIR_BANK = """\
import math

class BiquadBank:
    def __init__(self, cutoffs, fs, q=1 / math.sqrt(2)):
        w0 = 2 * np.pi * np.asarray(cutoffs) / fs
        alpha = np.sin(w0) / (2 * q)
        cosw = np.cos(w0)
        a0 = 1 + alpha
        self.b = np.stack([(1 - cosw) / 2, 1 - cosw, (1 - cosw) / 2]) / a0
        self.a = np.stack([-2 * cosw, 1 - alpha]) / a0
        self.z1 = np.zeros(len(w0))
        self.z2 = np.zeros(len(w0))

    def reset(self):
        self.z1[:] = 0.0
        self.z2[:] = 0.0

    def step(self, x):
        y = self.b[0] * x + self.z1
        self.z1 = self.b[1] * x - self.a[0] * y + self.z2
        self.z2 = self.b[2] * x - self.a[1] * y
        return y

    def process(self, signal):
        out = np.empty((len(signal), len(self.z1)))
        for i, x in enumerate(signal):
            out[i] = self.step(x)
        return out

bank = BiquadBank(cutoffs, fs)
y = bank.process(sig)
bank.reset()
step_resp = bank.process(np.ones(n_step))
print("DC gain after", n_step, "samples:", np.round(step_resp[-1], 6))
rms = np.sqrt(np.mean(y[len(y) // 4:] ** 2, axis=0))
for fc, level in zip(cutoffs, rms):
    print(f"  low-pass {fc:7.1f} Hz: RMS {level:.4f} ({20 * math.log10(level):6.2f} dB)")
overshoot = step_resp.max(axis=0) - 1
print("step overshoot %:", np.round(100 * overshoot, 3), "| state", np.round(bank.z1, 4))
"""


def _iir(n: int) -> dict:
    r = _rng(72)
    fs = 8000.0
    t = np.arange(n) / fs
    sig = (np.sin(2 * np.pi * 110 * t) + 0.5 * np.sin(2 * np.pi * 950 * t) + 0.3 * np.sin(2 * np.pi * 2500 * t)
           + 0.2 * r.standard_normal(n))
    return {"np": np, "sig": sig, "fs": fs, "cutoffs": np.array([80.0, 200.0, 500.0, 1200.0, 3000.0]),
            "n_step": max(50, n // 8)}


# -- 13. Cyclic Jacobi eigenvalue sweeps (Numerical Recipes' jacobi, a numerical-methods assignment):
# a ``while`` loop on the off-diagonal norm with a sweep cap, scalar rotation angles from
# np.sign / np.sqrt, columns and rows rotated through .copy()-ed slices, eigenvectors accumulated in V,
# checked against np.linalg.eigvalsh and by the residual and orthogonality of V
JACOBI_EIG = """\
def off(A):
    return np.linalg.norm(A - np.diag(np.diag(A)))

A = S.copy()
n = A.shape[0]
V = np.eye(n)
sweeps = rotations = 0
while off(A) > tol * np.linalg.norm(S) and sweeps < 20:
    for p in range(n - 1):
        for q in range(p + 1, n):
            if abs(A[p, q]) < 1e-300:
                continue
            theta = (A[q, q] - A[p, p]) / (2 * A[p, q])
            t = np.sign(theta) / (abs(theta) + np.sqrt(theta ** 2 + 1)) if theta != 0 else 1.0
            c = 1 / np.sqrt(t ** 2 + 1)
            s = t * c
            Ap, Aq = A[:, p].copy(), A[:, q].copy()
            A[:, p] = c * Ap - s * Aq
            A[:, q] = s * Ap + c * Aq
            Ap, Aq = A[p, :].copy(), A[q, :].copy()
            A[p, :] = c * Ap - s * Aq
            A[q, :] = s * Ap + c * Aq
            Vp, Vq = V[:, p].copy(), V[:, q].copy()
            V[:, p] = c * Vp - s * Vq
            V[:, q] = s * Vp + c * Vq
            rotations += 1
    sweeps += 1
    print(f"sweep {sweeps}: off(A) = {off(A):.3e}")
evals = np.diag(A)
order = np.argsort(evals)
evals, V = evals[order], V[:, order]
ref = np.linalg.eigvalsh(S)
print(f"{rotations} rotations; max |lambda - eigvalsh| = {np.max(np.abs(evals - ref)):.2e}")
print(f"residual {np.linalg.norm(S @ V - V * evals):.2e}, orthogonality {np.linalg.norm(V.T @ V - np.eye(n)):.2e}")
print("eigenvalues:", np.round(evals, 5))
"""


def _jacobi_eig(n: int) -> dict:
    r = _rng(73)
    M = r.standard_normal((n, n))
    return {"np": np, "S": (M + M.T) / 2 + np.diag(np.arange(n, dtype=float)), "tol": 1e-12}


# -- 14. Sod's shock tube by a first-order finite-volume scheme with the HLL flux (a CFD course's
# Euler-equations homework): conserved variables in one (3, nx) array, primitives() / flux() / hll()
# helpers, nested np.where for the upwind cases, ghost cells by np.concatenate, ``while t < t_end``
# with a CFL time step from float(np.max(...)), conservation and the shock position at the end
SHOCK_TUBE = """\
gamma = 1.4
dx = 1.0 / nx
x = (np.arange(nx) + 0.5) * dx
rho = np.where(x < 0.5, 1.0, 0.125)
p = np.where(x < 0.5, 1.0, 0.1)
u = np.zeros(nx)
U = np.array([rho, rho * u, p / (gamma - 1) + 0.5 * rho * u ** 2])

def primitives(U):
    rho = U[0]
    u = U[1] / rho
    p = (gamma - 1) * (U[2] - 0.5 * rho * u ** 2)
    return rho, u, p

def flux(U):
    rho, u, p = primitives(U)
    return np.array([rho * u, rho * u ** 2 + p, u * (U[2] + p)])

def hll(UL, UR):
    rL, uL, pL = primitives(UL)
    rR, uR, pR = primitives(UR)
    cL, cR = np.sqrt(gamma * pL / rL), np.sqrt(gamma * pR / rR)
    SL = np.minimum(uL - cL, uR - cR)
    SR = np.maximum(uL + cL, uR + cR)
    FL, FR = flux(UL), flux(UR)
    Fhll = (SR * FL - SL * FR + SL * SR * (UR - UL)) / (SR - SL)
    return np.where(SL >= 0, FL, np.where(SR <= 0, FR, Fhll))

mass0 = U[0].sum() * dx
t, nsteps = 0.0, 0
while t < t_end:
    rho, u, p = primitives(U)
    smax = float(np.max(np.abs(u) + np.sqrt(gamma * p / rho)))
    dt = min(cfl * dx / smax, t_end - t)
    Ug = np.concatenate([U[:, :1], U, U[:, -1:]], axis=1)
    F = hll(Ug[:, :-1], Ug[:, 1:])
    U = U - dt / dx * (F[:, 1:] - F[:, :-1])
    t += dt
    nsteps += 1
rho, u, p = primitives(U)
shock = x[np.nonzero(rho > 0.2)[0][-1]]
plateau = (x > 0.74) & (x < shock - 0.04)
print(f"{nsteps} steps to t = {t:.3f}; mass drift {U[0].sum() * dx - mass0:.2e}; shock near x = {shock:.3f}")
print(f"post-shock plateau: rho {rho[plateau].mean():.4f}, u {u[plateau].mean():.4f}, p {p[plateau].mean():.4f} "
      f"(exact 0.2656, 0.9275, 0.3031)")
"""


def _shock(nx: int) -> dict:
    return {"np": np, "nx": nx, "t_end": 0.2, "cfl": 0.5}


# -- 15. The Hough transform for lines (a computer-vision course): edge pixels by np.nonzero, rho for
# every (pixel, angle) by broadcasting, votes by np.add.at with broadcast_to column indices, a per-angle
# np.bincount loop as a check, peaks by argmax / unravel_index with a suppressed neighbourhood
HOUGH_LINES = """\
thetas = np.deg2rad(np.arange(-90.0, 90.0, 1.0))
cos_t, sin_t = np.cos(thetas), np.sin(thetas)
diag = int(np.ceil(np.hypot(*edges.shape)))
rhos = np.arange(-diag, diag + 1)
acc = np.zeros((len(rhos), len(thetas)), dtype=np.int64)
ys, xs = np.nonzero(edges)
r = np.round(xs[:, None] * cos_t[None, :] + ys[:, None] * sin_t[None, :]).astype(int) + diag
np.add.at(acc, (r, np.broadcast_to(np.arange(len(thetas)), r.shape)), 1)

check = np.zeros_like(acc)
for j in range(len(thetas)):
    check[:, j] = np.bincount(r[:, j], minlength=len(rhos))
assert (check == acc).all()

peaks = []
A = acc.copy()
for _ in range(n_lines):
    i, j = np.unravel_index(np.argmax(A), A.shape)
    peaks.append((rhos[i], np.rad2deg(thetas[j]), acc[i, j]))
    A[max(0, i - 6):i + 7, max(0, j - 6):j + 7] = 0
print(f"{len(xs)} edge pixels, accumulator {acc.shape}, {acc.sum()} votes")
for rho, th, votes in peaks:
    print(f"  rho = {rho:4d}, theta = {th:6.1f} deg, {votes} votes")
"""


def _hough(n: int, n_noise: int) -> dict:
    r = _rng(75)
    edges = np.zeros((n, n), dtype=bool)
    t = np.linspace(0, 1, 3 * n)
    for (y0, x0), (y1, x1) in [((0.1, 0.05), (0.9, 0.95)), ((0.8, 0.1), (0.2, 0.7)), ((0.5, 0.0), (0.5, 1.0)),
                               ((0.0, 0.3), (1.0, 0.35))]:
        yy = np.clip(np.round((y0 + (y1 - y0) * t) * (n - 1)).astype(int), 0, n - 1)
        xx = np.clip(np.round((x0 + (x1 - x0) * t) * (n - 1)).astype(int), 0, n - 1)
        edges[yy, xx] = True
    edges[r.integers(0, n, n_noise), r.integers(0, n, n_noise)] = True
    return {"np": np, "edges": edges, "n_lines": 4}


PROGRAMS += [
    Program("gray_scott", GRAY_SCOTT, _gray_scott, {"tiny": dict(n=16, steps=8), "small": dict(n=112, steps=150)}),
    Program("cnn_im2col", CNN_IM2COL, _cnn, {"tiny": dict(n=2, hw=12, f1=2, f2=3),
                                             "small": dict(n=16, hw=28, f1=8, f2=16)}),
    Program("bn_dropout", BN_DROPOUT, _bn_dropout, {"tiny": dict(n=60, d=4, hidden=8, max_epochs=6, batch=16),
                                                    "small": dict(n=800, d=10, hidden=64, max_epochs=25,
                                                                  batch=100)}),
    Program("markov_text", MARKOV_TEXT, _markov_text, {"tiny": dict(n_words=60, length=50, n_chains=20, burn=5),
                                                       "small": dict(n_words=3000, length=1500, n_chains=2000,
                                                                     burn=30)}),
    Program("levenshtein", LEVENSHTEIN, _levenshtein, {"tiny": dict(n_reads=3, length=8),
                                                       "small": dict(n_reads=8, length=40)}),
    Program("richardson_lucy", RICHARDSON_LUCY, _richardson_lucy, {"tiny": dict(n=20, n_stars=5, n_iter=10),
                                                                   "small": dict(n=96, n_stars=60, n_iter=40)}),
    Program("ray_spheres", RAY_SPHERES, _ray, {"tiny": dict(w=16, h=12), "small": dict(w=160, h=120)}),
    Program("lanczos", LANCZOS, _lanczos, {"tiny": dict(g=4, ms=(4, 8)), "small": dict(g=14, ms=(10, 20, 40, 60))}),
    Program("inventory_sim", INVENTORY_SIM, _inventory, {"tiny": dict(n_stores=5, days=10),
                                                         "small": dict(n_stores=300, days=120)}),
    Program("bilinear_resize", BILINEAR_RESIZE, _bilinear, {"tiny": dict(n=16), "small": dict(n=144)}),
    Program("forest_fire", FOREST_FIRE, _forest, {"tiny": dict(n=12, steps=10), "small": dict(n=96, steps=100)}),
    Program("iir_bank", IIR_BANK, _iir, {"tiny": dict(n=64), "small": dict(n=1200)}),
    Program("jacobi_eig", JACOBI_EIG, _jacobi_eig, {"tiny": dict(n=4), "small": dict(n=10)}),
    Program("shock_tube", SHOCK_TUBE, _shock, {"tiny": dict(nx=40), "small": dict(nx=200)}),
    Program("hough_lines", HOUGH_LINES, _hough, {"tiny": dict(n=16, n_noise=5), "small": dict(n=128, n_noise=300)}),
]


# -- a sixth batch, by a helper agent: seismic waves from a Ricker source with a sponge layer, a
# Crank-Nicolson Black-Scholes solver by np.linalg.solve, Kuramoto oscillators on a random network,
# a hard-sphere gas in a class, a softened N-body cluster with an energy log, Hopfield recall, tabular
# Q-learning, a particle filter with systematic resampling, an LSTM in float32, a multigrid V-cycle,
# Nagel-Schreckenberg traffic, Floyd-Warshall, an SPH density/pressure step, Savitzky-Golay and FIR
# smoothing, L-BFGS logistic regression

# -- 1. Acoustic waves in a two-layer medium (a seismic-imaging course's first finite-difference
# notebook): a Ricker wavelet injected at a source point, a sponge layer that damps the field near the
# edges, a five-point Laplacian on the interior slice, receivers recorded per step into a list, the
# first arrival picked by np.argmax of a threshold mask
SEISMIC_SPONGE = """\
import numpy as np

def ricker(t, f0, t0):
    a = (np.pi * f0 * (t - t0)) ** 2
    return (1 - 2 * a) * np.exp(-a)

vel = np.where(np.arange(n)[:, None] < n // 2, 1.0, 1.4) * np.ones((1, n))
c2 = (vel * dt / dx) ** 2
print(f"CFL number {vel.max() * dt / dx:.3f} (stable below {1 / np.sqrt(2):.3f})")

# sponge: a damping factor that falls off quadratically over `width` cells at every edge
d = np.zeros(n)
ramp = np.arange(width, 0, -1) / width
d[:width] = ramp ** 2
d[-width:] = ramp[::-1] ** 2
damp = np.exp(-0.2 * np.maximum(d[:, None], d[None, :]))

u_prev = np.zeros((n, n))
u = np.zeros((n, n))
sz, sx = width + 3, n // 2
receivers = np.arange(width, n - width, 3)
trace, energy = [], []
for it in range(nt):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
    u_next = 2 * u - u_prev + c2 * lap
    u_next[sz, sx] += dt ** 2 * ricker(it * dt, f0, 1.0 / f0)
    u_next *= damp
    u *= damp
    u_prev, u = u, u_next
    trace.append(u[sz, receivers].copy())
    if it % 25 == 0:
        energy.append(float(np.sum(u ** 2) + np.sum((u - u_prev) ** 2) / dt ** 2))

seis = np.array(trace)
picked = np.abs(seis) > 0.05 * np.abs(seis).max()
first = np.where(picked.any(axis=0), picked.argmax(axis=0), -1)
print(f"seismogram {seis.shape}, peak amplitude {np.abs(seis).max():.3e}")
print("first arrival step per receiver:", first.tolist())
print("energy every 25 steps:", [f"{e:.2e}" for e in energy])
"""


def _seismic(n: int, nt: int, width: int) -> dict:
    return {"n": n, "nt": nt, "width": width, "dt": 0.45, "dx": 1.0, "f0": 0.06}


# -- 2. Black-Scholes by Crank-Nicolson (a computational-finance course): the two tridiagonal matrices
# built with np.diag and offsets, np.linalg.solve each time step, the boundary values in the right-hand
# side, an early-exercise projection for the American put, results kept in a dict, the closed-form
# European price by math.erf in a helper for the check, prices at the money by np.interp
CN_BLACK_SCHOLES = """\
import math

S = np.linspace(0.0, S_max, M + 1)
dt = T / N
j = np.arange(1, M)
a = 0.25 * dt * (sigma ** 2 * j ** 2 - r * j)
b = -0.5 * dt * (sigma ** 2 * j ** 2 + r)
c = 0.25 * dt * (sigma ** 2 * j ** 2 + r * j)
A = np.diag(1 - b) - np.diag(a[1:], -1) - np.diag(c[:-1], 1)
B = np.diag(1 + b) + np.diag(a[1:], -1) + np.diag(c[:-1], 1)
payoff = np.maximum(K - S, 0)

results = {}
for style in ("european", "american"):
    V = payoff.copy()
    for n in range(N):
        lo_old = K * math.exp(-r * n * dt) if style == "european" else K
        lo_new = K * math.exp(-r * (n + 1) * dt) if style == "european" else K
        rhs = B @ V[1:-1]
        rhs[0] += a[0] * (lo_old + lo_new)
        V[1:-1] = np.linalg.solve(A, rhs)
        V[0], V[-1] = lo_new, 0.0
        if style == "american":
            V = np.maximum(V, payoff)
    results[style] = V

def bs_put(s, k, r, sig, t):
    Phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    d1 = (math.log(s / k) + (r + 0.5 * sig ** 2) * t) / (sig * math.sqrt(t))
    d2 = d1 - sig * math.sqrt(t)
    return k * math.exp(-r * t) * Phi(-d2) - s * Phi(-d1)

for s0 in (80.0, 100.0, 120.0):
    eu = np.interp(s0, S, results["european"])
    am = np.interp(s0, S, results["american"])
    print(f"S0={s0:5.1f}: european {eu:.4f} (exact {bs_put(s0, K, r, sigma, T):.4f}), american {am:.4f}, "
          f"premium {am - eu:.4f}")
check = np.linspace(60, 140, 9)
err = max(abs(np.interp(s, S, results["european"]) - bs_put(s, K, r, sigma, T)) for s in check)
exercise = S[(results["american"] - payoff < 1e-10) & (payoff > 0)]
print(f"max error vs closed form {err:.2e}; early-exercise boundary at t=0: S* = {exercise.max():.2f}")
"""


def _cn_bs(M: int, N: int) -> dict:
    return {"np": np, "M": M, "N": N, "S_max": 300.0, "K": 100.0, "r": 0.05, "sigma": 0.25, "T": 1.0}


# -- 3. Kuramoto oscillators on a random network (a network-science / nonlinear-dynamics notebook):
# natural frequencies drawn once, the coupling through an adjacency matrix and np.sin of a phase-
# difference matrix in a right-hand-side function, classic RK4 in a helper, the complex order parameter
# by np.exp(1j * theta), a sweep over the coupling strength, histories kept in lists then np.array
KURAMOTO = """\
import numpy as np

deg = A.sum(axis=1)

def rhs(theta, K):
    diff = theta[None, :] - theta[:, None]
    return omega + K * (A * np.sin(diff)).sum(axis=1) / deg

def rk4(theta, K, h):
    k1 = rhs(theta, K)
    k2 = rhs(theta + 0.5 * h * k1, K)
    k3 = rhs(theta + 0.5 * h * k2, K)
    k4 = rhs(theta + h * k3, K)
    return theta + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

def order_parameter(theta):
    z = np.exp(1j * theta).mean()
    return np.abs(z), np.angle(z)

final_r = []
for K in couplings:
    theta = theta0.copy()
    rs = []
    for step in range(steps):
        theta = rk4(theta, K, h)
        r, psi = order_parameter(theta)
        rs.append(r)
    rs = np.array(rs)
    final_r.append(rs[steps // 2:].mean())
    freq = rhs(theta, K)
    locked = np.abs(freq - freq.mean()) < 0.05
    print(f"K = {K:4.1f}: r = {rs[-1]:.4f} (mean over 2nd half {final_r[-1]:.4f}), "
          f"{locked.sum()} of {len(theta)} frequency-locked")
final_r = np.array(final_r)
Kc = couplings[np.argmax(final_r > 0.5)] if (final_r > 0.5).any() else None
print("r(K):", np.round(final_r, 3), "| first K with r > 0.5:", Kc)
"""


def _kuramoto(n: int, steps: int, couplings: tuple) -> dict:
    r = _rng(81)
    A = (r.random((n, n)) < 0.3).astype(float)
    A = np.triu(A, 1)
    A = A + A.T
    A[np.arange(n), (np.arange(n) + 1) % n] = 1.0  # a ring so that every node has a neighbour
    A[(np.arange(n) + 1) % n, np.arange(n)] = 1.0
    return {"A": A, "omega": r.standard_cauchy(n).clip(-3, 3) * 0.5, "theta0": r.uniform(0, 2 * np.pi, n),
            "couplings": list(couplings), "steps": steps, "h": 0.05}


# -- 4. A hard-sphere gas in a box (a statistical-mechanics lab): a class holding positions and
# velocities, wall reflections by boolean masks, pair collisions found with a distance matrix and
# np.triu, resolved one pair at a time in a Python loop (mutating self.vel rows), the kinetic energy
# per step, and the speed histogram against the 2-D Maxwell-Boltzmann (Rayleigh) density
ELASTIC_GAS = """\
class Gas:
    def __init__(self, pos, vel, radius, L):
        self.pos = pos.copy()
        self.vel = vel.copy()
        self.r = radius
        self.L = L
        self.n_wall = 0
        self.n_pair = 0

    def walls(self):
        out = (self.pos < self.r) | (self.pos > self.L - self.r)
        self.vel[out] *= -1
        self.pos = np.clip(self.pos, self.r, self.L - self.r)
        self.n_wall += int(out.sum())

    def collide(self):
        d = self.pos[:, None, :] - self.pos[None, :, :]
        dist = np.sqrt((d ** 2).sum(axis=-1))
        ii, jj = np.nonzero(np.triu(dist < 2 * self.r, k=1))
        for a, b in zip(ii, jj):
            rij = self.pos[a] - self.pos[b]
            vij = self.vel[a] - self.vel[b]
            approach = vij @ rij
            if approach < 0:
                k = approach / (rij @ rij)
                self.vel[a] -= k * rij
                self.vel[b] += k * rij
                self.n_pair += 1

    def step(self, dt):
        self.pos += dt * self.vel
        self.walls()
        self.collide()

    def kinetic(self):
        return 0.5 * np.sum(self.vel ** 2)

gas = Gas(pos0, vel0, radius, L)
E = [gas.kinetic()]
for t in range(steps):
    gas.step(dt)
    E.append(gas.kinetic())
E = np.array(E)
speed = np.linalg.norm(gas.vel, axis=1)
kT = E[-1] / len(speed)                     # 2-D: <E> = kT per particle
edges = np.linspace(0, 3 * speed.max() / 2, 9)
counts, _ = np.histogram(speed, bins=edges)
mid = 0.5 * (edges[1:] + edges[:-1])
expected = len(speed) * np.diff(edges) * mid / kT * np.exp(-mid ** 2 / (2 * kT))
print(f"{gas.n_pair} pair collisions, {gas.n_wall} wall bounces; energy drift {abs(E[-1] / E[0] - 1):.2e}")
print(f"momentum {gas.vel.sum(axis=0).round(4)}, kT {kT:.4f}, mean speed {speed.mean():.4f}")
print("speed histogram:", counts.tolist(), "| Rayleigh:", np.round(expected, 1).tolist())
"""


def _gas(n: int, steps: int) -> dict:
    r = _rng(82)
    L = 1.0
    g = int(np.ceil(np.sqrt(n)))
    cells = np.stack(np.meshgrid(np.arange(g), np.arange(g)), -1).reshape(-1, 2)[:n]
    pos0 = (cells + 0.5) / g * L + r.uniform(-0.1, 0.1, (n, 2)) / g
    ang = r.uniform(0, 2 * np.pi, n)
    vel0 = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    return {"np": np, "pos0": pos0, "vel0": vel0, "radius": 0.25 / g, "L": L, "steps": steps, "dt": 0.004}


# -- 5. A softened gravitational N-body cluster (an astrophysics course, "build your own N-body code"):
# accelerations by broadcasting with a Plummer softening and np.fill_diagonal, kick-drift-kick leapfrog,
# kinetic and potential energies with np.triu_indices, an energy/virial log appended as tuples every few
# steps then np.array, Lagrangian radii by sorting radii and np.searchsorted on the cumulative mass
NBODY_CLUSTER = """\
import numpy as np

G = 1.0

def accelerations(pos, mass, eps):
    d = pos[None, :, :] - pos[:, None, :]
    inv = ((d ** 2).sum(axis=-1) + eps ** 2) ** -1.5
    np.fill_diagonal(inv, 0.0)
    return G * np.einsum("ijk,ij,j->ik", d, inv, mass)

def energies(pos, vel, mass, eps):
    ke = 0.5 * np.sum(mass * np.sum(vel ** 2, axis=1))
    iu = np.triu_indices(len(mass), 1)
    r = np.sqrt(np.sum((pos[:, None] - pos[None, :]) ** 2, axis=-1) + eps ** 2)
    pe = -G * np.sum((mass[:, None] * mass[None, :] / r)[iu])
    return ke, pe

pos, vel = pos0.copy(), vel0.copy()
pos -= (mass[:, None] * pos).sum(0) / mass.sum()
vel -= (mass[:, None] * vel).sum(0) / mass.sum()
acc = accelerations(pos, mass, eps)
log = []
for step in range(n_steps + 1):
    if step % every == 0:
        ke, pe = energies(pos, vel, mass, eps)
        log.append((step * dt, ke, pe, ke + pe, -2 * ke / pe))
    if step == n_steps:
        break
    vel += 0.5 * dt * acc
    pos += dt * vel
    acc = accelerations(pos, mass, eps)
    vel += 0.5 * dt * acc
log = np.array(log)
E0 = log[0, 3]
print(f"{len(mass)} bodies, {n_steps} steps: max |dE/E0| = {np.abs(log[:, 3] / E0 - 1).max():.2e}")
print("virial ratio 2K/|W| over time:", np.round(log[:, 4], 3).tolist())
radii = np.linalg.norm(pos - (mass[:, None] * pos).sum(0) / mass.sum(), axis=1)
order = np.argsort(radii)
cum = np.cumsum(mass[order]) / mass.sum()
lagr = radii[order][np.searchsorted(cum, [0.1, 0.5, 0.9])]
print(f"Lagrangian radii (10/50/90%): {lagr.round(4)}, escapers beyond 5: {int((radii > 5).sum())}")
"""


def _nbody(n: int, n_steps: int) -> dict:
    r = _rng(83)
    # Plummer sphere radii by inverting the cumulative mass, isotropic directions, a rough virial speed
    X = r.uniform(0.05, 0.95, n)
    rad = 1.0 / np.sqrt(X ** (-2.0 / 3.0) - 1.0)
    u = r.standard_normal((n, 3))
    pos0 = rad[:, None] * u / np.linalg.norm(u, axis=1, keepdims=True)
    v = r.standard_normal((n, 3))
    vesc = np.sqrt(2.0) * (1 + rad ** 2) ** -0.25
    vel0 = 0.5 * vesc[:, None] * v / np.linalg.norm(v, axis=1, keepdims=True)
    return {"pos0": pos0, "vel0": vel0, "mass": np.full(n, 1.0 / n), "eps": 0.05, "dt": 0.01,
            "n_steps": n_steps, "every": max(1, n_steps // 8)}


# -- 6. A Hopfield network (a neural-computation course): +/-1 patterns stored as int8, the Hebbian
# weight matrix with a zero diagonal, recall from corrupted probes by synchronous updates until nothing
# changes (a while loop with a cap), one probe by asynchronous updates in a random order, the energy
# before and after, overlaps per noise level in a dict, the top of the weight spectrum by np.linalg.eigh
HOPFIELD = """\
import numpy as np

rng = np.random.default_rng(5)
N = patterns.shape[1]
P = patterns.astype(np.float64)
W = P.T @ P / N
np.fill_diagonal(W, 0)

def energy(s):
    return -0.5 * s @ W @ s

def corrupt(p, frac):
    s = p.copy()
    flip = rng.choice(N, size=int(frac * N), replace=False)
    s[flip] *= -1
    return s

def recall_sync(s, max_iter=50):
    it = 0
    while it < max_iter:
        new = np.where(W @ s >= 0, 1, -1).astype(np.int8)
        it += 1
        if np.array_equal(new, s):
            break
        s = new
    return s, it

overlaps = {}
for frac in noise_levels:
    ms = []
    for k, p in enumerate(patterns):
        s, it = recall_sync(corrupt(p, frac))
        ms.append(float(s @ p) / N)
    overlaps[frac] = np.array(ms)
    print(f"noise {frac:.2f}: mean overlap {overlaps[frac].mean():.3f}, perfect recalls "
          f"{int((overlaps[frac] == 1).sum())}/{len(patterns)}")

s = corrupt(patterns[0], 0.25).astype(np.float64)
e0 = energy(s)
for sweep in range(3):
    for i in rng.permutation(N):
        s[i] = 1.0 if W[i] @ s >= 0 else -1.0
print(f"async: energy {e0:.3f} -> {energy(s):.3f}, overlap {s @ P[0] / N:.3f}")

evals = np.linalg.eigh(W)[0]
print(f"load alpha = {len(patterns) / N:.3f}; largest eigenvalues {np.round(evals[-3:], 3)}, "
      f"smallest {evals[0]:.3f}")
"""


def _hopfield(n_patterns: int, N: int) -> dict:
    r = _rng(84)
    patterns = np.where(r.random((n_patterns, N)) < 0.5, 1, -1).astype(np.int8)
    return {"patterns": patterns, "noise_levels": [0.05, 0.15, 0.3]}


# -- 7. Tabular Q-learning in a gridworld (a reinforcement-learning course, Sutton & Barto ch. 6):
# walls and pits as boolean maps, moves in a dict of offsets, epsilon-greedy with a seeded Generator
# drawn every step, the TD update on one entry of Q, a decaying epsilon, returns per episode in a list,
# the greedy policy printed as arrows and its value map
Q_LEARNING = """\
import numpy as np

rng = np.random.default_rng(11)
H, W = walls.shape
moves = {0: (-1, 0), 1: (0, 1), 2: (1, 0), 3: (0, -1)}
arrows = "^>v<"
Q = np.zeros((H, W, 4))

def step(state, a):
    r, c = state
    dr, dc = moves[a]
    nr, nc = r + dr, c + dc
    if nr < 0 or nr >= H or nc < 0 or nc >= W or walls[nr, nc]:
        nr, nc = r, c
    if (nr, nc) == goal:
        return (nr, nc), 10.0, True
    if pits[nr, nc]:
        return (nr, nc), -10.0, True
    return (nr, nc), -0.1, False

returns, lengths = [], []
eps = 1.0
for ep in range(n_episodes):
    state, total, done, t = start, 0.0, False, 0
    while not done and t < max_steps:
        if rng.random() < eps:
            a = int(rng.integers(4))
        else:
            a = int(np.argmax(Q[state]))
        nxt, reward, done = step(state, a)
        target = reward if done else reward + gamma * Q[nxt].max()
        Q[state][a] += alpha * (target - Q[state][a])
        state, total, t = nxt, total + reward, t + 1
    returns.append(total)
    lengths.append(t)
    eps = max(0.05, eps * 0.97)

returns = np.array(returns)
V = Q.max(axis=2)
policy = Q.argmax(axis=2)
print(f"last 20 episodes: mean return {returns[-20:].mean():.3f}, mean length {np.mean(lengths[-20:]):.1f}")
for r in range(H):
    print("".join("#" if walls[r, c] else "O" if pits[r, c] else "G" if (r, c) == goal else arrows[policy[r, c]]
                  for c in range(W)))
print(f"V(start) = {V[start]:.3f}, best V = {V.max():.3f}, visited states {int((np.abs(Q).sum(axis=2) > 0).sum())}")
"""


def _q_learning(h: int, w: int, n_episodes: int) -> dict:
    r = _rng(85)
    walls = r.random((h, w)) < 0.15
    pits = (r.random((h, w)) < 0.06) & ~walls
    start, goal = (h - 1, 0), (0, w - 1)
    for cell in (start, goal):
        walls[cell] = pits[cell] = False
    return {"walls": walls, "pits": pits, "start": start, "goal": goal, "n_episodes": n_episodes,
            "max_steps": 4 * h * w, "alpha": 0.5, "gamma": 0.95}


# -- 8. Robot localisation with a particle filter (Thrun's "Probabilistic Robotics" exercise): particles
# as an (N, 3) array of x, y, heading; a noisy motion model drawn from a Generator each step; range
# measurements to landmarks scored by log-likelihoods; weights normalised with the max subtracted; the
# effective sample size; systematic resampling by np.cumsum and np.searchsorted when it drops
PARTICLE_FILTER = """\
rng = np.random.default_rng(21)

def move(p, turn, forward, noise):
    p[:, 2] = (p[:, 2] + turn + rng.normal(0, noise[0], len(p))) % (2 * np.pi)
    dist = forward + rng.normal(0, noise[1], len(p))
    p[:, 0] += np.cos(p[:, 2]) * dist
    p[:, 1] += np.sin(p[:, 2]) * dist
    return p

def ranges(xy):
    return np.linalg.norm(xy[..., None, :] - landmarks, axis=-1)

def systematic_resample(w):
    n = len(w)
    positions = (rng.random() + np.arange(n)) / n
    cum = np.cumsum(w)
    cum[-1] = 1.0
    return np.searchsorted(cum, positions)

robot = np.array([[5.0, 5.0, 0.3]])
particles = np.column_stack([rng.uniform(0, world, n_particles), rng.uniform(0, world, n_particles),
                             rng.uniform(0, 2 * np.pi, n_particles)])
weights = np.full(n_particles, 1.0 / n_particles)
errors, n_resample = [], 0
for t in range(T):
    turn, fwd = 0.1, 1.0
    robot = move(robot, turn, fwd, (0.0, 0.0))
    z = ranges(robot[:, :2])[0] + rng.normal(0, sense_sd, len(landmarks))
    particles = move(particles, turn, fwd, (0.05, 0.1))
    logw = -0.5 * (((ranges(particles[:, :2]) - z) / sense_sd) ** 2).sum(axis=1)
    weights = weights * np.exp(logw - logw.max())
    weights /= weights.sum()
    n_eff = 1.0 / np.sum(weights ** 2)
    if n_eff < n_particles / 2:
        idx = systematic_resample(weights)
        particles = particles[idx]
        weights = np.full(n_particles, 1.0 / n_particles)
        n_resample += 1
    est = np.average(particles[:, :2], weights=weights, axis=0)
    errors.append(np.hypot(*(est - robot[0, :2])))
errors = np.array(errors)
print(f"{n_resample} resamplings in {T} steps; final error {errors[-1]:.3f}, mean error over the 2nd half "
      f"{errors[T // 2:].mean():.3f}")
print("error every 5 steps:", np.round(errors[::5], 3).tolist())
print(f"unique particles at the end: {len(np.unique(particles[:, 0]))}, spread {particles[:, :2].std(axis=0).round(3)}")
"""


def _pf(n_particles: int, T: int) -> dict:
    r = _rng(86)
    return {"np": np, "landmarks": r.uniform(0, 100.0, (6, 2)), "world": 100.0, "n_particles": n_particles, "T": T,
            "sense_sd": 3.0}


# -- 9. An LSTM forward pass in float32 (a "deep learning from scratch" notebook): a class with the four
# gates in one weight matrix, a numerically stable sigmoid, padded variable-length sequences with a mask
# that keeps finished rows' states by np.where, hidden states stacked over time, a linear read-out with
# a keepdims softmax, per-gate mean activations in a dict, the dtype kept float32 through the loop
LSTM_FORWARD = """\
import numpy as np

def sigmoid(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))

class LSTMCell:
    def __init__(self, W, b):
        self.W, self.b = W, b
        self.H = W.shape[0] // 4
        self.stats = {"input": [], "forget": [], "output": []}

    def __call__(self, x, h, c):
        z = np.concatenate([x, h], axis=1) @ self.W.T + self.b
        H = self.H
        i, f, o = sigmoid(z[:, :H]), sigmoid(z[:, H:2 * H]), sigmoid(z[:, 2 * H:3 * H])
        g = np.tanh(z[:, 3 * H:])
        c_new = f * c + i * g
        h_new = o * np.tanh(c_new)
        for name, gate in zip(("input", "forget", "output"), (i, f, o)):
            self.stats[name].append(float(gate.mean()))
        return h_new, c_new

cell = LSTMCell(W, b)
B, T_max, _ = xs.shape
h = np.zeros((B, cell.H), dtype=np.float32)
c = np.zeros((B, cell.H), dtype=np.float32)
hs = []
for t in range(T_max):
    h_new, c_new = cell(xs[:, t], h, c)
    alive = (t < lengths)[:, None]
    h = np.where(alive, h_new, h)
    c = np.where(alive, c_new, c)
    hs.append(h)
hs = np.stack(hs, axis=1)
logits = h @ W_out + b_out
logits -= logits.max(axis=1, keepdims=True)
probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
print(f"hidden states {hs.shape} {hs.dtype}, |h| max {np.abs(hs).max():.4f}, probs {probs.dtype}")
print("mean gate activations:", {k: round(float(np.mean(v)), 4) for k, v in cell.stats.items()})
print("predicted classes:", probs.argmax(axis=1).tolist()[:16], "| confidence", probs.max(axis=1).mean().round(4))
"""


def _lstm(B: int, T: int, D: int, H: int) -> dict:
    r = _rng(87)
    scale = 1 / np.sqrt(D + H)
    W = (r.standard_normal((4 * H, D + H)) * scale).astype(np.float32)
    b = np.zeros(4 * H, dtype=np.float32)
    b[H:2 * H] = 1.0  # forget-gate bias of one
    return {"xs": r.standard_normal((B, T, D)).astype(np.float32), "lengths": r.integers(T // 2, T + 1, B),
            "W": W, "b": b, "W_out": (r.standard_normal((H, 5)) / np.sqrt(H)).astype(np.float32),
            "b_out": np.zeros(5, dtype=np.float32)}


# -- 10. A multigrid V-cycle for -u'' = f on (0, 1) (Briggs, Henson & McCormick, "A Multigrid
# Tutorial"): weighted Jacobi as a helper that smooths in place, full-weighting restriction, linear
# interpolation, a recursive V-cycle down to five points solved by np.linalg.solve, cycles until
# ``float(norm(residual)) < tol`` with the convergence factor of each cycle
MULTIGRID_1D = """\
import numpy as np

def residual(u, f, h):
    r = np.zeros_like(u)
    r[1:-1] = f[1:-1] - (2 * u[1:-1] - u[:-2] - u[2:]) / h ** 2
    return r

def smooth(u, f, h, sweeps, w=2 / 3):
    for _ in range(sweeps):
        u[1:-1] = (1 - w) * u[1:-1] + w * 0.5 * (u[:-2] + u[2:] + h ** 2 * f[1:-1])

def restrict(r):
    rc = np.zeros((len(r) + 1) // 2)
    rc[1:-1] = 0.25 * r[1:-2:2] + 0.5 * r[2:-1:2] + 0.25 * r[3::2]
    return rc

def prolong(ec):
    e = np.zeros(2 * len(ec) - 1)
    e[::2] = ec
    e[1::2] = 0.5 * (ec[:-1] + ec[1:])
    return e

def vcycle(u, f, h):
    if len(u) <= 5:
        m = len(u) - 2
        A = (2 * np.eye(m) - np.eye(m, k=1) - np.eye(m, k=-1)) / h ** 2
        u[1:-1] = np.linalg.solve(A, f[1:-1])
        return u
    smooth(u, f, h, 2)
    rc = restrict(residual(u, f, h))
    ec = vcycle(np.zeros_like(rc), rc, 2 * h)
    u += prolong(ec)
    smooth(u, f, h, 2)
    return u

x = np.linspace(0, 1, n + 1)
h = x[1] - x[0]
f = np.pi ** 2 * np.sin(np.pi * x) + 25 * np.pi ** 2 * np.sin(5 * np.pi * x)
exact = np.sin(np.pi * x) + np.sin(5 * np.pi * x)
u = np.zeros_like(x)
res = np.linalg.norm(residual(u, f, h)) * np.sqrt(h)
history = [res]
cycles = 0
while float(res) > tol and cycles < 30:
    u = vcycle(u, f, h)
    res = np.linalg.norm(residual(u, f, h)) * np.sqrt(h)
    history.append(res)
    cycles += 1
factors = np.array(history[1:]) / np.array(history[:-1])
print(f"n = {n}: {cycles} V-cycles to residual {history[-1]:.2e}; convergence factors {np.round(factors, 3)}")
print(f"max error vs exact {np.abs(u - exact).max():.3e} (h^2 = {h ** 2:.2e})")
"""


def _multigrid(k: int) -> dict:
    return {"n": 2 ** k, "tol": 1e-9}


# -- 11. Nagel-Schreckenberg traffic on a ring road (a complex-systems course): cars as sorted integer
# positions, gaps by np.roll, the four rules (accelerate, brake to the gap, random dawdling drawn each
# step, move) on int64 arrays, the road as an int8 space-time diagram, a density sweep for the
# fundamental diagram, the jam fraction by counting stopped cars
NAGEL_SCHRECKENBERG = """\
import numpy as np

rng = np.random.default_rng(8)

def nasch_step(pos, v, L, vmax, p):
    gap = (np.roll(pos, -1) - pos - 1) % L
    v = np.minimum(v + 1, vmax)
    v = np.minimum(v, gap)
    dawdle = rng.random(len(v)) < p
    v = np.where(dawdle, np.maximum(v - 1, 0), v)
    return (pos + v) % L, v

flows, jams = [], []
for rho in densities:
    n_cars = int(rho * L)
    pos = np.sort(rng.choice(L, n_cars, replace=False))
    v = np.zeros(n_cars, dtype=np.int64)
    moved = 0
    stopped = 0
    diagram = []
    for t in range(steps):
        pos, v = nasch_step(pos, v, L, vmax, p_slow)
        if t >= steps // 2:
            moved += int(v.sum())
            stopped += int((v == 0).sum())
        if t % 10 == 0:
            road = np.full(L, -1, dtype=np.int8)
            road[pos] = v
            diagram.append(road)
    flows.append(moved / (L * (steps - steps // 2)))
    jams.append(stopped / (n_cars * (steps - steps // 2)))
    order_ok = np.all(np.diff(np.sort(pos)) > 0)
    print(f"density {rho:.2f}: {n_cars:4d} cars, flow {flows[-1]:.4f}, stopped {jams[-1]:.3f}, "
          f"mean speed {v.mean():.3f}, no overlaps: {order_ok}")
diagram = np.array(diagram)
best = densities[int(np.argmax(flows))]
print(f"capacity {max(flows):.4f} at density {best}; last space-time diagram {diagram.shape} {diagram.dtype}")
print("last rows:", ["".join("." if x < 0 else str(x) for x in row[:60]) for row in diagram[-3:]])
"""


def _nasch(L: int, steps: int) -> dict:
    return {"L": L, "steps": steps, "densities": [0.08, 0.15, 0.3, 0.5], "vmax": 5, "p_slow": 0.25}


# -- 12. All-pairs shortest paths by Floyd-Warshall (an algorithms course, "vectorise the inner two
# loops"): np.inf for missing edges, np.minimum of a broadcast sum per pivot, a next-hop matrix
# updated with np.where, path reconstruction in a helper, a check against Dijkstra with heapq from one
# source, eccentricities, the diameter, closeness centrality and the top nodes by np.argsort
FLOYD_WARSHALL = """\
import heapq

n = len(weights)
D = np.where(adj, weights, np.inf)
np.fill_diagonal(D, 0.0)
nxt = np.where(adj, np.arange(n)[None, :], -1)
np.fill_diagonal(nxt, np.arange(n))
for k in range(n):
    via = D[:, k, None] + D[None, k, :]
    better = via < D
    D = np.minimum(D, via)
    nxt = np.where(better, nxt[:, k, None], nxt)

def path(i, j):
    if nxt[i, j] < 0:
        return []
    p = [i]
    while i != j:
        i = int(nxt[i, j])
        p.append(i)
    return p

def dijkstra(src):
    dist = [math.inf] * n
    dist[src] = 0.0
    heap = [(0.0, src)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist[u]:
            continue
        for v in np.flatnonzero(adj[u]):
            nd = d + weights[u, v]
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, int(v)))
    return np.array(dist)

assert np.allclose(dijkstra(0), D[0]), "Dijkstra disagrees"
reach = np.isfinite(D)
ecc = np.where(reach.all(axis=1), D.max(axis=1), np.inf)
closeness = (reach.sum(axis=1) - 1) / np.where(reach, D, 0).sum(axis=1)
top = np.argsort(-closeness)[:5]
print(f"{n} nodes, {int(adj.sum())} edges; reachable pairs {reach.mean():.3f}; diameter {D[reach].max():.3f}")
p = path(0, n - 1)
print(f"path 0 -> {n - 1}: {p}, length {D[0, n - 1]:.3f}, sum of its edges {sum(weights[a, b] for a, b in zip(p, p[1:])):.3f}")
print("most central:", top.tolist(), np.round(closeness[top], 4).tolist(), "| min eccentricity", np.round(ecc.min(), 3))
"""


def _floyd(n: int) -> dict:
    r = _rng(88)
    adj = r.random((n, n)) < 3.0 / n
    adj[np.arange(n), (np.arange(n) + 1) % n] = True  # a directed ring: everything reachable
    np.fill_diagonal(adj, False)
    return {"np": np, "math": math, "adj": adj, "weights": np.round(r.uniform(1, 10, (n, n)), 2)}


# -- 13. Smoothed-particle hydrodynamics (a "SPH in 100 lines" blog post): a 2-D blob of fluid under
# gravity in a box, neighbour pairs from a distance matrix by np.nonzero, the cubic-spline kernel and
# its gradient in helpers, densities and forces accumulated over pairs with np.add.at, a Tait-like
# equation of state, artificial viscosity, wall reflections with damping, a density log per step
SPH_STEP = """\
import numpy as np

def W_cubic(r, h):
    q = r / h
    s = 10 / (7 * np.pi * h ** 2)
    return s * np.where(q < 1, 1 - 1.5 * q ** 2 + 0.75 * q ** 3, np.where(q < 2, 0.25 * (2 - q) ** 3, 0.0))

def dW_cubic(r, h):
    q = r / h
    s = 10 / (7 * np.pi * h ** 3)
    return s * np.where(q < 1, -3 * q + 2.25 * q ** 2, np.where(q < 2, -0.75 * (2 - q) ** 2, 0.0))

pos, vel = pos0.copy(), np.zeros_like(pos0)
n = len(pos)
rho_log, pairs_log = [], []
for step in range(n_steps):
    d = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt((d ** 2).sum(axis=-1))
    i, j = np.nonzero((r < 2 * h) & (r > 0))
    rij, dij = r[i, j], d[i, j]
    rho = np.full(n, m * W_cubic(0.0, h))
    np.add.at(rho, i, m * W_cubic(rij, h))
    P = k_eos * ((rho / rho0) ** 7 - 1)
    vij = vel[i] - vel[j]
    vr = (vij * dij).sum(axis=1)
    mu = np.where(vr < 0, h * vr / (rij ** 2 + 0.01 * h ** 2), 0.0)
    visc = -alpha * c0 * mu / (0.5 * (rho[i] + rho[j]))
    coef = -m * (P[i] / rho[i] ** 2 + P[j] / rho[j] ** 2 + visc) * dW_cubic(rij, h) / rij
    acc = np.zeros_like(pos)
    np.add.at(acc, i, coef[:, None] * dij)
    acc[:, 1] -= g
    vel += dt * acc
    pos += dt * vel
    for ax in range(2):
        low, high = pos[:, ax] < 0, pos[:, ax] > box[ax]
        pos[low, ax] = -pos[low, ax]
        pos[high, ax] = 2 * box[ax] - pos[high, ax]
        vel[low | high, ax] *= -0.5
    rho_log.append((rho.min(), rho.mean(), rho.max()))
    pairs_log.append(len(i) // 2)
rho_log = np.array(rho_log)
print(f"{n} particles, {n_steps} steps; neighbour pairs {pairs_log[0]} -> {pairs_log[-1]}")
print(f"density min/mean/max at the end: {rho_log[-1].round(3)} (rho0 = {rho0})")
print(f"centre of mass {pos.mean(axis=0).round(4)}, max speed {np.linalg.norm(vel, axis=1).max():.4f}")
"""


def _sph(nx: int, n_steps: int) -> dict:
    r = _rng(89)
    dx = 0.05
    g = np.stack(np.meshgrid(np.arange(nx), np.arange(nx)), -1).reshape(-1, 2) * dx + 0.1
    pos0 = g + r.uniform(-0.1, 0.1, g.shape) * dx
    return {"pos0": pos0, "h": 1.3 * dx, "m": 1000.0 * dx * dx, "rho0": 1000.0, "k_eos": 200.0,
            "c0": 10.0, "alpha": 0.1, "g": 9.81, "dt": 5e-4, "n_steps": n_steps, "box": (2.0, 2.0)}


# -- 14. Smoothing a noisy signal (a signal-processing notebook, "Savitzky-Golay vs a moving average
# vs a windowed-sinc FIR"): filter coefficients from a Vandermonde matrix and np.linalg.pinv in a
# function returning a closure, edges padded by reflection with np.concatenate, np.convolve with
# mode="valid", the FIR designed with np.sinc and np.hamming, errors in a dict, the derivative against
# np.gradient, peaks by sign changes of np.diff
SAVGOL_FIR = """\
import math
import numpy as np

def savgol_coeffs(window, order, deriv=0):
    half = window // 2
    k = np.arange(-half, half + 1)
    V = np.vander(k, order + 1, increasing=True)
    return np.linalg.pinv(V)[deriv] * math.factorial(deriv)

def make_filter(taps):
    half = len(taps) // 2
    def apply(x):
        padded = np.concatenate([x[half:0:-1], x, x[-2:-half - 2:-1]])
        return np.convolve(padded, taps[::-1], mode="valid")
    return apply

def lowpass_taps(numtaps, cutoff):
    n = np.arange(numtaps) - (numtaps - 1) / 2
    h = np.sinc(2 * cutoff * n) * np.hamming(numtaps)
    return h / h.sum()

filters = {
    "moving average": make_filter(np.ones(window) / window),
    "savitzky-golay": make_filter(savgol_coeffs(window, 3)),
    "windowed sinc": make_filter(lowpass_taps(window, 0.03)),
}
rmse = lambda a: float(np.sqrt(np.mean((a - clean) ** 2)))
results = {name: f(noisy) for name, f in filters.items()}
errors = {name: rmse(y) for name, y in results.items()}
for name, e in sorted(errors.items(), key=lambda kv: kv[1]):
    print(f"{name:15s} rmse {e:.5f} (noisy {rmse(noisy):.5f})")

dt = t[1] - t[0]
deriv = make_filter(savgol_coeffs(window, 3, deriv=1))(noisy) / dt
true_deriv = np.gradient(clean, dt)
print(f"derivative rmse: savgol {np.sqrt(np.mean((deriv - true_deriv) ** 2)):.4f}, "
      f"finite differences {np.sqrt(np.mean((np.gradient(noisy, dt) - true_deriv) ** 2)):.4f}")
sg = results["savitzky-golay"]
ds = np.sign(np.diff(sg))
peaks = np.flatnonzero((ds[:-1] > 0) & (ds[1:] <= 0)) + 1
peaks = peaks[sg[peaks] > 0.5]
print(f"{len(peaks)} peaks above 0.5 at t =", np.round(t[peaks], 2).tolist()[:10])
"""


def _savgol(n: int, window: int) -> dict:
    r = _rng(90)
    t = np.linspace(0, 10, n)
    clean = np.sin(2 * np.pi * 0.3 * t) + 0.5 * np.exp(-((t - 6) / 0.4) ** 2) + 0.2 * np.cos(2 * np.pi * 1.1 * t)
    return {"t": t, "clean": clean, "noisy": clean + 0.2 * r.standard_normal(n), "window": window}


# -- 15. L2-regularised logistic regression by L-BFGS (Nocedal & Wright, algorithm 7.4): the loss and
# gradient by np.logaddexp in one function, the two-loop recursion over a collections.deque of (s, y)
# pairs, an Armijo backtracking line search in a while loop, stopping on float(norm(grad)) < tol, then
# Newton's method with np.linalg.solve on the Hessian as a check, both iteration logs printed
LBFGS_LOGREG = """\
from collections import deque

def loss_grad(w):
    z = X @ w
    loss = np.mean(np.logaddexp(0, z) - y * z) + 0.5 * lam * w @ w
    p = 1 / (1 + np.exp(-z))
    return loss, X.T @ (p - y) / len(y) + lam * w

def two_loop(g, pairs):
    q = g.copy()
    alphas = []
    for s, yv in reversed(pairs):
        a = (s @ q) / (yv @ s)
        q -= a * yv
        alphas.append(a)
    if pairs:
        s, yv = pairs[-1]
        q *= (s @ yv) / (yv @ yv)
    for (s, yv), a in zip(pairs, reversed(alphas)):
        b = (yv @ q) / (yv @ s)
        q += s * (a - b)
    return -q

w = np.zeros(X.shape[1])
f, g = loss_grad(w)
pairs = deque(maxlen=memory)
it, n_evals = 0, 1
while float(np.linalg.norm(g)) > tol and it < 200:
    d = two_loop(g, pairs)
    t = 1.0
    f_new, g_new = loss_grad(w + t * d)
    n_evals += 1
    while f_new > f + 1e-4 * t * (g @ d):
        t *= 0.5
        f_new, g_new = loss_grad(w + t * d)
        n_evals += 1
    s, yv = t * d, g_new - g
    if s @ yv > 1e-12:
        pairs.append((s, yv))
    w, f, g = w + s, f_new, g_new
    it += 1
print(f"L-BFGS(m={memory}): {it} iterations, {n_evals} evaluations, loss {f:.8f}, |grad| {np.linalg.norm(g):.2e}")

w_newton = np.zeros(X.shape[1])
for k in range(8):
    z = X @ w_newton
    p = 1 / (1 + np.exp(-z))
    grad = X.T @ (p - y) / len(y) + lam * w_newton
    Hess = (X.T * (p * (1 - p))) @ X / len(y) + lam * np.eye(X.shape[1])
    w_newton -= np.linalg.solve(Hess, grad)
print(f"Newton: |w - w_lbfgs| = {np.linalg.norm(w_newton - w):.2e}, loss {loss_grad(w_newton)[0]:.8f}")
acc = np.mean((X @ w > 0) == (y > 0.5))
print(f"training accuracy {acc:.4f}; largest weights at", np.argsort(-np.abs(w))[:5].tolist())
"""


def _lbfgs(n: int, d: int) -> dict:
    r = _rng(91)
    X = np.column_stack([np.ones(n), r.standard_normal((n, d - 1)) * r.uniform(0.5, 3, d - 1)])
    w_true = r.standard_normal(d) * (r.random(d) < 0.4)
    y = (r.random(n) < 1 / (1 + np.exp(-X @ w_true))).astype(float)
    return {"np": np, "X": X, "y": y, "lam": 1e-3, "memory": 7, "tol": 1e-8}


PROGRAMS += [
    Program("seismic_sponge", SEISMIC_SPONGE, _seismic, {"tiny": dict(n=24, nt=30, width=4),
                                                         "small": dict(n=100, nt=200, width=12)}),
    Program("cn_black_scholes", CN_BLACK_SCHOLES, _cn_bs, {"tiny": dict(M=30, N=8), "small": dict(M=120, N=50)}),
    Program("kuramoto", KURAMOTO, _kuramoto, {"tiny": dict(n=10, steps=10, couplings=(0.5, 3.0)),
                                              "small": dict(n=40, steps=60, couplings=(0.5, 1.5, 3.0))}),
    Program("elastic_gas", ELASTIC_GAS, _gas, {"tiny": dict(n=12, steps=10), "small": dict(n=60, steps=100)}),
    Program("nbody_cluster", NBODY_CLUSTER, _nbody, {"tiny": dict(n=8, n_steps=10), "small": dict(n=64, n_steps=100)}),
    Program("hopfield", HOPFIELD, _hopfield, {"tiny": dict(n_patterns=2, N=20), "small": dict(n_patterns=10, N=120)}),
    Program("q_learning", Q_LEARNING, _q_learning, {"tiny": dict(h=4, w=5, n_episodes=5),
                                                    "small": dict(h=6, w=8, n_episodes=120)}),
    Program("particle_filter", PARTICLE_FILTER, _pf, {"tiny": dict(n_particles=50, T=8),
                                                      "small": dict(n_particles=600, T=50)}),
    Program("lstm_forward", LSTM_FORWARD, _lstm, {"tiny": dict(B=4, T=5, D=3, H=4),
                                                  "small": dict(B=32, T=40, D=8, H=32)}),
    Program("multigrid_1d", MULTIGRID_1D, _multigrid, {"tiny": dict(k=4), "small": dict(k=10)}),
    Program("nagel_schreckenberg", NAGEL_SCHRECKENBERG, _nasch, {"tiny": dict(L=40, steps=12),
                                                                 "small": dict(L=400, steps=200)}),
    Program("floyd_warshall", FLOYD_WARSHALL, _floyd, {"tiny": dict(n=8), "small": dict(n=120)}),
    Program("sph_step", SPH_STEP, _sph, {"tiny": dict(nx=4, n_steps=4), "small": dict(nx=12, n_steps=15)}),
    Program("savgol_fir", SAVGOL_FIR, _savgol, {"tiny": dict(n=100, window=9), "small": dict(n=5000, window=151)}),
    Program("lbfgs_logreg", LBFGS_LOGREG, _lbfgs, {"tiny": dict(n=60, d=4), "small": dict(n=2000, d=30)}),
]



# -- batch: option trees, fluid and particle steps, volatility filters, element loops, SGD, rolling
# windows, image pyramids, quantum propagation, trees from scratch, Lorenz-96, cross-validation --

# American put on a Cox-Ross-Rubinstein binomial tree (a quant-finance course / Hull's textbook
# exercise): backward induction over slices V[:i+1], early exercise by np.maximum, the exercise
# boundary recorded while stepping back, the European value and Black-Scholes (math.erf) as checks
BINOMIAL_AMERICAN = """\
import math

def crr_price(S0, K, r, sigma, T, N, american=True):
    dt = T / N
    u = math.exp(sigma * math.sqrt(dt))
    d = 1 / u
    p = (math.exp(r * dt) - d) / (u - d)
    q = 1 - p
    disc = math.exp(-r * dt)
    j = np.arange(N + 1)
    S = S0 * u ** (N - j) * d ** j
    V = np.maximum(K - S, 0.0)
    boundary = np.full(N, np.nan)
    for i in range(N - 1, -1, -1):
        S = S0 * u ** (i - j[:i + 1]) * d ** j[:i + 1]
        V[:i + 1] = disc * (p * V[:i + 1] + q * V[1:i + 2])
        if american:
            exercise = K - S > V[:i + 1]
            V[:i + 1] = np.maximum(V[:i + 1], K - S)
            if exercise.any():
                boundary[i] = S[exercise].max()
    return V[0], boundary

def bs_put(S0, K, r, sigma, T):
    N = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
    d1 = (math.log(S0 / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * math.sqrt(T))
    d2 = d1 - sigma * math.sqrt(T)
    return K * math.exp(-r * T) * N(-d2) - S0 * N(-d1)

rows = []
for K in strikes:
    am, bnd = crr_price(S0, K, r, sigma, T, n_steps)
    eu, _ = crr_price(S0, K, r, sigma, T, n_steps, american=False)
    bs = bs_put(S0, K, r, sigma, T)
    rows.append((K, am, eu, bs, am - eu))
    print(f"K={K:6.1f}  american {am:8.4f}  european {eu:8.4f}  BS {bs:8.4f}  premium {am - eu:.4f}")
table = np.array(rows)
print("critical price at t=0+:", np.round(bnd[np.isfinite(bnd)][:3], 3))
"""


def _binomial_american(n_steps: int, n_strikes: int) -> dict:
    return {"np": np, "S0": 100.0, "r": 0.05, "sigma": 0.3, "T": 1.0, "n_steps": n_steps,
            "strikes": list(np.linspace(80.0, 120.0, n_strikes))}


# 2-D shallow-water equations, explicit forward-backward step (a geophysical-fluids class notebook):
# helper functions ddx/ddy/lap returning interior slices, reflective walls reset every step, mass and
# energy logged every few steps
SHALLOW_WATER = """\
def ddx(f):
    return (f[1:-1, 2:] - f[1:-1, :-2]) / (2 * dx)

def ddy(f):
    return (f[2:, 1:-1] - f[:-2, 1:-1]) / (2 * dy)

def lap(f):
    return ((f[1:-1, 2:] - 2 * f[1:-1, 1:-1] + f[1:-1, :-2]) / dx ** 2
            + (f[2:, 1:-1] - 2 * f[1:-1, 1:-1] + f[:-2, 1:-1]) / dy ** 2)

ny, nx = h0.shape
dx = dy = 1.0 / nx
h = h0.copy()
u = np.zeros_like(h)
v = np.zeros_like(h)
c = np.sqrt(g * h.max())
dt = 0.2 * dx / c
mass, energy = [], []
for n in range(nsteps):
    ui, vi = u[1:-1, 1:-1], v[1:-1, 1:-1]
    u[1:-1, 1:-1] = ui - dt * (g * ddx(h) + ui * ddx(u) + vi * ddy(u)) + nu * dt * lap(u)
    v[1:-1, 1:-1] = vi - dt * (g * ddy(h) + ui * ddx(v) + vi * ddy(v)) + nu * dt * lap(v)
    h[1:-1, 1:-1] = h[1:-1, 1:-1] - dt * (ddx(h * u) + ddy(h * v))
    u[:, 0] = 0.0
    u[:, -1] = 0.0
    v[0, :] = 0.0
    v[-1, :] = 0.0
    h[:, 0] = h[:, 1]
    h[:, -1] = h[:, -2]
    h[0, :] = h[1, :]
    h[-1, :] = h[-2, :]
    if n % 10 == 0:
        mass.append(h.sum() * dx * dy)
        energy.append(0.5 * np.sum(h * (u ** 2 + v ** 2) + g * h ** 2) * dx * dy)
speed = np.sqrt(u ** 2 + v ** 2)
print(f"t = {nsteps * dt:.4f}: h in [{h.min():.4f}, {h.max():.4f}], max speed {speed.max():.4f}")
print(f"mass drift {(mass[-1] - mass[0]) / mass[0]:.2e}, energy {energy[0]:.5f} -> {energy[-1]:.5f}")
"""


def _shallow_water(n: int, nsteps: int) -> dict:
    y, x = np.mgrid[0:n, 0:n] / n
    h0 = 1.0 + 0.1 * np.exp(-((x - 0.4) ** 2 + (y - 0.55) ** 2) / 0.005)
    return {"np": np, "h0": h0, "g": 9.81, "nu": 1e-4, "nsteps": nsteps}


# Lennard-Jones fluid with velocity Verlet in reduced units (a molecular-simulation course, after
# Allen & Tildesley / Frenkel & Smit): all pairs by broadcasting, minimum image with np.round,
# np.fill_diagonal, cut-off and shifted potential, velocity rescaling for the first half, then NVE
THERMOSTAT_LJ = """\
def lj_forces(pos):
    d = pos[:, None, :] - pos[None, :, :]
    d -= L * np.round(d / L)
    r2 = np.sum(d * d, axis=-1)
    np.fill_diagonal(r2, np.inf)
    inside = r2 < rc ** 2
    inv6 = np.where(inside, 1.0 / r2 ** 3, 0.0)
    fscal = np.where(inside, 24.0 * (2.0 * inv6 ** 2 - inv6) / r2, 0.0)
    F = np.sum(fscal[:, :, None] * d, axis=1)
    e_shift = 4.0 * (rc ** -12 - rc ** -6)
    U = 0.5 * np.sum(np.where(inside, 4.0 * (inv6 ** 2 - inv6) - e_shift, 0.0))
    W = 0.5 * np.sum(24.0 * (2.0 * inv6 ** 2 - inv6))
    return F, U, W

N = len(pos0)
pos = pos0.copy()
vel = vel0 - vel0.mean(axis=0)
F, U, W = lj_forces(pos)
log = []
for step in range(n_steps):
    vel += 0.5 * dt * F
    pos += dt * vel
    pos %= L
    F, U, W = lj_forces(pos)
    vel += 0.5 * dt * F
    K = 0.5 * np.sum(vel ** 2)
    T_inst = 2 * K / (3 * (N - 1))
    if step < n_steps // 2:
        vel *= np.sqrt(T_target / T_inst)
    if step % 5 == 0:
        P = (N * T_inst + W / 3) / L ** 3
        log.append([step, T_inst, U / N, (K + U) / N, P])
log = np.array(log)
nve = log[log[:, 0] >= n_steps // 2]
print(f"N={N}, rho={N / L ** 3:.3f}: <T>={nve[:, 1].mean():.4f}, <U>/N={nve[:, 2].mean():.4f}, "
      f"<P>={nve[:, 4].mean():.4f}, E drift {nve[-1, 3] - nve[0, 3]:.2e}")
"""


def _lj(m: int, n_steps: int) -> dict:
    r = _rng(101)
    rho = 0.8
    N = m ** 3
    L = (N / rho) ** (1 / 3)
    a = L / m
    g = np.stack(np.meshgrid(np.arange(m), np.arange(m), np.arange(m), indexing="ij"), -1).reshape(-1, 3)
    pos0 = (g + 0.5) * a + r.uniform(-0.05, 0.05, (N, 3))
    vel0 = r.normal(0.0, 1.0, (N, 3))
    return {"np": np, "pos0": pos0, "vel0": vel0, "L": L, "rc": min(2.5, L / 2), "dt": 0.004,
            "n_steps": n_steps, "T_target": 1.2}


# GARCH(1,1) fitted by a grid search over (alpha, beta) with variance targeting (an econometrics
# homework without scipy): the variance recursion as a scalar Python loop over a 1-D array, the
# Gaussian negative log-likelihood, then RiskMetrics EWMA and 1% VaR breach counts
GARCH_GRID = """\
import math

def garch_filter(r, omega, alpha, beta):
    sigma2 = np.empty_like(r)
    sigma2[0] = r.var()
    for t in range(1, len(r)):
        sigma2[t] = omega + alpha * r[t - 1] ** 2 + beta * sigma2[t - 1]
    return sigma2

def nll(omega, alpha, beta):
    s2 = garch_filter(returns, omega, alpha, beta)
    return 0.5 * np.sum(np.log(2 * math.pi) + np.log(s2) + returns ** 2 / s2)

var_r = returns.var()
best = (math.inf, None, None, None)
surface = np.full((len(alphas), len(betas)), np.nan)
for ia, a in enumerate(alphas):
    for ib, b in enumerate(betas):
        if a + b >= 0.999:
            continue
        omega = var_r * (1 - a - b)
        surface[ia, ib] = nll(omega, a, b)
        if surface[ia, ib] < best[0]:
            best = (surface[ia, ib], omega, a, b)
_, omega_hat, alpha_hat, beta_hat = best
sigma2 = garch_filter(returns, omega_hat, alpha_hat, beta_hat)
print(f"GARCH(1,1): omega={omega_hat:.2e} alpha={alpha_hat:.3f} beta={beta_hat:.3f}, nll={best[0]:.2f}")

lam = 0.94
ewma = np.empty_like(returns)
ewma[0] = returns[:20].var()
for t in range(1, len(returns)):
    ewma[t] = lam * ewma[t - 1] + (1 - lam) * returns[t - 1] ** 2
z = 2.326
breach_garch = int(np.sum(returns < -z * np.sqrt(sigma2)))
breach_ewma = int(np.sum(returns < -z * np.sqrt(ewma)))
h = 10
forecast = var_r + (alpha_hat + beta_hat) ** np.arange(1, h + 1) * (sigma2[-1] - var_r)
print(f"1% VaR breaches: GARCH {breach_garch}, EWMA {breach_ewma} of {len(returns)} "
      f"(expected {0.01 * len(returns):.1f}); 10-day vol {np.sqrt(forecast.sum()):.4f}")
"""


def _garch(n: int, n_grid: int) -> dict:
    r = _rng(102)
    omega, alpha, beta = 2e-6, 0.08, 0.9
    ret = np.empty(n)
    s2 = omega / (1 - alpha - beta)
    for t in range(n):
        ret[t] = np.sqrt(s2) * r.standard_normal()
        s2 = omega + alpha * ret[t] ** 2 + beta * s2
    return {"np": np, "returns": ret, "alphas": np.linspace(0.02, 0.2, n_grid),
            "betas": np.linspace(0.7, 0.97, n_grid)}


# Poisson equation by SOR written element by element with double for-loops (numerical-methods
# lecture notes, "the algorithm as on the blackboard"): max change tracked with max/abs per point
SOR_LOOPS = """\
n = f.shape[0]
h = 1.0 / (n - 1)
u = np.zeros((n, n))
u[0, :] = top
u[-1, :] = 0.0
u[:, 0] = np.linspace(top, 0.0, n)
u[:, -1] = np.linspace(top, 0.0, n)
history = []
for it in range(maxit):
    max_change = 0.0
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            gs = 0.25 * (u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - h * h * f[i, j])
            change = omega * (gs - u[i, j])
            u[i, j] += change
            max_change = max(max_change, abs(change))
    history.append(max_change)
    if max_change < tol:
        break
res = np.zeros_like(u)
res[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]) / h ** 2 - f[1:-1, 1:-1]
print(f"SOR(omega={omega}) stopped after {it + 1} sweeps, last change {history[-1]:.2e}, "
      f"max residual {np.abs(res).max():.3e}, u(centre) = {u[n // 2, n // 2]:.5f}")
"""


def _sor_loops(n: int) -> dict:
    y, x = np.mgrid[0:n, 0:n] / (n - 1)
    f = -10.0 * np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.02)
    return {"np": np, "f": f, "top": 1.0, "omega": 1.5, "tol": 1e-6, "maxit": 500}


# linear SVM by mini-batch SGD on the regularised hinge loss (Pegasos; a machine-learning course
# exercise): rng.permutation each epoch, the subgradient through np.where on the margin violators,
# a 1/(lambda t) step size, objective and accuracy per epoch in lists
SVM_SGD = """\
rng = np.random.default_rng(7)
n, d = X.shape
w = np.zeros(d)
b = 0.0
t = 0
objective, accuracy = [], []
for epoch in range(epochs):
    perm = rng.permutation(n)
    for start in range(0, n, batch_size):
        idx = perm[start:start + batch_size]
        Xb, yb = X[idx], y[idx]
        t += 1
        eta = 1.0 / (lam * t)
        margins = yb * (Xb @ w + b)
        coef = np.where(margins < 1, yb, 0.0)
        grad_w = lam * w - coef @ Xb / len(idx)
        grad_b = -coef.mean()
        w -= eta * grad_w
        b -= eta * grad_b
        norm = np.linalg.norm(w)
        if norm > 1 / np.sqrt(lam):
            w *= 1 / (np.sqrt(lam) * norm)
    scores = X @ w + b
    objective.append(0.5 * lam * w @ w + np.maximum(0, 1 - y * scores).mean())
    accuracy.append(np.mean(np.sign(scores) == y))
n_sv = int(np.sum(y * (X @ w + b) <= 1 + 1e-9))
print(f"after {epochs} epochs ({t} steps): objective {objective[-1]:.5f}, train accuracy {accuracy[-1]:.3f}, "
      f"{n_sv} points on or inside the margin, |w| = {np.linalg.norm(w):.3f}")
"""


def _svm(n: int, d: int, epochs: int) -> dict:
    r = _rng(103)
    w_true = r.normal(size=d)
    X = r.normal(size=(n, d))
    y = np.sign(X @ w_true + 0.3 * r.normal(size=n))
    y[y == 0] = 1.0
    return {"np": np, "X": X, "y": y, "lam": 0.01, "batch_size": 32, "epochs": epochs}


# rolling statistics of a price series (a quant blog post, "rolling windows without pandas"): means
# and variances from np.cumsum differences, the same and medians through sliding_window_view,
# Bollinger-band breaches, drawdown from np.maximum.accumulate, a straight-line analysis cell
ROLLING_WINDOW = """\
from numpy.lib.stride_tricks import sliding_window_view

w = window
c1 = np.cumsum(np.insert(price, 0, 0.0))
c2 = np.cumsum(np.insert(price ** 2, 0, 0.0))
sma = (c1[w:] - c1[:-w]) / w
rvar = (c2[w:] - c2[:-w]) / w - sma ** 2
rstd = np.sqrt(np.maximum(rvar, 0.0) * w / (w - 1))
win = sliding_window_view(price, w)
rstd_check = win.std(axis=1, ddof=1)
rmed = np.median(win, axis=1)
rmax, rmin = win.max(axis=1), win.min(axis=1)
print(f"max |cumsum std - window std| = {np.abs(rstd - rstd_check).max():.2e}")
tail = price[w - 1:]
upper, lower = sma + 2 * rstd, sma - 2 * rstd
above, below = tail > upper, tail < lower
zscore = (tail - sma) / rstd
log_ret = np.diff(np.log(price))
rvol = sliding_window_view(log_ret, w).std(axis=1) * np.sqrt(252)
peak = np.maximum.accumulate(price)
drawdown = price / peak - 1
worst = int(np.argmin(drawdown))
start = int(np.argmax(price[:worst + 1]))
stoch = (tail - rmin) / (rmax - rmin)
print(f"{above.sum()} closes above / {below.sum()} below the bands, |z| > 3 on {np.sum(np.abs(zscore) > 3)} days")
print(f"annualised vol {rvol.min():.3f} .. {rvol.max():.3f}, median of medians {np.median(rmed):.2f}")
print(f"max drawdown {drawdown[worst]:.2%} from day {start} to day {worst}; %K > 80 on {np.mean(stoch > 0.8):.1%} of days")
"""


def _rolling(n: int) -> dict:
    r = _rng(104)
    price = 100 * np.exp(np.cumsum(0.0003 + 0.012 * r.standard_t(4, n) / np.sqrt(2)))
    return {"np": np, "price": price, "window": 20}


# Harris corners on a Gaussian pyramid in float32 (a computer-vision course assignment): a separable
# blur as a sum of shifted slices of an np.pad(reflect) image, downsampling by [::2, ::2], gradients
# with np.gradient, non-maximum suppression by comparing with 8 shifted neighbours, a list per level
HARRIS_PYRAMID = """\
def gauss1d(sigma):
    r = int(3 * sigma + 0.5)
    x = np.arange(-r, r + 1)
    k = np.exp(-x ** 2 / (2 * sigma ** 2))
    return (k / k.sum()).astype(np.float32)

def blur(im, k):
    r = len(k) // 2
    p = np.pad(im, r, mode="reflect")
    H, W = im.shape
    tmp = sum(k[i] * p[:, i:i + W] for i in range(len(k)))
    return sum(k[i] * tmp[i:i + H, :] for i in range(len(k)))

def harris(im, k_win, kappa=0.05):
    Iy, Ix = np.gradient(im)
    Sxx = blur(Ix * Ix, k_win)
    Syy = blur(Iy * Iy, k_win)
    Sxy = blur(Ix * Iy, k_win)
    return Sxx * Syy - Sxy ** 2 - kappa * (Sxx + Syy) ** 2

def local_max(R, thresh):
    P = np.pad(R, 1, mode="constant", constant_values=-np.inf)
    H, W = R.shape
    is_max = R > thresh
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy or dx:
                is_max &= R >= P[1 + dy:1 + dy + H, 1 + dx:1 + dx + W]
    return np.argwhere(is_max)

img = image.astype(np.float32) / 255.0
k_pyr = gauss1d(1.0)
k_win = gauss1d(1.5)
pyramid = [img]
for level in range(1, levels):
    pyramid.append(blur(pyramid[-1], k_pyr)[::2, ::2])
corners = []
for level, im in enumerate(pyramid):
    R = harris(im, k_win)
    pts = local_max(R, 0.01 * R.max())
    corners.append(pts * 2 ** level)
    print(f"level {level}: {im.shape}, R max {R.max():.3e}, {len(pts)} corners")
all_pts = np.concatenate(corners)
print(f"{len(all_pts)} corners in all, mean position {all_pts.mean(axis=0).round(1)}")
"""


def _harris(n: int, levels: int) -> dict:
    r = _rng(105)
    y, x = np.mgrid[0:n, 0:n]
    im = 60.0 + 120.0 * (((x // (n // 8)) + (y // (n // 8))) % 2)
    im[n // 4:n // 2, n // 3:2 * n // 3] = 230.0
    im += r.normal(0, 6, im.shape)
    return {"np": np, "image": np.clip(im, 0, 255).astype(np.uint8), "levels": levels}


# split-step Fourier propagation of a Gaussian wave packet hitting a barrier (a quantum-mechanics
# computing lab): complex arrays, np.fft.fft/ifft with fftfreq wave numbers, half-step potential
# phases, norm / position / energy every few steps, the transmission probability at the end
SPLIT_STEP = """\
n = len(x)
dx = x[1] - x[0]
k = 2 * np.pi * np.fft.fftfreq(n, d=dx)
V = V0 * (np.abs(x) < a / 2)
psi = (2 * np.pi * s0 ** 2) ** -0.25 * np.exp(-(x - x0) ** 2 / (4 * s0 ** 2) + 1j * k0 * x)
half_V = np.exp(-0.5j * V * dt)
kinetic = np.exp(-0.5j * k ** 2 * dt)
norms, xmean, energies = [], [], []
for step in range(nsteps):
    psi = half_V * psi
    psi = np.fft.ifft(kinetic * np.fft.fft(psi))
    psi = half_V * psi
    if step % 25 == 0:
        prob = np.abs(psi) ** 2
        norms.append(prob.sum() * dx)
        xmean.append(np.sum(x * prob) * dx)
        phik = np.fft.fft(psi)
        T_kin = np.sum(0.5 * k ** 2 * np.abs(phik) ** 2) / np.sum(np.abs(phik) ** 2)
        energies.append(T_kin + np.sum(V * prob) * dx)
prob = np.abs(psi) ** 2
transmitted = prob[x > a / 2].sum() * dx
reflected = prob[x < -a / 2].sum() * dx
print(f"E = {energies[0]:.4f} (V0 = {V0}), norm drift {abs(norms[-1] - norms[0]):.2e}, "
      f"energy drift {abs(energies[-1] - energies[0]):.2e}")
print(f"T = {transmitted:.4f}, R = {reflected:.4f}, <x> {xmean[0]:.2f} -> {xmean[-1]:.2f}")
"""


def _split_step(n: int, nsteps: int) -> dict:
    return {"np": np, "x": np.linspace(-100, 100, n, endpoint=False), "V0": 1.0, "a": 1.0, "s0": 5.0,
            "x0": -30.0, "k0": 1.35, "dt": 0.05, "nsteps": nsteps}


# a classification tree from scratch with the Gini criterion (a "decision trees from scratch" blog
# post): the best split per feature via np.argsort and a cumsum of one-hot labels, recursion into
# nested dicts, prediction by walking the dict per row, accuracy on a held-out split
GINI_TREE = """\
def best_split(X, y):
    n, d = X.shape
    counts = np.bincount(y, minlength=n_classes)
    parent = 1.0 - np.sum((counts / n) ** 2)
    best_gain, best_j, best_thr = 0.0, None, None
    for j in range(d):
        order = np.argsort(X[:, j], kind="stable")
        xs, ys = X[order, j], y[order]
        onehot = np.eye(n_classes)[ys]
        left = np.cumsum(onehot, axis=0)[:-1]
        right = counts - left
        nl = np.arange(1, n)[:, None]
        nr = n - nl
        gini_l = 1.0 - np.sum((left / nl) ** 2, axis=1)
        gini_r = 1.0 - np.sum((right / nr) ** 2, axis=1)
        impurity = (nl[:, 0] * gini_l + nr[:, 0] * gini_r) / n
        impurity[xs[1:] == xs[:-1]] = np.inf
        i = np.argmin(impurity)
        if parent - impurity[i] > best_gain:
            best_gain, best_j, best_thr = parent - impurity[i], j, 0.5 * (xs[i] + xs[i + 1])
    return best_j, best_thr, best_gain

def build(X, y, depth=0):
    counts = np.bincount(y, minlength=n_classes)
    leaf = {"leaf": int(np.argmax(counts)), "n": len(y)}
    if depth == max_depth or len(y) < min_samples or counts.max() == len(y):
        return leaf
    j, thr, gain = best_split(X, y)
    if j is None:
        return leaf
    go_left = X[:, j] <= thr
    return {"feature": j, "thr": thr, "gain": gain,
            "left": build(X[go_left], y[go_left], depth + 1),
            "right": build(X[~go_left], y[~go_left], depth + 1)}

def predict_one(node, row):
    while "leaf" not in node:
        node = node["left"] if row[node["feature"]] <= node["thr"] else node["right"]
    return node["leaf"]

n_train = int(0.7 * len(y))
tree = build(X[:n_train], y[:n_train])
pred = np.array([predict_one(tree, row) for row in X[n_train:]])
acc = np.mean(pred == y[n_train:])
print(f"root split: feature {tree['feature']} <= {tree['thr']:.3f} (gain {tree['gain']:.4f}); "
      f"test accuracy {acc:.3f}")
"""


def _gini(n: int, d: int) -> dict:
    r = _rng(106)
    X = r.normal(size=(n, d)).round(2)
    y = ((X[:, 0] > 0.3).astype(int) + (X[:, 1] + 0.5 * X[:, 2] > 0).astype(int)
         + (r.random(n) < 0.1)) % 3
    return {"np": np, "X": X, "y": y, "n_classes": 3, "max_depth": 4, "min_samples": 10}


# Lorenz-96 with RK4 and the largest Lyapunov exponent by Benettin's renormalised twin trajectory
# (a data-assimilation / chaos tutorial): np.roll tendencies in a helper, RK4 in a function, the
# trajectory in a preallocated array traj[t + 1] = x, climatology and lagged autocorrelation after
LORENZ96 = """\
def l96(x):
    return (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + F

def rk4(x, dt):
    k1 = l96(x)
    k2 = l96(x + 0.5 * dt * k1)
    k3 = l96(x + 0.5 * dt * k2)
    k4 = l96(x + dt * k3)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

x = x0.copy()
for _ in range(spinup):
    x = rk4(x, dt)
traj = np.empty((nsteps + 1, len(x)))
traj[0] = x
eps = 1e-8
y = x + eps * np.ones_like(x) / np.sqrt(len(x))
log_sum = 0.0
for t in range(nsteps):
    x = rk4(x, dt)
    y = rk4(y, dt)
    traj[t + 1] = x
    dist = np.linalg.norm(y - x)
    log_sum += np.log(dist / eps)
    y = x + (y - x) * (eps / dist)
lyap = log_sum / (nsteps * dt)
clim_mean, clim_std = traj.mean(), traj.std()
anom = traj - traj.mean(axis=0)
lag = 5
acf = np.mean(anom[lag:] * anom[:-lag]) / np.mean(anom ** 2)
print(f"N={len(x)}, F={F}: lambda_max = {lyap:.3f}, e-folding time {1 / lyap:.3f}")
print(f"climatology {clim_mean:.3f} +- {clim_std:.3f}, lag-{lag} autocorrelation {acf:.3f}")
"""


def _l96(N: int, nsteps: int) -> dict:
    x0 = 8.0 * np.ones(N)
    x0[N // 2] += 0.01
    return {"np": np, "x0": x0, "F": 8.0, "dt": 0.01, "spinup": nsteps // 4, "nsteps": nsteps}


# Gaussian naive Bayes with stratification-free k-fold cross-validation (an intro-ML lab): folds by
# np.array_split of a permutation, priors by np.bincount, per-class means/variances by boolean masks,
# log-likelihoods by broadcasting, a confusion matrix by bincount of y * C + pred, a smoothing sweep
NB_KFOLD = """\
rng = np.random.default_rng(11)
C = int(y.max()) + 1
folds = np.array_split(rng.permutation(len(y)), k)

def fit(Xtr, ytr, var_smoothing):
    prior = np.bincount(ytr, minlength=C) / len(ytr)
    mu = np.array([Xtr[ytr == c].mean(axis=0) for c in range(C)])
    var = np.array([Xtr[ytr == c].var(axis=0) for c in range(C)])
    var += var_smoothing * Xtr.var(axis=0).max()
    return np.log(prior), mu, var

def predict(model, Xte):
    log_prior, mu, var = model
    diff = Xte[:, None, :] - mu[None, :, :]
    ll = -0.5 * np.sum(np.log(2 * np.pi * var)[None] + diff ** 2 / var[None], axis=2)
    return np.argmax(ll + log_prior, axis=1)

results = {}
for vs in smoothings:
    accs = []
    confusion = np.zeros((C, C), dtype=int)
    for f in range(k):
        test = folds[f]
        train = np.concatenate([folds[g] for g in range(k) if g != f])
        model = fit(X[train], y[train], vs)
        pred = predict(model, X[test])
        accs.append(np.mean(pred == y[test]))
        confusion += np.bincount(y[test] * C + pred, minlength=C * C).reshape(C, C)
    results[vs] = (np.mean(accs), np.std(accs), confusion)
    print(f"var_smoothing={vs:g}: accuracy {np.mean(accs):.4f} +- {np.std(accs):.4f}")
best_vs = max(results, key=lambda v: results[v][0])
cm = results[best_vs][2]
recall = np.diag(cm) / cm.sum(axis=1)
print(f"best var_smoothing {best_vs:g}; per-class recall", np.round(recall, 3))
"""


def _nb(n: int, d: int) -> dict:
    r = _rng(107)
    C = 4
    centres = r.normal(0, 0.6, (C, d))
    scales = r.uniform(0.5, 2.0, (C, d))
    y = r.integers(0, C, n)
    X = centres[y] + scales[y] * r.normal(size=(n, d))
    return {"np": np, "X": X, "y": y, "k": 5, "smoothings": [1e-9, 1e-3, 1e-1]}


PROGRAMS += [
    Program("binomial_american", BINOMIAL_AMERICAN, _binomial_american,
            {"tiny": dict(n_steps=12, n_strikes=2), "small": dict(n_steps=150, n_strikes=5)}),
    Program("shallow_water", SHALLOW_WATER, _shallow_water, {"tiny": dict(n=12, nsteps=12),
                                                             "small": dict(n=64, nsteps=120)}),
    Program("thermostat_lj", THERMOSTAT_LJ, _lj, {"tiny": dict(m=2, n_steps=10), "small": dict(m=4, n_steps=100)}),
    Program("garch_grid", GARCH_GRID, _garch, {"tiny": dict(n=60, n_grid=2), "small": dict(n=500, n_grid=5)}),
    Program("sor_loops", SOR_LOOPS, _sor_loops, {"tiny": dict(n=5), "small": dict(n=12)}),
    Program("svm_sgd", SVM_SGD, _svm, {"tiny": dict(n=64, d=3, epochs=2), "small": dict(n=2000, d=10, epochs=8)}),
    Program("rolling_window", ROLLING_WINDOW, _rolling, {"tiny": dict(n=100), "small": dict(n=20000)}),
    Program("harris_pyramid", HARRIS_PYRAMID, _harris, {"tiny": dict(n=32, levels=2), "small": dict(n=256, levels=3)}),
    Program("split_step", SPLIT_STEP, _split_step, {"tiny": dict(n=128, nsteps=30),
                                                    "small": dict(n=2048, nsteps=300)}),
    Program("gini_tree", GINI_TREE, _gini, {"tiny": dict(n=60, d=3), "small": dict(n=600, d=5)}),
    Program("lorenz96", LORENZ96, _l96, {"tiny": dict(N=8, nsteps=20), "small": dict(N=40, nsteps=100)}),
    Program("nb_kfold", NB_KFOLD, _nb, {"tiny": dict(n=80, d=3), "small": dict(n=3000, d=12)}),
]


BY_NAME = {p.name: p for p in PROGRAMS}


# -- running and comparing ------------------------------------------------------------------------

def fresh(base: dict) -> dict:
    """A copy of the setup namespace that shares nothing mutable with it (modules are shared)."""
    ns: dict = {"__name__": "__main__"}
    for k, v in base.items():
        ns[k] = v if isinstance(v, types.ModuleType) else copy.deepcopy(v)
    return ns


def _user_names(ns: dict) -> dict:
    return {k: v for k, v in ns.items() if k != "__builtins__"}


def compare(ref: Any, got: Any, path: str, out: list[str], depth: int = 0) -> None:
    """Append to ``out`` every way ``got`` differs from NumPy's ``ref``."""
    if depth > 8:
        return
    if isinstance(ref, types.ModuleType):
        if got is not ref:
            out.append(f"{path}: module {ref.__name__} != {got!r}")
        return
    if isinstance(ref, type):  # a class (maybe defined in the cell: a different object each run)
        if not isinstance(got, type) or got.__qualname__ != ref.__qualname__:
            out.append(f"{path}: class {ref.__qualname__} != {got!r}")
        return
    if callable(ref) and not isinstance(ref, (np.ndarray, np.generic, np.random.Generator)) and (
            not hasattr(ref, "__dict__") or isinstance(ref, (types.FunctionType, types.MethodType))):
        # (a function; an object of a class with __call__, a spline, is compared by its attributes below)
        if not callable(got) or type(got) is not type(ref):
            out.append(f"{path}: {type(ref).__name__} != {type(got).__name__}")
        return
    if type(got) is not type(ref) and not (isinstance(ref, object) and hasattr(ref, "__dict__")
                                           and type(got).__qualname__ == type(ref).__qualname__):
        out.append(f"{path}: type {type(got).__module__}.{type(got).__qualname__} != NumPy's "
                   f"{type(ref).__module__}.{type(ref).__qualname__} (value {_short(got)} vs {_short(ref)})")
        return
    if isinstance(ref, np.ndarray):
        if ref.dtype != got.dtype:
            out.append(f"{path}: dtype {got.dtype} != NumPy's {ref.dtype}")
            return
        if ref.shape != got.shape:
            out.append(f"{path}: shape {got.shape} != NumPy's {ref.shape}")
            return
        _values(ref, got, path, out)
        return
    if isinstance(ref, (np.generic, float, complex, int, bool)):
        if isinstance(ref, np.generic) and ref.dtype != got.dtype:
            out.append(f"{path}: dtype {got.dtype} != NumPy's {ref.dtype}")
            return
        _values(np.asarray(ref), np.asarray(got), path, out)
        return
    if isinstance(ref, (str, bytes, type(None), range, slice)):
        if ref != got:
            out.append(f"{path}: {got!r} != NumPy's {ref!r}")
        return
    if isinstance(ref, (list, tuple, collections.deque)):  # (a deque: compared item by item as a list)
        if len(ref) != len(got):
            out.append(f"{path}: length {len(got)} != NumPy's {len(ref)}")
            return
        for i, (a, b) in enumerate(zip(ref, got)):
            compare(a, b, f"{path}[{i}]", out, depth + 1)
        return
    if isinstance(ref, dict):
        if set(ref) != set(got):
            out.append(f"{path}: keys {sorted(map(str, got))} != NumPy's {sorted(map(str, ref))}")
            return
        for k in ref:
            compare(ref[k], got[k], f"{path}[{k!r}]", out, depth + 1)
        return
    if isinstance(ref, np.random.Generator):
        compare(ref.bit_generator.state, got.bit_generator.state, f"{path}.bit_generator.state", out, depth + 1)
        return
    if hasattr(ref, "__dict__"):  # an object (of a class defined in the cell)
        compare(vars(ref), vars(got), f"{path}.__dict__", out, depth + 1)
        return
    try:
        if not (ref == got):
            out.append(f"{path}: {_short(got)} != NumPy's {_short(ref)}")
    except Exception as e:  # noqa: BLE001
        out.append(f"{path}: comparing raised {type(e).__name__}: {e}")


def _values(ref: np.ndarray, got: np.ndarray, path: str, out: list[str]) -> None:
    if ref.dtype.kind in "fc":
        ok = np.allclose(got, ref, rtol=1e-9, atol=1e-12, equal_nan=True)
        if not ok:
            with np.errstate(all="ignore"):
                diff = np.abs(got.astype(complex) - ref.astype(complex)) if ref.dtype.kind == "c" else np.abs(got - ref)
                bad = ~np.isclose(got, ref, rtol=1e-9, atol=1e-12, equal_nan=True)
            out.append(f"{path}: {int(bad.sum())} of {ref.size} values differ, max |diff| "
                       f"{np.nanmax(np.where(bad, diff, 0)):.3g} (got {_short(got)}, NumPy {_short(ref)})")
    elif ref.dtype.kind == "O":
        if not all(a == b for a, b in zip(ref.ravel(), got.ravel())):
            out.append(f"{path}: object array differs")
    elif not np.array_equal(got, ref):
        bad = got != ref
        out.append(f"{path}: {int(np.sum(bad))} of {ref.size} values differ (got {_short(got)}, NumPy {_short(ref)})")


def _short(x: Any) -> str:
    s = np.array2string(x, threshold=6, edgeitems=2) if isinstance(x, np.ndarray) else repr(x)
    s = " ".join(s.split())
    return s if len(s) <= 80 else s[:77] + "..."


def compare_ns(ref: dict, got: dict) -> list[str]:
    out: list[str] = []
    ref, got = _user_names(ref), _user_names(got)
    missing, extra = sorted(set(ref) - set(got)), sorted(set(got) - set(ref))
    if missing:
        out.append(f"names NumPy bound but the fused run did not: {missing}")
    if extra:
        out.append(f"names the fused run bound but NumPy did not: {extra}")
    for k in ref:
        if k in got:
            try:
                compare(ref[k], got[k], k, out)
            except Exception as e:  # noqa: BLE001 - e.g. a lazy array left inside a container the cell made
                out.append(f"{k}: comparing raised {type(e).__name__}: {e}")
    return out


@dataclass
class Run:
    report: Any = None
    ns: dict | None = None
    printed: str = ""
    seconds: float = float("nan")
    error: BaseException | None = None
    diffs: list[str] | None = None
    bg: float = 0.0  # seconds waited afterwards for numba's background compiles


def numpy_runs(p: Program, base: dict, repeat: int = 3) -> tuple[float, dict, str]:
    code = compile(p.source, f"<{p.name}>", "exec")
    best, ref_ns, ref_out = float("inf"), None, ""
    for i in range(repeat):
        ns, buf = fresh(base), io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(buf):
            exec(code, ns)
        best = min(best, time.perf_counter() - t0)
        if i == 0:
            ref_ns, ref_out = ns, buf.getvalue()
    return best, ref_ns, ref_out


class RunTimeout(Exception):
    """A run took longer than --timeout (raised by SIGALRM in the main thread)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    def alarm(signum, frame):  # noqa: ARG001
        raise RunTimeout(f"the run took longer than {seconds:g} s (--timeout)")

    old = signal.signal(signal.SIGALRM, alarm)
    # again every 5 s: an exception raised inside a ctypes callback (numba/llvmlite) is only printed
    signal.setitimer(signal.ITIMER_REAL, seconds, 5.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def wait_for_compiles(limit: float) -> tuple[float, bool]:
    """Wait (at most ``limit`` s) for numba's background compiles, as a user reading the output
    would; the seconds waited and whether they finished."""
    try:
        from jupyter_fuse.backends.compiler import wait
    except ImportError:  # a version without background compiles
        return 0.0, True
    t0 = time.perf_counter()
    done = wait(limit)
    return time.perf_counter() - t0, done


def fuse_run(p: Program, base: dict, backend: str, timeout: float, compile_wait: float) -> Run:
    from jupyter_fuse.runner import run_cell

    r = Run(ns=fresh(base))
    buf = io.StringIO()
    t0 = time.perf_counter()
    try:
        with time_limit(timeout), contextlib.redirect_stdout(buf):
            r.report = run_cell(p.source, r.ns, backend=backend)
    except Exception as e:  # noqa: BLE001 - one program's failure does not stop the rest
        r.error = e
    r.seconds = time.perf_counter() - t0
    r.printed = buf.getvalue()
    r.bg, done = wait_for_compiles(compile_wait)
    if not done:
        r.error = r.error or RunTimeout(f"background compiles still running {compile_wait:g} s after the run")
    return r


def debug_frames(p: Program, base: dict, backend: str, runs: int, timeout: float, compile_wait: float) -> str:
    """Run the cell ``runs`` times with JUPYTER_FUSE_DEBUG=1 (our frames kept, replay and recording
    failures raised) from an empty plan cache; the exception and its last frames, or ''."""
    from jupyter_fuse.cache import PLAN_CACHE
    from jupyter_fuse.runner import run_cell

    PLAN_CACHE.clear()
    old = os.environ.get("JUPYTER_FUSE_DEBUG")
    os.environ["JUPYTER_FUSE_DEBUG"] = "1"
    try:
        for _ in range(runs):
            with time_limit(timeout), contextlib.redirect_stdout(io.StringIO()):
                run_cell(p.source, fresh(base), backend=backend)
            wait_for_compiles(compile_wait)
    except Exception as e:  # noqa: BLE001
        return format_exc(e)
    finally:
        if old is None:
            del os.environ["JUPYTER_FUSE_DEBUG"]
        else:
            os.environ["JUPYTER_FUSE_DEBUG"] = old
    return ""


def format_exc(e: BaseException, frames: int = 5) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    ours = [f for f in tb if f"{os.sep}jupyter_fuse{os.sep}" in f.filename]
    lines = [f"{type(e).__name__}: {e}"]
    for f in ours[-frames:]:
        lines.append(f"    {f.filename[f.filename.rfind(os.sep + 'jupyter_fuse' + os.sep) + 1:]}:{f.lineno} "
                     f"in {f.name}: {f.line}")
    if not ours:
        for f in tb[-2:]:
            lines.append(f"    {f.filename}:{f.lineno} in {f.name}: {f.line}")
    return "\n".join(lines)


def measure(p: Program, size: str, backend: str, timeout: float, compile_wait: float) -> dict:
    """One program: NumPy, then three runs under run_cell, compared. A JSON-able row."""
    base = p.setup(**p.sizes[size])
    wait_for_compiles(compile_wait)  # nothing compiles in the background while NumPy is timed
    row: dict = {"name": p.name, "numpy": float("nan"), "runs": [], "error": "", "debug": "", "diffs": []}
    try:
        row["numpy"], ref_ns, ref_out = numpy_runs(p, base)
    except Exception as e:  # noqa: BLE001
        row["error"] = f"plain NumPy raised {format_exc(e)}"
        return row
    for i in range(3):
        progress(f"run {i + 1} started")
        r = fuse_run(p, base, backend, timeout, compile_wait)
        rep = r.report
        progress(f"run {i + 1}: {r.seconds:.1f} s, cache {getattr(rep, 'cache', None)}, then {r.bg:.1f} s of "
                 "background compiles")
        d = {"seconds": r.seconds, "bg": r.bg, "cache": getattr(rep, "cache", None),
             "held": bool(getattr(rep, "guards", None)),  # (a plain run chosen over a plan whose guards held)
             "miss_reasons": list(dict.fromkeys(getattr(rep, "miss_reasons", []) or [])),
             "summary": rep.summary() if rep is not None else "",
             "program": (rep.program or rep.program_note) if rep is not None else "", "error": ""}
        row["runs"].append(d)
        if r.error is not None:
            d["error"] = format_exc(r.error)
            row["error"] = f"run {i + 1}: {d['error']}"
            if not isinstance(r.error, RunTimeout):
                row["debug"] = debug_frames(p, base, backend, i + 1, timeout, compile_wait)
            break
        diffs = compare_ns(ref_ns, r.ns)
        if r.printed != ref_out:
            diffs.append(f"printed {r.printed!r} != NumPy's {ref_out!r}")
        if diffs:
            row["diffs"].append((i + 1, diffs))
    if len(row["runs"]) == 3 and not row["error"]:  # a 4th run right after the 3rd, no compile wait between:
        # NumPy's best of 3 runs back to back, while the 3rd follows seconds of background compiles, after
        # which OpenBLAS's threads sleep and a matmul pays for waking them
        r = fuse_run(p, base, backend, timeout, compile_wait)
        state = getattr(r.report, "cache", None)  # (a replay, or plain NumPy where fusion does not pay: runner.PLAIN_MIN)
        row["again"] = r.seconds if r.error is None and state in ("hit", "numpy") else float("nan")
        row["again_cache"] = state
        if r.error is None and (compare_ns(ref_ns, r.ns) or r.printed != ref_out):
            row["diffs"].append((4, compare_ns(ref_ns, r.ns) or ["printed text differs"]))
        # a 5th and a 6th, settled: a replay timed against plain NumPy (runner._suspect: the 4th run, or the
        # 3rd; a close call once more, the 5th) runs as the faster of the two from then on
        for n in (5, 6):
            r = fuse_run(p, base, backend, timeout, compile_wait)
            state = getattr(r.report, "cache", None)
            row["settled"] = r.seconds if r.error is None and state in ("hit", "numpy") else float("nan")
            row["settled_cache"] = state
            if r.error is None and (compare_ns(ref_ns, r.ns) or r.printed != ref_out):
                row["diffs"].append((n, compare_ns(ref_ns, r.ns) or ["printed text differs"]))
    finish_row(row)
    if len(row["runs"]) > 1 and not row["replayed"] and any("failed" in m for m in row["runs"][1]["miss_reasons"]):
        row["debug"] = debug_frames(p, base, backend, 2, timeout, compile_wait)
    return row


def finish_row(row: dict) -> None:
    runs = row["runs"]
    second = runs[1] if len(runs) > 1 and runs[1]["cache"] is not None else None
    row["replayed"] = second is not None and second["cache"] == "hit"
    # (plain NumPy chosen over a plan whose guards held: its replay would launch its tiny kernels one by one)
    row["plain_held"] = second is not None and second["cache"] == "numpy" and second.get("held", False)
    row["third_replayed"] = len(runs) > 2 and runs[2]["cache"] == "hit"
    row["why"] = "" if row["replayed"] or second is None else (
        "; ".join(second["miss_reasons"]) or f"cache={second['cache']}")
    row["same"] = not row["diffs"] and not row["error"] and len(runs) == 3


def measure_in_child(p: Program, a: argparse.Namespace) -> dict:
    """``measure`` in a fresh process (its memory, its background compiles and a hard time limit
    stay its own); a row that says how the process ended when it printed none."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", p.name, "--backend", a.backend, "--size", a.size,
           "--timeout", str(a.timeout), "--compile-wait", str(a.compile_wait)]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=a.hard_timeout)
        stdout, stderr, rc = out.stdout, out.stderr, out.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        rc = f"killed after {a.hard_timeout:g} s (--hard-timeout)"
    for line in reversed(stdout.splitlines()):
        if line.startswith(ROW_TAG):
            row = json.loads(line[len(ROW_TAG):])
            row["diffs"] = [tuple(x) for x in row["diffs"]]
            return row
    noise = [ln for ln in stderr.splitlines() if not ln.startswith("jupyter_fuse: compiling")]
    why = f"the child process ended ({rc}) after {time.perf_counter() - t0:.0f} s without a result"
    if isinstance(rc, int) and rc < 0:
        why += f" (signal {-rc}{': SIGKILL, e.g. out of memory' if rc == -9 else ''})"
    progress = [ln[len(PROGRESS_TAG):] for ln in stdout.splitlines() if ln.startswith(PROGRESS_TAG)]
    row = {"name": p.name, "numpy": float("nan"), "runs": [], "diffs": [], "debug": "",
           "error": why + (f"; last progress: {progress[-1]}" if progress else "")
           + ("\n" + "\n".join(noise[-8:]) if noise else "")}
    finish_row(row)
    return row


ROW_TAG = "@@row "
PROGRESS_TAG = "@@progress "
_CHILD: list[bool] = [False]


def progress(msg: str) -> None:
    """In a child process: a line the parent quotes if the process dies before it reports."""
    if _CHILD[0]:
        print(PROGRESS_TAG + msg, flush=True)


def cell(s: str, width: int) -> str:
    s = " ".join(str(s).split()).replace("|", "/")
    return s if len(s) <= width else s[:width - 3] + "..."


def table_line(r: dict) -> str:
    ms = lambda v: f"{v * 1e3:.1f}" if v == v else "-"  # noqa: E731
    t = [x["seconds"] for x in r["runs"]] + [float("nan")] * (3 - len(r["runs"]))
    ratio = f"{t[2] / r['numpy']:.2f}x" if t[2] == t[2] and r["numpy"] == r["numpy"] else "-"
    rep = "yes" if r.get("replayed") else "plan held, ran as NumPy" if r.get("plain_held") else "no"
    if r.get("replayed") and not r.get("third_replayed"):
        rep += " (3rd: no)"
    if r["error"] and len(r["runs"]) < 2:
        rep = "-"
    same = "yes" if r.get("same") else ("-" if r["error"] and not r["diffs"] else
                                        "NO (run " + ",".join(str(i) for i, _ in r["diffs"]) + ")")
    err = r["error"].splitlines()[0] if r["error"] else ""
    bg = sum(x["bg"] for x in r["runs"])
    again, settled = r.get("again", float("nan")), r.get("settled", float("nan"))
    how = {"hit": "", "numpy": " numpy"}.get(r.get("settled_cache"), "")
    return (f"| {r['name']} | {ms(r['numpy'])} | {ms(t[0])} | {bg:.1f} | {ms(t[1])} | {ms(t[2])} | {ratio} "
            f"| {ms(again)} | {ms(settled)}{how} | {rep} | {same} | {cell(r.get('why', ''), 110)} | {cell(err, 90)} |")


HEAD = ("| program | numpy ms | first ms | bg compile s | 2nd ms | 3rd ms | 3rd/numpy | 4th ms | 6th ms | replayed "
        "| same as NumPy | why not replayed | error |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|")


def details(r: dict) -> None:
    print(f"### {r['name']}")
    if r["runs"] and r["runs"][0]["summary"]:
        print(f"first run: {cell(r['runs'][0]['summary'], 400)}")
    for i, x in enumerate(r["runs"][1:], 2):
        if x["cache"] is not None and x["cache"] != "hit":
            print(f"run {i}: cache={x['cache']}; miss reasons:")
            for m in x["miss_reasons"]:
                print(f"  - {m}")
    if r.get("again_cache") not in (None, "hit"):
        print(f"run 4: cache={r['again_cache']}")
    if r.get("settled_cache") not in (None, "hit"):
        print(f"run 6: cache={r['settled_cache']}")
    for i, diffs in r["diffs"]:
        print(f"run {i} differs from NumPy:")
        for d in diffs[:12]:
            print(f"  - {d}")
        if len(diffs) > 12:
            print(f"  - ... {len(diffs) - 12} more")
    if r["error"]:
        print(f"error: {r['error']}")
    if r["debug"]:
        print(f"with JUPYTER_FUSE_DEBUG=1: {r['debug']}")
    print()


def summary(path: str) -> None:
    """From a saved output's full table (two runs compared, old code and new): the median first run, and
    each run's time over NumPy's, geomean over every program, and how many second runs passed 3x and 10x."""
    text = open(path, encoding="utf-8").read().split("## full table")[-1]
    rows = []
    for ln in text.splitlines():
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if ln.startswith("| ") and not ln.startswith("| program") and len(cells) > 8:
            with contextlib.suppress(ValueError, IndexError):
                rows.append([float(cells[i].split()[0]) for i in (1, 2, 4, 5, 7, 8)])
    if not rows:
        print("no table in", path)
        return
    print(f"{len(rows)} programs; median first run {float(np.median([r[1] for r in rows])):.1f} ms")
    for col, name in ((2, "2nd"), (3, "3rd"), (4, "4th"), (5, "6th")):
        ratios = [r[col] / r[0] for r in rows]
        print(f"{name} run / NumPy: geomean {math.exp(np.mean(np.log(ratios))):.2f}x, worst {max(ratios):.2f}x")
    second = [r[2] / r[0] for r in rows]
    print(f"2nd runs over 3x NumPy: {sum(x > 3 for x in second)}; over 10x: {sum(x > 10 for x in second)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", choices=["cpu", "numpy", "cupy"])
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--size", default="small", choices=["tiny", "small"])
    ap.add_argument("--numpy-only", action="store_true", help="time plain NumPy only (to size the programs)")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds one run may take")
    ap.add_argument("--compile-wait", type=float, default=600.0,
                    help="seconds to wait after a run for numba's background compiles")
    ap.add_argument("--hard-timeout", type=float, default=1500.0,
                    help="seconds a program's process may take in all before it is killed")
    ap.add_argument("--in-process", action="store_true", help="run every program in this process")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--summary", default="", help="a saved output of this script: its run-by-run ratios to NumPy")
    a = ap.parse_args()
    if a.summary:
        summary(a.summary)
        return
    if a.child:
        import jupyter_fuse  # noqa: F401 - imported before the clock starts

        _CHILD[0] = True
        row = measure(BY_NAME[a.child], a.size, a.backend, a.timeout, a.compile_wait)
        print(ROW_TAG + json.dumps(row, default=str), flush=True)
        return
    progs = [BY_NAME[n] for n in a.only.split(",")] if a.only else PROGRAMS
    if a.numpy_only:
        for p in progs:
            t, _, out = numpy_runs(p, p.setup(**p.sizes[a.size]))
            print(f"{p.name:18s} {t * 1e3:8.2f} ms  {out.strip()[:100]}")
        return
    import jupyter_fuse

    print(f"# bench/realworld.py: backend {a.backend}, size {a.size}, numpy {np.__version__}, "
          f"python {sys.version.split()[0]}, jupyter_fuse from {os.path.dirname(jupyter_fuse.__file__)}, "
          f"JUPYTER_FUSE_CACHE_DIR={os.environ.get('JUPYTER_FUSE_CACHE_DIR')}, "
          f"JUPYTER_FUSE_COMPILE={os.environ.get('JUPYTER_FUSE_COMPILE', 'background')}, "
          f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'default')}; "
          f"{'one process' if a.in_process else 'a process per program'}")
    print(HEAD, flush=True)
    rows = []
    for p in progs:
        row = (measure(p, a.size, a.backend, a.timeout, a.compile_wait) if a.in_process
               else measure_in_child(p, a))
        rows.append(row)
        print(table_line(row), flush=True)
    print("\n## full table\n")
    print(HEAD)
    for r in rows:
        print(table_line(r))
    replayed = sum(bool(r.get("replayed")) for r in rows)
    held = sum(bool(r.get("plain_held")) for r in rows)
    same = sum(bool(r.get("same")) for r in rows)
    errors = sum(bool(r["error"]) for r in rows)
    print(f"\nreplayed on the 2nd run: {replayed}/{len(rows)}, and {held} more ran as plain NumPy over a plan whose "
          f"guards held (runner.LAUNCH_COST); same as NumPy (all 3 runs): {same}/{len(rows)}; "
          f"raised or timed out: {errors}/{len(rows)}")
    ok = [r for r in rows if (r.get("replayed") or r.get("plain_held")) and len(r["runs"]) == 3]
    if ok:
        ratios = [r["runs"][2]["seconds"] / r["numpy"] for r in ok]
        print(f"2nd run / NumPy over them: geomean "
              f"{math.exp(np.mean(np.log([r['runs'][1]['seconds'] / r['numpy'] for r in ok]))):.2f}x")
        print(f"3rd run / NumPy over the replayed programs (and those plain NumPy over a held plan): geomean {math.exp(np.mean(np.log(ratios))):.2f}x, "
              f"best {min(ratios):.2f}x, worst {max(ratios):.2f}x")
        again = [r["again"] / r["numpy"] for r in ok if r.get("again", float("nan")) == r.get("again", float("nan"))]
        if again:
            print(f"4th run (right after the 3rd) / NumPy: geomean {math.exp(np.mean(np.log(again))):.2f}x, "
                  f"worst {max(again):.2f}x ({len(again)} programs)")
        settled = [r["settled"] / r["numpy"] for r in ok if r.get("settled", float("nan")) == r.get("settled", float("nan"))]
        if settled:
            plain = sum(r.get("settled_cache") == "numpy" for r in ok)
            print(f"6th run (settled: after its runs timed as plain NumPy) / NumPy: geomean "
                  f"{math.exp(np.mean(np.log(settled))):.2f}x, worst {max(settled):.2f}x ({len(settled)} programs, "
                  f"{plain} of them run as plain NumPy)")
    print("\n## details\n")
    for r in rows:
        if not (r.get("replayed") and r.get("third_replayed") and r.get("same") and not r["error"]) \
                or r.get("again_cache") not in (None, "hit"):
            details(r)


if __name__ == "__main__":
    main()
