"""docs/architecture.md stays the map of the code it describes.

Its package table is the layer table (`LAYERS` in test_architecture.py), rank for rank;
every package under compiler/ (and hostc.targets) has a row; every row names code that
exists; every repository path the page names exists; its exit codes are the CLI's.  A
new package, a moved module or a renamed file fails here until the page says so, which
is how design changes land in the same commit as the code (the page's first rule).
"""

from __future__ import annotations

import re
from pathlib import Path

from test_architecture import LAYERS

from conftest import ROOT

DOC = ROOT / "docs" / "architecture.md"
#: a backticked name of a row: `hostc`, `hostc.delivery.effects`, `hostc.__main__`
_PACKAGE = re.compile(r"`(hostc(?:\.[A-Za-z_][\w]*)*)`")
#: the repository's own top-level entries: a backticked word that starts with one of
#: them and a slash (or is one) is a path into the repository
TOP = frozenset(p.name for p in ROOT.iterdir() if not p.name.startswith("."))


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table(text: str, *header: str) -> list[list[str]]:
    """The rows of the first Markdown table whose header starts with `header`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and _cells(line)[: len(header)] == list(header):
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(_cells(row))
            return rows
    return []


def package_rows(text: str) -> list[tuple[int, str]]:
    """(rank, package) per row of the page's package table (`| rank | package | …`)."""
    out = []
    for cells in table(text, "rank", "package"):
        m = _PACKAGE.fullmatch(cells[1])
        out.append((int(cells[0]) if cells[0].isdigit() else -1, m.group(1) if m else cells[1]))
    return out


def declared_layers() -> list[tuple[int, str]]:
    return sorted((rank, name) for rank, names in LAYERS.items() for name in names)


def _exists(name: str) -> bool:
    """Whether a LAYERS name is code: `hostc` the package, `hostc.targets` the targets
    tree, any other a folder of modules or a module under compiler/."""
    parts = name.split(".")[1:]
    if parts[:1] == ["targets"]:
        base = ROOT / "targets" / Path(*parts[1:]) if parts[1:] else ROOT / "targets"
    else:
        base = ROOT / "compiler" / Path(*parts) if parts else ROOT / "compiler"
    return any(base.glob("*.py")) if base.is_dir() else base.with_suffix(".py").is_file()


def named_paths(text: str) -> list[str]:
    """Every repository path the page names in backticks (`compiler/delivery/effects.py`,
    `targets/templates/`, `pyproject.toml`), a `:LINE` suffix cut off."""
    out = []
    for word in re.findall(r"`([^`\s]+)`", text):
        word = re.sub(r":\d+$", "", word)
        if word.split("/")[0] in TOP:
            out.append(word)
    return out


def missing_paths(text: str) -> list[str]:
    """The named paths that do not exist (`<name>` in a path matches any one name)."""
    missing = []
    for path in named_paths(text):
        pattern = re.sub(r"<[^>/]+>", "*", path.rstrip("/"))
        if not (any(ROOT.glob(pattern)) if "*" in pattern else (ROOT / pattern).exists()):
            missing.append(path)
    return missing


def test_the_page_says_design_changes_go_there_with_the_code() -> None:
    first = DOC.read_text().split("\n## ")[0]
    assert "same commit" in first and "test_architecture_doc.py" in first


def test_the_package_table_is_the_layer_table() -> None:
    """One row per LAYERS name, at its rank: a package moved, added or dropped in the
    layer test is moved, added or dropped on the page too."""
    rows = package_rows(DOC.read_text())
    assert len(rows) == len(set(rows)), "a package has two rows"
    want = declared_layers()
    assert sorted(rows) == want, (
        f"rows the layer test lacks: {sorted(set(rows) - set(want))}; "
        f"layers the page lacks: {sorted(set(want) - set(rows))}"
    )


def test_every_package_under_compiler_has_a_row() -> None:
    names = {name for _, name in package_rows(DOC.read_text())}
    # a folder holding any module is a package of hostc (a namespace one too)
    found = {f"hostc.{p.parent.name}" for p in (ROOT / "compiler").glob("*/*.py")}
    assert len(found) > 10, "the source tree was not found"
    assert sorted((found | {"hostc.targets"}) - names) == []


def test_every_row_names_code_that_exists() -> None:
    rows = package_rows(DOC.read_text())
    assert [name for _, name in rows if not _exists(name)] == []


def test_every_path_the_page_names_exists() -> None:
    text = DOC.read_text()
    assert len(named_paths(text)) > 50, "the page's paths were not found"
    assert missing_paths(text) == []


def test_the_exit_codes_are_the_clis() -> None:
    from hostc.cli.base import EXIT_CODES

    cli = re.findall(r"^  (\d+)\s", EXIT_CODES, re.M)
    page = [cells[0] for cells in table(DOC.read_text(), "code", "meaning")]
    assert cli and page == cli


def test_the_checks_above_can_fail() -> None:
    """A row missing, a rank changed, a bad path: each is seen."""
    text = DOC.read_text()
    dropped = text.replace("| 3 | `hostc.resolve` |", "| 4 | `hostc.resolve` |", 1)
    assert dropped != text and sorted(package_rows(dropped)) != declared_layers()
    gone = "\n".join(ln for ln in text.splitlines() if "| `hostc.audit` |" not in ln)
    assert gone != text and sorted(package_rows(gone)) != declared_layers()
    assert missing_paths("see `compiler/no_such_module.py` and `golden/<name>/plan.json`") == [
        "compiler/no_such_module.py"
    ]
    assert not _exists("hostc.no_such_package") and _exists("hostc.delivery.effects")
