"""What the Plan promises each CPU, read from the Plan alone (as every reader of it does).

A Plan isolates CPUs with mechanisms (`isolcpus`, `nohz_full`, `rcu_nocbs`,
`irqaffinity`), keeps interrupts off them through an IRQ owner (hostc-tuning, irqbalance
with the isolated CPUs banned, or TuneD handing the ban to irqbalance), keeps services on
the housekeeping CPUs (PID 1's CPUAffinity, the slices' cpusets, TuneD's [systemd]), and
places each workload on its CPUs.  Each promise here carries the setting `hostc measure`
names when a count breaks it, the spec key that asked for it, and the fix.
"""

from __future__ import annotations

import attrs

from hostc.cpuset import CpuSet
from hostc.plan.model import IrqOwner, Plan, RuntimeOwner
from hostc.record import FrozenMap, Record
from hostc.vocab import CpuMaskName, IsolcpusFlag, Mechanism


@attrs.frozen(repr=False, eq=False)
class PromisedSetting(Record):
    """A Plan setting a count can be attributed to: its stable id (JSON), what it does,
    the spec key (or preset) that asked for it, and how to put it back in effect."""

    id: str
    what: str
    source: str
    fix: str


@attrs.frozen(repr=False, eq=False)
class PromisedWorkload(Record):
    name: str
    unit: str
    cpus: CpuSet
    setting: PromisedSetting


@attrs.frozen(repr=False, eq=False)
class Promises(Record):
    online: CpuSet
    housekeeping: CpuSet
    isolated: CpuSet
    nohz_full: CpuSet  # CPUs the Plan makes adaptive-tick
    rcu_nocbs: CpuSet  # CPUs whose RCU callbacks the Plan offloads
    managed_irq: bool  # isolcpus=managed_irq
    irq: PromisedSetting | None  # the IRQ owner (None: no isolated CPUs)
    services: PromisedSetting | None  # services kept on the housekeeping CPUs
    workqueue: PromisedSetting | None  # the unbound workqueues' cpumask
    workloads: tuple[PromisedWorkload, ...]
    mechanisms: FrozenMap[str, PromisedSetting]  # nohz_full, rcu_nocbs, isolcpus → its setting
    sysctls: FrozenMap[str, str]  # the Plan's sysctl values
    left_out: FrozenMap[str, tuple[str, str]]  # left out on purpose → (source, why)

    def workload_of(self, cpu: int) -> PromisedWorkload | None:
        return next((w for w in self.workloads if cpu in w.cpus), None)

    def workload_unit(self, unit: str | None) -> PromisedWorkload | None:
        return next((w for w in self.workloads if unit is not None and w.unit == unit), None)


def _irq(plan: Plan) -> PromisedSetting | None:
    irq = plan.runtime.irq
    if irq is None:
        return None
    hk, banned = plan.partition.housekeeping, irq.banned
    src = str(irq.reason.source)
    if irq.owner is IrqOwner.HOSTC:
        return PromisedSetting(
            "irq-owner",
            f"IRQ ownership: hostc-tuning.service places every movable IRQ on {hk}",
            src,
            "`systemctl restart hostc-tuning.service` puts them back; find what moved it "
            "(irqbalance running? a driver's own affinity hint? a manual write?)",
        )
    if plan.runtime.owner is RuntimeOwner.TUNED:
        return PromisedSetting(
            "irq-owner",
            f"IRQ ownership: irqbalance with CPUs {banned} banned by TuneD's [irqbalance] "
            "banned_cpus, and TuneD's [scheduler] isolated_cores",
            src,
            "check `tuned-adm active` (profile hostc) and `systemctl is-active irqbalance`; "
            "`tuned-adm profile hostc` reapplies it",
        )
    return PromisedSetting(
        "irq-owner",
        f"IRQ ownership: irqbalance with CPUs {banned} banned (hostc's environment drop-in)",
        src,
        "check `systemctl is-active irqbalance` and its environment "
        "(IRQBALANCE_BANNED_CPULIST / IRQBALANCE_BANNED_CPUS); restart irqbalance",
    )


