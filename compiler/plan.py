"""The Plan: hostc's one intermediate representation.  Every target reads only this.

The Plan says *what* the host gets, never how one file spells it: a C-state
limit is one setting that the command line spells `intel_idle.max_cstate=` or
`processor.max_cstate=` by CPU vendor and TuneD spells `force_latency`; a limit
holds an int or unlimited.  Each setting says when it takes effect (`When`)
and carries a Reason (Butane's translation set, attached to the value): the
spec key, preset layer or topology fact that asked for it, and a one-line
rationale.  CPU sets are CpuSet values resolved here, once; no target derives one.
"""

from __future__ import annotations

import enum
from typing import Final, Literal

import attrs

from hostc.cpuset import CpuSet
from hostc.kubelet_options import Flavor, KubeVersion, NodeRole
from hostc.osfacts import ALLOWED_CPUS_SINCE
from hostc.quantity import Quantity


class When(enum.StrEnum):
    """When a setting takes effect on the host."""

    BOOT = "boot"  # kernel command line: a reboot
    SYSCTL = "sysctl"  # sysctl.d, applied by systemd-sysctl at boot or `sysctl --system`
    RUNTIME = "runtime"  # sysfs, IRQ masks, services: a oneshot unit at boot
    SERVICE = "service"  # per systemd service (limits, placement): on (re)start
    SESSION = "session"  # pam_limits: sessions opened afterwards


class OsFamily(enum.StrEnum):
    DEBIAN = "debian"  # Debian, Ubuntu: update-grub reads /etc/default/grub.d
    RHEL = "rhel"  # RHEL, Fedora, Rocky, Alma: BLS entries edited by grubby
    COREOS = "coreos"  # Fedora CoreOS, RHCOS, Flatcar: Ignition, kargs
    SUSE = "suse"
    UNKNOWN = "unknown"


@attrs.frozen
class Reason:
    source: str  # "cpu.isolate", "preset:inference", "topology:node0"
    why: str

    def __str__(self) -> str:
        return f"{self.source}: {self.why}"


#: The names an x86 machine's arch goes by (uname, Debian, hwloc).
X86_ARCHES = ("x86_64", "i686", "i386", "amd64")


@attrs.frozen
class HostFacts:
    """What the targets need to know about the host to spell settings right."""

    name: str
    role: str
    arch: str
    cpu_vendor: str | None  # intel, amd, … (None: the snapshot does not say)
    kernel: str | None  # release the host boots
    kernel_version: tuple[int, int] | None
    os: str | None  # os-release ID-VERSION_ID, e.g. ubuntu-22.04
    os_family: OsFamily
    cmdline_budget: int  # bytes of kernel command line hostc may use on this arch
    reason: Reason
    #: where this host's TuneD reads an administrator's profiles: /etc/tuned before
    #: TuneD 2.23, /etc/tuned/profiles from it, both where the release's TuneD is unknown
    tuned_profile_dirs: tuple[str, ...] = ()
    #: the kernel is built with intel_idle (CONFIG_INTEL_IDLE); None: the snapshot does not say
    intel_idle: bool | None = None
    #: the kernel turns the Intel IOMMU on by itself (CONFIG_INTEL_IOMMU_DEFAULT_ON)
    intel_iommu_default_on: bool | None = None
    #: the systemd the release ships (None: unknown release), hostc.osfacts.SYSTEMD
    systemd: int | None = None
    #: whether it boots the unified cgroup hierarchy (None: unknown), where systemd's
    #: AllowedCPUs=/AllowedMemoryNodes= work
    unified_cgroup: bool | None = None
    #: whether its systemd raises fs.nr_open to the kernel's maximum at boot (None: unknown)
    raises_nr_open: bool | None = None

    @property
    def cpuset_ignored(self) -> bool:
        """True where systemd is known to ignore AllowedCPUs=/AllowedMemoryNodes=."""
        old = self.systemd is not None and self.systemd < ALLOWED_CPUS_SINCE
        return old or self.unified_cgroup is False

    @property
    def x86(self) -> bool:
        return self.arch in X86_ARCHES


