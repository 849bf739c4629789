"""The slices' cgroup cpusets that keep services on the housekeeping CPUs where the
kernel resets a moved task's CPUs (before Linux 6.2: `hostc.knowledge.runtime`), for the
systemd target: system.slice's and user.slice's drop-ins, hostc's slice of the workloads,
and the PID 1 re-pin hostc-tuning runs (`Plan.slice_cpusets` decides all of them).

A root command in a workload's or another package's unit would run with that unit's
Environment=/EnvironmentFile=, so PID 1 is put back from hostc-tuning, never from there.
"""

from __future__ import annotations

from hostc.artifact import Action, Activation
from hostc.knowledge.runtime import KEEPS_REQUESTED_AFFINITY, SERVICE_SLICES, WORKLOAD_SLICE
from hostc.plan.model import Plan, Reason
from hostc.provenance import key
from hostc.targets._emitter import Emitter
from hostc.targets._render import Row, config, header
from hostc.targets.limits import manager_reread

WORKLOAD_SLICE_PATH = f"/etc/systemd/system/{WORKLOAD_SLICE}"


def slice_dropin(name: str) -> str:
    return f"/etc/systemd/system/{name}.d/90-hostc.conf"


_SINCE = ".".join(map(str, KEEPS_REQUESTED_AFFINITY))


def _kernel_clause(plan: Plan) -> str:
    """This host's kernel against Linux 6.2, as the reasons say it."""
    if plan.host.kernel_version is None:
        return f"this host's kernel is not known to be {_SINCE} or later"
    return f"kernel {plan.host.kernel} predates {_SINCE}"


def _reset_why(plan: Plan) -> str:
    """Why the services need their slices' cpusets on this host's kernel."""
    return (
        f"{_kernel_clause(plan)}, and before {_SINCE} a task that moves into a cgroup "
        "cpuset gets the cpuset's CPUs (kernel/cgroup/cpuset.c cpuset_attach; "
        f"da019032819a keeps its own mask from {_SINCE}), so once anything turns the cpuset "
        "controller on (a workload's or the runtime's AllowedCPUs=, a pod, a container) "
        "the manager's CPUAffinity= no longer reaches the services it starts"
    )


def slice_rows(plan: Plan) -> list[tuple[str, Row]]:
    """system.slice and user.slice on the housekeeping CPUs by their own cpuset, where
    the kernel resets a moved task's CPUs (`Plan.slice_cpusets`): each slice's name and
    its AllowedCPUs= row (its drop-in: `slice_dropin`)."""
    if not plan.slice_cpusets:
        return []
    p = plan.partition
    why = _reset_why(plan)
    return [
        (
            name,
            Row(
                Reason(p.housekeeping_reason.source, f"{held} on the housekeeping CPUs: {why}"),
                f"AllowedCPUs={p.housekeeping}",
            ),
        )
        for name, held in SERVICE_SLICES.items()
    ]


def workload_slice(plan: Plan) -> Row | None:
    """hostc's slice of the workloads (`WORKLOAD_SLICE`): every workload's CPUs as its
    cpuset, since system.slice, their default, holds only the housekeeping CPUs and a
    cgroup's cpuset is clipped to its parent's (None: no slices, or no workload)."""
    if not (plan.slice_cpusets and plan.workloads):
        return None
    cpus = plan.workloads[0].cpus
    for w in plan.workloads[1:]:
        cpus = cpus | w.cpus
    why = (
        "every workload's CPUs, the cpuset of the slice they run in: their own AllowedCPUs= "
        "is clipped to it (Documentation/admin-guide/cgroup-v2.rst, cpuset.cpus), and "
        "system.slice holds only the housekeeping CPUs here"
    )
    return Row(Reason(key("workload"), why), f"AllowedCPUs={cpus}")


def pid1_repin(plan: Plan) -> Row | None:
    """PID 1's housekeeping CPUs, which hostc-tuning puts back where the slices' cpusets
    are on (`Plan.slice_cpusets`): turning the controller on at the root moves every
    task, PID 1 (init.scope, in no slice) included, and a kernel before 6.2 gives it every
    CPU; systemd re-applies CPUAffinity= only at a manager reload, which hostc avoids (a
    reload can take running containers' GPUs away).  Run from hostc's own unit, whose
    environment is hostc's, never from a workload's or a foreign unit's."""
    if not plan.slice_cpusets:
        return None
    p = plan.partition
    why = (
        "PID 1 (init.scope, in no slice) back on the housekeeping CPUs: turning the cgroup "
        "cpuset controller on at the root (system.slice's cpuset, at boot, before this "
        f"script) gives every task there every CPU before Linux {_SINCE} (da019032819a), "
        f"{_kernel_clause(plan)}, and systemd re-applies CPUAffinity= to PID 1 only at a "
        "manager reload"
    )
    return Row(Reason(p.housekeeping_reason.source, why), str(p.housekeeping))


def emit_slices(plan: Plan, out: Emitter, tuning_unit: str) -> None:
    """The service slices' drop-ins and the workloads' slice (`slice_rows`,
    `workload_slice`).  The service slices take effect as the manager's CPUAffinity=
    does (they change with the housekeeping CPUs, which reboot anyway); the workloads'
    slice at a daemon-reload, before the restarts of the workloads that moved.
    `tuning_unit`: hostc-tuning.service, which puts PID 1 back."""
    host = header(plan)
    for name, row in slice_rows(plan):
        text = config(host, "slice-cpus.conf.j2", slice=name, row=row, unit=tuning_unit)
        out.file(slice_dropin(name), text, manager_reread(plan), Activation(Action.REBOOT))
    workloads = workload_slice(plan)
    if workloads is not None:
        units = " ".join(w.unit for w in plan.workloads)
        text = config(host, "workload.slice.j2", row=workloads, units=units)
        out.file(WORKLOAD_SLICE_PATH, text, Activation(Action.DAEMON_RELOAD))
