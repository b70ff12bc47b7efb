"""Fixtures for the browser tests: a real JupyterLab server on loopback and Chromium.

Both are always stopped, also when a test fails (the fixtures clean up in
``finally``). Chromium is Debian's package (the Makefile installs it when
missing); the tests skip only when it truly cannot be had.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def _ensure_chromium() -> str:
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    if os.geteuid() == 0 and shutil.which("apt-get"):  # the Makefile normally did this already
        subprocess.run("apt-get update -qq && apt-get install -y -qq chromium", shell=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip("Debian's chromium is not installed and could not be installed")
    return CHROMIUM


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


class LabServer:
    def __init__(self, root: Path, port: int, token: str, log: Path):
        self.root, self.port, self.token, self.log = root, port, token, log
        self.base = f"http://127.0.0.1:{port}"

    def url(self, path: str) -> str:
        return f"{self.base}/{path.lstrip('/')}?token={self.token}"

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else ""


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """``jupyter lab`` on 127.0.0.1 in a private config/settings/runtime, with news off."""
    home = tmp_path_factory.mktemp("jupyter")
    root = home / "notebooks"
    root.mkdir()
    settings = home / "settings"
    _write_json(settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
                {"fetchNews": "false", "checkForUpdates": False})
    # every cell in the DOM, so the test sees all badges without scrolling
    _write_json(settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings",
                {"windowingMode": "none"})
    _write_json(home / "config" / "labconfig" / "page_config.json",
                {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    env = dict(os.environ,
               JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), IPYTHONDIR=str(home / "ipython"),
               JUPYTER_PLATFORM_DIRS="1", PYTHONUNBUFFERED="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    port, token = _free_port(), secrets.token_hex(16)
    server = LabServer(root, port, token, home / "server.log")
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
           f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
           "--JupyterNotebookApp.expose_app_in_browser=True", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    with open(server.log, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{server.log_tail()}")
            try:
                with urllib.request.urlopen(server.url("api/status"), timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab did not start in 60 s:\n{server.log_tail()}")
            time.sleep(0.3)
        yield server
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM the server's process group (it and its kernels), then SIGKILL what is left."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # kernels the server did not stop in time
    except (ProcessLookupError, PermissionError):
        pass
    if proc.poll() is None:
        proc.wait(timeout=5)


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium under playwright; closed (and playwright stopped) whatever happens."""
    executable = _ensure_chromium()
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()
    finally:
        pw.stop()


class ConsoleLog:
    """Every console error and uncaught page exception of a page."""

    def __init__(self, page):
        self.errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}\n{e.stack}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call":
        item.call_failed = rep.failed


@pytest.fixture
def page(browser, lab_server, request):
    """A fresh page (1400x1000) whose console errors are collected in ``page.console``."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    p = context.new_page()
    p.console = ConsoleLog(p)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / f"FAILED_{request.node.name}.png").unlink(missing_ok=True)  # from an earlier run
    try:
        yield p
        if getattr(request.node, "call_failed", False):  # what the page looked like when it failed
            p.screenshot(path=str(SCREENSHOTS / f"FAILED_{request.node.name}.png"))
            print("server log:\n" + lab_server.log_tail(), "\nconsole:\n" + "\n".join(p.console.errors))
    finally:
        context.close()
