"""One version everywhere: pyproject's, the CHANGELOG's newest entry, `hostc --version`,
and the `rev: vX.Y.Z` tag that the pre-commit examples pin."""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT, run_hostc


def _version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        version: str = tomllib.load(f)["project"]["version"]
    return version


def test_version_is_semver() -> None:
    assert re.fullmatch(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)", _version())


def test_changelog_newest_version_is_the_package_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert versions[0] == "Unreleased"
    assert versions[1] == _version()
    assert f"[{_version()}]: " in text  # the link reference


def test_pre_commit_examples_pin_the_tag_of_this_version() -> None:
    tag = f"v{_version()}"
    for path in ("docs/ci.md", ".pre-commit-hooks.yaml"):
        pins = re.findall(r"rev:\s*(\S+)", (ROOT / path).read_text())
        assert pins and set(pins) == {tag}, (path, pins)


def test_cli_version_is_the_package_version() -> None:
    r = run_hostc("--version")
    assert r.returncode == 0 and r.stdout == f"hostc {_version()}\n"
