"""A rebuild touches only what changed: a destination that already is the file (a
regular file, not a link, this user's, the same mode and bytes) keeps its inode and
modification time, so rsync, make or a watcher going by mtimes sees only real changes.
Anything else there is replaced as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hostc import api
from hostc.delivery.output import write
from hostc.delivery.owned import RECORD

from conftest import ROOT, run_hostc

SPEC = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"


def _stamps(root: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime in ns) of every file under `root`, its record included."""
    return {
        p.relative_to(root).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def _arts() -> list[api.Artifact]:
    plan, _ = api.compile_file(SPEC)
    return api.emit(plan, ["sysctl", "systemd", "limits"])


def test_a_rebuild_that_changes_nothing_touches_no_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_hostc("build", SPEC, "--out", out)
    assert first.returncode == 0, first.stderr
    assert "unchanged" not in first.stderr
    before = _stamps(out)
    assert RECORD in before
    again = run_hostc("build", SPEC, "--out", out)
    assert again.returncode == 0, again.stderr
    assert _stamps(out) == before
    n = len(before) - 1  # the record is not an artifact
    assert f"wrote 0 files under {out}; {n} unchanged, left as they were" in again.stderr
    manifest = run_hostc("build", SPEC, "--out", out, "--json")
    assert len(json.loads(manifest.stdout)["unchanged"]) == n


def test_only_the_file_that_differs_is_replaced(tmp_path: Path) -> None:
    arts = _arts()
    out = tmp_path / "out"
    write(arts, out)
    changed = out / arts[0].target / arts[0].relpath
    changed.write_bytes(b"# edited by hand\n")
    before = _stamps(out)
    placed = write(arts, out)
    after = _stamps(out)
    name = changed.relative_to(out).as_posix()
    assert after[name][0] != before[name][0]  # staged and renamed: a new inode
    assert changed.read_bytes() == arts[0].data
    assert {k: v for k, v in after.items() if k != name} == {
        k: v for k, v in before.items() if k != name
    }
    assert changed not in placed.unchanged
    assert len(placed.unchanged) == len(arts) - 1
    assert placed.files == tuple(out / a.target / a.relpath for a in arts)


def test_the_same_bytes_under_another_mode_are_replaced(tmp_path: Path) -> None:
    arts = _arts()
    out = tmp_path / "out"
    write(arts, out)
    path = out / arts[0].target / arts[0].relpath
    path.chmod(0o600)
    assert path not in write(arts, out).unchanged
    assert path.stat().st_mode & 0o7777 == arts[0].mode


def test_a_link_to_the_same_bytes_is_replaced_and_its_target_left_alone(tmp_path: Path) -> None:
    arts = _arts()
    out = tmp_path / "out"
    write(arts, out)
    path = out / arts[0].target / arts[0].relpath
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(arts[0].data)
    elsewhere.chmod(arts[0].mode)
    path.unlink()
    path.symlink_to(elsewhere)
    assert path not in write(arts, out).unchanged
    assert not path.is_symlink()
    assert path.read_bytes() == arts[0].data
    assert elsewhere.read_bytes() == arts[0].data


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_with_the_same_bytes_is_replaced(tmp_path: Path) -> None:
    arts = _arts()
    out = tmp_path / "out"
    write(arts, out)
    path = out / arts[0].target / arts[0].relpath
    os.chown(path, 12345, 12345)
    assert path not in write(arts, out).unchanged
    assert path.stat().st_uid == os.geteuid()


def test_a_longer_file_that_starts_with_the_bytes_is_replaced(tmp_path: Path) -> None:
    arts = _arts()
    out = tmp_path / "out"
    write(arts, out)
    path = out / arts[0].target / arts[0].relpath
    path.write_bytes(arts[0].data + b"# more\n")
    assert path not in write(arts, out).unchanged
    assert path.read_bytes() == arts[0].data


def test_a_fleet_rebuild_reports_its_unchanged_files(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    (hosts / "a.toml").write_text(f'extends = ["{SPEC}"]\n[host]\nname = "a"\n')
    (hosts / "b.toml").write_text(f'extends = ["{SPEC}"]\n[host]\nname = "b"\n')
    out = tmp_path / "out"
    first = run_hostc("build", hosts, "--out", out, "--jobs", "1", "--json")
    assert first.returncode == 0, first.stderr
    assert "2 hosts: 2 built, 0 failed, 0 warning(s)\n" in first.stderr  # nothing to say yet
    assert {r["host"]: r["unchanged"] for r in json.loads(first.stdout)["hosts"]} == {
        "a": 0,
        "b": 0,
    }
    (hosts / "b.toml").write_text(
        f'extends = ["{SPEC}"]\n[host]\nname = "b"\n[sysctl]\n"vm.swappiness" = 7\n'
    )
    before = {p: p.read_bytes() for p in (out / "b").rglob("*") if p.is_file()}
    again = run_hostc("build", hosts, "--out", out, "--jobs", "1", "--json")
    rows = {r["host"]: r for r in json.loads(again.stdout)["hosts"]}
    assert rows["a"]["unchanged"] == rows["a"]["files"]
    # b's sysctl.d file and the verify script that checks it, not the rest
    differ = sorted(p.name for p, data in before.items() if p.read_bytes() != data)
    assert differ == [RECORD, "90-hostc.conf", "hostc-verify"]
    assert rows["b"]["unchanged"] == rows["b"]["files"] - 2
    total = rows["a"]["files"] + rows["b"]["files"]
    assert f"; 2 of {total} files written, the rest unchanged" in again.stderr


def test_the_message_counts_what_was_written_and_what_was_left() -> None:
    from hostc.cli.text import wrote

    out = Path("out")
    three = [out / "a", out / "b", out / "c"]
    assert wrote(three, out) == "wrote 3 files under out"
    assert wrote(three, out, 2) == "wrote 1 file under out; 2 unchanged, left as they were"
    assert wrote(three[:1], out) == "wrote 1 file: out/a"
    assert wrote(three[:1], out, 1) == "out/a is unchanged: left as it was"
