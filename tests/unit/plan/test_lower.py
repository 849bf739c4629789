"""Unit tests of check and lower with hand-checked expectations and exact messages."""

from __future__ import annotations

import attrs
import pytest

from hostc import api
from hostc.check import check
from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError, Severity
from hostc.plan.kernelargs import cmdline, kernel_args
from hostc.plan.model import Plan
from hostc.report.plan_view import numactl
from hostc.resolve import resolve
from hostc.spec import model as m
from hostc.spec.load import from_data, to_data
from hostc.topology.model import Topology

from topogen import machine

H100 = machine(
    packages=2, cores_per_node=32, smt=2, memory_mib=524288, gpus_per_node=2, cpu_vendor="intel"
)


def spec(**kw: object) -> m.HostSpec:
    host = kw.pop("host", m.Host(name="t", role=m.Role.INFERENCE))
    return m.HostSpec(host=host, **kw)  # type: ignore[arg-type]


def plan_of(s: m.HostSpec, topo: Topology = H100) -> Plan:
    return api.compile_plan(s, topo)[0]


def errors(s: m.HostSpec, topo: Topology = H100) -> list[str]:
    """check's errors, for a spec typed as the loader types it (as compile_plan does)."""
    resolved, found = resolve(from_data(to_data(s)), topo)
    found += check(resolved)
    return [f"{d.path}: {d.message}" for d in found if d.severity is Severity.ERROR]


def test_knobs_example_partition() -> None:
    """Serving on GPU0/1 → housekeeping 0-1,64-65 on node 0, isolated 2-31,66-95."""
    p = plan_of(
        spec(
            workload=[m.Workload("vllm", ["GPU0", "GPU1"])],
            cpu=m.Cpu(housekeeping_per_node=2, isolate="workload"),
        )
    )
    assert str(p.partition.isolated) == "2-31,66-95"
    assert str(p.nodes[0].housekeeping) == "0-1,64-65"
    assert str(p.nodes[1].housekeeping) == "32-63,96-127"
    assert numactl(p.workloads[0]) == "numactl --physcpubind=2-31,66-95 --membind=0"
    args = {a.key: a.value for a in kernel_args(p)}
    assert args["isolcpus"] == "managed_irq,2-31,66-95"
    assert args["irqaffinity"] == "0-1,32-65,96-127"
    assert {s.key: s.value for s in p.sysctls}["kernel.numa_balancing"] == "0"


def test_numa_balancing_stays_on_without_pinned_workloads() -> None:
    p = plan_of(spec())
    assert {s.key: s.value for s in p.sysctls}["kernel.numa_balancing"] == "1"


def test_housekeeping_per_node_takes_the_boot_core_first() -> None:
    topo = machine(packages=1, cores_per_node=4, smt=2, offline=frozenset({0}))
    p = plan_of(spec(cpu=m.Cpu(isolate="rest")), topo)
    # CPU 0 is offline; the boot CPU is 1, whose core is {1, 5}
    assert topo.boot_cpu == 1
    assert str(p.partition.housekeeping) == "1,5"
    assert 4 in topo.siblings(4)  # CPU 4 lost its sibling 0: a core of one thread


def test_no_empty_kernel_parameters_when_nothing_is_isolated() -> None:
    p = plan_of(spec(cpu=m.Cpu(isolate="none")))
    # only the table's kernel-argument rows (C-states: runtime); nothing of the partition
    rows = [w.arg for v in p.cmdline_settings if (w := v.setting.cmdline) is not None]
    assert [a.key for a in kernel_args(p)] == rows and rows


def test_cstates_only_on_x86() -> None:
    arm = attrs.evolve(H100, arch="aarch64")
    assert "intel_idle.max_cstate" not in cmdline(plan_of(spec(), arm))


def test_training_preset_has_no_cstates_and_no_isolation() -> None:
    p = plan_of(spec(host=m.Host(name="t", role=m.Role.TRAINING)))
    assert "max_cstate" not in cmdline(p)
    assert not p.partition.isolated