@attrs.frozen
class CpuPartition:
    """Invariants (rules on the finished Plan, `check.plan`): housekeeping ∪ isolated
    == online, disjoint, SMT siblings never split, the boot CPU is housekeeping."""

    online: CpuSet
    housekeeping: CpuSet
    isolated: CpuSet
    cores: tuple[CpuSet, ...]  # online cores (SMT siblings), a topology fact
    boot_cpu: int | None
    allow_node_without_housekeeping: bool
    housekeeping_reason: Reason
    isolated_reason: Reason


@attrs.frozen
class Isolation:
    """One isolation mechanism applied to the isolated CPUs (`isolcpus`, `nohz_full`, …)."""

    mechanism: str  # isolcpus | nohz_full | rcu_nocbs | irqaffinity
    flags: tuple[str, ...]  # isolcpus flags (managed_irq, domain, nohz); empty otherwise
    reason: Reason
    when: When = When.BOOT
    #: the CPUs it covers where that is not every isolated CPU (nohz_full: the CPUs of
    #: busy-polling workloads); None: all isolated CPUs (irqaffinity: housekeeping)
    cpus: CpuSet | None = None


@attrs.frozen
class NodeView:
    """One NUMA node as `hostc plan` shows it."""

    id: int
    cpus: CpuSet
    housekeeping: CpuSet
    isolated: CpuSet
    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    memory_mib: int | None
    hugepages: tuple[tuple[int, int], ...]  # (page size in KiB, pages)
    memory_left_mib: int | None


@attrs.frozen
class HugepagePool:
    size_kib: int
    per_node: tuple[tuple[int, int], ...]  # (node, pages), nodes with pages > 0
    node_form: bool  # per-node counts on the cmdline (Linux ≥ 5.16)
    reason: Reason
    size_reason: Reason
    when: When = When.BOOT

    @property
    def total(self) -> int:
        return sum(n for _, n in self.per_node)


@attrs.frozen
class DefaultHugepageSize:
    size_kib: int
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class Thp:
    """Transparent hugepages mode (always | madvise | never)."""

    mode: str
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class CStateLimit:
    """Keep CPUs out of idle states deeper than `max_cstate` (1: C1 only).

    `cpus` None: boot-time caps on every CPU (`intel_idle.max_cstate=`,
    `processor.max_cstate=`), by explicit choice in the spec.  A set: per-CPU PM QoS at
    runtime on those CPUs only (the workload CPUs), revertible by writing 0, as no_hz.rst
    prefers ("Use PMQOS from userspace")."""

    max_cstate: int
    reason: Reason
    when: When = When.BOOT
    cpus: CpuSet | None = None


@attrs.frozen
class ExtraArg:
    """A kernel argument the spec asks for: verbatim (`kernel.extra_args`, checked) or an
    offered trade-off it opts into (`kernel.skew_tick`, `kernel.init_on_alloc`)."""

    key: str
    value: str | None  # None for flags (`nosoftlockup`)
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class Sysctl:
    key: str  # canonical dotted form
    value: str  # as written to sysctl.d (three-value keys space-separated)
    reason: Reason
    when: When = When.SYSCTL


UNLIMITED: Final = "unlimited"
LimitValue = int | Literal["unlimited"]


@attrs.frozen
class Limit:
    """A resource limit for sessions and services; memlock in KiB."""

    item: str  # nofile | memlock
    value: LimitValue
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen
class Workload:
    """A service pinned to its GPUs' NUMA node(s): CPUs and memory together."""

    name: str
    gpus: tuple[str, ...]
    nodes: tuple[int, ...]  # memory is bound here
    cpus: CpuSet
    reason: Reason
    when: When = When.SERVICE
    unit: str = ""  # the systemd unit placed (`<name>.service` unless the spec names one)
    nics: tuple[str, ...] = ()  # closest NICs (PIX/PXB links, else the same NUMA node)
    env: tuple[tuple[str, str], ...] = ()  # (name, value): NCCL's NIC choice
    nics_reason: Reason | None = None
    shared: bool = False  # may share isolated CPUs with other workloads (asked by the spec)
    #: why NCCL_SOCKET_IFNAME is set (only from the spec's `[nccl] socket_ifname`)
    socket_reason: Reason | None = None


