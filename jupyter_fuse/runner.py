"""``run_cell``: one run of a cell, from source text to a Report. The magic wraps this."""

from __future__ import annotations

import ast
import functools
import itertools
import linecache
import os
import time
from typing import Any

from . import abandon, fmt, loops, masked, program
from .backends import compiler, get_backend
from .backends.cpu_index import Steered
from .cache import PLAN_CACHE, Abandon, Tape, compiling, guard_function, replay, warn_storm
from .capture import CellContext, Namespace, finalize
from .guards import scan
from .ir import format_graph
from .report import Report, time_shares
from .session import Session

_counter = itertools.count(1)
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

# Fusion does not pay everywhere: a loop of scalar Python (a pixel at a time, a branch on each value)
# replays as thousands of tiny kernels and syncs, each costing microseconds of launching where NumPy's
# call costs one; and NumPy's own vector code for `exp`, `tanh`, `power` (AVX-512 CPUs) outruns a
# kernel calling the C library's for each element. Once a cell's replay is settled (nothing of it still
# compiling), the next run is plain NumPy, timed; when NumPy was PLAIN_MARGIN times faster, the cell
# runs as plain NumPy from then on (its report says why), until a run of it takes PLAIN_DRIFT times
# longer than that (its inputs grew: fusion may pay now, and is tried again).
# A cell that cannot be replayed is traced every run: its traced runs are judged the same way.
# JUPYTER_FUSE_PLAIN=off keeps replaying (the tests do: they look at the replays themselves).
PLAIN_MIN = 1e-3  # seconds: a replay shorter than this is never timed against NumPy
# ... nor one faster than this per op the cell traced: NumPy's own call of an op costs at least about
# this much, so NumPy cannot win (a time-stepping loop's replay at a tenth of NumPy's time is not probed)
NUMPY_OP = 0.5e-6
# A first replay (which loads its kernels) is judged only when this share of its time went outside kernels
PLAIN_OVERHEAD = 0.5
PLAIN_MARGIN = 1.25
PLAIN_DRIFT = 4.0
# NumPy's time comes from one run, the cell's first as plain NumPy in a while: 1.1-2x a warm one
# (bench/realworld.py: mlp, deposit_gather). Where the replay kept was within RETIME of it, the next run
# times NumPy once more, right after, and the faster of the two decides.
RETIME = 0.5
# A replay that no compiled program will speed up (none pays, its build refused it, or it leaves most
# launches to Python) is judged from its first replay already: a pixel-at-a-time loop then runs as NumPy
# from its third run, not its fourth. A first replay loads its kernels (1.5-2x a settled one's time,
# bench/realworld.py's loops): it counts as FIRST_REPLAY_MARGIN times slower than it was, and a replay
# kept so is judged again when settled.
FIRST_REPLAY_MARGIN = 2.5
# While numba compiles a replay as one program (in the background, between cells), a replay runs kernel
# by kernel: thousands of tiny kernels (a pixel-at-a-time loop, a tridiagonal sweep, an RK4 step of a
# few scalars) cost about LAUNCH_COST each in launching, 10-60x NumPy's own time for the cell. Where the
# launches would cost more than the kernels' own work (the bytes they move, at KERNEL_BYTES_PER_S: the
# first run's kernels ran as NumPy while they compiled, so their times tell NumPy's overheads, not the
# work), such a run is plain NumPy instead (timed: it counts when the replay is judged), until the
# program is ready; where it comes loose (its blocks, Python steps and the kernels outside its blocks still
# called one at a time, at about LAUNCH_COST each: a data-dependent loop's calls and syncs each step) or not
# at all, those calls are judged against that NumPy time without a replay to time first.
LAUNCH_COST = 10e-6
KERNEL_BYTES_PER_S = 5e9
# A cell that cannot be replayed is traced every run; its first traced run is judged already (the next run
# is plain NumPy, timed) where it took this long and nearly all of it outside kernels and compiles (a
# union-find over array elements: 50,000 syncs, 7 s a traced run where NumPy takes 8 ms): compiles still
# running in the background do not change what tracing it again would cost.
HOPELESS_TRACE = 0.25
HOPELESS_OVERHEAD = 0.9
# COLD: below that too, its first traced run (without its compiles) is judged provisionally, as a first
# replay is (FIRST_REPLAY_MARGIN): its next run is plain NumPy, timed, and the cell runs as plain NumPy from
# then on where NumPy was that much faster (bench/realworld.py's clean_apply: 0.48 s traced, NumPy 10 ms;
# traced a second time, 0.41 s), else its next traced run is judged as before. Its small kernels ran as
# NumPy while numba compiled them: about as NumPy runs them, not slower than compiled ones would.


