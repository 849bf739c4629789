"""The node.toml model: attrs classes whose names are the TOML keys.

This is hostc's one table of settings (mkosi's lesson, done as types): the
field metadata carries the help text and an example, and the JSON Schema in
`schemas/` and `hostc schema node` are generated from it.  No attrs validators
here: cattrs would lose their messages.  Semantic rules live in `hostc.check`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Literal

import attrs

from hostc.cpuset import CpuSet
from hostc.kubelet_options import (
    CpuManagerPolicy,
    Flavor,
    KubeVersion,
    MemoryManagerPolicy,
    NodeRole,
    TopologyPolicy,
    TopologyScope,
)
from hostc.plan import IrqOwner, RuntimeOwner
from hostc.quantity import Quantity
from hostc.spec.text import IfName, KernelArgText, Name
from hostc.topology.model import doc
from hostc.units import PageSize


class Role(enum.StrEnum):
    INFERENCE = "inference"
    TRAINING = "training"
    GENERAL = "general"


class IsolateMode(enum.StrEnum):
    WORKLOAD = "workload"
    REST = "rest"
    NONE = "none"


#: `cpu.isolate`: a keyword, or the CPUs themselves.
Isolate = IsolateMode | CpuSet
#: `limits.memlock`: KiB, or unlimited (`"unlimited"`, `"infinity"` and -1 read as unlimited).
Memlock = int | Literal["unlimited"]


def _to_cpuset(v: CpuSet | str | None) -> CpuSet | None:
    """API callers may pass cpulist text; the loader passes CpuSets (typed by cattrs)."""
    return CpuSet.parse(v) if isinstance(v, str) else v


def _to_isolate(v: Isolate | str | None) -> Isolate | None:
    if isinstance(v, str) and not isinstance(v, IsolateMode):
        key = v.strip().lower()
        return IsolateMode(key) if key in IsolateMode.__members__.values() else CpuSet.parse(v)
    return v


def _to_page_size(v: PageSize | str | None) -> PageSize | None:
    return PageSize.parse(v) if isinstance(v, str) else v


class Mechanism(enum.StrEnum):
    ISOLCPUS = "isolcpus"
    NOHZ_FULL = "nohz_full"
    RCU_NOCBS = "rcu_nocbs"
    IRQAFFINITY = "irqaffinity"


class IsolcpusFlag(enum.StrEnum):
    DOMAIN = "domain"
    MANAGED_IRQ = "managed_irq"
    NOHZ = "nohz"


class Thp(enum.StrEnum):
    ALWAYS = "always"
    MADVISE = "madvise"
    NEVER = "never"


@attrs.frozen
class Host:
    name: Name = attrs.field(
        metadata=doc("node class name, used in comments and file names", "h100-serve")
    )
    role: Role = attrs.field(
        metadata=doc("role preset: inference, training or general", "inference")
    )
    topology: str | None = attrs.field(
        default=None,
        metadata=doc(
            "topology snapshot, relative to this file (`--topology` overrides)", "topology.toml"
        ),
    )
    kernel: str | None = attrs.field(
        default=None,
        metadata=doc(
            "kernel release the host boots (overrides the snapshot's); decides "
            "whether per-node hugepages go on the command line (Linux ≥ 5.16)",
            "6.8",
        ),
    )
    os: str | None = attrs.field(
        default=None,
        metadata=doc(
            "distribution the host boots, as os-release `ID-VERSION_ID` (overrides the "
            "snapshot's, for images built for another OS); decides how the boot "
            "configuration is regenerated",
            "rhel-9.4",
        ),
    )


def _to_mechanisms(v: Iterable[Mechanism | str] | None) -> list[Mechanism] | None:
    """API callers may pass plain strings; the loader passes enums (checked by cattrs)."""
    return None if v is None else [Mechanism(x) for x in v]


def _to_flags(v: Iterable[IsolcpusFlag | str] | None) -> list[IsolcpusFlag] | None:
    return None if v is None else [IsolcpusFlag(x) for x in v]


@attrs.frozen
class Cpu:
    housekeeping_per_node: int | None = attrs.field(
        default=None,
        metadata=doc(
            "housekeeping as intent: this many physical cores per NUMA node, SMT "
            "siblings included, lowest-numbered first (default 1 when isolating)",
            2,
        ),
    )
    housekeeping: CpuSet | None = attrs.field(
        default=None,
        converter=_to_cpuset,
        metadata=doc(
            "housekeeping as an explicit cpulist (instead of housekeeping_per_node)", "0-1,64-65"
        ),
    )
    isolate: Isolate | None = attrs.field(
        default=None,
        converter=_to_isolate,
        metadata=doc(
            "CPUs to isolate: `workload` (the workload's NUMA nodes minus "
            "housekeeping), `rest` (every CPU not housekeeping), `none`, or a cpulist",
            "workload",
        ),
    )
    mechanisms: list[Mechanism] | None = attrs.field(
        default=None,
        converter=_to_mechanisms,
        metadata=doc(
            "how isolated CPUs are isolated (default: isolcpus, rcu_nocbs, irqaffinity, "
            "plus nohz_full on the CPUs of workloads with busy_poll; listing nohz_full "
            "here stops the tick on every isolated CPU)",
            ["isolcpus", "rcu_nocbs", "irqaffinity"],
        ),
    )
    isolcpus_flags: list[IsolcpusFlag] | None = attrs.field(
        default=None,
        converter=_to_flags,
        metadata=doc(
            "isolcpus= flags (default: managed_irq only; `domain` also takes the CPUs out of "
            "load balancing, so every thread must then be pinned to one CPU)",
            ["managed_irq"],
        ),
    )
    allow_node_without_housekeeping: bool = attrs.field(
        default=False,
        metadata=doc("permit a NUMA node with online CPUs to keep no housekeeping CPU", False),
    )

    @property
    def isolation(self) -> Isolate:
        """`isolate`, with its default (`none`) filled in."""
        return IsolateMode.NONE if self.isolate is None else self.isolate


@attrs.frozen
class Workload:
    name: Name = attrs.field(metadata=doc("service name", "vllm"))
    gpus: list[str] = attrs.field(
        factory=list, metadata=doc("GPUs it serves on, by snapshot name", ["GPU0", "GPU1"])
    )
    unit: str | None = attrs.field(
        default=None,
        metadata=doc("its systemd unit (default `<name>.service`)", "vllm.service"),
    )
    nodes: list[int] | None = attrs.field(
        default=None,
        metadata=doc("NUMA nodes to run on, for a service without GPUs (instead of gpus)", [0]),
    )
    share_cpus: bool = attrs.field(
        default=False,
        metadata=doc(
            "share its nodes' isolated CPUs with other workloads there, on purpose "
            "(default: each gets its own cores, split by GPU count)",
            False,
        ),
    )
    busy_poll: bool = attrs.field(
        default=False,
        metadata=doc(
            "it runs one busy-polling thread per isolated CPU it gets (DPDK-style): only "
            "then is the timer tick stopped there (nohz_full), which does nothing with "
            "more than one runnable task per CPU and makes every syscall dearer",
            False,
        ),
    )


@attrs.frozen
class Hugepages:
    size: PageSize | None = attrs.field(
        default=None,
        converter=_to_page_size,
        metadata=doc("page size of the pool (default 1G)", "1G"),
    )
    default_size: PageSize | None = attrs.field(
        default=None,
        converter=_to_page_size,
        metadata=doc("default_hugepagesz (default: `size`)", "1G"),
    )
    per_node: dict[int, int] | None = attrs.field(
        default=None, metadata=doc("pages per NUMA node", {"0": 8, "1": 8})
    )
    total: int | None = attrs.field(
        default=None, metadata=doc("pages in total, split evenly over nodes with memory", 16)
    )


@attrs.frozen
class Limits:
    nofile: int | None = attrs.field(
        default=None, metadata=doc("open files (soft and hard) for sessions and services", 1048576)
    )
    memlock: Memlock | None = attrs.field(
        default=None, metadata=doc('locked memory in KiB, or "unlimited"', "unlimited")
    )


@attrs.frozen
class Kernel:
    transparent_hugepage: Thp | None = attrs.field(
        default=None, metadata=doc("THP mode (preset: madvise)", "madvise")
    )
    limit_cstates: bool | None = attrs.field(
        default=None,
        metadata=doc("keep CPUs in shallow C-states (x86; preset: inference yes, others no)", True),
    )
    cstates_at: CStatesAt | None = attrs.field(
        default=None,
        metadata=doc(
            "where the C-state limit applies: `runtime` (per-CPU PM QoS on the workload CPUs "
            "only, revertible; the default) or `boot` (intel_idle/processor.max_cstate, every CPU)",
            "runtime",
        ),
    )
    extra_args: list[KernelArgText] = attrs.field(
        factory=list, metadata=doc("further kernel arguments, verbatim", ["nosoftlockup"])
    )
    transparent_hugepage_defrag: ThpDefrag | None = attrs.field(
        default=None,
        metadata=doc("THP defrag policy, runtime sysfs (preset: defer+madvise)", "defer+madvise"),
    )
    skew_tick: bool = attrs.field(
        default=False,
        metadata=doc(
            "skew_tick=1: offset each CPU's periodic tick, for jitter-sensitive (HPC) "
            "workloads on large hosts; costs some power (opt-in)",
            False,
        ),
    )
    init_on_alloc: bool | None = attrs.field(
        default=None,
        metadata=doc(
            "init_on_alloc=0|1: whether the kernel zeroes pages on allocation (default: "
            "the kernel's build option); false is faster but a security trade-off (opt-in)",
            False,
        ),
    )
    iommu: IommuMode | None = attrs.field(
        default=None,
        metadata=doc(
            "IOMMU mode: `pt` (pass-through default domain, iommu=pt; does not force the "
            "IOMMU on; preset where a workload gets RDMA NICs), `on` (forced on for "
            "VFIO/SR-IOV: also intel_iommu=on on Intel and pci=disable_acs_redir=pci:0:0, "
            "so GPU-NIC peer traffic is not redirected to the root complex; IOMMU groups "
            "merge)",
            "pt",
        ),
    )


@attrs.frozen
class Preset:
    exclude: list[str] = attrs.field(
        factory=list,
        metadata=doc(
            "preset settings to leave out, by key (sysctl name, kernel argument or limit)",
            ["net.core.somaxconn"],
        ),
    )


def _to_quantity(v: Quantity | str | int | None) -> Quantity | None:
    """API callers may pass `"1Gi"`; the loader passes Quantities (typed by cattrs)."""
    return Quantity.parse(v) if isinstance(v, str | int) else v


def _to_kube_version(v: KubeVersion | str) -> KubeVersion:
    return KubeVersion.parse(v) if isinstance(v, str) else v


def _to_reserved_memory(
    v: dict[int, Quantity] | dict[int, str] | None,
) -> dict[int, Quantity] | None:
    if v is None:
        return None
    return {int(k): (Quantity.parse(q) if isinstance(q, str | int) else q) for k, q in v.items()}


def _to_role(v: NodeRole | str | None) -> NodeRole | None:
    return None if v is None else NodeRole(v)


def _to_cpu_policy(v: CpuManagerPolicy | str | None) -> CpuManagerPolicy | None:
    return None if v is None else CpuManagerPolicy(v)


def _to_topology_policy(v: TopologyPolicy | str | None) -> TopologyPolicy | None:
    return None if v is None else TopologyPolicy(v)


def _to_topology_scope(v: TopologyScope | str | None) -> TopologyScope | None:
    return None if v is None else TopologyScope(v)


def _to_memory_policy(v: MemoryManagerPolicy | str | None) -> MemoryManagerPolicy | None:
    return None if v is None else MemoryManagerPolicy(v)


@attrs.frozen
class KubeletReserved:
    """Resources set aside from pods (kubeReserved / systemReserved).  CPUs are not here:
    the kubelet's reserved CPUs are the housekeeping set, always."""

    memory: Quantity | None = attrs.field(
        default=None,
        converter=_to_quantity,
        metadata=doc("memory, a quantity (Ki, Mi, Gi, Ti or bytes)", "1Gi"),
    )
    ephemeral_storage: Quantity | None = attrs.field(
        default=None,
        converter=_to_quantity,
        metadata=doc("local ephemeral storage (`ephemeral-storage`)", "1Gi"),
    )


