"""The /proc files `hostc measure` counts from, parsed: pure functions of their text.

Each parser takes the file's text and the name to blame, and returns a frozen value or
raises one HostcError naming the file (a file that is not what its name says is bad
input, never a traceback).  Formats, with the kernel code that prints them:

- /proc/interrupts (kernel/irq/proc.c show_interrupts, arch_show_interrupts): a header
  of `CPUn` for each *online* CPU, then one row per line: `KEY:`, one count per CPU,
  then for a numbered (device) row the chip, the hardware IRQ and its trigger, and the
  action names (`name1, name2`, which may hold spaces: `PCIe bwctrl`); for an
  architecture row its label.  A few x86 rows (`ERR:`, `MIS:`) hold one global count.
- /proc/softirqs (fs/proc/softirqs.c): the same header, then `NAME:` and one count per CPU.
- /proc/vmstat: `name value` lines.  /proc/uptime: seconds since boot, idle seconds.
- /proc/schedstat (kernel/sched/stats.c): `version N`, `timestamp`, then `cpuN …` lines
  (and `domainN` lines, skipped).
- /proc/PID/task/TID/stat (proc(5), fs/proc/array.c do_task_stat): `pid (comm) state …`;
  comm may hold spaces and parentheses, so fields are counted after the *last* `)`.
"""

from __future__ import annotations

import re

import attrs

from hostc.diagnostics import HostcError, file_error
from hostc.knowledge import noise
from hostc.record import FrozenMap, Record

#: A trigger word after the hardware IRQ number: `2-edge`, `Level`, `IO-APIC-edge` (2.6).
_TRIGGER = re.compile(r"(?i)^(?:.*-)?(?:edge|level|fasteoi|simple|percpu|percpu_devid)$")
_CPU = re.compile(r"CPU(\d+)")


def _bad(file: str, why: str, line: int | None = None) -> HostcError:
    return HostcError([file_error(file, why, line=line)])


@attrs.frozen(repr=False, eq=False)
class IrqRow(Record):
    """One row of /proc/interrupts."""

    key: str  # "24", "LOC", "IPI0"
    counts: tuple[int, ...]  # one per CPU of the header, in its order
    name: str  # device rows: the action names; architecture rows: the label (or the key)
    chip: str = ""  # device rows: the chip and hardware IRQ as printed ("IO-APIC 4-edge")
    glob: bool = False  # one global count (x86 ERR, MIS): no per-CPU counts

    @property
    def device(self) -> bool:
        return self.key.isdigit()


@attrs.frozen(repr=False, eq=False)
class PerCpuTable(Record):
    """A per-CPU counter file (/proc/interrupts, /proc/softirqs): the CPU of each column,
    and its rows."""

    cpus: tuple[int, ...]
    rows: tuple[IrqRow, ...]

    def row(self, key: str) -> IrqRow | None:
        return next((r for r in self.rows if r.key == key), None)


def _header(lines: list[str], file: str) -> tuple[int, tuple[int, ...]]:
    """The index of the header line and the CPU of each column."""
    for i, line in enumerate(lines):
        if line.strip():
            words = line.split()
            found = [_CPU.fullmatch(w) for w in words]
            if not all(found):
                raise _bad(file, "has no header of CPU columns (CPU0 CPU1 …)", i + 1)
            return i, tuple(int(m.group(1)) for m in found if m)
    raise _bad(file, "is empty")


def _counts(words: list[str], n: int) -> tuple[list[int], int]:
    """The leading integers (at most `n`) and how many words they took."""
    out: list[int] = []
    for w in words[:n]:
        if not w.isdigit():
            break
        out.append(int(w))
    return out, len(out)


def _device_name(tail: list[str]) -> tuple[str, str]:
    """(chip and hardware IRQ, action names) of a device row's words after its counts:
    the names follow the last trigger word (`2-edge`, `Level`); a row without one (the
    2.4 format `XT-PIC  timer`) has its chip first."""
    cut = max((i for i, w in enumerate(tail) if _TRIGGER.match(w)), default=None)
    if cut is None:
        cut = 0 if tail else -1
    return " ".join(tail[: cut + 1]), " ".join(tail[cut + 1 :])


def parse_interrupts(text: str, file: str = "/proc/interrupts") -> PerCpuTable:
    """/proc/interrupts → its rows (module docstring)."""
    lines = text.splitlines()
    at, cpus = _header(lines, file)
    rows: list[IrqRow] = []
    seen: set[str] = set()
    for i, line in enumerate(lines[at + 1 :], start=at + 2):
        if not line.strip():
            continue
        key, colon, rest = line.partition(":")
        key = key.strip()
        if not colon or not key or " " in key:
            raise _bad(file, f"line is not `KEY: counts …`: {line.strip()[:80]!r}", i)
        if key in seen:
            raise _bad(file, f"row {key} appears twice", i)
        seen.add(key)
        words = rest.split()
        counts, used = _counts(words, len(cpus))
        tail = words[used:]
        if used < len(cpus):
            if used == 1 and not tail and not key.isdigit():  # ERR: 0
                rows.append(IrqRow(key, (), noise.X86_KEYS.get(key, key), glob=True))
                continue
            if used < len(cpus):
                raise _bad(file, f"row {key} has {used} counts for {len(cpus)} CPUs", i)
        if key.isdigit():
            chip, name = _device_name(tail)
            rows.append(IrqRow(key, tuple(counts), name, chip))
        else:
            label = " ".join(tail) or noise.X86_KEYS.get(key, key)
            rows.append(IrqRow(key, tuple(counts), label))
    return PerCpuTable(cpus, tuple(rows))


