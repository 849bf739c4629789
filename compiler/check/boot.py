"""Kernel-argument rules on the finished Plan (issue 16): IOMMU/ACS, tick, idle driver.

Kept apart from `check.runtime` so each rule reads the Plan's decision, not the spec."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, warning
from hostc.knowledge import kernel as kernelfacts
from hostc.plan.model import Plan
from hostc.resolve import Resolved
from hostc.spec.model import IsolateMode, Mechanism


def _fmt(r: kernelfacts.Release) -> str:
    return f"{r[0]}.{r[1]}"


def iommu_on_merges_groups(plan: Plan) -> Iterator[Diagnostic]:
    """Mode `on`: the ACS redirect hostc turns off is what kept devices in their own
    IOMMU groups; say so, and say when the kernel is too old to turn it off."""
    io = plan.runtime.iommu
    if io is None or io.mode != "on":
        return
    if io.acs_off is not None:
        yield warning(
            at("kernel", "iommu"),
            "pci=disable_acs_redir=pci:0:0 lets peer traffic bypass the root complex, "
            "which also merges IOMMU groups: devices behind one PCIe switch can then only "
            "be assigned (VFIO) together",
            hint='use iommu = "pt" unless VFIO/SR-IOV needs the IOMMU forced on',
        )
    else:
        since = _fmt(kernelfacts.ACS_REDIR_OFF_SINCE)
        yield warning(
            at("kernel", "iommu"),
            f"the kernel predates pci=disable_acs_redir (Linux {since}): with the IOMMU on, "
            "ACS redirect sends GPU-NIC peer traffic through the root complex",
            hint=f'boot Linux ≥ {since}, or use iommu = "pt"',
        )


def arm_passthrough_keeps_cuda(plan: Plan) -> Iterator[Diagnostic]:
    """Off x86 the IOMMU setting is `iommu.passthrough=1`; on an arm64 GPU host whose
    kernel predates 6.11 (or is unknown) it breaks nvidia_uvm's ATS bind: say so."""
    io, kernel = plan.runtime.iommu, plan.host.kernel_version
    since = kernelfacts.ARM_SMMU_IDENTITY_PASID_SINCE
    if io is None or plan.host.x86 or not any(n.gpus for n in plan.nodes):
        return
    if kernel is not None and kernel >= since:
        return
    which = "an unknown kernel" if kernel is None else f"kernel {_fmt(kernel)}"
    yield warning(
        at("kernel", "iommu"),
        f"iommu.passthrough=1 on {which}: arm-smmu-v3 before Linux {_fmt(since)} cannot "
        "give a pass-through device a PASID, so nvidia_uvm's ATS/SVA bind fails and no "
        "CUDA context can be created on Grace (NVIDIA's nvidia-tuned sets "
        "iommu.passthrough=0 there)",
        hint=f"boot Linux ≥ {_fmt(since)}, or leave kernel.iommu out on this host",
    )


def init_on_alloc_known(plan: Plan) -> Iterator[Diagnostic]:
    """An opt-in the target kernel would ignore does nothing: say so."""
    kernel = plan.host.kernel_version
    since = kernelfacts.INIT_ON_ALLOC_SINCE
    if kernel is None or kernel >= since:
        return
    if any(a.key == "init_on_alloc" for a in plan.extra_args):
        yield warning(
            at("kernel", "init_on_alloc"),
            f"init_on_alloc= arrived in Linux {_fmt(since)}; kernel {_fmt(kernel)} ignores it",
            hint="leave kernel.init_on_alloc out on this kernel",
        )


def busy_poll_takes_effect(r: Resolved) -> Iterator[Diagnostic]:
    """busy_poll asks for nohz_full on the workload's isolated CPUs: say when it cannot."""
    spec = r.spec
    for i, w in enumerate(spec.workload):
        if not w.busy_poll:
            continue
        if spec.cpu.isolation is IsolateMode.NONE:
            why = "no CPU is isolated (cpu.isolate)"
        elif spec.cpu.mechanisms is not None and Mechanism.NOHZ_FULL not in spec.cpu.mechanisms:
            why = "cpu.mechanisms leaves nohz_full out"
        else:
            continue
        yield warning(
            spec.workload_at(i).key("busy_poll"),
            f"{w.name} declares busy_poll, but {why}: its CPUs keep the timer tick",
            hint='isolate its CPUs (cpu.isolate = "workload"), or drop busy_poll',
        )
