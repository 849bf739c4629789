"""`hostc build`'s three output modes, one function each: `--check` (compare with --out),
`--out` (write the tree), and stdout (one artifact's bytes, or the --json manifest).
Part of the CLI: it prints and exits, and reaches hostc only through `hostc.api`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import typer

from hostc import api
from hostc.cli.base import _clean, _fail, _guard, _usage
from hostc.cli.text import wrote
from hostc.diagnostics import Diagnostic, file_error, json_text

if TYPE_CHECKING:
    from hostc.api.fleet import Job as FleetJob
    from hostc.artifact import Artifact
    from hostc.delivery.owned import Written
    from hostc.plan.model import Plan


def judge_out(job: FleetJob, out: Path) -> FleetJob:
    """A fleet build's `out`, judged once for every host (`hostc.delivery.output.Judged`):
    refused or accepted (`api.check_out`: one error, exit 2, not one per host), and the
    process's umask read, instead of their system calls again per host."""
    return attrs.evolve(job, judged=_guard(lambda: api.check_out(out)))


def need_compared(out: Path) -> None:
    """`--check` compares with a build made before: without one, one error (exit 2),
    for one host or a whole fleet, instead of every file of every host shown as new."""
    if not out.is_dir():
        _fail(
            [
                file_error(
                    str(out),
                    "--check: there is no such directory to compare against",
                    hint="build it once with --out DIR (without --check), then compare",
                )
            ]
        )


def compare(
    out: Path, artifacts: list[Artifact], warnings: list[Diagnostic], *, as_json: bool, quiet: bool
) -> None:
    """`--check`: exit 1 and print the diffs (or the JSON report) when `out` differs."""
    need_compared(out)
    found = api.differences(artifacts, out)
    if as_json:
        doc = {
            "ok": not found,
            "differences": [{"path": rel, "diff": text} for rel, text in found],
            "warnings": [d.to_json() for d in warnings],
        }
        typer.echo(json_text(doc, ascii_only=True))
    elif found:
        sys.stdout.write("".join(text for _, text in found))
        n = len(found)
        counted = "1 file differs" if n == 1 else f"{n} files differ"
        typer.echo(f"{_clean(str(out))}: {counted}", err=True)
    if found:
        raise typer.Exit(1)
    if not quiet and not as_json:
        typer.echo(f"{_clean(str(out))} is up to date", err=True)


def write_out(
    out: Path,
    plan: Plan,
    artifacts: list[Artifact],
    warnings: list[Diagnostic],
    inputs: list[Path],
    as_json: bool,
    quiet: bool,
    targets: list[str],
) -> None:
    """`--out DIR`: write the tree atomically, never over the build's own `inputs`, and
    remove what the previous build there wrote and this one no longer makes."""
    try:
        done = _guard(lambda: api.write_build(plan, artifacts, out, inputs, targets))
    except OSError as e:  # the file it names (a device, FIFO or socket there), else DIR
        _fail([file_error(str(e.filename or out), f"cannot write: {e.strerror or e}")])
    if as_json:
        _manifest(plan, artifacts, warnings, out, done)
    if not quiet:
        typer.echo(wrote(list(done.written), out, len(done.unchanged)), err=True)
    for path in done.removed if not quiet else ():
        typer.echo(
            f"removed {_clean(str(path))}: the previous build wrote it, this one does not", err=True
        )
    for path, why in done.kept:
        typer.echo(f"warning: {_clean(str(path))}: kept: {why}", err=True)


def to_stdout(
    plan: Plan, artifacts: list[Artifact], warnings: list[Diagnostic], as_json: bool
) -> None:
    """No --out: the JSON manifest, or the one artifact's bytes (two need --out)."""
    if as_json:
        _manifest(plan, artifacts, warnings, None)
        return
    if len(artifacts) != 1:
        names = ", ".join(f"{a.target}:{a.path}" for a in artifacts)
        _usage(
            f"this selection makes {len(artifacts)} artifacts ({names}); pass --out DIR "
            "or pick a target that makes one"
        )
    sys.stdout.flush()
    sys.stdout.buffer.write(artifacts[0].data)


def _manifest(
    plan: Plan,
    artifacts: list[Artifact],
    warnings: list[Diagnostic],
    out: Path | None,
    done: Written | None = None,
) -> None:
    """`--json`: each artifact (and where it was written), how it is applied, warnings,
    and with --out the previous build's files removed or kept, and those already in
    place (left untouched)."""
    doc: dict[str, object] = {
        "artifacts": api.manifest(artifacts, out),
        **api.apply_manifest(plan, artifacts),
        "warnings": [d.to_json() for d in warnings],
    }
    if done is not None:
        doc["removed"] = [str(p) for p in done.removed]
        doc["kept"] = [{"path": str(p), "why": why} for p, why in done.kept]
        doc["unchanged"] = [str(p) for p in done.unchanged]
    typer.echo(json_text(doc, ascii_only=True))
