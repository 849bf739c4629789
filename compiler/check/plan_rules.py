"""The finished Plan's invariants, and advice on what every target inherits.

Lowering is built to satisfy the invariants; checking them on the Plan means no
later stage (a new preset, a new lowering path, an API caller building a Plan by
hand) can break them unnoticed.  A violation is hostc's bug, not the user's: it
names the Plan field and raises PlanInvariantError (exit 3).  The advice below
them are warnings about a sound Plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hostc.diagnostics import Diagnostic, at, warning
from hostc.knowledge.kubelet import Quantity
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import BootCarrier, OsFamily, Plan, RuntimeOwner


class PlanInvariantError(AssertionError):
    """A Plan that breaks an invariant lowering guarantees: a bug in hostc (or a Plan
    built by hand), so an internal error (exit 3), never advice to the user."""


#: An invariant yields one line per violation, naming the Plan field that is wrong.
Invariant = Callable[[Plan], Iterator[str]]


def partition_covers_online(plan: Plan) -> Iterator[str]:
    p = plan.partition
    if p.housekeeping | p.isolated != p.online:
        yield (
            f"plan.partition: housekeeping {p.housekeeping} and isolated {p.isolated} do not "
            f"cover the online CPUs {p.online}"
        )
    both = p.housekeeping & p.isolated
    if both:
        yield f"plan.partition: CPU(s) {both} are both housekeeping and isolated"


def siblings_never_split(plan: Plan) -> Iterator[str]:
    p = plan.partition
    off_hk, off_iso = ~p.housekeeping.bits, ~p.isolated.bits  # a core must avoid one
    split = [c for c in p.cores if c.bits & off_hk and c.bits & off_iso]
    if split:
        yield f"plan.partition: SMT siblings split: {', '.join(map(str, split[:4]))}"


def boot_cpu_housekeeping(plan: Plan) -> Iterator[str]:
    p = plan.partition
    if p.boot_cpu is not None and p.boot_cpu not in p.housekeeping:
        yield f"plan.partition: the boot CPU {p.boot_cpu} is not housekeeping"


def nodes_keep_housekeeping(plan: Plan) -> Iterator[str]:
    if plan.partition.allow_node_without_housekeeping or not plan.partition.isolated:
        return
    for n in plan.nodes:
        if n.cpus and not n.housekeeping:
            yield f"plan.nodes: NUMA node {n.id} (CPUs {n.cpus}) keeps no housekeeping"


def workloads_on_online_cpus(plan: Plan) -> Iterator[str]:
    for w in plan.workloads:
        if not w.cpus <= plan.partition.online:
            yield f"plan.workloads: workload {w.name} runs on CPUs not online: {w.cpus}"


def tuned_has_a_profile_dir(plan: Plan) -> Iterator[str]:
    """A Plan that hands the tuning to TuneD must say where its TuneD reads profiles,
    or the tuned target would have nowhere to write the profile."""
    if plan.runtime.owner is RuntimeOwner.TUNED and not plan.host.tuned_profile_dirs:
        yield (
            "plan.host.tuned_profile_dirs: runtime.owner is tuned but the Plan names no "
            "TuneD profile directory"
        )


def kubelet_reserves_housekeeping(plan: Plan) -> Iterator[str]:
    k = plan.kubelet
    if k is not None and k.cpu.reserved != plan.partition.housekeeping:
        yield (
            f"plan.kubelet.cpu: reservedSystemCPUs {k.cpu.reserved} is not the housekeeping "
            f"set {plan.partition.housekeeping}"
        )


def reserved_memory_equation(plan: Plan) -> Iterator[str]:
    k = plan.kubelet
    if k is None or not k.memory_manager_static:
        return
    got = Quantity(sum(r.memory.bytes for r in k.reserved_memory))
    if got != k.memory_total:
        yield (
            f"plan.kubelet.reserved_memory: reservedMemory sums to {got.in_mib}, not "
            f"{k.memory_total.in_mib}"
        )


def os_known(plan: Plan) -> Iterator[Diagnostic]:
    """An unknown OS is a guess (the Debian GRUB drop-in), said in `check`, not only in
    `hostc plan`: a RHEL, SUSE or CoreOS host would never read the drop-in."""
    if plan.host.os_family is OsFamily.UNKNOWN and plan.boot.carrier is BootCarrier.GRUB:
        yield warning(
            at("host", "os"),
            "the host's OS is not known (no host.os, and the snapshot has no os-release): "
            "hostc falls back to the Debian GRUB drop-in (/etc/default/grub.d), which "
            "RHEL, SUSE and CoreOS hosts do not read",
            hint='set host.os, e.g. host.os = "ubuntu-22.04", "rhel-9.4" or "fedora-coreos-40"',
        )


def kernel_args_carried(plan: Plan) -> Iterator[Diagnostic]:
    """Kernel arguments no file target carries reach the host only if someone applies them."""
    if plan.boot.carrier is not BootCarrier.NONE or not kernel_args(plan):
        return
    yield warning(
        at("host", "os") if plan.host.os else at("host", "topology"),
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
    inert = [a.key for a in kernel_args(plan) if a.key in INTEL_ONLY]
    if not inert:
        return
    yield warning(
        at("host", "topology"),
        f"the snapshot does not say the CPU vendor, so the Intel-only {', '.join(inert)} "
        "go out too (inert on a non-Intel host)",
        hint="capture with `hostc probe`, or `hostc import lscpu FILE` (full `lscpu` output) "
        "or `hostc import hwloc FILE` (they carry the vendor)",
    )
