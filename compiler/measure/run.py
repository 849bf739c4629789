"""The window: counters read at its start and end, threads sampled in between.

`window` is the only part of `hostc measure` that waits.  Its clock and its sleep are
arguments (the tests pass a fake pair and never sleep), and `end`, where given, is a
second copy of the host taken later (`--after DIR`): then nothing waits at all, and the
window's length is the difference of the two copies' /proc/uptime.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from hostc.cpuset import CpuSet
from hostc.measure.host import Counters, IrqPlace, ProcRoot, ThreadScan
from hostc.measure.limits import MAX_WINDOW as MAX_WINDOW
from hostc.measure.sources import PerCpuTable
from hostc.measure.tasks import Sampler, TaskRuns
from hostc.record import FrozenMap, Record

#: The longest window `hostc measure` takes (seconds): counts are for minutes, a
#: benchmark's run is for `hostc bench`.
#: The default window and the time between two scans of the threads.
DEFAULT_WINDOW = 10.0
PERIOD = 1.0
#: A scan may take this share of the time between scans at most: on a host whose scan is
#: slow, the scans spread out (fewer samples) instead of keeping a CPU busy.
SCAN_SHARE = 0.5

TRACERS = ("sys/kernel/tracing/available_tracers", "sys/kernel/debug/tracing/available_tracers")


@attrs.frozen(repr=False, eq=False)
class Window(Record):
    """Everything one window saw, before any judgement."""

    seconds: float
    before: Counters
    after: Counters
    tasks: TaskRuns
    places: FrozenMap[str, IrqPlace]  # IRQs that fired on a watched CPU, read at the end
    nohz_full: CpuSet | None  # /sys/devices/system/cpu/nohz_full (None: not visible)
    numa_balancing: str | None  # /proc/sys/kernel/numa_balancing at the end
    osnoise: str  # whether the kernel's osnoise tracer is there, and why hostc did not run it


def delta(before: PerCpuTable | None, after: PerCpuTable | None, key: str, cpu: int) -> int | None:
    """How much row `key` grew on `cpu` between two readings (None: not visible).  A row
    that appeared, or whose count went back (an IRQ freed and requested again), counts
    from zero."""
    if after is None or cpu not in after.cpus:
        return None
    row = after.row(key)
    if row is None or row.glob:
        return None
    now = row.counts[after.cpus.index(cpu)]
    old_row = before.row(key) if before is not None and cpu in before.cpus else None
    if old_row is None or old_row.glob or before is None:
        return now
    old = old_row.counts[before.cpus.index(cpu)]
    return now - old if now >= old else now


def _osnoise(end: ProcRoot) -> str:
    tracers = next((t for t in map(end.text, TRACERS) if t is not None), None)
    if tracers is None:
        return "tracefs not visible (needs root and a mounted tracefs): osnoise not looked for"
    if "osnoise" not in tracers.split():
        return "this kernel has no osnoise tracer (CONFIG_OSNOISE_TRACER off)"
    return (
        "the osnoise tracer is there and was not run: it runs a busy thread on every CPU it "
        "measures, displacing the workload; for per-source noise on an idle isolated CPU run "
        "`rtla osnoise top -c CPUS`"
    )


def _scan(root: ProcRoot, sampler: Sampler, skip: int | None) -> ThreadScan:
    sampler.begin()
    scan = root.scan(sampler.feed, skip)
    sampler.end(partial=scan.partial, offloaded=scan.offloaded)
    return scan


def window(
    start: ProcRoot,
    seconds: float,
    watched: CpuSet,
    *,
    end: ProcRoot | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    skip: int | None = None,
) -> Window:
    """Count for `seconds` on `start` (or between `start` and `end`, two copies).  `skip`:
    a process not to count (hostc's own, on a live host)."""
    sampler = Sampler(watched, start.task_detail)
    _scan(start, sampler, skip)
    before = start.counters()
    t0 = clock()
    if end is None:
        end = start
        gap = PERIOD
        while (left := seconds - (clock() - t0)) > 0:
            sleep(min(gap, left))
            if seconds - (clock() - t0) > gap / 2:  # room for another scan before the end
                scan = _scan(start, sampler, skip)
                gap = max(PERIOD, scan.seconds / SCAN_SHARE)
        after = start.counters()
        took = clock() - t0
    else:
        after = end.counters()
        took = seconds
    _scan(end, sampler, skip)
    if before.uptime is not None and after.uptime is not None and after.uptime > before.uptime:
        took = after.uptime - before.uptime
    return Window(
        took,
        before,
        after,
        sampler.result(),
        FrozenMap(_places(end, before, after, watched)),
        _nohz(end),
        (end.text("proc/sys/kernel/numa_balancing") or "").strip() or None,
        _osnoise(end),
    )


def _places(
    end: ProcRoot, before: Counters, after: Counters, watched: CpuSet
) -> dict[str, IrqPlace]:
    """Where each device IRQ that fired on a watched CPU may run (one read per such IRQ)."""
    table = after.interrupts
    if table is None:
        return {}
    fired = [
        r.key
        for r in table.rows
        if r.device and any((delta(before.interrupts, table, r.key, c) or 0) > 0 for c in watched)
    ]
    return {k: end.irq_place(k) for k in fired}


def _nohz(end: ProcRoot) -> CpuSet | None:
    text = end.text("sys/devices/system/cpu/nohz_full")
    if text is None:  # drivers/base/cpu.c has the file under CONFIG_NO_HZ_FULL only
        return CpuSet() if end.text("sys/devices/system/cpu/online") is not None else None
    if text.strip() in ("", "(null)"):  # the kernel prints (null) for an empty mask
        return CpuSet()
    return end.cpulist("sys/devices/system/cpu/nohz_full")
