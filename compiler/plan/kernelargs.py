"""The Plan's boot-time settings spelled as kernel arguments, in one fixed order.

Shared by every carrier of the command line (the cmdline and grub targets,
TuneD's `[bootloader]`, Ignition's kernelArguments, grubby) and by the
command-line budget rule, so all of them agree byte for byte.  The order is
fixed (isolation, hugepages, memory, power, extras) so golden files stay
stable, and `hugepagesz=` always precedes its `hugepages=`.  Parameters with
an empty value are never produced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from hostc.knowledge import kernel as kernelfacts
from hostc.knowledge.arch import Arch
from hostc.knowledge.vendor import Vendor
from hostc.plan.base import Reason, When
from hostc.record import Record
from hostc.settings.model import Cmdline
from hostc.settings.table import SETTINGS
from hostc.units import format_kib
from hostc.vocab import IommuMode, Mechanism

if TYPE_CHECKING:
    from hostc.plan.model import Plan

#: Bytes left for the bootloader's own BOOT_IMAGE=… root=… ro and the distro's arguments.
BOOTLOADER_RESERVE = 256

#: Keys the rules of this module spell beyond the rows' own (`Cmdline` observes): the
#: hugepage pools, the C-state caps per idle driver, the IOMMU per vendor and
#: architecture, and the trade-offs the spec opts into.
_SPELLED_BY_RULES = (
    "hugepagesz",
    "hugepages",
    "intel_idle.max_cstate",
    "processor.max_cstate",
    "intel_iommu",
    "amd_iommu",
    "iommu.passthrough",
    "skew_tick",
    "init_on_alloc",
)
#: Keys hostc derives from typed settings; `kernel.extra_args` may not set them: the
#: isolation mechanisms, every kernel argument a settings row declares, and the rules'.
OWNED: frozenset[str] = frozenset(
    {
        *(str(m) for m in Mechanism),
        *(o.arg for s in SETTINGS for o in s.observe if isinstance(o, Cmdline)),
        *_SPELLED_BY_RULES,
    }
)


def budget(arch: Arch) -> int:
    """Bytes of the command line hostc may fill on `arch`."""
    return arch.command_line_size - BOOTLOADER_RESERVE


@attrs.frozen(repr=False, eq=False)
class KernelArg(Record):
    key: str
    value: str | None  # None for flags
    reason: Reason

    def __str__(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


#: what `iommu.passthrough=1` does (kernel-parameters.txt: "Bypass the IOMMU for DMA")
_PASSTHROUGH = (
    "; iommu.passthrough=1 makes DMA bypass the IOMMU by default (an identity default "
    "domain; kernel-parameters.txt), which arm-smmu-v3 before Linux "
    "{}.{} cannot combine with nvidia_uvm's ATS/SVA bind (hostc check warns there)"
).format(*kernelfacts.ARM_SMMU_IDENTITY_PASID_SINCE)
_NO_INTEL_IDLE = (
    "; the kernel is built without intel_idle (CONFIG_INTEL_IDLE off), so acpi_idle "
    "runs and honours processor.max_cstate"
)
_INTEL_IDLE_UNKNOWN = (
    "; the snapshot does not record CONFIG_INTEL_IDLE: on a kernel built without "
    "intel_idle this argument does nothing and processor.max_cstate applies"
)


def cstate_args(plan: Plan) -> list[KernelArg]:
    """C-state limit by CPU vendor and idle driver: intel_idle exists only on Intel and
    only where the kernel is built with it; acpi_idle (processor.) on all x86."""
    lim = plan.cstates
    if lim is None or lim.cpus is not None or not plan.host.x86:  # cpus: runtime PM QoS
        return []
    n = str(lim.max_cstate)
    acpi = KernelArg("processor.max_cstate", n, lim.reason)
    if plan.host.cpu_vendor not in (Vendor.INTEL, None):  # unknown vendor: both (inert elsewhere)
        return [acpi]
    if plan.host.intel_idle is False:
        why = Reason(lim.reason.source, lim.reason.why + _NO_INTEL_IDLE)
        return [KernelArg("processor.max_cstate", n, why)]
    reason = lim.reason
    if plan.host.intel_idle is None:
        reason = Reason(lim.reason.source, lim.reason.why + _INTEL_IDLE_UNKNOWN)
    return [KernelArg("intel_idle.max_cstate", n, reason), acpi]


def iommu_args(plan: Plan) -> list[tuple[str, str]]:
    """`iommu=pt` on x86 (`iommu.passthrough=1` elsewhere): the pass-through the CUDA
    GPUDirect RDMA guide asks for, without forcing the IOMMU on.  Mode `on` also forces
    the Intel IOMMU on where the CPU may be Intel (`intel_iommu=on`; AMD's is on by
    default).  `intel_iommu=pt` / `amd_iommu=pt` are not documented values (targets.md §1).
    The ACS argument is `acs_args`: it has its own reason."""
    io = plan.runtime.iommu
    if io is None:
        return []
    if not plan.host.x86:
        return [("iommu.passthrough", "1")]
    out = [("iommu", "pt")]
    if io.mode is IommuMode.ON and plan.host.cpu_vendor in (Vendor.INTEL, None):
        out.append(("intel_iommu", "on"))
    return out


def acs_args(plan: Plan) -> list[KernelArg]:
    """`pci=disable_acs_redir=pci:0:0` where the IOMMU is on (mode `on`, or AMD's, on by
    default), as NVIDIA's nvidia-acs-disable: an enabled IOMMU makes the kernel request
    ACS redirect.  The Plan decides it (`Iommu.acs_off`)."""
    io = plan.runtime.iommu
    if io is None or io.acs_off is None:
        return []
    return [KernelArg("pci", f"disable_acs_redir={kernelfacts.ACS_ALL_DEVICES}", io.acs_off)]


def runtime_args(plan: Plan) -> list[KernelArg]:
    """The P-state driver mode and the IOMMU: boot-time halves of the runtime settings."""
    out = []
    ps = plan.runtime.pstate
    if ps is not None:
        out.append(KernelArg(ps.driver, ps.mode, ps.reason))
    io = plan.runtime.iommu
    if io is not None:
        why = io.reason
        if not plan.host.x86:
            why = Reason(why.source, why.why + _PASSTHROUGH)
        out += [KernelArg(k, v, why) for k, v in iommu_args(plan)]
        out += acs_args(plan)
    return out


def table_args(plan: Plan) -> list[KernelArg]:
    """The settings table's kernel-argument rows (family CMDLINE), spelled as their row
    declares (`arg=value`), in the table's order."""
    out = []
    for v in plan.cmdline_settings:
        word = v.setting.cmdline
        assert word is not None, v.name  # a CMDLINE row declares its word (settings tests)
        out.append(KernelArg(word.arg, v.shown, v.reason))
    return out


