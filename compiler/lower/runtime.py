"""Runtime settings: P-state driver, IOMMU, interrupts, kernel cpumasks, modules and
services (issue 10), and the settings table's sysfs values (governor, EPP, THP
defrag, …), which the Plan holds by their row as the merge gives them.

They come out of the one preset merge (setting names `cpu_governor`,
`energy_performance_preference`, `pstate`, `transparent_hugepage_defrag`,
`iommu`, `irq_owner`, `runtime_owner`), so `preset.exclude` and the spec
override or remove them like any other setting.  The CPU sets they need are
resolved here, from the partition and the topology, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hostc.cpuset import CpuSet
from hostc.knowledge import cpus as cpufacts
from hostc.knowledge import kernel as kernelfacts
from hostc.knowledge.arch import FIRST_HALT_STATE, Arch
from hostc.knowledge.vendor import Vendor
from hostc.lower.irq import irq_plan, nic_channels
from hostc.lower.nics import chosen_channels
from hostc.plan.model import (
    CpuMask,
    CpuPartition,
    CStateLimit,
    GpuDirectPath,
    HostFacts,
    Iommu,
    IrqOwner,
    IrqPlan,
    Isolation,
    Module,
    OsFamily,
    Placement,
    PstateDriver,
    Reason,
    RuntimeOwner,
    RuntimeTuning,
    ServiceOff,
    SysfsWrite,
    When,
)
from hostc.provenance import Source, Value, default, key, topology
from hostc.resolve.requests import KernelRequest, RuntimeRequest
from hostc.settings import table as t
from hostc.settings.model import Setting
from hostc.topology.model import Topology
from hostc.vocab import CpuMaskName, CStatesAt, IommuMode, PstateDriverName, PstateMode

#: The merge's one-value settings by row (lowering reads them by `t.GOVERNOR`, …).
One = Mapping[Setting[Any], Value[Any]]

CPUMASKS = (
    (
        CpuMaskName.WORKQUEUE,
        "/sys/devices/virtual/workqueue/cpumask",
        "unbound kernel workqueues run on housekeeping CPUs, not on isolated ones",
    ),
    (
        CpuMaskName.WRITEBACK,
        "/sys/bus/workqueue/devices/writeback/cpumask",
        "page-cache writeback workers run on housekeeping CPUs, not on isolated ones",
    ),
)


#: The P-state driver each vendor's mode is spelled for (none for other vendors).
_PSTATE_DRIVER = {
    Vendor.INTEL: PstateDriverName.INTEL_PSTATE,
    Vendor.AMD: PstateDriverName.AMD_PSTATE,
}


def pstate(host: HostFacts, r: Value[Any] | None) -> PstateDriver | None:
    """The mode by vendor: intel_pstate or amd_pstate; none elsewhere (check says so)."""
    if r is None or not host.x86:
        return None
    driver = _PSTATE_DRIVER.get(host.cpu_vendor) if host.cpu_vendor is not None else None
    if driver is None or (driver is PstateDriverName.INTEL_PSTATE and r.value == PstateMode.GUIDED):
        return None
    return PstateDriver(driver, r.value, r.reason)


def cstate_limit(
    req: KernelRequest,
    part: CpuPartition,
    pins: Sequence[Placement],
    r: Value[Any] | None,
    owner: RuntimeOwner = RuntimeOwner.SYSTEMD,
    topo: Topology | None = None,
) -> CStateLimit | None:
    """At runtime, per CPU, on the workload CPUs only (the default), or at boot on every
    CPU where the spec says `kernel.cstates_at = "boot"`.  Per-CPU PM QoS
    (`cpuN/power/pm_qos_resume_latency_us`) is what no_hz.rst prefers and is revertible;
    the boot caps cost idle power and turbo headroom on every CPU, idle ones included."""
    if r is None:
        return None
    n: int = r.value
    if req.cstates_at is CStatesAt.BOOT:
        return CStateLimit(n, r.reason)
    if owner is RuntimeOwner.TUNED:
        why = (
            f"{r.reason.why}; at runtime on every CPU, revertible: TuneD's force_latency "
            "holds /dev/cpu_dma_latency, one limit for all CPUs, while TuneD runs"
        )
        return CStateLimit(n, Reason(r.reason.source, why), When.RUNTIME, part.online)
    cpus, what = part.isolated, "isolated CPUs"
    irq_cpus = _irq_cpus(topo, part) if topo is not None and cpus else CpuSet()
    if irq_cpus - cpus:
        cpus = cpus | irq_cpus
        what = (
            f"isolated CPUs and the housekeeping CPUs of the GPU and NIC nodes ({irq_cpus}: "
            "they take those devices' interrupts, request ingress and completions), in all"
        )
    if not cpus:
        cpus, what = CpuSet(), "workloads' CPUs"
        for w in pins:
            cpus = cpus | w.cpus
    if not cpus:
        cpus, what = part.online, "CPUs (no workload is pinned)"
    first = FIRST_HALT_STATE.get(Arch.from_uname(topo.arch or "")) if topo is not None else 1
    if first is None:
        return None  # no cpuidle state known to be shallow on this arch
    others = "; the others keep their deep C-states" if cpus != part.online else ""
    why = (
        f"{r.reason.why}; per CPU at runtime on the {what} {cpus}, revertible "
        f"(PM QoS resume latency{others})"
    )
    return CStateLimit(n, Reason(r.reason.source, why), When.RUNTIME, cpus, n - 1 + first)


def _irq_cpus(topo: Topology, part: CpuPartition) -> CpuSet:
    """The housekeeping CPUs of the nodes with GPUs or NICs: interrupts are kept on the
    housekeeping CPUs, on the device's own node where it has some."""
    nodes = {g.node for g in topo.gpus if g.node is not None}
    nodes |= {n.node for n in topo.nics if n.node is not None}
    return part.housekeeping & topo.cpus_of_nodes(tuple(sorted(nodes)))