def test_per_node_hugepages_need_5_16() -> None:
    old = attrs.evolve(H100, kernel="5.15.0")
    even = spec(hugepages=m.Hugepages(size="1G", per_node={0: 8, 1: 8}))
    p, warnings = api.compile_plan(even, old)
    assert "hugepagesz=1G hugepages=16" in cmdline(p)
    assert [str(w.path) for w in warnings if str(w.path) != "host.os"] == ["hugepages.per_node"]
    uneven = spec(hugepages=m.Hugepages(size="1G", per_node={0: 8, 1: 2}))
    boot = spec(hugepages=m.Hugepages(size="1G", per_node={0: 8, 1: 2}, allocate="boot"))
    assert errors(boot, old) == [
        "hugepages.per_node: kernel 5.15.0 cannot reserve different counts per NUMA node at "
        "boot (needs Linux ≥ 5.16)"
    ]
    p, _ = api.compile_plan(uneven, old)  # before 5.16: hostc-hugepages.service, at runtime
    assert "hugepages=" not in cmdline(p) and p.hugepages[0].when == "runtime"
    assert "hugepages=0:8,1:2" in cmdline(plan_of(uneven))


def test_hugepages_fit_with_headroom() -> None:
    s = spec(hugepages=m.Hugepages(size="1G", per_node={1: 500}))
    assert errors(s) == [
        "hugepages.per_node.1: 500 × 1G = 512000 MiB does not fit on NUMA node 1: 524288 MiB "
        "minus 52428 MiB headroom leaves 471860 MiB"
    ]
    p = plan_of(spec(hugepages=m.Hugepages(size="1G", per_node={1: 460})))
    assert p.nodes[1].memory_left_mib == 524288 - 460 * 1024


def test_total_is_split_evenly_over_nodes_with_memory() -> None:
    topo = machine(packages=2, cores_per_node=2, smt=1, memory_mib=65536, cpuless_nodes=1)
    topo = attrs.evolve(topo, nodes=[*topo.nodes[:2], attrs.evolve(topo.nodes[2], memory_mib=0)])
    p = plan_of(spec(hugepages=m.Hugepages(size="2M", total=5)), topo)
    assert p.hugepages[0].per_node == ((0, 3), (1, 2))
    assert "hugepagesz=2M hugepages=0:3,1:2" in cmdline(p)


def test_unknown_smt_refuses_isolation() -> None:
    cpus = [attrs.evolve(c, core=None) for c in H100.cpus]
    topo = attrs.evolve(H100, cpus=cpus, source="numactl")
    assert errors(spec(cpu=m.Cpu(isolate="rest")), topo) == [
        "cpu.isolate: the snapshot does not say which CPUs are SMT siblings (CPUs 0-127, "
        "source numactl), so isolation could split a core"
    ]
    assert errors(spec(), topo) == []  # no isolation: nothing to split


def test_split_siblings_and_boot_cpu() -> None:
    assert errors(spec(cpu=m.Cpu(housekeeping="0-1", isolate="rest"))) == [
        "cpu.housekeeping: splits SMT siblings: 0 without 64; 1 without 65",
        "cpu.housekeeping: NUMA node 1 (CPUs 32-63,96-127) is left without housekeeping",
    ]
    assert errors(spec(cpu=m.Cpu(isolate="0,64"))) == [
        "cpu.isolate: isolates the boot CPU 0: the kernel keeps it for timekeeping, and "
        "isolating it breaks nohz_full"
    ]


def test_command_line_budget() -> None:
    many = [f"x{i}=" + "y" * 60 for i in range(40)]
    with pytest.raises(HostcError) as e:
        plan_of(spec(kernel=m.Kernel(extra_args=many)))
    (d,) = e.value.errors
    assert str(d.path) == "kernel" and "allows 2048 (COMMAND_LINE_SIZE)" in d.message


def test_preset_exclude_and_override_provenance() -> None:
    p = plan_of(
        spec(
            sysctl={"vm.swappiness": 10},
            preset=m.Preset(exclude=["net.core.somaxconn", "transparent_hugepage"]),
        )
    )
    by = {s.key: s for s in p.sysctls}
    assert "net.core.somaxconn" not in by
    assert by["vm.swappiness"].value == "10"
    assert str(by["vm.swappiness"].reason.source) == 'sysctl."vm.swappiness"'
    assert str(by["vm.max_map_count"].reason.source) == "preset:base"
    assert "transparent_hugepage" not in cmdline(p)


