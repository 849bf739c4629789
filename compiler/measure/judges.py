"""The judge of each kind of count on an isolated CPU: what the Plan promised, and the
one setting or kernel mechanism the count is attributed to (pure functions).

`attribute` calls them for one CPU: the primary sources first, then what follows them:

- a thread that ran there: the workload's own (`own`), a workload outside its CPUs or a
  service outside every workload (`excess`: workload or service placement), an unbound
  workqueue worker (`excess`: the workqueue cpumask), a per-CPU or per-node kernel thread
  (`kernel`);
- a device IRQ: a managed one (a queue's vector the kernel binds: `kernel`, or `excess` of
  isolcpus=managed_irq where its mask holds a housekeeping CPU), any other (`excess`: the
  IRQ owner);
- the tick on a nohz_full CPU: up to the residual tick's allowance `allowed`; past it, the
  cause of the threads or IRQs that kept it going (the tick runs while more than one
  task is runnable), else the timers queued on the CPU (`kernel`); every tick where the
  running kernel's nohz_full lacks the CPU (`excess`: nohz_full);
- the tick's softirqs (TIMER, SCHED, RCU) follow the tick; RCU where the Plan offloads
  callbacks and no rcuo thread offloads this CPU is `excess` of rcu_nocbs; the device
  softirqs follow the device IRQs; rescheduling and irq_work IPIs follow a stray thread or
  IRQ where there is one; function calls, TLB shootdowns and other architecture rows are
  the kernel's (`kernel`), NMIs the watchdog's (`left-out` or `excess` of its sysctl).
"""

from __future__ import annotations

import math

import attrs

from hostc.knowledge import noise
from hostc.knowledge.noise import NoiseKind
from hostc.measure.host import IrqPlace
from hostc.measure.model import (
    Cause,
    CauseKind,
    CountRow,
    Verdict,
)
from hostc.measure.promise import PromisedSetting, Promises
from hostc.measure.run import Window
from hostc.measure.tasks import TaskRun

Judged = tuple[Verdict, Cause]


def mech(id: str, why: str) -> Cause:
    return Cause(CauseKind.MECHANISM, id, why)


def setting(s: PromisedSetting, why: str) -> Cause:
    return Cause(CauseKind.SETTING, s.id, why, s.what, s.source, s.fix)


def sysctl(key: str, value: str, why: str) -> Cause:
    what = f"{key} = {value} (the Plan's sysctl)"
    fix = f"sysctl -w {key}={value} (hostc's sysctl.d file sets it at boot)"
    return Cause(CauseKind.SETTING, f"sysctl:{key}", why, what, f"sysctl.{key}", fix)


def kind_of(key: str, name: str, device: bool) -> NoiseKind:
    """A /proc/interrupts row's kind: by action name for a device row (arm64's tick is
    one), by its label for an architecture row (noise.ARCH_LABELS)."""
    if device:
        return NoiseKind.TICK if name in noise.TICK_ACTIONS else NoiseKind.DEVICE
    return noise.ARCH_LABELS.get(name.lower(), NoiseKind.ARCH)


# -- threads -------------------------------------------------------------------------


def _per_cpu(comm: str, cpu: int) -> str | None:
    """What a per-CPU kernel thread bound to `cpu` does (None: not one)."""
    for prefix, what in noise.PER_CPU_KTHREADS.items():
        rest = comm.removeprefix(prefix)
        if rest != comm and (rest == str(cpu) or rest.startswith(f"{cpu}:")):
            return what
    return None


def nohz_off(p: Promises, w: Window, cpu: int) -> bool:
    """The Plan makes `cpu` adaptive-tick and the running kernel shows it is not."""
    return cpu in p.nohz_full and w.nohz_full is not None and cpu not in w.nohz_full


