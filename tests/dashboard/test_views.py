"""Text, HTML, stats and graph geometry built from known Reports."""

from __future__ import annotations

import json
import subprocess
import sys

from jupyter_fuse.dashboard import graph, html, stats, text
from jupyter_fuse.report import cache_phrase


def test_headline_numbers(fused):
    d = fused.to_dict()
    h = stats.headline(d)
    assert h["title"] == "8 ops -> 2 kernels"
    # eager: every op reads its operands and writes its result (mean writes 8 bytes, the const 2 reads nothing)
    sin = power = cos = multiply = 8000 + 8000
    add, mean, subtract = 3 * 8000, 8000 + 8, 8000 + 8 + 8000
    assert stats.eager_bytes(d) == sin + 2 * power + cos + add + mean + subtract + multiply
    assert h["moved"] == fused.bytes_moved == 8000 + 8008 + 8008 + 8000
    assert h["saved"] == h["eager"] - h["moved"] > 0
    assert h["cache"] == "traced again: x.shape (500,) -> (1000,)"


def test_eager_bytes_match_eager_run(eager):
    """On the NumPy backend without fusion, the estimate is exactly what the kernels moved."""
    d = eager.to_dict()
    assert stats.eager_bytes(d) == d["bytes_moved"]
    assert stats.bytes_saved(d) == 0


def test_guard_rows_mark_the_changed_guard(fused):
    rows = stats.guard_rows(fused.to_dict())
    assert [r["text"] for r in rows] == ["x.shape == (1000,)", "x.dtype == float64"]
    assert rows[0]["changed"] and (rows[0]["old"], rows[0]["new"]) == ("(500,)", "(1000,)")
    assert not rows[1]["changed"]


def test_guard_rows_keep_unmatched_changes():
    """A changed value no guard mentions still gets a row; a reason naming no change gets none."""
    d = {"guards": [], "miss_reasons": ["n 3 -> 4", "first run"]}
    rows = stats.guard_rows(d)
    assert [(r["text"], r["old"], r["new"]) for r in rows] == [("n", "3", "4")]
    assert all(r["changed"] for r in rows)


def test_cuts_carry_the_partitioner_reason(fused):
    (cut,) = graph.draw(fused.to_dict()).cuts
    assert (cut.frm, cut.to, cut.line) == ("k0", "k1", 3)
    assert sorted(cut.edges) == [(6, 8), (7, 8)]
    assert "reduction boundary" in cut.reason


def test_unexplained_crossing_edge_is_still_a_cut(fused):
    d = fused.to_dict()
    d["breaks"] = []
    (cut,) = graph.draw(d).cuts
    assert "reads it back" in cut.reason


def test_layout_skips_constants_and_orders_columns(fused):
    nodes = graph.draw(fused.to_dict()).nodes
    assert 2 not in nodes  # the scalar 2 is baked into the kernels
    assert nodes[0].x == 0 and nodes[1].x == 1 and nodes[9].x > nodes[8].x


def test_nodes_carry_the_users_names_and_mark_outputs(fused):
    nodes = graph.draw(fused.to_dict()).nodes
    assert nodes[0].label == "x" and nodes[0].kind == "input"
    assert (nodes[6].label, nodes[7].label, nodes[9].label) == ("y = add", "m = mean", "z = multiply")
    assert nodes[8].label == "subtract"  # an intermediate: the op's name
    assert {i for i, n in nodes.items() if n.output} == {6, 7, 9}
    assert nodes[1].tag == "k0" and nodes[8].tag == "k1" and not nodes[3].tag  # each kernel named once


def test_text_starts_with_the_summary(fused, eager):
    for r in (fused, eager):
        out = text.render(r)
        assert out.splitlines()[0] == r.summary()
    out = text.render(fused)
    assert "saved by fusion" in out and "changed since the last plan: x.shape == (1000,): (500,) -> (1000,)" in out


def test_text_caps_long_kernel_lists(eager):
    assert "more kernels" not in text.render(eager)
    r = eager
    r.kernel_list = r.kernel_list * 5
    assert "more kernels" in text.render(r)


