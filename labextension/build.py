"""Build the JupyterLab extension into jupyter_fuse/labextension (offline but for npm).

    python labextension/build.py            # build if any source is newer than the output
    python labextension/build.py --force    # build anyway
    python labextension/build.py --check    # exit 1 if a build is needed, 0 if not

Steps: `npm ci` (only when node_modules is missing or older than package-lock.json),
`tsc -b`, then JupyterLab's extension builder with `--core-path` pointing at the
installed jupyterlab's `staging/` (the plain `jupyter labextension build` looks up
`@jupyterlab/core-meta` on the network and fails here). Used by the Makefile and by
the hatch build hook (hatch_build.py), so `pip wheel .` ships a prebuilt extension.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUTPUT = ROOT / "jupyter_fuse" / "labextension"
OUTPUT_MARKER = OUTPUT / "package.json"
SOURCES = ("src", "style", "package.json", "package-lock.json", "tsconfig.json")


def source_files() -> list[Path]:
    files: list[Path] = []
    for name in SOURCES:
        p = HERE / name
        if p.is_dir():
            files.extend(f for f in p.rglob("*") if f.is_file() and "__tests__" not in f.parts)
        elif p.exists():
            files.append(p)
    return files


def needs_build() -> bool:
    """True when the output is missing or older than any source file."""
    if not OUTPUT_MARKER.exists():
        return True
    built = OUTPUT_MARKER.stat().st_mtime
    return any(f.stat().st_mtime > built for f in source_files())


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=HERE, check=True)


def _npm_install() -> None:
    lock, installed = HERE / "package-lock.json", HERE / "node_modules" / ".package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("building the JupyterLab extension needs Node.js and npm (apt-get install nodejs npm)")
    _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"])


def _core_package_file() -> Path:
    import jupyterlab  # the running jupyterlab's core package.json pins the shared packages

    return Path(jupyterlab.__file__).resolve().parent / "staging" / "package.json"


def build() -> None:
    t0 = time.perf_counter()
    _npm_install()
    node = shutil.which("node") or sys.exit("building the JupyterLab extension needs Node.js")
    _run([node, str(HERE / "node_modules" / "typescript" / "bin" / "tsc"), "-b"])
    core = _core_package_file()
    try:  # jupyterlab >= 4.6 delegates to jupyter_builder
        from jupyter_builder.federated_extensions import build_labextension

        build_labextension(str(HERE), core_package_file=str(core))
    except ImportError:
        from jupyterlab.federated_labextensions import build_labextension

        build_labextension(str(HERE), core_path=str(core.parent))
    OUTPUT_MARKER.touch()  # the marker is what needs_build() compares against
    print(f"built the JupyterLab extension into {OUTPUT.relative_to(ROOT)} in {time.perf_counter() - t0:.1f} s")


def main(argv: list[str]) -> int:
    if "--check" in argv:
        return int(needs_build())
    if "--force" in argv or needs_build():
        build()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    sys.exit(main(sys.argv[1:]))
