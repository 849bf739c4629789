"""`--json` for the commands that report but write nothing (`hostc check`, `hostc
targets`): the same data as their text, as one JSON document on stdout.  The
diagnostics have the shape `hostc build --json` of many hosts reports
(`Diagnostic.to_json`: severity, path, message, hint, file, line), and the exit codes
are the text form's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import attrs
import typer

from hostc import api
from hostc.cli.base import _warn
from hostc.diagnostics import HostcError, Severity, json_text

JsonOpt = Annotated[bool, typer.Option("--json", help="the report as JSON on stdout")]


def _emit(doc: object) -> None:
    typer.echo(json_text(doc))


def check(spec: Path, topology: Path | None, strict: bool) -> NoReturn:
    """`hostc check SPEC --json`: `{"spec", "ok", "warnings", "errors"}`; exit 2 when an
    error was found (a warning under --strict is one), else 0.  The diagnostics are
    printed on stderr too, as without --json."""
    try:
        _, found = api.compile_file(spec, topology)
    except HostcError as e:
        found = list(e.diagnostics)
    errors = [d for d in found if d.severity is Severity.ERROR]
    warnings = [d for d in found if d.severity is not Severity.ERROR]
    if strict:
        errors += [attrs.evolve(d, severity=Severity.ERROR) for d in warnings]
        warnings = []
    _warn([*errors, *warnings])
    _emit(
        {
            "spec": str(spec),
            "ok": not errors,
            "warnings": [d.to_json() for d in warnings],
            "errors": [d.to_json() for d in errors],
        }
    )
    raise typer.Exit(2 if errors else 0)


def targets() -> None:
    """`hostc targets --json`: `{"targets": [{"name", "role", "in_all", "summary"}]}`,
    in the order the text lists them; `in_all`: `--target all` includes it (where it
    applies to the host; wrappers are built only when named)."""
    _emit(
        {
            "targets": [
                {
                    "name": name,
                    "role": str(t.role),
                    "in_all": str(t.role) == "file",
                    "summary": t.summary,
                }
                for name, t in api.targets().items()
            ]
        }
    )
