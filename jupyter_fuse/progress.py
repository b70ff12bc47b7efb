"""Progress of a slow step (numba compiling a kernel), told where the user is looking.

A backend calls :func:`say`. In a notebook the magic installs a sink that shows
the message as a status line under the cell, emptied when the panel appears, so
nothing is left in the saved notebook and stderr stays for real problems. With
no sink (terminal IPython, scripts) the message goes to stderr as before.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_sink: Callable[[str], None] | None = None


def say(message: str) -> None:
    sink = _sink
    if sink is None:
        print(f"jupyter_fuse: {message}", file=sys.stderr, flush=True)
    else:
        sink(message)


@contextmanager
def shown_by(sink: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, progress goes to ``sink`` (called from any thread)."""
    global _sink
    previous, _sink = _sink, sink
    try:
        yield
    finally:
        _sink = previous
