"""The `[kubelet]` table of node.toml: the kubelet's managers, reservations and
version, as attrs classes whose names are the TOML keys (see `hostc.spec.model`)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from hostc.fielddoc import doc
from hostc.knowledge.kubelet import KubeVersion, Quantity
from hostc.record import FrozenMap, Record
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
class KubeletReserved(Record):
    """Resources set aside from pods (kubeReserved / systemReserved).  CPUs are not here:
    the kubelet's reserved CPUs are the housekeeping set, always."""

    memory: Quantity | None = attrs.field(
        default=None,
        metadata=doc("memory, a quantity (Ki, Mi, Gi, Ti or bytes)", "1Gi"),
    )
    ephemeral_storage: Quantity | None = attrs.field(
        default=None,
        metadata=doc("local ephemeral storage (`ephemeral-storage`)", "1Gi"),
    )


@attrs.frozen(repr=False, eq=False)
class Kubelet(Record):
    """A Kubernetes node: kubelet CPU, topology and memory managers from the same Plan."""

    flavor: Flavor = attrs.field(
        metadata=doc("who runs the kubelet: kubeadm (kubelet.service), rke2 or k3s", "rke2"),
    )
    version: KubeVersion = attrs.field(
        metadata=doc(
            "kubelet minor release; decides the file form and which CPU-manager options exist",
            "1.31",
        ),
    )
    role: NodeRole | None = attrs.field(
        default=None,
        metadata=doc("rke2/k3s: server or agent, which names the service to restart", "agent"),
    )
    runtime: ContainerRuntime = attrs.field(
        default=ContainerRuntime.CONTAINERD,
        metadata=doc(
            "the CRI runtime that starts the containers: containerd (kubeadm's containerd.service, "
            "or the one rke2/k3s embed) or crio (crio.service); its unit gets the CPU affinity "
            "and memlock drop-ins",
            "crio",
        ),
    )
    cpu_manager_policy: CpuManagerPolicy | None = attrs.field(
        default=None,
        metadata=doc(
            "CPU manager policy (default static: Guaranteed pods get whole CPUs)", "static"
        ),
    )
    cpu_manager_policy_options: tuple[str, ...] = attrs.field(
        default=(),
        metadata=doc("static-policy options, checked against `version`", ["full-pcpus-only"]),
    )
    strict_cpu_reservation: bool | None = attrs.field(
        default=None,
        metadata=doc(
            "keep Burstable and BestEffort pods off reservedSystemCPUs (the static policy's "
            "strict-cpu-reservation option); unset: on from kubelet 1.33, where it is beta; "
            "false: those pods may share the reserved CPUs (a small node that needs them)",
            False,
        ),
    )
    allow_alpha_options: bool = attrs.field(
        default=False,
        metadata=doc(
            "permit alpha CPU-manager options by turning on the CPUManagerPolicyAlphaOptions "
            "feature gate",
            False,
        ),
    )
    topology_manager_policy: TopologyPolicy | None = attrs.field(
        default=None,
        metadata=doc("topology manager policy (unset: the kubelet's default, none)", "restricted"),
    )
    topology_manager_scope: TopologyScope | None = attrs.field(
        default=None,
        metadata=doc("topology manager scope: container or pod", "pod"),
    )
    topology_manager_policy_options: Mapping[str, str] = attrs.field(
        factory=FrozenMap,
        metadata=doc(
            "topology-manager options, checked against `version`: prefer-closest-numa-nodes "
            '("true") and max-allowable-numa-nodes (a count above 8, for hosts with more '
            "NUMA nodes)",
            {"max-allowable-numa-nodes": "16"},
        ),
    )
    memory_manager_policy: MemoryManagerPolicy | None = attrs.field(
        default=None,
        metadata=doc("memory manager policy: Static or None (unset: None)", "Static"),
    )
    kube_reserved: KubeletReserved | None = attrs.field(
        default=None, metadata=doc("kubeReserved: for the kubelet and the container runtime")
    )
    system_reserved: KubeletReserved | None = attrs.field(
        default=None, metadata=doc("systemReserved: for the OS daemons")
    )
    eviction_hard: Mapping[str, str] = attrs.field(
        factory=FrozenMap,
        metadata=doc(
            "hard eviction thresholds by signal (memory.available defaults to 100Mi; the "
            "kubelet's other defaults are kept unless set)",
            {"memory.available": "500Mi"},
        ),
    )
    reserved_memory: Mapping[int, Quantity] | None = attrs.field(
        default=None,
        metadata=doc(
            "memory reserved per NUMA node (default: derived so it adds up); must add up to "
            "kube_reserved + system_reserved + eviction_hard memory",
            {"0": "1124Mi", "1": "1024Mi"},
        ),
    )
    max_gpus_per_pod: int | None = attrs.field(
        default=None,
        metadata=doc(
            "the largest GPU request a pod makes here, checked against the topology policy", 8
        ),
    )