def offline_writes(req: RuntimeRequest) -> tuple[SysfsWrite, ...]:
    """`cpu.offline`: one `cpuN/online = 0` per CPU, first of the runtime writes, so every
    later one reaches only the CPUs that stay online (check judged the set: whole cores,
    never the boot CPU, every NUMA node keeping one)."""
    cpus = req.offline
    if not cpus:
        return ()
    return tuple(
        SysfsWrite(
            cpufacts.ONLINE_WRITE.format(n),
            cpufacts.ONLINE_FILE.format(n),
            "0",
            Reason(
                key("cpu", "offline"),
                f"CPU {n} offline at every boot (cpu.offline {cpus}): in no CPU set of the "
                "Plan; a boot without this write brings it back",
            ),
        )
        for n in cpus
    )


def tunable(r: Value[Any]) -> Value[Any]:
    """A sysfs row's value, with what it does where the merge's reason cannot say it (a
    spec value's reason is only "set by the spec")."""
    if r.setting is t.MIN_PERF_PCT:
        why = f"{r.reason.why}: {cpufacts.MIN_PERF_PCT_WHY.format(pct=r.value)}"
        return attrs.evolve(r, reason=Reason(r.reason.source, why))
    return r


def sysfs_writes(host: HostFacts, tick: Isolation | None) -> tuple[SysfsWrite, ...]:
    """x86 only (machinecheck is x86's MCE sysfs), and only where the tick is stopped
    (nohz_full): elsewhere the HZ tick fires on the isolated CPUs anyway and a poll
    every 5 minutes costs nothing measurable.  `check_interval=0` stops the poll timer
    and keeps CMCI; `ignore_ce` (CMCI off node-wide) is never written (knowledge.kernel.MCE)."""
    if tick is None or not host.x86:
        return ()
    why = (
        "the corrected-error poll timer would wake the tickless (nohz_full) CPUs every "
        "check_interval: it is stopped, so corrected errors are no longer polled on any "
        "CPU; CMCI and threshold interrupts still report them, uncorrected errors are "
        "unaffected (ignore_ce, which turns CMCI off too, is not used)"
    )
    glob = kernelfacts.MCE_SYSFS.format("check_interval")
    value = kernelfacts.MCE["check_interval"]
    return (SysfsWrite("mce_check_interval", glob, value, Reason(tick.reason.source, why)),)


_GPUDIRECT_WHY = {
    "auto": "DMA-BUF where the host can use it (NVIDIA open kernel modules on Linux >= 5.12: "
    "NCCL registers GPU memory through it, and NVIDIA recommends it over nvidia-peermem, "
    "whose NV-P2P API CUDA 13 deprecates); otherwise hostc-gpudirect.service loads "
    "nvidia-peermem after openibd and the driver, where the host driver ships it",
    "dmabuf": "DMA-BUF only: nvidia-peermem is never loaded (it needs the peer-memory "
    "symbols of the loaded ib_core and fails to load when they differ)",
    "peermem": "nvidia-peermem, loaded by hostc-gpudirect.service after openibd and the "
    "driver where the host driver ships it (absent on GPU Operator nodes, whose driver "
    "container loads its own); DMA-BUF stays usable beside it",
}


