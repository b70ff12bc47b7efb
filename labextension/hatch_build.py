"""Hatch build hook: ship the prebuilt JupyterLab extension in the wheel.

A regular wheel (`pip install .`, `pip wheel .`) builds the extension when it is
missing or stale (labextension/build.py) and puts it under
`share/jupyter/labextensions/jupyter-fuse`, so installing the wheel is all a user
does. An editable install (`make install`) builds nothing here: the Makefile
builds the extension and links it into the venv, so a rebuild needs no reinstall.
jupyterlab is asked for as a build requirement only when a build is needed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

_HERE = Path(__file__).resolve().parent


def _build_module() -> Any:
    spec = importlib.util.spec_from_file_location("_jupyter_fuse_labext_build", _HERE / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LabextensionBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        return ["jupyterlab>=4.0,<5"] if _build_module().needs_build() else []

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        build = _build_module()
        if build.needs_build():
            build.build()
        out = build.OUTPUT.relative_to(Path(self.root).resolve()).as_posix()
        build_data["shared_data"][out] = "share/jupyter/labextensions/jupyter-fuse"
