"""Assemble the Plan from the resolved parts."""

from __future__ import annotations

from hostc.lower import cpu, kernel, memory
from hostc.plan import Limit, NodeView, Plan, Sysctl
from hostc.spec import presets
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology


def _sysctls(spec: HostSpec, pinned: bool) -> list[Sysctl]:
    overrides = [
        presets.Override(k, str(v), f"sysctl.{presets.quoted(k)}") for k, v in spec.sysctl.items()
    ]
    merged = presets.merge(
        "sysctl", spec.host.role.value, overrides, spec.preset.exclude, pinned=pinned
    )
    return [Sysctl(r.key, r.value, r.reason) for r in merged]


def _limits(spec: HostSpec) -> list[Limit]:
    overrides = []
    if spec.limits.nofile is not None:
        overrides.append(presets.Override("nofile", str(spec.limits.nofile), "limits.nofile"))
    if spec.limits.memlock is not None:
        m = spec.limits.memlock
        value = "unlimited" if m in ("unlimited", "infinity", -1) else str(m)
        overrides.append(presets.Override("memlock", value, "limits.memlock"))
    merged = presets.merge("limit", spec.host.role.value, overrides, spec.preset.exclude)
    return [Limit(r.key, r.value, r.reason) for r in merged]


def lower(spec: HostSpec, topo: Topology) -> Plan:
    parsed = cpu.parse(spec)
    part = cpu.partition(spec, topo, parsed)
    pins = cpu.workload_pins(spec, topo, part)
    pools = memory.pools(spec, topo)
    nodes = []
    for node in sorted(topo.nodes, key=lambda n: n.id):
        cpus = topo.node_cpus(node.id)
        reserved = memory.reserved_mib(pools, node.id)
        nodes.append(
            NodeView(
                id=node.id,
                cpus=cpus,
                housekeeping=cpus & part.housekeeping,
                isolated=cpus & part.isolated,
                gpus=tuple(g.name for g in topo.gpus if g.node == node.id),
                nics=tuple(n.name for n in topo.nics if n.node == node.id),
                memory_mib=node.memory_mib,
                hugepages=tuple((p.size, c) for p in pools for n, c in p.per_node if n == node.id),
                memory_left_mib=None if node.memory_mib is None else node.memory_mib - reserved,
            )
        )
    return Plan(
        host=spec.host.name,
        role=spec.host.role.value,
        arch=topo.arch,
        kernel=memory.kernel_release(spec, topo),
        partition=part,
        nodes=tuple(nodes),
        hugepages=tuple(pools),
        kernel_args=tuple(kernel.kernel_args(spec, topo.arch, part, pools)),
        sysctls=tuple(_sysctls(spec, bool(pins))),
        limits=tuple(_limits(spec)),
        workloads=tuple(pins),
        cmdline_budget=kernel.budget(topo.arch),
    )
