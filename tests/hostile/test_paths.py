"""Paths: never write or read through a link, never overwrite an input, a probe
root is a root.  Each test plants the link an attacker would, in a tmp tree."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hostc import api
from hostc.delivery.compare import differences
from hostc.delivery.output import write
from hostc.diagnostics import HostcError
from hostc.topology import snapshot
from hostc.topology.importers.sysfs import probe

from conftest import run_hostc
from sysfs_fixtures import build, smt_host, two_socket_gpu_host
from topogen import H100_KW, machine

SPEC = (
    'version = 1\n[host]\nname = "t"\nrole = "inference"\nkernel = "6.8"\n'
    'topology = "topology.toml"\n'
)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "topology.toml").write_text(snapshot.dumps(machine(**H100_KW)))  # type: ignore[arg-type]
    (tmp_path / "node.toml").write_text(SPEC)
    return tmp_path


def sysctl_artifacts(work: Path) -> list[api.Artifact]:
    plan, _ = api.compile_file(work / "node.toml")
    return api.emit(plan, ["sysctl"])


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_a_link_planted_in_the_out_tree_is_refused_not_followed(work: Path, depth: int) -> None:
    arts = sysctl_artifacts(work)
    out, outside = work / "out", work / "outside"
    outside.mkdir()
    parts = Path(arts[0].target, arts[0].relpath).parts[:-1]
    (out.joinpath(*parts[:depth])).mkdir(parents=True, exist_ok=True)
    out.joinpath(*parts[: depth + 1]).symlink_to(outside)
    with pytest.raises(HostcError) as e:
        write(arts, out)
    assert "symbolic link" in str(e.value) and str(out.joinpath(*parts[: depth + 1])) in str(
        e.value
    )
    assert list(outside.iterdir()) == []


def test_a_link_at_the_destination_is_replaced_not_written_through(work: Path) -> None:
    arts = sysctl_artifacts(work)
    out = work / "out"
    dest = out / arts[0].target / arts[0].relpath
    dest.parent.mkdir(parents=True)
    victim = work / "victim"
    victim.write_text("precious\n")
    dest.symlink_to(victim)
    write(arts, out)
    assert victim.read_text() == "precious\n"
    assert not dest.is_symlink() and dest.read_bytes() == arts[0].data


def test_a_link_gained_during_the_build_is_not_followed(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory is swapped for a link between staging and renaming: the rename
    happens in the directory already opened, so nothing lands outside."""
    from hostc.delivery import output

    arts = sysctl_artifacts(work)
    out, outside = work / "out", work / "outside"
    outside.mkdir()
    real = output._stage_at
    leaf = out / arts[0].target

    def swap(dfd: int, name: str, data: bytes, mode: int, *rest: Any) -> str:
        tmp = real(dfd, name, data, mode, *rest)
        if leaf.is_dir() and not leaf.is_symlink():
            leaf.rename(work / "moved")
            leaf.symlink_to(outside)
        return tmp

    monkeypatch.setattr(output, "_stage_at", swap)
    write(arts, out)
    assert list(outside.rglob("*")) == []


def test_a_blocked_component_is_named(work: Path) -> None:
    arts = sysctl_artifacts(work)
    out = work / "out"
    out.mkdir()
    (out / arts[0].target).write_text("in the way")
    r = run_hostc("build", work / "node.toml", "-t", "sysctl", "-o", out, cwd=work)
    assert r.returncode == 2, r.stderr
    assert f"{out / arts[0].target}" in r.stderr and "not a directory" in r.stderr


def test_check_does_not_read_through_a_golden_link(work: Path) -> None:
    arts = sysctl_artifacts(work)
    golden = work / "golden"
    write(arts, golden)
    secret = work / "secret"
    secret.write_text("TOP-SECRET-CONTENT\n")
    dest = golden / arts[0].target / arts[0].relpath
    dest.unlink()
    dest.symlink_to(secret)
    (golden / arts[0].target / "stale-link").symlink_to(secret)
    found = differences(arts, golden)
    text = "".join(t for _, t in found)
    assert len(found) == 2 and "symbolic link" in text
    assert "TOP-SECRET" not in text


def test_check_against_a_missing_directory_says_so(work: Path) -> None:
    r = run_hostc("build", work / "node.toml", "-t", "sysctl", "-o", work / "nope", "--check")
    assert r.returncode == 2 and "no such directory" in r.stderr, r.stderr


def test_a_stale_golden_says_how_many_files_differ(work: Path) -> None:
    golden = work / "golden"
    write(sysctl_artifacts(work), golden)
    (golden / "sysctl" / "extra").write_text("x\n")
    r = run_hostc("build", work / "node.toml", "-t", "sysctl", "-o", golden, "--check")
    assert r.returncode == 1 and "1 file differs" in r.stderr, r.stderr


def test_a_build_never_overwrites_its_own_spec(work: Path) -> None:
    arts = sysctl_artifacts(work)
    out = work / "out"
    dest = out / arts[0].target / arts[0].relpath
    dest.parent.mkdir(parents=True)
    os.link(work / "node.toml", dest)
    r = run_hostc("build", dest, "-t", "sysctl", "-o", out, "--topology", work / "topology.toml")
    assert r.returncode == 2 and "its own input" in r.stderr, r.stderr
    assert (work / "node.toml").read_text() == SPEC


def test_an_import_never_overwrites_its_own_input(work: Path) -> None:
    snap = work / "topology.toml"
    before = snap.read_text()
    r = run_hostc("import", "lscpu", snap, "-o", snap, cwd=work)
    assert r.returncode == 2, r.stderr
    assert snap.read_text() == before


def test_a_probe_never_writes_into_what_it_reads(tmp_path: Path) -> None:
    """`probe --root DIR -o DIR/sys/…` (or, as root, `-o /proc/sys/…` on the live host)
    would write the snapshot into the tree the probe reads: refused, nothing written."""
    root = build(smt_host(1, 2, 1, 1), tmp_path / "root")
    for target in (root / "sys" / "snapshot.toml", root / "proc" / "cpuinfo"):
        before = target.read_bytes() if target.exists() else None
        r = run_hostc("probe", "--root", root, "-o", target, cwd=tmp_path)
        assert r.returncode == 2 and "its own input" in r.stderr, r.stderr
        assert (target.read_bytes() if target.exists() else None) == before


def test_an_absolute_link_in_a_probe_root_stays_inside_the_root(tmp_path: Path) -> None:
    root = build(smt_host(1, 2, 1, 1), tmp_path / "root")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "os-release").write_text('ID=evil\nVERSION_ID="1"\n')
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc" / "os-release").symlink_to(outside / "os-release")
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib/os-release").symlink_to("../../../../outside/os-release")
    topo = probe(root, run_nvidia_smi=False)
    assert topo.os is None or topo.os.id != "evil"


def test_dies_of_different_packages_are_different_dies(tmp_path: Path) -> None:
    topo = probe(build(two_socket_gpu_host(), tmp_path), run_nvidia_smi=False)
    dies = {(c.package, c.die) for c in topo.cpus if c.online}
    assert len({d for _, d in dies}) == len({p for p, _ in dies}) == 2, dies


def test_a_capture_never_overwrites_a_file_it_read(tmp_path: Path) -> None:
    from hostc.api import capture

    root = build(smt_host(1, 2, 1, 1), tmp_path / "root")
    target = root / "sys/devices/system/cpu/online"
    before = target.read_text()
    with pytest.raises(HostcError, match="overwrite a file it read"):
        capture(target, root)
    assert target.read_text() == before