@attrs.frozen
class LeftOut:
    """A setting other tools emit that this host deliberately does not get, and why."""

    setting: str
    reason: Reason


@attrs.frozen
class CpuManager:
    """The kubelet's CPU manager.  `reserved` is the partition's housekeeping set, read
    from the Plan, never re-derived: system daemons and the kubelet run there."""

    policy: str  # static | none
    options: tuple[str, ...]  # static-policy options, each "true"
    alpha_gate: bool  # CPUManagerPolicyAlphaOptions must be on for an alpha option
    reserved: CpuSet  # reservedSystemCPUs
    reason: Reason
    reserved_reason: Reason
    when: When = When.SERVICE


@attrs.frozen
class TopologyManager:
    policy: str | None  # none | best-effort | restricted | single-numa-node
    scope: str | None  # container | pod
    reason: Reason
    #: topologyManagerPolicyOptions, in the kubelet's spelling (name, value), sorted
    options: tuple[tuple[str, str], ...] = ()
    when: When = When.SERVICE


@attrs.frozen
class MemoryManager:
    policy: str  # Static | None
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen
class KubeReservation:
    """kubeReserved or systemReserved (no cpu: reservedSystemCPUs overrides it)."""

    memory: Quantity | None
    ephemeral_storage: Quantity | None
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen
class Eviction:
    """evictionHard: `memory` is memory.available, the part reservedMemory counts."""

    memory: Quantity
    others: tuple[tuple[str, str], ...]  # (signal, threshold) as the kubelet writes them
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen
class MemoryReservation:
    node: int
    memory: Quantity


@attrs.frozen
class PodCapacity:
    """What one NUMA node leaves for pods once the host has taken its share."""

    node: int
    cpus: CpuSet  # online minus reservedSystemCPUs
    memory: Quantity | None  # node memory minus hugepages minus reservedMemory
    hugepages: tuple[tuple[int, int], ...]  # (page size in KiB, pages): pod-allocatable
    gpus: tuple[str, ...]


@attrs.frozen
class RuntimeAffinity:
    """The container runtime's unit where the service manager confines services to the
    housekeeping CPUs: every CPU as its affinity, which the containers it starts inherit,
    and the housekeeping CPUs as its own cgroup cpuset where systemd has AllowedCPUs=."""

    unit: str
    cpus: CpuSet  # CPUAffinity=
    reason: Reason
    allowed: CpuSet | None  # AllowedCPUs=
    allowed_reason: Reason | None
    when: When = When.SERVICE


@attrs.frozen
class KubeletPlan:
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

    @property
    def memory_total(self) -> Quantity:
        """kube-reserved + system-reserved + hard eviction memory: reservedMemory sums to it."""
        parts = [r.memory for r in (self.kube_reserved, self.system_reserved) if r and r.memory]
        return Quantity(sum(q.bytes for q in parts) + self.eviction.memory.bytes)

    @property
    def memory_manager_static(self) -> bool:
        return self.memory is not None and self.memory.policy == "Static"


class BootCarrier(enum.StrEnum):
    """The one artifact that puts the kernel arguments into this host's boot entries."""

    GRUB = "grub"  # /etc/default/grub.d drop-in, update-grub (Debian family)
    GRUBBY = "grubby"  # grubby edits the BLS entries (RHEL family)
    TUNED = "tuned"  # the TuneD profile's [bootloader] (runtime.owner = tuned)
    IGNITION = "ignition"  # Ignition's kernelArguments (CoreOS family)
    NONE = "none"  # no file target: the kernel-cmdline deliverable only


