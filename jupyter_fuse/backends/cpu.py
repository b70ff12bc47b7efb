"""The CPU backend: fused kernels rendered as Python source and compiled by numba.

Rendering lives in ``cpu_render``; this module compiles, caches and launches.
Compiled kernels are cached twice: in memory by source text, and on disk by
numba itself (``cache=True``) next to the generated module file under the
user's cache directory (``$JUPYTER_FUSE_CACHE_DIR``, else
``~/.cache/jupyter_fuse``), so a restarted kernel does not recompile. The
module file name is a hash of its source and of the numba and jupyter_fuse
versions; it is written atomically, so two processes may share the cache. A
kernel numba cannot load or compile runs on NumPy instead, with the reason.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import math
import os
import re
import shutil
import sys
import threading
import time
import weakref
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

from .. import __version__, buffers, views
from ..program import GENERATORS
from . import compiler
from ..fuse import Kernel, reduce_axes
from ..ir import Node
from ..ops import family, free_const, render_key
from ..fperrors import errors_raise
from .cpu_render import (KERNEL_DTYPES, CannotRender, Rendered, outputs, param_value, rebind, render, source_params,
                         structure)
from .cpu_single import python_call, single_call
from .numpy import execute_plan, kernel_entry, numpy_launcher, resolve, run_on_numpy

RAISE = "np.errstate/np.seterr asks for errors to raise: NumPy's own loops check them, compiled kernels do not"
COMPILING = ("numba compiles it in the background (a kernel NumPy runs sooner than numba compiles it does not wait): NumPy ran it "
             "meanwhile")
# Threads only for kernels of this much work (elements times ops: a memory-bound kernel of 2 ops over
# 8M elements takes about 6 ms on one core). numba's threads wait for each other, and a parallel kernel
# launched while OpenBLAS's threads still spin after a matmul (for 0.1-0.3 s) waits for a core: 4-8 ms at
# any size on 2 cores, while threads save under half of a memory-bound kernel's time (bench/threads.py:
# 90,000 elements 0.05 ms either way alone, 3.8 ms parallel after a matmul; cosine_sim's row argmax)
PARALLEL_WORK = 1 << 24
PROGRESS_AFTER = 0.5  # seconds of compiling before we say so


def numba_imported() -> bool:
    return "numba" in sys.modules


def cache_dir() -> Path:
    root = os.environ.get("JUPYTER_FUSE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "jupyter_fuse")
    return Path(root) / "cpu"


def strict() -> bool:
    """In tests a kernel that fails to compile is an error, not a quiet NumPy fallback."""
    return bool(os.environ.get("JUPYTER_FUSE_STRICT"))


class CpuBackend:
    name = "cpu"
    fuses = True
    staged = True  # renders multi-pass reduce kernels (softmax, layer norm in one kernel)

    def __init__(self) -> None:
        self._supported: dict[tuple, str | None] = {}
        self._rendered: dict[tuple, tuple[Rendered, list[Node]]] = {}  # structure -> (rendered, its nodes)
        self._programs: dict[tuple, tuple[Any, dict]] = {}  # a block's source and kernels -> its function
        self._jobs: dict[tuple, Any] = {}  # (kernel source, parallel, argument types) -> its background compile (None: none)
        # (source, parallel, argument types) -> the compiled entry point: a launcher's first launch would ask
        # numba to type its arguments, and a traced loop makes a launcher per kernel per chunk
        self._entries: dict[tuple, Any] = {}

    @property
    def _numba(self) -> Any:
        """numba, imported where first needed (0.4 s): a first run whose small kernels all compile in the
        background never waits for it."""
        return _import_numba()

    def _parallel(self, work: int) -> bool:
        """Threads for a kernel of this much work (``PARALLEL_WORK``); numba is asked for its threads only
        then (importing it costs a first run 0.4 s)."""
        return work >= PARALLEL_WORK and self._numba.get_num_threads() > 1

    # -- what can be fused -------------------------------------------------------------
    def supports(self, node: Node) -> str | None:
        # asked for every op a graph holds: the answer is cached on what decides it (the key holds every dtype)
        key = (node.op, source_params(node), node.dtype, node.shape == (),
               *[(a.dtype, type(a.params[1])) if a.op == "const" else a.dtype for a in node.args], *render_key(node))
        try:
            return self._supported[key]
        except KeyError:
            self._supported[key] = reason = self._support_reason(node)
            return reason

    def _support_reason(self, node: Node) -> str | None:
        dts = [a.dtype for a in node.args if a.dtype is not None] + [node.dtype]
        bad = next((d for d in dts if d not in KERNEL_DTYPES), None)
        if bad is not None:
            return f"`{node.op}` on {bad} runs as NumPy (the cpu backend compiles bool, ints, float32/64 and complex64/128)"
        if family(node.op) not in ("elementwise", "source", "reduce"):
            return None  # the partitioner decides about library ops
        return _render_check(node)

    # -- running a plan ----------------------------------------------------------------
    def execute(self, plan: Any, values: dict, report: Any) -> None:
        self.prepare(plan)(values, report)

    def prepare(self, plan: Any) -> Callable[[dict, Any], None]:
        """A launcher for this plan: rendering, parameters and (after the first launch) the
        compiled entry point are fixed once, so a replay of the plan only binds arrays and runs."""
        launchers = {id(k): self._launcher(k, plan) for k in plan.kernels}

        def run(values: dict, report: Any) -> None:
            if errors_raise():  # compiled kernels set no FloatingPointError: NumPy's own loops do
                execute_plan(plan, values, report, lambda kernel: run_on_numpy(kernel, values, report, RAISE, plan.inplace))
            else:
                execute_plan(plan, values, report, lambda kernel: launchers[id(kernel)](values, report))
        return run

    def _launcher(self, kernel: Kernel, plan: Any) -> Callable[[dict, Any], None]:
        if kernel.kind == "single":
            return numpy_launcher(kernel, kernel.reason, plan.inplace)
        try:
            rendered = self._render(kernel)
        except CannotRender as e:  # the partitioner asked supports(); this is a bug if it happens
            if strict():
                raise
            return lambda values, report: run_on_numpy(kernel, values, report, f"could not render: {e}", plan.inplace)
        work = _work(kernel)
        parallel = self._parallel(work)
        extra = [self._numba.get_num_threads() if parallel else 1] if rendered.needs_threads else []
        compiled: list[Any] = []  # the entry point, once known
        job: list[Any] = []  # its compile in the background (None: none needed), once asked
        read_bytes = sum(n.nbytes for n in dict.fromkeys(n for n, _ in rendered.reads))  # views: what they see
        entry: dict = {}  # the report entry's fixed part, made once (replays launch the same kernel often)
        binder: list[Any] = []  # made at the first launch that binds (a first run's small kernels run as NumPy)
        meanwhile = numpy_launcher(kernel, COMPILING, plan.inplace, rendered.source)  # NumPy runs it while numba compiles

        def launch(values: dict, report: Any) -> None:
            if job and job[0] is not None and not job[0].done.is_set():
                report._meanwhile = True
                meanwhile(values, report)  # (still compiling: no arguments to bind)
                return
            if not binder:
                binder.append(_binder(kernel, rendered, plan))
            args, outs, dest = binder[0](values)
            args += extra
            compile_time, how = 0.0, "memory"
            if not compiled:
                if not job and compiler.meanwhile(work, len(kernel.nodes)) and compiler.background():
                    # asked once per source and argument types (a plan launches one source often; kernels
                    # of one source may read other dtypes: a copy of ints and one of complex values)
                    key = (rendered.source, parallel, _types(args))
                    if key not in self._jobs:
                        self._jobs[key] = self._compiling(rendered, parallel, args)
                    job.append(self._jobs[key])
                    if job[0] is not None and not job[0].done.is_set():
                        report._meanwhile = True
                        meanwhile(values, report)
                        return
                try:
                    fn, compile_time, how = self._compiled(kernel, rendered, parallel, args)
                except Exception as e:  # numba failed on our source: never lose the cell over it
                    if strict():
                        raise
                    run_on_numpy(kernel, values, report, f"numba could not compile it: {type(e).__name__}: {e}", plan.inplace)
                    return
                compiled.append(fn)
                report.times["compile"] += compile_time
            t0 = time.perf_counter()
            compiled[0](*args)
            elapsed = time.perf_counter() - t0
            for node, arr in zip(rendered.outputs, outs):
                values[node] = arr
            if dest is not None:
                values[dest[0]] = dest[1]
            if not entry:
                written = sum(a.nbytes for a in outs) + (dest[2] if dest else 0)
                entry.update(kernel_entry(kernel, 0.0, read_bytes, rendered.source, written=written, parallel=parallel))
            entry["name"] = kernel.name  # (a plan shared between cells is named in each cell anew)
            report.launched(entry, elapsed, compile_time=compile_time, cache=how)

        return launch

    # -- replays compiled as one program (backends/cpu_program.py) ---------------------
    def call_spec(self, kernel: Kernel, plan: Any) -> "CallSpec | None":
        """How a program calls this kernel (the launcher's arguments, as data), or None: it cannot
        be called from compiled code (a NumPy kernel, a strided storage read as an array)."""
        if kernel.kind == "single":  # NumPy's op, called through numba's object mode (``cpu_single``)
            got = single_call(kernel)
            if got is None:
                return None
            fn, args = got
            read_bytes = sum(n.nbytes for n in dict.fromkeys(a[1] for a in args if a[0] == "read"))
            return CallSpec(fn, args, kernel_entry(kernel, 0.0, read_bytes, None, reason=kernel.reason))
        try:
            rendered = self._render(kernel)
        except CannotRender:
            return None
        work = _work(kernel)
        parallel = self._parallel(work)
        module = _load(rendered.source)
        args: list[tuple] = [("const", int(d)) for d in kernel.shape]
        # (with the node and dtype: a program passes each step's own value of a float constant, ``Instr``)
        args += [("param", _plain(param_value(node, dtype)), node, dtype) for node, dtype in rendered.params]
        for (node, _), flat in zip(rendered.reads, rendered.flat):
            if flat is None:
                return None
            args.append(("read", node.storage(), tuple([flat[0]] + [flat[1][d] for d in flat[2]])))
        args += [("out", n) for n in rendered.outputs]
        if kernel.kind == "scatter":
            scatter = next(n for n in kernel.nodes if n.op == "setitem")
            if scatter.layout is not None:  # (a destination kept in a non-C order: launched alone)
                return None
            args.append(("dst", scatter.args[0], scatter, scatter in plan.inplace,
                         tuple([rendered.dst[0]] + [rendered.dst[1][d] for d in rendered.dst[2]])))
        if rendered.needs_threads:
            args.append(("const", self._numba.get_num_threads() if parallel else 1))
        read_bytes = sum(n.nbytes for n in dict.fromkeys(n for n, _ in rendered.reads))
        written = sum(n.nbytes for n in rendered.outputs) + (
            math.prod(scatter.params[1]) * scatter.dtype.itemsize if kernel.kind == "scatter" else 0)
        entry = kernel_entry(kernel, 0.0, read_bytes, rendered.source, written=written, parallel=parallel)
        return CallSpec(module.kernel_par if parallel else module.kernel_seq, args, entry)

    def python_call_spec(self, key: tuple, make: Callable[[], Callable[..., None]], nodes: list[Node], out: Node,
                         entry: dict, what: tuple | None = None) -> "CallSpec | None":
        """How a program calls a Python function in object mode (``cpu_single.python_call``), or natively
        where ``cpu_index`` makes that call (``what``: ``program._pure_call``'s), or None."""
        got = python_call(key, make, nodes, out, what)
        return None if got is None else CallSpec(got[0], got[1], entry)

    def compile_program(self, blk: Any) -> tuple[str, Any]:
        """A replay's block (``program.Block``) as one numba function: (its source, the function)."""
        from .cpu_program import compile_source, emit

        source, kernels = emit(blk)
        key = (_COMMENT.sub("", source), tuple(id(fn) for fn in kernels.values()))  # (comments: launch names)
        got = self._programs.get(key)
        if got is None:  # (a loop's blocks between syncs are one source: numba compiles it once)
            got = self._programs[key] = (compile_source(source, kernels), kernels)  # (kernels: ids stay theirs)
            if len(self._programs) > 256:  # a bound: forget the oldest
                with contextlib.suppress(RuntimeError, StopIteration, KeyError):
                    self._programs.pop(next(iter(self._programs)))
        return source, got[0]

    def forget_rendered(self) -> None:
        """Drop the rendered kernels (keyed by their nodes, which they keep alive); compiled code stays."""
        self._rendered.clear()

    def compile_block(self, blk: Any) -> None:
        """Compile a block's program now (a background job: ``compiler``), not at its first call. Its
        argument types are known: the inputs as 1-D C-contiguous arrays, as ``program.run_block`` passes them."""
        nb = self._numba
        sig = tuple(nb.types.Array(nb.from_dtype(node.dtype), 1, "C") for _, node in blk.inputs)
        blk.fn.compile(sig + tuple(nb.typeof(p) for p in blk.params))
        _warm(blk)

    def _render(self, kernel: Kernel) -> Rendered:
        """Rendering is pure: a kernel of the same structure (``structure``) renders the same source."""
        key, order = structure(kernel)
        if key is None:
            return render(kernel)
        got = self._rendered.get(key)
        if got is None:
            got = self._rendered[key] = (render(kernel), order)
            if len(self._rendered) > 4096:  # a bound: forget the oldest
                with contextlib.suppress(RuntimeError, StopIteration, KeyError):  # (a background build renders too)
                    self._rendered.pop(next(iter(self._rendered)))
        return rebind(got[0], got[1], order)

    # -- compiling ---------------------------------------------------------------------
    def _compiling(self, rendered: Rendered, parallel: bool, args: list) -> Any:
        """The background job compiling this kernel (``compiler``), or None where none is needed: it was
        compiled before (in memory, or on disk, where loading it is quick once numba is imported).
        Asks nothing of numba: the job imports it (0.4 s, then loads the kernel from disk: a first run
        of small kernels does not wait for that)."""
        source, kinds = rendered.source, _kinds(args)
        if numba_imported() and _marker(source, parallel, kinds).exists():
            return None
        if "numba" in sys.modules and source in _MODULES:
            disp = _MODULES[source].kernel_par if parallel else _MODULES[source].kernel_seq
            if tuple(self._numba.typeof(a) for a in args) in disp.overloads:
                return None
        return compiler.submit((source, parallel, kinds), lambda: _compile(self._numba, source, parallel, kinds))

    def _compiled(self, kernel: Kernel, rendered: Rendered, parallel: bool, args: list) -> tuple[Any, float, str]:
        key = (rendered.source, parallel, _types(args))
        got = self._entries.get(key)
        if got is not None:
            return got, 0.0, "memory"
        t0 = time.perf_counter()
        module = _load(rendered.source)
        disp = module.kernel_par if parallel else module.kernel_seq
        sig = tuple(self._numba.typeof(a) for a in args)
        if sig in disp.overloads:
            self._entries[key] = disp.overloads[sig].entry_point
            return self._entries[key], 0.0, "memory"
        hits = sum(disp.stats.cache_hits.values())
        timer = threading.Timer(PROGRESS_AFTER, _progress, (kernel, parallel))
        timer.start()
        try:
            try:
                disp.compile(sig)
            except Exception:
                # a corrupt or stale disk cache entry: drop it and compile afresh once
                shutil.rmtree(Path(module.__file__).parent / "__pycache__", ignore_errors=True)
                module = _load(rendered.source, reload=True)
                disp = module.kernel_par if parallel else module.kernel_seq
                disp.compile(sig)
        finally:
            timer.cancel()
        how = "disk" if sum(disp.stats.cache_hits.values()) > hits else "compiled"
        _marker(rendered.source, parallel, _kinds(args)).touch()
        self._entries[key] = disp.overloads[sig].entry_point
        return self._entries[key], time.perf_counter() - t0, how


_COMMENT = re.compile(r"  # .*$", re.M)


class CallSpec:
    """One kernel as a compiled program calls it: its dispatcher, and its arguments in order —
    ("const", int), ("param", typed scalar, its node, its dtype), ("read", storage node, flat offset and strides),
    ("out", node), ("dst", destination storage node, the setitem node, in place?, offset and
    strides), with ``entry`` the report's entry for a launch.

    ``key``: two calls are the same call when all but their arrays, where they start (``offsets``: each
    read's and the destination's first element, in order) and their integers and scalars' values are: a
    loop's iterations read the same slice each step, or the next column, and a coefficient that changes
    every step is the loop's table (``program._tables``). So are the sizes and strides that change (a
    sieve's ``s[2 * d::d] += d``, an elimination's ``A[k + 1:, k + 1:] -= ...``): one compiled kernel, the
    same function of its arguments, serves them all. So are an output's sizes (a backward induction's
    ``V[:i + 1]``, a shorter array each step): the program allocates it from them (``program.Instr.params``)."""

    __slots__ = ("fn", "args", "entry", "key", "offsets")

    def __init__(self, fn: Any, args: list[tuple], entry: dict) -> None:
        self.fn, self.args, self.entry = fn, args, entry
        self.key = (id(fn),) + tuple(("const",) if a[0] == "const" else (a[0], type(a[1])) if a[0] == "param"
                                     else (a[0], len(a[2])) if a[0] == "read" else (a[0], a[1].ndim, a[1].dtype)
                                     if a[0] == "out" else (a[0], a[2].dtype, a[2].shape, a[3], len(a[4]))
                                     for a in args)
        self.offsets = tuple(a[2][0] if a[0] == "read" else a[4][0] for a in args if a[0] in ("read", "dst"))

    def params_for(self, to: dict) -> tuple | None:
        """The call's scalar arguments on a graph whose nodes are ``to[n]`` of its plan's: a float
        constant's value is that graph's (``ops.const_key``); None where they are the spec's own."""
        out, moved = [], False
        for a in self.args:
            if a[0] == "param":
                n = to.get(a[2]) if len(a) > 2 and free_const(a[2]) else None
                if n is not None and n is not a[2]:
                    out.append(_plain(param_value(n, a[3])))
                    moved = True
                else:
                    out.append(a[1])
        return tuple(out) if moved else None


_MODULES: dict[str, ModuleType] = {}
_LOCK = threading.Lock()


def _load(source: str, reload: bool = False) -> ModuleType:
    """The module for a kernel source, from memory or from the cache directory."""
    with _LOCK:
        if not reload and source in _MODULES:
            return _MODULES[source]
        digest = _digest(source)
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"k_{digest}.py"
        if not path.exists() or path.read_text() != source:
            tmp = folder / f".k_{digest}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(source)
            os.replace(tmp, path)  # atomic: a reader sees the old file or the whole new one
        name = f"jupyter_fuse_kernel_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's disk cache finds the kernel's module again by name
        spec.loader.exec_module(module)
        _MODULES[source] = module
        return module


WARM_TRAFFIC = 1 << 26  # bytes: a program whose launches may move more than this is not warmed
_WARMED: "weakref.WeakSet[Any]" = weakref.WeakSet()  # programs (numba functions) called once already


def _warm(blk: Any) -> None:
    """Call a block's compiled program once on zeros, in the background, where it was compiled: numba's
    first call of a function still costs milliseconds after its compile (its object-mode calls' set-up),
    which the first compiled replay paid. The program writes only arrays it allocates or is given (zeros
    here); a call that raises (a NumPy library op on zeros: a singular matrix) leaves the first call to
    the replay. Blocks of one structure share one function: it is called once."""
    if blk.fn in _WARMED:
        blk.called = True
    if blk.called:
        return
    if sum((e.get("bytes_read", 0) + e.get("bytes_written", 0)) * n for e, n in blk.launches) > WARM_TRAFFIC:
        return
    args = [np.zeros(blk.vars[v][1], blk.vars[v][0]) for v, _ in blk.inputs]
    for h in blk.handles:  # the draws a block makes call a generator of the cell's: here, one of our own
        GENERATORS[h] = np.random.default_rng(0)  # (the user's is not touched: nothing advances it)
    try:
        with np.errstate(all="ignore"):
            blk.fn(*args, *blk.params)
    except Exception:  # noqa: BLE001 - the replay's first call compiles nothing more, it only costs more
        return
    finally:
        for h in blk.handles:
            GENERATORS.pop(h, None)
    blk.called = True
    _WARMED.add(blk.fn)


def _work(kernel: Kernel) -> int:
    """Elements times ops: what decides threads (``PARALLEL_WORK``) and a compile in sight (``compiler.meanwhile``)."""
    return math.prod(kernel.shape) * len(kernel.nodes)


_PLAIN = {np.dtype(np.float64): float, np.dtype(np.int64): int, np.dtype(np.bool_): bool,
          np.dtype(np.complex128): complex}


def _param_cast(dtype: np.dtype) -> Callable[[Any], Any]:
    """A float constant's value as the kernel's scalar argument of ``dtype`` (as ``param_value`` casts it,
    in a fraction of its time: this runs at each launch)."""
    if dtype == np.float64:
        return float
    if dtype == np.complex128:  # (every value a kernel takes converts exactly: NumPy's cast rounds as complex() does)
        return complex
    if dtype.kind == "f":
        return dtype.type

    def cast(v: Any) -> Any:
        with np.errstate(all="ignore"):
            return _plain(np.asarray(v).astype(dtype)[()])
    return cast


def _plain(value: Any) -> Any:
    """A scalar argument as the Python float, int, bool or complex of the same value where numba types that as it
    types the NumPy scalar (float64, int64, boolean, complex128): numba unboxes it in 25 ns, a NumPy scalar in 60 ns,
    and a kernel of 256 ops may take 256 coefficients (16 us a launch, measured)."""
    to = _PLAIN.get(getattr(value, "dtype", None))
    return to(value) if to is not None else value


def _kinds(args: list) -> tuple:
    """The argument types numba will see, told without numba: arrays by dtype, dimensions, layout and
    writeability, scalars as they are (``_compile`` types them)."""
    return tuple(_array_kind(a) if isinstance(a, np.ndarray) else ("value", type(a).__name__, a) for a in args)


def _types(args: list) -> tuple:
    """``_kinds`` without the scalars' values, which numba types by their type alone (an int by its range).
    Asked at each launcher's first compiled launch: a replay after a first run that ran its kernels as NumPy
    (still compiling) asks it of every launcher (thousands, where a loop of element updates is unrolled)."""
    return tuple(_array_kind(a) if isinstance(a, np.ndarray) else ("value", "int", -2 ** 63 <= a < 2 ** 63)
                 if type(a) is int else ("value", type(a).__name__) for a in args)


def _array_kind(a: np.ndarray) -> tuple:
    flags = a.flags  # (a new object at each access)
    return ("array", a.dtype.str, a.ndim, "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A",
            flags.writeable)


def _marker(source: str, parallel: bool, kinds: tuple) -> Path:
    """A file saying numba's disk cache holds this kernel for these argument types (loading it is quick)."""
    types = str([k[:2] if k[0] == "value" else k for k in kinds])
    digest = hashlib.sha256(types.encode()).hexdigest()[:16]
    return cache_dir() / f"k_{_digest(source)}.{'par' if parallel else 'seq'}.{digest}.ok"


def _compile(numba: Any, source: str, parallel: bool, kinds: tuple) -> None:
    """A background job (``compiler``): numba compiles the kernel (into its disk cache too)."""
    t = numba.types
    sig = tuple(t.Array(numba.from_dtype(np.dtype(k[1])), k[2], k[3], readonly=not k[4]) if k[0] == "array"
                else numba.typeof(k[2]) for k in kinds)
    module = _load(source)
    (module.kernel_par if parallel else module.kernel_seq).compile(sig)
    _marker(source, parallel, kinds).touch()


@functools.lru_cache(maxsize=None)
def _import_numba() -> Any:
    import numba

    numba.typeof(np.zeros(1))  # (its first typeof of an array imports numpy.ma: 40 ms, here, where
    return numba  # the background job imports numba, not at a replay's first launch)


@functools.lru_cache(maxsize=None)
def _numba_version() -> str:
    """Read from the name of numba's dist-info beside its package: not `import numba` (0.4 s), nor
    importlib.metadata (15 ms of imports, paid by a first run)."""
    spec = importlib.util.find_spec("numba")
    if spec is not None and spec.origin:
        site = Path(spec.origin).parent.parent
        found = [p.name[len("numba-"):-len(".dist-info")] for p in site.glob("numba-*.dist-info")]
        if len(found) == 1:
            return found[0]
    from importlib import metadata

    return metadata.version("numba")


def _digest(source: str) -> str:
    """A kernel module's name: its source, and the versions that compiled it."""
    return hashlib.sha256(f"{__version__}\n{_numba_version()}\n{np.__version__}\n{source}".encode()).hexdigest()[:24]


def _progress(kernel: Kernel, parallel: bool) -> None:
    from ..progress import say  # a status line under the cell in a notebook, stderr elsewhere

    say(f"compiling {kernel.name} ({kernel.kind}, {len(kernel.nodes)} ops{', parallel' if parallel else ''}) "
        "with numba...")


def _binder(kernel: Kernel, r: Rendered, plan: Any) -> Callable[[dict], tuple[list, list, tuple | None]]:
    """The kernel's arguments, in the order ``render`` declared them. All but the arrays and the float
    constants is fixed here, once per launcher, so that a launch (a replay's above all) only looks its
    arrays up, and its float constants: a plan serves every graph of its structure, whatever their
    values (``ops.const_key``: a coefficient computed each step of a loop)."""
    head = list(kernel.shape) + [_plain(param_value(node, dtype)) for node, dtype in r.params]
    # (a value missing from ``values``: a plan run on its own graph's values, whose constants are its own)
    floats = [(len(kernel.shape) + i, node, head[len(kernel.shape) + i], _param_cast(dtype))
              for i, (node, dtype) in enumerate(r.params) if free_const(node)]
    f64 = [f[:3] for f in floats if f[3] is float]  # (most: a Python float is passed as it is)
    other = [f for f in floats if f[3] is not float]
    # f64 arguments in one run of positions (the common case: a loop's coefficients) are looked up in one
    # pass of C (map), and written as one slice: a kernel of 250 coefficients binds in a few microseconds
    run = slice(f64[0][0], f64[-1][0] + 1) if f64 and [f[0] for f in f64] == list(
        range(f64[0][0], f64[-1][0] + 1)) else None
    run_nodes, run_owns = [f[1] for f in f64], [f[2] for f in f64]
    reads: list[tuple[Node, tuple, list | None]] = []
    for (node, shape), flat in zip(r.reads, r.flat):
        if flat is not None:  # the storage's memory as one flat array, then the read's offset and strides
            reads.append((node.storage(), shape, [flat[0]] + [flat[1][d] for d in flat[2]]))
        else:
            reads.append((node, shape, None))
    out_types = [(n.shape, n.dtype) for n in r.outputs]
    scatter = next(n for n in kernel.nodes if n.op == "setitem") if kernel.kind == "scatter" else None
    dst: list[int] = []
    region = 0
    if scatter is not None:
        dst = [r.dst[0]] + [r.dst[1][d] for d in r.dst[2]]
        region = math.prod(scatter.params[1]) * scatter.dtype.itemsize

    def bind(values: dict) -> tuple[list, list, tuple | None]:
        args = list(head)
        if run is not None:
            args[run] = [v if type(v) is float else float(v) for v in map(values.get, run_nodes, run_owns)]
        else:
            for i, node, own in f64:
                v = values.get(node, own)
                args[i] = v if type(v) is float else float(v)
        for i, node, own, cast in other:
            args[i] = cast(values[node]) if node in values else own
        for node, shape, flat in reads:
            arr = resolve(node, values)
            if flat is not None:
                args.append(arr if arr.ndim == 1 else arr.ravel(order="K"))  # contiguous: a view
                args += flat
            else:
                if arr.shape != shape or not shape:  # (broadcast_to costs microseconds: only when needed)
                    arr = np.broadcast_to(arr, shape) if shape else np.asarray(arr).reshape(1)
                args.append(arr)
        outs = [buffers.empty(shape, dtype) for shape, dtype in out_types]  # owners of their memory
        args += [o if o.ndim else o.reshape(1) for o in outs]  # the kernel writes a 0-d result at [0]
        dest = None
        if scatter is not None:  # written through its storage as one flat array, in its memory order (render's dst)
            storage = np.asarray(resolve(scatter.args[0], values))
            storage = storage if scatter in plan.inplace else storage.copy(order="C" if scatter.layout is None else "K")
            args.append(storage.reshape(-1) if scatter.layout is None else storage.ravel(order="K"))  # (a view)
            args += dst
            dest = (scatter, storage, region)
        return args, outs, dest

    return bind


def _render_check(node: Node) -> str | None:
    """None if a kernel holding just this node renders; else why not."""
    kind = "reduce" if family(node.op) == "reduce" else "scatter" if node.op == "setitem" else "ew"
    shape = node.args[0].shape if kind == "reduce" else node.params[1] if kind == "scatter" else node.shape
    axes = reduce_axes(node) if kind == "reduce" else ()
    k = Kernel("check", kind, shape, [node], axes=axes, phase={node: "red" if kind == "reduce" else "pro"},
               outputs=[node])
    try:
        render(k)
    except CannotRender as e:
        return f"{e}: it runs as NumPy"
    return None


__all__ = ["CpuBackend", "cache_dir", "outputs"]