def test_html_is_static_and_complete(fused):
    out = html.render(fused)
    assert "<script" not in out
    for needle in ("8 ops -&gt; 2 kernels", "Kernels (2)", "Fusion graph", "<svg", "Timeline", "Transfers (2)",
                   "Guards (2, 1 changed)", "reduction boundary", html.CHANGED, "sin, power ×2, cos, add, mean",
                   'data-fuse-lines="1,2"', "kernels 1% · compile 98% · overhead 1%"):
        assert needle in out, needle
    assert html.BAD not in out  # a changed guard is expected behaviour, not an error


def test_html_explains_empty_sections(eager):
    d = dict(eager.to_dict(), cache="off", guards=[], miss_reasons=[])  # a run outside the plan cache
    out = html.render(d)
    assert "computes in host memory" in out  # no transfers on CPU
    assert "No guards" in out
    assert "generated no source" in out


def test_highlight_uses_inline_styles():
    out = html.highlight("def f(x):\n    return x + 1\n", "python")
    assert "style=" in out and "class=" not in out.replace('class="highlight"', "")
    assert "var(--jp-mirror-editor-keyword-color" in out  # the theme's editor colours, light fallbacks


def test_dashboard_import_is_light():
    code = ("import sys, jupyter_fuse.dashboard, jupyter_fuse.dashboard.compare; "
            "print([m for m in ('ipywidgets', 'plotly') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == []


def test_a_first_run_miss_is_not_a_failed_guard():
    from jupyter_fuse.dashboard import stats, text

    d = {"backend": "cpu", "ops": 1, "kernels": 1, "kernel_list": [], "times": {"total": 0.0}, "cache": "miss",
         "guards": ["x: ndarray float64 (3,) C-contiguous"],
         "miss_reasons": ["no plan recorded for this cell yet (first run, or the cache was cleared)"]}
    assert [g["changed"] for g in stats.guard_rows(d)] == [False]
    assert "changed since" not in text.render(d) and "First run of this cell" in stats.guards_note(d)
    assert stats.headline(d)["cache"] == "first run: plan recorded for replay"
    assert stats.guards_title(d) == "Guards (1)"
    d["miss_reasons"] = ["x: dtype float64 -> float32"]
    (row,) = stats.guard_rows(d)
    assert row["changed"] and (row["old"], row["new"]) == ("dtype float64", "float32")
    assert "changed since the last plan: x: ndarray float64 (3,) C-contiguous: dtype float64 -> float32" \
        in text.render(d)
    assert stats.guards_title(d) == "Guards (1, 1 changed)"


def test_an_unreplayable_cell_says_why():
    from jupyter_fuse.dashboard import stats

    d = {"cache": "unreplayable", "guards": [], "miss_reasons": ["the cell calls print()"]}
    assert cache_phrase(d) == "traced every run: the cell calls print()"
    assert "never replayed, because the cell calls print()" in stats.guards_note(d)
    assert stats.guard_rows(d) == []


def test_a_long_unreplayable_reason_list_is_one_short_line():
    reasons = ["np.linalg.solve ran eagerly (np.linalg.solve is not supported lazily)",
               "np.fft.fft ran eagerly (np.fft.fft is not supported lazily)", "x.real read the array's data",
               "np.fft.fft ran eagerly (np.fft.fft is not supported lazily)"]
    d = {"cache": "unreplayable", "guards": [], "miss_reasons": reasons}
    assert cache_phrase(d) == f"traced every run: {reasons[0]} (+2 more)"
    assert stats.guards_note(d).count("np.fft.fft ran eagerly") == 1  # the details, once each


def test_eager_bytes_count_the_calls_outside_the_trace():
    """np.sort runs outside the trace on every backend: eager NumPy moves its bytes too."""
    import numpy as np

    import jupyter_fuse as jf

    ns = {"np": np, "x": np.random.default_rng(0).random(1000)}
    d = jf.run_cell("y = np.sin(x)\ns = np.sort(y)\nz = s * 2 + 1", ns, "numpy", fuse=False).to_dict()
    assert [k["kind"] for k in d["kernel_list"]].count("eager") == 1
    assert stats.eager_bytes(d) == d["bytes_moved"]
    fused = jf.run_cell("y = np.sin(x)\ns = np.sort(y)\nz = s * 2 + 1", ns, "cpu").to_dict()
    assert stats.bytes_saved(fused) > 0  # the two multiply-add ops fused; the sort is the same either way
