"""The `hostc` command: the only module that prints or exits.

Exit codes: 0 success, 1 `--check` found a difference, 2 invalid input or
usage (diagnostics on stderr, nothing written), 3 internal error (a bug in
hostc: one line on stderr, the traceback with HOSTC_DEBUG=1).  A traceback is
a bug.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO, cast

import typer

from hostc import api
from hostc.cli import report_json
from hostc.cli.base import (
    JobsOpt,
    PruneOpt,
    SpecArg,
    StrictOpt,
    TopologyOpt,
    _clean,
    _command,
    _compile,
    _guard,
    _strict,
    _usage,
    _warn,
    app,
    is_fleet,
)
from hostc.cli.base import _show as _show  # the printed form of a diagnostic, for tests
from hostc.cli.build import compare, judge_out, need_compared, to_stdout, write_out
from hostc.cli.completion import target_names, values
from hostc.cli.report_json import JsonOpt
from hostc.cli.text import TARGET_HELP as TARGET_HELP
from hostc.cli.text import TerminalSafe, flagged, write_costs
from hostc.diagnostics import HostcError, json_text, with_file
from hostc.inputs import session

if TYPE_CHECKING:
    from hostc.api.fleet import FleetHost as FleetHost
    from hostc.api.fleet import Job as FleetJob
    from hostc.artifact import Artifact
    from hostc.plan.model import Plan


def _emit(spec_path: Path, plan: Plan, names: list[str]) -> list[Artifact]:
    """Target errors name the spec they were asked for (never a bare `<input>`)."""
    try:
        return api.emit(plan, names)
    except HostcError as e:
        raise HostcError(with_file(flagged(list(e.diagnostics)), str(spec_path))) from None


@app.command()
def build(
    spec: SpecArg,
    topology: TopologyOpt = None,
    target: Annotated[
        list[str] | None,
        typer.Option("--target", "-t", help=TARGET_HELP, autocompletion=target_names),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="write DIR/<target>/<path>")
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="compare with --out instead of writing; exit 1 and print a diff on difference",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="print a JSON manifest (with --check: the differences as JSON)"
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="no summary line on stderr after --out")
    ] = False,
    strict: StrictOpt = False,
    jobs: JobsOpt = None,
    prune: PruneOpt = False,
) -> None:
    """Compile SPEC into OS artifacts.  SPEC may name many hosts (a directory, a glob or
    @list): each is written to DIR/<host>/<target>/…, and a summary follows.  A build
    removes the files its previous build in DIR wrote and it no longer makes."""
    targets = target or ["all"]
    out = _dash(out, check or is_fleet(spec))
    if is_fleet(spec):
        from hostc.api.fleet import Job

        job = Job("build", tuple(targets), out, check, strict, topology, prune)
        _fleet_build(spec, job, jobs, quiet=quiet, as_json=as_json)
    if prune:
        _usage("--prune applies to many hosts (a directory, glob or @list)")
    plan, warnings = _guard(lambda: _compile(spec, topology))
    picked = _guard(lambda: api.target_warnings(plan, target or ["all"]))
    warnings = warnings + flagged(with_file(picked, str(spec)))
    _strict(warnings, strict)
    artifacts = _guard(lambda: _emit(spec, plan, target or ["all"]))
    # not under --strict: the size is the cloud's limit, not a fault of the spec
    warnings = warnings + flagged(with_file(api.size_warnings(artifacts), str(spec)))
    _warn(warnings)
    if check:
        if out is None:
            _usage("--check needs --out DIR to compare against")
        compare(out, artifacts, warnings, as_json=as_json, quiet=quiet)
    elif out is not None:
        inputs = api.build_inputs(spec, topology)
        write_out(out, plan, artifacts, warnings, inputs, as_json, quiet, targets)
    else:
        to_stdout(plan, artifacts, warnings, as_json)


def _dash(out: Path | None, refused: bool) -> Path | None:
    """`-o -` is standard output, as the refusals' hints say: one host's files (None),
    never a folder called `-`; with --check or many hosts a usage error."""
    if out != Path("-"):
        return out
    if refused:
        _usage("--out - is standard output: one host's files, not --check or many hosts")
    return None


def _fleet_build(spec: Path, job: FleetJob, jobs: int | None, quiet: bool, as_json: bool) -> None:
    """`build HOSTS/`: --out is needed, and checked once rather than once per host."""
    if job.out is None:
        _usage("many hosts need --out DIR (each host is written to DIR/<host>/)")
    out = job.out
    if job.compare:
        need_compared(out)
    else:
        job = judge_out(job, out)  # one error, not one per host, nor its system calls
    from hostc.cli.fleet import many

    many(spec, job, jobs, quiet=quiet, as_json=as_json)


@app.command("pre-commit")
def pre_commit_cmd(
    hosts: Annotated[str, typer.Argument(help="the fleet: a directory, glob or @list")],
    changed: Annotated[
        list[Path] | None, typer.Argument(help="files that changed (pre-commit passes them)")
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="the committed output, DIR/<host>/")
    ] = Path("out"),
    target: Annotated[
        list[str] | None,
        typer.Option("--target", "-t", help="targets, as for build", autocompletion=target_names),
    ] = None,
    jobs: JobsOpt = None,
    show_diff: Annotated[
        bool, typer.Option("--diff", help="also print each stale file's unified diff")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="each host's stale files and what its new build costs a running host "
            "(the disruption object of `changed --json`), and the commands to run",
        ),
    ] = False,
) -> None:
    """`hostc build --check` for the hosts whose inputs (the spec, a file it extends, its
    topology snapshot) or committed output (OUT/<host>/) changed.  Prints the stale hosts
    grouped by identical changes (each file's changed lines), with --diff every file's
    unified diff too.  Exit 0 when current, 1 when a host is stale, 2 on bad input."""
    from hostc.api import fleet

    selected = _guard(lambda: fleet.select(hosts))
    chosen = [h for h in selected if fleet.affected(h, out, changed or [])]
    if not chosen:
        if as_json:
            typer.echo('{"hosts": []}')
        raise typer.Exit(0)
    need_compared(out)
    job = fleet.Job("build", tuple(target or ["all"]), out, compare=True)
    from hostc.cli.fleet import many_hosts, pre_commit_commands

    commands = pre_commit_commands(hosts, out, job.targets)
    many_hosts(chosen, job, jobs, as_json=as_json, grouped=commands, diffs=show_diff)


@app.command("check")
def check_cmd(
    spec: SpecArg,
    topology: TopologyOpt = None,
    strict: StrictOpt = False,
    jobs: JobsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Validate SPEC against its topology; print every problem."""
    if is_fleet(spec):
        from hostc.api.fleet import Job
        from hostc.cli.fleet import many

        many(spec, Job("check", strict=strict, topology=topology), jobs, as_json=as_json)
    if as_json:
        report_json.check(spec, topology, strict)
    _, warnings = _guard(lambda: _compile(spec, topology))
    _strict(warnings, strict)
    _warn(warnings)
    typer.echo(f"{_clean(str(spec))}: ok" + (f" ({len(warnings)} warning(s))" if warnings else ""))


@app.command("plan")
def plan_cmd(
    spec: SpecArg,
    topology: TopologyOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="the Plan as JSON")] = False,
    strict: StrictOpt = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="text, json, or svg (the partition as a picture)",
            autocompletion=values("text", "json", "svg"),
        ),
    ] = "text",
    jobs: JobsOpt = None,
) -> None:
    """Show the partition per NUMA node, then every setting with its reason."""
    if fmt not in ("text", "json", "svg"):
        _usage(f"unknown --format {fmt!r}; choose from text, json, svg")
    if is_fleet(spec):
        from hostc.api.fleet import Job

        if not as_json and fmt != "json":
            _usage("many hosts: pass --json (one JSON object, each host's Plan by host name)")
        from hostc.cli.fleet import many

        many(spec, Job("plan", strict=strict, topology=topology), jobs, as_json=True)

    plan, warnings = _guard(lambda: _compile(spec, topology))
    _strict(warnings, strict)
    _warn(warnings)
    if fmt == "svg":
        sys.stdout.write(api.render_svg(plan))
    elif as_json or fmt == "json":
        sys.stdout.write(api.plan_json(plan))
    else:
        sys.stdout.write(api.plan_text(plan))


