"""Kubelet knowledge as data: policy names, the CPU-manager options' maturity per
kubelet minor, the drop-in directory's first release, and the unit per flavor.

Shared by the spec model (enums), check (what a version accepts), lower and the
kubelet target (feature gates, file form).  Sources: targets.md §10 (kubelet
source and the CPU/topology/memory manager pages on kubernetes.io).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping

import attrs


class Flavor(enum.StrEnum):
    KUBEADM = "kubeadm"  # the distro's kubelet.service, KubeletConfiguration files
    RKE2 = "rke2"  # /etc/rancher/rke2/config.yaml.d, kubelet-arg flags
    K3S = "k3s"  # /etc/rancher/k3s/config.yaml.d, kubelet-arg flags


class NodeRole(enum.StrEnum):
    SERVER = "server"
    AGENT = "agent"


class CpuManagerPolicy(enum.StrEnum):
    STATIC = "static"
    NONE = "none"


class TopologyPolicy(enum.StrEnum):
    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


class TopologyScope(enum.StrEnum):
    CONTAINER = "container"
    POD = "pod"


class MemoryManagerPolicy(enum.StrEnum):
    STATIC = "Static"
    NONE = "None"


class Stage(enum.StrEnum):
    ALPHA = "alpha"
    BETA = "beta"
    GA = "GA"


@attrs.frozen(order=True)
class KubeVersion:
    """A kubelet minor release, `1.31` (patch releases do not change what it accepts)."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> KubeVersion:
        m = re.match(r"^v?([0-9]{1,2})\.([0-9]{1,3})(?:\.[0-9]{1,4})?$", text.strip())
        if m is None or not text.isascii():
            raise ValueError(f"{text!r} is not a kubelet version like 1.31")
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


#: The oldest kubelet hostc writes for: the memory manager is beta (on by default) from 1.22.
OLDEST = KubeVersion(1, 22)
#: `--config-dir` drop-ins: alpha 1.28 (behind an env var), beta 1.30, GA 1.35.
CONFIG_DIR_SINCE = KubeVersion(1, 30)
CONFIG_DIR_GA = KubeVersion(1, 35)

#: CPU-manager static-policy options: (first minor, stage from then on), oldest first.
CPU_OPTIONS: Mapping[str, tuple[tuple[KubeVersion, Stage], ...]] = {
    "full-pcpus-only": (
        (KubeVersion(1, 22), Stage.ALPHA),
        (KubeVersion(1, 23), Stage.BETA),
        (KubeVersion(1, 33), Stage.GA),
    ),
    "distribute-cpus-across-numa": (
        (KubeVersion(1, 23), Stage.ALPHA),
        (KubeVersion(1, 33), Stage.BETA),
    ),
    "align-by-socket": ((KubeVersion(1, 25), Stage.ALPHA),),
    "distribute-cpus-across-cores": ((KubeVersion(1, 31), Stage.ALPHA),),
    "strict-cpu-reservation": (
        (KubeVersion(1, 32), Stage.ALPHA),
        (KubeVersion(1, 33), Stage.BETA),
    ),
    "prefer-align-cpus-by-uncorecache": (
        (KubeVersion(1, 32), Stage.ALPHA),
        (KubeVersion(1, 34), Stage.BETA),
    ),
}

#: Pairs the kubelet refuses together (cpumanager policy_options.go ValidateStaticPolicyOptions).
CPU_OPTION_CONFLICTS: tuple[tuple[str, str], ...] = (
    ("full-pcpus-only", "distribute-cpus-across-cores"),
    ("distribute-cpus-across-numa", "distribute-cpus-across-cores"),
)

ALPHA_GATE = "CPUManagerPolicyAlphaOptions"


#: Topology-manager policy options, the same way (kubelet topologymanager
#: policy_options.go; the options themselves are beta, on by default, from 1.28).
TOPOLOGY_OPTIONS: Mapping[str, tuple[tuple[KubeVersion, Stage], ...]] = {
    "prefer-closest-numa-nodes": (
        (KubeVersion(1, 26), Stage.ALPHA),
        (KubeVersion(1, 28), Stage.BETA),
        (KubeVersion(1, 32), Stage.GA),
    ),
    "max-allowable-numa-nodes": ((KubeVersion(1, 31), Stage.BETA),),
}
#: The topology manager refuses to start on a host with more NUMA nodes than this
#: ("unsupported on machines with more than 8 NUMA Nodes") unless a policy of none,
#: or max-allowable-numa-nodes raises the limit; that option takes no lower value.
MAX_NUMA_NODES = 8


def stage(
    option: str,
    version: KubeVersion,
    table: Mapping[str, tuple[tuple[KubeVersion, Stage], ...]] = CPU_OPTIONS,
) -> Stage | None:
    """The option's maturity in that kubelet, or None when that kubelet does not know it."""
    found = None
    for since, st in table.get(option, ()):
        if version >= since:
            found = st
    return found


def first_release(
    option: str, table: Mapping[str, tuple[tuple[KubeVersion, Stage], ...]] = CPU_OPTIONS
) -> KubeVersion | None:
    rows = table.get(option)
    return rows[0][0] if rows else None


def kubelet_unit(flavor: Flavor, role: NodeRole | None) -> str:
    """The systemd unit whose restart makes the kubelet reread its configuration."""
    if flavor is Flavor.KUBEADM:
        return "kubelet.service"
    if flavor is Flavor.RKE2:
        return "rke2-server.service" if role is NodeRole.SERVER else "rke2-agent.service"
    return "k3s.service" if role is NodeRole.SERVER else "k3s-agent.service"


#: The kubelet's state files that a policy change makes stale (it refuses to start with them).
CPU_STATE = "/var/lib/kubelet/cpu_manager_state"
MEMORY_STATE = "/var/lib/kubelet/memory_manager_state"

#: evictionHard memory.available when not set: the kubelet's own default.
DEFAULT_EVICTION_MEMORY = "100Mi"
#: The kubelet's other hard-eviction defaults.  Setting evictionHard at all replaces the
#: whole default map, so hostc restates these unless the spec sets them.
DEFAULT_EVICTION_OTHERS: Mapping[str, str] = {
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
}
EVICTION_SIGNALS = (
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "containerfs.available",
    "containerfs.inodesFree",
    "pid.available",
)
