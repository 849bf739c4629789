"""Runtime tuning in the Plan: settings the command line and sysctl cannot carry
(the settings table's sysfs values, such as governor and EPP, held by their row; IRQ
ownership, workqueue masks, modules, services, sysfs writes, NIC channels), and who
owns them on the host."""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

from hostc.cpuset import CpuSet
from hostc.plan.base import Reason, Value, When
from hostc.record import Record
from hostc.settings.model import Setting
from hostc.vocab import (
    CpuMaskName,
    DeviceKind,
    IommuMode,
    IrqbalanceVariable,
    IrqOwner,
    PstateDriverName,
    PstateMode,
    RuntimeOwner,
)

T = TypeVar("T")


@attrs.frozen(repr=False, eq=False)
class PstateDriver(Record):
    """The P-state driver's mode on the command line (`amd_pstate=active`)."""

    driver: PstateDriverName
    mode: PstateMode
    reason: Reason
    when: When = When.BOOT

    @property
    def shown(self) -> str:
        return f"{self.driver}={self.mode}"


@attrs.frozen(repr=False, eq=False)
class Iommu(Record):
    """IOMMU pass-through: `iommu=pt` (`iommu.passthrough=1` off x86).  Mode `on` also
    forces the Intel IOMMU on and turns PCIe ACS redirect off again (`acs_off`)."""

    mode: IommuMode
    reason: Reason
    when: When = When.BOOT
    #: why `pci=disable_acs_redir=pci:0:0` is emitted (mode `on`, kernel ≥ 4.19); None: not
    acs_off: Reason | None = None

    @property
    def shown(self) -> str:
        return self.mode


@attrs.frozen(repr=False, eq=False)
class DeviceIrq(Record):
    """A device whose interrupts hostc pins: to housekeeping CPUs on its own NUMA node."""

    device: str
    kind: DeviceKind
    pci: str
    node: int | None
    cpus: CpuSet
    reason: Reason
    when: When = When.RUNTIME
    #: a NIC's names in the snapshot (netdev, RDMA device): the udev rule that re-runs
    #: hostc-tuning matches these, not the PCI function a pod's child netdev shares
    netdev: str | None = None
    rdma: str | None = None


@attrs.frozen(repr=False, eq=False)
class IrqPlan(Record):
    """Interrupt placement with exactly one owner (only isolated hosts get one)."""

    owner: IrqOwner
    banned: CpuSet  # the isolated CPUs: no interrupt is placed there
    default: CpuSet  # /proc/irq/default_smp_affinity (hostc) — the housekeeping CPUs
    irqbalance_variable: IrqbalanceVariable
    variable_reason: Reason
    devices: tuple[DeviceIrq, ...]  # hostc owner only
    reason: Reason
    when: When = When.RUNTIME

    @property
    def banned_value(self) -> str:
        """The banned CPUs as the chosen irqbalance variable spells them."""
        if self.irqbalance_variable is IrqbalanceVariable.MASK:
            return self.banned.mask()
        return str(self.banned)


@attrs.frozen(repr=False, eq=False)
class CpuMask(Record):
    """A kernel cpumask file hostc writes (workqueue, writeback): hex mask of `cpus`."""

    name: CpuMaskName
    path: str
    cpus: CpuSet
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen(repr=False, eq=False)
class Module(Record):
    """A kernel module blacklisted (optionally hard-blocked) or given options."""

    name: str
    blacklist: bool
    hard: bool  # `install <name> /bin/false`: even explicit loads fail
    options: str | None
    reason: Reason
    when: When = When.BOOT


@attrs.frozen(repr=False, eq=False)
class ModuleLoad(Record):
    """A kernel module loaded at every boot (modules-load.d, systemd-modules-load)."""

    name: str
    reason: Reason
    when: When = When.BOOT


@attrs.frozen(repr=False, eq=False)
class GpuDirectPath(Record):
    """GPUDirect RDMA on a host with NVIDIA GPUs and RDMA NICs: `mode` is the spec's
    choice; `peermem` says whether hostc-gpudirect.service may load nvidia-peermem (after
    openibd and the driver, where the host driver ships it)."""

    mode: str  # auto | dmabuf | peermem
    reason: Reason
    when: When = When.RUNTIME

    @property
    def peermem(self) -> bool:
        return self.mode != "dmabuf"


@attrs.frozen(repr=False, eq=False)
class ServiceOff(Record):
    """A systemd unit disabled and stopped."""

    unit: str
    reason: Reason
    when: When = When.RUNTIME
    #: stopped before hostc-tuning runs (Conflicts=): an owner that would undo or fight
    #: what hostc writes (irqbalance when hostc places IRQs, TuneD's rollback on stop)
    conflicts: bool = False


@attrs.frozen(repr=False, eq=False)
class SysfsWrite(Record):
    """A sysfs file set at runtime; `glob` may name one file per CPU or bank."""

    name: str
    glob: str
    value: str
    reason: Reason
    when: When = When.RUNTIME


@attrs.frozen(repr=False, eq=False)
class NicChannels(Record):
    """A NIC's combined queues (`ethtool -L <netdev> combined N`): one per housekeeping CPU
    of its node, the CPUs its interrupts go to."""

    device: str
    pci: str
    node: int | None
    count: int
    reason: Reason
    when: When = When.RUNTIME
    #: its names in the snapshot (the udev rule that re-runs hostc-tuning matches them)
    netdev: str | None = None
    rdma: str | None = None


@attrs.frozen(repr=False, eq=False)
class RuntimeTuning(Record):
    owner: RuntimeOwner = attrs.field(kw_only=True)
    owner_reason: Reason = attrs.field(kw_only=True)
    pstate: PstateDriver | None = None
    iommu: Iommu | None = None
    #: GPU+NIC hosts: why PCIe ACS decides GPUDirect RDMA bandwidth (`hostc plan` says it)
    acs: Reason | None = None
    irq: IrqPlan | None = None
    cpumasks: tuple[CpuMask, ...] = ()
    modules: tuple[Module, ...] = ()
    services_off: tuple[ServiceOff, ...] = ()
    sysfs: tuple[SysfsWrite, ...] = ()
    nic_channels: tuple[NicChannels, ...] = ()
    gpudirect: GpuDirectPath | None = None
    #: the settings table's runtime values written to their sysfs file (family SYSFS:
    #: governor, EPP, THP defrag, …), each held by its row, in the table's order
    tunables: tuple[Value[Any], ...] = ()

    def tunable(self, setting: Setting[T]) -> Value[T] | None:
        """The value of a sysfs row (None: this host does not get it)."""
        return next((v for v in self.tunables if v.setting is setting), None)

    @property
    def hostc_owned(self) -> bool:
        return self.owner is RuntimeOwner.SYSTEMD
