"""The output of many-host commands (`hostc build|check|plan HOSTS/`): part of the CLI,
the only other module that prints or exits.  Per host: its diagnostics; then the Plans
(plan --json), the JSON report (--json) or the diffs (--check) on stdout, and the
summary table on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO, cast

import typer

from hostc import api
from hostc.api import fleet
from hostc.api.fleet import FleetHost, Job, Result
from hostc.cli.base import _guard, _usage, _warn
from hostc.cli.text import unescaped
from hostc.diagnostics import Diagnostic, json_text


def report(
    hosts: list[FleetHost],
    job: Job,
    jobs: int | None,
    warn: Callable[[Sequence[Diagnostic]], None],
    *,
    quiet: bool = False,
    as_json: bool = False,
    grouped: bool = False,
    diffs: bool = True,
) -> NoReturn:
    """Run every host, print, and exit: 2 when a host failed (the others are still
    written), 1 when `--check` found a difference, else 0.  `grouped` (pre-commit): the
    stale hosts grouped by identical changes first, the unified diffs only with `diffs`."""
    from hostc.cli import fleet_view

    show = fleet_view.wants_progress(sys.stderr, quiet or as_json)
    tty = cast(TextIO, unescaped(sys.stderr))  # a real `\r`, not its escaped `\x0d`

    def progress(done: int, total: int) -> None:
        if show:
            tty.write(fleet_view.bar(done, total) + ("\n" if done == total else ""))
            tty.flush()

    results = fleet.run(hosts, job, jobs, progress)
    results += fleet.ansible_fleet(results, job)
    results += fleet.stale_hosts(results, job)
    print_once(((r.host, (*r.errors, *r.warnings)) for r in results), warn)
    if job.mode == "changed":
        changed(results, as_json=as_json)
    if job.mode == "plan":
        doc = {r.host: json.loads(r.plan) for r in results if r.plan is not None}
        sys.stdout.write(json_text(doc) + "\n")
    elif as_json:
        typer.echo(json_text({"hosts": [row(r) for r in results]}, ascii_only=True))
    elif job.compare:
        if grouped:
            from hostc.api.fleetdiff import stale_summary

            sys.stdout.write(stale_summary([(r.host, r.differences) for r in results]))
        if diffs:
            sys.stdout.write("".join(f"{r.host}: {t}" for r in results for _, t in r.differences))
    if not quiet:
        summary = fleet_view.summary(results, job.compare, checked=job.mode == "check")
        typer.echo(summary, err=True, nl=False)
    if any(not r.ok for r in results):
        raise typer.Exit(2)
    raise typer.Exit(1 if any(r.differences for r in results) else 0)


def print_once(
    given: Iterable[tuple[str, Sequence[Diagnostic]]],
    warn: Callable[[Sequence[Diagnostic]], None],
) -> None:
    """Many hosts' diagnostics on stderr, each distinct one once with the hosts it
    concerns under it (`fleet_view.diagnostics_once`): a build's and a review's alike."""
    from hostc.cli import fleet_view

    for d, hosts in fleet_view.diagnostics_once(given):
        warn([d])
        if line := fleet_view.hosts_line(hosts):
            typer.echo(line, err=True)


def changed(results: list[Result], *, as_json: bool) -> NoReturn:
    """`hostc changed HOSTS --out DIR`: each host's disruption, then the fleet's sum; exit
    2 when a host failed, 1 when a host changes, else 0."""
    from hostc.cli.fleet_view import disruption_total

    found = {r.host: r.disruption for r in results if r.disruption is not None}
    total = disruption_total(found)
    if as_json:
        hosts = {h: d.to_json() for h, d in found.items()}
        typer.echo(json_text({"hosts": hosts, "summary": total}, ascii_only=True))
    else:
        width = max((len(h) for h in found), default=0)
        for h, d in found.items():
            typer.echo(f"{h.ljust(width)}  {d.line()}")
        typer.echo(total)
    if any(not r.ok for r in results):
        raise typer.Exit(2)
    raise typer.Exit(1 if any(d.files or d.kubelet_reset for d in found.values()) else 0)


def row(r: Result) -> dict[str, object]:
    return {
        "host": r.host,
        "spec": r.spec,
        "ok": r.ok,
        "files": r.files,
        "unchanged": r.unchanged,
        "differences": [{"path": p, "diff": t} for p, t in r.differences],
        "warnings": [d.to_json() for d in r.warnings],
        "errors": [d.to_json() for d in r.errors],
        "removed": list(r.removed),
        "kept": [{"path": p, "why": why} for p, why in r.kept],
        "gone": r.gone,
        "previous_kept": r.previous,
    }


def many(
    spec: Path, job: Job, jobs: int | None, quiet: bool = False, as_json: bool = False
) -> NoReturn:
    """Every host of a selection: diagnostics per host, then the summary table; exit 2
    when a host failed (the others are still written), 1 when `--check` found a change."""
    many_hosts(_guard(lambda: fleet.select(str(spec))), job, jobs, quiet, as_json)


def many_hosts(
    hosts: list[FleetHost],
    job: Job,
    jobs: int | None,
    quiet: bool = False,
    as_json: bool = False,
    grouped: bool = False,
    diffs: bool = True,
) -> NoReturn:
    report(
        hosts,
        job,
        jobs,
        lambda diags: _warn(list(diags)),
        quiet=quiet,
        as_json=as_json,
        grouped=grouped,
        diffs=diffs,
    )


def fleet_diff(old: str, new: str, fmt: str, jobs: int | None) -> NoReturn:
    """`hostc diff DIR@REV DIR`: the grouped review on stdout, each host that failed to
    compile with its diagnostics on stderr; exit 2 when a host failed, 1 on a change."""
    if fmt == "html":
        _usage("--format html shows one host: hostc diff DIR/HOST.toml@REV DIR/HOST.toml")
    found = _guard(lambda: api.fleet_diff(old, new, jobs))
    print_once(found.failed, lambda diags: _warn(list(diags)))
    sys.stdout.write(api.fleet_review_text(found, fmt))
    raise typer.Exit(2 if found.failed else 1 if found.changed else 0)