class KernelCountError(AssertionError):
    """``--expect-kernels N`` was given and the cell launched more than N kernels."""


def run_cell(source: str, namespace: dict | None = None, backend: str = "numpy", *, fuse: bool = True,
             expect_kernels: int | None = None, filename: str | None = None, cache: bool = True,
             dry_run: bool = False, keep: bool = False, emulate: bool = False, compile_plan: bool = True) -> Report:
    """Run ``source`` lazily against ``namespace`` (modified in place) and return its Report.

    The value of a final expression statement is ``report.result`` (as IPython
    would display it). When the cell raises, the namespace holds what NumPy
    would have left, ``report.error`` names the exception, and it propagates
    with its traceback cut to the user's lines.

    With ``cache`` (the default) a re-run whose guards all hold replays the
    recorded plan without running the cell's Python (``report.cache == "hit"``);
    ``cache=False`` neither uses nor fills the plan cache; ``compile_plan=False`` replays kernel by
    kernel (not as one compiled program). ``dry_run``, ``emulate`` and ``keep``
    are the cupy backend's (see ``get_backend``).
    """
    __tracebackhide__ = True  # IPython shows the user's frames, not ours
    with compiler.cell_running():  # (numba compiles in the background only between cells)
        namespace = {} if namespace is None else namespace
        engine = get_backend(backend, dry_run=dry_run, keep=keep, emulate=emulate)
        options = {"backend": engine.name, "fuse": fuse, "expect_kernels": expect_kernels, "compile_plan": compile_plan}
        if engine.name == "cupy":
            options.update(dry_run=dry_run, keep=keep, emulate=emulate)
        key = (source, engine.name + " --emulate" * emulate, fuse, dry_run, keep)  # (emulated plans are cached apart)
        misses: list[str] = []
        if cache and _runs_plain(key):
            return _run_plain(key, source, namespace, engine, options, filename)
        if cache:
            hit, misses = _try_replay(key, source, namespace, engine, options, filename)
            if hit is not None:
                _check_kernels(hit, expect_kernels)
                return hit
        filename, body, last = _compiled(source, filename, True)  # a SyntaxError here is the ordinary one (a replay never compiles)
        s = Session(engine, filename, fuse=fuse)
        s.report.source = source
        s.report.options = options
        unreplayable = scan(source) if cache else None
        if cache:
            if unreplayable:
                s.report.cache, s.report.miss_reasons = "unreplayable", unreplayable
            else:
                s.tape = Tape(s)
        ns = Namespace(namespace, s)
        s.namespace = ns
        if hasattr(engine, "attach"):  # a device backend's ledger asks the cell for names and causes
            engine.attach(CellContext(s, ns))
        result: Any = None
        abandoned: abandon.Abandoned | None = None
        t0 = time.perf_counter()
        if cache and not unreplayable and _plain_policy() \
                and not PLAN_CACHE.stats.get(key, {}).get("traced_whole") and abandon.watchable(source):
            s.watch = abandon.Watch(t0)
        with s.activate(), compiler.old_objects_frozen():
            try:
                try:
                    exec(body, ns)
                    if last is not None:
                        result = eval(last, ns)
                except abandon.Abandoned as e:  # (nothing the user sees was done: the cell runs again, as NumPy)
                    abandoned = e
                finally:
                    masked.forget()  # (a masked statement that raised before its store)
                    if abandoned is None:
                        (result,) = finalize(ns, [result])
            except BaseException as e:  # the user's exception, namespace already consistent
                s.report.error = f"{type(e).__name__}: {e}"
                _finish(s, t0)
                s.close()
                if os.environ.get("JUPYTER_FUSE_DEBUG"):  # developers: keep our frames
                    raise
                raise e.with_traceback(_user_traceback(e.__traceback__, filename))
        if abandoned is not None:
            return _run_abandoned(key, s, abandoned, t0, source, namespace, engine, options, filename)
        _finish(s, t0)
        s.report.result = result  # type: ignore[attr-defined]
        try:
            if s.tape is not None:
                _record(s, key, ns, misses)
            elif cache:
                PLAN_CACHE.note(key, "unreplayable", s.report.miss_reasons)
        finally:
            s.close()
        if cache and s.report.cache == "unreplayable":  # (its first traced run judged provisionally: ``COLD``)
            hopeless = s.report.times["total"] > HOPELESS_TRACE \
                and time_shares(vars(s.report)).get("overhead", 0.0) > HOPELESS_OVERHEAD
            warm = PLAN_CACHE.stats[key]["unreplayable"] >= 2
            _suspect(key, s.report, warm or hopeless, settled=hopeless, cold=not (warm or hopeless))
        _check_kernels(s.report, expect_kernels)
        return s.report


