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

    @classmethod
    def json_schema(cls) -> dict[str, object]:
        """How node.toml writes a kubelet version, for `hostc schema node`."""
        return {"type": "string", "pattern": "^v?[0-9]+[.][0-9]+([.][0-9]+)?$"}


#: The oldest kubelet hostc writes for: the memory manager is beta (on by default) from 1.22.
OLDEST = KubeVersion(1, 22)
#: `--config-dir` drop-ins: alpha 1.28 (behind an env var), beta 1.30, GA 1.35 (KEP-3983;
#: kubernetes.io blog "Kubelet Configuration Drop-in Directory Graduates to GA").  The flag
#: defaults to "" (off), and kubeadm's 10-kubeadm.conf passes only --config.
CONFIG_DIR_SINCE = KubeVersion(1, 30)
CONFIG_DIR_GA = KubeVersion(1, 35)
#: kubeadm's packaged kubelet.service.d/10-kubeadm.conf (kubernetes/release): it sets
#: Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml", reads
#: KUBELET_KUBEADM_ARGS from /var/lib/kubelet/kubeadm-flags.env and KUBELET_EXTRA_ARGS from
#: /etc/default/kubelet (deb) or /etc/sysconfig/kubelet (rpm) through EnvironmentFile=,
#: and runs `kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS
#: $KUBELET_EXTRA_ARGS`.  The packages ship that env file with `KUBELET_EXTRA_ARGS=`, and
#: EnvironmentFile= wins over Environment=, so a drop-in can deliver --config-dir only by
#: restating KUBELET_CONFIG_ARGS (an Environment= line, which a later drop-in overrides).
KUBEADM_CONFIG = "/var/lib/kubelet/config.yaml"
CONFIG_DIR = "/etc/kubernetes/kubelet.conf.d"
KUBEADM_CONFIG_ARGS = "KUBELET_CONFIG_ARGS"

#: strict-cpu-reservation (KEP-4540) takes reservedSystemCPUs out of the shared pool, so
#: Burstable and BestEffort pods no longer run on them.  hostc turns it on from its beta.
STRICT_RESERVATION = "strict-cpu-reservation"
STRICT_RESERVATION_DEFAULT_SINCE = KubeVersion(1, 33)

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
    # KEP-4540: alpha 1.32, beta 1.33, GA 1.35 (kubernetes.dev/resources/keps/4540)
    "strict-cpu-reservation": (
        (KubeVersion(1, 32), Stage.ALPHA),
        (KubeVersion(1, 33), Stage.BETA),
        (KubeVersion(1, 35), Stage.GA),
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


def topology_policy(
    given: TopologyPolicy | None, max_gpus_per_pod: int | None, most_gpus_per_node: int
) -> TopologyPolicy | None:
    """The policy hostc writes: the one given; with none given and pods of more GPUs than
    any NUMA node has, best-effort (restricted and single-numa-node reject such pods,
    none aligns nothing); otherwise none written (the kubelet's default, none)."""
    if given is None and max_gpus_per_pod is not None and max_gpus_per_pod > most_gpus_per_node:
        return TopologyPolicy.BEST_EFFORT
    return given


def first_release(
    option: str, table: Mapping[str, tuple[tuple[KubeVersion, Stage], ...]] = CPU_OPTIONS
) -> KubeVersion | None:
    rows = table.get(option)
    return rows[0][0] if rows else None


def eviction_others(flavor: Flavor) -> Mapping[str, str]:
    """The non-memory hard-eviction thresholds the kubelet runs with when hostc sets none."""
    return DEFAULT_EVICTION_OTHERS if flavor is Flavor.KUBEADM else RANCHER_EVICTION_OTHERS


def runtime_unit(flavor: Flavor, role: NodeRole | None) -> str:
    """The systemd unit whose processes start containers (runc): containerd on kubeadm
    nodes (the runtime kubeadm's docs install first), the rke2/k3s service itself, whose
    embedded containerd runs as its child."""
    return "containerd.service" if flavor is Flavor.KUBEADM else kubelet_unit(flavor, role)


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
#: hostc's record of the manager settings the checkpoints were made for; it lives next to
#: them, so anything that wipes the kubelet's directory (kubeadm reset) wipes it too.
STAMP = "/var/lib/kubelet/hostc-managers.stamp"

#: evictionHard memory.available when not set: the kubelet's own default.
DEFAULT_EVICTION_MEMORY = "100Mi"
#: k3s and RKE2 start the kubelet with their own evictionHard (k3s pkg/daemons/agent
#: agent_linux.go `argsMap`: "eviction-hard": "imagefs.available<5%,nodefs.available<5%",
#: "eviction-minimum-reclaim": "imagefs.available=10%,nodefs.available=10%"); a kubelet-arg
#: eviction-hard replaces that value, so hostc restates these on rke2/k3s instead of the
#: upstream kubelet's.  eviction-minimum-reclaim is left to the distribution.
RANCHER_EVICTION_OTHERS: Mapping[str, str] = {
    "imagefs.available": "5%",
    "nodefs.available": "5%",
}
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
