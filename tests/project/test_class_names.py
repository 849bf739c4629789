"""No two classes in hostc share a name: a reader never has to ask which `Governor`
is in scope (review 2.4)."""

from __future__ import annotations

import ast
from collections import defaultdict

from conftest import ROOT

#: The Plan's single-value runtime records that collapse into one generic `Value[T]`
#: (issue 18 item 1); until then each shares its name with its vocabulary enum.  The
#: test fails once a name here is no longer shared, so the list only shrinks.
PENDING_VALUE_RECORDS: frozenset[str] = frozenset()


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
    unexpected = {n: w for n, w in shared.items() if n not in PENDING_VALUE_RECORDS}
    assert not unexpected, f"class names defined more than once: {unexpected}"


def test_the_pending_list_is_not_stale() -> None:
    shared = {n for n, where in _classes().items() if len(where) > 1}
    assert shared >= PENDING_VALUE_RECORDS, (
        f"no longer shared, drop from PENDING_VALUE_RECORDS: {PENDING_VALUE_RECORDS - shared}"
    )