def _plain_policy() -> bool:
    """Is the plain-NumPy policy on (``PLAIN_MIN``'s comment; ``abandon``)? JUPYTER_FUSE_PLAIN=off turns it off."""
    return os.environ.get("JUPYTER_FUSE_PLAIN", "on") != "off"


def _check_kernels(report: Report, expect_kernels: int | None) -> None:
    if expect_kernels is not None and report.kernels > expect_kernels:
        raise KernelCountError(
            f"expected at most {expect_kernels} kernel{'s' * (expect_kernels != 1)}, the cell launched "
            f"{report.kernels}:\n{report!r}")


def _try_replay(key: tuple, source: str, namespace: dict, engine: Any, options: dict,
                filename: str | None = None) -> tuple[Report | None, list]:
    """A replay of the cell's plan if every guard of one of its entries holds; else why not. Or the cell as
    plain NumPy where the replay would launch its tiny kernels one by one (LAUNCH_COST): while its program
    compiles, or for good when its program comes loose (or none) and NumPy's time beats the launches."""
    t0 = time.perf_counter()
    entry, misses = PLAN_CACHE.lookup(key, namespace)
    t_guard = time.perf_counter() - t0
    if entry is None:
        return None, misses
    report = Report(backend=engine.name)
    report.source, report.options = source, options
    if options.get("compile_plan", True) and _plain_policy():
        why = _plain_over_replay(key, entry, engine, report)
        if why is not None:
            return _held(_run_plain(key, source, namespace, engine, options, filename, why or None), entry), []
    try:
        result = replay(entry, namespace, engine, report, compiled=options.get("compile_plan", True))
    except Abandon as e:
        return None, [str(e)]
    except Steered as e:  # (a compiled replay's: the data decides a shape, and decides it otherwise now)
        return None, [f"{e}: traced anew"]
    except Exception as e:  # noqa: BLE001 - nothing was written: trace the cell instead
        if os.environ.get("JUPYTER_FUSE_DEBUG"):
            raise
        return None, [f"the replay failed ({type(e).__name__}: {e}); traced instead"]
    entry.hits += 1
    PLAN_CACHE.note(key, "hit", [])
    info = entry.report
    report.ops, report.syncs, report.graph, report.nodes = info["ops"], list(info["syncs"]), info["graph"], info["nodes"]
    report.breaks, report.fallbacks = list(info["breaks"]), list(info["fallbacks"])
    report.bound_writes = list(info["bound_writes"])
    report.graph_truncated = info["graph_truncated"]
    report.cache, report.guards = "hit", list(entry.texts)
    report.result = result  # type: ignore[attr-defined]
    t = report.times
    t["guard"] = t_guard
    t["total"] = time.perf_counter() - t0
    t["run"] = max(0.0, t["total"] - t_guard - t["compile"])
    _suspect(key, report, entry.hits >= 2 and not entry.program_jobs, entry if entry.hits == 1 else None)
    return report, []


