"""The ``%%fuse`` cell magic and its line-magic companions. Their docstrings are the ``?`` help."""

from __future__ import annotations

import sys
import time
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from . import fmt
from .backends import CHOICES, BackendUnavailable
from .report import LOAD_PHASE
from .runner import KernelCountError, run_cell

# Modules whose first import is a cost the user should see ("first use: loading numba, 8 s").
HEAVY_MODULES = ("numba", "llvmlite", "cupy", "cupy_backends", "numexpr", "scipy")


class ExpectKernelsError(KernelCountError):
    """``--expect-kernels N`` was broken. IPython shows it as one line (``_render_traceback_``): the
    panel above it shows the cuts, and no frame of ours is of any use to the user."""

    def _render_traceback_(self) -> list[str]:
        return [f"KernelCountError: {self}"]


@magics_class
class FuseMagics(Magics):
    """Magics of jupyter_fuse."""

    @magic_arguments()
    @argument("-b", "--backend", default="auto",
              help="where kernels run: auto (the default: cupy with a CUDA device, else cpu); cpu (numba, "
                   "fused and compiled); cupy (CUDA); numpy (the reference: one plain NumPy call per op, "
                   "never fused)")
    @argument("-o", dest="output", metavar="NAME", default=None, help="store the Report in the variable NAME")
    @argument("-q", "--quiet", action="store_true",
              help="no panel and no summary (the run still goes to %%fuse_dashboard; a --compare mismatch "
                   "is still printed)")
    @argument("--expect-kernels", type=int, metavar="N", default=None,
              help="fail if the cell launched more than N kernels (the panel still shows where it was cut)")
    @argument("--no-fuse", action="store_true", help="one kernel per op on the same backend")
    @argument("--no-cache", action="store_true",
              help="trace the cell even if its plan is cached, and do not cache this run")
    @argument("--no-compile-plan", action="store_true",
              help="replay kernel by kernel, as the trace launched them, not as one compiled program "
                   "(for comparison and debugging)")
    @argument("--dry-run", action="store_true",
              help="with -b cupy: compile (NVRTC) every CUDA kernel without a GPU and show the transfers a real "
                   "run would make; the values and the times are NumPy's on the host")
    @argument("--emulate", action="store_true",
              help="with -b cupy: run every CUDA kernel on the CPU (compiled by the host C++ compiler, launched "
                   "with the GPU's grid), with a real run's transfers; timings are the emulator's")
    @argument("--keep", action="store_true",
              help="with -b cupy: leave results on the GPU as CuPy arrays (a later cell reading them "
                   "transfers nothing)")
    @argument("--compare", action="store_true",
              help="also run the cell eagerly on NumPy, check that what the cell wrote agrees (dtypes too), "
                   "and show both side by side")
    @cell_magic
    def fuse(self, line: str, cell: str) -> Any:
        """Run the cell's NumPy code lazily, fused into few compiled kernels.

        Array operations in the cell build a graph instead of running one by
        one; a value Python needs (print, if, float) is computed on the spot,
        and everything still live at the end is computed together. The
        namespace ends up exactly as plain NumPy would leave it.

        Example (the first run compiles; a re-run with the same inputs replays):

            %%fuse
            y = np.sin(x) ** 2 + np.cos(x) ** 2

            fuse[cpu]: 5 ops -> 1 kernel · first run: plan recorded for replay · guard 90.0 µs ·
              trace 1.20 ms · plan 310 µs · compile 412 ms · run 2.10 ms · total 416 ms
              (kernels 0.4%, compile 99%, overhead 0.6%)

        Under the cell a panel shows the kernels (their generated source, bytes
        and bandwidth), the fusion graph with every cut and its reason, where
        the time went, transfers and the plan cache's guards; its buttons save
        it as JSON or as an HTML page. `-b numpy` is the reference to compare
        against: it runs one NumPy call per op (5 ops -> 5 kernels), the cpu
        backend fuses them into one numba kernel.

        Related: %fuse_dashboard (every %%fuse run of the session, live),
        %fuse_cache (the plan cache: what a re-run checks before replaying).
        """
        __tracebackhide__ = True  # IPython shows the user's frames, not ours
        args = parse_argstring(self.fuse, line)
        if args.backend not in CHOICES:
            raise UsageError(f"unknown backend {args.backend!r}: choose one of {', '.join(CHOICES)}")
        ns = self.shell.user_ns
        number = cell_number(self.shell)
        # the %%fuse line is line 1 of the cell: keep it (blank), so every line number we report,
        # tracebacks included, is the one the editor shows
        source = "\n" + cell
        opts: dict[str, Any] = dict(fuse=not args.no_fuse, filename=self._cell_filename(source, number))
        if args.no_cache:
            opts.update(cache=False)
        if args.no_compile_plan:
            opts.update(compile_plan=False)
        if args.dry_run or args.keep or args.emulate:
            opts.update(dry_run=args.dry_run, keep=args.keep, emulate=args.emulate)
        status = _Status(self.shell, args.backend)
        comparison = None
        absent, t0 = [m for m in HEAVY_MODULES if m not in sys.modules], time.perf_counter()
        try:
            with status.showing():
                if args.compare:  # eager NumPy on a copy first, then the fused run here
                    from .dashboard.compare import compare_cell

                    report, comparison = compare_cell(run_cell, source, ns, args.backend, **opts)
                else:
                    report = run_cell(source, ns, args.backend, **opts)
        except BackendUnavailable as e:
            status.clear()
            raise UsageError(str(e)) from None
        except BaseException:
            status.clear()  # the cell's own error is what the user should see now
            raise
        _note_first_use(report, time.perf_counter() - t0, {m for m in absent if m in sys.modules})
        if args.expect_kernels is not None:
            report.options["expect_kernels"] = args.expect_kernels
        if args.output:
            ns[args.output] = report
        from .dashboard import show  # ipywidgets/plotly load only if a panel is drawn

        show(report, comparison, quiet=args.quiet, number=number, status=status.handle)
        if args.expect_kernels is not None and report.kernels > args.expect_kernels:
            raise ExpectKernelsError(  # one line; the panel above shows the cuts that broke the promise
                f"--expect-kernels {args.expect_kernels}: the cell launched {fmt.plural(report.kernels, 'kernel')} "
                f"({_cut_summary(report)})") from None
        return report.result

    @line_magic
    def fuse_cache(self, line: str) -> None:
        """Show the plan cache: per cell its entries and their guards. ``--clear`` empties it;
        ``--code`` also shows each entry's guard function, the Python a re-run executes first.

        A ``%%fuse`` cell run again with every guard of one of its entries holding
        replays that entry's plan without tracing (``cache hit``); otherwise it is
        traced and the summary says which guard failed and how. At most 8 entries
        are kept per cell, and the cache's total memory is bounded.
        """
        from .backends import forget_rendered
        from .cache import PLAN_CACHE

        words = line.split()
        if any(w not in ("--clear", "-c", "--code") for w in words) or len(words) > 1:
            raise UsageError(f"%fuse_cache takes --clear or --code, not {line!r}")
        if words and words[0] != "--code":
            PLAN_CACHE.clear()
            forget_rendered()
            print("plan cache cleared")
            return
        print(PLAN_CACHE.describe(code=bool(words)))

    @line_magic
    def fuse_dashboard(self, line: str) -> None:
        """Show the session dashboard, which updates live after every ``%%fuse`` cell.

        Kernels per cell (fused against eager NumPy's one kernel per op), bytes
        moved per cell, time per cell split by phase, plan cache replays and
        misses, transfer bytes (when anything crossed the bus); pick a cell to
        see its headline and kernels. Without a widget frontend it shows a
        static table of the session so far.
        """
        from .dashboard import show_dashboard

        show_dashboard()

    def _cell_filename(self, source: str, number: int) -> str | None:
        """IPython's own cell filename (``Cell In[12]``), so tracebacks show the cell like any other."""
        compiler = getattr(self.shell, "compile", None)
        if compiler is not None and hasattr(compiler, "cache"):
            try:
                return compiler.cache(source, number)
            except TypeError:
                return None
        return None


