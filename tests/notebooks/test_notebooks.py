"""The demo notebooks run top to bottom: no errors, every cell shows something, every %%fuse cell its report.

They run through ``jupyter_fuse.demo`` (what ``make demo`` runs), each in a
fresh kernel of this Python; the kernel inherits the test environment
(``JUPYTER_FUSE_STRICT``, the kernel cache under ``build/``).
"""

from __future__ import annotations

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from jupyter_fuse import demo

NOTEBOOKS = demo.notebooks()
STORIES = ("01_what_is_fusion", "02_reductions_stencils_breaks", "03_guards_and_replay", "04_devices_and_transfers")


def test_the_four_stories_are_there():
    assert [p.stem for p in NOTEBOOKS][:4] == list(STORIES)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    """Notebooks are sources: outputs belong in build/demo/, not in git."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert not [c.source[:40] for c in nb.cells if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert demo.fuse_cells(nb), "a demo notebook without a %%fuse cell teaches nothing about fusion"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    res = demo.run(path, tmp_path)
    assert res.error is None, res.error
    assert not res.empty, f"code cells without output: {res.empty}"
    assert not res.no_report, f"%%fuse cells without {demo.REPORT_MIME}: {res.no_report}"
    for cell in demo.fuse_cells(res.nb):
        data = next(o["data"] for o in cell.outputs if demo.REPORT_MIME in o.get("data", {}))
        report = data[demo.REPORT_MIME]
        report = json.loads(report) if isinstance(report, str) else report
        assert report["schema"] >= 1 and report["error"] is None and report["kernels"] >= 1
        assert "text/html" in data and "jupyter-fuse-report" in data["text/html"]
        dry = " --dry-run" if report["options"].get("dry_run") else ""
        assert data["text/plain"].startswith(f"fuse[{report['backend']}{dry}]")
    page = res.html.read_text(encoding="utf-8")
    assert page.count('class="jupyter-fuse-report"') == len(demo.fuse_cells(res.nb))
    assert "application/vnd.jupyter.widget-state+json" not in page  # the static report, no CDN widget loader


@pytest.mark.parametrize("story", STORIES[:2])
def test_a_story_runs_as_on_a_fresh_machine(story, tmp_path, monkeypatch):
    """As ``make demo`` runs on a fresh machine: kernels compile in the background (the tests compile
    them where they run) and no kernel is on disk yet, so the first cells' kernels run as NumPy while
    numba compiles them; the stories still show each kernel's code."""
    monkeypatch.setenv("JUPYTER_FUSE_COMPILE", "background")
    monkeypatch.setenv("JUPYTER_FUSE_CACHE_DIR", str(tmp_path / "kernels"))
    res = demo.run(next(p for p in NOTEBOOKS if p.stem == story), tmp_path)
    assert res.ok, res.problems()


def _nb(*cells):
    return new_notebook(cells=list(cells))


def test_checks_catch_missing_outputs_and_reports():
    shown = new_code_cell("%%fuse\ny = x + 1", outputs=[new_output("display_data", data={"text/plain": "fuse"})])
    quiet = new_code_cell("%%fuse -q\ny = x + 1")
    tagged = new_code_cell("x = 1", metadata={"tags": [demo.ALLOW_EMPTY]})
    silent = new_code_cell("z = 2")
    nb = _nb(shown, quiet, tagged, silent)
    assert demo.missing_outputs(nb) == ["%%fuse -q", "z = 2"]
    assert demo.missing_reports(nb) == ["%%fuse"]  # -q displays nothing by design
    shown.outputs[0]["data"][demo.REPORT_MIME] = {"schema": 1}
    assert demo.missing_reports(nb) == []


def test_a_failing_cell_fails_the_run_and_is_still_written(tmp_path):
    path = tmp_path / "broken.ipynb"
    nbformat.write(_nb(new_code_cell("print('before')"), new_code_cell("1 / 0"), new_code_cell("print('after')")), path)
    res = demo.run(path, tmp_path / "out")
    assert not res.ok and "ZeroDivisionError" in res.error and "\x1b[" not in res.error
    assert res.html.exists() and "ZeroDivisionError" in res.html.read_text(encoding="utf-8")
    assert demo.main([str(path), "--out", str(tmp_path / "out2")]) == 1