def _plain_over_replay(key: tuple, entry: Any, engine: Any, report: Report) -> str | None:
    """Why the cell runs as plain NumPy instead of this replay (``LAUNCH_COST``), or None to replay: a run
    timed while its program compiles, or before its loose program (or none) is judged; "" once judged, when
    NumPy's time beats the launches (the cell then runs as plain NumPy for good, ``_run_plain`` says why)."""
    info = entry.report
    launches = info.get("launches", 0)
    launching = LAUNCH_COST * launches
    if launching <= info.get("kernel_bytes", 0) / KERNEL_BYTES_PER_S or launches < program.MIN_LAUNCHES:
        return None
    cost = (f"its {fmt.plural(launches, 'kernel launch', 'kernel launches')} would take about "
            f"{fmt.seconds(launching)} to launch, for {fmt.nbytes(info['kernel_bytes'])} they move")
    if compiling(entry, engine, report):
        return f"ran as plain NumPy while numba compiles its replay as one program: replayed kernel by kernel, {cost}"
    # (its program built, or refused: None is not yet asked, where compiles run at once)
    if entry.program is None:
        return None
    if entry.program:  # what it still calls one at a time: its blocks, Python steps, kernels outside them
        prog = entry.program
        launching = LAUNCH_COST * prog.steps
        if 2 * prog.steps < launches or launching <= max(PLAIN_MIN, info.get("kernel_bytes", 0) / KERNEL_BYTES_PER_S):
            return None  # (it runs most launches itself, or what it still calls costs little)
        how = (f"its compiled program still makes {fmt.count(prog.steps)} calls one at a time (blocks, Python steps, "
               f"{fmt.plural(prog.loose_launches, 'kernel launch', 'kernel launches')} outside them): they would "
               f"take about {fmt.seconds(launching)}")
    else:
        how = f"it replays kernel by kernel: {cost}"
    st = PLAN_CACHE.stats[key]
    if "numpy_seen" not in st:  # (NumPy's time first: the replay is judged against it, not run to be timed)
        return f"ran as plain NumPy: {how}"
    if launching <= PLAIN_MARGIN * st["numpy_seen"]:
        return None
    st["numpy_time"], st["replay_time"], st["replay_launches"] = st.pop("numpy_seen"), launching, launches
    st["plain"], st["fused"], st["outside"], st["estimated"] = True, "replay", 1.0, how
    return ""


def _held(report: Report, entry: Any) -> Report:
    """A plain run chosen over a replay whose guards held: its report lists them (the plan was there)."""
    report.guards = list(entry.texts)
    return report


