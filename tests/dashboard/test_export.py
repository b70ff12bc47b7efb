"""Reports as files (JSON, a standalone HTML page), the measured copy bandwidth, compile progress."""

from __future__ import annotations

import json

import numpy as np
import pytest

import jupyter_fuse as jf
from jupyter_fuse import progress
from jupyter_fuse.dashboard import bandwidth, export, figures, html, stats
from jupyter_fuse.dashboard.panel import Panel
from jupyter_fuse.report import Report, load


@pytest.mark.parametrize("suffix", [".json", ".html"])
def test_save_and_load_round_trip(fused, tmp_path, suffix):
    path = fused.save(tmp_path / f"report{suffix}")
    back = load(path)
    assert isinstance(back, Report) and back.to_dict() == fused.to_dict()


def test_a_real_report_round_trips(tmp_path):
    ns = {"np": np, "x": np.linspace(0, 1, 100)}
    r = jf.run_cell("y = np.sin(x) * 2\ns = float(y.sum())", ns, "numpy")
    assert load(r.save(tmp_path / "r.html")).to_dict() == r.to_dict()
    assert json.loads((r.save(tmp_path / "r.json")).read_text())["schema"] == r.to_dict()["schema"]


def test_the_page_stands_alone(fused, tmp_path):
    page = (fused.save(tmp_path / "r.html")).read_text()
    assert page.startswith("<!doctype html>") and "prefers-color-scheme: dark" in page
    assert page.count("<script") == 1 and 'type="application/json"' in page  # data, never code
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert html.render(fused) in page


def test_save_refuses_other_suffixes(fused, tmp_path):
    with pytest.raises(ValueError, match=".json or .html"):
        fused.save(tmp_path / "r.txt")


def test_the_panel_buttons_export(fused, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = Panel(fused, name="fuse-report-In7")
    p.export_json.click()
    p.export_html.click()
    assert load(tmp_path / "fuse-report-In7.json").to_dict() == fused.to_dict()
    assert load(tmp_path / "fuse-report-In7.html").to_dict() == fused.to_dict()
    assert "saved fuse-report-In7.html" in p.export_status.value


def test_copy_bandwidth_is_measured_once():
    first = bandwidth.copy_rate("host")
    assert first is not None and 1e8 < first < 1e13  # between 0.1 GB/s and 10 TB/s: a real measurement
    assert bandwidth.copy_rate("host") is first  # cached for the process
    assert bandwidth.device_of({"backend": "cupy", "options": {"dry_run": True}}) == "host"


def test_kernels_are_held_against_the_copy_bandwidth(fused):
    d = fused.to_dict()
    rows = stats.kernel_rows(d, copy_rate=16e3 / 1e-3)  # as if a copy moved 16 kB per ms
    k0 = rows[0]
    assert k0["rate"] == pytest.approx(16008 / 0.002) and k0["of_copy"] == pytest.approx(0.5003, rel=1e-3)
    assert k0["floor"] == pytest.approx(16008 / 16e6)
    fig = figures.bandwidth_figure(d)
    assert [b for b in fig.data[0].x] == ["k0", "k1"] and fig.layout.shapes  # the measured copy line
    assert "copy bandwidth" in fig.layout.annotations[0].text and "of a copy" in fig.data[0].hovertext[0]
    assert "of copy)" in html.kernels_table(d, stats.kernel_rows(d, bandwidth.floor_for(d)))


def test_progress_goes_to_the_sink_else_stderr(capsys):
    seen: list[str] = []
    with progress.shown_by(seen.append):
        progress.say("compiling k0")
    assert seen == ["compiling k0"] and capsys.readouterr().err == ""
    progress.say("compiling k1")
    assert capsys.readouterr().err == "jupyter_fuse: compiling k1\n"


def test_first_use_is_accounted_for():
    from jupyter_fuse.magic import _note_first_use

    r = Report(backend="cpu", times={"guard": 0.0, "trace": 0.1, "plan": 0.0, "compile": 2.0, "run": 0.28,
                                     "total": 2.38})
    _note_first_use(r, 10.0, {"numba.core", "llvmlite.binding", "json"})
    assert r.times["load"] == pytest.approx(7.62) and r.times["total"] == 10.0
    assert r.options["loaded"] == "llvmlite, numba"
    assert "first use 7.62 s" in r.summary() and "total 10.0 s" in r.summary()
    assert "loading llvmlite, numba" in stats.time_note(r.to_dict())
    plain = Report(backend="cpu", times={"total": 1.0})
    _note_first_use(plain, 1.5, {"json"})  # nothing heavy loaded: nothing to say
    assert "load" not in plain.times and plain.times["total"] == 1.0


def test_dry_run_times_are_labelled(fused):
    fused.options["dry_run"] = True
    fused.backend = "cupy"
    assert "run 3.00 ms (NumPy on the host)" in fused.summary()
    assert "times are NumPy's on the host" in stats.time_note(fused.to_dict())
    assert "NumPy&#x27;s on the host" in html.timeline_svg(fused.to_dict())


def test_export_page_reads_embedded_json_only():
    with pytest.raises(ValueError, match="no embedded"):
        export.report_json("<html></html>")