@app.command("explain")
def explain_cmd(
    spec: SpecArg,
    what: Annotated[
        str,
        typer.Argument(
            help="a setting (vm.swappiness), a spec key path (kernel.transparent_hugepage) "
            "or an artifact line (/etc/sysctl.d/90-hostc.conf:12)",
            show_default=False,
        ),
    ],
    topology: TopologyOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="the chain as JSON")] = False,
) -> None:
    """Show where a setting comes from, its reason, the lines that carry it, and where a
    host shows it."""
    found = _guard(lambda: api.explain(spec, what, topology))
    if as_json:
        typer.echo(json_text(found.to_json()))
    else:
        sys.stdout.write(found.render())


@app.command("diff")
def diff_cmd(
    old: Annotated[str, typer.Argument(help="spec, plan.json, or SPEC@REV", show_default=False)],
    new: Annotated[str, typer.Argument(help="spec, plan.json, or SPEC@REV", show_default=False)],
    as_json: Annotated[
        bool, typer.Option("--json", help="the changes as JSON: the same as --format json")
    ] = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="markdown, json, or html (a self-contained page)",
            autocompletion=values("markdown", "json", "html"),
        ),
    ] = "markdown",
    jobs: JobsOpt = None,
) -> None:
    """Show what changes between two specs or Plans: CPUs, settings with both reasons,
    artifacts.  Two folders of hosts (`hostc diff hosts/@main hosts/`): each host's
    change, hosts with identical changes grouped.  Exit 0 without a change, 1 with one
    (like diff(1)), 2 on bad input (a host that fails to compile, the others shown)."""
    if fmt not in ("markdown", "json", "html"):
        _usage(f"unknown --format {fmt!r}; choose from markdown, json, html")
    if as_json and fmt not in ("markdown", "json"):
        _usage(f"--json is --format json; it cannot go with --format {fmt}")
    if _guard(lambda: api.is_fleet_diff(old, new)):
        from hostc.cli.fleet import fleet_diff

        fleet_diff(old, new, "json" if as_json else fmt, jobs)
    found = _guard(lambda: api.plan_diff(old, new))
    from hostc.cli.fleet import review_costs

    text = api.review_text(found, "json" if as_json else fmt)
    write_costs(sys.stdout, text, review_costs(found, "json" if as_json else fmt))
    if found.changed:
        raise typer.Exit(1)


