"""The generated guard function (``guards.compile_check``) answers exactly as ``guards.check``."""

from __future__ import annotations

import contextlib
import types

import numpy as np
from hypothesis import given, strategies as st

from jupyter_fuse import guards


class Slotted:
    __slots__ = ("w", "n")

    def __init__(self) -> None:
        self.w, self.n = np.ones(3), 2


def _namespace() -> dict:
    base = np.arange(12.0)
    shared = np.ones(4)
    ro = np.zeros(5)
    ro.flags.writeable = False
    inner = {"k": 1}
    return {
        "x": np.linspace(0, 1, 6), "v": base[2:8], "s": base[::3], "t": np.ones((3, 4)).T, "fo": np.asfortranarray(np.ones((4, 3))), "ro": ro,
        "a": shared, "b": shared, "f": 0.5, "nz": -0.0, "nan": float("nan"), "inf": float("inf"), "z": 0.0, "f32": np.float32(1.5),
        "i": 3, "flag": True, "name": "abc", "none": None, "dt": np.dtype("float32"), "np": np, "fn": np.sin,
        "params": {"lr": 0.1, "w": np.arange(3.0), "nested": {"k": 2}}, "lst": [1, 2.0, np.ones(2)],
        "tup": (1, "x"), "cfg": types.SimpleNamespace(alpha=0.25, arr=np.ones(2)), "obj": Slotted(),
        "same": [inner, inner],
    }


def _set(name, value):
    return lambda ns: ns.__setitem__(name, value)


CHANGES = {
    "x edited in place": lambda ns: ns["x"].__imul__(2.0),
    "x longer": _set("x", np.linspace(0, 1, 7)),
    "x float32": _set("x", np.linspace(0, 1, 6, dtype=np.float32)),
    "x strided": _set("x", np.linspace(0, 1, 12)[::2]),
    "x read-only": lambda ns: setattr(ns["x"].flags, "writeable", False),
    "x a list": _set("x", [0.0] * 6),
    "x deleted": lambda ns: ns.pop("x"),
    "fo C-order": _set("fo", np.ones((4, 3))),
    "v shifted": lambda ns: ns.__setitem__("v", ns["v"].base[3:9]),
    "v owning": _set("v", np.arange(6.0)),
    "b distinct": _set("b", np.ones(4)),
    "a is x": lambda ns: ns.__setitem__("a", ns["x"]),
    "b view of x": lambda ns: ns.__setitem__("b", ns["x"][:4]),
    "f 0.7": _set("f", 0.7),
    "f float32": _set("f", np.float32(0.5)),
    "nz +0.0": _set("nz", 0.0),
    "nan nan": _set("nan", float("nan")),
    "nan 1.0": _set("nan", 1.0),
    "inf -inf": _set("inf", -float("inf")),
    "inf inf": _set("inf", float("inf")),
    "z -0.0": _set("z", -0.0),
    "z 0": _set("z", 0),
    "i 4": _set("i", 4),
    "i True": _set("i", True),
    "flag 1": _set("flag", 1),
    "name": _set("name", "abd"),
    "none 0": _set("none", 0),
    "dt float64": _set("dt", np.dtype("float64")),
    "dt big-endian": _set("dt", np.dtype(">f4")),
    "np math": lambda ns: ns.__setitem__("np", __import__("math")),
    "fn cos": _set("fn", np.cos),
    "lr": lambda ns: ns["params"].__setitem__("lr", 0.2),
    "params key": lambda ns: ns["params"].__setitem__("z", 1),
    "w edited": lambda ns: ns["params"]["w"].__iadd__(1.0),
    "w replaced": lambda ns: ns["params"].__setitem__("w", np.arange(3.0)),
    "nested k": lambda ns: ns["params"]["nested"].__setitem__("k", 3),
    "lst append": lambda ns: ns["lst"].append(4),
    "lst item": lambda ns: ns["lst"].__setitem__(1, 2.5),
    "tup": _set("tup", (1, "y")),
    "cfg alpha": lambda ns: setattr(ns["cfg"], "alpha", 0.5),
    "cfg new attr": lambda ns: setattr(ns["cfg"], "beta", 1),
    "cfg dict": _set("cfg", {"alpha": 0.25}),
    "obj n": lambda ns: setattr(ns["obj"], "n", 3),
    "obj w gone": lambda ns: delattr(ns["obj"], "w"),
    "same split": lambda ns: ns["same"].__setitem__(1, {"k": 1}),
    "nothing": lambda ns: None,
}


