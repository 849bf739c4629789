"""Boot-time settings hostc derives itself: isolation mechanisms, extra arguments, the budget.

Spelling them as `key=value` is `hostc.plan.kernelargs`' job, shared by every
carrier of the command line.
"""

from __future__ import annotations

from collections.abc import Sequence

from hostc.cpuset import CpuSet
from hostc.knowledge import kernel as kernelfacts
from hostc.plan.model import CpuPartition, ExtraArg, Isolation, LeftOut, Placement, Reason
from hostc.provenance import SpecKey, SpecKeys, key
from hostc.resolve.requests import IsolationRequest, KernelRequest
from hostc.vocab import Mechanism

_WHY = {
    Mechanism.ISOLCPUS: "keep the scheduler's load balancing off the isolated CPUs",
    Mechanism.NOHZ_FULL: "no timer tick on an isolated CPU while it runs a single task "
    "(adaptive ticks do nothing with more runnable tasks, and make user/kernel "
    "transitions dearer: Documentation/timers/no_hz.rst)",
    Mechanism.RCU_NOCBS: "RCU callbacks run on housekeeping CPUs, not isolated ones",
    Mechanism.IRQAFFINITY: "default affinity of interrupts set up after boot: the "
    "housekeeping CPUs; it moves neither managed IRQs nor ones already placed (the IRQ "
    "owner, irqbalance or hostc-tuning, places those)",
}


def busy_poll_cpus(
    req: IsolationRequest, part: CpuPartition, pins: Sequence[Placement]
) -> tuple[CpuSet, SpecKeys]:
    """The isolated CPUs of the workloads that declare `busy_poll`, and their key paths."""
    cpus, paths = CpuSet(), list[SpecKey]()
    for i in req.busy_poll:
        if i < len(pins):
            cpus |= pins[i].cpus & part.isolated
            paths.append(key("workload", i, "busy_poll"))
    return cpus, SpecKeys(tuple(paths))


_FLAGS_WHY = {
    "managed_irq": "keep managed (driver-affine) IRQs off the isolated CPUs; load balancing "
    "stays on, so a multi-threaded server pinned to a range spreads over it",
    "domain": "also take the isolated CPUs out of scheduler load balancing (asked by the "
    "spec): each thread stays on the CPU it started on",
    "nohz": "also stop the tick where possible (as nohz_full does)",
}


def isolcpus_dropped(req: IsolationRequest, kernel: tuple[int, int] | None) -> bool:
    """Default flags on a kernel that predates managed_irq: leave isolcpus= out entirely
    (a bare isolcpus= would mean `domain`, and the unknown flag voids the parameter)."""
    return not req.flags_given and kernel is not None and kernel < kernelfacts.MANAGED_IRQ_SINCE


def isolation(
    req: IsolationRequest,
    part: CpuPartition,
    kernel: tuple[int, int] | None,
    pins: Sequence[Placement] = (),
) -> list[Isolation]:
    if not part.isolated:
        return []
    src = req.source
    out = []
    for m in req.mechanisms:
        if m is Mechanism.NOHZ_FULL and not req.given:
            cpus, paths = busy_poll_cpus(req, part, pins)
            if cpus:
                why = _WHY[m] + ": these workloads declare one busy-polling thread per CPU"
                out.append(Isolation(m, (), Reason(paths, why), cpus=cpus))
        elif m is Mechanism.ISOLCPUS:
            if isolcpus_dropped(req, kernel):
                continue
            flags = req.flags
            why = "; ".join(_FLAGS_WHY[f] for f in flags)
            out.append(Isolation(m, flags, Reason(req.flags_source, why)))
        else:
            out.append(Isolation(m, (), Reason(src, _WHY[m])))
    return out


def nohz_left_out(req: IsolationRequest, isolation: Sequence[Isolation]) -> list[LeftOut]:
    """Say why an isolating host gets no nohz_full (the default since issue 16)."""
    if not isolation or any(m.mechanism == "nohz_full" for m in isolation):
        return []
    src = req.source
    why = (
        "no workload declares busy_poll: adaptive ticks do nothing unless a CPU has "
        "exactly one runnable task, and make every user/kernel transition dearer "
        "(Documentation/timers/no_hz.rst); set busy_poll = true on a workload that runs "
        "one polling thread per CPU"
    )
    return [LeftOut("nohz_full", Reason(src, why))]


_SKEW_TICK_WHY = (
    "offset the periodic tick per CPU to cut timer-lock (xtime_lock, RCU) contention on "
    "large hosts; kernel-parameters.txt: 'increases power consumption, thus should only be "
    "enabled if running jitter sensitive (HPC/RT) workloads'"
)
_INIT_ON_ALLOC_WHY = {
    False: "pages and heap objects are not zeroed on allocation: large allocations get "
    "faster (NVIDIA's nvidia-base profile sets it), but stale data of a freed page can "
    "reach its next owner through an uninitialized-memory bug (a security trade-off)",
    True: "zero pages and heap objects on allocation, whatever the kernel's build default "
    "(CONFIG_INIT_ON_ALLOC_DEFAULT_ON)",
}


def opt_in_args(req: KernelRequest) -> list[ExtraArg]:
    """Trade-offs hostc offers but never defaults to: skew_tick, init_on_alloc."""
    out = []
    if req.skew_tick:
        out.append(ExtraArg("skew_tick", "1", Reason(key("kernel", "skew_tick"), _SKEW_TICK_WHY)))
    ioa = req.init_on_alloc
    if ioa is not None:
        why = _INIT_ON_ALLOC_WHY[ioa]
        out.append(
            ExtraArg("init_on_alloc", str(int(ioa)), Reason(key("kernel", "init_on_alloc"), why))
        )
    return out


def extra_args(req: KernelRequest) -> list[ExtraArg]:
    out = opt_in_args(req)
    for i, arg in enumerate(req.extra_args):
        key, sep, value = arg.partition("=")
        out.append(
            ExtraArg(
                key,
                value if sep else None,
                Reason(SpecKey(("kernel", "extra_args", i)), "given verbatim by the spec"),
            )
        )
    return out
