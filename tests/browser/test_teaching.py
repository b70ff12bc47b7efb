"""What a teacher sees in a real JupyterLab (Chromium): a notebook run, saved, closed and reopened;
both themes; cell numbers; a loop's graph; clicking a kernel to see its lines.

One notebook, run once (numpy backend: nothing to compile, so the test stays quick), then
looked at from several sides. Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import time

import nbformat
import pytest

from conftest import SCREENSHOTS, ConsoleLog
from test_labextension import (JS_ALL_RUN, MIME, assert_no_console_errors, cell_locator, notebook_cells,
                               open_notebook, write_with_cells)

NOTEBOOK = "teaching.ipynb"
# A workspace of its own: JupyterLab does not reopen the documents earlier tests left open in the default one.
WORKSPACE = f"lab/workspaces/teaching/tree/{NOTEBOOK}"
CELLS = [
    ("%load_ext jupyter_fuse\nimport numpy as np\nx = np.linspace(0, 1, 1000)\nu = np.linspace(0, 1, 100)", None),
    ("%%fuse -b numpy\nm = x.max()\ne = np.exp(x - m)\ns = e / e.sum()", "softmax"),
    ("print('a plain cell between')", None),
    ("%%fuse -b numpy\nfor i in range(7):\n    u[1:-1] = 0.5 * (u[:-2] + u[2:])\nv = u * 2", "loop"),
    ("%%fuse -b cpu\nw = x * 2 + 1", "compiled"),
    ("%fuse_dashboard", "dashboard"),
]

# WCAG contrast of an element's text against the first opaque background behind it
JS_CONTRAST = """(el) => {
  const rgb = s => { const m = s.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
                     const v = m[1].split(',').map(x => parseFloat(x)); return v.length > 3 && v[3] === 0 ? null : v; };
  const lum = v => { const c = v.slice(0, 3).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; };
  const style = getComputedStyle(el);
  const fg = rgb(el instanceof SVGElement ? style.fill : style.color);
  let node = el, bg = null;
  while (node && !bg) { if (node instanceof Element) bg = rgb(getComputedStyle(node).backgroundColor); node = node.parentNode; }
  bg = bg || [255, 255, 255];
  const [a, b] = [lum(fg), lum(bg)].sort((p, q) => q - p);
  return (a + 0.05) / (b + 0.05);
}"""


def _shut_down_kernel(lab_server, path: str) -> None:
    """End the notebook's session (and its kernel) through the server's REST API."""
    import json
    import urllib.request

    with urllib.request.urlopen(lab_server.url("api/sessions"), timeout=10) as r:
        sessions = [s for s in json.load(r) if s.get("path") == path]
    assert sessions, f"no session for {path}"
    for session in sessions:
        req = urllib.request.Request(lab_server.url(f"api/sessions/{session['id']}"), method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()


def _index(tag: str) -> int:
    return next(i for i, (_, t) in enumerate(CELLS) if t == tag)


def _command(page, command: str, args: str = "{}", seconds: float = 30) -> None:
    """Run a JupyterLab command and wait for it, at most ``seconds`` (a dialog must not hang the test)."""
    page.evaluate(f"""() => Promise.race([window.jupyterapp.commands.execute('{command}', {args}),
                                         new Promise((_, no) => setTimeout(() => no('{command} timed out'),
                                                                           {int(seconds * 1000)}))])""")


def _run_all(page) -> None:
    _command(page, "notebook:run-all-cells", seconds=120)
    page.wait_for_function(JS_ALL_RUN, timeout=120_000, polling=250)
    errors = [e for c in notebook_cells(page) for e in c["errors"]]
    assert not errors, errors


def _theme(page, name: str, light: bool) -> None:
    _command(page, "apputils:change-theme", f"{{theme: '{name}'}}")
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{str(light).lower()}'")
    page.wait_for_timeout(500)  # the theme's stylesheet applies


def _open_tab(cell, title: str) -> None:
    cell.locator(".widget-tab .lm-TabBar-tab", has_text=title).first.click()


@pytest.fixture(scope="module")
def taught(browser, lab_server):
    """The notebook, run once in JupyterLab and saved: (context, page)."""
    write_with_cells(nbformat.v4.new_notebook(), CELLS, lab_server.root / NOTEBOOK)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.console = ConsoleLog(page)
    open_notebook(page, lab_server, WORKSPACE)
    _run_all(page)
    try:
        yield page
    finally:
        context.close()


def test_cell_numbers_agree_with_the_prompts(taught):
    page = taught
    softmax, loop = cell_locator(page, _index("softmax")), cell_locator(page, _index("loop"))
    prompts = [c.locator(".jp-InputArea-prompt").first.inner_text().strip() for c in (softmax, loop)]
    numbers = [p.strip("[]: ") for p in prompts]
    assert all(n.isdigit() for n in numbers), prompts
    dashboard = cell_locator(page, _index("dashboard"))
    options = dashboard.locator(".widget-dropdown select option").all_inner_texts()
    assert [o.replace("\xa0", " ").split(":")[0] for o in options][:2] == [f"In [{n}]" for n in numbers]
    _command(page, "jupyter-fuse:show-sidebar")
    heads = page.locator("#jupyter-fuse-sidebar .jp-FuseSidebar-itemHead").all_inner_texts()
    assert [h.split("]")[0].strip("[ ") for h in heads][:2] == numbers
    # compiling said nothing on stderr and left nothing in the outputs (the status line is emptied)
    compiled = notebook_cells(page)[_index("compiled")]
    assert "compiling" not in compiled["text"] and compiled["report"] is not None


def test_a_loop_graph_groups_its_iterations(taught):
    page = taught
    cell = cell_locator(page, _index("loop"))
    _open_tab(cell, "Fusion graph")
    plot = cell.locator(".jupyter-fuse-plot .js-plotly-plot:visible").first
    plot.locator(".main-svg").first.wait_for()
    assert "loop ×7" in plot.text_content()  # (seven steps: traced whole; a longer loop runs ahead, loops.py)
    labels = [t.text_content() for t in plot.locator(".textpoint").all()]
    assert labels.count("u = setitem") == 1 and "u[:-2]" in labels and "u[2:]" in labels
    cell.screenshot(path=str(SCREENSHOTS / "teaching_loop_graph.png"))


def test_clicking_a_kernel_highlights_its_lines(taught):
    page = taught
    cell = cell_locator(page, _index("softmax"))
    _open_tab(cell, "Kernels")
    row = cell.locator("tr[data-fuse-lines]").nth(1)  # k1: subtract, on line 3 (the %%fuse line is line 1)
    assert row.get_attribute("data-fuse-lines") == "3"
    row.click()
    marked = cell.locator(".cm-line.jp-FuseLine-highlight")
    marked.first.wait_for()
    assert marked.all_inner_texts() == ["e = np.exp(x - m)"]
    cell.screenshot(path=str(SCREENSHOTS / "teaching_highlight.png"))
    row.click()  # the same kernel again: the highlight goes
    marked.first.wait_for(state="detached")
    last = cell.locator("tr[data-fuse-lines]").last
    last.click()
    assert cell.locator(".cm-line.jp-FuseLine-highlight").all_inner_texts() == ["s = e / e.sum()"]
    assert_no_console_errors(page)


@pytest.mark.parametrize("theme, light", [("JupyterLab Light", True), ("JupyterLab Dark", False)])
def test_panel_reads_in_both_themes(taught, theme, light):
    page = taught
    _theme(page, theme, light)
    try:
        cell = cell_locator(page, _index("compiled"))  # a compiled kernel: its generated source is shown
        _open_tab(cell, "Kernels")
        header = cell.locator(".jupyter-fuse-panel th").first
        source = cell.locator(".jupyter-fuse-panel .highlight pre").first
        assert header.evaluate(JS_CONTRAST) >= 4.5
        assert source.evaluate(JS_CONTRAST) >= 4.5
        _open_tab(cell, "Timeline")
        title = cell.locator(".jupyter-fuse-plot .js-plotly-plot:visible .gtitle").first
        title.wait_for()
        assert title.evaluate(JS_CONTRAST) >= 4.5  # plotly's text follows the theme too
        cell.screenshot(path=str(SCREENSHOTS / f"teaching_{'light' if light else 'dark'}.png"))
    finally:
        _theme(page, "JupyterLab Light", True)


def test_reopened_after_save_and_reload_the_reports_show(taught, lab_server):
    """Run, save, shut the kernel down, reload the page, reopen: every panel shows its report."""
    page = taught
    _command(page, "docmanager:save")
    saved = lab_server.root / NOTEBOOK
    deadline = time.monotonic() + 20
    while sum(1 for c in nbformat.read(saved, as_version=4).cells for o in c.get("outputs", [])
              if MIME in o.get("data", {})) < 2:
        assert time.monotonic() < deadline, "the notebook was not saved with its reports"
        time.sleep(0.3)
    _shut_down_kernel(lab_server, NOTEBOOK)  # as the server's "Shut Down Kernel" does: the widget models go
    page.reload()
    open_notebook(page, lab_server, WORKSPACE)
    for tag in ("softmax", "loop", "compiled"):
        cell = cell_locator(page, _index(tag))
        card = cell.locator(".jp-FuseFallback .jp-FuseCard, .jp-FuseCard")
        card.first.wait_for(timeout=30_000)
        assert "Error displaying widget" not in cell.inner_text()
    dashboard = cell_locator(page, _index("dashboard"))
    dashboard.locator(".jp-FuseFallback").first.wait_for(timeout=30_000)
    assert "jupyter_fuse session" in dashboard.inner_text()
    assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "teaching_reopened.png"))
