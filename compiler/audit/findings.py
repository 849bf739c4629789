"""`hostc audit`'s findings: did the Plan take effect on this host?

Every expectation of the table (`hostc.audit.observe`) is observed on a HostReader (a
live root, a directory or a capture) and gets one status:

- applied: the host has the Plan's value;
- differs: it has another one (expected and found are both shown);
- pending-reboot: the value is installed (a boot loader file carries the
  argument) but the running kernel still has the old one;
- not-observable: this host cannot show it, and why (no cpufreq in a VM, no
  kubelet, a unit not running).

Drift is differs or pending-reboot; not-observable is not drift.
"""

from __future__ import annotations

import enum
import re
from pathlib import Path

import attrs

from hostc.audit.host import HostReader
from hostc.audit.observe import Expect, expectations
from hostc.audit.observers import OBSERVERS
from hostc.audit.seen import Seen
from hostc.diagnostics import json_text
from hostc.plan.model import Plan
from hostc.record import Record

#: Words of a boot loader file: GRUB quotes the line and glues `}` to the first word.
_WORDS = re.compile(r"[\s\"'}]+")

__all__ = ["Finding", "Status", "audit", "drift", "dumps", "render"]


class Status(enum.StrEnum):
    APPLIED = "applied"
    DIFFERS = "differs"
    PENDING = "pending-reboot"
    NOT_OBSERVABLE = "not-observable"


@attrs.frozen(repr=False, eq=False)
class Finding(Record):
    setting: str
    status: Status
    expected: str
    found: str | None
    note: str
    reason: str


def _carried(host: HostReader, e: Expect) -> str | None:
    """The boot loader file (or drop-in) that already holds the expected token."""
    if e.pending is None:
        return None
    paths, token = e.pending
    for p in paths:
        names = [f"{p}{n}" for n in host.listdir(p)] if p.endswith("/") else [p]
        for name in names:
            if token in _WORDS.split(host.text(name) or ""):
                return name
    return None


def _finding(host: HostReader, e: Expect) -> Finding:
    seen: Seen = OBSERVERS[e.kind](host, e)
    if seen.ok is None:
        status = Status.NOT_OBSERVABLE
    elif seen.ok:
        status = Status.APPLIED
    else:
        status = Status.DIFFERS
    note = seen.note
    if status is Status.DIFFERS:
        carrier = _carried(host, e)
        if carrier is not None:
            status, note = Status.PENDING, f"{carrier} has it; reboot to apply"
    return Finding(e.setting, status, e.expected, seen.found, note, str(e.reason))


def audit(plan: Plan, host: HostReader) -> list[Finding]:
    """One Finding per expectation, in the table's order (deterministic)."""
    return [_finding(host, e) for e in expectations(plan)]


def drift(findings: list[Finding]) -> bool:
    return any(f.status in (Status.DIFFERS, Status.PENDING) for f in findings)


#: the widest an EXPECTED or FOUND cell pads to (a longer value pushes its own row only)
VALUE_WIDTH = 40


def render(findings: list[Finding]) -> str:
    """An aligned table: status, setting, expected, found, note.  STATUS and SETTING are
    as wide as their longest cell (a name never shifts its row, first-day-4 A2)."""
    head = ("STATUS", "SETTING", "EXPECTED", "FOUND", "NOTE")
    rows = [head] + [
        (f.status.value, f.setting, f.expected, f.found if f.found is not None else "-", f.note)
        for f in findings
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    widths[2:] = [min(VALUE_WIDTH, w) for w in widths[2:]]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4]
        for r in rows
    ]
    counts = {s: sum(f.status is s for f in findings) for s in Status}
    summary = ", ".join(f"{n} {s.value}" for s, n in counts.items())
    return "\n".join(line.rstrip() for line in lines) + f"\n\n{summary}\n"


def dumps(findings: list[Finding], *, source: Path) -> str:
    doc = {
        "host": str(source),
        "ok": not drift(findings),
        "findings": [
            {
                "setting": f.setting,
                "status": f.status.value,
                "expected": f.expected,
                "found": f.found,
                "note": f.note,
                "reason": f.reason,
            }
            for f in findings
        ],
    }
    return json_text(doc, ascii_only=True) + "\n"
