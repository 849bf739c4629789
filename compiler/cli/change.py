"""`hostc changed SPEC --out DIR`: what rolling out this build costs the hosts that run
the build recorded in DIR (a reboot, the units restarted, a kubelet reset, what applies
live), per host and summed over a fleet.  Part of the CLI: it prints and exits."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from hostc import api
from hostc.cli.base import JobsOpt, TopologyOpt, _compile, _guard, _warn, app, is_fleet
from hostc.cli.text import write_costs
from hostc.diagnostics import json_text


@app.command("changed")
def changed_cmd(
    spec: Annotated[
        Path,
        typer.Argument(
            help="the node.toml spec, or many hosts: a folder, glob or @list",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="the earlier build (DIR/<host>/ for many hosts), as written"
        ),
    ],
    topology: TopologyOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="the disruption as JSON")] = False,
    jobs: JobsOpt = None,
) -> None:
    """What this build costs a running host against the build recorded in --out: reboot,
    restarts, kubelet reset, what applies live.  Exit 0 without a change, 1 with one, 2
    on bad input."""

    if is_fleet(spec):
        from hostc.api.fleet import Job
        from hostc.cli.fleet import many

        many(spec, Job("changed", out=out, topology=topology), jobs, as_json=as_json)
    plan, warnings = _guard(lambda: _compile(spec, topology))
    _warn(warnings)
    found = _guard(lambda: api.changed(plan, out))
    if as_json:
        sys.stdout.write(json_text({"disruption": found.to_json()}, ascii_only=True) + "\n")
    else:
        write_costs(sys.stdout, found.line() + "\n", {found.line(): found.summary})
    if found.files or found.kubelet_reset:
        raise typer.Exit(1)
