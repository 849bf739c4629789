"""The output of many-host commands (`hostc build|check|plan HOSTS/`): part of the CLI,
the only other module that prints or exits.  Per host: its diagnostics; then the Plans
(plan --json), the JSON report (--json) or the diffs (--check) on stdout, and the
summary table on stderr."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO, cast

import typer

from hostc import api
from hostc.api import fleet
from hostc.api.fleet import FleetHost, Job, Result
from hostc.cli.base import _guard, _usage, _warn
from hostc.cli.text import unescaped, write_costs
from hostc.diagnostics import Diagnostic, HostcError, json_text

if TYPE_CHECKING:
    from hostc.api.fleet import FleetReview
    from hostc.report.review import Review


def report(
    hosts: list[FleetHost],
    job: Job,
    jobs: int | None,
    warn: Callable[[Sequence[Diagnostic]], None],
    *,
    quiet: bool = False,
    as_json: bool = False,
    grouped: tuple[str, str] | None = None,
    diffs: bool = True,
) -> NoReturn:
    """Run every host, print, and exit: 2 when a host failed (the others are still
    written), 1 when `--check` found a difference, else 0.  `grouped` (pre-commit: the
    commands that update the output and show the Plan-level change): the stale hosts
    grouped by identical changes and cost first, the unified diffs only with `diffs`."""
    from hostc.cli import fleet_view

    show = fleet_view.wants_progress(sys.stderr, quiet or as_json)
    tty = cast(TextIO, unescaped(sys.stderr))  # a real `\r`, not its escaped `\x0d`

    finished = [0]

    def progress(done: int, total: int) -> None:
        finished[0] = done
        if show:
            tty.write(fleet_view.bar(done, total) + ("\n" if done == total else ""))
            tty.flush()

    try:
        results = fleet.run(hosts, job, jobs, progress)
    except KeyboardInterrupt:
        interrupted(job, finished[0], len(hosts))
    results += fleet.ansible_fleet(results, job)
    results += fleet.stale_hosts(results, job)
    print_once(((r.host, (*r.errors, *r.warnings)) for r in results), warn)
    if job.mode == "changed":
        changed(results, as_json=as_json)
    if job.mode == "plan":
        doc = {r.host: json.loads(r.plan) for r in results if r.plan is not None}
        sys.stdout.write(json_text(doc) + "\n")
    elif as_json:
        typer.echo(json_text(_doc(results, job, grouped), ascii_only=True))
    elif job.compare:
        if grouped is not None:
            from hostc.api.fleet import stale_summary

            found = [(r.host, r.differences) for r in results]
            costs = stale_costs(results, job)
            text = stale_summary(found, {h: c[0] for h, c in costs.items()}, grouped)
            write_costs(sys.stdout, text, {c[0]: c[1] for c in costs.values()})
        if diffs:
            sys.stdout.write("".join(f"{r.host}: {t}" for r in results for _, t in r.differences))
    if not quiet:
        summary = fleet_view.summary(results, job.compare, checked=job.mode == "check")
        typer.echo(summary, err=True, nl=False)
    if any(not r.ok for r in results):
        raise typer.Exit(2)
    raise typer.Exit(1 if any(r.differences for r in results) else 0)


def _doc(results: list[Result], job: Job, grouped: tuple[str, str] | None) -> object:
    """Many hosts' `--json`: a row a host; pre-commit's (`grouped`) with each stale host's
    cost (the disruption object of `changed --json`) and the commands to run."""
    rows = [row(r) for r in results]
    doc: dict[str, object] = {"hosts": rows}
    if grouped is not None:
        costs = stale_costs(results, job)
        for one in rows:
            if one["host"] in costs:
                one["disruption"] = costs[str(one["host"])][2]
        doc["commands"] = {"update": grouped[0], "review": grouped[1]}
    return doc


def interrupted(job: Job, done: int, total: int) -> NoReturn:
    """Ctrl-C in the middle of many hosts: what was left written, then exit 130."""
    if job.out is not None and job.mode == "build" and not job.compare:
        typer.echo(
            f"\ninterrupted: {done} of {total} hosts finished; {job.out}/ may hold some "
            "hosts' new output beside others' earlier one (each file is written whole, "
            "never half); run the same command again to finish",
            err=True,
        )
    else:
        typer.echo(f"\ninterrupted: {done} of {total} hosts finished; nothing written", err=True)
    raise typer.Exit(130)


def pre_commit_commands(hosts: str, out: Path, targets: Sequence[str]) -> tuple[str, str]:
    """The exact commands a stale pre-commit prints, from its own arguments: the build
    that updates OUT, and the Plan-level review of the change against HEAD."""
    picked = "".join(f" -t {shlex.quote(t)}" for t in targets)
    update = f"hostc build {shlex.quote(hosts)} --out {shlex.quote(str(out))}{picked}"
    if not Path(hosts).is_dir():  # a glob or an @list has no revision: one host at a time
        return update, "hostc diff HOST.toml@HEAD HOST.toml, for each host above"
    folder = hosts if hosts.endswith("/") else hosts + "/"
    return update, f"hostc diff {shlex.quote(folder + '@HEAD')} {shlex.quote(folder)}"


def stale_costs(results: list[Result], job: Job) -> dict[str, tuple[str, str, object]]:
    """pre-commit: what each stale host's new build costs a host running the committed
    one (`hostc changed`'s line, word and JSON object, against the record under
    OUT/<host>/), or why it is not known.  Compiled again here, stale hosts only: a tenth
    of a second each."""
    out: dict[str, tuple[str, str, object]] = {}
    for r in results:
        if not r.differences or r.fleetwide or job.out is None:
            continue
        where = job.out / r.host
        try:
            plan, _ = api.compile_file(Path(r.spec), job.topology)
            cost = api.changed(plan, where)
            out[r.host] = (cost.line(), cost.summary, cost.to_json())
        except HostcError as e:
            why = e.diagnostics[0].message if e.diagnostics else "unknown"
            out[r.host] = (f"not known ({why})", "unknown", {"unknown": why})
    return out


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
    from hostc.api.fleet import fleet_disruption
    from hostc.cli.fleet_view import disruption_total

    found = {r.host: r.disruption for r in results if r.disruption is not None}
    total = disruption_total(found)
    if as_json:  # the fleet's sum is the same object as each host's (`fleet_disruption`)
        hosts = {h: d.to_json() for h, d in found.items()}
        doc = {"hosts": hosts, "summary": fleet_disruption(found)}
        typer.echo(json_text(doc, ascii_only=True))
    else:
        width = max((len(h) for h in found), default=0)
        text = "".join(f"{h.ljust(width)}  {d.line()}\n" for h, d in found.items())
        write_costs(sys.stdout, text + total + "\n", {d.line(): d.summary for d in found.values()})
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
    grouped: tuple[str, str] | None = None,
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
    write_costs(sys.stdout, api.fleet_review_text(found, fmt), review_costs(found, fmt))
    raise typer.Exit(2 if found.failed else 1 if found.changed else 0)


def review_costs(found: Review | FleetReview, fmt: str) -> dict[str, str]:
    """`hostc diff`'s Markdown lines that tell a cost (`md_text` of each disruption's
    line, one per host or group) → its word, for `write_costs` to colour; none for
    JSON or HTML (a page has its badge)."""
    from hostc.api.fleet import FleetReview, md_text

    reviews = [g.review for g in found.groups] if isinstance(found, FleetReview) else [found]
    if fmt != "markdown":
        return {}
    return {md_text(r.disruption.line()): r.disruption.summary for r in reviews if r.disruption}
