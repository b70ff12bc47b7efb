"""Random generators inside a cell: ``np.random.default_rng(...)`` and ``RandomState(...)`` objects.

A cell sees a :class:`LazyGenerator` for a generator it makes or reads by name. Its draws are
calls outside the trace (``lazynp.eager_call``) made on the real generator, so the values are
NumPy's own and the generator advances exactly as without ``%%fuse``. Under the plan cache each
draw is a step of the tape that names the generator by a :class:`Handle`: a replay makes the
draw again on the generator of *its* run (the one the replay's own ``default_rng(seed)`` made,
or the one now bound to the name the cell read), so replayed draws are fresh draws.
Finalize hands the user the real generator (``capture._real_numpy``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import lazynp

GENERATORS = (np.random.Generator, np.random.RandomState)
_REASON = "random draws run eagerly, so the generator advances exactly as without %%fuse"
_MUTATING = frozenset({"shuffle"})  # draws that write into their argument


class Handle:
    """Names one generator in a tape: a replay binds the generator of its own run to it."""

    __slots__ = ("label", "path")

    def __init__(self, label: str, path: tuple | None = None) -> None:
        self.label = label  # "np.random.default_rng(...)" or the name read
        self.path = path  # where a generator read from outside is found again (None: the cell made it)

    def __repr__(self) -> str:
        return f"<generator {self.label}>"


class LazyGenerator:
    """What the cell holds for a NumPy random generator: its draws are recorded calls."""

    __slots__ = ("_fuse_real", "_handle", "__weakref__")

    def __init__(self, real: Any, handle: Handle) -> None:
        self._fuse_real, self._handle = real, handle

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(rng, np.random.Generator) as without %%fuse
        return type(self._fuse_real)

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._fuse_real, name)  # AttributeError as NumPy's
        if name.startswith("_") or not callable(real):
            tape = lazynp.session().tape
            if tape is not None:  # `rng.bit_generator.state = ...`: not something a replay redoes
                tape.unreplayable(f"the cell reads {self._handle.label}.{name}: a replay does not redo it")
            return real
        label = f"{type(self._fuse_real).__name__}.{name}"

        def draw(*args: Any, **kwargs: Any) -> Any:
            return lazynp.eager_call(real, args, kwargs, label, _REASON, mutates=0 if name in _MUTATING else None,
                                     method=(self._handle, name))

        draw.__name__ = name
        return draw

    def __repr__(self) -> str:
        return repr(self._fuse_real)


def wrap(real: Any, path: tuple | None, label: str) -> LazyGenerator:
    """A generator the cell read (``path``) or made (``path`` None), once per generator per cell."""
    s = lazynp.session()
    got = s.generators.get(id(real))
    if got is None:
        got = s.generators[id(real)] = LazyGenerator(real, Handle(label, path))
        s.keepalive.append(real)
        if path is not None:  # (the user's: an abandoned run puts its state back, ``abandon.Watch.restore``)
            s.generator_states.append((real, state(real)))
    return got


def state(g: Any) -> Any:
    """A generator's state, as ``set_state`` puts it back."""
    return g.get_state() if isinstance(g, np.random.RandomState) else g.bit_generator.state


def set_state(g: Any, st: Any) -> None:
    if isinstance(g, np.random.RandomState):
        g.set_state(st)
    else:
        g.bit_generator.state = st


class _Factory:
    """``np.random.default_rng`` / ``np.random.RandomState`` inside a cell: the call is recorded (a
    replay makes a fresh generator from the same seed) and returns a :class:`LazyGenerator`.
    ``isinstance(g, np.random.RandomState)`` still answers as NumPy's class would."""

    def __init__(self, real: Any, label: str) -> None:
        self._real, self._label = real, label
        self.__name__ = getattr(real, "__name__", label)
        self.__doc__ = getattr(real, "__doc__", None)
        self._fuse_real = real

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if lazynp.active() is None:
            return self._real(*args, **kwargs)
        return lazynp.eager_call(self._real, args, kwargs, self._label, "", quiet=True)

    def __instancecheck__(self, x: Any) -> bool:
        return isinstance(x, self._real)  # (a LazyGenerator's __class__ is its generator's)

    def __subclasscheck__(self, c: type) -> bool:
        return issubclass(c, self._real)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __repr__(self) -> str:
        return repr(self._real)


OVERRIDES = {"default_rng": _Factory(np.random.default_rng, "np.random.default_rng"),
             "RandomState": _Factory(np.random.RandomState, "np.random.RandomState")}
