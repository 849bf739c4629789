"""Lower the kubelet request (`hostc.resolve.kubelet`) into a KubeletPlan, from the
partition and memory budget already resolved.

Consistency by construction: reservedSystemCPUs is `plan.partition.housekeeping`
itself; reservedMemory is split from the one total the kubelet checks it
against (kube-reserved + system-reserved + evictionHard memory.available), so
the equation holds by arithmetic, not by a user adding numbers by hand.
"""

from __future__ import annotations

from hostc import vocab
from hostc.cpuset import CpuSet
from hostc.knowledge import kubelet as ko
from hostc.knowledge import runtime as runtimefacts
from hostc.knowledge.kubelet import Quantity
from hostc.plan.model import (
    CpuManager,
    CpuPartition,
    Eviction,
    HostFacts,
    KubeletPlan,
    KubeReservation,
    MemoryManager,
    MemoryReservation,
    NodeView,
    PodCapacity,
    Reason,
    RuntimeAffinity,
    TopologyManager,
)
from hostc.provenance import SpecKey, SpecKeys, key
from hostc.resolve.kubelet import KubeletRequest, Reserved

MIB = 1024**2


def _since(k: KubeletRequest) -> str:
    """Which row of the kubelet's versioned default table applies (kubeadm only)."""
    if k.flavor is not vocab.Flavor.KUBEADM:
        return ""
    return f" (its table since {ko.kubelet_eviction_others(k.version)[0]})"


def eviction(k: KubeletRequest) -> Eviction:
    text = k.eviction_hard.get("memory.available", ko.DEFAULT_EVICTION_MEMORY)
    memory = Quantity.parse(text)
    others = {s: v for s, v in k.eviction_hard.items() if s != "memory.available"}
    defaults = ko.eviction_others(k.flavor, k.version)
    kept = {s: v for s, v in defaults.items() if s not in others}
    rows = tuple(sorted({**kept, **others}.items()))
    whose = f"kubelet {k.version}'s" if k.flavor is vocab.Flavor.KUBEADM else f"{k.flavor}'s"
    if k.eviction_hard:
        why = (
            "hard eviction thresholds as set; setting any replaces the whole default "
            f"map, so {whose} defaults for {', '.join(sorted(kept)) or 'nothing else'} "
            "are restated"
        )
        if "memory.available" not in k.eviction_hard:
            why += f", and memory.available keeps the kubelet's {ko.DEFAULT_EVICTION_MEMORY}"
        return Eviction(memory, rows, Reason(key("kubelet", "eviction_hard"), why))
    return Eviction(
        memory,
        rows,
        Reason(
            key("kubelet"),
            f"{whose} default hard eviction thresholds{_since(k)}, written out: memory.available "
            f"{memory} counts in the reserved-memory sum",
        ),
    )


def _reservation(r: Reserved | None, name: str, who: str) -> KubeReservation | None:
    if r is None or (r.memory is None and r.ephemeral_storage is None):
        return None
    return KubeReservation(r.memory, r.ephemeral_storage, Reason(key("kubelet", name), who))


