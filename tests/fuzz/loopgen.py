"""Loop programs drawn at random: the time-stepping, sweeping and residual-checking cells people bring.

``gen.py`` draws single statements, and loops of one to three steps: its programs never run long enough
for what a real loop meets. These do: slice stencils with buffers swapped each step, boundary rows set,
arrays rebound, element sweeps in nested loops, a ``float()`` of a residual every step (sometimes a
``break`` on it), helper functions defined in the cell, coefficients that change each step, prints every
few steps, checkpoints every few dozen steps (``if it % 25 == 0: snaps.append(u.copy())``), untraced calls
(``np.roll``) inside the loop. Run three times as ``gen.check_program`` runs
every program (first run; fresh inputs, a replay; inputs mutated in place), they exercise what only long
loops reach: a replay compiled as one program with its steps rolled back into a loop (``program.py``),
the graph flushed at its bound mid-loop (``session.BOUND``), plans shared between chunks.

The values are smooth (uniform on [0, 1), scaled), so that a loop keeps finite values for NumPy to be
compared with; the ops are exact ones (+ - * /, sqrt, comparisons, min/max, sums) where NumPy and a
kernel agree to the bit. ``generate_loop(seed)`` returns a ``gen.Program``: the comparison, the
minimizer and ``bench/fuzz.py --kind loops`` take it as they take the others.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import gen

DTYPES = ["float64"] * 6 + ["float32"] * 2 + ["int64"]


@dataclass
class LoopProgram(gen.Program):
    """Its inputs' values are smooth, drawn by NumPy's generator from the seed (not gen's special values)."""

    def setup(self, data_seed: int) -> str:
        lines = [f"rng = np.random.default_rng({self.seed * 7919 + data_seed})"]
        for inp in self.inputs:
            if inp.kind == "pyscalar":
                lines.append(f"{inp.name} = {round(random.Random(self.seed + data_seed).uniform(0.1, 0.4), 3)}")
                continue
            value = f"(rng.random({inp.shape}) * {4 if inp.dtype == 'int64' else 1}).astype(np.{inp.dtype})"
            lines.append(f"{inp.name} = " + (f"np.asfortranarray({value})" if inp.layout == "F" else value))
        lines.append("del rng")
        return "\n".join(lines)


class _Body:
    """Draws the statements of one loop body over 1-D arrays ``u``, ``v`` and a 2-D ``g``."""

    def __init__(self, rng: random.Random, n: int, ints: bool) -> None:
        self.r, self.n, self.ints = rng, n, ints
        self.prologue: list[str] = []
        self.steps: list[str] = []

    def c(self) -> str:
        return self.r.choice(["0.5", "0.25", "c", "0.1", "c * 0.5"]) if not self.ints else self.r.choice(["2", "3", "1"])

    def once(self, line: str) -> None:
        if line not in self.prologue:
            self.prologue.append(line)

    def stencil(self) -> str:
        r, c = self.r, self.c()
        if self.ints:
            return r.choice(["u[1:-1] = u[1:-1] + (u[:-2] - u[2:]) // 2", "u[1:] += u[:-1] % 3", "u = u * 3 % 7 + v"])
        return r.choice([
            f"u[1:-1] = u[1:-1] + {c} * (u[:-2] - 2 * u[1:-1] + u[2:])",
            f"v[1:-1] = {c} * (u[:-2] + u[1:-1] + u[2:])\n    u, v = v, u",
            f"v[1:-1] = u[1:-1] + {c} * (u[2:] - u[:-2])\n    u[:] = v",
            f"u[1:] = u[1:] - {c} * (u[1:] - u[:-1])",
            f"u[1:-1] += {c} * (v[2:] - v[:-2])",
            "g[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])",
            f"h = g.copy()\n    g[1:-1, 1:-1] = h[1:-1, 1:-1] + {c} * (h[2:, 1:-1] - 2 * h[1:-1, 1:-1] + h[:-2, 1:-1])",
        ])

    def update(self) -> str:
        r, c = self.r, self.c()
        if self.ints:
            return r.choice(["u += v", "u *= 2", "v = u - v", "u[it % n] += 1", "u = np.minimum(u, 50)", "u -= u.min()"])
        return r.choice([
            f"u = u * {c} + {r.choice(['1.0', '0.5', 'v'])}", f"u *= {c}", f"u += {c} * v", "v = u - v",
            "u -= u.mean()", f"u = np.clip(u, -{r.choice(['1', '2.5'])}, {r.choice(['1', '3'])})",
            f"u = np.where(u > 0.5, u, {c} * u)", "u = np.sqrt(np.abs(u)) + v", f"u /= u.max() + {c}",
            f"g *= {c}", "g[:, 0] = g[:, 1]", f"g[it % g.shape[0], :] -= {c} * g[(it + 1) % g.shape[0], :]",
            "g[:, -1] = u[:g.shape[0]].sum()",
        ])

    def boundary(self) -> str:
        return self.r.choice(["u[0] = u[1]", "u[-1] = 0", "u[0] = u[-1] = 1", "g[0, :] = g[1, :]", "g[-1, :] = 0",
                              "v[0] = v[-1]"])

    def element(self) -> str:
        r, c = self.r, self.c()
        if r.random() < 0.3:  # windows that move with the loop's variable: from the end, backwards, past an end
            return r.choice([f"for j in range(n):\n        v[j - 2] = v[j - 1] * {c} + u[j]",
                             f"for j in range(n - 1, 0, -1):\n        u[j] = u[j - 1] * {c} + u[j]",
                             f"for j in range(n - 2):\n        v[j:j + 2] = u[j + 1:j + 3] * {c}",
                             f"for j in range(1, n + 1):\n        v[j] = v[j - 1] + u[-j]",
                             f"for j in range(2, n):\n        w[j] = w[j - 2] * {c} + v[j - 1:j + 1].sum()"])
        if r.random() < 0.5 and not self.ints:
            return (f"for j in range(1, n - 1):\n        u[j] = {r.choice(['0.5', c])} * (u[j - 1] + u[j + 1])"
                    if r.random() < 0.5 else f"for j in range(n):\n        v[j] = v[j] * {c} + u[j]")
        return r.choice([f"u[it % n] += {c} * u[(it + 1) % n]" if not self.ints else "u[it % n] += u[(it + 1) % n] % 5",
                         "u[it % n] = v[(it * 3) % n]", "k = int(u.argmax())\n    u[k] = u[k] - 1"])

    def sync(self) -> str:
        r = self.r
        which = r.random()
        if which < 0.3:
            self.once("hist = []")
            return r.choice(["hist.append(float(np.abs(u - v).max()))", "hist.append(float(u.sum()))",
                             "hist.append(float(u[0]))"])
        if which < 0.55:
            self.once("s = 0.0")
            return r.choice(["s = s + float(u.sum())", "s += float(u @ v)" if not self.ints else "s += int(u.sum())"])
        if which < 0.7:
            return f"if it % {r.choice([2, 3, 5])} == 0:\n        print(it, {r.choice(['u[0]', 'float(u.max())', 'u.sum()'])})"
        if which < 0.85:
            return f"if float(u.max()) > {r.choice(['0.7', '2.0', '100'])}:\n        u = u * 0.5"
        self.once("res = 1.0")
        return f"res = float(np.abs(u - v).sum())\n    if res < {r.choice(['0.01', '1e-9', '0.5'])}:\n        break"

    def function(self) -> str:
        r, c = self.r, self.c()
        kind = r.random()
        if kind < 0.4:
            self.once("def step(a, k):\n    a[1:-1] += k * (a[:-2] - a[1:-1])\n    return a")
            return f"u = step(u, {c})" if not self.ints else "u = step(u, 2)"
        if kind < 0.7:
            self.once("def f(a, b):\n    return a * 0.5 + b" if not self.ints else "def f(a, b):\n    return a // 2 + b")
            return r.choice(["u = f(u, v)", "v = f(v, u[0])"])
        self.once("def norm(a):\n    return float(np.sqrt((a * a).sum()))")
        return "t = norm(u)" if self.ints else f"c = {c} / (1 + norm(u))"  # (``c``: an input, see generate_loop)

    def alias(self) -> str:
        r = self.r
        if r.random() < 0.2:  # a helper that writes its argument (a CFD course's boundary and relax steps)
            body = "a[1:-1] = 0.5 * (b[:-2] + b[2:])" if not self.ints else "a[1:-1] = (b[:-2] + b[2:]) // 2"
            self.once(f"def relax(a, b):\n    {body}")
            return r.choice(["relax(v, u)", "relax(u, w)"])
        return r.choice(["u, v, w = v, w, u", "v = u", "u = v.copy()", "w[:] = u", "v[:] = w[::-1]",
                         "m = u.max()\n    u = u / (m + 1)" if not self.ints else "m = u.max()\n    u = u // (m + 1)"])

    def kept(self) -> str:
        """Values kept per step: a list of arrays, an array written at the step's row, a row of ``g``."""
        r = self.r
        pick = r.random()
        if pick < 0.35:
            self.once("snaps = []")
            return r.choice(["snaps.append(u.copy())", "snaps.append(u[:2] * 1)", "snaps.append(u.sum())"])
        if pick < 0.7:
            self.once("trail = np.zeros(400)")
            return r.choice(["trail[it] = u[0]", "trail[it] = u.max() - u.min()", "trail[it % 7] += u[-1]"])
        return r.choice(["g[it % g.shape[0]] = u[:g.shape[0]] if n >= g.shape[0] else 0", "g[:, it % g.shape[1]] *= 0.5"])

    def sweep(self) -> str:
        """Row or column sweeps (ADI, a tridiagonal solve's forward pass): an inner loop over one axis."""
        c = self.c() if not self.ints else "1"
        return self.r.choice([
            f"for i in range(1, g.shape[0]):\n        g[i, :] = g[i, :] - {c} * g[i - 1, :]",
            f"for j in range(1, g.shape[1] - 1):\n        g[1:-1, j] = 0.5 * (g[1:-1, j - 1] + g[1:-1, j + 1])"
            if not self.ints else "for j in range(1, g.shape[1]):\n        g[:, j] += g[:, j - 1] % 3",
            "for i in range(g.shape[0] - 2, -1, -1):\n        g[i] -= g[i + 1] * 0.5" if not self.ints
            else "for i in range(g.shape[0] - 2, -1, -1):\n        g[i] -= g[i + 1] // 2",
        ])

    def draw_random(self) -> str:
        """Draws from a generator the cell seeds (the replay draws as the cell would)."""
        self.once("rs = np.random.default_rng(5)")
        return self.r.choice(["u = u + 0.01 * rs.standard_normal(n)" if not self.ints else "u = u + rs.integers(0, 3, n)",
                              "v[rs.integers(0, n)] = 0", "u *= rs.random()" if not self.ints else "u += rs.integers(0, 2)"])

    def branch(self) -> str:
        c = self.c()
        return self.r.choice([f"if it % 2:\n        u, v = v, u\n    else:\n        u = u * {c}",
                              f"if it == 3:\n        v = v * {c}\n    elif it % 4 == 1:\n        u[0] = v[-1]"])

    def checkpoint(self) -> str:
        """Every so many steps, something Python does: keep a value, print, change a coefficient, stop
        (``loops._checkpoint``: the loop runs ahead between them)."""
        r = self.r
        p = r.choice([7, 13, 25])
        test = r.choice([f"it % {p} == {r.randrange(p)}", f"(it + 1) % {p} == 0", f"it == {r.choice([5, 30])}",
                         f"it > {r.choice([10, 60])} and it % {p} == 0", "it % every == 0"])
        if test.endswith("every == 0"):
            self.once(f"every = {p}")
        inner = r.choice([self.kept(), self.sync(), self.update(), "c = c * 0.5" if not self.ints else "u = u // 2",
                          "every = every + 3" if "every" in test else "v = v + u", "break"])
        return f"if {test}:\n        " + inner.replace("\n", "\n    ")

    def untraced(self) -> str:
        return self.r.choice(["u = np.roll(u, 1)", "v = np.cumsum(v) / (it + 1)" if not self.ints else "v = np.cumsum(v) % 9",
                              "u = np.sort(u)"])

    def coefficient(self) -> str:
        """Coefficients that change each step: a name rebound to a number, or numbers the loop variable
        computes inside array arithmetic (``loops.py`` runs ahead with them: ``terms.py``)."""
        if self.ints:
            return self.r.choice(["u += it", "u = u * 2 % (it + 3)", "v += it > 5"])
        return self.r.choice(["c = c * 0.9", "c = 0.1 + 0.01 * it", "c = float(c * 0.99)",
                              "u = u * (1.0 - 0.5 / (it + 2))", "u += 0.01 * np.sin(0.3 * it)", "v = v + (it > 5)",
                              "u = u * 0.9 + abs(it - 10) * 0.01", "u = u + np.exp(-0.1 * it) * c",
                              "u = u * 0.5 if it % 3 else u + 0.1", "v = v * 0.5 + u / (it + 1.5)"])

    def draw(self) -> str:
        r = self.r
        pick = r.random()
        for bound, kind in ((0.22, self.stencil), (0.32, self.update), (0.37, self.checkpoint), (0.43, self.boundary), (0.5, self.element),
                            (0.6, self.sync), (0.67, self.function), (0.7, self.coefficient), (0.77, self.alias),
                            (0.83, self.kept), (0.89, self.sweep), (0.93, self.draw_random), (0.97, self.branch),
                            (1.0, self.untraced)):
            if pick < bound:
                return kind()
        return self.update()


def generate_loop(seed: int) -> LoopProgram:
    """One random loop program; the same seed gives the same program."""
    r = random.Random(seed)
    dtype = r.choice(DTYPES)
    n = r.choice([1, 2, 5, 8, 16, 33])
    m = r.choice([3, 4, 6])
    inputs = [gen.Input("u", "array", dtype, (n,)), gen.Input("v", "array", dtype, (n,)),
              gen.Input("w", "array", dtype, (n,)),
              gen.Input("g", "array", dtype, (m, m), r.choice(["C", "C", "F"])), gen.Input("c", "pyscalar", "float64")]
    body = _Body(r, n, dtype == "int64")
    steps = [body.draw() for _ in range(r.randint(1, 5))]
    top = r.random()
    if top < 0.15:  # an inner loop of iterations each step (a pressure solve in a time step)
        inner = [body.draw() for _ in range(r.randint(1, 3))]
        steps = [f"for q in range({r.choice([2, 5, 12])}):\n" + "\n".join("        " + s.replace("\n", "\n    ")
                                                                          for s in inner)] + steps
    if top < 0.75:
        loop = f"for it in range({r.choice([3, 8, 20, 40, 90, 200])}):"
    else:
        loop = f"it = 0\nwhile it < {r.choice([5, 30, 120])}:"
        steps.append("it += 1")
    if r.random() < 0.1 and loop.startswith("for"):  # a step skipped
        steps.insert(r.randrange(len(steps) + 1), f"if it % {r.choice([3, 4])} == 2:\n        continue")
    text = loop + "\n" + "\n".join("    " + s for s in steps)
    loops = [text]
    if r.random() < 0.2:  # a second loop, reading what the first left (and what it kept per step)
        second = [body.draw() for _ in range(r.randint(1, 2))]
        loops.append(f"for it in range({r.choice([4, 30, 60])}):\n" + "\n".join("    " + s for s in second))
    stmts = [f"n = {n}"] + body.prologue + loops
    ends = ["total = float(u.sum()) + float(g.sum())", "out = u + v", "w = g.T @ g", "print(u[:3], g[0])"]
    if "snaps = []" in body.prologue:
        ends += ["S = np.array(snaps)", "S = np.array(snaps[-3:]) * 2", "last = snaps[len(snaps) // 2]"]
    if "trail = np.zeros(400)" in body.prologue:
        ends += ["m = trail[:5].copy()", "m = float(trail.sum())"]
    if "hist = []" in body.prologue:
        ends += ["h = np.array(hist)", "h = hist[-1] if hist else 0.0"]
    stmts.append(r.choice(ends))
    return LoopProgram(seed, inputs, stmts, replayable=True)


# -- loops that read a value each step (jupyter_fuse/syncloops.py) ------------------------------------------

def generate_sync_loop(seed: int) -> LoopProgram:
    """One random loop reading one value of its arrays each step, as solvers and simulations do: a residual's
    ``float()`` or ``.item()`` steering a ``while`` or a ``break``, a test of arrays in the ``while`` itself,
    a count of a mask, the values kept in a list, printed every few steps; the array statements a stencil's,
    an update's, a ``np.where``'s. Such a loop runs its steps ahead once two match (``syncloops.py``), and
    sometimes cannot (a number the loop changes meets its arrays): both must leave what NumPy leaves."""
    r = random.Random(seed)
    dtype = r.choice(["float64", "float64", "float32"])
    n = r.choice([3, 5, 16, 40])
    m = r.choice([3, 4, 6])
    inputs = [gen.Input("u", "array", dtype, (n,)), gen.Input("v", "array", dtype, (n,)),
              gen.Input("g", "array", dtype, (m, m), r.choice(["C", "C", "F"])), gen.Input("c", "pyscalar", "float64")]
    arrays = r.sample([
        "un = u.copy()\n    u[1:-1] = 0.5 * (un[2:] + un[:-2])",
        "u = u * c + v * 0.5",
        "v = np.sqrt(np.abs(v - u * 0.25))",
        "g[1:-1, 1:-1] = 0.25 * (g[2:, 1:-1] + g[:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, :-2])",
        "u = np.where(u > 0.5, u * 0.5, u + 0.1)",
        "v += u * c",
        "g = g * 0.9 + 0.05",
        "u[0] = v[-1]",
        "v = np.minimum(v, u) + 0.01",
        "uo = u\n    u = u * c + 0.1",  # (a name taking what another held: ``uo`` the last step's ``u``)
    ], r.randint(1, 4))
    site = r.choice(["float(np.abs(u - v).max())", "float(u.sum())", "float(u[0])", "float(g.max())",
                     "u.mean().item()", "float(np.sqrt((v * v).sum()))"]
                    + ["float(np.abs(u - uo).max())"] * 3 * any(a.startswith("uo") for a in arrays))
    tol = r.choice(["1e-9", "0.05", "0.5", "2.0", "c"])
    steps = r.choice([6, 20, 60, 150])
    extras = r.sample(["hist.append(res)", f"if it % {r.choice([3, 7])} == 0:\n        print(it, res)",
                       "best = min(best, res)", "total = total + res * 0.5",
                       # (statements reading arrays: a value kept each step or now and then, a print of arrays)
                       "kept.append(np.abs(u).max() * 2)", f"if it % {r.choice([4, 9])} == 1:\n        kept.append(g.sum())",
                       f"if it % {r.choice([5, 11])} == 0:\n        print(it, u[:2])"], r.randint(0, 2))
    form = r.random()
    pre = ["hist = []", "kept = []", "best = 1e9", "total = 0.0", "it = 0", "res = 1.0"]
    if form < 0.3:  # a while on the value read
        loop = [f"while it < {steps} and res > {tol}:", *arrays, f"res = {site}", "it += 1", *extras]
    elif form < 0.55:  # a break on it
        loop = [f"for it in range({steps}):", *arrays, f"res = {site}", *extras, f"if res < {tol}:\n        break"]
    elif form < 0.7:  # a count of a mask
        loop = [f"for it in range({steps}):", *arrays, "res = int((u > 0.5).sum())", *extras]
    elif form < 0.85:  # a test of arrays in the while (the value first: each step reads it)
        test = r.choice(["np.max(np.abs(u)) > 1e-6", "u.sum() > -1e9", "float(g.min()) > -5.0"])
        loop = [f"while {test} and it < {steps}:", *arrays, "it += 1", "res = float(it)", *extras]
    else:  # a break on a test of arrays
        test = r.choice(["np.abs(u).max() < 1e-3", "u[0] > 100.0", "not np.isfinite(v).all()"])
        loop = [f"for it in range({steps}):", *arrays, f"if {test}:\n        break", "res = float(it)", *extras]
    if form < 0.55 and len(arrays) > 1 and r.random() < 0.4:  # an update after the value read, the step's last
        loop.remove(arrays[-1])
        loop.append(arrays[-1])
    text = loop[0] + "\n" + "\n".join("    " + s for s in loop[1:])
    ends = ["out = u + v", "h = np.array(hist)", "last = (it, res, best, total)", "print(u[:3], g[0], it)",
            "k = np.array(kept)"]
    stmts = [f"n = {n}", *pre, text, r.choice(ends)]
    return LoopProgram(seed, inputs, stmts, replayable=True)
