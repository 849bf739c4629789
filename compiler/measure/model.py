"""What `hostc measure` reports: one row per (CPU, source) with its count and cause.

Every row on an isolated CPU carries exactly one cause: a Plan setting (verdict
`excess` when the Plan promised the count away, `own` for the workload placed there,
`left-out` for a setting the Plan leaves out on purpose) or a kernel mechanism that no
setting controls (`kernel`, or `allowed` within what that mechanism allows: the
residual tick).  Housekeeping CPUs carry no promise (`unpromised`).
"""

from __future__ import annotations

import enum

import attrs

from hostc.knowledge.noise import NoiseKind
from hostc.record import Record


class Verdict(enum.StrEnum):
    EXCESS = "excess"  # a Plan setting should have prevented it: that setting is not in effect
    OWN = "own"  # the workload the Plan placed on this CPU
    LEFT_OUT = "left-out"  # the setting that would prevent it is left out of the Plan on purpose
    KERNEL = "kernel"  # a kernel mechanism no setting controls
    ALLOWED = "allowed"  # within what the mechanism allows (the residual tick)
    UNPROMISED = "unpromised"  # the Plan promises nothing about it here


class CauseKind(enum.StrEnum):
    SETTING = "setting"
    MECHANISM = "mechanism"


@attrs.frozen(repr=False, eq=False)
class Cause(Record):
    """What a count is attributed to: a Plan setting (id, spec key) or a kernel mechanism."""

    kind: CauseKind
    id: str  # "irq-owner", "nohz_full", … or "residual-tick", "managed-irq", …
    why: str  # this count's facts, one sentence
    what: str = ""  # a setting: what it does, as the Plan has it
    source: str = ""  # a setting: its spec key or preset
    fix: str = ""  # a setting: how to put it back in effect


@attrs.frozen(repr=False, eq=False)
class CountRow(Record):
    cpu: int | None  # None: host-wide (NUMA balancing)
    kind: NoiseKind
    key: str  # IRQ number, LOC, IPI0, softirq name, thread id, vmstat counter
    name: str  # action names, the row's label, the thread's comm
    count: int
    verdict: Verdict
    cause: Cause
    allowed: int = 0  # what the mechanism allows in this window (the residual tick)


@attrs.frozen(repr=False, eq=False)
class CpuReport(Record):
    cpu: int
    role: str  # "isolated" or "housekeeping"
    workload: str | None
    promised: tuple[str, ...]  # the mechanisms the Plan applies to this CPU
    rows: tuple[CountRow, ...]
    switches: int | None  # switch-ins of all tasks on it (/proc/schedstat; None: not visible)
    booked: int  # switch-ins the thread sampler booked to named threads
    here: bool = True  # the host's counters have a column for it (False: not online here)


@attrs.frozen(repr=False, eq=False)
class Sampling(Record):
    """How far the thread sampler saw (tasks.TaskRuns, summed up)."""

    scans: int
    most: int
    partial: bool
    exited: int
    by_switches: bool


@attrs.frozen(repr=False, eq=False)
class Measurement(Record):
    seconds: float
    cpus: tuple[CpuReport, ...]
    host: tuple[CountRow, ...]
    not_visible: tuple[str, ...]
    sampling: Sampling
    osnoise: str

    @property
    def excess(self) -> list[CountRow]:
        rows = [r for c in self.cpus for r in c.rows] + list(self.host)
        return [r for r in rows if r.verdict is Verdict.EXCESS]
