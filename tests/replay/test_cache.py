"""Guards in words, unreplayable cells with their reasons, odd objects, bounds, the magics."""

from __future__ import annotations

import collections
import math
import re
import types
import warnings
from typing import Any

import numpy as np
import pytest
from IPython.core.error import UsageError

import jupyter_fuse as jf
from helpers import Twin
from jupyter_fuse import cache
from jupyter_fuse.cache import PLAN_CACHE, RecompileWarning


def run(src, ns, **kw):
    return jf.run_cell(src, ns, "numpy", **kw)


def twice(src, ns, change=None, **kw):
    run(src, ns, **kw)
    if change:
        change(ns)
    return run(src, ns, **kw)


@pytest.mark.parametrize("change, reason", [
    (lambda ns: ns.update(x=np.zeros(2000), b=np.zeros(2000)), "x: shape (1000,) -> (2000,)"),
    (lambda ns: ns.update(x=np.zeros(1000, np.float32)), "x: dtype float64 -> float32"),
    (lambda ns: ns.update(x=np.zeros(2000)[::2]), "x: strides (8,) -> (16,)"),
    (lambda ns: ns.update(alpha=0.7), "alpha: value 0.5 -> 0.7"),
    (lambda ns: ns.update(alpha=np.float32(0.5)), "alpha: type float -> float32"),
    (lambda ns: ns.update(b=ns["x"]), "b: now aliases x"),
    (lambda ns: ns["cfg"].__setitem__("lr", 2), "cfg['lr']: type float -> int"),
    (lambda ns: ns.update(f=np.cos), "f: now a different object"),
    (lambda ns: ns.pop("alpha"), "alpha: no longer defined"),
])
def test_miss_reasons_name_the_value_and_the_change(change, reason):
    ns = {"np": np, "x": np.ones(1000), "b": np.ones(1000), "alpha": 0.5, "cfg": {"lr": 0.1}, "f": np.sin}
    src = "y = f(x) * alpha + b * cfg['lr']\nx += b"
    r = twice(src, ns, change) if reason != "alpha: no longer defined" else None
    if r is None:
        run(src, ns)
        change(ns)
        with pytest.raises(NameError):
            run(src, ns)
        return
    assert r.cache == "miss"
    assert any(m.startswith(reason) for m in r.miss_reasons), r.miss_reasons


def test_hit_reports_guards_and_times():
    ns = {"np": np, "x": np.ones(10), "cfg": types.SimpleNamespace(alpha=0.5)}
    r = twice("y = x * cfg.alpha", ns)
    assert r.cache == "hit" and r.miss_reasons == []
    assert "x: ndarray float64 (10,) C-contiguous" in r.guards
    assert "cfg.alpha: float 0.5" in r.guards
    assert r.times["guard"] > 0 and r.times["trace"] == 0
    assert np.array_equal(ns["y"], np.full(10, 0.5))
    assert r.to_dict()["cache"] == "hit"


def test_in_place_edit_of_an_input_is_seen_by_the_replay():
    ns = {"np": np, "x": np.arange(4.0)}
    run("y = x * 2\nx += 1", ns)
    x0 = ns["x"]
    x0[:] = 10
    r = run("y = x * 2\nx += 1", ns)
    assert r.cache == "hit" and ns["x"] is x0
    assert np.array_equal(x0, [11] * 4) and np.array_equal(ns["y"], [20] * 4)


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_call_outside_the_trace_returning_np_true_is_not_its_argument(backend):
    """``x < y`` of a lazy complex scalar and a lazy np.True_ runs as NumPy (complex order) and returns np.True_,
    the very object ``y`` computed to: the result was bound to ``y``, so a replay on other values gave ``y``'s
    (fuzz seed 3305024)."""
    src = "x = np.prod(b, dtype=np.complex128)\ny = np.logical_and(b, b)\nv = x < y\nw = y <= x\n"
    b = np.array(-1, np.int32)
    ns = {"np": np, "b": b}
    jf.run_cell(src, ns, backend)
    assert ns["v"] is np.True_ and ns["w"] is np.False_  # (-1 < 1; 1 <= -1)
    b[...] = 6
    r = jf.run_cell(src, ns, backend)
    assert r.cache == "hit" and ns["v"] is np.False_ and ns["w"] is np.True_


def test_numpy_scalar_dict_keys_replay():
    ns = {"np": np, "b": np.arange(6, dtype=np.int32) - 2}
    src = "k = {b[2]: b * 2, (b[1], 'x'): 2}"
    run(src, ns)
    r = run(src, ns)
    assert r.cache == "hit", r.miss_reasons
    assert list(ns["k"]) == [0, (-1, "x")] and type(next(iter(ns["k"]))) is np.int32
    assert np.array_equal(ns["k"][0], ns["b"] * 2)


def test_branch_flip_abandons_the_replay_before_any_write():
    ns = {"np": np, "x": np.zeros(4)}
    src = "x *= 2\nif x.sum() > 10:\n    y = 1\nelse:\n    y = 2"
    run(src, ns)
    assert ns["y"] == 2
    ns["x"][:] = 1.0
    r = run(src, ns)
    assert r.cache == "hit" and ns["y"] == 2  # 8 > 10 steers the same way
    ns["x"][:] = 100.0
    r = run(src, ns)
    assert r.cache == "miss" and r.miss_reasons[0].startswith("line 2 (bool()): value False -> True")
    assert ns["y"] == 1 and np.array_equal(ns["x"], [200.0] * 4)  # traced once, not half-replayed first


@pytest.mark.parametrize("src, why", [
    ("import time\ny = x * 2", "`import time`: calls into time are not recorded"),
    ("del cfg['lr']", "del"),
    ("exec('y = 1')", "exec"),
    ("y = g(x)", "defined outside the cell"),
    ("print(x, file=sink)", "file"),
    ("cfg['lr'] = 3", "changes an object it read"),
    ("lst.append(x * 2)", "changes an object it read"),
    ("g = np.random.Generator(np.random.PCG64(0))\ny = x * g.random(3)", "other than by np.random.default_rng"),
    ("s = rng.bit_generator.state\ny = x * rng.random(3)", "the cell reads rng.bit_generator"),
    ("y = x * box['rng'].random(3)", "inside a container"),
])
def test_unreplayable_cells_say_why_and_stay_correct(src, why):
    import io

    for _ in range(2):  # a fresh namespace each time: the second run is no re-run of a no-op
        ns = {"np": np, "x": np.ones(3), "cfg": {"lr": 0.1}, "g": lambda v: v * 2, "sink": io.StringIO(), "lst": [],
              "rng": np.random.default_rng(1), "box": {"rng": np.random.default_rng(2)}}
        r = run(src, ns)
        assert r.cache == "unreplayable", (r.cache, r.miss_reasons)
        assert any(why in m for m in r.miss_reasons), r.miss_reasons


def test_random_cell_matches_numpy_every_run():
    """Draws are steps of the replay: each run draws anew, and NumPy's generator ends where NumPy's does."""
    twin = Twin(lambda: {"np": np, "n": 5})
    twin.run("np.random.seed(0)")
    caches = [twin.run("v = np.random.rand(n)\nw = v * 2 + np.random.normal(size=n)\nprint(v.sum())").cache
              for _ in range(3)]
    assert caches == ["miss", "hit", "hit"]


REPLAYABLE = [
    # functions, lambdas, closures and classes the cell defines are rebuilt by the replay
    "def step(u, dt):\n    v = u.copy()\n    v[1:-1] = u[1:-1] + dt * (u[:-2] - 2 * u[1:-1] + u[2:])\n    return v\n"
    "for i in range(5):\n    x = step(x, 0.1)",
    "f = lambda a, k=2.0: a * k\ny = f(x)",
    "def make(c):\n    def g(a):\n        return a * c + len(g.__name__)\n    return g\nh = make(3.0)\ny = h(x)",
    "class P:\n    scale = 2.0\n    def f(self, a):\n        return a * self.scale\np = P()\np.w = x * 2\ny = p.f(x)",
    "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\ny = x * fact(4)",
    # imports of numpy and of pure modules bind names again
    "import math\nimport numpy\nfrom numpy import sin\ny = sin(x) * math.pi + numpy.cos(x)",
    # calls outside the trace are steps: made again on the new values
    "y = np.concatenate([x, x * 2])\nz = np.roll(y, 1) + 1",
    "c = np.cumsum(x * 2)\nd = c[-1] + 1\nn = np.linalg.norm(x)\nw = x / n",
    "np.random.seed(3)\ny = x + np.random.rand(4)\nz = np.random.normal(size=3)",
    "y = x * 2\nx.sort()\nz = x + y",
    "m = x > 1\ny = x[m] * 2",
    "y = np.fft.fft(x).real * 2",
    # a NumPy scalar's own attributes and methods: calls outside the trace too
    "w = np.fft.fft(x)\ni = np.argmax(np.abs(w))\nlam = w[i].real\ny = x / lam + w[i].imag\nc = w[1].conjugate()",
    "s = x.sum()\nk = s.is_integer()\ny = x * s.real + s.imag",
    # functions imported by name: functools' builtins, NumPy's Python-level functions
    "from functools import reduce\ny = reduce(np.add, [x, x * 2, x])",
    "from numpy.lib.stride_tricks import sliding_window_view\ny = sliding_window_view(x, 2).sum(axis=1)",
    "from numpy import dot, outer\ny = dot(x, x) + outer(x, x)",
    # np.c_ and np.r_ of lazy arrays, scalars, slices and directives: built by NumPy, as a recorded call
    "Xb = np.c_[np.ones(len(x)), x * 2]\ny = Xb @ np.r_[0.5, x[:1]]",
    "r = np.r_[x * 2, 0, 1:3, x[::-1]]\nm = np.r_['0,2', x, x + 1]\nc = np.c_[x]",
    # sets the cell leaves (of values Python saw: a sync each, compared by the replay)
    "seen = set((x > 0).tolist())\nfz = frozenset((x * 0).tolist()) | {7}\ny = x * len(seen | fz)",
    # named tuples the cell makes (the class too: made again by collections.namedtuple), NumPy returns, reads
    "from collections import namedtuple\nState = namedtuple('State', 'u v', defaults=[0.0])\ns = State(x.copy())\n"
    "for i in range(3):\n    s = State(s.u + 0.1 * s.v, s.v - 0.1 * s.u)\nt = s._replace(v=s.u.sum())",
    "r = np.linalg.svd(np.outer(x, x) + np.eye(4))\ny = r.S * 2",
    "w = prev.a * x + prev.b\nn = Pair(w, prev.b + 1)",
]


