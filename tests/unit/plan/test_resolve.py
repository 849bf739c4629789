"""The resolve stage: the host facts, the partition and the hugepage request, resolved
once and read by check and lower; the Plan's invariants as internal errors."""

from __future__ import annotations

import attrs
import pytest

from hostc import api
from hostc.check import PlanInvariantError, check_plan
from hostc.cpuset import CpuSet
from hostc.plan.model import OsFamily
from hostc.resolve import resolve
from hostc.spec import model as m
from hostc.spec.load import from_data, to_data
from hostc.topology.model import OsRelease

from topogen import machine

TOPO = machine(packages=2, cores_per_node=8, smt=2, gpus_per_node=1, cpu_vendor="amd")


def spec(**kw: object) -> m.HostSpec:
    """A spec built in Python, typed as the loader types it (text becomes CpuSets…)."""
    host = kw.pop("host", m.Host(name="t", role=m.Role.INFERENCE))
    return from_data(to_data(m.HostSpec(host=host, **kw)))  # type: ignore[arg-type]


def test_the_spec_s_host_facts_win_over_the_snapshot_s() -> None:
    topo = attrs.evolve(TOPO, os=OsRelease("ubuntu", "20.04", ["debian"]))
    host = m.Host(name="t", role=m.Role.INFERENCE, os="rhel-9.4", kernel="5.14.0-427")
    r, found = resolve(spec(host=host), topo)
    assert found == []
    assert (r.host.os_id, r.host.os_family) == ("rhel-9.4", OsFamily.RHEL)
    assert (r.host.kernel_release, r.host.kernel) == ("5.14.0-427", (5, 14))
    assert r.host.systemd == 252 and r.host.arch == "x86_64" and r.host.cpu_vendor == "amd"
    # the snapshot's own, where the spec says nothing
    r, _ = resolve(spec(), topo)
    assert (r.host.os_id, r.host.kernel) == ("ubuntu-20.04", (6, 8))


def test_facts_that_cannot_be_read_are_unknown_and_said_once() -> None:
    host = m.Host(name="t", role=m.Role.INFERENCE, os="rhel 9", kernel="abc")
    r, found = resolve(spec(host=host), TOPO)
    assert [str(d.path) for d in found] == ["host.os", "host.kernel"]
    assert r.host.os is None and r.host.os_family is OsFamily.UNKNOWN and r.host.kernel is None
    with pytest.raises(api.HostcError) as e:
        api.compile_plan(spec(host=host), TOPO)
    assert [str(d.path) for d in e.value.errors] == ["host.os", "host.kernel"]


def test_the_partition_and_the_hugepage_request_are_resolved_once() -> None:
    s = spec(
        cpu=m.Cpu(housekeeping_per_node=1, isolate="rest"),
        hugepages=m.Hugepages(size="1G", total=5),
    )
    r, _ = resolve(s, TOPO)
    assert r.partition is r.partition  # a cached property of the resolved value
    assert str(r.partition.housekeeping) == "0,8,16,24"
    [pool] = r.hugepages
    assert pool.per_node == {0: 3, 1: 2}
    plan, _ = api.compile_plan(s, TOPO)
    assert plan.partition == r.partition
    assert plan.hugepages[0].per_node == ((0, 3), (1, 2))


def test_topology_views_are_typed_cached_properties() -> None:
    assert TOPO.online is TOPO.online and TOPO.online == CpuSet(range(32))
    assert TOPO.memory_nodes == (0, 1) and TOPO.cpuless_memory_nodes == ()
    assert TOPO.first_cores(2) is TOPO.first_cores(2)
    assert attrs.evolve(TOPO) == TOPO  # the cache is no field: eq and evolve ignore it


def test_a_broken_plan_invariant_is_an_internal_error() -> None:
    plan, _ = api.compile_plan(spec(cpu=m.Cpu(isolate="rest")), TOPO)
    p = plan.partition
    broken = attrs.evolve(plan, partition=attrs.evolve(p, housekeeping=p.housekeeping | p.isolated))
    with pytest.raises(PlanInvariantError, match=r"^plan\.partition: CPU\(s\) .* both"):
        check_plan(broken)
    assert isinstance(PlanInvariantError("x"), AssertionError)  # not a HostcError: exit 3


def test_the_command_line_is_the_kernel_arguments_in_order() -> None:
    from hostc.plan.kernelargs import cmdline, kernel_args

    plan, _ = api.compile_plan(spec(cpu=m.Cpu(isolate="rest")), TOPO)
    assert cmdline(plan) == " ".join(map(str, kernel_args(plan)))
    assert "isolcpus=managed_irq," in cmdline(plan)