def split_memory(total: Quantity, weights: dict[int, int]) -> tuple[MemoryReservation, ...]:
    """`total` over nodes in proportion to `weights`, exactly: whole MiB when the total is
    whole MiB (else bytes), the rounding remainder one unit at a time from the lowest node."""
    weights = {n: w for n, w in weights.items() if w > 0}
    if total.bytes == 0 or not weights:
        return ()
    unit = MIB if total.bytes % MIB == 0 else 1
    units = total.bytes // unit
    whole = sum(weights.values())
    shares = {n: units * w // whole for n, w in sorted(weights.items())}
    left = units - sum(shares.values())
    for n in sorted(shares):
        if left == 0:
            break
        shares[n] += 1
        left -= 1
    return tuple(MemoryReservation(n, Quantity(s * unit)) for n, s in sorted(shares.items()) if s)


def reserved_memory(
    k: KubeletRequest, total: Quantity, part: CpuPartition, nodes: tuple[NodeView, ...]
) -> tuple[tuple[MemoryReservation, ...], Reason]:
    if k.reserved_memory is not None:
        rows = tuple(
            MemoryReservation(n, q) for n, q in sorted(k.reserved_memory.items()) if q.bytes
        )
        return rows, Reason(
            key("kubelet", "reserved_memory"),
            f"memory reserved per NUMA node as given; adds up to {total.in_mib}",
        )
    weights = {n.id: len(n.housekeeping) for n in nodes if n.memory_mib != 0}
    rows = split_memory(total, weights)
    spread = ", ".join(f"node {r.node}: {r.memory}" for r in rows) or "nothing"
    return rows, Reason(
        key("kubelet"),
        f"kube-reserved + system-reserved + hard eviction = {total.in_mib}, split over NUMA "
        f"nodes in proportion to their housekeeping CPUs ({len(part.housekeeping)} in all), "
        f"since the host's daemons allocate where they run: {spread}",
    )


def capacity(
    nodes: tuple[NodeView, ...], reserved: CpuSet, memory: tuple[MemoryReservation, ...]
) -> tuple[PodCapacity, ...]:
    by_node = {r.node: r.memory.bytes for r in memory}
    out = []
    for n in nodes:
        mem = None
        if n.memory_mib is not None:
            huge = sum(size_kib * 1024 * pages for size_kib, pages in n.hugepages)
            mem = Quantity(max(n.memory_mib * MIB - huge - by_node.get(n.id, 0), 0))
        out.append(PodCapacity(n.id, n.cpus - reserved, mem, n.hugepages, n.gpus))
    return tuple(out)


def _reserved_why(options: tuple[str, ...], policy: str) -> str:
    head = (
        "reservedSystemCPUs is the housekeeping set itself: the kubelet and system daemons "
        "run there"
    )
    if policy != "static":
        return head
    if ko.STRICT_RESERVATION in options:
        return f"{head}, and strict-cpu-reservation keeps every pod off it"
    return (
        f"{head}; exclusive CPUs never come from it, but Burstable and BestEffort pods "
        "share it with the other unallocated CPUs (strict-cpu-reservation would keep them off)"
    )


def _cpu_source(k: KubeletRequest, src: SpecKey, given: bool) -> SpecKey | SpecKeys:
    """The keys that chose the CPU manager: the policy (or its options), and
    `strict_cpu_reservation` where the spec sets it (it decides an option too)."""
    first = (
        key("kubelet", "cpu_manager_policy_options") if given and not k.cpu_manager_policy else src
    )
    if k.strict_cpu_reservation is None:
        return first
    return SpecKeys((first, key("kubelet", "strict_cpu_reservation")))


def _cpu_manager(k: KubeletRequest, part: CpuPartition) -> CpuManager:
    policy = k.policy
    src = key("kubelet", "cpu_manager_policy") if k.cpu_manager_policy else key("kubelet")
    why = (
        "Guaranteed pods with whole CPUs get exclusive CPUs outside the reserved set"
        if policy == "static"
        else "every pod shares the CPUs outside the reserved set"
    )
    given = set(k.cpu_manager_policy_options) if policy == "static" else set()
    added = k.strict and ko.STRICT_RESERVATION not in given
    options = tuple(sorted(given | ({ko.STRICT_RESERVATION} if added else set())))
    alpha = [o for o in options if ko.stage(o, k.version) is ko.Stage.ALPHA]
    if options:
        why += f"; options {', '.join(options)}"
    if added and k.strict_cpu_reservation:
        why += (
            f" ({ko.STRICT_RESERVATION} from kubelet.strict_cpu_reservation: it keeps "
            "Burstable and BestEffort pods off the reserved CPUs)"
        )
    elif added:
        why += (
            f" ({ko.STRICT_RESERVATION} added: {ko.stage(ko.STRICT_RESERVATION, k.version)} "
            f"in {k.version}, it keeps Burstable and BestEffort pods off the reserved CPUs)"
        )
    elif policy == "static" and k.strict_cpu_reservation is False:
        why += (
            f"; {ko.STRICT_RESERVATION} off (kubelet.strict_cpu_reservation = false): "
            "Burstable and BestEffort pods may run on the reserved CPUs"
        )
    if alpha:
        why += f" ({', '.join(alpha)} alpha in {k.version}: {ko.ALPHA_GATE} turned on)"
    return CpuManager(
        policy=policy,
        options=options,
        alpha_gate=bool(alpha) and k.allow_alpha_options,
        reserved=part.housekeeping,
        reason=Reason(_cpu_source(k, src, bool(given)), why),
        reserved_reason=Reason(part.housekeeping_reason.source, _reserved_why(options, policy)),
    )


def _topology(k: KubeletRequest, nodes: tuple[NodeView, ...]) -> TopologyManager | None:
    policy = k.topology_manager_policy
    most = max((len(n.gpus) for n in nodes), default=0)
    if policy is None and ko.topology_policy(policy, k.max_gpus_per_pod, most) is not None:
        return TopologyManager(
            vocab.TopologyPolicy.BEST_EFFORT,
            k.topology_manager_scope,
            Reason(
                key("kubelet", "max_gpus_per_pod"),
                f"pods of up to {k.max_gpus_per_pod} GPUs span NUMA nodes: best-effort aligns "
                "CPUs, memory and GPUs where it can and admits them (restricted and "
                "single-numa-node reject them: their merged hint is never preferred)",
            ),
            tuple(sorted(k.topology_manager_policy_options.items())),
        )
    if (
        policy is None
        and k.topology_manager_scope is None
        and not k.topology_manager_policy_options
    ):
        return None
    src = key("kubelet", "topology_manager_policy" if policy else "topology_manager_scope")
    why = {
        None: "the kubelet's default policy (none), scope as set",
        vocab.TopologyPolicy.NONE: "no NUMA alignment",
        vocab.TopologyPolicy.BEST_EFFORT: "prefer NUMA-aligned CPUs, memory and GPUs; admit anyway",
        vocab.TopologyPolicy.RESTRICTED: "admit a pod only on its preferred (fewest) NUMA nodes",
        vocab.TopologyPolicy.SINGLE_NUMA_NODE: "admit a pod only if it fits on one NUMA node",
    }[policy]
    return TopologyManager(
        policy,
        k.topology_manager_scope,
        Reason(src, why),
        tuple(sorted(k.topology_manager_policy_options.items())),
    )


def _affinity_why(host: HostFacts) -> str:
    keeps = runtimefacts.kernel_keeps_affinity(host.kernel_version)
    fixed = " and ".join(
        f"{a}.{b}.{c}" for (a, b), c in sorted(runtimefacts.RUNC_RESETS_AFFINITY.items())
    )
    since = ".".join(map(str, runtimefacts.KEEPS_REQUESTED_AFFINITY))
    why = (
        "the service manager's CPUAffinity= confines services to the housekeeping CPUs; from "
        f"kernel {since} a container keeps that inherited mask inside its pod's cpuset "
        f"unless runc resets it (runc {fixed}), so every Burstable and BestEffort pod would "
        "run on the housekeeping CPUs only"
    )
    if keeps is None:
        return why
    return why + f"; this host's kernel {host.kernel} {'does' if keeps else 'does not yet'}"


def runtime_affinity(
    k: KubeletRequest, part: CpuPartition, host: HostFacts
) -> RuntimeAffinity | None:
    """Every CPU for the unit that starts containers, where services are confined
    (`hostc.knowledge.runtime`); its own processes stay on the housekeeping CPUs through
    AllowedCPUs= where the release's systemd has it."""
    if not part.isolated:
        return None
    systemd = host.systemd  # the release's, resolved once in lower (None: unknown)
    allowed = systemd is not None and systemd >= runtimefacts.ALLOWED_CPUS_SINCE
    return RuntimeAffinity(
        unit=ko.runtime_unit(k.flavor, k.role, k.runtime),
        cpus=part.online,
        reason=Reason(part.isolated_reason.source, _affinity_why(host)),
        allowed=part.housekeeping if allowed else None,
        allowed_reason=Reason(
            key("kubelet"),
            f"the runtime's own processes stay on the housekeeping CPUs through its cgroup "
            f"cpuset (systemd {systemd}), which containers leave for their pod's",
        )
        if allowed
        else None,
    )


def lower(
    k: KubeletRequest | None, part: CpuPartition, nodes: tuple[NodeView, ...], host: HostFacts
) -> KubeletPlan | None:
    if k is None:
        return None
    kube = _reservation(k.kube_reserved, "kube_reserved", "for the kubelet and container runtime")
    system = _reservation(k.system_reserved, "system_reserved", "for the OS daemons")
    evict = eviction(k)
    total = Quantity(
        sum(r.memory.bytes for r in (kube, system) if r and r.memory) + evict.memory.bytes
    )
    rows, rows_reason = reserved_memory(k, total, part, nodes)
    cpu = _cpu_manager(k, part)
    memory = None
    if k.memory_manager_policy is not None:
        memory = MemoryManager(
            k.memory_manager_policy,
            Reason(
                key("kubelet", "memory_manager_policy"),
                "Guaranteed pods get memory and hugepages from their NUMA node(s)"
                if k.memory_manager_policy is vocab.MemoryManagerPolicy.STATIC
                else "no NUMA memory guarantees",
            ),
        )
    unit = ko.kubelet_unit(k.flavor, k.role)
    return KubeletPlan(
        flavor=k.flavor,
        role=k.role,
        version=k.version,
        unit=unit,
        cpu=cpu,
        topology=_topology(k, nodes),
        memory=memory,
        kube_reserved=kube,
        system_reserved=system,
        eviction=evict,
        reserved_memory=rows,
        reserved_memory_reason=rows_reason,
        capacity=capacity(nodes, cpu.reserved, rows),
        max_gpus_per_pod=k.max_gpus_per_pod,
        reason=Reason(
            key("kubelet", "flavor"),
            f"{k.flavor} kubelet {k.version}, read when {unit} starts",
        ),
        runtime=runtime_affinity(k, part, host),
        runtime_unit=ko.runtime_unit(k.flavor, k.role, k.runtime),
    )
