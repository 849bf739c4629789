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

from typing import Any, Literal, TypeVar

import attrs

from hostc.cpuset import CpuSet
from hostc.knowledge.arch import Arch
from hostc.knowledge.distro import ALLOWED_CPUS_SINCE
from hostc.knowledge.family import BootCarrier as BootCarrier
from hostc.knowledge.runtime import kernel_keeps_affinity
from hostc.knowledge.vendor import Vendor
from hostc.plan.base import UNLIMITED as UNLIMITED
from hostc.plan.base import Distro as Distro
from hostc.plan.base import OsFamily as OsFamily
from hostc.plan.base import Reason as Reason
from hostc.plan.base import Value as Value
from hostc.plan.base import When as When
from hostc.plan.kubelet import CpuManager as CpuManager
from hostc.plan.kubelet import Eviction as Eviction
from hostc.plan.kubelet import KubeletPlan as KubeletPlan
from hostc.plan.kubelet import KubeReservation as KubeReservation
from hostc.plan.kubelet import MemoryManager as MemoryManager
from hostc.plan.kubelet import MemoryReservation as MemoryReservation
from hostc.plan.kubelet import PodCapacity as PodCapacity
from hostc.plan.kubelet import RuntimeAffinity as RuntimeAffinity
from hostc.plan.kubelet import TopologyManager as TopologyManager
from hostc.plan.runtime import CpuMask as CpuMask
from hostc.plan.runtime import DeviceIrq as DeviceIrq
from hostc.plan.runtime import GpuDirectPath as GpuDirectPath
from hostc.plan.runtime import Iommu as Iommu
from hostc.plan.runtime import IrqPlan as IrqPlan
from hostc.plan.runtime import Module as Module
from hostc.plan.runtime import ModuleLoad as ModuleLoad
from hostc.plan.runtime import NicChannels as NicChannels
from hostc.plan.runtime import PstateDriver as PstateDriver
from hostc.plan.runtime import RuntimeTuning as RuntimeTuning
from hostc.plan.runtime import ServiceOff as ServiceOff
from hostc.plan.runtime import SysfsWrite as SysfsWrite
from hostc.provenance import LeftOut as LeftOut
from hostc.provenance import Provenance as Provenance
from hostc.record import Record
from hostc.settings import table as t
from hostc.settings.model import Family, Setting
from hostc.vocab import IrqOwner as IrqOwner
from hostc.vocab import IsolcpusFlag, LimitItem, Mechanism, Role, ThpMode
from hostc.vocab import RuntimeOwner as RuntimeOwner

T = TypeVar("T")

#: Field metadata: plan.json leaves the field out.  For facts derived from a field it
#: shows already (the TuneD release's options follow `host.os`), so the file says each
#: fact once and a table row added in knowledge changes no plan.json.
IN_PLAN_JSON = "plan_json"
NOT_IN_PLAN_JSON = {IN_PLAN_JSON: False}


@attrs.frozen(repr=False, eq=False)
class TunedFacts(Record):
    """What the TuneD of the host's release reads, resolved once in lower from
    `hostc.knowledge.distro` (TUNED, TUNED_OPTION_SINCE, TUNED_PERF_PACKAGE).  The
    defaults are an unknown release: no version, and none of the newer options."""

    version: tuple[int, int, int] | None = None  # None: hostc does not know the release's
    #: the package TuneD's perf-using plugins ([scheduler], [irqbalance]) need beside it
    perf_package: str | None = None
    epp: bool = False  # reads [cpu] energy_performance_preference (2.20)
    cgroup_ps_blacklist: bool = False  # reads [scheduler] cgroup_ps_blacklist (2.17)
    net_channels: bool = False  # reads [net] channels (2.16)
    #: reads force_latency's `cstate.id_no_zero` (2.18); an older or unknown release gets
    #: `cstate.id` (2.13), which every release reads
    cstate_id_no_zero: bool = False


