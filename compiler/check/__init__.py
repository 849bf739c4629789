"""check: the semantic rules that need the hardware.  One function per rule.

Rules take the resolved host (`hostc.resolve`: spec, snapshot and the facts both
decide) and yield Diagnostics; every rule runs, so a user sees all problems at
once.  After lowering, the Plan's invariants are asserted (a violation is a bug:
PlanInvariantError, exit 3) and the Plan rules judge what would be emitted (the
command-line budget, the traps of knobs.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hostc.check import (
    boot,
    cpu,
    cpu_state,
    host,
    kernel,
    machine,
    memory,
    nics,
    plan_rules,
    release,
    runtime,
    tuned,
    workload,
)
from hostc.check import kubelet as kubelet_rules
from hostc.check.plan_rules import PlanInvariantError
from hostc.diagnostics import Diagnostic
from hostc.plan.model import Plan
from hostc.resolve import Resolved

Rule = Callable[[Resolved], Iterable[Diagnostic]]

RULES: tuple[Rule, ...] = (
    host.systemd_binds_memory,
    host.systemd_contains_workloads,
    release.sysctls_exist,
    release.nofile_within_nr_open,
    release.isolcpus_flags_sound,
    release.kernel_built_for_isolation,
    cpu.one_housekeeping_form,
    cpu.cpus_exist,
    cpu.siblings_together,
    cpu.siblings_known,
    cpu.snapshot_caveats,
    cpu.partition_sound,
    cpu.isolation_has_users,
    cpu_state.offline_sound,
    cpu_state.min_perf_pct_taken,
    cpu_state.realtime_isolated,
    machine.housekeeping_enough,
    machine.gpu_role_has_gpus,
    workload.gpus_exist,
    runtime.names_valid,
    runtime.units_valid,
    runtime.owners_agree,
    runtime.pstate_spelled,
    runtime.epp_taken,
    nics.nic_devices_match,
    boot.busy_poll_takes_effect,
    memory.hugepages_shape,
    memory.hugepages_fit,
    memory.hugepages_kernel,
    kernel.extra_args_safe,
    kernel.sysctls_tuned_writes,
    kernel.limits_valid,
    kernel.preset_excludes_known,
    kubelet_rules.version_supported,
    kubelet_rules.role_named,
    kubelet_rules.cpu_manager_options,
    kubelet_rules.strict_reservation,
    kubelet_rules.eviction_hard_valid,
    kubelet_rules.reserved_memory_adds_up,
    kubelet_rules.memory_manager_has_reservations,
    kubelet_rules.topology_manager_options,
    kubelet_rules.topology_manager_fits_nodes,
    kubelet_rules.topology_admits_gpus,
)

INVARIANTS: tuple[plan_rules.Invariant, ...] = (
    plan_rules.partition_covers_online,
    plan_rules.siblings_never_split,
    plan_rules.boot_cpu_housekeeping,
    plan_rules.nodes_keep_housekeeping,
    plan_rules.workloads_on_online_cpus,
    plan_rules.tuned_has_a_profile_dir,
    plan_rules.kubelet_reserves_housekeeping,
    plan_rules.reserved_memory_equation,
)

PLAN_RULES: tuple[Callable[[Plan], Iterable[Diagnostic]], ...] = (
    plan_rules.vendor_known,
    plan_rules.kernel_args_carried,
    plan_rules.os_known,
    kernel.cmdline_fits,
    kernel.extra_args_not_derived,
    runtime.loaded_modules_not_blocked,
    runtime.isolated_cpus_pinned,
    runtime.nohz_full_not_shared,
    runtime.workload_one_node,
    runtime.thp_not_always_for_inference,
    runtime.nohz_full_with_intel_pstate,
    runtime.tuned_keeps_pinned_servers,
    tuned.nic_channels_carried,
    boot.iommu_on_merges_groups,
    boot.arm_passthrough_keeps_cuda,
    boot.init_on_alloc_known,
    kubelet_rules.reserved_cpus_leave_pods_room,
    kubelet_rules.pods_keep_memory,
)


#: Rules that judge the Plan against the machine it is for (the snapshot's drivers).
MACHINE_RULES: tuple[Callable[[Resolved, Plan], Iterable[Diagnostic]], ...] = (
    machine.drivers_present,
)


__all__ = [
    "INVARIANTS",
    "MACHINE_RULES",
    "PLAN_RULES",
    "RULES",
    "PlanInvariantError",
    "check",
    "check_machine",
    "check_plan",
]


def check(resolved: Resolved) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for rule in RULES:
        out.extend(rule(resolved))
    return out


def check_plan(plan: Plan) -> list[Diagnostic]:
    """The Plan rules' diagnostics; PlanInvariantError if the Plan breaks an invariant."""
    broken = [line for invariant in INVARIANTS for line in invariant(plan)]
    if broken:
        raise PlanInvariantError("; ".join(broken))
    out: list[Diagnostic] = []
    for rule in PLAN_RULES:
        out.extend(rule(plan))
    return out


def check_machine(resolved: Resolved, plan: Plan) -> list[Diagnostic]:
    """The warnings about what the machine makes of a sound Plan."""
    return [d for rule in MACHINE_RULES for d in rule(resolved, plan)]