@attrs.frozen
class Kubelet:
    """A Kubernetes node: kubelet CPU, topology and memory managers from the same Plan."""

    flavor: Flavor = attrs.field(
        converter=Flavor,
        metadata=doc("who runs the kubelet: kubeadm (kubelet.service), rke2 or k3s", "rke2"),
    )
    version: KubeVersion = attrs.field(
        converter=_to_kube_version,
        metadata=doc(
            "kubelet minor release; decides the file form and which CPU-manager options exist",
            "1.31",
        ),
    )
    role: NodeRole | None = attrs.field(
        default=None,
        converter=_to_role,
        metadata=doc("rke2/k3s: server or agent, which names the service to restart", "agent"),
    )
    cpu_manager_policy: CpuManagerPolicy | None = attrs.field(
        default=None,
        converter=_to_cpu_policy,
        metadata=doc(
            "CPU manager policy (default static: Guaranteed pods get whole CPUs)", "static"
        ),
    )
    cpu_manager_policy_options: list[str] = attrs.field(
        factory=list,
        metadata=doc("static-policy options, checked against `version`", ["full-pcpus-only"]),
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
        converter=_to_topology_policy,
        metadata=doc("topology manager policy (unset: the kubelet's default, none)", "restricted"),
    )
    topology_manager_scope: TopologyScope | None = attrs.field(
        default=None,
        converter=_to_topology_scope,
        metadata=doc("topology manager scope: container or pod", "pod"),
    )
    topology_manager_policy_options: dict[str, str] = attrs.field(
        factory=dict,
        metadata=doc(
            "topology-manager options, checked against `version`: prefer-closest-numa-nodes "
            '("true") and max-allowable-numa-nodes (a count above 8, for hosts with more '
            "NUMA nodes)",
            {"max-allowable-numa-nodes": "16"},
        ),
    )
    memory_manager_policy: MemoryManagerPolicy | None = attrs.field(
        default=None,
        converter=_to_memory_policy,
        metadata=doc("memory manager policy: Static or None (unset: None)", "Static"),
    )
    kube_reserved: KubeletReserved | None = attrs.field(
        default=None, metadata=doc("kubeReserved: for the kubelet and the container runtime")
    )
    system_reserved: KubeletReserved | None = attrs.field(
        default=None, metadata=doc("systemReserved: for the OS daemons")
    )
    eviction_hard: dict[str, str] = attrs.field(
        factory=dict,
        metadata=doc(
            "hard eviction thresholds by signal (memory.available defaults to 100Mi; the "
            "kubelet's other defaults are kept unless set)",
            {"memory.available": "500Mi"},
        ),
    )
    reserved_memory: dict[int, Quantity] | None = attrs.field(
        default=None,
        converter=_to_reserved_memory,
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


@attrs.frozen
class HostSpec:
    host: Host = attrs.field(metadata=doc("what the node is"))
    version: int = attrs.field(default=1, metadata=doc("node.toml format version", 1))
    cpu: Cpu = attrs.field(factory=Cpu, metadata=doc("CPU partition and isolation"))
    workload: list[Workload] = attrs.field(
        factory=list, metadata=doc("services pinned to their GPUs' NUMA nodes")
    )
    hugepages: Hugepages | None = attrs.field(
        default=None, metadata=doc("boot-time hugepage reservation (off unless asked)")
    )
    sysctl: dict[str, int | str] = attrs.field(
        factory=dict, metadata=doc("sysctl overrides", {"vm.swappiness": 1})
    )
    limits: Limits = attrs.field(factory=Limits, metadata=doc("resource limits"))
    kernel: Kernel = attrs.field(factory=Kernel, metadata=doc("kernel command line"))
    preset: Preset = attrs.field(factory=Preset, metadata=doc("role preset adjustments"))
    kubelet: Kubelet | None = attrs.field(
        default=None, metadata=doc("Kubernetes kubelet managers (absent: no kubelet output)")
    )
    cpufreq: Cpufreq = attrs.field(
        factory=lambda: Cpufreq(), metadata=doc("CPU frequency: governor, EPP, P-state mode")
    )
    irq: Irq = attrs.field(factory=lambda: Irq(), metadata=doc("who places interrupts"))
    modules: Modules = attrs.field(
        factory=lambda: Modules(), metadata=doc("kernel modules to blacklist or configure")
    )
    services: Services = attrs.field(
        factory=lambda: Services(), metadata=doc("systemd units to disable")
    )
    runtime: Runtime = attrs.field(
        factory=lambda: Runtime(), metadata=doc("who applies the runtime settings")
    )
    nccl: Nccl = attrs.field(
        factory=lambda: Nccl(), metadata=doc("NCCL's environment in the workloads' drop-ins")
    )


# --- Runtime tuning (issue 10) ---


class ThpDefrag(enum.StrEnum):
    ALWAYS = "always"
    DEFER = "defer"
    DEFER_MADVISE = "defer+madvise"
    MADVISE = "madvise"
    NEVER = "never"


class CStatesAt(enum.StrEnum):
    RUNTIME = "runtime"
    BOOT = "boot"


class IommuMode(enum.StrEnum):
    PT = "pt"
    ON = "on"


class Governor(enum.StrEnum):
    PERFORMANCE = "performance"
    POWERSAVE = "powersave"
    SCHEDUTIL = "schedutil"
    ONDEMAND = "ondemand"
    CONSERVATIVE = "conservative"


class Epp(enum.StrEnum):
    """energy_performance_available_preferences (intel_pstate and amd-pstate-epp)."""

    DEFAULT = "default"
    PERFORMANCE = "performance"
    BALANCE_PERFORMANCE = "balance_performance"
    BALANCE_POWER = "balance_power"
    POWER = "power"


class PstateMode(enum.StrEnum):
    """`intel_pstate=` / `amd_pstate=` modes (guided: amd_pstate only)."""

    ACTIVE = "active"
    PASSIVE = "passive"
    GUIDED = "guided"
    DISABLE = "disable"


@attrs.frozen
class Cpufreq:
    governor: Governor | None = attrs.field(
        default=None,
        metadata=doc(
            "scaling governor (preset: performance for inference and training)", "performance"
        ),
    )
    energy_performance_preference: Epp | None = attrs.field(
        default=None,
        metadata=doc("EPP hint (preset: performance for inference and training)", "performance"),
    )
    pstate: PstateMode | None = attrs.field(
        default=None,
        metadata=doc(
            "P-state driver mode on the command line, spelled by CPU vendor "
            "(preset: amd_pstate=active on AMD with Linux >= 6.3)",
            "active",
        ),
    )


@attrs.frozen
class Irq:
    owner: IrqOwner | None = attrs.field(
        default=None,
        metadata=doc(
            "who places interrupts on an isolated host: `irqbalance` (kept, isolated CPUs "
            "banned; the default) or `hostc` (irqbalance off, each NIC's and GPU's IRQs on "
            "housekeeping CPUs of its own NUMA node)",
            "irqbalance",
        ),
    )


@attrs.frozen
class Modules:
    blacklist: list[str] = attrs.field(
        factory=list, metadata=doc("modules to blacklist", ["bluetooth", "btusb"])
    )
    hard_block: bool = attrs.field(
        default=False,
        metadata=doc("also `install <module> /bin/false`: explicit loads fail too", False),
    )
    options: dict[str, str] = attrs.field(
        factory=dict, metadata=doc("module options", {"nvidia": "NVreg_EnableGpuFirmware=0"})
    )


@attrs.frozen
class Services:
    disable: list[str] = attrs.field(
        factory=list,
        metadata=doc("systemd units to disable and stop", ["cups.service", "avahi-daemon.service"]),
    )


@attrs.frozen
class Runtime:
    owner: RuntimeOwner | None = attrs.field(
        default=None,
        metadata=doc(
            "who applies governor, EPP, THP defrag, IRQ and workqueue masks: `systemd` "
            "(hostc-tuning.service; default) or `tuned` (the hostc TuneD profile)",
            "systemd",
        ),
    )


@attrs.frozen
class Nccl:
    """NCCL's bootstrap needs an interface with an IP address; the RDMA NICs' netdevs
    often have none ("Bootstrap : no socket interface found"), so hostc never guesses
    it from the topology: it sets NCCL_SOCKET_IFNAME only when named here."""

    socket_ifname: IfName | None = attrs.field(
        default=None,
        metadata=doc(
            "interface NCCL bootstraps over (the management network, one with an IP "
            "address): NCCL_SOCKET_IFNAME==<name> in every workload; unset, NCCL picks one",
            "eth0",
        ),
    )
