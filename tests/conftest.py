"""Shared test helpers: where the shared topologies live, the CI rule for validators, and
`--regen`, the one command that rewrites every generated file (golden/, schemas/, the
example snapshots): `python -m pytest --regen`, then review `git diff`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hostc import api
from hostc.plan import Plan

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "helpers"))

ROOT = Path(__file__).resolve().parents[1]
#: the example hosts: examples/<name>/node.toml and its snapshot
EXAMPLES = ROOT / "examples"
EXAMPLE_NAMES = sorted(p.parent.name for p in EXAMPLES.glob("*/node.toml"))
#: real topologies and consumers' harnesses, beside the checkout (not in it)
SHARED = ROOT.parent / "shared"
SHARED_TOPOLOGIES = SHARED / "topologies"
IN_CI = os.environ.get("CI") == "true"
T = TypeVar("T")


def need_tool(name: str) -> str:
    """The path of a real validator or linter; under CI=true a missing one fails instead
    of skipping.  The interpreter's own bin/ comes first: `venv/bin/python -m pytest`
    without an activated venv still finds the venv's ruff and mypy instead of skipping."""
    path = shutil.which(
        name, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    if path is None:
        if IN_CI:
            pytest.fail(f"validator {name!r} is missing; .ci/run must install it")
        pytest.skip(f"{name} not installed")
    return path


def shared(*parts: str) -> Path:
    """A path under ../shared: real topologies (`topologies/hwloc/…`) or a consumer's
    harness (`tools/cloud-init-apply`).  The README's fresh clone has no ../shared, so
    locally a missing one skips naming the path; under CI=true it fails."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        if IN_CI:
            pytest.fail(f"{path} is missing; CI must provide ../shared")
        pytest.skip(f"{path} not present (../shared sits beside the checkout)")
    return path


def example_plan(name: str) -> Plan:
    """The Plan of examples/<name>/node.toml."""
    return api.compile_file(EXAMPLES / name / "node.toml")[0]


def nonempty(params: Iterable[T], why: str) -> list[T] | list[Any]:
    """Parameters that are never silently none: with none (../shared absent), one
    parameter that skips with `why`; under CI=true a collection failure."""
    found = list(params)
    if found:
        return found
    if IN_CI:
        pytest.fail(f"{why}; CI must provide it", pytrace=False)
    return [pytest.param(None, id="absent", marks=pytest.mark.skip(reason=why))]


def run_hostc(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m hostc ARGS` in a child, as a user runs it; text output."""
    return subprocess.run(
        [sys.executable, "-m", "hostc", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen",
        action="store_true",
        help="rewrite every generated file (golden/, schemas/, example snapshots) from the "
        "code before the tests run; review the change with git diff",
    )


def pytest_configure(config: pytest.Config) -> None:
    """With --regen, regenerate before collection, so the tests then check the new files."""
    if config.getoption("--regen"):
        from regenerate import regenerate

        changed = regenerate()
        config.stash[_REGENERATED] = [str(p.relative_to(ROOT)) for p in changed]


_REGENERATED = pytest.StashKey[list[str]]()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    changed = config.stash.get(_REGENERATED, None)
    if changed is not None:
        terminalreporter.write_line(f"--regen: {len(changed)} generated files changed")
        for path in changed[:50]:
            terminalreporter.write_line(f"  {path}")