def judge_task(p: Promises, run: TaskRun, irqs: dict[str, Judged], nohz_lost: bool) -> Judged:
    c, who = run.cpu, f"{run.comm} (thread {run.tid})"
    if run.kthread:
        what = _per_cpu(run.comm, c)
        if what is not None:
            return Verdict.KERNEL, mech("per-cpu-kthread", f"{who}, bound to CPU {c}: {what}")
        if run.comm.startswith("irq/"):
            irq = run.comm[4:].partition("-")[0]
            if irq in irqs:
                verdict, cause = irqs[irq]
                return verdict, cause
            return Verdict.KERNEL, mech("irq-thread", f"{who}: threaded handler of IRQ {irq}")
        if run.comm.startswith("kworker/u") and p.workqueue is not None:
            return Verdict.EXCESS, setting(p.workqueue, f"{who}, an unbound workqueue worker")
        node = next((w for k, w in noise.NODE_KTHREADS.items() if run.comm.startswith(k)), None)
        if node is not None:
            return Verdict.KERNEL, mech(
                "node-kthread", f"{who}: per-node kernel thread, on its node's CPUs: {node}"
            )
        if nohz_lost:
            why = (
                f"{who}, an unbound kernel thread: nohz_full= keeps them on the housekeeping "
                f"CPUs, and the running kernel does not make CPU {c} adaptive-tick"
            )
            return Verdict.EXCESS, setting(p.mechanisms["nohz_full"], why)
        return Verdict.KERNEL, mech(
            "kthread",
            f"{who}: a kernel thread with an affinity of its own (not the housekeeping CPUs)",
        )
    unit = f" of {run.unit}" if run.unit else " (outside any systemd unit)"
    own = p.workload_unit(run.unit)
    if own is not None:
        if c in own.cpus:
            return Verdict.OWN, setting(own.setting, f"{who}: the workload's own thread")
        return Verdict.EXCESS, setting(own.setting, f"{who}{unit} ran outside its CPUs")
    if p.services is None:
        return Verdict.UNPROMISED, mech("no-isolation", f"{who}{unit}")
    allowed = f", its affinity {run.allowed}" if run.allowed is not None else ""
    return Verdict.EXCESS, setting(
        p.services, f"{who}{unit}, no workload of this CPU, ran {run.runs} times{allowed}"
    )


# -- device interrupts ---------------------------------------------------------------


def judge_irq(p: Promises, cpu: int, key: str, name: str, chip: str, place: IrqPlace) -> Judged:
    label = f"IRQ {key} {name or chip}".rstrip()
    mask = place.allowed
    inferred = place.managed is None
    managed = (
        place.managed
        if place.managed is not None
        else "MSI" in chip.upper() and mask is not None and mask <= p.isolated
    )
    if managed:
        how = " (inferred from its MSI chip and mask: debugfs not readable)" if inferred else ""
        if mask is not None and not mask <= p.isolated and p.managed_irq:
            iso = p.mechanisms.get("isolcpus")
            if iso is not None:
                return Verdict.EXCESS, setting(iso, f"{label}, managed, mask {mask}{how}")
        return Verdict.KERNEL, mech(
            "managed-irq",
            f"{label} is a managed interrupt{how} with mask {mask}: a queue vector the kernel "
            f"binds to its CPUs; it fires for I/O issued on CPU {cpu} itself",
        )
    if p.irq is None:
        return Verdict.UNPROMISED, mech("no-isolation", label)
    where = f"affinity {mask}" if mask is not None else "affinity not visible"
    if place.effective is not None:
        where += f", effective {place.effective}"
    if mask is not None and cpu not in mask:
        where += " (moved off this CPU during the window)"
    if inferred and "MSI" in chip.upper():
        where += " (debugfs not readable: were it managed, isolcpus=managed_irq's)"
    return Verdict.EXCESS, setting(p.irq, f"{label} on isolated CPU {cpu}, {where}")


# -- the CPU's rows --------------------------------------------------------------------


def _first_excess(rows: list[CountRow], kinds: tuple[NoiseKind, ...]) -> CountRow | None:
    """The excess row that most plausibly caused a secondary count: of the first kind in
    `kinds` that has one, the largest count."""
    for kind in kinds:
        found = [r for r in rows if r.kind is kind and r.verdict is Verdict.EXCESS]
        if found:
            return max(found, key=lambda r: r.count)
    return None


def _follow(primary: CountRow, what: str) -> Judged:
    """The verdict and setting of `primary`, for a count that follows from it."""
    why = f"{what}, with {primary.kind} {primary.key} {primary.name} here"
    return primary.verdict, attrs.evolve(primary.cause, why=why)


