"""`hostc diff DIR@REV DIR` reads the revision in a fixed number of git processes
(issue 56): the tree by one `ls-tree -r`, the blobs by one `cat-file --batch` per level
of the `extends` chain, whatever the number of changed hosts; and the review is exactly
the one that reads each file on its own."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

from hostc.fleet import fleetdiff, gitrev
from tests.fleet.test_fleet_review import _git

from conftest import ROOT

SNAPSHOT = ROOT / "examples" / "epyc-1s-training" / "topology.toml"


def _repo(root: Path, hosts: int) -> None:
    """`hosts` hosts over two classes, one snapshot; committed, then class `a` edited
    (half the hosts change) and one host of class `b` too (its own file)."""
    (root / "classes").mkdir(parents=True)
    (root / "hosts").mkdir()
    (root / "snap").mkdir()
    shutil.copy(SNAPSHOT, root / "snap" / "topology.toml")
    for name in ("a", "b"):
        (root / "classes" / f"{name}.toml").write_text(
            'version = 1\n\n[host]\nname = "c"\nrole = "training"\n'
            'topology = "../snap/topology.toml"\n\n[sysctl]\n"vm.dirty_ratio" = 13\n\n'
            '[runtime]\nowner = "tuned"\n'
        )
    for i in range(hosts):
        (root / "hosts" / f"h{i:02d}.toml").write_text(
            f'extends = ["../classes/{"ab"[i % 2]}.toml"]\n\n[host]\nname = "h{i:02d}"\n'
        )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "fleet")
    cls = root / "classes" / "a.toml"
    cls.write_text(cls.read_text().replace("= 13", "= 20"))
    one = root / "hosts" / "h01.toml"
    one.write_text(one.read_text() + '\n[sysctl]\n"vm.swappiness" = 7\n')


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = gitrev._run

    def run(where: str, cwd: Path, *args: str, **kw: object) -> bytes:
        calls.append(args[0])
        return real(where, cwd, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitrev, "_run", run)
    return calls


@pytest.mark.parametrize("hosts", [6, 16])
def test_the_revision_is_read_by_a_fixed_number_of_git_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hosts: int
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    _repo(tmp_path, hosts)
    monkeypatch.chdir(tmp_path)
    calls = _counted(monkeypatch)
    found = fleetdiff.fleet_review("hosts/@HEAD", "hosts/", jobs=1)
    changed = sorted(h for g in found.groups for h in g.hosts)
    assert changed == sorted({f"h{i:02d}" for i in range(0, hosts, 2)} | {"h01"})
    # rev-parse (repository, commit, object format), the folder's listing (two
    # ls-tree), the whole tree, the unchanged hosts' objects present (cat-file
    # --batch-check), then a cat-file --batch each for the hosts, the class, the
    # snapshot: the same for 6 hosts as for 16
    assert len(calls) <= 10, calls
    assert calls.count("cat-file") <= 4 and calls.count("ls-tree") <= 3, calls


def test_the_batched_review_is_the_review_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    _repo(tmp_path, 6)
    monkeypatch.chdir(tmp_path)
    batched = fleetdiff.fleet_json(fleetdiff.fleet_review("hosts/@HEAD", "hosts/", jobs=1))
    calls = _counted(monkeypatch)
    monkeypatch.setattr(fleetdiff, "pinned", contextlib.nullcontext)
    monkeypatch.setattr(fleetdiff, "preload", lambda pairs: None)
    one_by_one = fleetdiff.fleet_json(fleetdiff.fleet_review("hosts/@HEAD", "hosts/", jobs=1))
    assert len(calls) > 20, "file by file: several git processes a host"
    assert batched == one_by_one
