"""What every `hostc` command shares: the Typer app, the common arguments, and how
diagnostics are printed and turned into exit codes (only the cli modules print or exit)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import attrs
import typer
import typer.core
import typer.main

from hostc import api
from hostc.diagnostics import Diagnostic, HostcError, Severity, label, printable
from hostc.inputs import is_selection, read_text_bounded

if TYPE_CHECKING:
    from typer.models import CommandInfo

    from hostc.plan.model import Plan


#: Exit codes, one table for every command: `hostc --help` ends with it, README.md
#: holds the same (tests/cli/test_cli_habits.py keeps the two equal).  `\b` keeps
#: click from re-wrapping the rows.
EXIT_CODES = """\b
Exit codes:
  0    success: done, valid, no difference (check, plan, explain, targets, schema,
       probe, import: 0 or 2 only)
  1    a difference was found: build --check or pre-commit (a file differs), diff
       (the two sides differ), audit (drift), changed (a host changes), measure
       (a count the Plan promised away)
  2    invalid input or usage: diagnostics on stderr, nothing written; with many
       hosts, a host failed (the others are still written)
  3    internal error, a bug in hostc (HOSTC_DEBUG=1 shows the traceback)
  130  interrupted (Ctrl-C)"""


#: `hostc --help`'s command list, in the order a newcomer meets them (first-day-4 H5: init
#: came 12th of 14), each with a line that fits an 80-column terminal uncut.
COMMANDS: dict[str, str] = {
    "init": "Write a starting node.toml (and topology) for this machine.",
    "probe": "Read this machine's topology into a snapshot.",
    "import": "Convert hardware descriptions into a snapshot.",
    "check": "Validate SPEC against its topology.",
    "plan": "Show the partition and every setting with its reason.",
    "explain": "Show where one setting comes from and where it goes.",
    "build": "Compile SPEC into OS artifacts.",
    "diff": "Show what changes between two specs, and what it costs.",
    "changed": "What a build costs a running host: reboot, restart, live.",
    "pre-commit": "Check that committed outputs match their inputs.",
    "audit": "Did SPEC take effect on this host?",
    "measure": "Count what still interrupts the isolated CPUs.",
    "bench": "Run a benchmark N times; compare two runs' figures.",
    "targets": "List the targets --target accepts.",
    "schema": "Print the JSON Schema of node.toml or a topology.",
    "completion": "Print the shell completion script (bash, zsh, fish).",
}


#: An Examples section for the commands a newcomer runs first (first-day-4 H5), as
#: kubectl's -h has; each line runs as written from a clone's top folder.
EXAMPLES: dict[str, str] = {
    "init": "hostc init                     # node.toml + topology.toml for this machine",
    "check": "hostc check examples/h100-4gpu-inference/node.toml",
    "plan": "hostc plan examples/h100-4gpu-inference/node.toml --format svg > plan.svg",
    "explain": "hostc explain examples/h100-4gpu-inference/node.toml max_cstate",
    "build": "hostc build examples/h100-4gpu-inference/node.toml --target all --out out/\n"
    "hostc build examples/fleet/hosts/ --target cloud-init --out out/   # many hosts\n"
    "hostc build node.toml --target cloud-init -o - > user-data",
    "diff": "hostc diff old/node.toml node.toml\n"
    "hostc diff examples/fleet/hosts/@HEAD~1 examples/fleet/hosts/      # every host, grouped\n"
    "hostc diff examples/fleet/hosts/dgx-r1-01.toml@HEAD~1 examples/fleet/hosts/dgx-r1-01.toml"
    " --format html > review.html",
    "audit": "hostc audit node.toml            # on the host, after boot",
}


class _Listed(typer.core.TyperGroup):
    """The group whose help lists COMMANDS in their order with their short lines."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: list(COMMANDS).index(n) if n in COMMANDS else 99)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None and cmd_name in COMMANDS:
            command.short_help = COMMANDS[cmd_name]
            if cmd_name in EXAMPLES:
                lines = EXAMPLES[cmd_name].splitlines()
                command.epilog = "\b\nExamples:\n" + "\n".join(f"  {x}" for x in lines)
        return command


app = typer.Typer(
    name="hostc",
    cls=_Listed,
    help="Compile GPU host tuning from node.toml and a topology snapshot.",
    epilog=EXIT_CODES,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def version() -> str:
    """hostc's version, from the installed package's metadata (pyproject.toml's)."""
    from importlib.metadata import version as installed

    return installed("hostc")


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"hostc {version()}")
        raise typer.Exit(0)


