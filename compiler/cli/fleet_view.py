"""Text for many-host commands: the progress bar and the summary table (the CLI prints)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

from hostc.api.fleet import FAILED, Result, fleet_line
from hostc.diagnostics import Diagnostic, printable

if TYPE_CHECKING:
    from hostc.delivery.disruption import Disruption

BAR_WIDTH = 30

#: host names printed after a diagnostic many hosts share; the rest are counted
NAMED_HOSTS = 8


def wants_progress(stream: TextIO, quiet: bool) -> bool:
    """A bar on a terminal only: never in a pipe, a log file, or CI (`CI` set)."""
    return not quiet and not os.environ.get("CI") and stream.isatty()


def bar(done: int, total: int) -> str:
    filled = BAR_WIDTH * done // max(total, 1)
    return f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} hosts"


def diagnostics_once(
    given: Iterable[tuple[str, Sequence[Diagnostic]]],
) -> list[tuple[Diagnostic, list[str]]]:
    """Each distinct diagnostic once, in the order hosts first gave it, with the hosts
    that gave it (`given`: each host with its diagnostics, a build's or a review's).  A
    node class's problem (its shared spec file, its snapshot) reaches every host of the
    class as the very same diagnostic, same file and line: one root cause is printed
    once, not once per host.  A diagnostic that names a host's own file differs from
    host to host and stays on its own."""
    found: dict[Diagnostic, list[str]] = {}
    for host, diags in given:
        for d in diags:
            found.setdefault(d, []).append(host)
    return list(found.items())


def hosts_line(hosts: Sequence[str]) -> str:
    """The hosts a diagnostic was given for, under it (nothing when it is one host's)."""
    if len(hosts) < 2:
        return ""
    shown = ", ".join(printable(h) for h in hosts[:NAMED_HOSTS])
    more = len(hosts) - NAMED_HOSTS
    tail = f" and {more} more" if more > 0 else ""
    return f"  for {len(hosts)} hosts: {shown}{tail}"


def status(r: Result, compare: bool) -> str:
    if r.gone:
        return "removed" if not r.kept else "not in fleet"
    if not r.ok:
        return "failed"
    if compare:
        return "stale" if r.differences else "current"
    return "ok"


def summary(results: Sequence[Result], compare: bool = False, checked: bool = False) -> str:
    """One row per host (status, files, warnings, errors), then the totals.  `checked`
    (`hostc check HOSTS/`): nothing is written, so no files column and `checked`, not
    `built`; `compare` (`--check`, pre-commit): compared, so `current` and `stale`."""
    head = ("host", "status", "files", "warnings", "errors")
    rows: list[tuple[str, ...]] = [head]
    rows += [
        (r.host, status(r, compare), str(r.files), str(len(r.warnings)), str(len(r.errors)))
        for r in results
    ]
    if checked:
        rows = [(h, st, w, e) for h, st, _, w, e in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    hosts = [r for r in results if not r.fleetwide and not r.gone]
    failed = sum(not r.ok for r in hosts)
    warned = sum(len(r.warnings) for r in hosts)
    done = len(hosts) - failed
    if compare:
        stale = sum(bool(r.differences) for r in hosts)
        counts = f"{done - stale} current, {stale} stale, {failed} failed"
    else:
        counts = f"{done} {'checked' if checked else 'built'}, {failed} failed"
    tail = f"{len(hosts)} hosts: {counts}, {warned} warning(s)"
    unchanged = sum(r.unchanged for r in hosts)
    if unchanged:  # a rebuild: how much of the tree it touched
        files = sum(r.files for r in hosts)
        tail += f"; {files - unchanged:,} of {files:,} files written, the rest unchanged"
    return "\n".join([*lines, *owned(results), tail]) + "\n"


def owned(results: Sequence[Result]) -> list[str]:
    """What a build removed of an earlier one, and what it kept (with why)."""
    out = [
        f"removed {printable(p)}: the previous build wrote it, this one does not"
        for r in results
        for p in r.removed
    ]
    out += [f"kept {printable(p)}: {why}" for r in results for p, why in r.kept]
    out += [
        f"previous output kept in {printable(r.previous)}/ (not rebuilt; marked {FAILED})"
        for r in results
        if r.previous is not None
    ]
    return out


def disruption_total(found: Mapping[str, Disruption]) -> str:
    """`hostc changed` over a fleet: `12 hosts reboot, 3 restart serve-a.service, …`."""
    return fleet_line(found)
