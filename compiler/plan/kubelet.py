"""The kubelet part of the Plan: CPU, topology and memory managers, reservations,
eviction and the container runtime's CPU affinity, as typed values the kubelet target spells."""

from __future__ import annotations

import attrs

from hostc.cpuset import CpuSet
from hostc.knowledge.kubelet import KubeVersion, Quantity
from hostc.plan.base import Reason, When
from hostc.record import Record
from hostc.units import format_kib
from hostc.vocab import (
    CpuManagerPolicy,
    Flavor,
    MemoryManagerPolicy,
    NodeRole,
    TopologyPolicy,
    TopologyScope,
)


@attrs.frozen(repr=False, eq=False)
class CpuManager(Record):
    """The kubelet's CPU manager.  `reserved` is the partition's housekeeping set, read
    from the Plan, never re-derived: system daemons and the kubelet run there."""

    policy: CpuManagerPolicy
    options: tuple[str, ...]  # static-policy options, each "true"
    alpha_gate: bool  # CPUManagerPolicyAlphaOptions must be on for an alpha option
    reserved: CpuSet  # reservedSystemCPUs
    reason: Reason
    reserved_reason: Reason
    when: When = When.SERVICE


@attrs.frozen(repr=False, eq=False)
class TopologyManager(Record):
    policy: TopologyPolicy | None
    scope: TopologyScope | None
    reason: Reason
    #: topologyManagerPolicyOptions, in the kubelet's spelling (name, value), sorted
    options: tuple[tuple[str, str], ...] = ()
    when: When = When.SERVICE


@attrs.frozen(repr=False, eq=False)
class MemoryManager(Record):
    policy: MemoryManagerPolicy
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen(repr=False, eq=False)
class KubeReservation(Record):
    """kubeReserved or systemReserved (no cpu: reservedSystemCPUs overrides it)."""

    memory: Quantity | None
    ephemeral_storage: Quantity | None
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen(repr=False, eq=False)
class Eviction(Record):
    """evictionHard: `memory` is memory.available, the part reservedMemory counts."""

    memory: Quantity
    others: tuple[tuple[str, str], ...]  # (signal, threshold) as the kubelet writes them
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen(repr=False, eq=False)
class MemoryReservation(Record):
    node: int
    memory: Quantity


@attrs.frozen(repr=False, eq=False)
class PodCapacity(Record):
    """What one NUMA node leaves for pods once the host has taken its share."""

    node: int
    cpus: CpuSet  # online minus reservedSystemCPUs
    memory: Quantity | None  # node memory minus hugepages minus reservedMemory
    hugepages: tuple[tuple[int, int], ...]  # (page size in KiB, pages): pod-allocatable
    gpus: tuple[str, ...]


@attrs.frozen(repr=False, eq=False)
class RuntimeAffinity(Record):
    """The container runtime's unit where the service manager confines services to the
    housekeeping CPUs: every CPU as its affinity, which the containers it starts inherit,
    and the housekeeping CPUs as its own cgroup cpuset where systemd has AllowedCPUs=."""

    unit: str
    cpus: CpuSet  # CPUAffinity=
    reason: Reason
    allowed: CpuSet | None  # AllowedCPUs=
    allowed_reason: Reason | None
    when: When = When.SERVICE


@attrs.frozen(repr=False, eq=False)
class KubeletPlan(Record):
    """A Kubernetes node's kubelet managers, from the same partition and memory budget.

    Invariant (a Plan rule): Σ reserved_memory == kube_reserved.memory +
    system_reserved.memory + eviction.memory, the equation the kubelet checks at start.
    """

    flavor: Flavor
    role: NodeRole | None
    version: KubeVersion
    unit: str  # the systemd unit whose restart applies the configuration
    cpu: CpuManager
    topology: TopologyManager | None
    memory: MemoryManager | None
    kube_reserved: KubeReservation | None
    system_reserved: KubeReservation | None
    eviction: Eviction
    reserved_memory: tuple[MemoryReservation, ...]  # per NUMA node; emitted with Static
    reserved_memory_reason: Reason
    capacity: tuple[PodCapacity, ...]
    max_gpus_per_pod: int | None
    reason: Reason
    when: When = When.SERVICE
    runtime: RuntimeAffinity | None = None
    runtime_unit: str = "containerd.service"  # the unit that starts containers (runc)

    @property
    def memory_total(self) -> Quantity:
        """kube-reserved + system-reserved + hard eviction memory: reservedMemory sums to it."""
        parts = [r.memory for r in (self.kube_reserved, self.system_reserved) if r and r.memory]
        return Quantity(sum(q.bytes for q in parts) + self.eviction.memory.bytes)

    @property
    def memory_manager_static(self) -> bool:
        return self.memory is not None and self.memory.policy is MemoryManagerPolicy.STATIC


def checkpointed(k: KubeletPlan) -> bool:
    """Whether the kubelet keeps a checkpoint of hostc's policy (a CPU policy other than
    none, or the Static memory manager): what a managers change must clear."""
    return k.cpu.policy != "none" or k.memory_manager_static


def managers_stamp(k: KubeletPlan) -> str:
    """The settings the kubelet managers' checkpoints depend on, as one line: a change
    means the checkpoints are cleared at the next boot (drain and reboot).
    hostc-kubelet-reset compares it with the stamp the last reset left, and the
    disruption compares two builds' stamps (where `checkpointed`): one spelling for both.
    The Static memory manager's checkpoint also holds each node's hugepages per size,
    and a kubelet whose checkpoint differs from the machine refuses to start ("the
    expected machine state is different from the real one", kubernetes
    pkg/kubelet/cm/memorymanager/policy_static.go getDefaultMachineState/validateState),
    so there the pools are part of the stamp (left out where none: older stamps hold)."""
    memory = ",".join(f"{r.node}:{r.memory}" for r in k.reserved_memory)
    huge = ",".join(
        f"{c.node}:" + "+".join(f"{n}x{format_kib(size)}" for size, n in c.hugepages)
        for c in k.capacity
        if c.hugepages
    )
    return (
        f"cpu={k.cpu.policy} options={','.join(k.cpu.options) or '-'} "
        f"reserved={k.cpu.reserved} memory={k.memory.policy if k.memory else '-'} "
        f"reservedMemory={memory if k.memory_manager_static else '-'}"
        + (f" hugepages={huge}" if k.memory_manager_static and huge else "")
    )