@app.callback()
def _root(
    _version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="print `hostc X.Y.Z` and exit",
        ),
    ] = False,
) -> None:
    """Compile GPU host tuning from node.toml and a topology snapshot."""


import_app = typer.Typer(
    help="Convert hardware descriptions into a hostc snapshot.", no_args_is_help=True
)


app.add_typer(import_app, name="import")


T = TypeVar("T")


SpecArg = Annotated[Path, typer.Argument(help="the node.toml spec", show_default=False)]


TopologyOpt = Annotated[
    Path | None, typer.Option("--topology", help="topology snapshot (overrides host.topology)")
]


#: The longest message, hint or key path printed (a value quoted in it is cut first).
SHOW_MAX = 1000


#: The longest source line shown under a diagnostic.
LINE_MAX = 120


def _clean(text: str | None, limit: int = SHOW_MAX) -> str | None:
    """One printable line: terminal-unsafe characters escaped (`diagnostics.printable`),
    cut to `limit` with an ellipsis."""
    if text is None:
        return None

    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(d: Diagnostic) -> str:
    """The raw form, plus the offending source line (Butane's snippet, without carets).

    The line is shown only for a diagnostic with a key path: the file parsed as
    TOML and is the spec or a snapshot.  An error about a file that is not
    hostc's (a syntax error, a file that is not text, an import source that is
    not what it claims) shows no content from it: it may be a secret.
    """
    d = attrs.evolve(
        d,
        path=label(_clean(str(d.path)) or "") if d.path else d.path,
        message=_clean(d.message) or "",
        hint=_clean(d.hint),
        file=_clean(d.file),
    )
    text = d.render()
    if d.file and d.line and d.path:
        try:
            source = read_text_bounded(Path(d.file), limit=8 << 20, what="file")
        except HostcError:
            return text
        lines = source.splitlines()
        if 0 < d.line <= len(lines):
            line = _clean(lines[d.line - 1].rstrip(), LINE_MAX)
            head, sep, rest = text.partition("\n")
            text = f"{head}\n  {d.line:>4} | {line}{sep}{rest}"
    return text


def _fail(diags: tuple[Diagnostic, ...] | list[Diagnostic]) -> NoReturn:
    for d in diags:
        typer.echo(_show(d), err=True)
    raise typer.Exit(2)


def _warn(diags: list[Diagnostic]) -> None:
    for d in diags:
        typer.echo(_show(d), err=True)


def _guard(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except HostcError as e:
        _fail(e.diagnostics)


StrictOpt = Annotated[
    bool, typer.Option("--strict", help="treat warnings as errors (exit 2, nothing written)")
]


def _strict(warnings: list[Diagnostic], strict: bool) -> None:
    """With --strict a warning is an error: reported as one, and nothing is written."""
    if strict and warnings:
        _fail([attrs.evolve(d, severity=Severity.ERROR) for d in warnings])


def _compile(spec_path: Path, topology: Path | None) -> tuple[Plan, list[Diagnostic]]:
    return api.compile_file(spec_path, topology)


JobsOpt = Annotated[
    int | None,
    typer.Option("--jobs", "-j", min=1, help="worker processes for many hosts (default: CPUs)"),
]
PruneOpt = Annotated[
    bool,
    typer.Option(
        "--prune",
        help="many hosts: remove DIR/<host>/ of hosts no longer selected (only the files "
        "their last build wrote); without it they are reported",
    ),
]


def _usage(message: str) -> NoReturn:
    typer.echo(f"error: {_clean(message)}", err=True)
    raise typer.Exit(2)


@functools.cache
def _command(name: str) -> Any:
    """The click command for `hostc NAME …`, built once per name (typer builds it again
    on every call): a group holding NAME alone (building every command's parameters
    from its signature costs a tenth of a cold build, and click only ever looks at the
    one named); the whole tree for `--help`, no name or a name that is not a command
    (its usage error lists them all), and for an option such as `--version` or `-h`
    (no command has that name)."""
    commands = [c for c in app.registered_commands if _name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return typer.main.get_command(app)
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    return typer.main.get_group(one)


def _name(command: CommandInfo) -> str:
    if command.name:
        return command.name
    return typer.main.get_command_name(command.callback.__name__) if command.callback else ""


def is_fleet(spec: Path) -> bool:
    return is_selection(str(spec))