def kernel_args(plan: Plan) -> list[KernelArg]:
    """The Plan's arguments in order: what every carrier of the command line, check and
    `hostc plan` read.  Spelled on each call: a few dozen small records, well under 1 %
    of a build, so the Plan does not cache them (a cache there tied the Plan to this
    module both ways)."""
    return spell(plan)


def spell(plan: Plan) -> list[KernelArg]:
    """Every argument the Plan asks for."""
    out: list[KernelArg] = []
    part = plan.partition
    if part.isolated:
        iso = str(part.isolated)
        for m in plan.isolation:
            if m.mechanism == "irqaffinity":
                value = str(part.housekeeping)
            elif m.cpus is not None:
                value = str(m.cpus)
            elif m.flags:
                value = ",".join((*m.flags, iso))
            else:
                value = iso
            out.append(KernelArg(m.mechanism, value, m.reason))
    if plan.default_hugepagesz is not None:
        d = plan.default_hugepagesz
        out.append(KernelArg("default_hugepagesz", format_kib(d.value), d.reason))
    for pool in plan.hugepages:  # `hugepages=` applies to the `hugepagesz=` before it
        if not pool.per_node or pool.when is not When.BOOT:  # runtime: hostc-hugepages
            continue
        size = format_kib(pool.size_kib)
        out.append(KernelArg("hugepagesz", size, pool.size_reason))
        value = (
            ",".join(f"{n}:{c}" for n, c in pool.per_node) if pool.node_form else str(pool.total)
        )
        out.append(KernelArg("hugepages", value, pool.reason))
    out += table_args(plan)
    if plan.cstates is not None:
        out += cstate_args(plan)
    out += runtime_args(plan)
    out += [KernelArg(a.key, a.value, a.reason) for a in plan.extra_args]
    return out


def cmdline(plan: Plan) -> str:
    """The Plan's command line."""
    return " ".join(str(a) for a in spell(plan))


def applied_live(plan: Plan) -> list[KernelArg]:
    """The Plan's kernel arguments whose setting the running kernel also takes now: the
    runtime owner writes the file `knowledge.kernel.APPLIED_LIVE` names for each
    (hostc-tuning, or TuneD's `[sysfs]`), and the word sets it from the next boot's start.
    A command line that changes in these words alone owes no reboot (`boot_only`)."""
    return [a for a in spell(plan) if a.key in kernelfacts.APPLIED_LIVE]


def boot_only(plan: Plan) -> str:
    """The Plan's command line without the arguments applied live (`applied_live`): the
    part whose change only a reboot brings."""
    return " ".join(str(a) for a in spell(plan) if a.key not in kernelfacts.APPLIED_LIVE)
