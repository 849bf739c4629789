"""`hostc audit`: did a spec take effect on this host (or a tree, or a capture)?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hostc import api
from hostc.cli.base import SpecArg, TopologyOpt, _compile, _guard, _usage, _warn, app
from hostc.cli.text import other_machine


@app.command("audit")
def audit_cmd(
    spec: SpecArg,
    topology: TopologyOpt = None,
    root: Annotated[
        Path, typer.Option("--root", help="audit the tree under DIR (default: this host)")
    ] = Path("/"),
    capture: Annotated[
        Path | None,
        typer.Option("--capture", help="audit an archive from `hostc probe --capture --spec`"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the findings as JSON")] = False,
) -> None:
    """Did SPEC take effect?  Exit 0 when every observable setting is applied, 1 on drift
    (a setting differs or waits for a reboot), 2 on bad input."""
    if capture is not None and root != Path("/"):
        _usage("pass --root DIR or --capture FILE, not both")
    where = capture if capture is not None else root
    plan, warnings = _guard(lambda: _compile(spec, topology))
    _warn(warnings)
    findings = _guard(lambda: api.audit(plan, where))
    if (other := other_machine(findings)) is not None:  # said first: every row is moot
        typer.echo(f"warning: {other}", err=True)
    if as_json:
        sys.stdout.write(api.audit_json(findings, where))
    else:
        from hostc.cli.measure import last_record  # the last `hostc measure` there

        sys.stdout.write(api.audit_text(findings) + last_record(root, capture))
    if api.drift(findings):
        raise typer.Exit(1)