def _mechanisms(plan: Plan) -> dict[str, PromisedSetting]:
    out = {}
    fixes = {
        Mechanism.NOHZ_FULL: "the running kernel lacks it: check /proc/cmdline and "
        "/sys/devices/system/cpu/nohz_full; reboot into the Plan's command line",
        Mechanism.RCU_NOCBS: "no rcuo thread offloads this CPU: check /proc/cmdline "
        "(rcu_nocbs=) and reboot into the Plan's command line",
        Mechanism.ISOLCPUS: "isolcpus=managed_irq is not in effect for this managed IRQ: "
        "check /proc/cmdline; a managed IRQ whose mask holds no housekeeping CPU stays",
    }
    for iso in plan.isolation:
        if iso.mechanism in fixes:
            what = f"{iso.mechanism}: {iso.reason.why}"
            out[str(iso.mechanism)] = PromisedSetting(
                str(iso.mechanism), what, str(iso.reason.source), fixes[iso.mechanism]
            )
    return out


def _services(plan: Plan) -> PromisedSetting | None:
    part = plan.partition
    if not part.isolated:
        return None
    how = "PID 1's CPUAffinity"
    if plan.slice_cpusets:
        how += ", the slices' cpusets"
    if plan.runtime.owner is RuntimeOwner.TUNED:
        how += "; TuneD's [systemd] cpu_affinity"
    return PromisedSetting(
        "service-cpus",
        f"services on the housekeeping CPUs {part.housekeeping} ({how})",
        str(part.housekeeping_reason.source),
        "a process outside every workload ran here: its affinity was set by itself or "
        "its starter (taskset, sched_setaffinity), or it was started outside systemd; "
        "move it to the housekeeping CPUs, or make it a workload of the spec",
    )


def _workqueue(plan: Plan) -> PromisedSetting | None:
    wq = next((m for m in plan.runtime.cpumasks if m.name is CpuMaskName.WORKQUEUE), None)
    if wq is None:
        return None
    return PromisedSetting(
        "workqueue-cpumask",
        f"unbound workqueues on {wq.cpus} ({wq.path})",
        str(wq.reason.source),
        f"write {wq.cpus.mask()} to {wq.path} (hostc-tuning does at boot)",
    )


def _workloads(plan: Plan) -> tuple[PromisedWorkload, ...]:
    return tuple(
        PromisedWorkload(
            w.name,
            w.unit,
            w.cpus,
            PromisedSetting(
                "workload-cpus",
                f"workload {w.name} ({w.unit}) on CPUs {w.cpus}",
                str(w.reason.source),
                f"restart {w.unit} so that its drop-in's CPUAffinity= applies",
            ),
        )
        for w in plan.workloads
    )


def _cpus_of(plan: Plan, m: Mechanism) -> CpuSet:
    found = plan.isolation_by(m)
    if found is None:
        return CpuSet()
    return found.cpus if found.cpus is not None else plan.partition.isolated


def promises(plan: Plan) -> Promises:
    """The Plan's promises per CPU (module docstring)."""
    part = plan.partition
    isolcpus = plan.isolation_by(Mechanism.ISOLCPUS)
    return Promises(
        online=part.online,
        housekeeping=part.housekeeping,
        isolated=part.isolated,
        nohz_full=_cpus_of(plan, Mechanism.NOHZ_FULL),
        rcu_nocbs=_cpus_of(plan, Mechanism.RCU_NOCBS),
        managed_irq=isolcpus is not None and IsolcpusFlag.MANAGED_IRQ in isolcpus.flags,
        irq=_irq(plan),
        services=_services(plan),
        workqueue=_workqueue(plan),
        workloads=_workloads(plan),
        mechanisms=FrozenMap(_mechanisms(plan)),
        sysctls=FrozenMap((s.key, s.value) for s in plan.sysctls),
        left_out=FrozenMap(
            (x.setting, (str(x.reason.source), x.reason.why)) for x in plan.left_out
        ),
    )
