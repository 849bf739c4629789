"""Each count of a window, compared with what the Plan promises its CPU, and attributed.

Pure: `attribute(promises, window)` reads nothing.  Per isolated CPU every count becomes
a row judged by `hostc.measure.judges` (the rules are there); a housekeeping CPU's counts
are summed per kind, with no promise; NUMA balancing's counters are host-wide rows.
"""

from __future__ import annotations

from hostc.cpuset import CpuSet
from hostc.knowledge import noise
from hostc.knowledge.noise import NoiseKind
from hostc.measure.host import IrqPlace
from hostc.measure.judges import (
    Judged,
    judge_arch,
    judge_irq,
    judge_softirq,
    judge_task,
    judge_tick,
    kind_of,
    mech,
    nohz_off,
    sysctl,
)
from hostc.measure.model import CountRow, CpuReport, Measurement, Sampling, Verdict
from hostc.measure.promise import Promises
from hostc.measure.run import Window, delta


def _isolated(p: Promises, w: Window, cpu: int) -> list[CountRow]:
    """Every count on isolated `cpu` as a row: the primary sources first (threads, device
    IRQs), then what follows them (ticks, softirqs, IPIs)."""
    b, a = w.before, w.after
    rows: list[CountRow] = []
    irqs: dict[str, Judged] = {}
    table = a.interrupts.rows if a.interrupts is not None else ()
    counted = [(r, delta(b.interrupts, a.interrupts, r.key, cpu) or 0) for r in table]
    counted = [(r, n) for r, n in counted if n > 0]
    for r, n in counted:
        if kind_of(r.key, r.name, r.device) is NoiseKind.DEVICE:
            place = w.places.get(r.key, IrqPlace(None, None, None))
            irqs[r.key] = judge_irq(p, cpu, r.key, r.name, r.chip, place)
            rows.append(CountRow(cpu, NoiseKind.DEVICE, r.key, r.name or r.chip, n, *irqs[r.key]))
    for run in (t for t in w.tasks.runs if t.cpu == cpu):
        verdict, cause = judge_task(p, run, irqs, nohz_off(p, w, cpu))
        rows.append(CountRow(cpu, NoiseKind.TASK, str(run.tid), run.comm, run.runs, verdict, cause))
    for r, n in counted:
        kind = kind_of(r.key, r.name, r.device)
        if kind is NoiseKind.TICK:
            judged, allowed = judge_tick(p, w, cpu, n, rows)
            rows.append(CountRow(cpu, kind, r.key, r.name, n, *judged, allowed=allowed))
    for r, n in counted:
        kind = kind_of(r.key, r.name, r.device)
        if kind not in (NoiseKind.DEVICE, NoiseKind.TICK):
            rows.append(
                CountRow(cpu, kind, r.key, r.name, n, *judge_arch(p, kind, r.key, r.name, n, rows))
            )
    soft = a.softirqs.rows if a.softirqs is not None else ()
    for r in soft:
        n = delta(b.softirqs, a.softirqs, r.key, cpu) or 0
        if n > 0:
            verdict, cause = judge_softirq(p, w, cpu, r.key, n, rows)
            tick = next((t for t in rows if t.kind is NoiseKind.TICK), None)
            allowed = (
                tick.count + noise.RESIDUAL_TICK_SLACK if tick and verdict is Verdict.ALLOWED else 0
            )
            rows.append(CountRow(cpu, NoiseKind.SOFTIRQ, r.key, r.key, n, verdict, cause, allowed))
    return rows


_HK = mech("housekeeping", "a housekeeping CPU: the Plan puts the host's own work here")


def _housekeeping(w: Window, cpu: int) -> list[CountRow]:
    """A housekeeping CPU's counts, summed per kind (for comparison, no verdict)."""
    b, a = w.before, w.after
    sums: dict[NoiseKind, int] = {}
    for r in a.interrupts.rows if a.interrupts is not None else ():
        n = delta(b.interrupts, a.interrupts, r.key, cpu) or 0
        kind = kind_of(r.key, r.name, r.device)
        sums[kind] = sums.get(kind, 0) + n
    for r in a.softirqs.rows if a.softirqs is not None else ():
        sums[NoiseKind.SOFTIRQ] = sums.get(NoiseKind.SOFTIRQ, 0) + (
            delta(b.softirqs, a.softirqs, r.key, cpu) or 0
        )
    return [
        CountRow(cpu, k, "*", f"all {k} rows", n, Verdict.UNPROMISED, _HK)
        for k, n in sums.items()
        if n > 0
    ]


def _numa(p: Promises, w: Window) -> list[CountRow]:
    b, a = w.before.vmstat, w.after.vmstat
    if b is None or a is None:
        return []
    key = "kernel.numa_balancing"
    want, now = p.sysctls.get(key), w.numa_balancing
    rows = []
    for name, what in noise.NUMA_COUNTERS.items():
        n = a.get(name, 0) - b.get(name, 0)
        if n <= 0:
            continue
        if want == "0":
            why = f"{n} {name} ({what}) with {key} = {now or '?'} now"
            rows.append(
                CountRow(None, NoiseKind.NUMA, name, what, n, Verdict.EXCESS, sysctl(key, "0", why))
            )
        else:
            why = (
                f"{n} {name} ({what}): {key} = {now or '?'}; if the jitter correlates with "
                f"{name}, try {key} = 0 (one change, three repeats: hostc bench)"
            )
            rows.append(
                CountRow(
                    None,
                    NoiseKind.NUMA,
                    name,
                    what,
                    n,
                    Verdict.UNPROMISED,
                    mech("numa-balancing", why),
                )
            )
    return rows


def _switches(w: Window, cpu: int) -> int | None:
    b, a = w.before.switches, w.after.switches
    if b is None or a is None or cpu not in a or cpu not in b:
        return None
    return max(0, a[cpu] - b[cpu])


def attribute(p: Promises, w: Window) -> Measurement:
    """The window's counts per CPU of the Plan's sets, each attributed (module docstring)."""
    reports = []
    table = w.after.interrupts or w.after.softirqs
    here = set(table.cpus) if table is not None else set(p.online)
    for cpu in p.online:
        iso = cpu in p.isolated
        load = p.workload_of(cpu)
        promised = (
            tuple(
                m
                for m, cpus in (("nohz_full", p.nohz_full), ("rcu_nocbs", p.rcu_nocbs))
                if cpu in cpus
            )
            + (("isolcpus",) if iso and "isolcpus" in p.mechanisms else ())
            + (("irq-owner",) if iso and p.irq is not None else ())
        )
        rows = _isolated(p, w, cpu) if iso else _housekeeping(w, cpu)
        booked = sum(t.runs for t in w.tasks.runs if t.cpu == cpu)
        reports.append(
            CpuReport(
                cpu,
                "isolated" if iso else "housekeeping",
                load.name if load is not None else None,
                promised,
                tuple(rows),
                _switches(w, cpu),
                booked,
                cpu in here,
            )
        )
    t = w.tasks
    missing = tuple(dict.fromkeys(w.before.missing + w.after.missing))
    gone = CpuSet(c for c in p.online if c not in here)
    if gone:
        missing += (f"CPUs {gone} of the Plan have no counters here: is this the Plan's host?",)
    return Measurement(
        round(w.seconds, 3),
        tuple(reports),
        tuple(_numa(p, w)),
        missing,
        Sampling(t.scans, t.most, t.partial, t.exited, t.by_switches),
        w.osnoise,
    )
