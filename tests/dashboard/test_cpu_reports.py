"""The displays built from real cpu-backend Reports: generated sources, reduction cuts, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

import jupyter_fuse as jf
from jupyter_fuse.dashboard import figures, graph, html, mime, stats, text
from jupyter_fuse.dashboard.panel import Panel

pytest.importorskip("numba")

# a full reduction, then a row-wise softmax of what is left: the mean is a reduction boundary
SOFTMAX = "e = np.exp(X - X.mean())\np = e / e.sum(axis=1, keepdims=True)\n"
FALLBACKS = "s = np.sort(a * 2)\nc = np.cumsum(s) + 1\nm = A @ A\n"


@pytest.fixture(scope="module")
def softmax():
    ns = {"np": np, "X": np.random.default_rng(0).random((30, 20))}
    return jf.run_cell(SOFTMAX, ns, backend="cpu")


@pytest.fixture(scope="module")
def fallbacks():
    rng = np.random.default_rng(1)
    ns = {"np": np, "a": rng.random(100), "A": rng.random((10, 10))}
    return jf.run_cell(FALLBACKS, ns, backend="cpu")


def test_every_kernel_source_is_shown_highlighted(softmax):
    assert softmax.kernels >= 2 and all(k["source"] for k in softmax.kernel_list)
    p = Panel(softmax)
    for name in [k["name"] for k in softmax.kernel_list]:
        p.kernel_select.value = name
        assert "_kernel" in p.source.value and "prange" in p.source.value and "style=" in p.source.value
    page = html.render(softmax)
    assert page.count(" source (python)") == softmax.kernels


def test_reduction_cuts_carry_their_reason(softmax):
    d = softmax.to_dict()
    cuts = graph.draw(d).cuts
    assert any("reduction boundary" in c.reason for c in cuts)
    hover = next(t for t in figures.graph_figure(d).data if t.name == "cuts").hovertext
    assert any("reduction boundary" in h and "mean" in h for h in hover)
    assert "reduction boundary" in html.graph_svg(d)  # the static SVG's <title> hover too


def test_kernel_rows_match_the_report(softmax):
    rows = stats.kernel_rows(softmax.to_dict())
    assert [r["name"] for r in rows] == [k["name"] for k in softmax.kernel_list]
    assert [r["bytes_in"] for r in rows] == [k["bytes_read"] for k in softmax.kernel_list]
    assert all(r["lines"] for r in rows) and rows[0]["language"] == "python"
    assert stats.headline(softmax.to_dict())["saved"] > 0  # fusion moved fewer bytes than eager NumPy would


def test_transfers_tab_explains_the_cpu_backend(softmax):
    p = Panel(softmax)
    assert p.tab.titles[3] == "Transfers (0)"
    assert "host memory" in p.tabs["Transfers"].children[0].value


def test_fallback_and_library_kernels_say_why_they_have_no_source(fallbacks):
    d = fallbacks.to_dict()
    notes = {k["name"]: stats.no_source_note(d, k["name"]) for k in d["kernel_list"] if not k["source"]}
    assert any("np.sort is not supported lazily" in n for n in notes.values())
    assert any("library op" in n for n in notes.values())
    assert not any("np.np." in n for n in notes.values())
    assert "fallback (line 1): np.sort" in text.render(fallbacks)


def test_bundle_json_is_the_report(softmax):
    data = mime.bundle(softmax, widget=True)
    assert data[mime.REPORT_MIME] == softmax.to_dict()
    assert data["text/plain"].splitlines()[0] == softmax.summary()


# pairwise forces: dx and inv are the kernel's temporaries, written only because their names stay bound
FORCES = "dx = x[None, :] - x[:, None]\ninv = 1 / (dx * dx + 0.1)\nf = (dx * inv).sum(axis=1)\n"


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_temporaries_written_only_because_a_name_holds_them_are_shown(backend):
    def run(src):
        return jf.run_cell(src, {"np": np, "x": np.arange(6.0)}, backend=backend)

    r = run(FORCES)
    if backend == "numpy":  # one kernel per op: every value is written for the next kernel anyway
        assert r.bound_writes == [] and "written only because" not in repr(r)
        return
    assert [(w["names"], w["kernel"], w["bytes"]) for w in r.bound_writes] == [(["dx"], "k0", 288), (["inv"], "k0", 288)]
    assert "written only because a name still holds it: dx, inv (576 B" in repr(r)
    assert "written only because a name still holds it" in html.render(r)
    assert run(FORCES).bound_writes == r.bound_writes  # a replay reports it too
    gone = run(FORCES + "del dx, inv\n")
    assert gone.bound_writes == [] and "written only because" not in html.render(gone)
    assert sum(k["bytes_written"] for k in gone.kernel_list) == 48  # f alone