def gpudirect(req: RuntimeRequest, topo: Topology) -> GpuDirectPath | None:
    """NVIDIA GPUs and RDMA NICs on one host: the path NICs take to GPU memory."""
    nvidia = any((g.vendor or "").lower() == "nvidia" for g in topo.gpus)
    if not (nvidia and any(n.rdma for n in topo.nics)):
        return None
    mode = req.gpudirect.value
    why = "NVIDIA GPUs and RDMA NICs on one host: GPUDirect RDMA by " + _GPUDIRECT_WHY[mode]
    return GpuDirectPath(mode, Reason(req.gpudirect_source, why))


def modules(req: RuntimeRequest) -> list[Module]:
    out: dict[str, Module] = {}
    hard = req.hard_block
    for i, name in enumerate(req.blacklist):
        why = "not needed on a GPU server: smaller attack surface, faster boot" + (
            "; hard-blocked, explicit loads fail too" if hard else ""
        )
        out[name] = Module(name, True, hard, None, Reason(key("modules", "blacklist", i), why))
    for name, opts in req.module_options.items():
        prev = out.get(name)
        src = key("modules", "options", name)
        if prev is not None:
            out[name] = Module(name, True, prev.hard, opts, prev.reason)
        else:
            out[name] = Module(name, False, False, opts, Reason(src, "options given by the spec"))
    return [out[k] for k in sorted(out)]


#: RHEL installs and enables tuned.service (profile throughput-performance, or
#: virtual-guest in VMs): "TuneD is installed and enabled by default" (RHEL 8/9
#: "Monitoring and managing system status and performance", Getting started with TuneD).
_TUNED_BY_DEFAULT = (OsFamily.RHEL,)


def services(
    req: RuntimeRequest,
    irq: IrqPlan | None,
    host: HostFacts,
    owner: RuntimeOwner,
    owner_source: Source,
) -> list[ServiceOff]:
    out = [
        ServiceOff(u, Reason(key("services", "disable", i), "not needed on a GPU server"))
        for i, u in enumerate(req.services_off)
    ]
    hostc_irq = irq is not None and irq.owner is IrqOwner.HOSTC
    if irq is not None and hostc_irq:
        out = [s for s in out if s.unit != "irqbalance.service"]
        why = "hostc places interrupts: irqbalance would fight it"
        out.append(ServiceOff("irqbalance.service", Reason(irq.reason.source, why), conflicts=True))
    if owner is RuntimeOwner.SYSTEMD and host.os_family in _TUNED_BY_DEFAULT:
        out = [s for s in out if s.unit != "tuned.service"]
        why = (
            f"{host.os or 'this OS'} runs TuneD by default (throughput-performance): with "
            "hostc-tuning owning the runtime settings it would be a second owner, and its "
            "rollback on stop would undo hostc's writes, so it stops first"
        )
        out.append(ServiceOff("tuned.service", Reason(owner_source, why), conflicts=True))
    return out


_ACS_WHY = (
    "GPUs and NICs share this host: PCIe ACS decides GPUDirect RDMA bandwidth.  With ACS "
    "redirect on (the kernel requests it on every port whenever an IOMMU is on, "
    "pci_request_acs), GPU-NIC peer traffic goes up to the root complex instead of "
    "across their PCIe switch (NCCL troubleshooting: 'significant performance reduction "
    "or even a hang'); `lspci -vvv` shows ACSCtl per bridge"
)


def acs_note(topo: Topology, host: HostFacts, io: Iommu | None) -> Reason | None:
    """What `hostc plan` says about ACS on a host with GPUs and NICs."""
    if not (topo.gpus and topo.nics):
        return None
    if io is None:
        tail = "; hostc leaves the IOMMU as the kernel has it"
    elif io.acs_off is not None:
        tail = "; hostc turns redirect off (pci=disable_acs_redir)"
    elif io.mode is IommuMode.ON or host.x86:
        tail = "; this kernel predates pci=disable_acs_redir: redirect stays on"
    else:
        tail = "; hostc does not turn ACS redirect off on this architecture"
    return Reason(topology("pcie"), _ACS_WHY + tail)


