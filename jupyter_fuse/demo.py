"""``python -m jupyter_fuse.demo``: execute the demo notebooks and write HTML reports.

Each ``demo_notebooks/*.ipynb`` runs top to bottom in a fresh kernel of this
Python (nbclient); a cell error fails the run. The executed notebook and a
static HTML report go to ``build/demo/``. The HTML shows each panel's static
``text/html`` rendering: the saved widget state is dropped from the export,
because nbconvert would otherwise load the widget renderer from a CDN, which
a saved report cannot count on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "demo_notebooks"
OUT = ROOT / "build" / "demo"
KERNEL = "python3"
ALLOW_EMPTY = "allow-empty"  # cell tag: this code cell is expected to print nothing


def ensure_kernelspec() -> None:
    """A ``python3`` kernelspec for this interpreter (installed into sys.prefix if missing)."""
    from jupyter_client.kernelspec import KernelSpecManager

    if KERNEL not in KernelSpecManager().find_kernel_specs():
        from ipykernel.kernelspec import install

        install(prefix=sys.prefix)


def execute(path: Path, timeout: int = 300):
    """Run a notebook; raises ``nbclient.exceptions.CellExecutionError`` on the first failing cell."""
    import nbformat
    from nbclient import NotebookClient

    ensure_kernelspec()
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name=KERNEL, resources={"metadata": {"path": str(path.parent)}},
                   store_widget_state=True).execute()
    return nb


def missing_outputs(nb) -> list[str]:
    """Code cells that printed or displayed nothing (unless tagged ``allow-empty``)."""
    return [c.source.splitlines()[0] if c.source else "<empty cell>" for c in nb.cells
            if c.cell_type == "code" and not c.outputs and ALLOW_EMPTY not in c.metadata.get("tags", [])]


def export_html(nb, dest: Path) -> Path:
    import copy

    from nbconvert import HTMLExporter

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)  # static report: show the text/html fallback of every panel
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    dest.write_text(body, encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    import nbformat

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="default: demo_notebooks/*.ipynb")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for path in args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb")):
        t0 = time.perf_counter()
        nb = execute(path)
        empty = missing_outputs(nb)
        nbformat.write(nb, args.out / path.name)
        html = export_html(nb, args.out / (path.stem + ".html"))
        status = f"missing output in: {empty}" if empty else "ok"
        failed += bool(empty)
        print(f"{path.name}: {status} in {time.perf_counter() - t0:.1f} s -> {html}")
    print(f"HTML reports in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
