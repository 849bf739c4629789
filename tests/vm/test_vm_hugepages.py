"""Booted-VM test: hugepage pools written per NUMA node at runtime (issue 52, F2 and a
second pool), on the lifecycle VM's third boot (v2 in effect: Debian 12, kernel 6.1,
2 nodes × 4 CPUs).

v2 asks for its pools at runtime (`hugepages.allocate = "runtime"`): 2M pages per node
and one 1G page on node 1.  The guest's commands are tests/vm/steps/hugepages.sh
(sourced by step3.sh; results under hugepages/).

Proves: the command line carries no hugepage count (only default_hugepagesz);
hostc-hugepages.service ran early in the boot and succeeded, before sysinit.target, the
workload and hostc's other units; every node has the Plan's count of each size, the
largest pages written first; `hostc audit` reads each count back and maps one page of
each size on its node; running the unit again (what hostc-apply does on a change) writes
nothing and succeeds; a count the kernel cannot give fails the script, naming the node,
the size and the pages got and wanted.

`-m "not vm"` leaves it out; without root, QEMU, vm-boot or its image it skips (locally)
or fails (CI=true).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_vm import HERE, _read, lifecycle_vm, vm_lane

from hostc import api
from hostc.plan.model import Plan
from hostc.units import format_kib, size_kib

pytestmark = pytest.mark.vm
__all__ = ["lifecycle_vm", "vm_lane"]  # the fixtures, used by name


def _v2() -> Plan:
    plan, _ = api.compile_file(HERE / "v2.toml")
    return plan


def _counts(results: Path) -> dict[tuple[int, int], tuple[int, int, int]]:
    """(node, KiB) → (nr, free, surplus), as the guest read them."""
    out = {}
    for line in _read(results, "hugepages/counts").splitlines():
        node, size, nr, free, surplus = line.split()
        out[(int(node), int(size.removesuffix("kB")))] = (int(nr), int(free), int(surplus))
    return out


def test_vm_runtime_pools_are_on_their_nodes_and_not_on_the_command_line(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    plan = _v2()
    runtime = [p for p in plan.hugepages if p.when == "runtime"]
    assert len(runtime) == 2 and {p.size_kib for p in runtime} == {2048, 1048576}, plan.hugepages
    words = _read(results, "hugepages/cmdline").split()
    assert not [w for w in words if w.startswith(("hugepages=", "hugepagesz="))], words
    assert f"default_hugepagesz={format_kib(plan.hugepages[0].size_kib)}" in words
    unit = _read(results, "hugepages/unit")
    assert "ActiveState=active" in unit and "Result=success" in unit, unit
    counts = _counts(results)
    for p in runtime:
        wanted = dict(p.per_node)
        for node in (0, 1):
            assert counts[(node, p.size_kib)][0] == wanted.get(node, 0), (p, counts)
            assert counts[(node, p.size_kib)][2] == 0  # no surplus: every page persistent
    journal = [x for x in _read(results, "hugepages/journal").splitlines() if "pages of" in x]
    sizes = [x.rsplit(" ", 1)[1] for x in journal]
    assert sizes == sorted(sizes, key=lambda s: -size_kib(s)), journal  # largest first


def test_vm_the_pools_are_in_place_before_sysinit_the_workload_and_hostc_s_units(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    stamps = {}
    for line in _read(results, "hugepages/order").splitlines():
        unit, active, started = line.split()
        stamps[unit] = (int(active), int(started))
    done = stamps["hostc-hugepages.service"][0]
    assert done > 0, stamps
    assert done <= stamps["sysinit.target"][0], stamps
    for unit in ("demo2.service", "hostc-tuning.service", "hostc-verify.service"):
        started = stamps[unit][1]
        assert started == 0 or done <= started, (unit, stamps)


def test_vm_audit_reads_each_pool_back_and_maps_a_page_per_size_and_node(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    doc = json.loads(_read(results, "hugepages/audit.json"))
    rows = {f["setting"]: f for f in doc["findings"] if f["setting"].startswith("hugepages ")}
    want = set()
    for p in _v2().hugepages:
        for node, count in p.per_node:
            name = f"hugepages {format_kib(p.size_kib)} node{node}"
            want |= {name, f"{name} usable"}
            assert (rows[name]["status"], rows[name]["found"]) == ("applied", str(count)), rows
            usable = rows[f"{name} usable"]
            assert usable["status"] == "applied", usable
            assert usable["found"] == f"a page on node {node} ({p.size_kib} kB pages)", usable
    assert set(rows) == want, sorted(rows)
    assert _read(results, "hugepages/audit.rc").strip() == "0", _read(
        results, "hugepages/audit.err"
    )


def test_vm_the_unit_again_writes_nothing_and_a_count_it_cannot_get_fails_naming_it(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    assert _read(results, "hugepages/rerun.rc").strip() == "0"
    said = [  # the script's own lines (the journal also has systemd's about the unit)
        [
            x
            for x in _read(results, f"hugepages/{name}").splitlines()
            if x.startswith("hostc-hugepages: ")
        ]
        for name in ("journal", "journal-rerun")
    ]
    assert said[1] == said[0] * 2, said  # the same counts, in place: nothing refused or short
    assert not [x for x in said[1] if "refused" in x or "got " in x], said
    assert _read(results, "hugepages/bad.rc").strip() == "1"
    assert (
        "hostc-hugepages: node 7, 2M pages: got none, wanted 1: "
        "/sys/devices/system/node/node7/hugepages/hugepages-2048kB is missing (no such size "
        "or node)"
    ) in _read(results, "hugepages/bad.out").splitlines()