PURE_PYTHON = [
    "from collections import deque\nlabels = np.full(len(x), -1)\nqueue = deque([0])\nwhile queue:\n"
    "    j = queue.popleft()\n    for nb in np.flatnonzero((np.abs(x - x[j]) < 1.6) & (labels == -1)):\n"
    "        labels[nb] = j\n        queue.append(nb)",
    "import collections\nc = collections.Counter((x > 1).tolist())\nd = collections.defaultdict(list)\n"
    "d[int(x.argmax())].append(x * 2)\no = collections.OrderedDict(a=x.sum())\nq = collections.deque([1], maxlen=3)",
    "import heapq, bisect, statistics\nh = []\nfor v in x:\n    heapq.heappush(h, float(v))\n"
    "s = heapq.nsmallest(2, h)\ni = bisect.bisect(sorted(h), 1.0)\nm = statistics.median(h)\ny = x * m",
    # (a deque holding the cell's arrays: L-BFGS's last m pairs; they were left lazy in it)
    "import collections\npairs = collections.deque(maxlen=2)\nfor i in range(4):\n    pairs.append((x * i, x - i))\n"
    "y = sum(s * t for s, t in pairs)\nfirst = collections.deque([x + 1])",
]


@pytest.mark.parametrize("src", PURE_PYTHON)
def test_cells_using_pure_python_modules_replay(src):
    """Modules of pure Python data structures and functions (collections, heapq, bisect, statistics) bind
    names again; the deques, Counters, defaultdicts and OrderedDicts the cell leaves are rebuilt. (Their
    loops steer by the data: a re-run on other data is traced again.)"""
    twin = Twin(lambda: {"__name__": "__main__", "np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])})
    caches = [twin.run(src).cache for _ in range(3)]
    assert caches == ["miss", "hit", "hit"], twin.reports[-1].miss_reasons


def test_a_cell_importing_random_says_why_it_is_not_replayed():
    """Python's ``random`` keeps a global generator a replay would not advance: traced every run, and says so."""
    twin = Twin(lambda: {"np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])})
    r = twin.run("import random\nrandom.seed(1)\ny = x * random.random()")
    assert r.cache == "unreplayable" and "random" in r.miss_reasons[0], r.miss_reasons


Pair = collections.namedtuple("Pair", "a b")  # (a named tuple of the user's, read by a cell)


@pytest.mark.parametrize("src", REPLAYABLE)
def test_cells_with_functions_imports_and_eager_calls_replay(src):
    twin = Twin(lambda: {"__name__": "__main__", "np": np, "x": np.array([3.0, 1.0, 2.0, 0.5]), "Pair": Pair,
                         "prev": Pair(np.ones(4), 2.0)})
    assert twin.run(src).cache == "miss", twin.reports[-1].miss_reasons
    assert twin.run(src).cache == "hit", twin.reports[-1].miss_reasons
    twin.change(lambda ns: ns["x"].__setitem__(slice(None), [0.25, 4.0, 1.5, 0.5]))  # new data, same guards
    assert twin.run(src).cache == "hit", twin.reports[-1].miss_reasons


GENERATOR_CELLS = [
    # a generator the cell makes: the replay makes it again from the seed and draws anew
    "rng = np.random.default_rng(0)\nw = rng.normal(0, 0.1, (4, 3))\ny = x @ w + rng.random(3)",
    "rng = np.random.default_rng(1)\nidx = rng.choice(len(x), 2, replace=False)\ny = x[idx] * 2",
    "rs = np.random.RandomState(2)\nv = x.copy()\nrs.shuffle(v)\ny = v + rs.rand(4)\nk = isinstance(rs, np.random.RandomState)",
    "rng = np.random.default_rng(3)\ndef noisy(a):\n    return a + rng.normal(size=a.shape)\nfor i in range(3):\n    x = noisy(x) * 0.5",
    # a generator read by name: each replay draws from it, as NumPy would
    "y = x * gen.random(4)\nz = gen.integers(0, 10, 3)",
    "gen.shuffle(x)\ny = x.cumsum()",
    "sample = gen.choice(x, size=x.size, replace=True)\nm = sample.mean()",
]


@pytest.mark.parametrize("src", GENERATOR_CELLS)
def test_cells_with_random_generators_replay_and_draw_anew(src):
    twin = Twin(lambda: {"np": np, "x": np.array([3.0, 1.0, 2.0, 0.5]), "gen": np.random.default_rng(11)})
    caches = [twin.run(src).cache for _ in range(3)]
    assert caches == ["miss", "hit", "hit"], twin.reports[-1].miss_reasons


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_an_array_made_again_by_hash_consing_replays(backend):
    """``np.zeros(5)`` twice is one node: the second array's value was computed for the first. A
    later plan must not give it a leaf that no recorded plan computes (the replay's KeyError)."""
    twin = Twin(lambda: {"np": np, "inv": np.array([0, 2, 2, 4, 1, 0]), "v": np.arange(6.0)}, backend)
    src = ("sums = np.zeros(5)\nnp.add.at(sums, inv, v)\nmeans = sums / 2\nsq = np.zeros(5)\n"
           "np.add.at(sq, inv, (v - means[inv]) ** 2)\nstds = np.sqrt(sq)")
    caches = [twin.run(src).cache for _ in range(3)]
    assert caches == ["miss", "hit", "hit"], twin.reports[-1].miss_reasons


PRINTED_FSTRINGS = [
    "for i in range(3):\n    x = x * 0.5 + 1\n    print(f\"step {i}: max {x.max():.4f} sum={x.sum():.2f}!\", 'ok')",
    "x += 1\nprint('mean', f\"{x.mean():8.3f} | {x[0]:+.2e}\", sep=': ')",
    "x *= 1.5\nif x.max() < 1e9:\n    print(f'{x.max():.3f}', end='')",
]


@pytest.mark.parametrize("src", PRINTED_FSTRINGS)
def test_a_value_formatted_into_a_printed_fstring_is_printed_anew(src):
    """An f-string that goes straight into print(): a replay formats the new value into the same
    place (the cell changed x, so every run prints other numbers) instead of abandoning."""
    twin = Twin(lambda: {"np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])})
    caches = [twin.run(src).cache for _ in range(3)]
    assert caches == ["miss", "hit", "hit"], twin.reports[-1].miss_reasons


CHECKED_FSTRINGS = [
    "x += 1\ns = f'{x.max():.2f}'\nprint(s)",  # kept in a name: Python could use it
    "x += 1\nprint(str.upper(f'{x.max():.2f}'))",  # another call consumes it
    "x += 1\nprint(f'{x.max():.1f}' + '!')",  # an operator consumes it
    "x += 1\nprint(f'4.0 {x.max():.1f}')",  # 4.0 twice in the first run's text: its place is not certain
    "x += 1\nprint('{:.2f}'.format(x.max()))",  # str.format, not an f-string
]


@pytest.mark.parametrize("src", CHECKED_FSTRINGS)
def test_a_formatted_value_used_otherwise_is_still_compared(src):
    twin = Twin(lambda: {"np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])})
    caches = [twin.run(src).cache for _ in range(2)]
    assert caches == ["miss", "miss"] and "format()" in twin.reports[-1].miss_reasons[0], twin.reports[-1].miss_reasons


def test_a_replay_that_fails_leaves_the_generator_as_numpy_would():
    """A Python float drawn from a generator the cell reads is a sync value: a replay that draws
    another one is abandoned, the generator's state restored, and the traced run draws it again."""
    twin = Twin(lambda: {"np": np, "x": np.ones(3), "gen": np.random.default_rng(5)})
    src = "v = gen.random()\ny = x * v + gen.normal(size=3)"
    caches = [twin.run(src).cache for _ in range(3)]
    assert caches == ["miss", "miss", "miss"]
    assert "a call outside the trace now returns" in twin.reports[-1].miss_reasons[0]


def test_a_call_whose_result_changes_shape_is_traced_again():
    """``x[m]`` has as many elements as ``m`` is true: a replay that gets another count traces anew."""
    twin = Twin(lambda: {"np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])})
    src = "m = x > 1\ny = x[m] * 2\nz = y.sum()"
    twin.run(src)
    twin.change(lambda ns: ns["x"].__setitem__(slice(None), [0.25, 4.0, 1.5, 2.0]))
    r = twin.run(src)
    assert r.cache == "miss" and "now returns float64[3], not float64[2]" in r.miss_reasons[0]


class Raising:
    @property
    def boom(self):
        raise RuntimeError("no")


class ArrayEq:
    def __init__(self):
        self.v = 1.0

    def __eq__(self, other):
        return np.array([True, False])


class Slotted:
    __slots__ = ("a",)

    def __init__(self):
        self.a = 2.0


@pytest.mark.parametrize("obj", [Raising(), ArrayEq(), object(), Slotted(), np.ones(3, dtype=object),
                                 iter([1]), np.random.default_rng(0), types.SimpleNamespace(a=Raising())])
def test_odd_objects_never_make_a_guard_raise(obj):
    ns = {"np": np, "x": np.ones(3), "o": obj}
    src = "y = x * 2\nk = type(o).__name__"
    for _ in range(2):
        r = run(src, ns)
        assert r.cache in ("unreplayable", "miss", "hit")
    assert np.array_equal(ns["y"], [2.0] * 3)


def test_slotted_data_object_replays():
    ns = {"np": np, "x": np.ones(3), "o": Slotted()}
    assert twice("y = x * o.a", ns).cache == "hit"
    ns["o"].a = 3.0
    r = run("y = x * o.a", ns)
    assert r.cache == "miss" and r.miss_reasons[0].startswith("o.a: value 2.0 -> 3.0")


DATACLASS_CELL = """\
from dataclasses import dataclass, field

@dataclass
class Chain:
    '''masses on springs'''
    m: np.ndarray
    k: float = 2.0
    log: list = field(default_factory=list, repr=False)
    tag: str = field(default="c", compare=False, kw_only=True)

    def __post_init__(self):
        self.log.append(len(self.m))

    def energy(self):
        return (self.k * self.m ** 2).sum()

@dataclass(frozen=True, order=True)
class Point:
    x: float
    y: float = 0.0

@dataclass
class Heavy(Chain):
    g: float = 9.81

    def __repr__(self):
        return f"Heavy({self.g})"

c = Chain(x * 2)
h = Heavy(x.copy(), 3.0, g=1.5, tag="h")
e = c.energy() + h.energy()
p = Point(1.5, len(x))
"""


def test_a_dataclass_the_cell_defines_is_made_again_by_the_replay():
    """``@dataclass`` wrote methods from the fields (their code is not the cell's): a replay makes the class
    again from its own body and applies ``dataclass`` with the same parameters and fields, so the classes
    it leaves behave as the traced run's did: init, repr, eq, order, frozen, hash, defaults, kw_only,
    a subclass and its own ``__repr__``."""
    import dataclasses

    twin = Twin(lambda: {"__name__": "__main__", "np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])})
    assert [twin.run(DATACLASS_CELL).cache for _ in range(2)] == ["miss", "hit"], twin.reports[-1].miss_reasons
    twin.change(lambda ns: ns["x"].__setitem__(slice(None), [0.25, 4.0, 1.5, 0.5]))
    assert twin.run(DATACLASS_CELL).cache == "hit"

    def behaviour(ns: dict) -> list:
        Chain, Point, Heavy = ns["Chain"], ns["Point"], ns["Heavy"]
        c = Chain(np.ones(2), tag="t")
        out = [repr(ns["c"].k), repr(Point(1.0)), Point(1.0, 2.0) < Point(1.0, 3.0), hash(Point(1.0)) == hash(Point(1.0)),
               Point(2.0) == Point(2.0), repr(ns["h"]), c.log, c.tag, Chain.__doc__, repr(ns["p"]),
               [(f.name, f.default, f.repr, f.compare, f.kw_only) for f in dataclasses.fields(Heavy)],
               dataclasses.asdict(ns["p"]), Heavy.__mro__[1] is Chain, Chain.__eq__(c, c)]
        try:
            ns["p"].x = 5.0
        except dataclasses.FrozenInstanceError as e:
            out.append(str(e))
        return out

    assert behaviour(twin.plain) == behaviour(twin.fused)


def test_no_cache_neither_uses_nor_fills():
    ns = {"np": np, "x": np.ones(3)}
    assert run("y = x + 1", ns, cache=False).cache == "off"
    assert run("y = x + 1", ns).cache == "miss"
    assert run("y = x + 1", ns, cache=False).cache == "off"
    assert run("y = x + 1", ns).cache == "hit"


def test_options_are_part_of_the_key():
    ns = {"np": np, "x": np.ones(3)}
    run("y = x + 1", ns)
    assert run("y = x + 1", ns, fuse=False).cache == "miss"
    assert run("y = x + 1 ", ns).cache == "miss"  # other source text


def test_entries_per_cell_are_bounded_lru():
    ns = {"np": np}
    for n in range(12):
        ns["x"] = np.ones(n + 1)
        run("y = x * 2", ns)
    (entries,) = PLAN_CACHE.cells.values()
    assert len(entries) == cache.PER_CELL
    ns["x"] = np.ones(12)  # the newest is kept
    assert run("y = x * 2", ns).cache == "hit"
    ns["x"] = np.ones(1)  # the oldest was dropped
    assert run("y = x * 2", ns).cache == "miss"


def test_total_bytes_are_bounded(monkeypatch):
    monkeypatch.setattr(cache, "MAX_BYTES", 10_000)
    ns = {"np": np, "x": np.ones(3)}
    for i in range(5):
        run(f"y = x * np.asarray([{', '.join(['1.0'] * 400)}]) + {i}", ns.__setitem__("x", np.ones(400)) or ns)
    assert PLAN_CACHE.nbytes <= 10_000


def test_a_recorded_tape_does_not_hold_the_graphs_it_computed():
    """A tape names each value a plan computed by a leaf, not by the node that computed it (which holds
    its whole graph): the ops a long loop traced are freed once run, with the cell's entry cached."""
    import gc

    from jupyter_fuse.ir import Node

    def live_ops() -> int:
        gc.collect()
        return sum(1 for r in list(Node._table.values()) if (n := r()) is not None and n.kind == "op")

    src = "for i in range({n}):\n    x[1:-1] = 0.25 * (x[:-2] + x[2:]) + 0.5 * x[1:-1]\n    s = s + float(x[3])\n"
    counts = [live_ops()]
    for n in (200, 800):
        ns, ref = {"x": np.linspace(0, 1, 50), "s": 0.0}, {"x": np.linspace(0, 1, 50), "s": 0.0}
        assert run(src.format(n=n), ns).cache == "miss"
        exec(src.format(n=n), ref)
        assert ns["s"] == ref["s"] and np.array_equal(ns["x"], ref["x"])
        counts.append(live_ops())
    assert counts[2] - counts[0] < 100, counts  # (~5 ops an iteration were held: 5,000)
    ns = {"x": np.linspace(0, 1, 50), "s": 0.0}
    assert run(src.format(n=800), ns).cache == "hit" and ns["s"] == ref["s"] and np.array_equal(ns["x"], ref["x"])


def test_past_the_step_bound_a_cell_is_traced_each_run_as_numpy_computes_it(monkeypatch):
    src = "for i in range(80):\n    x = x * 0.5 + 1.0\n    s = s + float(x[3])\n"
    for bound, want in [(100, "unreplayable"), (100, "unreplayable"), (200, "miss"), (200, "hit")]:
        monkeypatch.setattr(cache, "MAX_STEPS", bound)
        ns, ref = {"x": np.ones(5), "s": 0.0}, {"x": np.ones(5), "s": 0.0}
        r = run(src, ns)
        exec(src, ref)
        assert r.cache == want, (r.cache, r.miss_reasons)
        if want == "unreplayable":
            assert "it ran more than 100 steps" in r.miss_reasons[0], r.miss_reasons
        assert ns["s"] == ref["s"] and type(ns["s"]) is float and np.array_equal(ns["x"], ref["x"])


def test_recompile_storm_warns_with_advice():
    ns = {"np": np, "x": np.ones(3)}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(6):
            ns["alpha"] = 0.1 * i
            run("y = x * alpha", ns)
    storms = [str(x.message) for x in w if issubclass(x.category, RecompileWarning)]
    assert storms and "0-d array" in storms[0] and "alpha: value" in storms[0]


def test_replay_on_cpu_backend_launches_cached_kernels():
    """Kernel by kernel, a replay compiles nothing; as one program, it compiles the program once."""
    twin = Twin(lambda: {"np": np, "x": np.linspace(0, 1, 64), "b": np.ones(64)}, backend="cpu")
    src = "for i in range(40):\n    x[1:] = np.sin(x[1:]) * 0.5 + x[:-1]\ny = x + b\nprint(y.max())"
    twin.run(src)
    r = twin.run(src, compile_plan=False)
    assert r.cache == "hit" and r.kernels >= 1 and r.times["compile"] == 0 and not r.program
    assert "--no-compile-plan" in r.program_note
    first, again = twin.run(src), twin.run(src)
    assert first.program.startswith("compiled: ") and first.times["compile"] > 0 and "40 iterations" in first.program
    assert again.cache == "hit" and again.kernels == first.kernels and again.times["compile"] == 0
    assert again.kernel_list[-1]["kind"] == "program" and "for " in again.kernel_list[-1]["source"]


def test_a_short_tape_replays_kernel_by_kernel_and_says_why():
    twin = Twin(lambda: {"np": np, "x": np.linspace(0, 1, 64)}, backend="cpu")
    src = "y = np.tanh(x) * 1.5 - x"
    twin.run(src)
    r = twin.run(src)
    assert r.cache == "hit" and r.times["compile"] == 0 and not r.program
    assert "1 kernel launch per replay" in r.program_note


def test_fuse_cache_magic():
    from IPython.testing.globalipapp import start_ipython
    from IPython import get_ipython

    ip = start_ipython() or get_ipython()
    ip.run_line_magic("load_ext", "jupyter_fuse")
    try:
        ip.user_ns.update(np=np, x=np.ones(5))
        ip.run_cell_magic("fuse", "-q -b numpy", "y = x * 3")
        ip.run_cell_magic("fuse", "-q -b numpy", "y = x * 3")
        ip.run_cell_magic("fuse", "-q -b numpy --no-cache", "y = x * 4")
        from contextlib import redirect_stdout
        import io

        out = io.StringIO()
        with redirect_stdout(out):
            ip.run_line_magic("fuse_cache", "")
        text = out.getvalue()
        assert "1 cell" in text and "1 hit," in text and "x: ndarray float64 (5,)" in text
        assert "def holds" not in text
        out = io.StringIO()
        with redirect_stdout(out):
            ip.run_line_magic("fuse_cache", "--code")
        assert "def holds(user):" in out.getvalue() and "user.get('x', MISSING)" in out.getvalue()
        with pytest.raises(UsageError):
            ip.run_line_magic("fuse_cache", "--code --clear")
        with redirect_stdout(io.StringIO()):
            ip.run_line_magic("fuse_cache", "--clear")
        assert not PLAN_CACHE.cells
    finally:
        ip.run_line_magic("unload_ext", "jupyter_fuse")


def test_a_device_array_input_makes_the_cell_unreplayable_not_an_error():
    from jupyter_fuse.cache import Tape

    class DeviceArray:  # as CuPy's ndarray (a --keep result): no implicit conversion to NumPy
        def __array__(self, *args, **kwargs):
            raise TypeError("Implicit conversion to a NumPy array is not allowed")

    tape = Tape(None)
    tape.on_input(object(), DeviceArray())
    assert tape.slots == [] and "kept on the device by an earlier cell (--keep)" in tape.reasons[0]


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
def test_a_replay_writes_into_an_eager_results_own_array(backend):
    # bench/fuzz.py seed 63825: NumPy lays a fancy index's result out its own way (its size-1 axis keeps a
    # stride of its own) and the in-place write keeps that array; a replay handed back a C-ordered copy
    cell = "v1 = b[[0, -1]]\nv1[:-1] = v1[1:]\n"
    fresh = lambda: {"np": np, "b": np.arange(16).reshape((1, 4, 4)).T}  # noqa: E731
    ref = fresh()
    exec(cell, ref)
    caches = []
    for _ in range(3):
        ns = fresh()
        caches.append(jf.run_cell(cell, ns, backend).cache)
        assert ns["v1"].strides == ref["v1"].strides == (32, 8, 32) and np.array_equal(ns["v1"], ref["v1"])
    assert caches[1:] == ["hit", "hit"]


@pytest.mark.parametrize("step", [
    "v[:, 0] += dt * (d * inv) @ m",  # a matrix-vector product of a fused kernel's output (n-body)
    "v[:, 1] = d.T @ m[:8] + v[:, 1]",  # a transposed operand
    "v = v + (d[:, :3] @ v[:3, :]) * dt",  # matrix-matrix, both operands views
    "v = v * (1.0 + m @ (d @ m) * dt)",  # vector . vector: a 0-d result
    "v = v + np.dot(inv, v) * dt",  # np.dot
])
def test_a_time_step_holding_a_matmul_compiles_as_one_rolled_program(step):
    """A kernel NumPy runs (``single``) is called from the compiled program through numba's object mode:
    the step's loop rolls around it instead of the whole tape replaying kernel by kernel."""
    def setup():
        r = np.random.default_rng(3)
        return {"np": np, "v": r.random((8, 3)), "p": r.random(8), "m": r.random(8) / 8, "s": 0.0, "dt": 1e-3}
    twin = Twin(setup, backend="cpu")
    src = ("for i in range(40):\n    d = p[None, :] - p[:, None]\n    inv = (d * d + 0.01) ** -1.5\n"
           f"    {step}\n    p = p + dt * v[:, 0]\n")
    twin.run(src)
    first, again = twin.run(src), twin.run(src)
    rolled = re.search(r"(\d+) iterations of", first.program)  # (the first and last steps may differ: the loop run ahead, names bound)
    assert rolled and int(rolled.group(1)) >= 39, (first.program, first.program_note)
    assert again.cache == "hit" and again.kernel_list[-1]["kind"] == "program", again.miss_reasons
    assert "single" in {e["kind"] for e in first.kernel_list}, [e["kind"] for e in first.kernel_list]


def test_a_compiled_replay_leaves_arrays_its_next_run_replays_on():
    """A program returns flat arrays; a name it rebinds gets an array of its shape that owns its memory as
    the traced run's did (not a reshaped view of the flat one, whose other base failed the next run's guard)."""
    twin = Twin(lambda: {"np": np, "u": np.linspace(0, 1, 64).reshape(8, 8).copy()}, backend="cpu")
    src = ("for i in range(40):\n    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])\n"
           "u = u * 0.5 + 1.0\n")
    reports = [twin.run(src) for _ in range(4)]
    assert [r.cache for r in reports] == ["miss", "hit", "hit", "hit"], [r.miss_reasons for r in reports]
    assert all("compiled: " in r.program for r in reports[1:]), reports[1].program_note


@pytest.mark.parametrize("src", [
    # a coefficient that changes every step
    "for i in range(60):\n    a, b, c = x[0], x[1], x[2]\n    x[1:] = x[1:] * (1.0 - 0.5 ** (i + 1)) + a * b - c\n",
    # the same coefficient twice in one step, then alone: a table per argument
    "for i in range(40):\n    w = 1.0 / (i + 1)\n    x[1:-1] = w * x[1:-1] + w * x[2:]\n    x[0] = x[0] - w\n",
])
def test_a_loop_whose_coefficients_change_every_step_rolls_up(src):
    """The same kernel with other scalar arguments each iteration (``1 - beta1 ** t``, ``dt / (i + 1)``)
    rolls into one loop that reads them from a table, one value per iteration."""
    twin = Twin(lambda: {"np": np, "x": np.linspace(0.0, 1.0, 50)}, backend="cpu")
    first = twin.run(src)
    assert not first.syncs, first.syncs
    again = twin.run(src)
    counts = [int(c) for c in re.findall(r"(\d+) iterations of", again.program)]  # (a loop run ahead in units of
    assert counts and math.prod(counts) >= 39, (again.program, again.program_note)  # four rolls as loops of loops)
    assert twin.run(src).cache == "hit"


def test_a_compiled_replay_of_a_loop_with_an_empty_result():
    """An empty n-D result inside a compiled program: its variable holds one element (``_Builder.new_var``), so
    the kernel's output was that element reshaped to (0, 3), which numba refused; every replay failed and traced
    again. The result the replay leaves is a new empty array, as the traced run's."""
    twin = Twin(lambda: {"np": np, "u": np.linspace(0, 1, 64).reshape(8, 8).copy(), "e": np.zeros((0, 3))},
                backend="cpu")
    src = ("for i in range(40):\n    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])\n"
           "    e = e * 0.5 + u[:0, :3]\n")
    reports = [twin.run(src) for _ in range(4)]
    assert [r.cache for r in reports] == ["miss", "hit", "hit", "hit"], [r.miss_reasons for r in reports]
    assert reports[-1].program.startswith("compiled: ")


def test_a_history_row_assigned_a_tuple_each_step_is_traced_and_the_replay_rolls():
    """``history[t] = S, E, I, R`` in a time loop: NumPy assigns ``np.asarray((S, E, I, R), history.dtype)``.
    It ran as an eager assignment, which copies the whole of ``history`` each step (in the trace and in every
    replay: a replay 100x NumPy's time); it is traced now, and the compiled replay rolls the steps."""
    def setup():
        return {"np": np, "S": np.full(5, 990.0), "I": np.full(5, 10.0), "R": np.zeros(5), "b": np.linspace(0.1, 0.5, 5)}
    src = ("h = np.zeros((61, 3, 5))\nh[0] = S, I, R\nfor t in range(1, 61):\n    new = b * S * I / 1000\n"
           "    rec = 0.1 * I\n    S = S - new\n    I = I + new - rec\n    R = R + rec\n    h[t] = S, I, R\n"
           "peak = h[:, 1].argmax(axis=0)\n")
    twin = Twin(setup, backend="cpu")
    first = twin.run(src)
    assert not first.fallbacks, first.fallbacks
    again = twin.run(src)
    assert again.cache == "hit", again.miss_reasons
    rolled = re.search(r"(\d+) iterations of", again.program)
    assert rolled and int(rolled.group(1)) >= 50, (again.program, again.program_note)


@pytest.mark.parametrize("backend", ["numpy", "cpu"])
@pytest.mark.parametrize("src", [
    # a value per step kept in a list, stacked after the loop whose steps synced (a filter's states)
    "y, xs = x, []\nfor z in zs:\n    y = y * 0.5 + z\n    xs.append(y.ravel())\n    if float(y.max()) > 1e9:\n        break\n"
    "xs = np.array(xs)\nm = xs.mean()\n",
    # a number per test point from a call outside the trace, then reduced (a vote's argmax per row)
    "pred = np.array([np.bincount(v, minlength=4).argmax() for v in votes])\nacc = (pred == 1).mean()\n",
    # numbers, some lazy, most plain, in one list
    "k = np.array([x[0, 0] * 2] + [float(i) for i in range(20)] + [x.sum()])\n",
])
def test_an_array_of_many_parts_is_one_call_on_their_values(src, backend):
    """np.array of more than MAX_PARTS parts, few of them still pending, makes no assignment kernel per
    part: one NumPy call copies their values; a replay makes that call again on the new values. (Parts
    pending in one graph are assigned: ``test_copies_of_each_steps_own_value_roll_up``.)"""
    def setup():
        r = np.random.default_rng(5)
        return {"np": np, "x": r.random((2, 1)), "zs": r.random(40), "votes": r.integers(0, 4, (30, 7))}
    twin = Twin(setup, backend=backend)
    first = twin.run(src)
    assert not [k for k in first.kernel_list if "setitem" in k.get("ops", ())], [k["ops"] for k in first.kernel_list]
    assert any("computed, are copied by one NumPy call" in f["reason"] for f in first.fallbacks), first.fallbacks
    if "for" not in src:  # (a loop over an array's items, or a sync, guards the values it read)
        twin.change(lambda ns: ns.update(x=ns["x"] + 1.0))
    assert [twin.run(src).cache for _ in range(2)] == ["hit", "hit"]


@pytest.mark.parametrize("src", [
    "for i in range(12):\n    c = np.cumsum(x * 0.5, axis=1)\n    x = x + 0.01 * c\n",
    "for i in range(12):\n    p = np.pad(x, 1, mode='edge')\n    x = 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])\n",
    "for i in range(12):\n    y = 0.5 * (x + 2.0 / (x + 1))\n    if np.allclose(x, y):\n        break\n    x = y\n",
    "for i in range(10):\n    t = np.tile(x[0], (2, 1))\n    x = x + 0.1 * t[1:, :] - np.triu(x, 1) * 0.01\n",
    "s = 0.0\nfor i in range(10):\n    x = np.nan_to_num(x / (x - 1.0))\n    s += float(np.ptp(x))\n",
    "for i in range(10):\n    r = np.repeat(x[:, :2], 2, axis=1)\n    x = x * 0.9 + 0.1 * r\n    m = np.average(x, axis=0)\n",
    "for i in range(10):\n    x = x + 0.01 * np.einsum('ij,jk->ik', x, x)\n    e = np.einsum('ij,ij', x, x)\n",
])
def test_loops_of_the_functions_numpy_writes_in_numpy_replay_as_compiled_programs(src, monkeypatch):
    """np.cumsum, np.pad, np.allclose, np.tile, np.triu, np.nan_to_num, np.ptp, np.repeat, np.average and
    np.einsum are traced: a loop of them replays as one compiled program, NumPy's values on new inputs each time."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    fresh = lambda: {"np": np, "x": np.random.default_rng(1).random((4, 4)) + 0.5}  # noqa: E731
    twin = Twin(fresh, backend="cpu")
    assert twin.run(src).cache == "miss"
    for _ in range(2):
        new = fresh()
        twin.change(lambda ns: ns.update(x=new["x"].copy()))
        r = twin.run(src)
        assert r.cache == "hit" and r.program, (r.miss_reasons, r.program_note)


@pytest.mark.parametrize("src", [
    # a Kalman step: np.linalg.inv of a 1x1 innovation covariance each step, the state chain never synced
    # (`for z in zs` reads the values of zs: they stay)
    "F = np.array([[1.0, 0.1], [0.0, 1.0]])\nH = np.array([[1.0, 0.0]])\nP = np.eye(2)\nxs = []\n"
    "for z in zs:\n    x = F @ x\n    P = F @ P @ F.T + 0.01\n    S = H @ P @ H.T + 0.25\n"
    "    K = P @ H.T @ np.linalg.inv(S)\n    x = x + K @ (z - H @ x)\n    P = (np.eye(2) - K @ H) @ P\n"
    "    xs.append(x.ravel())\nxs = np.array(xs)\n",
    # a solve per step, constants among its arguments (np.linalg.solve's and np.clip's)
    "for i in range(12):\n    y = np.linalg.solve(A, x)\n    x = np.clip(x + 0.1 * y, -5.0, 5.0) * 0.9\n",
    # a gather by an index array each step (X[idx]: a call outside the trace)
    "total = 0.0\nfor i in range(10):\n    b = X[idx[i]]\n    total = total + (b * b).sum()\n    X = X * 0.99\n",
    # an index of an array and a number (X[rows, 1]): a tuple of them is the call's argument
    "for i in range(10):\n    b = X[idx[i], 1]\n    X = X * 0.99 + b.sum() / 100\n",
    # draws from a generator, with array and constant arguments (the generator advances as NumPy's)
    "for i in range(10):\n    d = rng.normal(size=3)\n    x = x * 0.9 + d[:2].reshape(2, 1)\n"
    "    s = rng.choice(zs, size=4)\n    x = x + s.mean()\n",
])
def test_calls_outside_the_trace_are_made_inside_a_compiled_program(src, monkeypatch):
    """A call outside the trace that returns a new array from the cell's arrays (np.linalg.inv(S),
    np.linalg.solve, a fancy index, a draw) is made by the compiled program in object mode: the program is
    not cut at it, the loop around it rolls up, and the values are NumPy's on new inputs each time."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)

    def fresh(seed=1):
        r = np.random.default_rng(seed)
        return {"np": np, "x": r.random((2, 1)), "zs": r.random(30), "A": r.random((2, 2)) + 2 * np.eye(2),
                "X": r.random((12, 3)), "idx": r.integers(0, 12, (10, 4)), "rng": np.random.default_rng(seed)}

    twin = Twin(fresh, backend="cpu")
    first = twin.run(src)
    assert first.cache == "miss" and any(k.get("kind") == "eager" for k in first.kernel_list)
    for seed in (2, 3):
        new = fresh(seed)
        twin.change(lambda ns: ns.update({k: v.copy() for k, v in new.items() if k not in ("np", "zs", "rng")}))
        r = twin.run(src)
        assert r.cache == "hit" and r.program, (r.miss_reasons, r.program_note)
        assert "iterations of" in r.program and "python: call" not in r.program.split("iterations of")[0], r.program


@pytest.mark.parametrize("src", [
    # an assignment by an index array each step (u[idx] = ...: a call outside the trace that writes)
    "for i in range(12):\n    u[idx] = u[idx] * 0.5 + 1.0\n",
    # red-black Gauss-Seidel: boolean masks read and written each sweep
    "for it in range(6):\n    for m in (red, ~red):\n        s = np.zeros_like(g)\n"
    "        s[1:-1, 1:-1] = g[2:, 1:-1] + g[:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, :-2]\n"
    "        g[m] = 0.25 * s[m]\n",
    # particle-in-cell deposits: np.bincount with weights and a minimum length, a gather of the field back
    "for step in range(8):\n    j = (x * 4).astype(np.int64) % 8\n    w = x * 4 - np.floor(x * 4)\n"
    "    rho = np.bincount(j, weights=1.0 - w, minlength=8) + np.bincount((j + 1) % 8, weights=w, minlength=8)\n"
    "    E = np.cumsum(rho) - rho.mean()\n    x = np.mod(x + 0.01 * E[j], 2.0)\n",
    # rows of a matrix picked by labels, counts of the labels
    "for k in range(5):\n    rows = X[lab]\n    c = np.bincount(lab, minlength=4)\n    X = X * 0.9 + rows.mean() / c.max()\n",
])
def test_fancy_indexing_and_bincount_in_a_loop_are_made_natively_in_a_compiled_program(src, monkeypatch):
    """``u[idx]``, ``u[idx] = v``, ``g[m] = v`` and ``np.bincount`` inside a compiled replay are made by numba
    functions (``backends/cpu_index.py``), not in object mode: the loop rolls up, the values are NumPy's."""
    from jupyter_fuse.backends import cpu_single

    def fresh(seed=1):
        r = np.random.default_rng(seed)
        g = r.random((8, 8))
        return {"u": r.random(20), "idx": r.integers(-20, 20, 9), "g": g,
                "red": (np.add.outer(np.arange(8), np.arange(8)) % 2 == 0), "x": r.random(30) * 2,
                "X": r.random((6, 3)), "lab": np.array([0, 3, 3, 1, 0, 2])}

    for r in _compiled_replays(src, fresh(), monkeypatch):
        assert "iterations of" in r.program and "python" not in r.program, r.program
    if "g[m] = " not in src:  # (the red-black sweep is a masked statement, masked.py: elementwise, no gather)
        assert any(k[0] == "native" for k in cpu_single._FNS)


def test_a_mask_that_now_selects_other_elements_traces_the_cell_again(monkeypatch):
    """A boolean index selecting another number of elements than when traced (new data): the native gather
    stops the replay before anything is written, and the traced run gives NumPy's values."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    src = "v = u.copy()\nfor i in range(8):\n    big = v[v > t]\n    v = v * 0.9 + big.sum() / 100\n"
    twin = Twin(lambda: {"np": np, "u": np.linspace(0, 1, 20), "t": 0.5}, backend="cpu")
    twin.run(src)
    assert twin.run(src).cache == "hit"
    twin.change(lambda ns: ns.update(u=np.linspace(0, 2, 20)))
    r = twin.run(src)
    assert r.cache == "miss" and "boolean index" in r.miss_reasons[0], r.miss_reasons


def test_a_call_a_program_makes_that_now_returns_another_shape_traces_the_cell_again(monkeypatch):
    """np.unique's result is as long as its distinct values: a replay whose call returns another shape
    stops (nothing written) and the cell is traced again, NumPy's result; an inverse of a singular matrix
    raises NumPy's LinAlgError at its line, the namespace as NumPy leaves it."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    src = "for i in range(6):\n    u = np.unique(v + i)\n    w = u * 2.0 + 1.0\n    s = np.linalg.inv(M * (i + 1))\n"
    twin = Twin(lambda: {"np": np, "v": np.array([1.0, 2.0, 2.0, 3.0]), "M": np.eye(2)}, backend="cpu")
    assert twin.run(src).cache == "miss"
    r = twin.run(src)
    assert r.cache == "hit" and r.program and "python" not in r.program, (r.program, r.program_note)
    twin.change(lambda ns: ns.update(v=np.array([1.0, 2.0, 3.0, 4.0])))  # four distinct values, not three
    r = twin.run(src)
    assert r.cache == "miss" and any("now returns float64[4], not float64[3]" in m for m in r.miss_reasons), \
        r.miss_reasons
    twin.run(src)
    twin.change(lambda ns: ns.update(M=np.zeros((2, 2))))
    twin.run(src)  # (Twin: the same exception as NumPy's, and the same names and values)
    assert twin.reports[-1] is None or twin.reports[-1].error


def test_a_later_loop_reads_an_earlier_loops_rows_in_turn_not_as_a_tuple(monkeypatch):
    """Values an earlier loop kept one per iteration (a history array in the program) read one per
    iteration by a later loop are rows of that history, not a tuple of arrays (numba's compile time
    grows with those): the program's source holds no tuple, and the values are NumPy's."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    src = ("ks = []\nfor i in range(40):\n    P = P * 0.9 + 0.1\n    ks.append(np.linalg.inv(P))\n"
           "for k in ks:\n    x = k @ x + 1.0\n")
    twin = Twin(lambda: {"np": np, "P": np.eye(2) * 2.0, "x": np.ones((2, 1))}, backend="cpu")
    twin.run(src)
    r = twin.run(src)
    assert r.cache == "hit" and r.program, (r.program_note, r.miss_reasons)
    entry = next(iter(PLAN_CACHE.cells.values()))[0]
    sources = [b.source for b in entry.program.blocks]
    assert sources and not any(re.search(r"e\d+_\d+ = \(", s) for s in sources), sources


def test_a_block_too_big_to_compile_replays_kernel_by_kernel_beside_compiled_ones(monkeypatch):
    """A block past what pays to compile (``program._too_big``: here, made to say so of the block that
    syncs) runs its steps kernel by kernel, while the block beside it (a call returning a number between
    them, Python's) stays compiled; the values are NumPy's."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "_too_big", lambda blk, *budget: "too big" if any(s[0] == "sync" for s in blk.steps) else "")
    src = ("y = x * 1.0\nys = []\nfor i in range(10):\n    y = y * 0.5 + 1.0\n    ys.append(y)\n"
           "    s = float(y.sum())\nk = np.count_nonzero(ys[0] > 1.5)\nr = x + k\nfor i in range(8):\n    r = r * 0.5 + ys[i]\n")
    for r in _compiled_replays(src, {"x": np.arange(3.0)}, monkeypatch):
        assert "compiled:" in r.program and "kernel by kernel: k0" in r.program, (r.program, r.miss_reasons)


def test_blocks_that_do_not_roll_share_one_budget_of_calls(monkeypatch):
    """Blocks cut apart by a call outside the trace each step (a random draw), whose kernels differ from step
    to step (another function each time), do not roll: each compiles a call per launch. Past MAX_CALLS of those
    in all (here 8) the rest replay kernel by kernel (a simulated annealing's 7,000 launches compiled for
    40 s); a block that rolls is compiled whatever the budget says. The values are NumPy's."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MAX_CALLS", 8)
    src = ("rng = np.random.default_rng(3)\nfor i in range(1, 7):\n    d = rng.permutation(x)[:i]\n"
           "    f = [np.sin, np.cos, np.exp, np.tanh, np.arctan, np.log1p][i - 1]\n"
           "    x[:i] = f(x[:i]) * 0.5 + d\n    x[i:] += 1.0\n"
           "for i in range(40):\n    y[1:] = y[:-1] * 0.5 + 1.0\n")
    for r in _compiled_replays(src, {"x": np.arange(8.0), "y": np.arange(3.0)}, monkeypatch):
        assert re.search(r"compiled: k\d+, k\d+, 40 iterations of", r.program), r.program  # the rolled loop
        assert "kernel by kernel: k" in r.program, r.program
        entry = next(iter(PLAN_CACHE.cells.values()))[0]
        unrolled = [b for b in entry.program.blocks if 2 * program._calls(b.parts) > program._launched(b.parts)]
        assert sum(program._calls(b.parts) for b in unrolled) <= 8, [program.describe_units(b.parts) for b in unrolled]


def _matrix_loop(seed: int) -> str:
    """A random loop of float64 matrix steps as notebooks write them: products of matrices, vectors and
    their transposes and slices, inverses and solves, gathers and draws between elementwise updates."""
    import random

    r = random.Random(seed)
    steps = [
        "P = F @ P @ F.T + 0.01", "x = F @ x + 0.1", "x = x @ F", "P = P @ P.T * 0.1 + np.eye(4)",
        "s = x @ x", "x = P[1:3, :] .T @ x[1:3] + x", "y = np.linalg.solve(P + 4 * np.eye(4), x)",
        "K = np.linalg.inv(P + 3 * np.eye(4))", "x = K @ x * 0.5", "g = X[idx[i % 3]]", "x = x + g.sum(axis=0)",
        "d = rng.normal(size=4)", "x = x + 0.01 * d", "P = (P + P.T) * 0.5", "v = P[:, 0] @ P[0, :]",
        "x = np.tanh(P @ x)", "w = X.T @ X[:, :2]",
    ]
    body = [r.choice(steps) for _ in range(r.randint(3, 6))]
    return "K = np.eye(4)\ng = X[:2] * 1.0\nd = x * 0.0\nfor i in range(6):\n" + "".join(f"    {b}\n" for b in body)


@pytest.mark.parametrize("seed", range(12))
def test_random_matrix_loops_replay_compiled_as_numpy_computes_them(seed, monkeypatch):
    """Random loops of matmuls (native in a program), inverses, solves, gathers and draws (calls the program
    makes) replay compiled, NumPy's values to the bit on new inputs each time."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    src = _matrix_loop(seed)

    def fresh(s=1):
        r = np.random.default_rng(s)
        return {"np": np, "F": r.normal(size=(4, 4)) * 0.5, "P": np.eye(4) + 0.1 * r.random((4, 4)), "x": r.random(4),
                "X": r.random((5, 4)), "idx": r.integers(0, 5, (3, 2)), "rng": np.random.default_rng(s)}

    twin = Twin(fresh, backend="cpu")
    assert twin.run(src).error is None, src
    for s in (2, 3):
        new = fresh(s)
        twin.change(lambda ns: ns.update({k: v.copy() for k, v in new.items() if k not in ("np", "rng")}))
        r = twin.run(src)
        assert r.cache == "hit" and r.program and "python" not in r.program, (src, r.program, r.program_note)


def test_a_float32_network_loop_replays_compiled_as_numpy_computes_it(monkeypatch):
    """float32 matmuls (a layer, its transpose for the gradient, a dot) are NumPy's float32 loop called natively
    in the program: NumPy's bits, its float32 results, on new inputs."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    src = ("for i in range(8):\n    h = np.tanh(W @ x + b)\n    e = h @ h\n    g = W.T @ (h * (1 - h * h))\n"
           "    x = x - np.float32(0.1) * g\n    W = W - np.float32(0.01) * np.outer(h, x)\n")

    def fresh(s=1):
        r = np.random.default_rng(s)
        return {"np": np, "W": r.normal(size=(6, 4)).astype(np.float32), "x": r.random(4).astype(np.float32),
                "b": r.random(6).astype(np.float32)}

    twin = Twin(fresh, backend="cpu")
    twin.run(src)
    for s in (2, 3):
        new = fresh(s)
        twin.change(lambda ns: ns.update({k: v.copy() for k, v in new.items() if k != "np"}))
        r = twin.run(src)
        assert r.cache == "hit" and r.program and "python" not in r.program, (r.program, r.program_note)
    assert twin.fused["x"].dtype == np.float32
    from jupyter_fuse.backends import cpu_blas, cpu_single

    if cpu_blas.available():  # (the program called the native loop, not object mode)
        assert any(k[0] == "blas" and k[1] == np.float32 for k in cpu_single._FNS), list(cpu_single._FNS)


def test_an_earlier_blocks_rows_read_after_a_python_step_are_one_input_of_the_next(monkeypatch):
    """A loop keeps a value per step (a history array in its block); after a Python step (np.histogram's
    tuple) a later block reads those rows in turn: it takes the history whole, one input, not one input per
    row (MAX_ARRAYS), and its loop reads the rows; the values are NumPy's."""
    src = ("y = x * 1.0\ns = float(y[0])\nys = []\nfor i in range(12):\n    y = y * 0.5 + 1.0\n    ys.append(y * 2.0)\n"
           "    s = float(y[0])\nh, edges = np.histogram(y, bins=3)\nout = np.array(ys) + h.sum()\n")
    for r in _compiled_replays(src, {"x": np.arange(4.0)}, monkeypatch):
        assert r.program.count("iterations of") >= 2, r.program
    entry = next(iter(PLAN_CACHE.cells.values()))[0]
    last = entry.program.blocks[-1]
    assert len(last.inputs) <= 2, [type(n).__name__ for _, n in last.inputs]


@pytest.mark.parametrize("src", [
    "cm = np.zeros((3, 3), dtype=int)\nfor t, p in zip(y_true, y_pred * 1):\n    cm[t, p] += 1\n",
    "counts = np.zeros(3)\nfor t in y_true:\n    counts[t] = counts[t] + 0.5\n",
])
def test_a_loop_of_writes_at_indices_from_data_rolls_into_one_compiled_loop(src, monkeypatch):
    # an index that repeats from one iteration to the next (0, 2, 2, 1, ...) writes one element twice:
    # each write is its own kernel, the same kernel as every other iteration's, so the replay rolls them
    # all into one loop reading a table of where each writes (the second write took the first over before)
    r = np.random.default_rng(5)
    inputs = {"y_true": r.integers(0, 3, 300), "y_pred": r.integers(0, 3, 300), "w": np.array([0.5, 1.0, 2.0])}
    for rep in _compiled_replays(src, inputs, monkeypatch):
        assert "300 iterations of (k" in rep.program, rep.program


def test_values_a_long_loop_kept_in_chunks_are_read_as_rows_of_their_histories(monkeypatch):
    # 300 steps of ~9 ops are traced in chunks (the pending graph is evaluated past a bound), so each
    # chunk's loop keeps its sums in a history of its own; np.array(energies) reads them in turn, as rows
    # of those histories, once the loops that keep them have rolled (not as 300 arrays: too many to compile)
    src = ("energies = []\nfor step in range(300):\n    x = 0.999 * x + 0.001 * np.roll(x, 1)\n"
           "    energies.append((x * x).sum())\nenergies = np.array(energies)\n")
    for rep in _compiled_replays(src, {"x": np.random.default_rng(0).normal(size=30)}, monkeypatch):
        assert "kernel by kernel" not in rep.program and "iterations of" in rep.program, rep.program


def test_chunks_of_a_loop_calling_a_helper_several_times_a_step_end_at_the_same_call(monkeypatch):
    # an RK4 step calls f four times; the pending graph is evaluated in chunks, each ending at the same
    # point of the code: inside f, that point is told apart by where f was called from, so every chunk
    # covers the same stretch of steps and the replay's loops roll (a chunk ending after another call of
    # f had another plan: hundreds of kernel calls, too many to compile)
    src = ("def f(t, y):\n    theta, omega = y\n    return np.array([omega, -np.sin(theta) + 0.5 * np.cos(t)])\n"
           "y = np.array([theta0, np.zeros_like(theta0)])\nt, dt = 0.0, 0.01\nfor step in range(300):\n"
           "    k1 = f(t, y)\n    k2 = f(t + dt / 2, y + dt / 2 * k1)\n    k3 = f(t + dt / 2, y + dt / 2 * k2)\n"
           "    k4 = f(t + dt, y + dt * k3)\n    y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)\n    t += dt\n")
    for rep in _compiled_replays(src, {"theta0": np.linspace(0.1, 1.0, 50)}, monkeypatch):
        assert "iterations of" in rep.program, rep.program


def test_a_value_written_in_place_each_outer_iteration_is_kept_as_it_was(monkeypatch):
    # Lotka-Volterra with a snapshot every 100 steps: the replay's outer loop scatters x and y into the
    # zeros the last iteration made (in place, a carried array) and keeps each snapshot in a history; the
    # row must be copied before the carried array moves on to the next zeros (it was: zeros were kept)
    src = ("alpha, beta, delta, gamma, dt = 1.1, 0.4, 0.1, 0.4, 0.01\n"
           "def rhs(x, y):\n    return alpha * x - beta * x * y, delta * x * y - gamma * y\n\n"
           "x, y = x0.copy(), y0.copy()\nsnapshots = [np.stack([x, y])]\nfor k in range(800):\n"
           "    dxdt, dydt = rhs(x, y)\n    x, y = x + dt * dxdt, y + dt * dydt\n"
           "    if (k + 1) % 100 == 0:\n        snapshots.append(np.stack([x, y]))\n")
    r = np.random.default_rng(3)
    reps = _compiled_replays(src, {"x0": r.uniform(5, 15, 1000), "y0": r.uniform(2, 8, 1000)}, monkeypatch)
    assert any("iterations of (" in rep.program for rep in reps)


@pytest.mark.parametrize("src", [
    "s = np.zeros(n + 1, dtype=np.int64)\nfor d in range(1, n // 2 + 1):\n    s[2 * d::d] += d\n",
    "A = M.copy()\nfor k in range(len(A) - 1):\n    A[k + 1:, k] /= A[k, k]\n"
    "    A[k + 1:, k + 1:] -= A[k + 1:, k][:, None] * A[k, k + 1:]\n",
    "v = x.copy()\nfor w in range(1, 40):\n    v[:-w] = 0.5 * (v[:-w] + v[w:])\n",
])
def test_a_loop_whose_slices_change_length_and_stride_each_step_rolls_into_one_compiled_loop(src, monkeypatch):
    # a sieve's s[2 * d::d] (another stride and length each step), an LU elimination's shrinking trailing
    # block, a window that narrows: one kernel each, its sizes and strides its arguments, so the steps
    # are one call reading a table of them (they ran kernel by kernel, a launch per step, before)
    r = np.random.default_rng(8)
    inputs = {"n": 200, "M": r.uniform(1, 2, (12, 12)) + 12 * np.eye(12), "x": r.normal(size=100)}
    for rep in _compiled_replays(src, inputs, monkeypatch):
        assert "kernel by kernel" not in rep.program and re.search(r"\d\d+ iterations of \(k", rep.program), rep.program


@pytest.mark.parametrize("src, inputs", [
    ("for k in range(n):\n    A[k + 1:] += 1.0\n", {"A": np.arange(6.0), "n": 6}),  # the last step's slice is empty
    ("def f(v, k):\n    v[k:] = v[k:] * 0.5 + 1\nfor k in range(40):\n    f(x, k)\n", {"x": np.ones(50)}),
    ("z = np.zeros(())\nfor k in range(30):\n    z = z + a[k:].sum()\n", {"a": np.linspace(0.0, 1.0, 30)}),
    ("for k in range(5):\n    B[k:, k] -= B[k, k] * 0.5\n", {"B": np.asfortranarray(np.arange(36.0).reshape(6, 6))}),
    ("for d in range(1, 3000):\n    s[d % 7::d % 5 + 1] += 1\n", {"s": np.zeros(50, np.int64)}),
])
def test_steps_of_changing_sizes_replay_as_numpy_at_the_edges(src, inputs, monkeypatch):
    # the tabled sizes and strides at an empty slice, inside a function the cell defines, into a 0-d
    # accumulator, on a Fortran-ordered input, over thousands of steps: each replay is NumPy's (``Twin``)
    _compiled_replays(src, inputs, monkeypatch)


def _compiled_replays(src: str, inputs: dict, monkeypatch: Any, runs: int = 2) -> list:
    """The reports of ``runs`` replays of ``src`` after its traced run (cpu backend, a program from the first
    launch on): each a hit replayed as a compiled program, NumPy's values (``Twin``)."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    twin = Twin(lambda: {"np": np, **{k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}},
                backend="cpu")
    twin.run(src)
    reports = [twin.run(src) for _ in range(runs)]
    for r in reports:
        assert r.cache == "hit" and r.program, (r.program_note, r.miss_reasons)
    return reports


def test_a_numpy_scalar_an_eager_call_returns_is_bound_on_a_replay():  # (generator: seed 733702)
    """``a < a`` of a complex NumPy scalar runs outside the trace and returns np.False_; ``a > False`` returns
    np.False_ too, the very object of its argument: taken for "the call returned its argument", its result
    was not bound, and a replay on new data kept the first run's value."""
    twin = Twin(lambda: {"np": np, "a": np.array(-1.5 - 0.5j)})
    src = "a = np.sum(a)\nv = a > (a < a)\nw = (a < a) | (a > 1)\n"
    assert twin.run(src).cache == "miss"
    for value in (2j, 1 + 0j, -2j):
        twin.change(lambda ns: ns.update(a=np.array(value)))
        assert twin.run(src).cache == "hit", twin.reports[-1].miss_reasons


def test_a_named_tuple_read_from_outside_is_guarded_by_its_fields():
    """A user's named tuple is guarded like a tuple: its type, its length, each field (an array in it by its
    contents too, as in any container). Another one alike replays; other contents or another field type trace
    again, saying which field; the values are NumPy's either way."""
    twin = Twin(lambda: {"np": np, "prev": Pair(np.ones(4), 2.0), "Pair": Pair})
    src = "w = prev.a * 3 + prev.b\nn = Pair(w, prev.b + 1)"
    assert [twin.run(src).cache for _ in range(2)] == ["miss", "hit"]
    twin.change(lambda ns: ns.__setitem__("prev", Pair(np.ones(4), 2.0)))
    assert twin.run(src).cache == "hit", twin.reports[-1].miss_reasons
    assert type(twin.fused["n"]) is Pair
    twin.change(lambda ns: ns["prev"].a.__iadd__(1.0))
    r = twin.run(src)
    assert r.cache == "miss" and r.miss_reasons == ["prev[0]: contents changed"], r.miss_reasons
    twin.change(lambda ns: ns.__setitem__("prev", Pair(np.arange(4.0), 5)))  # an int field now
    r = twin.run(src)
    assert r.cache == "miss" and "prev" in r.miss_reasons[0], r.miss_reasons


@pytest.mark.parametrize("src", [
    "for it in range(20):\n    u[0] = v[3]\n    v[1:-1] = 0.25 * (u[:-2] + u[1:-1] + u[2:])\n    u, v = v, u\n",
    "for it in range(20):\n    u[it % 8] = v[(it * 3) % 8]\n    v[1:-1] = 0.5 * (u[:-2] + u[2:])\n    u, v = v, u\n",
    "for it in range(20):\n    u[1:] += v[:-1]\n    v[:-1] -= 0.5 * u[1:]\n    u, v, w = v, w, u\n",
])
def test_buffers_written_in_place_and_swapped_move_on_at_once_in_a_compiled_loop(src, monkeypatch):  # (loopgen: seed 3)
    """Each step writes both arrays in place and swaps them: the rolled loop's carried names move on at once
    (``a, b = b, a``); one by one, the second read the first's new value and both held one array."""
    inputs = {"u": np.linspace(0.0, 1.0, 8), "v": np.linspace(1.0, 2.0, 8) ** 2, "w": np.linspace(-1.0, 0.0, 8)}
    for rep in _compiled_replays(src, inputs, monkeypatch):
        assert "iterations of" in rep.program, rep.program


@pytest.mark.parametrize("src", ["a[::-1] **= a", "np.power(a, a, out=a[::-1])", "a[1:] **= a[:-1]\nb = a * 2",
                                 "np.clip(a, 1, 3, out=a[::-1])\nc = a + 1"])
def test_a_call_outside_the_trace_writing_a_view_of_what_it_reads_replays(src):  # (generator: seed 626)
    """An eager call writing into a view of an array it also reads: what it reads was computed after the
    array moved to fresh storage, so the replay's first step read a copy its call step had not made yet
    (KeyError, traced again on every run)."""
    twin = Twin(lambda: {"np": np, "a": np.arange(1, 5, dtype=np.uint8)[::-1]})  # (a view: read through a view node)
    assert twin.run(src).cache == "miss"
    for value in (2, 3):
        twin.change(lambda ns: ns["a"].__setitem__(Ellipsis, np.arange(value, value + 4)))
        assert twin.run(src).cache == "hit", twin.reports[-1].miss_reasons


@pytest.mark.parametrize("src", [
    "for it in range(40):\n    u[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2 * u[1:-1] + u[2:])\n"
    "    v[1:-1] = u[1:-1] + 0.15 * (u[2:] - u[:-2])\n    u[:] = v\n",
    "for it in range(30):\n    u[1:] = u[1:] - 0.5 * u[:-1]\n    v[:-1] = v[:-1] + u[1:]\n    u[:] = v\n",
])
def test_a_loop_that_writes_one_array_whole_with_another_rolls_up_from_its_second_step(src):  # (loopgen: seed 3082)
    """`u[:] = v` makes `u` hold `v`'s value: from the second step on both names read one carried value, which
    the first step read as two inputs. Rolled from the first step, the loop started that value from `v` alone
    and never read `u`: a compiled replay left other values than NumPy."""
    twin = Twin(lambda: {"np": np, "u": np.linspace(0.0, 1.0, 33) ** 2, "v": np.linspace(1.0, 0.0, 33)}, backend="cpu")
    twin.run(src)
    for k in range(2):
        twin.change(lambda ns: (ns["u"].__setitem__(slice(None), np.cos(np.arange(33.0) + k)),
                                ns["v"].__setitem__(slice(None), np.sin(np.arange(33.0) * k))))
        r = twin.run(src)
        assert r.cache == "hit" and "iterations of" in r.program, (r.program, r.program_note, r.miss_reasons)


@pytest.mark.parametrize("src", [
    "y = np.add(x, 1.0, out=np.zeros(4), where=x > 1)",
    "d = x - 1\nz = np.divide(x, d, out=np.ones(4), where=d != 0)\nw = z * 2",
    "s = 0.0\nfor (i,), v in np.ndenumerate(x * 2):\n    s += v * i",
])
def test_ufuncs_given_where_and_ndenumerate_replay_as_compiled_programs(src, monkeypatch):
    """A ufunc given ``where=`` runs outside the trace and returns the ``out=`` array it wrote: a compiled
    program took that for a call that now returns something (the replay failed, traced every run);
    ``np.ndenumerate`` read the array's data outside the trace (unreplayable): now a sync, compared."""
    from jupyter_fuse import program

    monkeypatch.setattr(program, "MIN_LAUNCHES", 1)
    twin = Twin(lambda: {"np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])}, backend="cpu")
    caches = [twin.run(src).cache for _ in range(3)]
    assert caches == ["miss", "hit", "hit"], twin.reports[-1].miss_reasons


@pytest.mark.parametrize("compiled", [False, True])
def test_an_argument_an_eager_call_hands_back_inside_a_tuple_is_that_argument(compiled):
    """``np.histogram(x, bins=edges)`` returns the very ``edges`` array: made a new input, no step of a replay
    bound it, and a replay that left it in the namespace failed (KeyError; traced every run)."""
    src = "edges = np.linspace(0, 4, 5) * 1.0\nh, e = np.histogram(x, bins=edges)\nsame = e is edges\ny = h * 2"
    twin = Twin(lambda: {"np": np, "x": np.array([3.0, 1.0, 2.0, 0.5])}, backend="cpu")
    caches = [twin.run(src, compile_plan=compiled).cache for _ in range(3)]
    assert caches == ["miss", "hit", "hit"], twin.reports[-1].miss_reasons
    assert twin.fused["same"] is True


def test_a_compiled_replay_whose_mask_selects_another_count_says_so(monkeypatch):
    """A boolean index inside a compiled replay (``cpu_index``) that now selects more elements: the replay
    stops, the cell is traced, and the miss says what changed (it said "the replay failed (ValueError ...)")."""
    from jupyter_fuse import program as program_mod

    monkeypatch.setattr(program_mod, "MIN_LAUNCHES", 1)
    monkeypatch.setenv("JUPYTER_FUSE_PLAIN", "off")
    src = "tot = 0.0\nfor k in range(40):\n    x = x * 0.99 + 0.01\n    sel = x[x > 0.5]\n    tot = tot + sel.sum()\n"
    x0 = np.linspace(0, 1, 64)
    for x, cache in [(x0, "miss"), (x0, "hit"), (x0, "hit"), (x0 * 1.3, "miss")]:
        ns, ref = {"np": np, "x": x.copy()}, {"np": np, "x": x.copy()}
        exec(src, ref)
        r = jf.run_cell(src, ns, backend="cpu")
        jf.wait_for_compiles()
        assert r.cache == cache and ns["tot"] == ref["tot"] and np.array_equal(ns["x"], ref["x"])
    assert r.miss_reasons == ["a boolean index selects more elements than when the cell was traced: traced anew"]


def test_an_empty_array_a_replayed_program_computes_has_numpys_strides():
    """A compiled replay's empty result is a new empty array (NumPy 2 gives every axis of one stride 0), not
    a slice of the program's buffer (strides of its items): strides are part of what NumPy leaves."""
    pytest.importorskip("numba")
    PLAN_CACHE.clear()
    src = "for k in range(40):\n    u = np.sort(u) + 1\nS = u[:0] * 2\n"
    want = (np.arange(3.0)[:0] * 2).strides
    for k in range(3):
        ns = {"np": np, "u": np.arange(3.0) + k}
        r = jf.run_cell(src, ns, "cpu")
        assert ns["S"].shape == (0,) and ns["S"].strides == want, (r.cache, ns["S"].strides)
    assert r.cache == "hit" and r.program.startswith("compiled")
