"""What is allowed stays cheap: checks linear in the workloads, one warning per
cause and node, importers refusing early what no snapshot could hold.  Bounds are
generous (a shared CI core); the old behaviour missed them by orders of magnitude."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from hostc import api
from hostc.diagnostics import HostcError
from hostc.topology.model import Topology

from topogen import H100_KW, machine

TOPO: Topology = machine(**H100_KW)  # type: ignore[arg-type]


def many(n: int, share: bool) -> dict[str, Any]:
    return {
        "version": 1,
        "host": {"name": "t", "role": "inference", "kernel": "6.8"},
        # nohz_full is opt-in; named here, every workload's isolated CPUs are tickless
        "cpu": {
            "isolate": "workload",
            "mechanisms": ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"],
        },
        "workload": [
            {"name": f"w{i}", "gpus": [f"GPU{i % 4}"], "share_cpus": share} for i in range(n)
        ],
    }


@pytest.mark.parametrize("share", [True, False])
def test_two_thousand_workloads_compile_fast_with_one_warning_per_node(share: bool) -> None:
    start = time.perf_counter()
    plan, warnings = api.compile_plan(api.spec_from_data(many(2000, share)), TOPO)
    arts = api.emit(plan, ["systemd"])
    took = time.perf_counter() - start
    assert took < 30, f"{took:.1f}s for 2000 workloads"
    assert len(arts) > 2000
    shared = [w for w in warnings if "share isolated CPUs" in w.message]
    assert 1 <= len(shared) <= len(TOPO.nodes), [w.message for w in shared]


def test_a_duplicate_workload_name_is_found_in_one_pass() -> None:
    data = many(3000, True)
    data["workload"].append({"name": "w7", "gpus": ["GPU0"]})
    start = time.perf_counter()
    with pytest.raises(HostcError) as e:
        api.compile_plan(api.spec_from_data(data), TOPO)
    assert time.perf_counter() - start < 30
    assert "defined twice (also workload[7])" in str(e.value)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("lscpu", "# CPU,Core,Socket,Node\n" + "0,0,0,0\n" * 1_500_000),
        ("numactl", "available: 1 nodes (0)\n" + "node 0 size: 100 MB\n" * 400_000),
        ("nvidia-smi", "\tGPU0\n" + "GPU0\tX\n" * 2_000_000),
    ],
)
def test_an_import_no_snapshot_could_hold_is_refused_at_once(kind: str, text: str) -> None:
    start = time.perf_counter()
    with pytest.raises(HostcError, match="too many"):
        api.import_source(kind, text, file=f"{kind}.txt")
    assert time.perf_counter() - start < 5


def test_a_probe_of_hard_links_to_one_big_file_reads_no_value_past_its_bound(
    tmp_path: Path,
) -> None:
    """Every per-CPU file a hard link to one 16 MB file: each is refused by its size
    (a sysfs value is one line) and nothing is copied per link; the old reader decoded
    and kept a copy of the 16 MB for each of them (over 1 GB for 16 CPUs)."""
    import tracemalloc

    from sysfs_fixtures import build, smt_host

    root = build(smt_host(2, 4, 2, 2), tmp_path / "root")
    big = tmp_path / "big"
    big.write_bytes(b"1" * (16 << 20))
    per_cpu = ("online", "core_id", "physical_package_id", "die_id", "core_cpus_list")
    linked = [p for p in root.glob("sys/devices/system/cpu/cpu*/**/*") if p.name in per_cpu]
    assert len(linked) > 60
    for p in linked:
        p.unlink()
        os.link(big, p)
    tracemalloc.start()
    try:
        with pytest.raises(HostcError) as e:
            api.probe(root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20, f"{peak >> 20} MiB for a tree of {len(linked)} links"
    refused = {
        d.file for d in e.value.diagnostics if "a sysfs or procfs value is at most" in d.message
    }
    assert {str(p) for p in linked if p.name == "core_id"} <= refused, e.value
    assert refused <= {str(p) for p in linked}, e.value


def test_a_file_read_whole_is_still_bounded_when_read_again_as_a_value(tmp_path: Path) -> None:
    """The host tree reads a file once by identity; a second name of it (a hard link) read
    with a smaller bound is refused, never handed the bytes the larger bound admitted."""
    from hostc.topology.importers.chroot import HostTree

    (tmp_path / "whole").write_bytes(b"x" * 5000)
    os.link(tmp_path / "whole", tmp_path / "value")
    tree = HostTree(tmp_path)
    assert tree.read("whole", limit=1 << 20, what="file") == b"x" * 5000
    with pytest.raises(HostcError, match="is 5000 bytes; a value is at most 4 KiB"):
        tree.read("value", limit=4096, what="value")


def test_the_picture_reads_the_plan_once_not_once_per_node() -> None:
    """`plan --format svg` of many NUMA nodes: the indexes over the whole Plan are built
    once per picture.  Caches keyed on the Plan hashed all of it (every link, every CPU)
    for each node: cubic in the devices, past 10 s on a 7.7 MB snapshot.  Counted: the
    Records hashed while drawing, against the Plan's size."""
    import attrs

    from hostc.plan.model import DeviceLink
    from hostc.record import Record
    from hostc.report.svg import render_svg

    topo = machine(
        packages=2, nodes_per_package=16, cores_per_node=2, gpus_per_node=2, nics_per_node=2
    )
    spec = api.spec_from_data(
        {
            "version": 1,
            "host": {"name": "t", "role": "inference", "kernel": "6.8"},
            "workload": [{"name": "w", "gpus": ["GPU0"]}],
        }
    )
    plan, _ = api.compile_plan(spec, topo)
    links = tuple(
        DeviceLink(g, nic, "NODE" if a.id == b.id else "SYS")
        for a in plan.nodes
        for g in a.gpus
        for b in plan.nodes
        for nic in b.nics
    )
    plan = attrs.evolve(plan, hardware=attrs.evolve(plan.hardware, links=links))
    size = len(plan.partition.online) + len(links) + 5 * len(plan.nodes)
    hashed = 0
    real = Record.__hash__

    def counted(self: Record) -> int:
        nonlocal hashed
        hashed += 1
        return real(self)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(Record, "__hash__", counted)
        render_svg(plan)
    assert hashed <= 2 * size, (hashed, size, len(plan.nodes))


