"""Run the generated CUDA on the CPU: the executor behind ``%%fuse -b cupy --emulate``.

The renderer's CUDA source is compiled unchanged by the host C++ compiler (``$CXX``, else
``g++``), after ``cuda_emulate.h``, the header that gives C++ CUDA's execution model:
``threadIdx``/``blockIdx``/``blockDim``/``gridDim``, ``__shared__`` memory per block, a real
``__syncthreads()`` barrier among the threads of a block (each CUDA thread is a fiber), the math
functions and intrinsics the renderer uses. A generated stub, compiled with ``-include
cuda_emulate.h`` (the header precompiled once: half of a kernel's compile time), exports each
``__global__`` entry::

    #include "kernel.cu"             // the renderer's source, byte for byte
    JFEMU_ENTRY(jf_part)             // jfemu_launch_jf_part(argv, grid, block, ...) and
    JFEMU_ENTRY(jf_final)            // jfemu_signature_jf_final(): its parameter types

:meth:`Module.launch` takes the argument list the cupy backend builds for a real launch (NumPy
arrays where a GPU run passes CuPy arrays, NumPy scalars as they are) and the same grid and block
sizes; it checks every argument against the kernel's declared parameter types (a mismatch is a
bug a GPU would not report, so it is an error here) and runs the grid on host memory.

Compiled modules are cached in memory by source and on disk (``$JUPYTER_FUSE_CACHE_DIR/emulate``,
else ``~/.cache/jupyter_fuse/emulate``), keyed by the source, the header, the flags and the
compiler's version; files are written atomically, so processes may share the cache.

A launch never hangs the notebook: threads waiting at a barrier that others returned without
reaching stop the launch with the barrier's line; so does the time limit (``TIMEOUT_S``,
``$JUPYTER_FUSE_EMULATE_TIMEOUT``) and an interrupt (Jupyter's button: ``KeyboardInterrupt``).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..fuse import Kernel
from .cuda_render import CudaRendered
from .cupy import DryRunBackend

HEADER = Path(__file__).with_name("cuda_emulate.h")
# -ffp-contract=off: no fused multiply-adds, so products round as NumPy rounds them (a GPU contracts
# by default: its last bits may differ from the emulator's). No fortified longjmp: fibers jump between
# stacks. -w: the log shows errors, not the warnings of generated code.
FLAGS = ("-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=0",
         "-ffp-contract=off", "-pthread", "-w")
TIMEOUT_S = 60.0
MESSAGE_BYTES = 1024
# typeid names (Itanium C++ ABI) of the C types the renderer declares
CODES = {np.dtype(np.bool_): "b", np.dtype(np.int8): "a", np.dtype(np.uint8): "h", np.dtype(np.int16): "s",
         np.dtype(np.uint16): "t", np.dtype(np.int32): "i", np.dtype(np.uint32): "j", np.dtype(np.int64): "x",
         np.dtype(np.uint64): "y", np.dtype(np.float32): "f", np.dtype(np.float64): "d"}
_STATUS = {1: "a __syncthreads() barrier was not reached by every thread", 2: "time limit", 4: "invalid launch"}


class EmulationUnavailable(RuntimeError):
    """No C++ compiler: the emulator cannot build kernels here."""


class EmulationError(RuntimeError):
    """An emulated launch stopped (a barrier not every thread reaches, the time limit, a bad argument
    list): the message names the kernel and says why."""


def compiler() -> str | None:
    """The host C++ compiler: ``$CXX`` if set, else ``g++``; None if it is not installed."""
    return shutil.which(os.environ.get("CXX") or "g++")


def require_compiler() -> str:
    cxx = compiler()
    if cxx is None:
        raise EmulationUnavailable(
            f"--emulate compiles the CUDA kernels with the host C++ compiler and {os.environ.get('CXX') or 'g++'} "
            "was not found: install g++ (e.g. `apt-get install g++`) or set $CXX; or use --dry-run (compile "
            "only) or -b cpu")
    return cxx


def cache_dir() -> Path:
    root = os.environ.get("JUPYTER_FUSE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "jupyter_fuse")
    return Path(root).resolve() / "emulate"


# -- compiling ----------------------------------------------------------------------------------

_LOCK = threading.Lock()  # one compile or launch at a time: the runtime's state is per module, global
_MODULES: dict[str, "Module"] = {}
_TOOLCHAIN: dict[str, Path] = {}  # compiler -> the directory of its precompiled header and modules


def _toolchain(cxx: str) -> Path:
    """The cache directory for this header, these flags and this compiler, with the header
    precompiled in it (if the compiler cannot, kernels include the plain header: slower, same code)."""
    if cxx in _TOOLCHAIN:
        return _TOOLCHAIN[cxx]
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60).stdout
    key = hashlib.sha256("\0".join([HEADER.read_text(), *FLAGS, cxx, version]).encode()).hexdigest()[:16]
    d = cache_dir() / key
    d.mkdir(parents=True, exist_ok=True)
    header = d / HEADER.name
    if not header.exists():
        _atomic_copy(HEADER, header)
    pch = d / (HEADER.name + ".gch")
    if not pch.exists():
        tmp = d / f"{pch.name}.{os.getpid()}.tmp"
        done = subprocess.run([cxx, *FLAGS, "-x", "c++-header", str(header), "-o", str(tmp)], capture_output=True,
                              timeout=300)
        if done.returncode == 0:
            os.replace(tmp, pch)
        else:
            tmp.unlink(missing_ok=True)
    _TOOLCHAIN[cxx] = d
    return d


def _atomic_copy(src: Path, dst: Path) -> None:
    tmp = dst.with_name(f"{dst.name}.{os.getpid()}.tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def stub(entries: list[str]) -> str:
    """The translation unit: the header, the kernel source unchanged, an export per entry."""
    return "\n".join(['#include "kernel.cu"', *(f"JFEMU_ENTRY({e})" for e in entries),
                      '#ifdef BLOCK', 'extern "C" JFEMU_EXPORT int jfemu_block() { return BLOCK; }', '#endif', ""])


def compile_source(source: str, entries: list[str]) -> tuple["Module | None", str, float]:
    """Compile ``source`` for the CPU: (module or None, the compiler's log, seconds spent compiling)."""
    hit = _MODULES.get(source)
    if hit is not None:
        return hit, "", 0.0
    cxx = require_compiler()
    with _LOCK:
        d = _toolchain(cxx)
        digest = hashlib.sha256((source + "\0" + ",".join(entries)).encode()).hexdigest()[:32]
        lib = d / f"k{digest}.so"
        t0 = time.perf_counter()
        log = ""
        if not lib.exists():
            with tempfile.TemporaryDirectory(dir=d) as tmp:
                (Path(tmp) / "kernel.cu").write_text(source)
                (Path(tmp) / "stub.cpp").write_text(stub(entries))
                out = Path(tmp) / "k.so"
                done = subprocess.run([cxx, *FLAGS, "-shared", "-Wl,-z,defs", "-include", str(d / HEADER.name),
                                       "stub.cpp", "-o", str(out)], cwd=tmp, capture_output=True, text=True,
                                      timeout=300, env=dict(os.environ, LC_ALL="C"))  # (an ASCII log)
                log = done.stderr.strip()
                if done.returncode != 0:
                    return None, log or f"{cxx} exited with status {done.returncode}", time.perf_counter() - t0
                os.replace(out, lib)
        module = _MODULES[source] = Module(lib, source, entries)
        return module, log, time.perf_counter() - t0


# -- launching ----------------------------------------------------------------------------------

class Module:
    """One compiled kernel module: its entries, their parameter types, launches."""

    def __init__(self, path: Path, source: str, entries: list[str]) -> None:
        self.lib = ctypes.CDLL(str(path))
        self.fibered = "__syncthreads" in source  # no barrier: threads run as plain calls
        self.block = self._block()
        self.params: dict[str, list[str]] = {}
        self._launch: dict[str, Any] = {}
        for e in entries:
            sig = getattr(self.lib, f"jfemu_signature_{e}")
            sig.restype = ctypes.c_char_p
            text = sig().decode()
            self.params[e] = text.split(",") if text else []
            fn = getattr(self.lib, f"jfemu_launch_{e}")
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_longlong, ctypes.c_int, ctypes.c_int,
                           ctypes.c_double, ctypes.c_char_p, ctypes.c_int]
            self._launch[e] = fn

    def _block(self) -> int | None:
        try:
            fn = self.lib.jfemu_block
        except AttributeError:
            return None
        fn.restype = ctypes.c_int
        return int(fn())

    def launch(self, entry: str, grid: int, block: int, args: list[Any], name: str = "kernel",
               timeout: float | None = None) -> float:
        """Run ``entry`` on ``grid`` blocks of ``block`` threads with ``args``; returns the seconds it took.
        ``name`` (the plan's kernel name) is what errors call it."""
        where = f"CUDA kernel {name} ({entry})"
        if self.block is not None and block != self.block:
            raise EmulationError(f"{where}: launched with {block} threads a block, compiled for BLOCK {self.block}")
        argv, keep = marshal(args, self.params[entry], where)
        message = ctypes.create_string_buffer(MESSAGE_BYTES)
        limit = float(os.environ.get("JUPYTER_FUSE_EMULATE_TIMEOUT") or TIMEOUT_S) if timeout is None else timeout
        with _LOCK:
            t0 = time.perf_counter()
            status = self._launch[entry](argv, int(grid), int(block), int(self.fibered), limit, message, MESSAGE_BYTES)
            elapsed = time.perf_counter() - t0
        del keep
        if status == 0:
            return elapsed
        if status == 3:
            raise KeyboardInterrupt(f"{where} was interrupted (emulated on the CPU)")
        detail = message.value.decode(errors="replace")
        if status == 2:
            detail = (f"stopped after {limit:g} s, the emulator's time limit (a kernel that never finishes, or one "
                      "too large to emulate; $JUPYTER_FUSE_EMULATE_TIMEOUT sets the limit)")
        raise EmulationError(f"{where}, emulated on the CPU with {grid} blocks of {block} threads: "
                             f"{_STATUS.get(status, 'error')}: {detail}")


