"""The native boundary is typed: the installed package ships _core.pyi (generated from the built
module at build time) and py.typed, and the stubs describe every public name of _core."""

from __future__ import annotations

import ast
from pathlib import Path

import ciyuan
from ciyuan import _core

PACKAGE = Path(ciyuan.__file__).parent


def test_stub_and_marker_are_installed():
    assert (PACKAGE / "py.typed").exists()
    assert (PACKAGE / "_core.pyi").exists(), "the build must install the generated _core.pyi beside _core"


def test_stub_names_every_public_native_name():
    tree = ast.parse((PACKAGE / "_core.pyi").read_text(encoding="utf-8"))
    stubbed = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            stubbed.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            stubbed.add(node.target.id)
        elif isinstance(node, ast.Assign):
            stubbed.update(t.id for t in node.targets if isinstance(t, ast.Name))
    public = {name for name in dir(_core) if not name.startswith("_")}
    assert public - stubbed == set()
