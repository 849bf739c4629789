"""The `hostc` command: the only module that prints or exits.

Exit codes: 0 success, 1 `--check` found a difference, 2 invalid input or
usage (diagnostics on stderr, nothing written), 3 internal error (a bug in
hostc: one line on stderr, the traceback with HOSTC_DEBUG=1).  A traceback is
a bug.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import typer

from hostc.diagnostics import Diagnostic, HostcError

if TYPE_CHECKING:
    from hostc.artifact import Artifact
    from hostc.plan import Plan
    from hostc.topology.model import Topology

app = typer.Typer(
    name="hostc",
    help="Compile GPU host tuning from node.toml and a topology snapshot.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    no_args_is_help=True,
)
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
    """One printable line: control characters escaped, cut to `limit` with an ellipsis."""
    if text is None:
        return None
    from hostc.spec.text import control_char

    if control_char(text) is not None:
        text = "".join(f"\\x{ord(c):02x}" if control_char(c) else c for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(d: Diagnostic) -> str:
    """The raw form, plus the offending source line (Butane's snippet, without carets).

    The line is shown only for a diagnostic with a key path: the file parsed as
    TOML and is the spec or a snapshot.  An error about a file that is not
    hostc's (a syntax error, a file that is not text, an import source that is
    not what it claims) shows no content from it: it may be a secret.
    """
    import attrs

    d = attrs.evolve(
        d,
        path=_clean(d.path) or "",
        message=_clean(d.message) or "",
        hint=_clean(d.hint),
        file=_clean(d.file),
    )
    text = d.render()
    if d.file and d.line and d.path:
        from hostc.topology.readfile import read_text_bounded

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
        import attrs

        from hostc.diagnostics import Severity

        _fail([attrs.evolve(d, severity=Severity.ERROR) for d in warnings])


def _emit(spec_path: Path, plan: Plan, names: list[str]) -> list[Artifact]:
    """Target errors name the spec they were asked for (never a bare `<input>`)."""
    from hostc import api
    from hostc.diagnostics import with_file

    try:
        return api.emit(plan, names)
    except HostcError as e:
        raise HostcError(with_file(e.diagnostics, str(spec_path))) from None


def _compile(spec_path: Path, topology: Path | None) -> tuple[Plan, list[Diagnostic]]:
    from hostc import api

    return api.compile_file(spec_path, topology)


@app.command()
def build(
    spec: SpecArg,
    topology: TopologyOpt = None,
    target: Annotated[
        list[str] | None,
        typer.Option("--target", "-t", help="target name, repeatable; `all` for every one"),
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
) -> None:
    """Compile SPEC into OS artifacts."""
    from hostc import api

    plan, warnings = _guard(lambda: _compile(spec, topology))
    _strict(warnings, strict)
    artifacts = _guard(lambda: _emit(spec, plan, target or ["all"]))
    _warn(warnings)
    if check:
        if out is None:
            _usage("--check needs --out DIR to compare against")
        from hostc.output import differences

        found = differences(artifacts, out)
        if as_json:
            doc = {
                "ok": not found,
                "differences": [{"path": rel, "diff": text} for rel, text in found],
                "warnings": [d.to_json() for d in warnings],
            }
            typer.echo(json.dumps(doc, indent=2))
        elif found:
            sys.stdout.write("".join(text for _, text in found))
        if found:
            raise typer.Exit(1)
        if not quiet and not as_json:
            typer.echo(f"{out} is up to date", err=True)
        return
    if out is not None:
        try:
            written = _guard(lambda: api.write(artifacts, out))
        except OSError as e:
            from hostc.diagnostics import file_error

            _fail([file_error(str(out), f"cannot write: {e.strerror or e}")])
        if as_json:
            rows = api.manifest(artifacts, out)
            doc = {
                "artifacts": rows,
                **api.apply_manifest(plan, artifacts),
                "warnings": [d.to_json() for d in warnings],
            }
            typer.echo(json.dumps(doc, indent=2))
        if not quiet:
            typer.echo(f"wrote {len(written)} files under {out}", err=True)
        return
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "artifacts": api.manifest(artifacts, None),
                    **api.apply_manifest(plan, artifacts),
                    "warnings": [d.to_json() for d in warnings],
                },
                indent=2,
            )
        )
        return
    if len(artifacts) != 1:
        names = ", ".join(f"{a.target}:{a.path}" for a in artifacts)
        _usage(
            f"this selection makes {len(artifacts)} artifacts ({names}); pass --out DIR "
            "or pick a target that makes one"
        )
    sys.stdout.flush()
    sys.stdout.buffer.write(artifacts[0].data)


def _usage(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@app.command("check")
def check_cmd(spec: SpecArg, topology: TopologyOpt = None, strict: StrictOpt = False) -> None:
    """Validate SPEC against its topology; print every problem."""
    _, warnings = _guard(lambda: _compile(spec, topology))
    _strict(warnings, strict)
    _warn(warnings)
    typer.echo(f"{spec}: ok" + (f" ({len(warnings)} warning(s))" if warnings else ""))


@app.command("plan")
def plan_cmd(
    spec: SpecArg,
    topology: TopologyOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="the Plan as JSON")] = False,
    strict: StrictOpt = False,
) -> None:
    """Show the partition per NUMA node, then every setting with its reason."""
    from hostc import plan_view

    plan, warnings = _guard(lambda: _compile(spec, topology))
    _strict(warnings, strict)
    _warn(warnings)
    if as_json:
        sys.stdout.write(plan_view.dumps(plan))
    else:
        sys.stdout.write(plan_view.render(plan))


@app.command("targets")
def targets_cmd() -> None:
    """List the targets `--target` accepts."""
    from hostc import api

    reg = api.targets()
    width = max(len(n) for n in reg)
    for name, t in reg.items():
        typer.echo(f"{name.ljust(width)}  {t.summary}")


@app.command("schema")
def schema_cmd(
    which: Annotated[str, typer.Argument(help="node or topology")] = "node",
) -> None:
    """Print the JSON Schema of node.toml or of the topology snapshot."""
    from hostc import schema

    if which not in schema.SCHEMAS:
        _usage(f"unknown schema {which!r}; choose from {', '.join(schema.SCHEMAS)}")
    sys.stdout.write(schema.dumps(which))


def _emit_snapshot(topo: Topology, output: Path | None) -> None:
    from hostc import ingest
    from hostc.output import write_text

    text = ingest.dumps_snapshot(topo)
    if output is None:
        sys.stdout.write(text)
    else:
        if output.is_dir():  # `-o .`: the snapshot goes into the directory
            output = output / "topology.toml"
        try:
            write_text(output, text)
        except OSError as e:
            _usage(f"cannot write {output}: {e.strerror or e}")
        typer.echo(f"wrote {output}", err=True)


def _read_input(path: Path) -> str:
    from hostc import ingest

    return _guard(lambda: ingest.read_source(path))


OutOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="snapshot file to write (default: stdout)")
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
        from hostc import ingest

        text = _read_input(file)
        base_topo = _guard(lambda: ingest.read_snapshot(base)) if base is not None else None
        topo = _guard(
            lambda: ingest.import_source(
                kind, text, file=str(file), base=base_topo, arch=arch, base_file=str(base)
            )
        )
        _emit_snapshot(topo, output)

    return import_cmd


def _register_importers() -> None:
    from hostc.ingest import IMPORT_KINDS

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
        typer.Option("--capture", help="write an archive of exactly the files probe reads"),
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
    from hostc import ingest

    if spec is not None and capture is None:
        _usage("--spec needs --capture FILE")
    if capture is not None:
        archive = capture
        extra = None
        if spec is not None:
            from hostc.audit.run import audit_state

            plan, _ = _guard(lambda: _compile(spec, None))
            extra = audit_state(plan, root)
        paths = _guard(lambda: ingest.capture(archive, root, extra))
        typer.echo(f"captured {len(paths)} files into {capture}", err=True)
        return
    smi = _read_input(nvidia_smi_topo) if nvidia_smi_topo is not None else None
    _emit_snapshot(_guard(lambda: ingest.probe(root, smi)), output)


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
    from hostc import audit as report
    from hostc.audit.run import audit_root

    if capture is not None and root != Path("/"):
        _usage("pass --root DIR or --capture FILE, not both")
    where = capture if capture is not None else root
    plan, warnings = _guard(lambda: _compile(spec, topology))
    _warn(warnings)
    findings = _guard(lambda: audit_root(plan, where))
    if as_json:
        sys.stdout.write(report.dumps(findings, source=where))
    else:
        sys.stdout.write(report.render(findings))
    if report.drift(findings):
        raise typer.Exit(1)


def main() -> None:
    """Console entry point: a traceback never reaches the user.

    The cyclic garbage collector is off while the command runs: a short-lived
    process frees its memory by reference counting, and the collections that
    building ~100 attrs classes and cattrs/jinja2 code would trigger cost about a
    tenth of a cold `hostc build` (benchmarks/run.py, P1).
    """
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:
        if os.environ.get("HOSTC_DEBUG"):
            raise
        typer.echo(
            f"hostc: internal error (a bug, please report it): {type(e).__name__}: {e}\n"
            "  rerun with HOSTC_DEBUG=1 for the traceback",
            err=True,
        )
        sys.exit(3)
    finally:
        if collecting:
            gc.enable()