def _suspect(key: tuple, report: Report, warm: bool, first: Any = None, settled: bool = False,
             cold: bool = False) -> None:
    """After a replay (or an unreplayable cell's traced run): if it is settled, time the next run as plain
    NumPy. Settled: ``warm`` (not its first replay, which loads its kernels; not its first traced run;
    nothing of its program compiling) and no kernel compiling, or ``settled`` (``HOPELESS_TRACE``). ``first``:
    the entry of a first replay that went mostly to launching, kept in view (``FIRST_REPLAY_MARGIN``;
    ``_runs_plain``). ``cold``: an unreplayable cell's first traced run, judged provisionally (``COLD``)."""
    total = report.times["total"]
    if total <= max(PLAIN_MIN, NUMPY_OP * report.ops) or not (warm or first is not None or cold):  # (cheap tests first)
        return
    st = PLAN_CACHE.stats.get(key)
    if st is None or "numpy_time" in st and not (warm and st.get("provisional")) \
            or not _plain_policy():
        return  # (decided: a replay kept on its first replay's time alone is judged again, settled)
    outside = time_shares(vars(report)).get("overhead", 0.0)
    if not warm and not cold and outside <= PLAIN_OVERHEAD:
        return
    st["outside"] = outside
    fused = "traced run" if report.cache == "unreplayable" else "replay"
    if "numpy_time" in st:
        if not compiler.pending():  # (a compile still running: judged at a later replay)
            del st["provisional"]
            if total > PLAIN_MARGIN * st["numpy_time"]:
                st["plain"], st["replay_time"], st["fused"] = True, total, fused
        return
    if cold:  # (without its compiles; the kernels that ran as NumPy meanwhile ran about as NumPy runs them)
        st["replay_time"], st["replay_launches"] = total - report.times["compile"], report.kernels
        st["fused"], st["provisional"] = "first traced run", True
    elif first is not None:
        if not report._meanwhile:  # (a kernel still compiling ran on NumPy: nothing to judge by)
            st["first_replay"] = (total, report.kernels, first)
    elif settled or not compiler.pending():
        st["replay_time"], st["replay_launches"] = total, report.kernels
        st["fused"] = "replay" if report.cache == "hit" else "traced run"


def _runs_plain(key: tuple) -> bool:
    st = PLAN_CACHE.stats.get(key)
    if st is None:
        return False
    if "first_replay" in st and "replay_time" not in st and "numpy_time" not in st:
        _judge_first_replay(st)
    return "replay_time" in st and "numpy_time" not in st or st.get("plain", False)


def _judge_first_replay(st: dict) -> None:
    """A first replay kept in view (``_suspect``) becomes the replay this run is timed against, once its
    program is known not to run it: none pays, its build refused it, or it still launches most kernels one
    by one (``FIRST_REPLAY_MARGIN``)."""
    total, launches, entry = st["first_replay"]
    job = entry.program_jobs[0] if entry.program_jobs else None
    if (job is None or job.done.is_set()) and (not entry.program or 2 * entry.program.loose_launches >= launches):
        del st["first_replay"]
        st["replay_time"], st["replay_launches"], st["fused"], st["provisional"] = total, launches, "first replay", True


