"""ruff, mypy --strict, the architecture rule, module sizes and packaging, run as tests."""

from __future__ import annotations

import ast
import os
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


def _module_name(path: Path) -> str:
    if path.is_relative_to(ROOT / "targets"):
        rel = ("targets", *path.relative_to(ROOT / "targets").with_suffix("").parts)
        parts = ["hostc", *rel]
    else:
        parts = ["hostc", *path.relative_to(ROOT / "compiler").with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_imports(path: Path) -> set[str]:
    """Modules imported at module level (function-level imports are lazy by design)."""
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` is not an import at run time
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{a.name}" for a in node.names}
            # `from pkg import mod` needs pkg/__init__ only when a name is not a module
            known = {_module_name(p) for p in SOURCES if p.suffix == ".py"}
            out |= subs & known
            if subs - known:
                out.add(node.module)
    return out


def test_no_import_cycles() -> None:
    """A module graph without cycles: each stage can be read, and imported, on its own."""
    paths = [p for p in SOURCES if p.suffix == ".py"]
    names = {_module_name(p): p for p in paths}
    graph = {
        name: {m for m in _module_imports(p) if m in names and m != name}
        for name, p in names.items()
    }
    assert "hostc.targets.grub" in graph and graph["hostc.api"], "the graph is not empty"
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycle = [*stack[stack.index(m) :], m]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_size(path: Path) -> None:
    """Small modules named for what they hold (mkosi's users complain of a 6,000-line one)."""
    assert len(path.read_text().splitlines()) <= 400


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_function_size(path: Path) -> None:
    """No function over 60 lines: past that, a function holds more than one job."""
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > 60
    ]
    assert not long, long


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
