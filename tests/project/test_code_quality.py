"""ruff, mypy --strict, the architecture rule, module sizes and packaging, run as tests."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, need_tool

SOURCES = [*sorted((ROOT / "compiler").rglob("*.py")), *sorted((ROOT / "targets").rglob("*.py"))]


def test_ruff_check() -> None:
    ruff = need_tool("ruff")
    r = subprocess.run(
        [ruff, "check", "compiler", "targets", "tests"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format() -> None:
    ruff = need_tool("ruff")
    r = subprocess.run(
        [ruff, "format", "--check", "compiler", "targets", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_as_pyproject_configures_it(tmp_path: Path) -> None:
    """`mypy` with no arguments, from the checkout, as a contributor runs it: strict,
    over the package through typecheck/hostc (the package-dir mapping, mirrored) and
    over benchmarks/, whose figures the closing notes quote."""
    need_tool("mypy")
    checked = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert set(checked) == {"typecheck/hostc", "benchmarks"}, checked
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no issues found in" in r.stdout and int(r.stdout.split(" in ")[1].split()[0]) > 150


def test_the_typecheck_mirror_is_the_package() -> None:
    """typecheck/hostc links every top-level entry of compiler/ and targets/, nothing
    else: a new module or package is checked by `mypy` the day it is written."""
    mirror = ROOT / "typecheck" / "hostc"
    want = {p.name: p for p in (ROOT / "compiler").iterdir() if p.name != "__pycache__"}
    want["targets"] = ROOT / "targets"
    have = {p.name: p for p in mirror.iterdir()}
    assert set(have) == set(want), f"missing {set(want) - set(have)}, extra {set(have) - set(want)}"
    for name, link in have.items():
        assert link.is_symlink() and link.resolve() == want[name].resolve(), name


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


@pytest.mark.parametrize("path", sorted((ROOT / "targets").rglob("*.py")), ids=lambda p: p.name)
def test_targets_read_only_the_plan(path: Path) -> None:
    bad = {
        m
        for m in _imports(path)
        if m.startswith(("hostc.spec", "hostc.topology", "hostc.check", "hostc.lower"))
    }
    assert not bad, f"{path.name} imports {bad}: targets may read only the Plan"


#: The most lines a module (a function) may have: past that it holds more than one job,
#: and a new job gets a module (a function) named for it.  mkosi's users complain of a
#: 6,000-line one.
MODULE_LINES, FUNCTION_LINES = 400, 60


def oversized_modules(paths: list[Path], limit: int = MODULE_LINES) -> list[str]:
    """Every module of `paths` over `limit` lines, with its count."""
    counts = ((p, len(p.read_text().splitlines())) for p in paths)
    return [f"{_shown(p)} ({n} lines)" for p, n in counts if n > limit]


def overlong_functions(paths: list[Path], limit: int = FUNCTION_LINES) -> list[str]:
    """Every function of `paths` over `limit` lines, as `module:line name (n lines)`."""
    out = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append(f"{_shown(path)}:{node.lineno} {node.name} ({n} lines)")
    return out


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def test_no_module_is_over_400_lines() -> None:
    """One test for every module, failing with the whole list (not one case per file)."""
    found = oversized_modules(SOURCES)
    assert not found, f"{len(found)} modules over {MODULE_LINES} lines: " + ", ".join(found)


def test_no_function_is_over_60_lines() -> None:
    found = overlong_functions(SOURCES)
    assert not found, f"{len(found)} functions over {FUNCTION_LINES} lines: " + ", ".join(found)


def test_the_size_checks_name_every_offender(tmp_path: Path) -> None:
    """The two checks above can fail, and name each offender, not just the first."""
    short, long_a, long_b = (tmp_path / f"{n}.py" for n in ("short", "long_a", "long_b"))
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_LINES))  # + def = limit + 1
    short.write_text("def fine():\n    return 1\n" * 10)
    long_a.write_text("def too_long():\n" + body + "x = 1\n" * MODULE_LINES)
    long_b.write_text("def fine():\n    pass\n" + "y = 2\n" * (MODULE_LINES - 1))
    paths = [short, long_a, long_b]
    assert oversized_modules(paths) == [
        f"{long_a} ({MODULE_LINES + FUNCTION_LINES + 1} lines)",
        f"{long_b} ({MODULE_LINES + 1} lines)",
    ]
    assert overlong_functions(paths) == [f"{long_a}:1 too_long ({FUNCTION_LINES + 1} lines)"]
    assert oversized_modules([short]) == overlong_functions([short, long_b]) == []


def test_every_package_is_listed_in_pyproject() -> None:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(cfg["tool"]["setuptools"]["packages"])
    found = {
        "hostc." + ".".join(p.parent.relative_to(ROOT / "compiler").parts)
        for p in (ROOT / "compiler").rglob("__init__.py")
    }
    found = {f.rstrip(".") for f in found} | {"hostc.targets"}
    found = {"hostc" if f == "hostc." else f for f in found}
    assert found == listed


def test_cold_build_imports_stay_light() -> None:
    """`hostc build` must not pull heavy modules it does not use onto the start-up path."""
    code = (
        "import sys, hostc.cli.main, hostc.api; "
        "print(','.join(sorted(m for m in ('rich','jinja2','xml.etree.ElementTree','tarfile')"
        " if m in sys.modules)))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "", f"imported at start-up: {r.stdout.strip()}"
