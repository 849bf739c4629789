"""`hostc bench -- CMD…`, `hostc bench compare A B` and `hostc bench --ablate`: the
seeds' method (a baseline, one change, three repeats) as commands, registered on the
app `hostc.cli.main` runs.  The work is `hostc.api.bench`'s; this module prints and
exits: 0 done, 2 bad input or a failed run (nothing written), 130/143 interrupted
(an ablation restores every value first)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import typer.core

from hostc.api import benchargs as opts
from hostc.cli.base import TopologyOpt, _clean, _compile, _fail, _guard, _usage, _warn, app, version
from hostc.diagnostics import HostcError, json_text

if TYPE_CHECKING:
    from hostc.api import bench as b
    from hostc.plan.model import Plan

Say = Callable[[str], None]
RESTORED = "every value written was restored; nothing recorded"


class BenchGroup(typer.core.TyperGroup):
    """`hostc bench ARGS`: `compare` is the one subcommand; anything else (`--`, an
    option, the benchmark itself) is `hostc bench run ARGS`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


bench_app = typer.Typer(
    cls=BenchGroup,
    help="Run a benchmark N times and record what was in effect; compare two records; "
    "measure which live setting earns its place (--ablate).",
    no_args_is_help=True,
)
app.add_typer(bench_app, name="bench")


def _say(line: str) -> None:
    typer.echo(_clean(line, 4000), err=True)


def _better(text: str | None) -> b.Better | None:
    from hostc.api import bench as b

    if text is None:
        return None
    if text not in ("higher", "lower"):
        _usage(f"--better takes higher or lower, not {text!r}")
    return b.Better(text)


def _failed(e: b.RunFailed, restored: bool = False) -> NoReturn:
    """A failed run: its error, the last lines it printed, and what was written."""
    for d in e.diagnostics:
        typer.echo(d.render(), err=True)
    if e.tail:
        typer.echo("  its last lines:", err=True)
        for line in e.tail:
            typer.echo(f"  | {_clean(line, 300)}", err=True)
    typer.echo(
        "nothing recorded" + ("; every value written was restored" if restored else ""), err=True
    )
    raise typer.Exit(2)


def _summary(series: b.Series, figures: tuple[str, ...]) -> str:
    """Each named figure (default: the headline ones) over the runs."""
    from hostc.api import bench as b

    names = figures or tuple(f.name for f in series.runs[0].figures if f.headline)
    out = []
    for name in names:
        found = [f for r in series.runs for f in r.figures if f.name == name]
        if not found:
            _say(f"warning: no run printed a figure {name!r}")
            continue
        s = b.spread([f.value for f in found])
        unit = found[0].unit
        out.append(
            f"{name}: median {s.median:.6g} {unit} [{s.low:.6g}-{s.high:.6g}, MAD {s.mad:.3g}] "
            f"over {s.n} run{'s' if s.n > 1 else ''} ({found[0].better.value} is better)"
        )
    return "\n".join(out) + "\n"


def _record(doc: dict[str, Any], folder: Path | None, as_json: bool) -> None:
    from hostc.api import bench as b

    if as_json:
        sys.stdout.write(json_text(doc, ascii_only=True) + "\n")
    if folder is not None:
        try:
            path = b.save(folder, doc)
        except OSError as e:
            _usage(f"cannot write the record in {folder}: {e.strerror or e}")
        _say(f"wrote {path}")
    elif not as_json:
        _say("not recorded: pass --record DIR to keep it for `hostc bench compare`")


CommandArg = Annotated[
    list[str], typer.Argument(help="the benchmark and its arguments, after --", show_default=False)
]
RunsOpt = Annotated[
    int,
    typer.Option("-n", "--runs", min=1, max=opts.MAX_RUNS, help="runs (3: the seeds' method)"),
]
ReaderOpt = Annotated[
    str, typer.Option("--reader", help=f"how figures are read: {opts.READER_HELP}")
]
BetterOpt = Annotated[
    str | None,
    typer.Option("--better", help="higher or lower: the direction of a line:/regex:/json: figure"),
]
FigureOpt = Annotated[
    list[str] | None,
    typer.Option("--figure", help="judge this figure (default: the reader's headline ones)"),
]
MinEffectOpt = Annotated[
    float,
    typer.Option("--min-effect", min=0.0, help="smallest change in % called better or worse"),
]
AlphaOpt = Annotated[
    float,
    typer.Option("--alpha", min=0.001, max=0.5, help="false 'better' rate per figure (0.05)"),
]


SpecOpt = Annotated[
    Path | None, typer.Option("--spec", help="record the live values of SPEC's settings")
]
RecordOpt = Annotated[
    Path | None, typer.Option("--record", help="write the record as DIR/bench-<UTC>.json")
]
RootOpt = Annotated[
    Path, typer.Option("--root", help="the host tree read and written (tests; default /)")
]
TimeoutOpt = Annotated[
    float | None, typer.Option("--timeout", min=0.001, help="end a run after SECONDS: it fails")
]
AblateOpt = Annotated[
    bool, typer.Option("--ablate", help="revert each live setting of --spec in turn")
]
YesOpt = Annotated[
    bool, typer.Option("--yes", help="with --ablate: run it (default: print the plan only)")
]
BeforeOpt = Annotated[
    Path | None,
    typer.Option("--before", help="the host before hostc: a `hostc probe --capture` or tree"),
]
RevertOpt = Annotated[
    list[str] | None, typer.Option("--revert", help="NAME=VALUE: the old value of a setting")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="show each run's output")]
RecordJsonOpt = Annotated[bool, typer.Option("--json", help="print the record on stdout")]