def marshal(args: list[Any], params: list[str], where: str) -> tuple[Any, list[Any]]:
    """``void*`` per argument, each pointing at its value (an array: at its data pointer), after checking
    each against the parameter's C type as CuPy would pass it (NumPy scalars in their dtype, Python
    ints as int64, floats as double, bools as bool)."""
    if len(args) != len(params):
        raise EmulationError(f"{where}: {len(args)} arguments for its {len(params)} parameters")
    argv = (ctypes.c_void_p * max(1, len(args)))()
    keep: list[Any] = []
    for i, (a, p) in enumerate(zip(args, params)):
        if isinstance(a, np.ndarray):
            code = CODES.get(a.dtype)
            if not (p.startswith("P") and p.lstrip("P").lstrip("K") == code and len(p) <= 3):
                raise EmulationError(f"{where}: argument {i} is a {a.dtype} array, the kernel takes `{p}`")
            holder: Any = ctypes.c_void_p(a.ctypes.data)
            argv[i] = ctypes.addressof(holder)
        else:
            value = np.asarray(a, dtype=_python_scalar_dtype(a))
            if value.ndim or CODES.get(value.dtype) != p:
                raise EmulationError(f"{where}: argument {i} is {type(a).__name__} {a!r}, the kernel takes `{p}`")
            holder = value
            argv[i] = value.ctypes.data
        keep.append(holder)
    return argv, keep


