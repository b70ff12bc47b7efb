"""The ``%%fuse`` cell magic. Its docstring is the ``%%fuse?`` help."""

from __future__ import annotations

from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.core.error import UsageError

from .backends import CHOICES, BackendUnavailable
from .runner import run_cell


@magics_class
class FuseMagics(Magics):
    """Magics of jupyter_fuse."""

    @magic_arguments()
    @argument("-b", "--backend", default="auto",
              help=f"where kernels run: {', '.join(CHOICES)} (auto: cupy with a CUDA device, else cpu)")
    @argument("-o", dest="output", metavar="NAME", default=None, help="store the Report in the variable NAME")
    @argument("-q", "--quiet", action="store_true", help="print nothing")
    @argument("--expect-kernels", type=int, metavar="N", default=None,
              help="raise an error if the cell launched more than N kernels")
    @argument("--no-fuse", action="store_true", help="one kernel per op on the same backend")
    @argument("--no-cache", action="store_true",
              help="trace the cell even if its plan is cached, and do not cache this run")
    @argument("--dry-run", action="store_true",
              help="with -b cupy: render and compile (NVRTC) every CUDA kernel without a GPU, compute with "
                   "NumPy, and show the transfers a real run would make")
    @argument("--emulate", action="store_true",
              help="with -b cupy: run every CUDA kernel on the CPU (compiled by the host C++ compiler, launched "
                   "with the GPU's grid), with a real run's transfers; timings are the emulator's")
    @argument("--keep", action="store_true",
              help="with -b cupy: leave results on the GPU as CuPy arrays (a later cell reading them "
                   "transfers nothing)")
    @argument("--compare", action="store_true",
              help="also run the cell eagerly on NumPy, check the results agree (dtypes too) and show both")
    @cell_magic
    def fuse(self, line: str, cell: str) -> Any:
        """Run the cell's NumPy code lazily, fused into few kernels.

        Array operations in the cell build a graph instead of running one by
        one; a value Python needs (``print``, ``if``, ``float``) is computed
        on the spot, and everything still live at the end is computed together.
        The namespace ends up exactly as plain NumPy would leave it. A one-line
        summary follows each run, e.g.::

            fuse[numpy]: 37 ops -> 37 kernels · trace 1.2 ms · run 4.1 ms

        Examples::

            %%fuse -b numpy -o report
            y = np.sin(x) ** 2 + np.cos(x) ** 2
        """
        __tracebackhide__ = True  # IPython shows the user's frames, not ours
        args = parse_argstring(self.fuse, line)
        if args.backend not in CHOICES:
            raise UsageError(f"unknown backend {args.backend!r}: choose one of {', '.join(CHOICES)}")
        ns = self.shell.user_ns
        try:
            comparison = None
            opts = dict(fuse=not args.no_fuse, expect_kernels=args.expect_kernels, filename=self._cell_filename(cell))
            if args.no_cache:
                opts.update(cache=False)
            if args.dry_run or args.keep or args.emulate:
                opts.update(dry_run=args.dry_run, keep=args.keep, emulate=args.emulate)
            if args.compare:  # eager NumPy on a copy first, then the fused run here
                from .dashboard.compare import compare_cell

                report, comparison = compare_cell(run_cell, cell, ns, args.backend, **opts)
            else:
                report = run_cell(cell, ns, args.backend, **opts)
        except BackendUnavailable as e:
            raise UsageError(str(e)) from None
        if args.output:
            ns[args.output] = report
        from .dashboard import show  # ipywidgets/plotly load only if a panel is drawn

        show(report, comparison, quiet=args.quiet, number=self.shell.execution_count)
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
        from .cache import PLAN_CACHE

        words = line.split()
        if any(w not in ("--clear", "-c", "--code") for w in words) or len(words) > 1:
            raise UsageError(f"%fuse_cache takes --clear or --code, not {line!r}")
        if words and words[0] != "--code":
            PLAN_CACHE.clear()
            print("plan cache cleared")
            return
        print(PLAN_CACHE.describe(code=bool(words)))

    @line_magic
    def fuse_dashboard(self, line: str) -> None:
        """Show the session dashboard, which updates live after every ``%%fuse`` cell.

        Kernels per cell (fused against eager NumPy's one kernel per op), time
        per cell split by phase, plan cache hits and misses, transfer bytes;
        pick a cell to see its panel. Without a widget frontend it shows a
        static table of the session so far.
        """
        from .dashboard import show_dashboard

        show_dashboard()

    def _cell_filename(self, cell: str) -> str | None:
        """IPython's own cell filename, so tracebacks show the cell like any other."""
        compiler = getattr(self.shell, "compile", None)
        if compiler is not None and hasattr(compiler, "cache"):
            try:
                return compiler.cache(cell, self.shell.execution_count)
            except TypeError:
                return None
        return None