@bench_app.command("run", context_settings={"allow_interspersed_args": False})
def run_cmd(
    command: CommandArg,
    n: RunsOpt = 3,
    reader: ReaderOpt = "auto",
    better: BetterOpt = None,
    spec: SpecOpt = None,
    topology: TopologyOpt = None,
    record: RecordOpt = None,
    root: RootOpt = Path("/"),
    timeout: TimeoutOpt = None,
    ablate: AblateOpt = False,
    yes: YesOpt = False,
    before: BeforeOpt = None,
    revert: RevertOpt = None,
    figure: FigureOpt = None,
    min_effect: MinEffectOpt = 100 * opts.MIN_EFFECT,
    alpha: AlphaOpt = opts.ALPHA,
    verbose: VerboseOpt = False,
    as_json: RecordJsonOpt = False,
) -> None:
    """Run CMD N times, read its figures and record them with what was in effect."""
    from hostc.api import bench as b

    if not ablate and (yes or before is not None or revert):
        _usage("--yes, --before and --revert go with --ablate")
    if ablate and spec is None:
        _usage("--ablate needs --spec SPEC: its settings are the ones reverted")
    way = _better(better)
    chosen = _guard(lambda: b.reader_for(reader, way))
    plan = None
    if spec is not None:
        plan, warnings = _guard(lambda: _compile(spec, topology))
        _warn(warnings)
    echo = _say if verbose else None
    figures = tuple(figure or ())
    if plan is None or not ablate:
        _plain(command, n, chosen, spec, plan, root, timeout, echo, record, as_json, figures)
        return
    job = b.Bench(tuple(command), n, chosen, root, plan, timeout, figures, alpha, min_effect / 100)
    _ablate(job, spec, _overrides(revert or []), before, yes, record, as_json, echo)


def _plain(
    command: list[str],
    n: int,
    reader: b.FigureReader | None,
    spec: Path | None,
    plan: Plan | None,
    root: Path,
    timeout: float | None,
    echo: Say | None,
    record: Path | None,
    as_json: bool,
    figures: tuple[str, ...],
) -> None:
    """`hostc bench -- CMD`: N runs, their summary, the record."""
    from hostc.api import bench as b

    try:
        series = b.run_series(
            command, n, reader, root=root, plan=plan, timeout=timeout, say=_say, echo=echo
        )
    except b.RunFailed as e:
        _failed(e)
    except HostcError as e:
        _fail(e.diagnostics)
    except b.Interrupted as e:
        _interrupted(e.signum, "nothing recorded")
    except KeyboardInterrupt:
        _interrupted(signal.SIGINT, "nothing recorded")
    if not as_json:
        sys.stdout.write(_summary(series, figures))
    doc = b.document(series, kind="bench", hostc=version(), spec=spec, root=root)
    _record(doc, record, as_json)


def _overrides(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            _usage(f"--revert takes NAME=VALUE, not {pair!r}")
        out[name] = value
    return out


def _ablate(
    job: b.Bench,
    spec: Path | None,
    overrides: dict[str, str],
    before: Path | None,
    yes: bool,
    record: Path | None,
    as_json: bool,
    echo: Say | None,
) -> None:
    """Print the plan; with --yes run it, every value restored whatever happens."""
    from hostc.api import bench as b

    knobs, skips = _guard(lambda: b.plan_at(job.plan, job.root, before, overrides))
    sys.stdout.write(b.plan_text(knobs, skips, job.n))
    if not yes:
        _say(
            "dry run: nothing was run or written; pass --yes to run it (it writes the values "
            "above as root and restores each after its runs, and on failure or interrupt)"
        )
        return
    if not knobs:
        _say("nothing to ablate")
        return
    try:
        result = b.run_ablation(job, knobs, _say, echo)
    except b.RunFailed as e:
        _failed(e, restored=True)
    except b.Interrupted as e:
        _interrupted(e.signum, RESTORED)
    except KeyboardInterrupt:
        _interrupted(signal.SIGINT, RESTORED)
    except HostcError as e:
        for d in e.diagnostics:
            typer.echo(d.render(), err=True)
        typer.echo("nothing recorded; every value hostc could restore was restored", err=True)
        raise typer.Exit(2) from None
    for step in result.steps:
        for name, v in step.verdicts:
            typer.echo(b.contribution(step.knob, name, v))
    doc = b.document(
        result.baseline,
        kind="ablate",
        hostc=version(),
        spec=spec,
        root=job.root,
        ablation=b.ablation_json(result, skips),
    )
    _record(doc, record, as_json)


def _interrupted(signum: int, what: str) -> NoReturn:
    typer.echo(f"interrupted (signal {int(signum)}): {what}", err=True)
    raise typer.Exit(128 + signum)


@bench_app.command("compare")
def compare_cmd(
    a: Annotated[Path, typer.Argument(help="the record before (the baseline)", show_default=False)],
    b_: Annotated[Path, typer.Argument(metavar="B", help="the record after", show_default=False)],
    figure: FigureOpt = None,
    every: Annotated[
        bool, typer.Option("--all", help="every figure, not just the headline ones")
    ] = False,
    min_effect: MinEffectOpt = 100 * opts.MIN_EFFECT,
    alpha: AlphaOpt = opts.ALPHA,
    as_json: Annotated[bool, typer.Option("--json", help="the comparison as JSON")] = False,
) -> None:
    """Each figure of B against A: medians, spread, and better / worse / within noise."""
    from hostc.api import bench as b

    left = _guard(lambda: b.load(a))
    right = _guard(lambda: b.load(b_))
    found = _guard(
        lambda: b.compare(
            left, right, figures=figure or (), every=every, alpha=alpha, min_effect=min_effect / 100
        )
    )
    if as_json:
        sys.stdout.write(json_text(b.comparison_json(found), ascii_only=True) + "\n")
    else:
        sys.stdout.write(b.text(found))
