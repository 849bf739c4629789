"""A pull request that edits one node class, reviewed by `hostc diff hosts/@main hosts/`
(issue 56): the review names exactly the hosts of that class and what the change costs
them, and compiles no other host (compiles counted, not timed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hostc.fleet import fleetdiff
from tests.fleet.test_fleet_review import _git

from conftest import ROOT

SNAPSHOT = ROOT / "examples" / "epyc-1s-training" / "topology.toml"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fleet repository on `main`: two classes, eight hosts (four each), one snapshot;
    then a branch whose commit raises `vm.dirty_ratio` in class `a` (hosts h0, h2, h4, h6)."""
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    (tmp_path / "classes").mkdir()
    (tmp_path / "hosts").mkdir()
    shutil.copy(SNAPSHOT, tmp_path / "topology.toml")
    for name in ("a", "b"):
        (tmp_path / "classes" / f"{name}.toml").write_text(
            'version = 1\n\n[host]\nname = "c"\nrole = "training"\n'
            'topology = "../topology.toml"\n\n[sysctl]\n"vm.dirty_ratio" = 13\n\n'
            '[runtime]\nowner = "tuned"\n'
        )
    for i in range(8):
        (tmp_path / "hosts" / f"h{i}.toml").write_text(
            f'extends = ["../classes/{"ab"[i % 2]}.toml"]\n\n[host]\nname = "h{i}"\n'
        )
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "fleet")
    _git(tmp_path, "checkout", "-qb", "pr")
    cls = tmp_path / "classes" / "a.toml"
    cls.write_text(cls.read_text().replace('"vm.dirty_ratio" = 13', '"vm.dirty_ratio" = 20'))
    _git(tmp_path, "commit", "-qam", "class a: dirty ratio 20")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_class_edit_compiles_and_names_only_its_hosts(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[str] = []
    real = fleetdiff.review

    def counted(old: str, new: str) -> object:
        compared.append(Path(new).stem)
        return real(old, new)

    monkeypatch.setattr(fleetdiff, "review", counted)
    found = fleetdiff.fleet_review("hosts/@main", "hosts/", jobs=1)
    assert sorted(compared) == ["h0", "h2", "h4", "h6"], "no host of class b is compiled"
    (group,) = found.groups
    assert group.hosts == ("h0", "h2", "h4", "h6")
    assert found.unchanged == ("h1", "h3", "h5", "h7")
    assert not found.failed and not found.added and not found.removed
    text = fleetdiff.fleet_markdown(found)
    assert "4 hosts change (1 distinct change(s)), 4 unchanged" in text
    assert "vm.dirty_ratio" in text and "13` → `20" in text
    assert "- on a running host: applies live" in text and "restarts nothing; no reboot" in text
    doc = fleetdiff.fleet_json(found)
    assert doc["disruption"]["summary"] == "live"
    assert doc["disruption"]["hosts"] == {
        "live": ["h0", "h2", "h4", "h6"],
        "none": ["h1", "h3", "h5", "h7"],
    }


def test_an_uncommitted_edit_of_the_snapshot_compiles_every_host_that_reads_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snap = repo / "topology.toml"
    snap.write_text(snap.read_text() + "# re-probed\n")  # bytes differ, output the same
    compared: list[str] = []
    real = fleetdiff.review
    monkeypatch.setattr(
        fleetdiff, "review", lambda old, new: compared.append(new) or real(old, new)
    )
    found = fleetdiff.fleet_review("hosts/@main", "hosts/", jobs=1)
    assert len(compared) == 8
    assert found.groups[0].hosts == ("h0", "h2", "h4", "h6")
    assert found.unchanged == ("h1", "h3", "h5", "h7")
