"""Which threads ran on the watched CPUs: a sampler over successive scans of /proc.

A scan reads every thread's `processor` (the CPU it last ran on) and its switch-in
count (/proc/PID/task/TID/schedstat, third field).  Between two scans, a thread whose
count grew ran that many times; the sampler books them to the CPU it shows at the later
scan.  What this cannot see, and says so:

- a thread that started and exited between two scans (a short-lived process);
- the CPU of each run: a thread that ran on a watched CPU and then moved before the next
  scan is booked to where it moved (and the reverse);
- a thread past the scan's limit (host.TASK_LIMIT) on a host with more threads.

Where the kernel keeps /proc/schedstat, its per-CPU count of switch-ins (every task but
idle) is the total the booked runs are compared with (`coverage`).  Without per-thread
schedstat, a thread whose CPU time grew counts once per interval (`by_switches` False).

Memory: two integers per thread between scans (~100 bytes each), and a name only for the
threads that ran on a watched CPU.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from hostc.cpuset import CpuSet
from hostc.measure.sources import TaskStat
from hostc.record import Record

#: (systemd unit, allowed CPUs) of a process, read when it is first booked.
Detail = Callable[[int], tuple[str | None, CpuSet | None]]


@attrs.frozen(repr=False, eq=False)
class TaskRun(Record):
    """A thread that ran on a watched CPU during the window."""

    cpu: int
    tid: int
    pid: int
    comm: str
    kthread: bool
    runs: int  # switch-ins booked to this CPU (intervals with CPU time, without schedstat)
    unit: str | None = None  # its systemd unit (service or scope), user threads only
    allowed: CpuSet | None = None  # its process's Cpus_allowed_list when first booked


@attrs.frozen(repr=False, eq=False)
class TaskRuns(Record):
    """What the sampler booked, and how far it saw."""

    runs: tuple[TaskRun, ...]
    scans: int
    partial: bool  # some scan stopped at its limit
    most: int  # the most threads one scan read
    exited: int  # threads seen by a scan and gone by the next
    by_switches: bool  # counted by switch-ins (schedstat), else by intervals with CPU time
    offloaded: frozenset[int]  # CPUs whose rcuo thread a scan saw (RCU callbacks offloaded)


class Sampler:
    """Fed one scan after another (`begin`, `feed` each thread, `end`)."""

    def __init__(self, watched: CpuSet, detail: Detail) -> None:
        self.watched = watched
        self.detail = detail
        self._last: dict[int, tuple[int, int]] = {}  # tid → (switch-ins or -1, CPU time)
        self._now: dict[int, tuple[int, int]] = {}
        self._booked: dict[tuple[int, int], int] = {}  # (cpu, tid) → runs
        self._who: dict[int, tuple[int, str, bool, str | None, CpuSet | None]] = {}
        self.scans = 0
        self.partial = False
        self.most = 0
        self.exited = 0
        self.by_switches = True
        self.offloaded: set[int] = set()

    def begin(self) -> None:
        self._now = {}

    def feed(self, task: TaskStat, pid: int, runs: int | None) -> None:
        if runs is None:
            self.by_switches = False
        self._now[task.tid] = (-1 if runs is None else runs, task.cputime)
        if not self.scans or task.cpu not in self.watched:
            return
        prev = self._last.get(task.tid)
        if prev is None:  # born during the window: every run of it is in the window
            ran = runs if runs is not None else int(task.cputime > 0)
        elif runs is not None and prev[0] >= 0:
            ran = runs - prev[0]
        else:
            ran = int(task.cputime > prev[1])
        if ran <= 0:
            return
        key = (task.cpu, task.tid)
        self._booked[key] = self._booked.get(key, 0) + ran
        if task.tid not in self._who:
            unit, allowed = (None, None) if task.kthread else self.detail(pid)
            self._who[task.tid] = (pid, task.comm, task.kthread, unit, allowed)

    def end(self, *, partial: bool, offloaded: frozenset[int]) -> None:
        if self.scans:
            self.exited += sum(1 for tid in self._last if tid not in self._now)
        self.most = max(self.most, len(self._now))
        self._last, self._now = self._now, {}
        self.scans += 1
        self.partial = self.partial or partial
        self.offloaded |= offloaded

    def result(self) -> TaskRuns:
        runs = []
        for (cpu, tid), n in sorted(self._booked.items()):
            pid, comm, kthread, unit, allowed = self._who[tid]
            runs.append(TaskRun(cpu, tid, pid, comm, kthread, n, unit, allowed))
        return TaskRuns(
            tuple(runs),
            self.scans,
            self.partial,
            self.most,
            self.exited,
            self.by_switches,
            frozenset(self.offloaded),
        )
