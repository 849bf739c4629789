"""No two classes in hostc share a name: a reader never has to ask which `Governor`
is in scope (review 2.4)."""

from __future__ import annotations

import ast
from collections import defaultdict

from conftest import ROOT


def _classes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for top in ("compiler", "targets"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    found[node.name].append(str(path.relative_to(ROOT)))
    return found


def test_no_two_classes_share_a_name() -> None:
    shared = {n: where for n, where in _classes().items() if len(where) > 1}
    assert not shared, f"class names defined more than once: {shared}"
