"""Fleet output names and confinement: whatever the hosts' files and folders are named,
and whatever is committed under `--out`, a fleet build writes only `OUT/<host>/…` for
hosts whose name is one word, through the same no-follow writer as a single build."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc.cli.main import run

from conftest import ROOT

EXAMPLE = ROOT / "examples/h100-4gpu-inference"
#: fleet.HOST_NAME, spelled here so that the test also runs (and fails) without it
HOST_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
NAMES = ["a", "b", "..", ".", "-h", ".hidden", "a b", "x" * 200, "ok.1", "\x1b[1m"]


def _listing(top: Path, skip: Path) -> dict[str, bytes]:
    found = {}
    for dirpath, dirs, names in os.walk(top):
        if Path(dirpath) == skip:
            dirs[:] = []
            continue
        for n in names:
            p = Path(dirpath, n)
            found[str(p)] = p.read_bytes() if not p.is_symlink() else b"link"
    return found


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True),
    st.sampled_from(["dir", "list", "glob"]),
    st.lists(st.sampled_from(["a", "b", "ok.1"]), max_size=2, unique=True),
)
def test_a_fleet_writes_only_below_out_in_a_folder_per_valid_host(
    names: list[str], how: str, linked: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        hosts = work / "hosts"
        hosts.mkdir(parents=True)
        (work / "topology.toml").write_text((EXAMPLE / "topology.toml").read_text())
        spec = (
            (EXAMPLE / "node.toml")
            .read_text()
            .replace('"topology.toml"', f'"{work / "topology.toml"}"')
        )
        lines = []
        for n in names:
            folder = hosts / n
            with contextlib.suppress(OSError):
                if n not in (".", ".."):
                    folder.mkdir()
                (folder / "node.toml").write_text(spec)
            lines.append(f"hosts/{n}/node.toml")
        (work / "list.txt").write_text("\n".join(lines) + "\n")
        outside = Path(tmp) / "outside"
        outside.mkdir()
        out = work / "out"
        out.mkdir()
        for n in linked:  # a link committed where a host's output goes
            (out / n).symlink_to(outside)
        before = _listing(Path(tmp), out)
        sel = {"dir": "hosts", "list": "@list.txt", "glob": "hosts/*/node.toml"}[how]
        err = io.StringIO()
        cwd = Path.cwd()
        os.chdir(work)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = run(["build", sel, "--out", "out", "--target", "sysctl", "-j", "1"])
        finally:
            os.chdir(cwd)
        assert code in (0, 2), err.getvalue()[-500:]
        assert _listing(Path(tmp), out) == before, "a file outside --out changed"
        assert not list(outside.iterdir()), "written through a link"
        for p in out.rglob("*"):
            if p.is_file() and not p.is_symlink():
                host = p.relative_to(out).parts[0]
                assert HOST_NAME.fullmatch(host), p


def _fleet(tmp: Path, names: list[str]) -> Path:
    hosts = tmp / "hosts"
    hosts.mkdir()
    (tmp / "topology.toml").write_text((EXAMPLE / "topology.toml").read_text())
    spec = (EXAMPLE / "node.toml").read_text()
    for n in names:
        (hosts / f"{n}.toml").write_text(spec.replace('"topology.toml"', '"../topology.toml"'))
    return hosts


def _build(work: Path, *args: str) -> tuple[int, str]:
    err = io.StringIO()
    cwd = Path.cwd()
    os.chdir(work)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = run(["build", "hosts", "--out", "out", "-j", "1", *args])
    finally:
        os.chdir(cwd)
    return code, err.getvalue()


def test_the_fleets_own_folders_are_the_reserved_host_names(tmp_path: Path) -> None:
    """What a fleet build writes in OUT beside its hosts' folders is, name for name, what
    no host may be named (`selection.RESERVED`), hidden files aside."""
    from hostc.fleet.selection import RESERVED

    _fleet(tmp_path, ["a", "b"])
    code, err = _build(tmp_path, "-t", "all", "-t", "ansible")
    assert code == 0, err
    own = {p.name for p in (tmp_path / "out").iterdir()} - {"a", "b"}
    assert {n for n in own if not n.startswith(".")} == set(RESERVED)


@pytest.mark.parametrize("name", ["ansible", "Ansible"])
def test_a_host_named_like_the_fleets_own_folder_is_refused(tmp_path: Path, name: str) -> None:
    """A host file `ansible.toml` wrote OUT/ansible/ as its folder, where the fleet writes
    the playbook of all hosts: the two shared it.  Refused, naming the spec; nothing
    written (`Ansible` too: one folder on a case-insensitive file system)."""
    hosts = _fleet(tmp_path, ["a", name])
    code, err = _build(tmp_path, "-t", "all", "-t", "ansible")
    assert code == 2, err
    assert f"error: hosts/{name}.toml: host name {name!r}" in err, err
    assert str(hosts / "a.toml") not in err and "hosts/a.toml" not in err, err
    assert not (tmp_path / "out").exists()