def judge_tick(
    p: Promises, w: Window, cpu: int, count: int, rows: list[CountRow]
) -> tuple[Judged, int]:
    """(verdict, cause) of `count` ticks on `cpu`, and the ticks the mechanism allows."""
    if cpu not in p.nohz_full:
        why = f"the Plan does not make CPU {cpu} adaptive-tick (nohz_full)"
        return (Verdict.UNPROMISED, mech("periodic-tick", why)), 0
    nohz = p.mechanisms["nohz_full"]
    if nohz_off(p, w, cpu):
        why = f"{count} ticks: the running kernel's nohz_full is {w.nohz_full or 'empty'}"
        return (Verdict.EXCESS, setting(nohz, why)), 0
    allowed = math.ceil(w.seconds) * noise.RESIDUAL_TICK_HZ + noise.RESIDUAL_TICK_SLACK
    if count <= allowed:
        why = (
            f"{count} ticks within {allowed}: the residual tick of an adaptive-tick CPU "
            "(about 1 per second, Documentation/timers/no_hz.rst)"
        )
        return (Verdict.ALLOWED, mech("residual-tick", why)), allowed
    stray = _first_excess(rows, (NoiseKind.TASK, NoiseKind.DEVICE))
    if stray is not None:
        more = f"{count - allowed} ticks past the residual {allowed}"
        return _follow(stray, more + " (the tick runs while more than one task is runnable)"), (
            allowed
        )
    busy = [r for r in rows if r.kind is NoiseKind.TASK]
    why = f"{count - allowed} ticks past the residual {allowed} while " + (
        f"{len(busy)} threads took turns here (the tick runs while more than one is "
        "runnable: no_hz.rst)"
        if len(busy) > 1
        else "timers were queued on this CPU (a timer, a POSIX CPU timer or a perf event "
        "keeps the tick: no_hz.rst; counts cannot name which, tracing timer:* can)"
    )
    return (Verdict.KERNEL, mech("tick-kept", why)), allowed


def judge_softirq(
    p: Promises, w: Window, cpu: int, name: str, count: int, rows: list[CountRow]
) -> Judged:
    if name == "RCU" and cpu in p.rcu_nocbs and w.tasks.most and cpu not in w.tasks.offloaded:
        why = f"{count} RCU softirqs and no rcuo thread offloads CPU {cpu}"
        return Verdict.EXCESS, setting(p.mechanisms["rcu_nocbs"], why)
    if name in noise.TICK_SOFTIRQS:
        tick = next((r for r in rows if r.kind is NoiseKind.TICK), None)
        if tick is not None and count <= tick.count + noise.RESIDUAL_TICK_SLACK:
            why = f"{count} {name} softirqs raised by the tick: {tick.cause.why}"
            return tick.verdict, attrs.evolve(tick.cause, why=why)
        why = f"{name}: {noise.SOFTIRQS[name]}, {count} times (more than this CPU's ticks)"
        return Verdict.KERNEL, mech("softirq", why)
    if name in noise.DEVICE_SOFTIRQS:
        stray = _first_excess(rows, (NoiseKind.DEVICE,))
        if stray is not None:
            return _follow(stray, f"{name} softirqs")
        why = f"{name}: {noise.SOFTIRQS[name]}, for this CPU's own interrupts and I/O"
        return Verdict.KERNEL, mech("own-io", why)
    return Verdict.KERNEL, mech("softirq", f"{name}: {noise.SOFTIRQS.get(name, 'a softirq')}")


_IPI = {
    NoiseKind.RESCHED: "rescheduling IPIs: wake-ups of tasks on this CPU (its workload's threads, "
    "its kernel threads)",
    NoiseKind.CALL: "function-call IPIs: another CPU ran a function here (membarrier, LRU drains, "
    "perf, …)",
    NoiseKind.TLB: "TLB shootdowns: memory unmapped from an address space this CPU runs (the "
    "workload's own munmap/mprotect, kernel vfree); no_hz.rst: avoidable only by the workload",
    NoiseKind.IRQ_WORK: "irq_work: kernel work raised from hard-irq or NMI context "
    "(nohz_full kicks, perf, printk)",
}


def judge_arch(
    p: Promises, kind: NoiseKind, key: str, name: str, count: int, rows: list[CountRow]
) -> Judged:
    if kind in (NoiseKind.RESCHED, NoiseKind.IRQ_WORK):
        stray = _first_excess(rows, (NoiseKind.TASK, NoiseKind.DEVICE))
        if stray is not None:
            return _follow(stray, f"{count} {name}")
    if kind in _IPI:
        return Verdict.KERNEL, mech(str(kind), f"{count} {_IPI[kind]}")
    if kind is NoiseKind.NMI:
        wd = "kernel.nmi_watchdog"
        if wd in p.left_out:
            source, reason = p.left_out[wd]
            why = f"{count} NMIs: {wd} is left out on purpose"
            fix = f"if these NMIs matter, set it in the spec: [sysctl] {wd} = 0"
            what = f"{wd} left out: {reason}"
            return Verdict.LEFT_OUT, Cause(
                CauseKind.SETTING, f"left-out:{wd}", why, what, source, fix
            )
        if p.sysctls.get(wd) == "0":
            why = f"{count} NMIs: {wd} = 0 stops the hard-lockup detector's (perf raises NMIs too)"
            return Verdict.EXCESS, sysctl(wd, "0", why)
        return Verdict.KERNEL, mech("nmi", f"{count} NMIs (hard-lockup watchdog, perf)")
    return Verdict.KERNEL, mech("arch-interrupt", f"{key} {name}: an architecture interrupt")
