"""The partition invariants every accepted plan must satisfy (DESIGN.md, CpuPartition)."""

from __future__ import annotations

from hostc.check import check_plan
from hostc.diagnostics import Severity
from hostc.plan.kernelargs import cmdline
from hostc.plan.model import Plan
from hostc.topology.model import Topology


def assert_partition_sound(topo: Topology, plan: Plan, *, every_node_keeps: bool = True) -> None:
    p = plan.partition
    assert p.housekeeping | p.isolated == topo.online
    assert p.housekeeping.isdisjoint(p.isolated)
    assert topo.boot_cpu in p.housekeeping
    for core in topo.cores().values():
        assert core <= p.housekeeping or core <= p.isolated, f"core {core} split"
    if every_node_keeps:
        for node in topo.node_ids():
            cpus = topo.node_cpus(node)
            assert not cpus or cpus & p.housekeeping, f"node {node} has no housekeeping"
    for mech in plan.isolation:  # nohz_full on busy-polling workloads' CPUs: isolated ones only
        assert mech.cpus is None or mech.cpus <= p.isolated, f"{mech.mechanism} not isolated"
    assert len(cmdline(plan)) <= plan.host.cmdline_budget
    # plan warnings (known tuning traps) are advice; no plan rule may find an error
    assert [d for d in check_plan(plan) if d.severity is Severity.ERROR] == []