def _run_plain(key: tuple, source: str, namespace: dict, engine: Any, options: dict, filename: str | None,
               why: str | None = None) -> Report:
    """The cell as plain NumPy (``PLAIN_MIN``'s comment): exactly what it does without ``%%fuse``.
    ``why``: it runs so before its replay is judged (``_plain_over_replay``); its time is kept for that."""
    __tracebackhide__ = True
    st = PLAN_CACHE.stats[key]
    report = Report(backend=engine.name)
    report.source, report.options, report.cache = source, options, "numpy"
    filename, body, last = _compiled(source, filename)
    result: Any = None
    t0 = time.perf_counter()
    try:
        exec(body, namespace)
        if last is not None:
            result = eval(last, namespace)
    except BaseException as e:  # NumPy's own exception, as without %%fuse (no frame of ours below the cell's)
        report.error = f"{type(e).__name__}: {e}"
        raise
    finally:
        elapsed = time.perf_counter() - t0
        report.times["run"] = report.times["total"] = elapsed
    report.result = result  # type: ignore[attr-defined]
    if why is not None:
        st["numpy_seen"] = min(elapsed, st.get("numpy_seen", elapsed))
        report.miss_reasons = [f"{why}; NumPy took {fmt.seconds(elapsed)}"]
        return report
    replay = fmt.seconds(st["replay_time"])
    launches = (f"{fmt.plural(st['replay_launches'], 'kernel launch', 'kernel launches')}, "
                f"{st['outside']:.0%} of it outside kernels")
    fused = st.get("fused", "replay")  # (or the traced run of a cell that cannot be replayed)
    if "numpy_time" not in st:  # this run timed NumPy: decide
        seen = st.pop("numpy_seen", None)  # (the run before timed it too: the faster of the two counts)
        t = st["numpy_time"] = elapsed if seen is None else min(elapsed, seen)
        st["plain"] = st["replay_time"] > PLAIN_MARGIN * (FIRST_REPLAY_MARGIN if st.get("provisional") else 1) * t
        if st["plain"]:
            st.pop("provisional", None)
        verdict = "it runs as plain NumPy from now on" if st["plain"] else f"the {'fusion' if fused.endswith('traced run') else 'replay'} is kept"
        if not st["plain"] and seen is None and not st.get("provisional") and st["replay_time"] > RETIME * t:
            st["numpy_seen"] = t  # (a close call on one cold run of NumPy: the next run times it again)
            del st["numpy_time"]
            verdict = "close: the next run times NumPy once more"
        once = "once" if seen is None else f"again ({fmt.seconds(seen)} the first time)"
        note = f"ran as plain NumPy {once}, to time it: {fmt.seconds(elapsed)}, where the {fused} took {replay} ({launches}): {verdict}"
    elif "estimated" in st:  # (never replayed: judged by its launches, ``_try_replay``)
        note = (f"ran as plain NumPy: fusion does not pay for this cell ({st['estimated']}; NumPy "
                f"{fmt.seconds(st['numpy_time'])})")
    else:
        note = (f"ran as plain NumPy: fusion does not pay for this cell (its {fused} took {replay}, {launches}; "
                f"NumPy {fmt.seconds(st['numpy_time'])})")
        if elapsed > PLAIN_DRIFT * st["numpy_time"]:  # (its inputs grew: the next run replays or traces)
            for k in ("plain", "numpy_time", "numpy_seen", "replay_time", "replay_launches", "fused", "outside",
                      "estimated"):
                st.pop(k, None)
            note += "; this run took much longer, so the next one tries fusion again"
    report.miss_reasons = [note]
    return report


def _run_abandoned(key: tuple, s: Session, e: abandon.Abandoned, t0: float, source: str, namespace: dict, engine: Any,
                   options: dict, filename: str | None) -> Report:
    """The cell as plain NumPy after its traced run was abandoned (``abandon``); it runs so from now on, unless
    NumPy took about as long as the abandoned run: then the next run is traced whole."""
    __tracebackhide__ = True
    traced = time.perf_counter() - t0
    e.watch.restore(s)
    kernels = s.report.kernels
    s.close()
    PLAN_CACHE.note(key, "unreplayable", [e.why])
    report = _run_plain(key, source, namespace, engine, options, filename, why=e.why)
    st = PLAN_CACHE.stats[key]
    numpy_time = st.pop("numpy_seen")
    if traced > PLAIN_MARGIN * numpy_time:
        st.update(numpy_time=numpy_time, plain=True, fused="traced run", replay_time=traced, replay_launches=kernels,
                  outside=e.outside, estimated=e.why)
        verdict = "it runs as plain NumPy from now on"
    else:
        st["traced_whole"] = True
        verdict = "NumPy took about as long: the next run is traced whole"
    report.miss_reasons = [f"{e.why}; the cell ran as plain NumPy instead, in {fmt.seconds(numpy_time)}: {verdict}"]
    report.times["trace"] = traced
    report.times["total"] += traced
    return report


