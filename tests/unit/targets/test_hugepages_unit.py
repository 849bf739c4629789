"""hostc-hugepages: the script on a host tree (the kernel's per-node files stood in by
plain files), what a change to it costs a running host, and how audit and
hostc-verify read the pools back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.artifact import Artifact
from hostc.audit import hugepages as audit_hugepages
from hostc.audit.host import HostReader
from hostc.audit.observe import Look, expectations
from hostc.delivery.effects import HUGEPAGES_KEPT, HUGEPAGES_LIVE, Facts, artifact_entries
from hostc.plan.model import Plan
from hostc.spec import model as m
from hostc.targets import Emitter, hugepages, systemd, verify

from conftest import need_tool
from topogen import machine

VM = machine(packages=2, cores_per_node=2, smt=2, memory_mib=65536, kernel="6.1.0-50-cloud-amd64")


def plan_of(hp: m.Hugepages, kubelet: m.Kubelet | None = None) -> Plan:
    s = m.HostSpec(host=m.Host(name="vm", role=m.Role.GENERAL), hugepages=hp, kubelet=kubelet)
    return api.compile_plan(s, VM)[0]


RUNTIME = m.Hugepages(
    size="2M",
    per_node={0: 8, 1: 16},
    allocate=m.HugepageAllocation.RUNTIME,
    pools=(m.HugepagesPool(size="1G", per_node={1: 1}),),  # type: ignore[arg-type]
)


def files(plan: Plan) -> dict[str, Artifact]:
    out = Emitter("systemd")
    systemd.emit(plan, out)
    return {a.path: a for a in out.artifacts}


def node_pool(root: Path, node: int, kib: int, nr: int = 0, surplus: int = 0) -> Path:
    d = root / f"sys/devices/system/node/node{node}/hugepages/hugepages-{kib}kB"
    d.mkdir(parents=True)
    (d / "nr_hugepages").write_text(f"{nr}\n")
    (d / "surplus_hugepages").write_text(f"{surplus}\n")
    return d


def run(script: Path, root: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """The script with HOSTC_HUGEPAGES_ROOT at `root` and a `sleep` that returns at once."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sleep").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "sleep").chmod(0o755)
    env = {
        **os.environ,
        "HOSTC_HUGEPAGES_ROOT": str(root),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
    }
    return subprocess.run(
        ["sh", str(script)], capture_output=True, text=True, env=env, timeout=60, check=False
    )


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "hostc-hugepages"
    path.write_bytes(files(plan_of(RUNTIME))[hugepages.SCRIPT].data)
    return path


