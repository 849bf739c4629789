"""Review at fleet scale (issue 35 item 4): `hostc diff DIR@REV DIR` and `hostc
pre-commit` group hosts whose changes are identical, through the real CLI on a small
fleet in a temporary git repository."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, run_hostc

HOSTS = ("dgx-r1-01", "dgx-r1-02", "dgx-r1-03")  # dgx-r1-02 sets its own housekeeping


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """A committed fleet (three DGX hosts of the example and one EPYC host, with their
    classes and topologies at the same relative paths); returns its folder."""
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    src = ROOT / "examples"
    root = tmp_path / "examples"
    shutil.copytree(src / "fleet" / "classes", root / "fleet" / "classes")
    (root / "fleet" / "hosts").mkdir()
    for host in (*HOSTS, "epyc-t-01"):
        shutil.copy(src / "fleet" / "hosts" / f"{host}.toml", root / "fleet" / "hosts")
    for name in ("dgx-h100-inference", "epyc-1s-training"):
        shutil.copytree(src / name, root / name)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "fleet")
    return root / "fleet"


def _fewer_housekeeping_cores(fleet: Path) -> None:
    cls = fleet / "classes" / "dgx-inference.toml"
    cls.write_text(
        cls.read_text().replace("housekeeping_per_node = 4", "housekeeping_per_node = 3")
    )


def test_a_folder_at_a_revision_groups_hosts_with_identical_changes(fleet: Path) -> None:
    _fewer_housekeeping_cores(fleet)
    (fleet / "hosts" / "epyc-t-01.toml").unlink()  # removed
    new = (fleet / "hosts" / "dgx-r1-01.toml").read_text().replace("r1-01", "r2-04")
    (fleet / "hosts" / "dgx-r2-04.toml").write_text(new)  # added
    r = run_hostc("diff", "hosts/@HEAD", "hosts/", cwd=fleet)
    assert r.returncode == 1, r.stderr
    out = r.stdout
    assert "2 hosts change (1 distinct change(s)), 1 unchanged, 1 added, 1 removed" in out
    assert "**2 hosts:** dgx-r1-01, dgx-r1-03" in out
    assert "- node 0: CPUs 3,115: housekeeping → serve-a" in out
    assert "- changed `workloads[serve-a]`: `cpus=4-29,116-141` → `cpus=3-29,115-141`" in out
    assert "- on a running host: reboots for kernel arguments" in out
    assert "**added (1):** dgx-r2-04" in out and "**removed (1):** epyc-t-01" in out
    assert "**unchanged (1):** dgx-r1-02" in out
    assert out.count("workloads[serve-a]") == 1, "one entry for the group, not one per host"

    r = run_hostc("diff", "hosts@HEAD", "hosts", "--json", "--jobs", "1", cwd=fleet)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    (group,) = doc["groups"]
    assert group["hosts"] == ["dgx-r1-01", "dgx-r1-03"]
    assert {"name": "workloads[serve-a]", "change": "changed"}.items() <= next(
        s for s in group["settings"] if s["name"] == "workloads[serve-a]"
    ).items()
    assert (doc["added"], doc["removed"], doc["unchanged"]) == (
        ["dgx-r2-04"],
        ["epyc-t-01"],
        ["dgx-r1-02"],
    )
    assert doc["failed"] == {}


def test_bad_fleet_sides_are_one_clean_line_never_a_traceback(
    fleet: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    def fails(*args: str | Path, cwd: Path = fleet) -> str:
        r = run_hostc("diff", *args, cwd=cwd)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == ""
        return r.stderr

    assert "hosts/@nope: 'nope' names no commit" in fails("hosts/@nope", "hosts/")
    assert "is not a revision" in fails("hosts/@--output=x", "hosts/")
    (fleet / "notes").mkdir()
    (fleet / "notes" / "README.txt").write_text("no spec here\n")
    _git(fleet, "add", "notes")
    _git(fleet, "commit", "-qm", "notes")
    assert "names no spec at HEAD" in fails("notes/@HEAD", "hosts/")
    assert "the other side one spec" in fails("hosts/@HEAD", "hosts/dgx-r1-01.toml")
    elsewhere = tmp_path_factory.mktemp("not-a-repo") / "hosts"
    shutil.copytree(fleet / "hosts", elsewhere)
    assert "is outside the repository hostc was started in" in fails(f"{elsewhere}@HEAD", elsewhere)
    # git's own words: none above the folder, or none on its file system (a TMPDIR on a
    # tmpfs of its own, as .ci/run mounts, ends git's search at the mount)
    outside = fails("hosts@HEAD", "hosts", cwd=elsewhere.parent)
    assert "not a git repository" in outside or "Stopping at filesystem boundary" in outside

    # one host broken on one side: named, the others still compared (exit 2)
    for host in HOSTS[1:]:
        (fleet / "hosts" / f"{host}.toml").unlink()
    _git(fleet, "commit", "-qam", "one dgx host and one epyc host")
    (fleet / "hosts" / "dgx-r1-01.toml").write_text("[host\n")
    r = run_hostc("diff", "hosts/@HEAD", "hosts/", cwd=fleet)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "hosts/dgx-r1-01.toml" in r.stderr
    assert "**not compared:** dgx-r1-01: TOML syntax error" in r.stdout
    assert "**unchanged (1):** epyc-t-01" in r.stdout


def test_pre_commit_groups_stale_hosts_and_keeps_the_diffs_behind_a_flag(
    fleet: Path, tmp_path: Path
) -> None:
    (fleet / "hosts" / "epyc-t-01.toml").unlink()
    out = tmp_path / "out"
    built = run_hostc("build", fleet / "hosts", "--out", out, "-t", "cmdline")
    assert built.returncode == 0, built.stderr
    _fewer_housekeeping_cores(fleet)
    args = ["pre-commit", fleet / "hosts", "--out", out, "-t", "cmdline"]
    changed = fleet / "classes" / "dgx-inference.toml"

    r = run_hostc(*args, changed)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "2 hosts: dgx-r1-01, dgx-r1-03"
    # the cmdline target alone installs nothing on a host (hostc.delivery.effects)
    assert lines[1] == "  on a running host: no change on the host"
    assert lines[2] == "  cmdline/kernel-cmdline (+1 −1):"
    assert lines[3].startswith("    -isolcpus=managed_irq,4-55,")
    assert lines[4].startswith("    +isolcpus=managed_irq,3-55,")
    assert "--- a/" not in r.stdout, "the unified diffs only with --diff"
    assert "2 stale" in r.stderr

    r = run_hostc(*args, "--diff", changed)
    assert r.returncode == 1
    assert r.stdout.startswith("2 hosts: dgx-r1-01, dgx-r1-03\n")
    assert "dgx-r1-03: --- a/cmdline/kernel-cmdline" in r.stdout


def test_a_class_error_in_a_review_is_printed_once_with_its_hosts(fleet: Path) -> None:
    """A class the DGX hosts extend, broken in the working tree: each host that takes the
    broken value fails with the same diagnostic (the class's file and line), printed once
    with the hosts it concerns, as a build prints it; the host that sets the value itself
    is still compared, and the review names each host not compared."""
    cls = fleet / "classes" / "dgx-inference.toml"
    text = cls.read_text()
    cls.write_text(text.replace("housekeeping_per_node = 4", 'housekeeping_per_node = "4"'))
    r = run_hostc("diff", "hosts/@HEAD", "hosts/", cwd=fleet)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("error: classes/dgx-inference.toml:") == 1, r.stderr
    assert "\n  for 2 hosts: dgx-r1-01, dgx-r1-03\n" in r.stderr, r.stderr
    assert "**not compared:** dgx-r1-01: " in r.stdout, r.stdout
    assert "dgx-r1-02" in r.stdout and "dgx-r1-02" not in r.stderr
