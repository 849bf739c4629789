"""Rules on the finished Plan: the partition invariants and what every target inherits.

Lowering is built to satisfy them; running them on the Plan means no later
stage (a new preset, a new lowering path, an API caller building a Plan by
hand) can break them unnoticed.  A violation names the Plan field, since it
is the Plan, not the spec, that is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, error, warning
from hostc.plan import Plan


def partition_covers_online(plan: Plan) -> Iterator[Diagnostic]:
    p = plan.partition
    if p.housekeeping | p.isolated != p.online:
        yield error(
            "plan.partition",
            f"housekeeping {p.housekeeping} and isolated {p.isolated} do not cover the "
            f"online CPUs {p.online}",
        )
    both = p.housekeeping & p.isolated
    if both:
        yield error("plan.partition", f"CPU(s) {both} are both housekeeping and isolated")


def siblings_never_split(plan: Plan) -> Iterator[Diagnostic]:
    p = plan.partition
    off_hk, off_iso = ~p.housekeeping.bits, ~p.isolated.bits  # a core must avoid one
    split = [c for c in p.cores if c.bits & off_hk and c.bits & off_iso]
    if split:
        yield error("plan.partition", f"SMT siblings split: {', '.join(map(str, split[:4]))}")


def boot_cpu_housekeeping(plan: Plan) -> Iterator[Diagnostic]:
    p = plan.partition
    if p.boot_cpu is not None and p.boot_cpu not in p.housekeeping:
        yield error("plan.partition", f"the boot CPU {p.boot_cpu} is not housekeeping")


def nodes_keep_housekeeping(plan: Plan) -> Iterator[Diagnostic]:
    if plan.partition.allow_node_without_housekeeping or not plan.partition.isolated:
        return
    for n in plan.nodes:
        if n.cpus and not n.housekeeping:
            yield error("plan.nodes", f"NUMA node {n.id} (CPUs {n.cpus}) keeps no housekeeping")


def workloads_on_online_cpus(plan: Plan) -> Iterator[Diagnostic]:
    for w in plan.workloads:
        if not w.cpus <= plan.partition.online:
            yield error("plan.workloads", f"workload {w.name} runs on CPUs not online: {w.cpus}")


def tuned_has_a_profile_dir(plan: Plan) -> Iterator[Diagnostic]:
    """A Plan built by hand that hands the tuning to TuneD must say where its TuneD reads
    profiles, or the tuned target would have nowhere to write the profile."""
    from hostc.plan import RuntimeOwner

    if plan.runtime.owner is RuntimeOwner.TUNED and not plan.host.tuned_profile_dirs:
        yield error(
            "plan.host.tuned_profile_dirs",
            "runtime.owner is tuned but the Plan names no TuneD profile directory",
        )


def os_known(plan: Plan) -> Iterator[Diagnostic]:
    """An unknown OS is a guess (the Debian GRUB drop-in), said in `check`, not only in
    `hostc plan`: a RHEL, SUSE or CoreOS host would never read the drop-in."""
    from hostc.plan import BootCarrier, OsFamily

    if plan.host.os_family is OsFamily.UNKNOWN and plan.boot.carrier is BootCarrier.GRUB:
        yield warning(
            "host.os",
            "the host's OS is not known (no host.os, and the snapshot has no os-release): "
            "hostc falls back to the Debian GRUB drop-in (/etc/default/grub.d), which "
            "RHEL, SUSE and CoreOS hosts do not read",
            hint='set host.os, e.g. host.os = "ubuntu-22.04", "rhel-9.4" or "fedora-coreos-40"',
        )


def kernel_args_carried(plan: Plan) -> Iterator[Diagnostic]:
    """Kernel arguments no file target carries reach the host only if someone applies them."""
    from hostc.kernelargs import kernel_args
    from hostc.plan import BootCarrier

    if plan.boot.carrier is not BootCarrier.NONE or not kernel_args(plan):
        return
    yield warning(
        "host.os" if plan.host.os else "host.topology",
        f"no file target carries the kernel arguments on {plan.host.os or 'this host'} "
        f"({plan.boot.reason.why}); only the kernel-cmdline deliverable has them",
        hint="apply kernel-cmdline with the host's own tooling (e.g. yast bootloader), or "
        'hand the tuning to TuneD: [runtime] owner = "tuned"',
    )


#: Kernel arguments only Intel CPUs act on; hostc emits them when the vendor is unknown.
INTEL_ONLY = ("intel_idle.max_cstate", "intel_iommu")


def vendor_known(plan: Plan) -> Iterator[Diagnostic]:
    """Without the vendor, Intel-only arguments go out beside the generic ones: say so."""
    if not plan.host.x86 or plan.host.cpu_vendor is not None:
        return
    from hostc.kernelargs import kernel_args

    inert = [a.key for a in kernel_args(plan) if a.key in INTEL_ONLY]
    if not inert:
        return
    yield warning(
        "host.topology",
        f"the snapshot does not say the CPU vendor, so the Intel-only {', '.join(inert)} "
        "go out too (inert on a non-Intel host)",
        hint="capture with `hostc probe`, or `hostc import lscpu FILE` (full `lscpu` output) "
        "or `hostc import hwloc FILE` (they carry the vendor)",
    )