def _record(s: Session, key: tuple, ns: Namespace, misses: list[str]) -> None:
    """Store the traced run's tape as a cache entry, or say why it cannot be replayed."""
    t0 = time.perf_counter()
    try:
        entry = s.tape.finish(ns)
    except Exception as e:  # noqa: BLE001 - the cache never costs the user their cell
        if os.environ.get("JUPYTER_FUSE_DEBUG"):
            raise
        entry, s.tape.reasons = None, [f"recording failed: {type(e).__name__}: {e}"]
    r = s.report
    if entry is None:
        r.cache, r.miss_reasons = "unreplayable", list(s.tape.reasons)
        PLAN_CACHE.note(key, "unreplayable", r.miss_reasons)
    else:
        PLAN_CACHE.store(key, entry)
        r.cache, r.guards, r.miss_reasons = "miss", list(entry.texts), misses
        if compiler.background():  # its guards' generated function too, while the user reads (a first replay
            compiler.submit(("guards", id(entry), object()), lambda: guard_function(entry))  # compiled it)
        if r.options.get("compile_plan", True):  # (numba compiles its replay as one program while the user reads)
            compiling(entry, s.backend, r)
        advice = PLAN_CACHE.note(key, "miss", misses)
        if advice:
            warn_storm(advice)
    r.times["guard"] += time.perf_counter() - t0
    r.times["total"] += time.perf_counter() - t0


_CODE: dict[tuple[str, str | None, bool], tuple[str, Any, Any]] = {}  # compiled cells, plain and traced


def _compiled(source: str, filename: str | None, fast: bool = False) -> tuple[str, Any, Any]:
    """``_compile``'s answer, remembered: a cell run again runs the same source, and parsing and compiling it
    again (0.1-0.4 ms; a traced run's, its loops marked, 1-3 ms: ``loops.mark``) is a share of a small cell."""
    key = (source, filename, fast)
    code = _CODE.get(key)
    if code is None:
        if len(_CODE) >= 256:
            _CODE.clear()
        code = _CODE[key] = _compile(source, filename, fast)
    elif code[0] not in linecache.cache:  # (tracebacks show the cell's lines)
        linecache.cache[code[0]] = (len(source), None, source.splitlines(True), code[0])
    return code


def _compile(source: str, filename: str | None, fast: bool = False) -> tuple[str, Any, Any]:
    """(the cell's file name, registered with linecache for tracebacks; its body; its last expression or None).
    ``fast``: a traced run's, whose loops may be fast-forwarded (``loops.mark``)."""
    filename = filename or f"<fuse-cell-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.parse(source, filename, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval")
    if fast:
        loops.mark(tree)
    return filename, compile(tree, filename, "exec"), last


def _finish(s: Session, t0: float) -> None:
    s.report.graph = functools.cache(functools.partial(format_graph, list(s.roots)))  # (made when read: ``Report.graph``)
    t = s.report.times
    t["total"] = time.perf_counter() - t0
    t["trace"] = max(0.0, t["total"] - t["plan"] - t["compile"] - t["run"] - t["guard"])


def _user_traceback(tb: Any, filename: str) -> Any:
    """Drop our frames: the traceback starts at the cell and ends at the user's last line."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    user = [i for i, f in enumerate(frames) if not f.tb_frame.f_code.co_filename.startswith(_PKG_DIR)]
    cell = [i for i, f in enumerate(frames) if f.tb_frame.f_code.co_filename == filename]
    if not cell:
        return frames[0] if frames else None
    start = cell[0]
    end = max(i for i in user if i >= start)
    # keep frames after the user's last one only if they are not ours (e.g. NumPy's own)
    tail = [f for f in frames[end + 1:] if not f.tb_frame.f_code.co_filename.startswith(_PKG_DIR)]
    kept = frames[start:end + 1]
    kept = [f for f in kept if not f.tb_frame.f_code.co_filename.startswith(_PKG_DIR)] + tail
    for a, b in zip(kept, kept[1:]):
        a.tb_next = b
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None
