"""ruff, mypy --strict, the architecture rule, module sizes and packaging, run as tests."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import need_tool

ROOT = Path(__file__).resolve().parents[1]
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


def test_mypy_strict(tmp_path: Path) -> None:
    """mypy cannot follow setuptools' package-dir mapping, so mirror the import layout."""
    need_tool("mypy")
    pkg = tmp_path / "hostc"
    pkg.symlink_to(ROOT / "compiler")
    # hostc.targets lives in targets/: give mypy a real package tree instead of the link
    pkg.unlink()
    for src in (ROOT / "compiler").rglob("*"):
        dest = pkg / src.relative_to(ROOT / "compiler")
        if src.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        elif src.suffix in (".py", ".typed"):
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(src)
    (pkg / "targets").symlink_to(ROOT / "targets")
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / ".mypy"),
            "-p",
            "hostc",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr


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


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_size(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 600


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
        "import sys, hostc.cli, hostc.api; "
        "print(','.join(sorted(m for m in ('rich','jinja2','xml.etree.ElementTree','tarfile')"
        " if m in sys.modules)))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "", f"imported at start-up: {r.stdout.strip()}"