def _recorded(ns: dict) -> list[tuple]:
    rec = guards.Recorder.of(ns)
    assert not rec.reasons, rec.reasons
    return rec.guards


def test_every_guard_kind_is_generated():
    kinds = {g[0] for g in _recorded(_namespace())}
    assert kinds >= {"array", "data", "value", "is", "type", "len", "keys", "attrs", "alias", "same"}
    holds = guards.compile_check(_recorded(_namespace()))
    assert holds(_namespace()) is True
    assert "def holds(user)" in holds.source


@given(st.lists(st.sampled_from(sorted(CHANGES)), max_size=4))
def test_generated_guards_agree_with_check(changes):
    recorded = _recorded(_namespace())
    holds = guards.compile_check(recorded)
    ns = _namespace()
    for name in changes:
        with contextlib.suppress(Exception):  # a change that no longer applies (x is a list now) is skipped
            CHANGES[name](ns)
    misses = guards.check(recorded, ns, first_only=False)
    assert holds(ns) == (not misses), misses


def test_a_guard_that_raises_is_a_no():
    class Boom:
        @property
        def alpha(self):
            raise RuntimeError("no")

    recorded = [("value", ("cfg", ("attr", "alpha")), (float, guards._key(0.5)), "cfg.alpha: float 0.5")]
    assert guards.compile_check(recorded)({"cfg": Boom()}) is False
    assert guards.check(recorded, {"cfg": Boom()})


def test_an_entry_with_very_many_guards_is_checked_without_generated_code():
    import jupyter_fuse as jf
    from jupyter_fuse import cache

    ns = {"np": np, "x": np.ones(3), "d": {f"k{i}": float(i) for i in range(cache.GENERATED_MAX + 10)}}
    src = "y = x * d['k3']"
    assert [jf.run_cell(src, ns, "numpy").cache for _ in range(2)] == ["miss", "hit"]
    (entry,) = next(iter(cache.PLAN_CACHE.cells.values()))
    assert cache.guard_function(entry) is None and "no generated function" in cache.PLAN_CACHE.describe(code=True)
    ns["d"]["k7"] = 0.5
    r = jf.run_cell(src, ns, "numpy")
    assert r.cache == "miss" and r.miss_reasons == ["d['k7']: value 7.0 -> 0.5"]


def test_constants_never_shadow_each_other_or_the_helpers():
    first, second = type("float32", (), {}), type("float32", (), {})  # one name, two classes
    helper = type("ndarray", (), {})
    recorded = [("type", ("a",), first, ""), ("type", ("b",), second, ""), ("type", ("c",), helper, ""),
                ("array", ("x",), (np.dtype("f8"), (2,), (8,), True, None), "")]
    holds = guards.compile_check(recorded)
    good = {"a": first(), "b": second(), "c": helper(), "x": np.ones(2)}
    assert holds(good) is True
    for name, wrong in [("a", second()), ("b", first()), ("c", np.ones(2)), ("x", np.ones(3))]:
        assert holds({**good, name: wrong}) is False, name
    assert "type(v0) is not T_float32" in holds.source and "T_float32_1" in holds.source


def test_type_names_that_are_not_ascii_identifiers_get_safe_constants():
    odd, ligature, plain = type("Vé²", (), {}), type("\ufb01", (), {}), type("fi", (), {})  # "ﬁ" reads as "fi"
    recorded = [("type", ("a",), odd, ""), ("type", ("b",), ligature, ""), ("type", ("c",), plain, "")]
    holds = guards.compile_check(recorded)
    good = {"a": odd(), "b": ligature(), "c": plain()}
    assert holds(good) is True and holds({**good, "b": plain()}) is False
    assert holds.source.isascii()