def parse_softirqs(text: str, file: str = "/proc/softirqs") -> PerCpuTable:
    """/proc/softirqs → one row per vector (its name as key and name)."""
    lines = text.splitlines()
    at, cpus = _header(lines, file)
    rows: list[IrqRow] = []
    for i, line in enumerate(lines[at + 1 :], start=at + 2):
        if not line.strip():
            continue
        key, colon, rest = line.partition(":")
        key = key.strip()
        words = rest.split()
        counts, used = _counts(words, len(cpus))
        if not colon or not key or used != len(cpus) or len(words) != used:
            raise _bad(file, f"line is not `NAME: one count per CPU`: {line.strip()[:80]!r}", i)
        rows.append(IrqRow(key, tuple(counts), key))
    return PerCpuTable(cpus, tuple(rows))


def parse_vmstat(text: str, file: str = "/proc/vmstat") -> FrozenMap[str, int]:
    """/proc/vmstat → counter name → value (lines that are not `name integer` skipped)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[1].lstrip("-").isdigit():
            out[words[0]] = int(words[1])
    if not out and text.strip():
        raise _bad(file, "holds no `name value` line")
    return FrozenMap(out)


def parse_uptime(text: str, file: str = "/proc/uptime") -> float:
    """/proc/uptime → seconds since boot."""
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        raise _bad(file, "is not `SECONDS IDLE`") from None


def parse_schedstat(text: str, file: str = "/proc/schedstat") -> FrozenMap[int, int] | None:
    """/proc/schedstat → CPU → switch-ins of tasks other than idle (rq_sched_info.pcount);
    None for a version whose `cpuN` line hostc does not know (noise.SCHEDSTAT_PCOUNT)."""
    lines = text.splitlines()
    head = lines[0].split() if lines else []
    if len(head) != 2 or head[0] != "version" or not head[1].isdigit():
        raise _bad(file, "does not start with `version N`", 1)
    at = noise.SCHEDSTAT_PCOUNT.get(int(head[1]))
    if at is None:
        return None
    out: dict[int, int] = {}
    for i, line in enumerate(lines, start=1):
        words = line.split()
        m = re.fullmatch(r"cpu(\d+)", words[0]) if words else None
        if m is None:
            continue
        if len(words) <= at or not words[at].isdigit():
            raise _bad(file, f"cpu line has no field {at}", i)
        out[int(m.group(1))] = int(words[at])
    return FrozenMap(out)


@attrs.frozen(repr=False, eq=False)
class TaskStat(Record):
    """What one sample knows of a thread (/proc/PID/task/TID/stat)."""

    tid: int
    comm: str
    flags: int
    cputime: int  # utime + stime, in clock ticks
    cpu: int  # `processor`: the CPU it last ran on (or was placed on)

    @property
    def kthread(self) -> bool:
        return bool(self.flags & noise.PF_KTHREAD)


#: /proc/PID/stat fields counted from `state` (field 3, proc(5)): flags 9, utime 14,
#: stime 15, processor 39.
_FLAGS, _UTIME, _STIME, _PROCESSOR = 9 - 3, 14 - 3, 15 - 3, 39 - 3


def parse_task_stat(text: str) -> TaskStat | None:
    """/proc/PID/task/TID/stat → a TaskStat; None for text that is not one (a thread that
    exited while read, a truncated file): the sampler counts it as not seen."""
    head, sep, rest = text.rpartition(")")
    tid_text, _, comm = head.partition(" (")
    fields = rest.split()
    if not sep or not tid_text.strip().isdigit() or len(fields) <= _PROCESSOR:
        return None
    want = (fields[_FLAGS], fields[_UTIME], fields[_STIME], fields[_PROCESSOR])
    if not all(w.isdigit() for w in want):
        return None
    flags, utime, stime, cpu = (int(w) for w in want)
    return TaskStat(int(tid_text), comm, flags, utime + stime, cpu)


def parse_task_schedstat(text: str) -> int | None:
    """/proc/PID/task/TID/schedstat → the times it was switched in (its third field,
    `# of timeslices run on this cpu`: Documentation/scheduler/sched-stats.rst)."""
    words = text.split()
    return int(words[2]) if len(words) == 3 and words[2].isdigit() else None


def parse_cgroup_unit(text: str) -> str | None:
    """/proc/PID/cgroup → the systemd unit (service or scope) the task is in, from the
    unified hierarchy's line (`0::/system.slice/demo.service`), else from any line."""
    lines = [line for line in text.splitlines() if line.count(":") >= 2]
    lines.sort(key=lambda line: not line.startswith("0::"))  # stable: the unified line first
    for path in (line.split(":", 2)[2] for line in lines):
        for part in reversed(path.split("/")):
            if part.endswith((".service", ".scope")):
                return part
    return None


def status_field(text: str, field: str) -> str | None:
    """One `Name:\\tvalue` field of /proc/PID/status."""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return value.strip()
    return None
