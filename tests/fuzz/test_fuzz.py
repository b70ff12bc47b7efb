"""The generated-program comparison (tests/fuzz/gen.py), bounded for `make test`.

bench/fuzz.py runs the same programs by the ten thousand; here a fixed slice of seeds per backend,
sized to keep the suite within its budget. FUZZ_N multiplies the counts (FUZZ_N=10 for a longer local
run). Platform-defined differences and the ones filed for the cupy backend (gen.PLATFORM, gen.KNOWN)
are reported by the bench, not failed here.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import jupyter_fuse

# gen.py by its own folder: under `fuzz`, bench/fuzz.py (a module, which a namespace folder never shadows)
# is found first once a test that imports bench's programs has run
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
import loopgen  # noqa: E402

SCALE = float(os.environ.get("FUZZ_N", "1"))
# about 1.5 minutes on 2 cores (kernels compiled cold); loop programs compile programs: fewer, longer
PROFILE = [("statements", "numpy", 150), ("statements", "cpu", 30), ("statements", "cupy-dry", 45),
           ("loops", "numpy", 40), ("loops", "cpu", 12), ("loops", "cupy-dry", 12), ("sync", "numpy", 30),
           ("sync", "cpu", 10)]
GENERATORS = {"statements": gen.generate, "loops": loopgen.generate_loop, "sync": loopgen.generate_sync_loop}
FIRST_SEED = 1_000_000  # the long runs of bench/fuzz.py start at 0: these seeds are the CI's own


@pytest.mark.parametrize("kind,backend,n", PROFILE, ids=[f"{k}-{b}" for k, b, _ in PROFILE])
def test_generated_programs_leave_what_numpy_leaves(kind, backend, n):
    found = []
    for seed in range(FIRST_SEED, FIRST_SEED + int(n * SCALE)):
        found += gen.check_program(GENERATORS[kind](seed), backend).real()
    assert not found, f"{len(found)} {kind} programs deviate; the first:\n\n" + "\n\n".join(map(str, found[:2]))


def test_the_loop_generator_covers_long_loops():
    progs = [loopgen.generate_loop(seed) for seed in range(300)]
    text = "\n".join(str(p) for p in progs)
    assert str(loopgen.generate_loop(7)) == str(loopgen.generate_loop(7))
    for feature in [r"for it in range\(200\)", r"while it <", r"u, v = v, u", r"break", r"def step", r"hist\.append",
                    r"for j in range\(", r"np\.roll", r"g\[1:-1, 1:-1\]", r"c = c \* 0\.9", r"astype\(np\.int64\)",
                    r"np\.asfortranarray"]:
        assert re.search(feature, text), f"no generated loop program has {feature!r}"


def test_the_sync_loop_generator_draws_loops_that_run_ahead():
    """Most of its loops are ones ``syncloops`` takes (a few meet a number the loop changes: traced)."""
    import ast

    from jupyter_fuse import loops

    marked = 0
    for seed in range(100):
        tree = ast.parse(loopgen.generate_sync_loop(seed).source)
        loops.mark(tree)
        marked += "syncloops.start" in ast.unparse(tree)
    assert marked >= 80, marked
    assert str(loopgen.generate_sync_loop(7)) == str(loopgen.generate_sync_loop(7))


def test_the_generator_is_deterministic():
    assert str(gen.generate(123)) == str(gen.generate(123))
    assert gen.generate(123).setup(2) == gen.generate(123).setup(2)
    assert gen.generate(123).setup(1) != gen.generate(123).setup(2)  # fresh values for the replay run


def test_the_generator_covers_the_ground():
    progs = [gen.generate(seed) for seed in range(400)]
    text = "\n".join(str(p) for p in progs)
    for feature in [r"np\.errstate", r"\nfor i in range", r"\ndef f\d+", r"\nif ", r"print\(", r"float\(", r"round\(",
                    r"out=", r"np\.\w+\([^()]*, [a-z]\d*\)$", r"\[1:\] \+= \w+\[:-1\]", r"\[\w+ > 0\]", r"\[\[0, -1\]\]",
                    r"keepdims=True", r"dtype=np\.", r"ddof=", r"\.T\b", r"\[::-1\]", r"reshape", r"astype",
                    r"asfortranarray", r"dtype=np\.(bool|uint64|float16|complex64)", r"reshape\(\(\)\)|np\.array\(\S+, dtype",
                    r"reshape\(\((0, \d|\d, 0|0,)\)\)", r"\w+ = \w+\[[^\]]+\]\n", r"np\.\w+\(-?[\d.]+\)", r"np\.roll\(", r"np\.concatenate\(", r"np\.diff\(",
                    r"(\w+)\[(\w+)\] = \1\[\2\] \*"]:
        assert re.search(feature, text, re.M), f"no generated program has {feature!r}"
    assert 0.03 < sum(p.raises for p in progs) / len(progs) < 0.5  # some end in NumPy's own exception


def test_a_deviation_is_found_and_minimized(monkeypatch):
    """The comparison sees a difference (here: run_cell made to add 1 to every float array it leaves)."""
    real = jupyter_fuse.run_cell

    def off_by_one(source, ns, **kw):
        report = real(source, ns, **kw)
        for v in ns.values():
            if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.flags.writeable:
                v += 1
        return report

    monkeypatch.setattr(jupyter_fuse, "run_cell", off_by_one)
    prog = next(p for p in map(gen.generate, range(100)) if not p.raises and "float64" in p.setup(1))
    (dev,) = gen.check_program(prog, "numpy").deviations
    assert dev.category == "deviation" and dev.phase == "first"
    small = gen.minimize(prog, "numpy")
    assert 1 <= len(small.stmts) <= len(prog.stmts)


def test_platform_defined_casts_are_classified():
    """NumPy warns that an out-of-range float -> int cast is platform-defined: such a difference is listed
    apart (gen.PLATFORM[0]), and only when NumPy warned and only values differ."""
    p = gen.harness.Outcome({"x": np.array([1, 2])}, {}, "")
    f = gen.harness.Outcome({"x": np.array([1, 3])}, {}, "")
    message = gen._compare(p, f)
    assert message is not None
    assert gen._classify("x = y.astype(np.int64)", message, p, f, ["invalid value encountered in cast"], "cpu") \
        == gen.PLATFORM[0]
    assert gen._classify("x = y.astype(np.int64)", message, p, f, [], "cpu") == "deviation"
    # what is computed from such a value too (a Python int from its min), but never its type
    p, f = gen.harness.Outcome({"m": 0}, {}, ""), gen.harness.Outcome({"m": -32768}, {}, "")
    assert gen._classify("m = round(y.astype(np.int16).min())", gen._compare(p, f), p, f, ["invalid value encountered in cast"],
                         "cpu") == gen.PLATFORM[0]
    # a reduction into an integer dtype casts first: NumPy says "in reduce" then (seed 7600009)
    assert gen._classify("v = y.mean(dtype=np.uint16)", message, p, f, ["invalid value encountered in reduce"], "cpu") \
        == gen.PLATFORM[0]
    assert gen._classify("v = y.mean()", message, p, f, ["invalid value encountered in reduce"], "cpu") == "deviation"
    p, f = gen.harness.Outcome({"m": 0}, {}, ""), gen.harness.Outcome({"m": 0.0}, {}, "")
    assert gen._classify("m = y.min()", gen._compare(p, f), p, f, ["invalid value encountered in cast"], "cpu") == "deviation"


def test_float32_rounding_is_classified_apart():
    """A program computing in float32 may differ from NumPy by float32's rounding (NumPy's SIMD tanh and
    pairwise sums, the kernels' libm and float64 accumulators): listed apart (gen.PLATFORM[3]), in values
    and in printed numbers; a float64 program, or a larger difference, or other text, stays a deviation."""
    def outcomes(pv, fv, pt="", ft=""):
        state = np.random.get_state()
        p, f = (gen.harness.Outcome({"x": v}, {}, t, random_state=state) for v, t in ((pv, pt), (fv, ft)))
        return gen._compare(p, f), p, f

    x32 = np.array([0.4621170], np.float64)
    near = outcomes(x32, x32 + 3e-8)
    assert gen._classify("x = np.tanh(b) % s", *near, [], "cpu", "b = np.array(2.0, np.float32)") == gen.PLATFORM[3]
    assert gen._classify("x = np.tanh(b) % s", *near, [], "cpu", "b = np.array(2.0)") == "deviation"
    far = outcomes(x32, x32 + 1e-3)
    assert gen._classify("x = np.tanh(b) % s", *far, [], "cpu", "b = np.array(2.0, np.float32)") == "deviation"
    setup = "b = np.array([1.5], np.float32)"
    printed = outcomes(x32, x32, "15.6067705\n0\n", "15.606771\n0\n")
    assert gen._classify("print(b.var())", *printed, [], "cpu", setup) == gen.PLATFORM[3]
    worded = outcomes(x32, x32, "v 15.6067705\n", "w 15.606771\n")
    assert gen._classify("print(b.var())", *worded, [], "cpu", setup) == "deviation"


@pytest.mark.skipif(not gen.harness.VECTOR_MATH, reason="NumPy computes exp, pow, tanh, ... with the C library here")
def test_numpys_own_simd_math_is_classified_apart(monkeypatch):
    """Where NumPy computes pow, exp, tanh, ... with its own SIMD code (AVX-512: harness.VECTOR_MATH), a
    program whose values differ only by that last bit (amplified: a float32 power, then `//`) passes where
    NumPy runs without it (its SIMD dispatch off, in a process of its own) and deviates alone with it: listed
    apart (gen.PLATFORM[4]). A program that differs otherwise, or only in this process (the fault the test
    above injects), stays a deviation. (Kernels call NumPy's own loops for these ops now, backends/cpu_nploop,
    and give NumPy's bits: here they call C's functions, as a kernel that cannot call them does.)"""
    from jupyter_fuse.backends import cpu

    monkeypatch.setenv("JUPYTER_FUSE_NUMPY_LOOPS", "off")  # (the processes the classifier starts too)
    monkeypatch.setattr("jupyter_fuse.backends._INSTANCES", {"cpu": cpu.CpuBackend()})  # (nothing rendered yet)
    p = gen.generate(732199)
    power_then_floor = gen.Program(p.seed, p.inputs, p.stmts[:1])
    assert "** b[::-1]" in power_then_floor.source and "//" in power_then_floor.source
    (dev,) = gen.check_program(power_then_floor, "cpu").deviations
    assert dev.category == gen.PLATFORM[4], dev
    other = gen.Program(p.seed, p.inputs, p.stmts[:1] + ["t = type(np).__name__"])  # (the lazy module's)
    assert not gen._agrees_without_simd_math(other, "cpu")
