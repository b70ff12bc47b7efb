"""``python -m jupyter_fuse.demo``: execute the demo notebooks and write HTML reports.

Each ``demo_notebooks/*.ipynb`` runs top to bottom in a fresh kernel of *this*
Python (nbclient; no installed kernelspec needed). A notebook fails when a cell
raises, when a code cell prints or displays nothing (unless tagged
``allow-empty``), or when a ``%%fuse`` cell (without ``-q``) did not display its
report. The executed notebook and a static HTML report go to ``build/demo/``,
failed ones included, so the failure can be read where it happened. The HTML
shows each panel's static ``text/html`` rendering: the saved widget state is
dropped from the export, because nbconvert would otherwise load the widget
renderer from a CDN, which a saved report cannot count on.

The tests (``tests/notebooks/``) use :func:`run` too.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "demo_notebooks"
OUT = ROOT / "build" / "demo"
ALLOW_EMPTY = "allow-empty"  # cell tag: this code cell is expected to print nothing
REPORT_MIME = "application/vnd.jupyter-fuse.report+json"
CELL_TIMEOUT = 120  # seconds per cell; a demo cell takes well under one


@dataclass
class Result:
    """One executed notebook: what failed (nothing, if ``ok``), how long it took, where it was written."""

    path: Path
    nb: Any = None
    error: str | None = None  # the first failing cell's error, as nbclient reports it
    empty: list[str] = field(default_factory=list)  # code cells that showed nothing
    no_report: list[str] = field(default_factory=list)  # %%fuse cells that displayed no report
    seconds: float = 0.0
    html: Path | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.empty and not self.no_report

    def problems(self) -> str:
        out = [f"cell error:\n{self.error}"] if self.error else []
        out += [f"no output in: {', '.join(self.empty)}"] if self.empty else []
        out += [f"no {REPORT_MIME} from: {', '.join(self.no_report)}"] if self.no_report else []
        return "\n".join(out) or "ok"


def kernel_manager():
    """A kernel manager that starts ``sys.executable -m ipykernel_launcher``, whatever kernelspecs are installed."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                      display_name=f"Python {sys.version_info.major} (jupyter_fuse demo)", language="python")

    class ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return spec

    return KernelManager(kernel_name="python3", kernel_spec_manager=ThisPython())


def execute(nb: Any, cwd: Path, timeout: int = CELL_TIMEOUT) -> Any:
    """Run ``nb`` in place; raises ``nbclient.exceptions.CellExecutionError`` at the first failing cell."""
    from nbclient import NotebookClient

    NotebookClient(nb, km=kernel_manager(), timeout=timeout, resources={"metadata": {"path": str(cwd)}},
                   store_widget_state=True).execute()
    return nb


def _first_line(cell: Any) -> str:
    return cell.source.splitlines()[0] if cell.source else "<empty cell>"


def missing_outputs(nb: Any) -> list[str]:
    """Code cells that printed or displayed nothing (unless tagged ``allow-empty``)."""
    return [_first_line(c) for c in nb.cells
            if c.cell_type == "code" and not c.outputs and ALLOW_EMPTY not in c.metadata.get("tags", [])]


def fuse_cells(nb: Any) -> list[Any]:
    """Code cells run under ``%%fuse`` that should display a report (not ``-q``/``--quiet``)."""
    quiet = re.compile(r"(?:^|\s)(?:-q|--quiet)(?:\s|$)")
    return [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%fuse")
            and not quiet.search(c.source.splitlines()[0])]


def missing_reports(nb: Any) -> list[str]:
    """``%%fuse`` cells with no output carrying the report MIME type."""
    return [_first_line(c) for c in fuse_cells(nb)
            if not any(REPORT_MIME in o.get("data", {}) for o in c.outputs)]


def export_html(nb: Any, dest: Path) -> Path:
    import copy

    from nbconvert import HTMLExporter

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)  # static report: show the text/html fallback of every panel
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    dest.write_text(body, encoding="utf-8")
    return dest


def run(path: Path, out: Path | None = OUT) -> Result:
    """Execute one notebook, check it, and (unless ``out`` is None) write it and its HTML under ``out``."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    res = Result(Path(path))
    res.nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    try:
        execute(res.nb, res.path.parent)
    except CellExecutionError as e:
        res.error = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # the traceback without terminal colours
    res.seconds = time.perf_counter() - t0
    if res.error is None:  # after an error the later cells never ran: only the error counts
        res.empty, res.no_report = missing_outputs(res.nb), missing_reports(res.nb)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        nbformat.write(res.nb, out / res.path.name)
        res.html = export_html(res.nb, out / (res.path.stem + ".html"))
    return res


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="default: demo_notebooks/*.ipynb")
    ap.add_argument("--out", type=Path, default=OUT, help=f"where to write them (default {OUT})")
    args = ap.parse_args(argv)
    paths = args.notebooks or notebooks()
    if not paths:
        print(f"no notebooks in {NOTEBOOKS}", file=sys.stderr)
        return 1
    failed = []
    for path in paths:
        res = run(path, args.out)
        print(f"{path.name}: {'ok' if res.ok else 'FAILED'} in {res.seconds:.1f} s -> {res.html}", flush=True)
        if not res.ok:
            failed.append(path.name)
            print("  " + res.problems().replace("\n", "\n  "), file=sys.stderr, flush=True)
    print(f"HTML reports in {args.out.resolve()}")
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