def _usage(doc: str) -> str:
    """IPython writes a magic's usage as reST (``::`` and a single ``%``): ``usage: %%fuse [-b BACKEND] ...``."""
    return doc.replace("::\n\n  %fuse ", "usage: %%fuse ", 1)


FuseMagics.fuse.__doc__ = _usage(FuseMagics.fuse.__doc__ or "")


def cell_number(shell: Any) -> int:
    """The number of the cell running now, as its prompt shows it.

    IPython stores a cell's input under its number before running it, and
    (since 8.x) has already moved ``execution_count`` on to the next number by
    the time a magic runs; the history is right either way.
    """
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if history and len(history) - 1 in (shell.execution_count, shell.execution_count - 1):
        return len(history) - 1
    return shell.execution_count


def _note_first_use(report: Any, wall: float, loaded: set[str]) -> None:
    """Time the run spent outside its phases, when it loaded heavy modules for the first time:
    ``times['load']`` (and ``total`` becomes the wall time), so "total 2.38 s" is never said of 10 s."""
    heavy = sorted({m.split(".")[0] for m in loaded} & set(HEAVY_MODULES))
    extra = wall - report.times.get("total", 0.0)
    if heavy and extra > 0.05:
        report.times[LOAD_PHASE] = extra
        report.times["total"] = wall
        report.options["loaded"] = ", ".join(heavy)


def _cut_summary(report: Any) -> str:
    from .report import break_reason

    d = report._fields()
    reasons = list(dict.fromkeys(break_reason(d, b) for b in report.breaks))
    if not reasons:
        return "no cut: every kernel is a separate call or fallback" if report.kernels else "no kernel"
    return f"cut {fmt.plural(len(report.breaks), 'time')}: {reasons[0]}" + (
        f"; +{len(reasons) - 1} more in the panel" if len(reasons) > 1 else "")


class _Status:
    """A status line under the cell while it runs long (loading numba, compiling kernels): a display
    that ``show`` empties when the panel comes, so it neither stays nor mixes with the user's prints."""

    def __init__(self, shell: Any, backend: str) -> None:
        self.live = getattr(shell, "kernel", None) is not None  # a notebook or another kernel frontend
        self.handle: Any = None
        self.t0 = time.perf_counter()
        self.first_use = backend in ("auto", "cpu") and "numba" not in sys.modules

    def say(self, message: str) -> None:
        text = f"jupyter_fuse: {message} ({fmt.seconds(time.perf_counter() - self.t0)} so far)"
        from IPython.display import display

        if self.handle is None:
            self.handle = display({"text/plain": text}, raw=True, display_id=True)
        else:
            self.handle.update({"text/plain": text}, raw=True)

    def clear(self) -> None:
        if self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)

    def showing(self) -> Any:
        from contextlib import nullcontext

        from .progress import shown_by

        if not self.live:
            return nullcontext()
        if self.first_use:
            self.say("first use: loading numba")
        return shown_by(self.say)
