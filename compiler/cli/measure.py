"""`hostc measure SPEC`: what still interrupts the Plan's isolated CPUs over a window,
each count attributed to the Plan setting that should have prevented it or to a kernel
mechanism no setting controls.  Part of the CLI: it prints and exits."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hostc.api import measureargs as opts
from hostc.cli.base import (
    SpecArg,
    TopologyOpt,
    _clean,
    _compile,
    _guard,
    _usage,
    _warn,
    app,
    is_fleet,
)
from hostc.cli.report_json import JsonOpt

WindowOpt = Annotated[
    float,
    typer.Option(
        "--window",
        "-w",
        help=f"seconds to count for (0 to {opts.MAX_WINDOW:g}; with --after: the copies' "
        "/proc/uptime difference is used)",
    ),
]
RootOpt = Annotated[
    Path, typer.Option("--root", help="count under DIR, a copy of a host's / (default: this host)")
]
AfterOpt = Annotated[
    Path | None,
    typer.Option(
        "--after",
        help="a second copy of the host taken at the window's end: count between --root "
        "and it, without waiting",
    ),
]
RecordOpt = Annotated[
    Path | None,
    typer.Option(
        "--record",
        help=f"also write the JSON to FILE (default as root on this host: {opts.RECORD}, which "
        "`hostc audit` shows; never by default otherwise)",
    ),
]
NoRecordOpt = Annotated[
    bool, typer.Option("--no-record", help="write no record, not even the default")
]


@app.command("measure")
def measure_cmd(
    spec: SpecArg,
    topology: TopologyOpt = None,
    seconds: WindowOpt = 10.0,
    root: RootOpt = Path("/"),
    after: AfterOpt = None,
    as_json: JsonOpt = False,
    record: RecordOpt = None,
    no_record: NoRecordOpt = False,
) -> None:
    """Count what interrupts each isolated CPU for a window (device IRQs by line, ticks,
    IPIs, softirqs by kind, other threads by name, NUMA balancing) and attribute each count
    to the Plan setting that should have prevented it, or to a kernel mechanism.  Exit 0
    when no count breaks a promise of the Plan, 1 when one does, 2 on bad input."""
    if is_fleet(spec):
        _usage("hostc measure counts on one host: pass that host's node.toml")
    if after is not None and root == Path("/"):
        _usage("--after needs --root: both are copies of the host, taken a window apart")
    if record is not None and no_record:
        _usage("pass --record FILE or --no-record, not both")
    if not 0 <= seconds <= opts.MAX_WINDOW:
        _usage(f"--window must be 0 to {opts.MAX_WINDOW:g} seconds")
    plan, warnings = _guard(lambda: _compile(spec, topology))
    _warn(warnings)
    host = str(root) if after is None else f"{root} .. {after}"
    if after is None and seconds > 0:  # --json too: stdout is the document, this is stderr
        # said the moment the window is about to open: a person knows why nothing moves,
        # and a script can start the load it wants counted on this line
        typer.echo(f"hostc measure: counting for {seconds:g} s under {_clean(str(root))}", err=True)
    from hostc.api import measure as m  # the readers and the report: this command only

    found = _guard(lambda: m.measure(plan, seconds, root, after))
    shown = str(spec)
    sys.stdout.write((m.measure_json if as_json else m.measure_text)(found, host, shown))
    target = None if no_record else record or m.default_record(root)
    if target is not None:
        doc = m.measure_doc(found, host, shown)
        written = _guard(lambda: m.write_record(doc, target))
        typer.echo(f"hostc measure: recorded in {_clean(str(written))}", err=True)
    if found.excess:
        raise typer.Exit(1)


def last_record(root: Path, capture: Path | None) -> str:
    """What `hostc audit` adds from the last `hostc measure` record under its root ("":
    none there, or a capture archive, which holds no record)."""
    if capture is not None:
        return ""
    from hostc.api import measure as m

    found = _guard(lambda: m.last_measure(root))
    return "\n" + found if found else ""