@app.command("targets")
def targets_cmd(as_json: JsonOpt = False) -> None:
    """List the targets `--target` accepts."""
    if as_json:
        return report_json.targets()
    reg = api.targets()
    width = max(len(n) for n in reg)
    for head, role in (
        ("file targets: `--target all` (the default) builds each that applies to the host", "file"),
        (
            "wrappers: never in `all`; each carries the file targets' files for one way of "
            "delivery, made only when named (`-t all -t cloud-init`, `-t ansible`)",
            "wrapper",
        ),
    ):
        typer.echo(head)
        for name, t in reg.items():
            if str(t.role) == role:
                typer.echo(f"  {name.ljust(width)}  {t.summary}")


@app.command("schema")
def schema_cmd(
    which: Annotated[
        str, typer.Argument(help="node or topology", autocompletion=values("node", "topology"))
    ] = "node",
) -> None:
    """Print the JSON Schema of node.toml or of the topology snapshot."""
    if which not in api.SCHEMAS:
        _usage(f"unknown schema {which!r}; choose from {', '.join(api.SCHEMAS)}")
    sys.stdout.write(api.schema(which))


def run(argv: list[str] | None = None) -> int:
    """`hostc ARGV` (None: sys.argv), as its exit status; a traceback never reaches the user.

    The file system's refusals (a name past NAME_MAX, a path past PATH_MAX, EACCES,
    ELOOP) are bad input, exit 2 naming the path; any other exception is a bug, exit 3.
    """
    args = sys.argv[1:] if argv is None else argv
    stdout, stderr = sys.stdout, sys.stderr
    # the terminal's boundary: nothing a host, a spec's name or a plan.json holds reaches
    # the terminal raw (click's usage errors quote argv; audit prints host data)
    sys.stdout = cast(TextIO, TerminalSafe(stdout))
    sys.stderr = cast(TextIO, TerminalSafe(stderr))
    try:
        with session():  # no writer replaces a file this command read
            _command(args[0] if args else "").main(args, standalone_mode=True)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0 if e.code is None else 1
    except KeyboardInterrupt:
        return 130
    except OSError as e:
        if os.environ.get("HOSTC_DEBUG"):
            raise
        where = f"{_clean(str(e.filename), 200)}: " if e.filename is not None else ""
        typer.echo(f"error: {where}{e.strerror or e}", err=True)
        return 2
    except Exception as e:
        if os.environ.get("HOSTC_DEBUG"):
            raise
        typer.echo(
            f"hostc: internal error (a bug, please report it): {type(e).__name__}: {e}\n"
            "  rerun with HOSTC_DEBUG=1 for the traceback",
            err=True,
        )
        return 3
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    return 0


def main() -> None:
    """Console entry point."""
    sys.exit(run())


# audit, probe, import, changed, init, bench, measure, completion: on the same app
import hostc.cli.audit  # noqa: E402
import hostc.cli.bench  # noqa: E402
import hostc.cli.change  # noqa: E402
import hostc.cli.completion  # noqa: E402
import hostc.cli.init  # noqa: E402
import hostc.cli.measure  # noqa: E402
import hostc.cli.topology  # noqa: E402, F401