_ACS_OFF_WHY = (
    "the kernel requests PCIe ACS redirect wherever an IOMMU is on (pci_request_acs), "
    "which sends GPU-NIC peer traffic through the root complex; NVIDIA's "
    "nvidia-acs-disable turns it off on every device (this merges IOMMU groups)"
)
_AMD_IOMMU_ON = (
    "the AMD IOMMU is on by default, iommu=pt or not (drivers/iommu/amd/init.c detect_ivrs "
    "calls pci_request_acs): "
)
_INTEL_IOMMU_ON = (
    "this kernel turns the Intel IOMMU on by itself (CONFIG_INTEL_IOMMU_DEFAULT_ON), "
    "iommu=pt or not: "
)


_INTEL_MAY_BE_ON = (
    "VT-d may be on without intel_iommu=on (the firmware's DMAR opt-in, a kernel built with "
    "CONFIG_INTEL_IOMMU_DEFAULT_ON, an admin's intel_iommu=on) and firmware may set ACS on "
    "PCIe switches itself (NCCL issue #304); the kernel clears redirect even where it did "
    "not enable ACS (pci_enable_acs) and, with the IOMMU off, changes nothing else (NVIDIA's "
    "H100 profiles include nvidia-acs-disable on every host): "
)


def iommu_on_anyway(host: HostFacts) -> str | None:
    """Why ACS redirect may be on with `iommu=pt` alone (None: not x86, hostc does not
    judge arm64's SMMU here)."""
    if not host.x86:
        return None
    if host.cpu_vendor is Vendor.AMD:
        return _AMD_IOMMU_ON
    if host.cpu_vendor is Vendor.INTEL and host.intel_iommu_default_on:
        return _INTEL_IOMMU_ON
    return _INTEL_MAY_BE_ON


def iommu(host: HostFacts, r: Value[Any] | None) -> Iommu | None:
    """ACS redirect off wherever GPUDirect RDMA may cross it: mode `on`, and on every x86
    host in pass-through (AMD's IOMMU is on by default; Intel's may be), on kernels that
    have the parameter."""
    if r is None:
        return None
    kernel = host.kernel_version
    anyway = iommu_on_anyway(host)
    acs_off = None
    if (r.value == IommuMode.ON or anyway) and (
        kernel is None or kernel >= kernelfacts.ACS_REDIR_OFF_SINCE
    ):
        why = _ACS_OFF_WHY if r.value == IommuMode.ON else (anyway or "") + _ACS_OFF_WHY
        acs_off = Reason(r.reason.source, why)
    return Iommu(r.value, r.reason, acs_off=acs_off)


def runtime(
    req: RuntimeRequest,
    topo: Topology,
    part: CpuPartition,
    host: HostFacts,
    os_source: Source,
    one: One,
    tick: Isolation | None = None,
) -> RuntimeTuning:
    """The runtime settings; `os_source`: where the host's OS came from (`host.os` or
    the snapshot), which the irqbalance variable's reason names."""
    io = iommu(host, one.get(t.IOMMU))
    owner = one.get(t.RUNTIME_OWNER)
    irq = irq_plan(host, os_source, topo, part, one.get(t.IRQ_OWNER))
    masks = (
        tuple(
            CpuMask(n, p, part.housekeeping, Reason(key("cpu", "isolate"), w))
            for n, p, w in CPUMASKS
        )
        if part.isolated
        else ()
    )
    rt_owner: RuntimeOwner = owner.value if owner else RuntimeOwner.SYSTEMD
    owner_reason = (
        owner.reason
        if owner
        else Reason(default("runtime_owner"), "hostc's own oneshot unit applies them")
    )
    return RuntimeTuning(
        owner=rt_owner,
        owner_reason=owner_reason,
        pstate=pstate(host, one.get(t.PSTATE)),
        iommu=io,
        acs=acs_note(topo, host, io),
        irq=irq,
        cpumasks=masks,
        modules=tuple(modules(req)),
        services_off=tuple(services(req, irq, host, rt_owner, owner_reason.source)),
        sysfs=(*offline_writes(req), *sysfs_writes(host, tick)),
        nic_channels=chosen_channels(req, nic_channels(topo, part, req.nic_channels)),
        gpudirect=gpudirect(req, topo),
        tunables=tuple(tunable(one[s]) for s in t.SYSFS_ROWS if s in one),  # the table's order
    )
