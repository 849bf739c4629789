"""`python -m build` makes an sdist and, from it, a wheel that `twine check` accepts, and
the wheel holds every module, template and py.typed of the source tree: what a release
uploads is complete without installing it (CHANGELOG.md: how a release is cut).

Offline: `--no-isolation` builds with what the test extra installed (no index is asked
for setuptools); a copy of the sources is built, so nothing is written into the
checkout."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed
from pathlib import Path

import pytest

from conftest import IN_CI, ROOT


def _missing(why: str) -> None:
    if IN_CI:
        pytest.fail(f"{why}; .ci/run installs the test extra", pytrace=False)
    pytest.skip(f"{why} (pip install -e '.[test]')")


def _need_build_tools(pyproject: dict[str, dict[str, list[str]]]) -> None:
    for module in ("build", "twine", "packaging"):
        if importlib.util.find_spec(module) is None:
            _missing(f"{module} is not installed")
    from packaging.requirements import Requirement

    for spec in pyproject["build-system"]["requires"]:
        req = Requirement(spec)
        try:
            have = installed(req.name)
        except PackageNotFoundError:
            _missing(f"{req.name} is not installed")
        if not req.specifier.contains(have, prereleases=True):
            _missing(f"{req} is needed to build, {have} is installed")


def _sources(dest: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("compiler", "targets"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def _expected_wheel_files(pyproject: dict[str, dict[str, dict[str, object]]]) -> set[str]:
    """Every module and data file of the source tree, by its name in the wheel."""
    dirs: dict[str, str] = pyproject["tool"]["setuptools"]["package-dir"]  # type: ignore[assignment]
    want = set()
    for package, folder in dirs.items():
        prefix = package.replace(".", "/")
        for path in (ROOT / folder).rglob("*"):
            rel = path.relative_to(ROOT / folder).as_posix()
            if "__pycache__" in rel or path.is_dir():
                continue
            if path.suffix in {".py", ".j2"} or path.name == "py.typed":
                want.add(f"{prefix}/{rel}")
    return want


def test_build_makes_a_wheel_and_an_sdist_that_twine_accepts_holding_every_module(
    tmp_path: Path,
) -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        pyproject = tomllib.load(f)
    _need_build_tools(pyproject)
    version = pyproject["project"]["version"]
    dist = tmp_path / "dist"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--outdir",
            dist,
            _sources(tmp_path / "src"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheel, sdist = dist / f"hostc-{version}-py3-none-any.whl", dist / f"hostc-{version}.tar.gz"
    assert {p.name for p in dist.iterdir()} == {sdist.name, wheel.name}

    r = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", wheel, sdist],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("PASSED") == 2, r.stdout

    names = set(zipfile.ZipFile(wheel).namelist())
    want = _expected_wheel_files(pyproject)
    assert "hostc/py.typed" in want and any(n.endswith(".j2") for n in want)
    assert sorted(want - names) == [], "pyproject.toml's packages miss these"
    entry_points = zipfile.ZipFile(wheel).read(f"hostc-{version}.dist-info/entry_points.txt")
    assert b"hostc = hostc.__main__:main" in entry_points

    with tarfile.open(sdist) as tar:
        in_sdist = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "compiler/py.typed"} <= in_sdist
    assert any(n.startswith("targets/templates/") for n in in_sdist)
