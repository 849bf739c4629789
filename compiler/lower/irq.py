"""Interrupts and NIC queues on an isolating host: which irqbalance variable bans the
isolated CPUs, where hostc pins each device's interrupts, and how many combined
queues each NIC keeps (issue 10)."""

from __future__ import annotations

from typing import Any

from hostc.cpuset import CpuSet
from hostc.knowledge import distro
from hostc.plan.model import (
    CpuPartition,
    DeviceIrq,
    Distro,
    HostFacts,
    IrqOwner,
    IrqPlan,
    NicChannels,
    Reason,
)
from hostc.provenance import Source, Value, default, key, topology
from hostc.topology.model import Topology
from hostc.vocab import DeviceKind, IrqbalanceVariable, NicChannelChoice


def irqbalance_variable(os: Distro | None, src: Source) -> tuple[IrqbalanceVariable, Reason]:
    """`src`: where the OS came from (`host.os` or the snapshot's os-release)."""
    ver = distro.irqbalance_version(os.id, os.version) if os is not None else None
    os_id = str(os) if os is not None else None
    if ver is not None and ver >= distro.IRQBALANCE_CPULIST_SINCE:
        shown = ".".join(map(str, ver))
        return IrqbalanceVariable.CPULIST, Reason(
            src, f"{os_id} ships irqbalance {shown}, which reads the cpulist variable"
        )
    if ver is not None:
        shown = ".".join(map(str, ver))
        why = f"{os_id} ships irqbalance {shown}, older than 1.8.0: only the hex mask exists"
    else:
        why = (
            f"irqbalance version of {os_id or 'an unknown OS'} not in hostc's table: the hex "
            "mask is read by every version (1.9 logs it as deprecated)"
        )
    return IrqbalanceVariable.MASK, Reason(src if os_id else default("irqbalance_hex_mask"), why)


def device_irqs(topo: Topology, part: CpuPartition) -> list[DeviceIrq]:
    out = []
    devices = [(DeviceKind.NIC, n.name, n.pci, n.node) for n in topo.nics] + [
        (DeviceKind.GPU, g.name, g.pci, g.node) for g in topo.gpus
    ]
    names = {n.name: (n.netdev, n.rdma) for n in topo.nics}
    local_of: dict[int, CpuSet] = {}  # a node's housekeeping CPUs, once per node
    for kind, name, pci, node in devices:
        if pci is None:
            continue
        if node is None:
            local = CpuSet()
        elif node in local_of:
            local = local_of[node]
        else:
            local = local_of[node] = part.housekeeping & topo.node_cpus(node)
        if local:
            why = (
                f"{name} sits on NUMA node {node}: its interrupts go to that node's "
                "housekeeping CPUs"
            )
            cpus = local
        else:
            where = f"node {node}" if node is not None else "an unknown node"
            why = f"{name} sits on {where}, which has no housekeeping CPU: all housekeeping CPUs"
            cpus = part.housekeeping
        netdev, rdma = names.get(name, (None, None)) if kind is DeviceKind.NIC else (None, None)
        reason = Reason(topology(name), why)
        out.append(DeviceIrq(name, kind, pci, node, cpus, reason, netdev=netdev, rdma=rdma))
    return out


def irq_plan(
    host: HostFacts,
    os_source: Source,
    topo: Topology,
    part: CpuPartition,
    r: Value[Any] | None,
) -> IrqPlan | None:
    """Only isolated hosts need IRQ settings; everyone else keeps the distro's default.
    `os_source`: where the host's OS came from (`host.os` or the snapshot)."""
    if not part.isolated:
        return None
    owner: IrqOwner = r.value if r is not None else IrqOwner.IRQBALANCE
    reason = (
        r.reason
        if r is not None
        else Reason(default("irq_owner"), "irqbalance stays, with the isolated CPUs banned")
    )
    variable, var_reason = irqbalance_variable(host.os, os_source)
    devices = tuple(device_irqs(topo, part)) if owner is IrqOwner.HOSTC else ()
    return IrqPlan(
        owner=owner,
        banned=part.isolated,
        default=part.housekeeping,
        irqbalance_variable=variable,
        variable_reason=var_reason,
        devices=devices,
        reason=reason,
    )


def nic_channels(
    topo: Topology, part: CpuPartition, given: NicChannelChoice | None
) -> tuple[NicChannels, ...]:
    """When isolating: each NIC's combined queues down to the housekeeping CPUs of its node
    (OpenShift NTO userLevelNetworking, TuneD realtime `[net] channels=combined N`), unless
    the spec keeps the driver's count (`irq.nic_channels = "keep"`).  The cost, named in
    the reason: receive-side scaling spreads kernel TCP/IP flows over one queue per
    channel, each served on one CPU (Documentation/networking/scaling.rst, RSS), so
    kernel-network throughput over the NIC is capped at that many CPUs; RDMA bypasses the
    kernel's queues."""
    if not part.isolated or given is NicChannelChoice.KEEP:
        return ()
    out = []
    for n in topo.nics:
        if n.pci is None:
            continue
        local = part.housekeeping & topo.node_cpus(n.node) if n.node is not None else CpuSet()
        where = f"node {n.node}" if local else "the host"
        cpus = local or part.housekeeping
        why = (
            f"{len(cpus)} combined queues, one per housekeeping CPU of {where}, where its "
            "interrupts go: more would only add interrupt vectors on those few CPUs; cost: "
            f"kernel TCP/IP over it (NFS, S3 model loading) is spread over {len(cpus)} "
            "CPUs at most, RDMA and GPUDirect are unaffected"
            + ("" if given else '; irq.nic_channels = "keep" keeps the driver\'s count')
        )
        src = key("irq", "nic_channels") if given else topology(n.name)
        reason = Reason(src, why)
        out.append(
            NicChannels(n.name, n.pci, n.node, len(cpus), reason, netdev=n.netdev, rdma=n.rdma)
        )
    return tuple(out)
