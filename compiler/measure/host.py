"""Reading a host's counters under a root: the live `/`, or a copy (`--root DIR` in tests,
two copies taken a window apart with `--after DIR`).

Fixed files are read through the one host-tree reader (`HostTree`: links resolved inside
the root, each read bounded), a fresh one per snapshot: it keeps what it read, and a
counter read twice must be read twice.  Threads are listed with `os.scandir` under the
root's /proc (their files are read without following a link), at most TASK_LIMIT per
scan; what a scan could not read is counted, never raised.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from hostc.audit.host import READ_LIMIT
from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import HostcError
from hostc.knowledge import noise
from hostc.measure import sources
from hostc.measure.sources import PerCpuTable, TaskStat
from hostc.record import FrozenMap, Record
from hostc.topology.importers.chroot import HostTree

#: /proc/interrupts grows with CPUs x IRQs (512 CPUs x 3000 lines is ~17 MB).
INTERRUPTS_LIMIT = 48 << 20
#: Threads one scan reads at most: past it the scan is partial (and says so).  About
#: 3 small files each, ~100 bytes kept per thread between scans.
TASK_LIMIT = 200_000
#: A thread's small files (stat, schedstat, cgroup, status) are never larger than this.
SMALL = 64 << 10
_RCUO = re.compile(noise.RCU_OFFLOAD_THREADS)


@attrs.frozen(repr=False, eq=False)
class Counters(Record):
    """One reading of the counter files; None where a file is not visible here."""

    interrupts: PerCpuTable | None
    softirqs: PerCpuTable | None
    vmstat: FrozenMap[str, int] | None
    switches: FrozenMap[int, int] | None  # /proc/schedstat: CPU → switch-ins
    uptime: float | None
    missing: tuple[str, ...] = ()  # the files not visible, each with why


@attrs.frozen(repr=False, eq=False)
class IrqPlace(Record):
    """Where one IRQ may and does run (read at the window's end)."""

    allowed: CpuSet | None  # smp_affinity_list
    effective: CpuSet | None  # effective_affinity_list (Linux >= 4.15 on x86)
    managed: bool | None  # debugfs says IRQD_AFFINITY_MANAGED; None: debugfs not readable


#: What a scan hands each thread to: its stat, its process and its switch-ins (None:
#: the kernel has no per-thread schedstat).  The scan keeps nothing itself.
Feed = Callable[[TaskStat, int, int | None], None]


@attrs.frozen(repr=False, eq=False)
class ThreadScan(Record):
    """What one pass over the threads saw, besides the threads it fed."""

    count: int  # threads fed
    partial: bool  # stopped at TASK_LIMIT
    offloaded: frozenset[int]  # CPUs with an rcuo thread (RCU callbacks offloaded)
    seconds: float  # how long the scan took


def _cpus(text: str | None) -> CpuSet | None:
    if text is None:
        return None
    try:
        return CpuSet.parse(text.strip())
    except (CpuListError, ValueError):
        return None


class ProcRoot:
    """The counters and threads under one root (`/` or a copy of one)."""

    def __init__(self, root: Path, *, live: bool) -> None:
        self.root = root
        self.live = live
        self._tree = HostTree(root)

    def fresh(self) -> None:
        """Forget what was read: the next read of a counter reads it again."""
        self._tree = HostTree(self.root)

    def text(self, rel: str, limit: int = READ_LIMIT) -> str | None:
        """A file's text; None when absent or unreadable (not visible here)."""
        try:
            data = self._tree.read(rel, limit=limit, what=f"/{rel.strip('/')}")
        except (HostcError, OSError):
            return None
        return None if data is None else data.decode("utf-8", "replace")

    def counters(self) -> Counters:
        """One reading of every counter file (a fresh read each call).  A file that is
        there but not in its format is bad input (HostcError naming it)."""
        self.fresh()
        missing: list[str] = []

        def get(rel: str, limit: int = READ_LIMIT) -> str | None:
            text = self.text(rel, limit)
            if text is None:
                missing.append(f"/{rel}: not visible here")
            return text

        irq = get("proc/interrupts", INTERRUPTS_LIMIT)
        soft = get("proc/softirqs")
        vm = get("proc/vmstat")
        sched = self.text("proc/schedstat")
        if sched is None:
            missing.append("/proc/schedstat: not visible (a kernel without CONFIG_SCHEDSTATS)")
        up = get("proc/uptime")
        where = str(self.root / "proc")
        switches = sources.parse_schedstat(sched, f"{where}/schedstat") if sched else None
        if sched and switches is None:
            missing.append("/proc/schedstat: a version hostc does not read")
        return Counters(
            sources.parse_interrupts(irq, f"{where}/interrupts") if irq else None,
            sources.parse_softirqs(soft, f"{where}/softirqs") if soft else None,
            sources.parse_vmstat(vm, f"{where}/vmstat") if vm else None,
            switches,
            sources.parse_uptime(up, f"{where}/uptime") if up else None,
            tuple(missing),
        )

    def irq_place(self, irq: str) -> IrqPlace:
        allowed = _cpus(self.text(f"proc/irq/{irq}/smp_affinity_list"))
        effective = _cpus(self.text(f"proc/irq/{irq}/effective_affinity_list"))
        debug = self.text(f"sys/kernel/debug/irq/irqs/{irq}")
        managed = None if debug is None else "AFFINITY_MANAGED" in debug
        return IrqPlace(allowed, effective, managed)

    def cpulist(self, rel: str) -> CpuSet | None:
        return _cpus(self.text(rel))

    def task_detail(self, pid: int) -> tuple[str | None, CpuSet | None]:
        """(systemd unit, Cpus_allowed_list) of a process, where still readable."""
        proc = self._proc()
        cgroup = self._small(proc / str(pid) / "cgroup") if proc else None
        status = self._small(proc / str(pid) / "status") if proc else None
        unit = sources.parse_cgroup_unit(cgroup) if cgroup else None
        allowed = _cpus(sources.status_field(status, "Cpus_allowed_list")) if status else None
        return unit, allowed

    def _proc(self) -> Path | None:
        """The root's /proc, resolved inside the root (a copy's link to the live /proc
        reads the copy's own, as every read of it does)."""
        try:
            return self._tree.path("proc")
        except OSError:
            return None

    @staticmethod
    def _small(path: Path) -> str | None:
        """A thread's small file, read afresh, never through a link."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            return os.read(fd, SMALL).decode("utf-8", "replace")
        except OSError:
            return None
        finally:
            os.close(fd)

    @staticmethod
    def _numbered(path: Path) -> Iterator[str]:
        """The numbered subfolders of `path` (never a link), itself no link."""
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return
            with os.scandir(path) as entries:
                for e in entries:
                    if e.name.isdigit() and e.is_dir(follow_symlinks=False):
                        yield e.name
        except OSError:
            return

    def scan(self, feed: Feed, skip: int | None = None) -> ThreadScan:
        """Every thread's stat (and switch-ins, where /proc/PID/task/TID/schedstat exists)
        handed to `feed`, at most TASK_LIMIT; `skip` a process (hostc's own)."""
        start = time.monotonic()
        count = 0
        offloaded: set[int] = set()
        partial = False
        proc = self._proc()
        if proc is None:
            return ThreadScan(0, False, frozenset(), 0.0)
        for pid in self._numbered(proc):
            if skip is not None and pid == str(skip):
                continue
            for tid in self._numbered(proc / pid / "task"):
                if count >= TASK_LIMIT:
                    partial = True
                    break
                where = proc / pid / "task" / tid
                text = self._small(where / "stat")
                task = sources.parse_task_stat(text) if text else None
                if task is None:
                    continue  # exited while read
                sched = self._small(where / "schedstat")
                runs = sources.parse_task_schedstat(sched) if sched else None
                feed(task, int(pid), runs)
                count += 1
                m = _RCUO.fullmatch(task.comm) if task.kthread else None
                if m:
                    offloaded.add(int(m.group(1)))
            if partial:
                break
        return ThreadScan(count, partial, frozenset(offloaded), time.monotonic() - start)
