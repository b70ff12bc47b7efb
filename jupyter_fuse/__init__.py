"""jupyter_fuse: see kernel fusion happen in a notebook.

``%load_ext jupyter_fuse``, then ``%%fuse`` on a cell. Scripts and tests use
:func:`run_cell`. Importing this package imports nothing heavy.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["run_cell", "Report", "wait_for_compiles", "load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    """``run_cell`` (run a cell's source lazily against a namespace; returns its Report) and
    ``Report``, imported on first use; kept here after that, so a run costs no extra call.
    ``wait_for_compiles(timeout=None)``: block until numba's background compiles are done (a script
    timing replays; in a notebook they run while the user reads)."""
    if name == "run_cell":
        from .runner import run_cell as value
    elif name == "wait_for_compiles":
        from .backends.compiler import wait as value
    elif name == "Report":
        from .report import Report as value
    else:
        raise AttributeError(name)
    globals()[name] = value
    return value


def load_ipython_extension(ipython: Any) -> None:
    from .magic import FuseMagics

    ipython.register_magics(FuseMagics)


def unload_ipython_extension(ipython: Any) -> None:
    from .magic import FuseMagics

    magics = ipython.magics_manager.magics
    for kind in ("cell", "line"):
        for name in list(magics[kind]):
            owner = getattr(magics[kind][name], "__self__", None)
            if isinstance(owner, FuseMagics):
                del magics[kind][name]
    ipython.magics_manager.registry.pop("FuseMagics", None)