def _python_scalar_dtype(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.dtype
    if isinstance(x, bool):
        return np.bool_
    if isinstance(x, int):
        return np.int64
    if isinstance(x, float):
        return np.float64
    return None


# -- the backend ---------------------------------------------------------------------------------

EMULATED = "CUDA, emulated on the CPU"  # what the panel calls these kernels
EMULATED_SMS = 132  # the device the grids are sized for (an H100/H200's multiprocessors, as the dry run)


class EmulatedBackend(DryRunBackend):
    """``-b cupy --emulate``: a GPU run without a GPU. Residency, the transfer ledger, ``--keep`` and
    replays are the real run's: device memory is host memory the kernels own (an input is copied in,
    a result copied out, each copy in the ledger). Each fused kernel is rendered as for the GPU,
    compiled by NVRTC (it is CUDA) and by the host compiler, and launched by the executor with the
    grid, block and argument list of a real launch; its results are the CUDA kernel's. Library ops
    and CuPy's own functions (matmul, sort, ...) compute with NumPy, as in the dry run. Timings are
    the emulator's, not a GPU's: the panel says so."""

    def __init__(self, keep: bool = False) -> None:
        require_compiler()
        super().__init__(keep)
        self._xp = np
        self.sms = EMULATED_SMS

    def _copy_h2d(self, host: Any) -> Any:
        dev = np.array(host, copy=True, order="K")  # the root's layout: views address it by byte offsets
        self._mark(dev)
        return dev

    def _copy_d2h(self, value: Any) -> Any:
        return np.array(value, copy=True, order="K")

    def _derivable(self, root: Any) -> bool:
        return bool(root.flags.c_contiguous)

    def _derive(self, host_root: Any, root: Any, value: Any) -> Any:
        offset = value.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return np.ndarray(value.shape, value.dtype, buffer=host_root, offset=offset, strides=value.strides)

    def _compile(self, kernel: Kernel, r: CudaRendered, report: Any) -> dict:
        entry = super()._compile(kernel, r, report)  # NVRTC: the source is CUDA a GPU takes
        if not entry["compiled"]:
            return entry
        module, log, seconds = compile_source(r.source, r.entries)
        report.times["compile"] += seconds
        entry.update(compile_time=entry["compile_time"] + seconds, archs=entry["archs"] + ["host"])
        if module is None:  # (the cell then runs this kernel on the cpu backend, saying so)
            name = Path(require_compiler()).name
            entry.update(compiled=False, log=log, failed_arch=f"the CPU ({name})", compiler=name)
        return entry

    def _run_fused(self, kernel: Kernel, r: CudaRendered, plan: Any, values: dict, report: Any, entry: dict) -> None:
        self._launch_fused(kernel, r, plan, values, report, entry)

    def _launch(self, kernel: Kernel, r: CudaRendered, cfg: dict, args: tuple) -> float:
        module = _MODULES[r.source]
        return sum(module.launch(name, grid, r.block, list(args), kernel.name)
                   for name, grid in zip(r.entries, cfg["grids"]) if grid)

    def _launched(self, e: dict, seconds: float) -> None:
        e.update(runs_on=EMULATED, emulation_time=seconds)


__all__ = ["EmulatedBackend", "EmulationError", "EmulationUnavailable", "Module", "compile_source", "compiler",
           "require_compiler", "marshal", "EMULATED", "TIMEOUT_S"]