def test_the_script_writes_each_node_s_count_largest_pages_first(
    script: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    pools = {(n, kib): node_pool(root, n, kib, nr=3) for n in (0, 1) for kib in (2048, 1048576)}
    done = run(script, root, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    got = {k: (d / "nr_hugepages").read_text().strip() for k, d in pools.items()}
    assert got == {(0, 2048): "8", (1, 2048): "16", (0, 1048576): "0", (1, 1048576): "1"}
    assert done.stdout.splitlines() == [
        "hostc-hugepages: node 0: 0 pages of 1G",
        "hostc-hugepages: node 1: 1 pages of 1G",
        "hostc-hugepages: node 0: 8 pages of 2M",
        "hostc-hugepages: node 1: 16 pages of 2M",
    ]


def test_a_node_that_falls_short_fails_the_unit_naming_node_size_got_and_wanted(
    script: Path, tmp_path: Path
) -> None:
    """A surplus page that stays (in use) leaves node 1's 1G pool one short of 1 after
    every try; the other pools are still set, then the unit fails."""
    root = tmp_path / "root"
    for n in (0, 1):
        node_pool(root, n, 2048)
        node_pool(root, n, 1048576, surplus=1 if n == 1 else 0)
    done = run(script, root, tmp_path)
    assert done.returncode == 1
    assert (
        "hostc-hugepages: node 1, 1G pages: got 0, wanted 1, after 10 tries with the node "
        "compacted between them"
    ) in done.stdout.splitlines()
    assert "hostc-hugepages: node 1: 16 pages of 2M" in done.stdout.splitlines()


def test_a_missing_size_fails_where_pages_are_wanted_only(script: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    for n in (0, 1):
        node_pool(root, n, 2048)
    node_pool(root, 1, 1048576)  # node 0 has no 1G directory, and wants none: no error
    done = run(script, root, tmp_path)
    assert done.returncode == 0, done.stdout
    (root / "sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages").unlink()
    (
        root / "sys/devices/system/node/node1/hugepages/hugepages-1048576kB/surplus_hugepages"
    ).unlink()
    (root / "sys/devices/system/node/node1/hugepages/hugepages-1048576kB").rmdir()
    done = run(script, root, tmp_path)
    assert done.returncode == 1
    assert "hostc-hugepages: node 1, 1G pages: got none, wanted 1: " in done.stdout


def test_the_script_passes_shellcheck(script: Path) -> None:
    tool = need_tool("shellcheck")
    done = subprocess.run([tool, "-s", "sh", str(script)], capture_output=True, check=False)
    assert done.returncode == 0, done.stdout.decode()


def test_a_changed_runtime_pool_is_live_and_says_what_may_fall_short() -> None:
    """The effects of the unit and its script (`hostc.delivery.effects`): added, they
    enable and run it; changed, they run it again (live: a grown pool may fall short on
    fragmented memory, which the text says), and the kubelet, which reads hugepage
    capacity at its start, takes the new pools at its next start; removed, the unit
    stops, and its pages stay until the next boot."""
    kubelet = m.Kubelet(flavor=m.Flavor.KUBEADM, version="1.33", cpu_manager_policy="none")  # type: ignore[arg-type]
    plan = plan_of(RUNTIME, kubelet)
    arts = [a for a in files(plan).values() if a.path in (hugepages.UNIT_PATH, hugepages.SCRIPT)]
    table = artifact_entries(arts, Facts())
    unit, script = table[hugepages.UNIT_PATH], table[hugepages.SCRIPT]
    assert [str(e) for e in unit.add] == [
        "live daemon-reload",
        f"live enable {hugepages.UNIT}",
        f"live {HUGEPAGES_LIVE}",
    ]
    assert [str(e) for e in script.change] == [
        f"live {HUGEPAGES_LIVE}",
        "later kubelet.service at its next start",
    ]
    assert f"later {HUGEPAGES_KEPT}" in [str(e) for e in unit.remove]
    assert f"live stops {hugepages.UNIT}" in [str(e) for e in unit.remove]


def test_audit_and_verify_read_every_runtime_pool_per_node() -> None:
    """A runtime pool has no command-line word: its counts are read per node, with no
    boot carrier to call them pending; each (size, node) also gets a mapping row, which
    only audit makes (sh cannot mmap), so hostc-verify lists it as left to audit."""
    plan = plan_of(RUNTIME)
    rows = [e for e in expectations(plan) if e.setting.startswith("hugepages")]
    assert [(e.setting, e.expected, e.pending) for e in rows if e.kind is Look.VALUE] == [
        ("hugepages 2M node0", "8", None),
        ("hugepages 2M node1", "16", None),
        ("hugepages 1G node1", "1", None),
    ]
    maps = [(e.setting, e.args) for e in rows if e.kind is Look.HUGEPAGE_MAP]
    hk = [str(n.housekeeping) for n in plan.nodes]  # the node's own CPUs map the page
    assert maps == [
        ("hugepages 2M node0 usable", ("2048", "0", hk[0])),
        ("hugepages 2M node1 usable", ("2048", "1", hk[1])),
        ("hugepages 1G node1 usable", ("1048576", "1", hk[1])),
    ]
    checks = [c.line for c in verify.checks(plan) if c.setting.startswith("hugepages")]
    assert checks == [
        "check_file 'hugepages 2M node0' 8 "
        "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
        "check_file 'hugepages 2M node1' 16 "
        "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages",
        "check_file 'hugepages 1G node1' 1 "
        "/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages",
    ]
    assert {"hugepages 2M node0 usable", "hugepages 1G node1 usable"} <= set(
        verify.left_to_audit(plan)
    )


def _usable(plan: Plan, node: int, size: str) -> object:
    return next(
        e
        for e in expectations(plan)
        if e.kind is Look.HUGEPAGE_MAP and e.setting == f"hugepages {size} node{node} usable"
    )


def _sysfs(root: Path, node: int, kib: int, free: int, resv: int = 0) -> None:
    d = root / f"sys/devices/system/node/node{node}/hugepages/hugepages-{kib}kB"
    d.mkdir(parents=True, exist_ok=True)
    (d / "free_hugepages").write_text(f"{free}\n")
    g = root / f"sys/kernel/mm/hugepages/hugepages-{kib}kB"
    g.mkdir(parents=True, exist_ok=True)
    (g / "free_hugepages").write_text(f"{free}\n")
    (g / "resv_hugepages").write_text(f"{resv}\n")


def test_the_mapping_row_never_takes_a_page_that_is_not_spare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not live, no free page on the node, every free page reserved: skipped with the
    reason, and no child is run.  Where one runs, its numa_maps line is the verdict: the
    node and the page size it got."""
    plan = plan_of(RUNTIME)
    e = _usable(plan, 1, "1G")
    ran: list[list[str]] = []

    def child(argv: list[str], **_: object) -> subprocess.CompletedProcess[bytes]:
        ran.append(argv)
        line = b"7f0040000000 default file=/anon_hugepage\\040(deleted) huge anon=1 dirty=1 "
        return subprocess.CompletedProcess(argv, 0, line + b"N1=1 kernelpagesize_kB=1048576\n", b"")

    monkeypatch.setattr(audit_hugepages.subprocess, "run", child)
    monkeypatch.setattr(audit_hugepages.os, "uname", _Uname)
    copy = HostReader(tmp_path, live=False)
    assert audit_hugepages.hugepage_map(copy, e).note == (
        "mapping a page needs the live host (or a capture of it)"
    )
    _sysfs(tmp_path, 1, 1048576, free=0)
    live = HostReader(tmp_path, live=True)
    seen = audit_hugepages.hugepage_map(live, e)
    assert (seen.ok, seen.note) == (
        None,
        "node 1 has no free page of this size (all in use), none taken",
    )
    _sysfs(tmp_path, 1, 1048576, free=1, resv=1)
    seen = audit_hugepages.hugepage_map(HostReader(tmp_path, live=True), e)
    assert seen.note == "every free page of this size is reserved by a mapping, none taken"
    assert ran == []
    _sysfs(tmp_path, 1, 1048576, free=1)
    live = HostReader(tmp_path, live=True)
    seen = audit_hugepages.hugepage_map(live, e)
    assert (seen.ok, seen.found) == (True, "a page on node 1 (1048576 kB pages)")
    [argv] = ran
    # what the live host showed is recorded, as `hostc probe --capture` stores it: an
    # audit of the capture elsewhere reads the same and maps nothing
    rel = audit_hugepages.captured(1048576, 1)
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_bytes(live.files[rel])
    assert audit_hugepages.hugepage_map(HostReader(tmp_path, live=False), e) == seen
    assert len(ran) == 1
    flags = 0x40000 | (30 << 26)  # MAP_HUGETLB, log2(1 GiB) << MAP_HUGE_SHIFT
    assert argv[3:] == [str(1 << 30), str(flags), plan.nodes[1].housekeeping.expanded(",")]


@attrs.frozen
class _Uname:
    machine: str = "x86_64"