@attrs.frozen
class Boot:
    carrier: BootCarrier
    reason: Reason
    when: When = When.BOOT

    def not_carried_by(self, carrier: BootCarrier) -> str | None:
        """Why a target carrying the arguments by `carrier` does not apply (None: it does)."""
        if self.carrier is carrier:
            return None
        return f"the kernel arguments go by {self.carrier}: {self.reason.why}"


@attrs.frozen
class DeviceLink:
    """How a GPU reaches a NIC (`nvidia-smi topo -m`): NV#, PIX, PXB, PHB, NODE, SYS."""

    gpu: str
    nic: str
    kind: str


@attrs.frozen
class Hardware:
    """Topology facts the picture of the partition needs and the settings do not:
    which package each node sits in, the offline CPUs, the GPU-NIC link matrix."""

    packages: tuple[tuple[int, int | None], ...] = ()  # (node, package) per node with CPUs
    offline: tuple[tuple[int | None, CpuSet], ...] = ()  # (node or None, offline CPUs)
    links: tuple[DeviceLink, ...] = ()  # GPU-NIC cells of the matrix the snapshot has


@attrs.frozen
class Provenance:
    """Which spec file set a value (a spec built from layers: `extends`, `[force]`)."""

    key: str  # the merged spec's key path, as Reasons name it (`cpu.isolate`)
    file: str  # relative to the host's spec file
    line: int | None
    source_key: str  # the key path inside that file (`force.cpu.isolate`)


@attrs.frozen
class Plan:
    host: HostFacts
    partition: CpuPartition
    isolation: tuple[Isolation, ...]
    nodes: tuple[NodeView, ...]
    default_hugepagesz: DefaultHugepageSize | None
    hugepages: tuple[HugepagePool, ...]
    thp: Thp | None
    cstates: CStateLimit | None
    extra_args: tuple[ExtraArg, ...]
    sysctls: tuple[Sysctl, ...]
    limits: tuple[Limit, ...]
    workloads: tuple[Workload, ...]
    left_out: tuple[LeftOut, ...] = ()
    runtime: Runtime = attrs.field(factory=lambda: Runtime())
    kubelet: KubeletPlan | None = None
    boot: Boot = Boot(BootCarrier.NONE, Reason("host", "no kernel argument carrier chosen"))
    modules_load: tuple[ModuleLoad, ...] = ()
    hardware: Hardware = Hardware()
    #: per spec value, the file that set it; empty for a single-file spec
    provenance: tuple[Provenance, ...] = ()

    def limit(self, item: str) -> Limit | None:
        return next((x for x in self.limits if x.item == item), None)

    def isolation_by(self, mechanism: str) -> Isolation | None:
        return next((x for x in self.isolation if x.mechanism == mechanism), None)


# --- Runtime tuning (issue 10): settings the command line and sysctl cannot carry. ---


class RuntimeOwner(enum.StrEnum):
    """Who applies the runtime settings on the host: hostc's own systemd units, or TuneD.

    Exactly one: the systemd target leaves out every runtime setting when TuneD owns
    them, and the tuned target applies only when TuneD owns them.
    """

    SYSTEMD = "systemd"
    TUNED = "tuned"


class IrqOwner(enum.StrEnum):
    """Who places interrupts: irqbalance (with the isolated CPUs banned), or hostc."""

    IRQBALANCE = "irqbalance"
    HOSTC = "hostc"