def test_explicit_sets_must_cover_online() -> None:
    s = spec(cpu=m.Cpu(housekeeping="0,64,32,96", isolate="1-10,65-74"))
    assert errors(s) == [
        "cpu.isolate: online CPU(s) 11-31,33-63,75-95,97-127 are neither housekeeping nor isolated"
    ]


def test_plan_cpu_sets_are_cpusets() -> None:
    p = plan_of(spec(cpu=m.Cpu(isolate="rest")))
    assert isinstance(p.partition.isolated, CpuSet)
    assert p.partition.housekeeping == CpuSet.parse("0,32,64,96")


def test_total_skips_cpuless_memory_nodes() -> None:
    """HBM / GPU-memory nodes have memory but no CPUs: a `total` never lands there."""
    topo = machine(packages=2, cores_per_node=2, smt=1, memory_mib=65536, cpuless_nodes=2)
    p = plan_of(spec(hugepages=m.Hugepages(size="1G", total=6)), topo)
    assert p.hugepages[0].per_node == ((0, 3), (1, 3))
    old = attrs.evolve(topo, kernel="5.4.0")
    even = spec(hugepages=m.Hugepages(size="1G", per_node={0: 2, 1: 2}, allocate="boot"))
    assert errors(even, old) == [
        "hugepages.per_node: kernel 5.4.0 predates per-node counts (5.16), and its own even "
        "split would also reserve pages on CPU-less node(s) 2, 3"
    ]
    p, _ = api.compile_plan(attrs.evolve(even, hugepages=m.Hugepages(per_node={0: 2, 1: 2})), old)
    assert p.hugepages[0].when == "runtime"  # by default the pages go to their nodes at runtime


def test_hidden_cpus_are_a_warning() -> None:
    topo = attrs.evolve(H100, hidden_cpus=CpuSet.parse("0-7"))
    _, warnings = api.compile_plan(spec(), topo)
    assert [w.message.split(";")[0] for w in warnings if str(w.path) != "host.os"] == [
        "the snapshot hides online CPUs 0-7 (a cgroup or firmware reservation)"
    ]


def test_limit_cstates_overrides_the_role_preset_both_ways() -> None:
    off = plan_of(spec(kernel=m.Kernel(limit_cstates=False)))
    assert "max_cstate" not in cmdline(off)
    boot = m.CStatesAt.BOOT  # the boot-time caps, by explicit choice
    on = plan_of(
        spec(
            host=m.Host(name="t", role=m.Role.TRAINING),
            kernel=m.Kernel(limit_cstates=True, cstates_at=boot),
        )
    )
    got = {a.key: str(a.reason.source) for a in kernel_args(on) if "cstate" in a.key}
    assert got == {
        "intel_idle.max_cstate": "kernel.limit_cstates",
        "processor.max_cstate": "kernel.limit_cstates",
    }
    # an explicit `true` wins over an exclusion of the preset's entry
    both = plan_of(
        spec(
            kernel=m.Kernel(limit_cstates=True, cstates_at=boot),
            preset=m.Preset(exclude=["max_cstate"]),
        )
    )
    assert "intel_idle.max_cstate=1 processor.max_cstate=1" in cmdline(both)


def test_pinned_layer_is_named_in_the_reason() -> None:
    p = plan_of(spec(workload=[m.Workload("svc", ["GPU0"])]))
    (nb,) = [s for s in p.sysctls if s.key == "kernel.numa_balancing"]
    assert (nb.value, str(nb.reason.source)) == ("0", "preset:inference+pinned")
    training = plan_of(
        spec(host=m.Host(name="t", role=m.Role.TRAINING), workload=[m.Workload("svc", ["GPU0"])])
    )
    (nb,) = [s for s in training.sysctls if s.key == "kernel.numa_balancing"]
    assert str(nb.reason.source) == "preset:training"
