"""`build --out` owns what it wrote (issue 30 item 6, first-day F1): the next build
removes the files only the previous one wrote, never a file hostc did not write, never
through a symbolic link, and `--check` agrees right after a build.  Fleets likewise,
with `--prune` for a host removed from the fleet."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from hostc import api
from hostc.delivery.owned import RECORD
from hostc.diagnostics import HostcError

from conftest import ROOT, run_hostc

DGX = ROOT / "examples" / "dgx-h100-inference"
DROPIN = "systemd/etc/systemd/system/serve-d.service.d/90-hostc.conf"
SERVE_D = '[[workload]]\nname = "serve-d"\ngpus = ["GPU6", "GPU7"]\n'


def _dgx(tmp_path: Path) -> Path:
    shutil.copytree(DGX, tmp_path / "dgx")
    return tmp_path / "dgx" / "node.toml"


def _drop_serve_d(spec: Path) -> None:
    text = spec.read_text()
    assert SERVE_D in text
    spec.write_text(text.replace(SERVE_D, ""))


def test_a_removed_workload_loses_its_dropin_and_check_agrees(tmp_path: Path) -> None:
    spec, out = _dgx(tmp_path), tmp_path / "out"
    assert run_hostc("build", spec, "--out", out).returncode == 0
    assert (out / DROPIN).is_file()
    foreign = out / "systemd" / "etc" / "mine.conf"  # the user's own file: never touched
    foreign.write_text("mine\n")
    _drop_serve_d(spec)
    r = run_hostc("build", spec, "--out", out)
    assert r.returncode == 0, r.stderr
    assert f"removed {out / DROPIN}" in r.stderr
    assert not (out / DROPIN).exists()
    assert not (out / DROPIN).parent.exists(), "the folder hostc made, emptied, is gone"
    assert foreign.read_text() == "mine\n"
    foreign.unlink()
    check = run_hostc("build", spec, "--out", out, "--check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_an_edited_or_linked_stale_file_is_kept_and_reported(tmp_path: Path) -> None:
    spec, out = _dgx(tmp_path), tmp_path / "out"
    plan, _ = api.compile_file(spec)
    api.write_build(plan, api.emit(plan), out)
    (out / DROPIN).write_text("edited by hand\n")
    hooked = out / "systemd/etc/systemd/system/serve-c.service.d/90-hostc.conf"
    outside = tmp_path / "outside.conf"
    outside.write_bytes(hooked.read_bytes())  # the very bytes hostc recorded
    hooked.unlink()
    hooked.symlink_to(outside)
    _drop_serve_d(spec)
    serve_c = '[[workload]]\nname = "serve-c"\ngpus = ["GPU4", "GPU5"]\n'
    assert serve_c in spec.read_text()
    spec.write_text(spec.read_text().replace(serve_c, ""))
    plan, _ = api.compile_file(spec)
    done = api.write_build(plan, api.emit(plan), out)
    kept = dict(done.kept)
    assert "changed since hostc wrote it" in kept[out / DROPIN]
    assert "not a regular file" in kept[hooked] or "no longer a regular file" in kept[hooked]
    assert (out / DROPIN).read_text() == "edited by hand\n"
    assert hooked.is_symlink() and outside.is_file()


def test_a_link_on_the_way_is_never_followed(tmp_path: Path) -> None:
    """A recorded file's folder replaced by a link to a folder holding the same bytes:
    the file behind the link stays."""
    spec, out = _dgx(tmp_path), tmp_path / "out"
    plan, _ = api.compile_file(spec)
    api.write_build(plan, api.emit(plan), out)
    folder = (out / DROPIN).parent
    elsewhere = tmp_path / "elsewhere"
    shutil.move(folder, elsewhere)
    folder.symlink_to(elsewhere)
    _drop_serve_d(spec)
    plan, _ = api.compile_file(spec)
    done = api.write_build(plan, api.emit(plan), out)
    assert (elsewhere / "90-hostc.conf").is_file()
    assert any("not followed" in why for _, why in done.kept), done.kept


def test_a_build_of_other_targets_leaves_the_rest_alone(tmp_path: Path) -> None:
    spec, out = _dgx(tmp_path), tmp_path / "out"
    assert run_hostc("build", spec, "--out", out, "-q").returncode == 0
    _drop_serve_d(spec)
    assert run_hostc("build", spec, "-t", "sysctl", "--out", out, "-q").returncode == 0
    assert (out / DROPIN).is_file(), "-t sysctl does not own the systemd folder"
    assert run_hostc("build", spec, "--out", out, "-q").returncode == 0
    assert not (out / DROPIN).exists(), "the record kept it for the next full build"


@pytest.mark.parametrize(
    "record",
    [
        "not json",
        '{"hostc_build": 1, "scope": [], "selected": [], "dirs": [], "files": '
        '[{"path": "../../etc/passwd", "host_path": "/x", "kind": "file", "sha256": "0", '
        '"activation": []}]}',
    ],
)
def test_a_record_that_is_not_hostcs_is_an_error_and_nothing_is_written(
    tmp_path: Path, record: str
) -> None:
    spec, out = _dgx(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / RECORD).write_text(record)
    r = run_hostc("build", spec, "--out", out)
    assert r.returncode == 2 and str(out / RECORD) in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(os.listdir(out)) == [RECORD]
    plan, _ = api.compile_file(spec)
    with pytest.raises(HostcError):
        api.write_build(plan, api.emit(plan), out)


def test_the_record_lists_what_was_written(tmp_path: Path) -> None:
    spec, out = _dgx(tmp_path), tmp_path / "out"
    plan, _ = api.compile_file(spec)
    arts = api.emit(plan)
    api.write_build(plan, arts, out)
    doc = json.loads((out / RECORD).read_text())
    assert [f["path"] for f in doc["files"]] == sorted(f"{a.target}/{a.relpath}" for a in arts)
    assert "kubelet" in doc["scope"], "`all` owns a target that does not apply (yet)"


def _fleet(tmp: Path) -> Path:
    shutil.copytree(ROOT / "examples" / "fleet", tmp / "examples" / "fleet")
    for name in ("dgx-h100-inference", "epyc-1s-training"):
        shutil.copytree(ROOT / "examples" / name, tmp / "examples" / name)
    return tmp / "examples" / "fleet" / "hosts"


def test_a_host_removed_from_the_fleet_is_reported_then_pruned(tmp_path: Path) -> None:
    hosts, out = _fleet(tmp_path), tmp_path / "out"
    for spec in sorted(hosts.glob("*.toml"))[3:]:
        spec.unlink()  # three hosts are enough
    assert run_hostc("build", hosts, "--out", out, "-j", "1", "-q").returncode == 0
    (hosts / "dgx-r1-01.toml").unlink()
    r = run_hostc("build", hosts, "--out", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    assert "dgx-r1-01  not in fleet" in r.stderr
    assert "--prune removes it" in r.stderr
    assert (out / "dgx-r1-01").is_dir()
    keep = out / "dgx-r1-02" / "sysctl" / "notes.txt"  # not hostc's
    keep.write_text("mine\n")
    (hosts / "dgx-r1-02.toml").unlink()
    r = run_hostc("build", hosts, "--out", out, "-j", "1", "--prune")
    assert r.returncode == 0, r.stderr
    assert not (out / "dgx-r1-01").exists()
    assert keep.read_text() == "mine\n" and sorted(os.listdir(keep.parent)) == ["notes.txt"]
    assert sorted(os.listdir(out)) == ["dgx-r1-02", "dgx-r1-03"]
    assert run_hostc("build", hosts, "--out", out, "-j", "1", "--check").returncode == 0
    single = run_hostc("build", hosts / "dgx-r1-03.toml", "--out", out, "--prune")
    assert single.returncode == 2 and "--prune applies to many hosts" in single.stderr
