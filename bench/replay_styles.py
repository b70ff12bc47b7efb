"""Which small cells, written in the styles people write, replay on their second run.

    .venv/bin/python bench/replay_styles.py [--backend numpy]

Twenty cells (dataclasses, classes with methods, closures, generators, ``try``, ``while True: ... break``,
f-string prints, ``itertools``, ``functools.reduce``, named tuples, a counter kept with ``global``, a timing
with ``time.perf_counter()``, ...), each run three times on fresh inputs: the plan cache's state of each
run, and why a run that was not replayed was not. Fusion's speed is not the point here (bench/realworld.py).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import warnings

import numpy as np

import jupyter_fuse

CELLS = {
    "namedtuple": "from collections import namedtuple\nState = namedtuple('State', 'x v')\n"
                  "s = State(x0.copy(), np.zeros_like(x0))\nfor i in range(20):\n"
                  "    s = State(s.x + 0.1 * s.v, s.v - 0.1 * s.x)\nenergy = float((s.x ** 2 + s.v ** 2).sum())\n",
    "dataclass": "from dataclasses import dataclass\n@dataclass\nclass Body:\n    pos: np.ndarray\n    vel: np.ndarray\n"
                 "b = Body(x0.copy(), np.zeros_like(x0))\nfor i in range(20):\n    b.vel -= 0.1 * b.pos\n"
                 "    b.pos += 0.1 * b.vel\ne = float((b.pos ** 2).sum())\n",
    "class with methods": "class Model:\n    def __init__(self, w):\n        self.w = w\n    def predict(self, x):\n"
                          "        return np.tanh(x * self.w)\n    def step(self, x, lr):\n"
                          "        g = (self.predict(x) - x).mean()\n        self.w = self.w - lr * g\n"
                          "m = Model(0.5)\nfor i in range(30):\n    m.step(x0, 0.1)\nw = m.w\n",
    "time module": "import time\nt0 = time.perf_counter()\ny = x0.copy()\nfor i in range(50):\n    y = 0.5 * y + 1\n"
                   "elapsed = time.perf_counter() - t0\n",
    "np.random.seed": "np.random.seed(0)\nnoise = np.random.rand(x0.size)\ny = x0 + 0.01 * noise\nm = y.mean()\n",
    "generator function": "def steps(n):\n    for i in range(n):\n        yield i * 0.1\ny = x0.copy()\n"
                          "for dt in steps(20):\n    y = y - dt * y\n",
    "try/except": "y = x0.copy()\ntry:\n    z = y / (y - y)\nexcept FloatingPointError:\n    z = y\n"
                  "total = float(z[np.isfinite(z)].sum())\n",
    "while True/break": "y = x0.copy()\nk = 0\nwhile True:\n    y = 0.5 * (y + 2 / y)\n    k += 1\n"
                        "    if float(np.abs(y * y - 2).max()) < 1e-12:\n        break\n",
    "history list": "y = x0.copy()\nhist = []\nfor i in range(30):\n    y = np.roll(y, 1) * 0.9 + 0.1 * y\n"
                    "    hist.append(y.copy())\nH = np.array(hist)\n",
    "f-string print": "y = x0.copy()\nfor i in range(3):\n    y = y * 2\n    print(f'step {i}: mean={y.mean():.4f}')\n",
    "global counter": "def update(u):\n    global count\n    count += 1\n    return u * 0.99\ncount = 0\ny = x0.copy()\n"
                      "for i in range(10):\n    y = update(y)\n",
    "sorted with lambda": "items = [(float(x0[i]), i) for i in range(5)]\nitems.sort(key=lambda t: t[0])\n"
                          "order = [i for _, i in items]\n",
    "math.isclose": "import math\ny = x0.copy()\ns = 0.0\nfor i in range(10):\n    y = y * 0.5\n    s += float(y.sum())\n"
                    "ok = math.isclose(s, float(x0.sum()), rel_tol=0.1)\n",
    "enumerate/zip": "ws = [x0 * k for k in range(3)]\nout = np.zeros_like(x0)\n"
                     "for k, (w, c) in enumerate(zip(ws, [0.1, 0.2, 0.3])):\n    out += c * w + k\n",
    "default_rng": "rng = np.random.default_rng(42)\nwalk = np.cumsum(rng.standard_normal(x0.size))\nfinal = walk[-1]\n",
    "linalg": "A = np.outer(x0, x0) + np.eye(x0.size)\nsol = np.linalg.solve(A, x0)\n"
              "res = float(np.linalg.norm(A @ sol - x0))\n",
    "closure": "def make_stepper(rate):\n    def step(u):\n        return u - rate * u\n    return step\n"
               "stepper = make_stepper(0.1)\ny = x0.copy()\nfor i in range(10):\n    y = stepper(y)\n",
    "dict state": "state = {'u': x0.copy(), 't': 0.0}\nfor i in range(10):\n    state['u'] = state['u'] * 0.9\n"
                  "    state['t'] += 0.1\n",
    "itertools": "import itertools\ny = x0.copy()\nfor a, b in itertools.product(range(2), range(3)):\n    y = y + a * b\n",
    "functools.reduce": "from functools import reduce\nmats = [np.eye(3) * (k + 1) for k in range(4)]\n"
                        "P = reduce(np.matmul, mats)\n",
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="numpy", choices=["numpy", "cpu"])
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    replayed = 0
    for name, src in CELLS.items():
        states, why = [], []
        for _ in range(3):
            ns = {"np": np, "x0": np.linspace(1.0, 2.0, 16)}
            with contextlib.redirect_stdout(io.StringIO()):
                r = jupyter_fuse.run_cell(src, ns, backend=a.backend)
            states.append(r.cache)
            why = why or (list(r.miss_reasons) if r.cache not in ("hit", "miss") else [])
        replayed += states[1] == "hit"
        print(f"{name:20s} {' '.join(states):28s} {why[0][:110] if why else ''}")
    print(f"\nreplayed on the second run: {replayed}/{len(CELLS)}")


if __name__ == "__main__":
    main()
