"""`hostc init`: write a commented starting spec for this machine or a snapshot,
registered on the app `hostc.cli.main` runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hostc import api
from hostc.cli.base import _fail, _guard, app
from hostc.diagnostics import file_error

if TYPE_CHECKING:
    from hostc.topology.model import Topology

#: the roles of hostc.vocab.Role (the CLI imports only the API)
ROLES = ("inference", "training", "general")


def _refuse_unwritable(writes: list[Path]) -> None:
    """Every destination `api.write_file` would refuse (a link, a FIFO, a device, a
    folder under /dev), all named, before anything is probed or written."""
    refused = []
    for p in writes:
        try:
            api.check_file(p)
        except OSError as e:
            refused.append(file_error(str(p), f"refusing to write: {e.strerror or e}"))
    if refused:
        _fail(refused)


def _write(path: Path, text: str) -> None:
    try:
        api.write_file(path, text, parents=True)
    except OSError as e:
        _fail([file_error(str(path), f"cannot write: {e.strerror or e}")])


def _refuse_existing(writes: list[Path]) -> None:
    there = [p for p in writes if p.exists()]
    if there:
        _fail(
            [
                file_error(str(p), "exists; not overwritten", hint="--force overwrites it")
                for p in there
            ]
        )


def _snapshot(
    topology: Path | None, root: Path, output: Path
) -> tuple[Topology, str, Path | None, str]:
    """The snapshot the spec starts from, how the spec names it, the root probed (None:
    read from --topology) and the default host name."""
    if topology is not None:
        topo = _guard(lambda: api.read_topology(topology))
        return (
            topo,
            os.path.relpath(topology.resolve(), output.resolve().parent),
            None,
            topology.stem,
        )
    topo = _guard(lambda: api.probe(root))
    default = os.uname().nodename if root == Path("/") else "node"  # gethostname(2)
    return topo, "topology.toml", root, default


@app.command("init")
def init_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", help="the spec to write")] = Path(
        "node.toml"
    ),
    role: Annotated[
        str | None,
        typer.Option(
            "--role",
            help="the preset the host gets: "
            + ", ".join(ROLES)
            + " (default: inference with a GPU, general without)",
        ),
    ] = None,
    topology: Annotated[
        Path | None,
        typer.Option(
            "--topology", help="a snapshot (hostc probe -o, hostc import) instead of probing"
        ),
    ] = None,
    root: Annotated[
        Path,
        typer.Option(
            "--root", help="probe /sys and /proc under DIR (default: this machine)", metavar="DIR"
        ),
    ] = Path("/"),
    name: Annotated[
        str | None, typer.Option("--name", help="host name (default: hostname)")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite existing files")] = False,
) -> None:
    """Write a commented starting spec that `hostc check` accepts, asking nothing.  It
    probes this machine into topology.toml beside the spec, or refers to --topology.
    Warns about a VM, a host too small to isolate, no GPU, no cpufreq driver."""
    snap = output.parent / "topology.toml"
    writes = [output] if topology is not None else [output, snap]
    _refuse_unwritable(writes)
    if not force:
        _refuse_existing(writes)
    topo, ref, probed, default = _snapshot(topology, root, output)
    chosen = role or ("inference" if topo.gpus else "general")  # a clean start: no warning
    text, warnings = _guard(
        lambda: api.start_spec(topo, Path(ref).as_posix(), name or default, chosen, probed)
    )
    # what it writes must pass `hostc check`: compile it first, write nothing on failure
    spec = _guard(lambda: api.loads_spec(text, str(output)))
    _guard(lambda: api.compile_plan(spec, topo, spec_file=str(output)))
    if topology is None:
        _write(snap, _guard(lambda: api.dumps_snapshot(topo)))
        typer.echo(f"wrote {snap}", err=True)
    _write(output, text)
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    typer.echo(f"wrote {output}; next: hostc check {output} && hostc plan {output}", err=True)
