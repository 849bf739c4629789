"""`[kubelet]` as lowering reads it: the keys as given (a reason says whether a key was
set) and the two defaults the spec's own rules decide, the CPU manager policy and
strict-cpu-reservation (KEP-4540: on where it is beta or GA).

Read once here, so `hostc.lower.kubelet` turns a resolved request into the Plan's
KubeletPlan and never reads the spec (issue 55 item 4).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from hostc.knowledge import kubelet as ko
from hostc.knowledge.kubelet import KubeVersion, Quantity
from hostc.record import Record
from hostc.spec.model import Kubelet, KubeletReserved
from hostc.vocab import (
    ContainerRuntime,
    CpuManagerPolicy,
    Flavor,
    MemoryManagerPolicy,
    NodeRole,
    TopologyPolicy,
    TopologyScope,
)


@attrs.frozen(repr=False, eq=False)
class Reserved(Record):
    """`kubelet.kube_reserved` or `kubelet.system_reserved` (None: not given)."""

    memory: Quantity | None
    ephemeral_storage: Quantity | None


@attrs.frozen(repr=False, eq=False)
class KubeletRequest(Record):
    """The `[kubelet]` keys (named as in node.toml, None: not given) and the resolved
    CPU manager policy and strict-cpu-reservation."""

    flavor: Flavor
    version: KubeVersion
    role: NodeRole | None
    runtime: ContainerRuntime
    cpu_manager_policy: CpuManagerPolicy | None  # as given
    policy: CpuManagerPolicy  # as given, else static
    cpu_manager_policy_options: tuple[str, ...]
    strict_cpu_reservation: bool | None  # as given
    strict: bool  # strict-cpu-reservation: as given, else by version (static only)
    allow_alpha_options: bool
    topology_manager_policy: TopologyPolicy | None
    topology_manager_scope: TopologyScope | None
    topology_manager_policy_options: Mapping[str, str]
    memory_manager_policy: MemoryManagerPolicy | None
    kube_reserved: Reserved | None
    system_reserved: Reserved | None
    eviction_hard: Mapping[str, str]
    reserved_memory: Mapping[int, Quantity] | None
    max_gpus_per_pod: int | None


def _reserved(r: KubeletReserved | None) -> Reserved | None:
    return None if r is None else Reserved(r.memory, r.ephemeral_storage)


def strict(k: Kubelet, policy: CpuManagerPolicy) -> bool:
    """strict-cpu-reservation as `kubelet.strict_cpu_reservation` says, by default where
    it is beta or GA (KEP-4540)."""
    if policy != "static":
        return False
    if k.strict_cpu_reservation is not None:
        return k.strict_cpu_reservation
    return k.version >= ko.STRICT_RESERVATION_DEFAULT_SINCE


def request(k: Kubelet | None) -> KubeletRequest | None:
    """The kubelet request of a spec's `[kubelet]` (None: the host runs no kubelet)."""
    if k is None:
        return None
    policy = k.cpu_manager_policy or CpuManagerPolicy.STATIC
    return KubeletRequest(
        flavor=k.flavor,
        version=k.version,
        role=k.role,
        runtime=k.runtime,
        cpu_manager_policy=k.cpu_manager_policy,
        policy=policy,
        cpu_manager_policy_options=tuple(k.cpu_manager_policy_options),
        strict_cpu_reservation=k.strict_cpu_reservation,
        strict=strict(k, policy),
        allow_alpha_options=k.allow_alpha_options,
        topology_manager_policy=k.topology_manager_policy,
        topology_manager_scope=k.topology_manager_scope,
        topology_manager_policy_options=k.topology_manager_policy_options,
        memory_manager_policy=k.memory_manager_policy,
        kube_reserved=_reserved(k.kube_reserved),
        system_reserved=_reserved(k.system_reserved),
        eviction_hard=k.eviction_hard,
        reserved_memory=k.reserved_memory,
        max_gpus_per_pod=k.max_gpus_per_pod,
    )