@attrs.frozen
class Governor:
    """cpufreq scaling governor for every CPU."""

    name: str
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen
class EnergyPreference:
    """Energy-performance preference (EPP) of the pstate drivers' active mode."""

    value: str
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen
class PstateMode:
    """The P-state driver's mode on the command line (`amd_pstate=active`)."""

    driver: str  # intel_pstate | amd_pstate
    mode: str
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class ThpDefrag:
    """/sys/kernel/mm/transparent_hugepage/defrag: when THP allocation may compact."""

    mode: str
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen
class Iommu:
    """IOMMU pass-through: `iommu=pt` (`iommu.passthrough=1` off x86).  Mode `on` also
    forces the Intel IOMMU on and turns PCIe ACS redirect off again (`acs_off`)."""

    mode: str  # pt | on
    reason: Reason
    when: When = When.BOOT
    #: why `pci=disable_acs_redir=pci:0:0` is emitted (mode `on`, kernel ≥ 4.19); None: not
    acs_off: Reason | None = None


@attrs.frozen
class DeviceIrq:
    """A device whose interrupts hostc pins: to housekeeping CPUs on its own NUMA node."""

    device: str
    kind: str  # nic | gpu
    pci: str
    node: int | None
    cpus: CpuSet
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen
class IrqPlan:
    """Interrupt placement with exactly one owner (only isolated hosts get one)."""

    owner: IrqOwner
    banned: CpuSet  # the isolated CPUs: no interrupt is placed there
    default: CpuSet  # /proc/irq/default_smp_affinity (hostc) — the housekeeping CPUs
    irqbalance_variable: str  # IRQBALANCE_BANNED_CPULIST (≥ 1.8.0) | IRQBALANCE_BANNED_CPUS
    variable_reason: Reason
    devices: tuple[DeviceIrq, ...]  # hostc owner only
    reason: Reason
    when: When = When.RUNTIME

    @property
    def banned_value(self) -> str:
        """The banned CPUs as the chosen irqbalance variable spells them."""
        if self.irqbalance_variable == "IRQBALANCE_BANNED_CPUS":
            return self.banned.mask()
        return str(self.banned)


@attrs.frozen
class CpuMask:
    """A kernel cpumask file hostc writes (workqueue, writeback): hex mask of `cpus`."""

    name: str  # workqueue | writeback
    path: str
    cpus: CpuSet
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen
class Module:
    """A kernel module blacklisted (optionally hard-blocked) or given options."""

    name: str
    blacklist: bool
    hard: bool  # `install <name> /bin/false`: even explicit loads fail
    options: str | None
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class ModuleLoad:
    """A kernel module loaded at every boot (modules-load.d, systemd-modules-load)."""

    name: str
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class ServiceOff:
    """A systemd unit disabled and stopped."""

    unit: str
    reason: Reason
    when: When = When.RUNTIME
    #: stopped before hostc-tuning runs (Conflicts=): an owner that would undo or fight
    #: what hostc writes (irqbalance when hostc places IRQs, TuneD's rollback on stop)
    conflicts: bool = False


@attrs.frozen
class SysfsWrite:
    """A sysfs file set at runtime; `glob` may name one file per CPU or bank."""

    name: str
    glob: str
    value: str
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen
class NicChannels:
    """A NIC's combined queues (`ethtool -L <netdev> combined N`): one per housekeeping CPU
    of its node, the CPUs its interrupts go to."""

    device: str
    pci: str
    node: int | None
    count: int
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen
class Runtime:
    owner: RuntimeOwner = RuntimeOwner.SYSTEMD
    owner_reason: Reason = Reason("preset:base", "hostc's own oneshot unit applies them")
    governor: Governor | None = None
    epp: EnergyPreference | None = None
    pstate: PstateMode | None = None
    thp_defrag: ThpDefrag | None = None
    iommu: Iommu | None = None
    #: GPU+NIC hosts: why PCIe ACS decides GPUDirect RDMA bandwidth (`hostc plan` says it)
    acs: Reason | None = None
    irq: IrqPlan | None = None
    cpumasks: tuple[CpuMask, ...] = ()
    modules: tuple[Module, ...] = ()
    services_off: tuple[ServiceOff, ...] = ()
    sysfs: tuple[SysfsWrite, ...] = ()
    nic_channels: tuple[NicChannels, ...] = ()

    @property
    def hostc_owned(self) -> bool:
        return self.owner is RuntimeOwner.SYSTEMD
