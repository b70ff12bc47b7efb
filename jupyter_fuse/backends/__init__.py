"""Backends turn a Plan into results. Each one is a module with a ``Backend`` class.

A backend has a ``name``; ``fuses`` (False: plans are one kernel per op);
``supports(node)`` (None, or why this backend cannot put the node in a fused
kernel); and ``execute(plan, values, report)``, which computes every kernel of
the plan, stores the values of the kernel outputs in ``values``, and appends
one entry per launched kernel to ``report.kernel_list``.
"""

from __future__ import annotations

from typing import Any, Protocol

CHOICES = ("auto", "cpu", "numpy", "cupy")


class Backend(Protocol):
    name: str
    fuses: bool

    def supports(self, node: Any) -> str | None: ...

    def execute(self, plan: Any, values: dict, report: Any) -> None: ...


class BackendUnavailable(RuntimeError):
    """The backend asked for cannot run here; the message says what to use instead."""


def cuda_available() -> bool:
    try:
        import cupy  # noqa: F401

        return bool(cupy.is_available())
    except Exception:  # no cupy, no driver, no device: all mean "no"
        return False


_INSTANCES: dict[str, Any] = {}  # one cpu backend per process: its render and support caches outlive a cell


def forget_rendered() -> None:
    """Drop the kernels the process-wide backends rendered (``%fuse_cache --clear``): they are keyed
    by their nodes, which they keep alive (compiled code stays: it is keyed by source)."""
    for backend in _INSTANCES.values():
        forget = getattr(backend, "forget_rendered", None)
        if forget is not None:
            forget()


def get_backend(name: str, *, dry_run: bool = False, keep: bool = False, emulate: bool = False) -> Backend:
    """The backend called ``name``. ``dry_run``: the cupy backend's kernels are rendered and
    compiled (NVRTC, no GPU needed) but the cell computes with NumPy; ``emulate``: they also run,
    on the CPU (``cuda_emulate``: the host C++ compiler, no GPU needed); ``keep``: cupy results
    stay on the device as CuPy arrays. A fresh cupy backend per run: it holds the run's ledger."""
    if name not in CHOICES:
        raise ValueError(f"unknown backend {name!r}: choose one of {', '.join(CHOICES)}")
    if emulate:
        if name not in ("auto", "cupy") or dry_run:
            raise BackendUnavailable("--emulate runs the CUDA kernels of -b cupy on the CPU; it does not apply to "
                                     + ("--dry-run, which runs none" if dry_run else f"-b {name}"))
        from .cuda_emulate import EmulatedBackend, EmulationUnavailable

        try:
            return EmulatedBackend(keep=keep)
        except EmulationUnavailable as e:
            raise BackendUnavailable(str(e)) from None
    if dry_run:
        if name not in ("auto", "cupy"):
            raise BackendUnavailable(f"--dry-run compiles the CUDA kernels of -b cupy; it does not apply to -b {name}")
        from .cupy import DryRunBackend

        return DryRunBackend(keep=keep)
    if keep and name not in ("auto", "cupy"):
        raise BackendUnavailable(f"--keep leaves results on the GPU (-b cupy); -b {name} computes in host memory")
    if name == "auto":
        name = "cupy" if cuda_available() else "cpu"
    if name == "numpy":
        from .numpy import NumpyBackend

        return NumpyBackend()
    if name == "cpu":
        backend = _INSTANCES.get("cpu")  # (every run asks: no import on that path)
        if backend is None:
            try:
                from .cpu import CpuBackend
            except ImportError as e:
                raise BackendUnavailable(f"the cpu backend is not available ({e}); use -b numpy") from None
            backend = _INSTANCES["cpu"] = CpuBackend()
        return backend
    if not cuda_available():
        raise BackendUnavailable("-b cupy needs a usable CUDA device and none was found; use -b cpu (or --dry-run "
                                 "to compile the CUDA kernels without a GPU, --emulate to also run them on the CPU)")
    from .cupy import CupyBackend

    return CupyBackend(keep=keep)
