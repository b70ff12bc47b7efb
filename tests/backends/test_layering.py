"""Layering: a backend gets a plan and buffers and never imports the tracer or anything above it.

Every module of ``jupyter_fuse/backends/`` may import, of the package, only ``ir``, ``ops``,
``fuse``, ``views``, ``buffers``, ``report``, ``fperrors`` (NumPy's error mode, kept below the tracer
for the backends), the package root's plain attributes (``__version__``) and ``backends`` itself;
imports inside functions count too (they are read from the source with ``ast``, nothing is imported).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "jupyter_fuse"
ALLOWED = {"ir", "ops", "fuse", "views", "buffers", "report", "fperrors", "progress", "fmt", "program", "backends"}


def _is_module(name: str) -> bool:
    return (PACKAGE / f"{name}.py").exists() or (PACKAGE / name / "__init__.py").exists()


def forbidden_imports(source: str, package: str = "jupyter_fuse.backends") -> list[tuple[int, str]]:
    """(line, module) of every import of a ``jupyter_fuse`` module outside ``ALLOWED`` in ``source``,
    a module of ``package``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base == "jupyter_fuse":  # `from .. import views, __version__`: modules, or the root's attributes
                targets = [f"jupyter_fuse.{a.name}" if _is_module(a.name) else "jupyter_fuse" for a in node.names]
            else:
                targets = [base]
        for t in targets:
            parts = t.split(".")
            if parts[0] == "jupyter_fuse" and len(parts) > 1 and parts[1] not in ALLOWED:
                found.append((node.lineno, t))
    return found


def test_the_check_finds_what_it_should():
    bad = "from ..trace import LazyArray\ndef f():\n    from ..session import active\nimport jupyter_fuse.guards\n"
    assert sorted(forbidden_imports(bad)) == [(1, "jupyter_fuse.trace"), (3, "jupyter_fuse.session"),
                                              (4, "jupyter_fuse.guards")]
    ok = "from .. import views, __version__\nfrom ..fuse import Kernel\nfrom .numpy import run_node\nfrom . import cpu\n"
    assert forbidden_imports(ok) == []
    assert forbidden_imports("from .. import capture") == [(1, "jupyter_fuse.capture")]


@pytest.mark.parametrize("module", sorted(p.name for p in (PACKAGE / "backends").glob("*.py")))
def test_backends_import_nothing_above_them(module):
    source = (PACKAGE / "backends" / module).read_text()
    assert forbidden_imports(source) == [], f"backends/{module} imports above the backends"