@attrs.frozen(repr=False, eq=False)
class HostFacts(Record):
    """What the targets need to know about the host to spell settings right."""

    name: str
    role: Role
    arch: Arch  # the snapshot's uname -m, typed (OTHER: a spelling hostc does not know)
    cpu_vendor: Vendor | None  # intel, amd, … (None: the snapshot does not say)
    kernel: str | None  # release the host boots
    kernel_version: tuple[int, int] | None
    os: Distro | None  # os-release ID and VERSION_ID, shown as ubuntu-22.04
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
    #: the systemd the release ships (None: unknown release), hostc.knowledge.distro.SYSTEMD
    systemd: int | None = None
    #: whether it boots the unified cgroup hierarchy (None: unknown), where systemd's
    #: AllowedCPUs=/AllowedMemoryNodes= work
    unified_cgroup: bool | None = None
    #: whether its systemd raises fs.nr_open to the kernel's maximum at boot (None: unknown)
    raises_nr_open: bool | None = None
    #: the release's TuneD (derived from `os`, so not in plan.json)
    tuned: TunedFacts = attrs.field(factory=TunedFacts, metadata=NOT_IN_PLAN_JSON)

    @property
    def cpuset_ignored(self) -> bool:
        """True where systemd is known to ignore AllowedCPUs=/AllowedMemoryNodes=."""
        old = self.systemd is not None and self.systemd < ALLOWED_CPUS_SINCE
        return old or self.unified_cgroup is False

    @property
    def cpuset_resets_affinity(self) -> bool:
        """True unless the kernel is known to keep a task's requested CPU mask when the
        task moves into a cpuset (Linux 6.2, `hostc.knowledge.runtime`): older (or
        unknown) kernels reset it, PID 1's `CPUAffinity=` included."""
        return kernel_keeps_affinity(self.kernel_version) is not True

    @property
    def x86(self) -> bool:
        return self.arch.is_x86


@attrs.frozen(repr=False, eq=False)
class CpuPartition(Record):
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


@attrs.frozen(repr=False, eq=False)
class Isolation(Record):
    """One isolation mechanism applied to the isolated CPUs (`isolcpus`, `nohz_full`, …)."""

    mechanism: Mechanism
    flags: tuple[IsolcpusFlag, ...]  # isolcpus= flags; empty for the other mechanisms
    reason: Reason
    when: When = When.BOOT
    #: the CPUs it covers where that is not every isolated CPU (nohz_full: the CPUs of
    #: busy-polling workloads); None: all isolated CPUs (irqaffinity: housekeeping)
    cpus: CpuSet | None = None


@attrs.frozen(repr=False, eq=False)
class NodeView(Record):
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


@attrs.frozen(repr=False, eq=False)
class HugepagePool(Record):
    size_kib: int
    per_node: tuple[tuple[int, int], ...]  # (node, pages), nodes with pages > 0
    node_form: bool  # per-node counts on the cmdline (Linux ≥ 5.16)
    reason: Reason
    size_reason: Reason
    when: When = When.BOOT

    @property
    def total(self) -> int:
        return sum(n for _, n in self.per_node)


@attrs.frozen(repr=False, eq=False)
class CStateLimit(Record):
    """Keep CPUs out of idle states deeper than `max_cstate` (1: C1 only).

    `cpus` None: boot-time caps on every CPU (`intel_idle.max_cstate=`,
    `processor.max_cstate=`), by explicit choice in the spec.  A set: per-CPU PM QoS at
    runtime on those CPUs only (the workload CPUs), revertible by writing 0, as no_hz.rst
    prefers ("Use PMQOS from userspace")."""

    max_cstate: int
    reason: Reason
    when: When = When.BOOT
    cpus: CpuSet | None = None
    #: the cpuidle state whose exit latency becomes the PM QoS limit (`hostc.knowledge.arch`
    #: FIRST_HALT_STATE: state 1 on x86, state 0 (WFI) on arm64 for C1)
    state: int = attrs.field(default=attrs.Factory(lambda self: self.max_cstate, takes_self=True))


@attrs.frozen(repr=False, eq=False)
class ExtraArg(Record):
    """A kernel argument the spec asks for: verbatim (`kernel.extra_args`, checked) or an
    offered trade-off it opts into (`kernel.skew_tick`, `kernel.init_on_alloc`)."""

    key: str
    value: str | None  # None for flags (`nosoftlockup`)
    reason: Reason
    when: When = When.BOOT


@attrs.frozen(repr=False, eq=False)
class Sysctl(Record):
    key: str  # canonical dotted form
    value: str  # as written to sysctl.d (three-value keys space-separated)
    reason: Reason
    when: When = When.SYSCTL


LimitValue = int | Literal["unlimited"]


@attrs.frozen(repr=False, eq=False)
class Limit(Record):
    """A resource limit for sessions and services; memlock in KiB."""

    item: LimitItem
    value: LimitValue
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen(repr=False, eq=False)
class Placement(Record):
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
    #: GPU daemons it starts after (Fabric Manager, persistenced on NVSwitch hosts)
    after: tuple[str, ...] = ()
    after_reason: Reason | None = None