def test_a_probe_parses_a_file_once_however_many_links_name_it(tmp_path: Path) -> None:
    """Every CPU's sibling lists a hard link to one valid 54 KB CPU list (under the value
    bound): one decode and one parse for all of them.  Parsed once per link, 512 CPUs
    took 390 s."""
    from hostc.cpuset import CpuSet

    from sysfs_fixtures import build, smt_host

    root = build(smt_host(2, 4, 2, 2), tmp_path / "root")
    shared = tmp_path / "siblings"
    shared.write_text(",".join(str(i) for i in range(0, 20000, 2)) + "\n")
    names = ("thread_siblings_list", "core_cpus_list")
    linked = [p for p in root.glob("sys/devices/system/cpu/cpu*/topology/*") if p.name in names]
    assert len(linked) == 32
    for p in linked:
        p.unlink()
        os.link(shared, p)
    parsed = 0
    real = CpuSet.parse.__func__  # type: ignore[attr-defined]

    def counted(cls: type[CpuSet], text: str) -> CpuSet:
        nonlocal parsed
        parsed += len(text) > 1000
        return real(cls, text)  # type: ignore[no-any-return]

    with pytest.MonkeyPatch.context() as m:
        m.setattr(CpuSet, "parse", classmethod(counted))
        with pytest.raises(HostcError):  # the lists name CPUs the machine does not have
            api.probe(root)
    assert parsed == 1, f"the one shared list parsed {parsed} times"
