"""Kubelet knowledge as data: the CPU-manager options' maturity per
kubelet minor, the drop-in directory's first release, and the unit per flavor.

Shared by the spec model (versions, quantities), check (what a version accepts), lower and the
kubelet target (feature gates, file form).  Sources: targets.md §10 (kubelet
source and the CPU/topology/memory manager pages on kubernetes.io).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping

import attrs

from hostc.knowledge.table import Table
from hostc.vocab import ContainerRuntime, Flavor, NodeRole, TopologyPolicy


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
_CPU_DOC = "kubernetes.io docs/tasks/administer-cluster/cpu-management-policies (options table)"
CPU_OPTIONS: Table[str, tuple[tuple[KubeVersion, Stage], ...]] = Table(
    {
        "full-pcpus-only": (
            (
                (KubeVersion(1, 22), Stage.ALPHA),
                (KubeVersion(1, 23), Stage.BETA),
                (KubeVersion(1, 33), Stage.GA),
            ),
            _CPU_DOC,
        ),
        "distribute-cpus-across-numa": (
            (
                (KubeVersion(1, 23), Stage.ALPHA),
                (KubeVersion(1, 33), Stage.BETA),
            ),
            _CPU_DOC,
        ),
        "align-by-socket": (((KubeVersion(1, 25), Stage.ALPHA),), _CPU_DOC),
        "distribute-cpus-across-cores": (((KubeVersion(1, 31), Stage.ALPHA),), _CPU_DOC),
        # KEP-4540: alpha 1.32, beta 1.33, GA 1.35 (kubernetes.dev/resources/keps/4540)
        "strict-cpu-reservation": (
            (
                (KubeVersion(1, 32), Stage.ALPHA),
                (KubeVersion(1, 33), Stage.BETA),
                (KubeVersion(1, 35), Stage.GA),
            ),
            _CPU_DOC,
        ),
        "prefer-align-cpus-by-uncorecache": (
            (
                (KubeVersion(1, 32), Stage.ALPHA),
                (KubeVersion(1, 34), Stage.BETA),
            ),
            _CPU_DOC,
        ),
    }
)

#: Pairs the kubelet refuses together (cpumanager policy_options.go ValidateStaticPolicyOptions).
CPU_OPTION_CONFLICTS: Table[tuple[str, str], bool] = Table.members(
    (
        ("full-pcpus-only", "distribute-cpus-across-cores"),
        ("distribute-cpus-across-numa", "distribute-cpus-across-cores"),
    ),
    "kubernetes pkg/kubelet/cm/cpumanager/policy_options.go ValidateStaticPolicyOptions",
)

ALPHA_GATE = "CPUManagerPolicyAlphaOptions"


#: Topology-manager policy options, the same way (kubelet topologymanager
#: policy_options.go; the options themselves are beta, on by default, from 1.28).
_TOPO_DOC = (
    "kubernetes pkg/kubelet/cm/topologymanager/policy_options.go; kubernetes.io topology-manager"
)
TOPOLOGY_OPTIONS: Table[str, tuple[tuple[KubeVersion, Stage], ...]] = Table(
    {
        "prefer-closest-numa-nodes": (
            (
                (KubeVersion(1, 26), Stage.ALPHA),
                (KubeVersion(1, 28), Stage.BETA),
                (KubeVersion(1, 32), Stage.GA),
            ),
            _TOPO_DOC,
        ),
        "max-allowable-numa-nodes": (((KubeVersion(1, 31), Stage.BETA),), _TOPO_DOC),
    }
)
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


def eviction_others(flavor: Flavor, version: KubeVersion) -> Mapping[str, str]:
    """The non-memory hard-eviction thresholds the kubelet runs with when hostc sets none."""
    if flavor is Flavor.KUBEADM:
        return kubelet_eviction_others(version)[1]
    return RANCHER_EVICTION_OTHERS


#: The unit each CRI runtime's packages install.  CRI-O: `crio.service` (cri-o
#: contrib/systemd/crio.service, `Alias=cri-o.service`); it forks conmon, which forks
#: runc, so both inherit the unit's CPU affinity and limits whatever cgroup
#: `conmon_cgroup` (crio.conf(5)) moves conmon to afterwards.  containerd:
#: `containerd.service` (containerd containerd.service); RKE2 and k3s run their
#: embedded containerd as a child of their own unit unless pointed at another runtime's
#: socket (`container-runtime-endpoint`).
RUNTIME_UNITS: Table[ContainerRuntime, str] = Table(
    {
        ContainerRuntime.CONTAINERD: (
            "containerd.service",
            "containerd/containerd containerd.service",
        ),
        ContainerRuntime.CRIO: (
            "crio.service",
            "cri-o/cri-o contrib/systemd/crio.service (Alias=cri-o.service)",
        ),
    }
)


def runtime_unit(
    flavor: Flavor,
    role: NodeRole | None,
    runtime: ContainerRuntime = ContainerRuntime.CONTAINERD,
) -> str:
    """The systemd unit whose processes start containers (runc): CRI-O's own unit
    wherever it is the runtime; otherwise containerd on kubeadm nodes, the rke2/k3s
    service itself, whose embedded containerd runs as its child."""
    if runtime is ContainerRuntime.CONTAINERD and flavor is not Flavor.KUBEADM:
        return kubelet_unit(flavor, role)
    return RUNTIME_UNITS[runtime]


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
#: hostc's record of the manager settings the checkpoints were made for, written by root at
#: every boot: where only root writes (/var/lib/hostc), never beside the checkpoints, where
#: a hostPath pod can plant a link (root's write lands anywhere) or a FIFO (boot hangs).
STAMP = "/var/lib/hostc/kubelet-managers.stamp"

#: evictionHard memory.available when not set: the kubelet's own default.
DEFAULT_EVICTION_MEMORY = "100Mi"
#: k3s and RKE2 start the kubelet with their own evictionHard (k3s pkg/daemons/agent
#: agent_linux.go `argsMap`: "eviction-hard": "imagefs.available<5%,nodefs.available<5%",
#: "eviction-minimum-reclaim": "imagefs.available=10%,nodefs.available=10%"); a kubelet-arg
#: eviction-hard replaces that value, so hostc restates these on rke2/k3s instead of the
#: upstream kubelet's.  eviction-minimum-reclaim is left to the distribution.
_K3S_ARGS = "k3s pkg/daemons/agent/agent_linux.go argsMap eviction-hard"
RANCHER_EVICTION_OTHERS: Table[str, str] = Table(
    {"imagefs.available": ("5%", _K3S_ARGS), "nodefs.available": ("5%", _K3S_ARGS)}
)
#: The kubelet's other hard-eviction defaults, by the first release that has them (the
#: last row at or below a kubelet's version applies).  Setting evictionHard at all
#: replaces the whole default map, so hostc restates these unless the spec sets them.
#: 1.30 added imagefs.inodesFree 5% (kubernetes PR #121834 "Added Imagefs inodes in
#: default Eviction Hard", merged for 1.30; website issue #44695).
_EVICTION_DOC = "kubernetes.io docs/concepts/scheduling-eviction/node-pressure-eviction: {}"
_DEFAULTS_LINUX = "kubernetes pkg/kubelet/eviction/defaults_linux.go DefaultEvictionHard"
_EVICTION_4 = (
    ("imagefs.available", "15%"),
    ("nodefs.available", "10%"),
    ("nodefs.inodesFree", "5%"),
)
DEFAULT_EVICTION_OTHERS: Table[KubeVersion, tuple[tuple[str, str], ...]] = Table(
    {
        OLDEST: (_EVICTION_4, f"{_DEFAULTS_LINUX} at 2b02db1b (1.29 and before: four keys)"),
        KubeVersion(1, 30): (
            (*_EVICTION_4, ("imagefs.inodesFree", "5%")),
            f"{_DEFAULTS_LINUX} at 8a4d98ac (five keys); kubernetes PR #121834, first in 1.30",
        ),
    }
)


def kubelet_eviction_others(version: KubeVersion) -> tuple[KubeVersion, Mapping[str, str]]:
    """The upstream kubelet's non-memory defaults at `version`, and the row's release."""
    since = max(v for v in DEFAULT_EVICTION_OTHERS if v <= version or v == OLDEST)
    return since, dict(DEFAULT_EVICTION_OTHERS[since])


EVICTION_SIGNALS: Table[str, bool] = Table.members(
    (
        "memory.available",
        "nodefs.available",
        "nodefs.inodesFree",
        "imagefs.available",
        "imagefs.inodesFree",
        "containerfs.available",
        "containerfs.inodesFree",
        "pid.available",
    ),
    _EVICTION_DOC.format("eviction signals"),
)

# Kubernetes memory quantities (`1Gi`, `512Mi`, plain bytes), typed once at load.  Only the
# binary suffixes Ki, Mi, Gi, Ti and plain byte counts are taken.  Decimal SI suffixes
# (`1G` = 10^9 bytes), fractions (`1.5Gi`), exponents and milli-units are refused with a
# message that says what to write instead: a reservation off by 7 % because `G` was read
# as `Gi` is exactly the mistake that makes the kubelet's reserved-memory sum fail at
# start-up.

_QUANTITY = re.compile(r"^([0-9]+)(Ki|Mi|Gi|Ti)?$")
_MULT = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4}
_DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?(k|K|M|G|T|P|E)$")
_OTHER_BINARY = re.compile(r"^[0-9]+(\.[0-9]+)?(Pi|Ei)$")

#: A kubelet byte count stays well inside int64; anything larger is a typo.
MAX_BYTES = 2**62


class QuantityError(ValueError):
    pass


def _refusal(text: str) -> str:
    t = text.strip()
    if _DECIMAL.match(t):
        suffix = t[-1]
        return (
            f"{text!r} uses the decimal SI suffix {suffix!r} (powers of 1000); hostc takes "
            f"Ki, Mi, Gi, Ti (powers of 1024) or plain bytes: write {t[:-1]}{suffix.upper()}i "
            "if you meant the binary unit"
        )
    if _OTHER_BINARY.match(t):
        return f"{text!r}: hostc takes Ki, Mi, Gi and Ti, not Pi or Ei"
    if re.match(r"^[0-9]*\.[0-9]+", t) or re.match(r"^[0-9]+\.", t):
        return (
            f"{text!r} has a fraction; write a whole number of a smaller unit (1536Mi, not 1.5Gi)"
        )
    if re.match(r"^[0-9]+m$", t):
        return f"{text!r} is in milli-units; memory is counted in bytes (Ki, Mi, Gi, Ti)"
    if re.match(r"^[0-9]+[eE][0-9]+$", t):
        return f"{text!r} has an exponent; write Ki, Mi, Gi, Ti or plain bytes"
    if t.startswith(("-", "+")):
        return f"{text!r}: a reservation is a non-negative amount without a sign"
    return f"{text!r} is not a quantity like 1Gi, 512Mi or 1073741824 (bytes)"


@attrs.frozen(order=True)
class Quantity:
    """A number of bytes; `str()` is the exact binary form the kubelet reads back (`2148Mi`)."""

    bytes: int

    @classmethod
    def parse(cls, text: str | int) -> Quantity:
        if isinstance(text, bool):
            raise QuantityError(f"{text!r} is not a quantity")
        if isinstance(text, int):
            if text < 0:
                raise QuantityError(f"{text}: a reservation is a non-negative number of bytes")
            value = text
        else:
            m = _QUANTITY.match(text.strip()) if text.isascii() else None
            if m is None:
                raise QuantityError(_refusal(text))
            value = int(m.group(1)) * (_MULT[m.group(2)] if m.group(2) else 1)
        if value > MAX_BYTES:
            raise QuantityError(f"{text!r} is more memory than any host has")
        return cls(value)

    @classmethod
    def mib(cls, n: int) -> Quantity:
        return cls(n * 1024**2)

    @classmethod
    def json_schema(cls) -> dict[str, object]:
        """How node.toml writes a quantity (binary suffixes or bytes), for `hostc schema node`."""
        return {
            "anyOf": [
                {"type": "string", "pattern": "^[0-9]+(Ki|Mi|Gi|Ti)?$"},
                {"type": "integer", "minimum": 0},
            ]
        }

    def __str__(self) -> str:
        for suffix in ("Ti", "Gi", "Mi", "Ki"):
            if self.bytes and self.bytes % _MULT[suffix] == 0:
                return f"{self.bytes // _MULT[suffix]}{suffix}"
        return str(self.bytes)

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.bytes + other.bytes)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.bytes - other.bytes)

    @property
    def in_mib(self) -> str:
        """`2148Mi` for sums people compare; exact bytes when not a whole MiB."""
        if self.bytes % _MULT["Mi"] == 0:
            return f"{self.bytes // _MULT['Mi']}Mi"
        return f"{self.bytes} bytes"


ZERO = Quantity(0)


def total(values: list[Quantity]) -> Quantity:
    return Quantity(sum(v.bytes for v in values))