@attrs.frozen(repr=False, eq=False)
class Boot(Record):
    carrier: BootCarrier
    reason: Reason
    when: When = When.BOOT

    def not_carried_by(self, carrier: BootCarrier) -> str | None:
        """Why a target carrying the arguments by `carrier` does not apply (None: it does)."""
        if self.carrier is carrier:
            return None
        return f"the kernel arguments go by {self.carrier}: {self.reason.why}"


@attrs.frozen(repr=False, eq=False)
class DeviceLink(Record):
    """How a GPU reaches a NIC (`nvidia-smi topo -m`): NV#, PIX, PXB, PHB, NODE, SYS."""

    gpu: str
    nic: str
    kind: str


@attrs.frozen(repr=False, eq=False)
class Hardware(Record):
    """Topology facts the picture of the partition needs and the settings do not:
    which package each node sits in, the offline CPUs, the GPU-NIC link matrix."""

    packages: tuple[tuple[int, int | None], ...] = ()  # (node, package) per node with CPUs
    offline: tuple[tuple[int | None, CpuSet], ...] = ()  # (node or None, offline CPUs)
    links: tuple[DeviceLink, ...] = ()  # GPU-NIC cells of the matrix the snapshot has


@attrs.frozen(repr=False, eq=False)
class Plan(Record):
    host: HostFacts
    partition: CpuPartition
    isolation: tuple[Isolation, ...]
    nodes: tuple[NodeView, ...]
    default_hugepagesz: Value[int] | None  # KiB
    hugepages: tuple[HugepagePool, ...]
    #: the settings table's kernel arguments (family CMDLINE: THP's mode, …), each held
    #: by its row, in the table's order; spelled by `hostc.plan.kernelargs` from the row
    cmdline_settings: tuple[Value[Any], ...]
    cstates: CStateLimit | None
    extra_args: tuple[ExtraArg, ...]
    sysctls: tuple[Sysctl, ...]
    limits: tuple[Limit, ...]
    workloads: tuple[Placement, ...]
    left_out: tuple[LeftOut, ...] = ()
    runtime: RuntimeTuning = attrs.field(kw_only=True)
    kubelet: KubeletPlan | None = None
    boot: Boot = attrs.field(kw_only=True)
    modules_load: tuple[ModuleLoad, ...] = ()
    hardware: Hardware = Hardware()
    #: per spec value, the file that set it; empty for a single-file spec
    provenance: tuple[Provenance, ...] = ()

    def limit(self, item: str) -> Limit | None:
        return next((x for x in self.limits if x.item == item), None)

    def cmdline_setting(self, setting: Setting[T]) -> Value[T] | None:
        """The value of a kernel-argument row (None: this host does not get it)."""
        return next((v for v in self.cmdline_settings if v.setting is setting), None)

    @property
    def thp(self) -> Value[ThpMode] | None:
        """THP's mode (its row is a kernel argument; targets also write it live)."""
        return self.cmdline_setting(t.THP)

    def held(self, s: Setting[Any]) -> Any:
        """The Plan's value of a one-value row (None: this host does not get it): a sysfs
        row by its row in `runtime.tunables`, a kernel-argument row by its row in
        `cmdline_settings`, the others in the record a rule of lowering made for them.
        The one place that says where; KeyError for a row of another family (sysctls,
        limits and modules are held as lists of their own)."""
        if s.family is Family.SYSFS:
            return self.runtime.tunable(s)
        if s.family is Family.CMDLINE:
            return self.cmdline_setting(s)
        rt = self.runtime
        return {
            t.DEFAULT_HUGEPAGESZ: self.default_hugepagesz,
            t.MAX_CSTATE: self.cstates,
            t.PSTATE: rt.pstate,
            t.IOMMU: rt.iommu,
            t.IRQ_OWNER: rt.irq,
            t.RUNTIME_OWNER: rt.owner,
        }[s]

    def isolation_by(self, mechanism: str) -> Isolation | None:
        return next((x for x in self.isolation if x.mechanism == mechanism), None)

    @property
    def slice_cpusets(self) -> bool:
        """Whether the services are kept on the housekeeping CPUs by their slices' cgroup
        cpusets (system.slice, user.slice; the workloads in a slice of their own), with
        PID 1 put back by hostc-tuning: where hostc confines services (an isolated
        partition, hostc the runtime owner), systemd applies AllowedCPUs=, and the kernel
        is not known to keep an inherited mask inside a cpuset (before 6.2, or unknown:
        `hostc.knowledge.runtime`).  On a kernel that keeps it, the manager's
        CPUAffinity= alone reaches every service."""
        return (
            bool(self.partition.isolated)
            and self.runtime.hostc_owned
            and not self.host.cpuset_ignored
            and self.host.cpuset_resets_affinity
        )
