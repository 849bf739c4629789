"""`hostc probe` and `hostc import KIND`: commands that write topology snapshots,
registered on the app `hostc.cli.main` runs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hostc import api
from hostc.api import IMPORT_KINDS
from hostc.cli.text import found
from hostc.diagnostics import file_error

if TYPE_CHECKING:
    from hostc.topology.model import Topology

from hostc.cli.base import _clean, _compile, _fail, _guard, _usage, app, import_app

#: what `probe --root DIR` reads below DIR: whole trees, and single files
PROBED_TREES = ("sys", "proc", "boot")
PROBED_FILES = ("etc/os-release", "usr/lib/os-release")


def _probed(root: Path) -> tuple[tuple[Path, ...], list[Path]]:
    """(trees, files) a probe of `root` reads: a capture archive is one file."""
    if not root.is_dir():
        return (), [root]
    return tuple(root / t for t in PROBED_TREES), [root / f for f in PROBED_FILES]


def _inside(path: Path, trees: tuple[Path, ...]) -> bool:
    try:
        resolved = path.resolve()
        bases = [t.resolve() for t in trees]
    except (OSError, RuntimeError):
        return False
    return any(resolved == b or b in resolved.parents for b in bases)


def _emit_snapshot(
    topo: Topology, output: Path | None, inputs: list[Path | None], trees: tuple[Path, ...] = ()
) -> None:
    named = [str(p) for p in inputs if p is not None]
    text = _guard(lambda: api.dumps_snapshot(topo, named[0] if named else "<snapshot>"))
    if output is None or output == STDOUT:
        sys.stdout.write(text)
        typer.echo(found(topo), err=True)
    else:
        if output.is_dir():  # `-o .`: the snapshot goes into the directory
            output = output / "topology.toml"
        clash = api.overwrites_input([output], [p for p in inputs if p is not None])
        if clash is not None or _inside(output, trees):
            _fail(
                [
                    file_error(
                        str(output),
                        "refusing to write: the snapshot would overwrite its own input",
                        hint="write it to another file (-o topology.toml)",
                    )
                ]
            )
        try:
            api.write_snapshot(text, output)
        except OSError as e:
            _usage(f"cannot write {output}: {e.strerror or e}")
        typer.echo(f"wrote {_clean(str(output))}: {found(topo)}", err=True)


def _read_input(path: Path) -> str:
    return _guard(lambda: api.read_source(path))


#: `-o -`: standard output (hostc replaces regular files only, never a device or FIFO)
STDOUT = Path("-")

OutOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="snapshot file to write (default and `-`: stdout)"),
]


FileArg = Annotated[Path, typer.Argument(help="the saved output to convert", show_default=False)]


ArchOpt = Annotated[
    str | None,
    typer.Option("--arch", help="machine architecture (uname -m) when the input does not say"),
]


BaseOpt = Annotated[
    Path | None,
    typer.Option(
        "--base",
        help="snapshot of the same machine to complete: facts it lacks are filled in, "
        "facts both know must agree",
    ),
]


def import_command(kind: str) -> Callable[..., None]:
    """The one `hostc import KIND` command body, for every kind."""

    def import_cmd(
        file: FileArg, output: OutOpt = None, base: BaseOpt = None, arch: ArchOpt = None
    ) -> None:
        text = _read_input(file)
        base_topo = _guard(lambda: api.read_snapshot(base)) if base is not None else None
        topo = _guard(
            lambda: api.import_source(
                kind, text, file=str(file), base=base_topo, arch=arch, base_file=str(base)
            )
        )
        _emit_snapshot(topo, output, [file, base])

    return import_cmd


def _register_importers() -> None:
    for kind, summary in IMPORT_KINDS.items():
        import_app.command(kind, help=summary)(import_command(kind))


_register_importers()


@app.command("probe")
def probe_cmd(
    output: OutOpt = None,
    root: Annotated[
        Path,
        typer.Option("--root", help="read /sys and /proc under DIR, or from a --capture archive"),
    ] = Path("/"),
    capture: Annotated[
        Path | None,
        typer.Option(
            "--capture", help="write an archive of exactly the files probe reads (`-`: stdout)"
        ),
    ] = None,
    nvidia_smi_topo: Annotated[
        Path | None,
        typer.Option("--nvidia-smi-topo", help="saved `nvidia-smi topo -m` output to merge"),
    ] = None,
    spec: Annotated[
        Path | None,
        typer.Option("--spec", help="with --capture: also the state `hostc audit SPEC` reads"),
    ] = None,
) -> None:
    """Read this machine's topology (or a captured one) into a snapshot."""
    if spec is not None and capture is None:
        _usage("--spec needs --capture FILE")
    if capture is not None:
        archive = capture
        extra = None
        if spec is not None:
            plan, _ = _guard(lambda: _compile(spec, None))
            extra = api.audit_state(plan, root)
        if archive == STDOUT:
            data = _guard(lambda: api.capture_bytes(root, extra))
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            return
        paths = _guard(lambda: api.capture(archive, root, extra))
        typer.echo(f"captured {len(paths)} files into {_clean(str(capture))}", err=True)
        return
    smi = _read_input(nvidia_smi_topo) if nvidia_smi_topo is not None else None
    trees, files = _probed(root)
    topo = _guard(lambda: api.probe(root, smi))
    _emit_snapshot(topo, output, [nvidia_smi_topo, *files], trees)
