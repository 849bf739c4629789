"""`hostc bench --ablate`: which live setting of the Plan earns its place.

The method is the seeds' (a baseline, one change, the same benchmark three times),
applied to each setting in turn: N runs with every value as the Plan has it (the
baseline), then for each knob (`hostc.bench.knobs`) its files are written back to
their value before hostc, the benchmark runs N times, and the Plan's value is put
back before the next knob.  Each knob's runs are judged against the baseline with
`compare`'s verdict (`hostc.bench.stats`): reverting it made the figure worse (the
setting earns its place), better (it costs), or changed nothing the noise allows.

Every value written is restored, whatever happens: after its own runs, and in a
`finally` on a failed run, a refused write, Ctrl-C (SIGINT) or SIGTERM/SIGHUP (which
raise `Interrupted` while the ablation runs); while values are being restored those
signals are ignored, so a second Ctrl-C cannot cut a restore short.  Each write and
each restore is read back through the audit's observer; a value the kernel does not
show as written is an error naming the file.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from hostc.audit.host import HostReader
from hostc.bench.knobs import File, Knob, Skip
from hostc.bench.readers import BUILT_IN, FigureReader
from hostc.bench.record import series_json
from hostc.bench.run import STOPS, Say, Series, run_series, stopping
from hostc.bench.state import observe
from hostc.bench.stats import ALPHA, MIN_EFFECT, BenchVerdict, Word, verdict, verdict_json
from hostc.bench.writer import write_value
from hostc.diagnostics import Diagnostic, HostcError, file_error
from hostc.plan.model import Plan
from hostc.record import Record


@attrs.frozen(repr=False, eq=False)
class Bench(Record):
    """How each series is run and judged."""

    argv: tuple[str, ...]
    n: int
    reader: FigureReader | None
    root: Path
    plan: Plan
    timeout: float | None = None
    figures: tuple[str, ...] = ()  # judged figures; empty: the reader's headline ones
    alpha: float = ALPHA
    min_effect: float = MIN_EFFECT


@attrs.frozen(repr=False, eq=False)
class AblationStep(Record):
    knob: Knob
    series: Series
    verdicts: tuple[tuple[str, BenchVerdict], ...]


@attrs.frozen(repr=False, eq=False)
class Ablation(Record):
    baseline: Series
    steps: tuple[AblationStep, ...]


def _check(root: Path, f: File, want: str) -> None:
    """The value the audit's observer shows now must be the one just written."""
    got = observe(HostReader(root, live=False), f.expect)
    if got != want:
        raise HostcError([file_error(f.path, f"wrote {want!r} but it reads {got!r}")])


class Restorer:
    """Every file written so far, and the way back to the Plan's values."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.changed: list[File] = []

    def revert(self, knob: Knob) -> None:
        for f in knob.files:
            self.changed.append(f)  # before the write: a half-done write is restored too
            write_value(self.root, f.path, f.before)
            _check(self.root, f, f.before)

    def restore(self) -> list[File]:
        """Write back every changed file, newest first (one that already shows the
        Plan's value, a write the kernel refused, is left alone); every one is tried,
        and the ones that could not be restored are raised together at the end."""
        problems: list[Diagnostic] = []
        done: list[File] = []
        for f in reversed(self.changed):
            if observe(HostReader(self.root, live=False), f.expect) == f.now:
                continue
            try:
                write_value(self.root, f.path, f.now)
                _check(self.root, f, f.now)
                done.append(f)
            except HostcError as e:
                problems += e.diagnostics
        self.changed.clear()
        if problems:
            raise HostcError(problems)
        return list(reversed(done))


@contextmanager
def _shielded() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP ignored while values are restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, *STOPS)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def judge(base: Series, other: Series, bench: Bench) -> tuple[tuple[str, BenchVerdict], ...]:
    """Each judged figure of `other` against the baseline (figures every run of both
    has; the named ones, else the reader's headline ones)."""
    first = base.runs[0].figures
    names = bench.figures or tuple(f.name for f in first if f.headline)
    out = []
    for name in names:
        a = [f.value for r in base.runs for f in r.figures if f.name == name]
        b = [f.value for r in other.runs for f in r.figures if f.name == name]
        better = next((f.better for f in first if f.name == name), None)
        if better is None or len(a) != len(base.runs) or len(b) != len(other.runs):
            continue
        v = verdict(a, b, better, alpha=bench.alpha, min_effect=bench.min_effect)
        out.append((name, v))
    return tuple(out)


def contribution(knob: Knob, name: str, v: BenchVerdict) -> str:
    """One line: what reverting `knob` did to figure `name`."""
    rel = f" ({v.relative:+.1%})" if v.relative is not None else ""
    with_old = f"with {knob.before} instead of {knob.now}"
    if v.word is Word.WORSE:
        return f"{knob.name}: earns its place: {with_old} {name} was worse{rel}; {v.why}"
    if v.word is Word.BETTER:
        return f"{knob.name}: costs: {with_old} {name} was better{rel}; {v.why}"
    return f"{knob.name}: no measured effect on {name}{rel}: {v.why}"


def run_ablation(
    bench: Bench, knobs: Sequence[Knob], say: Say, echo: Say | None = None
) -> Ablation:
    """The baseline, then each knob reverted, run and restored (module docstring)."""
    restorer = Restorer(bench.root)
    b = bench

    def series(reader: FigureReader | None) -> Series:
        return run_series(
            b.argv, b.n, reader, root=b.root, plan=b.plan, timeout=b.timeout, say=say, echo=echo
        )

    with stopping():
        try:
            say(f"baseline: {b.n} runs with the Plan's values")
            baseline = series(b.reader)
            reader = _reader_of(b.reader, baseline)
            steps = []
            for knob in knobs:
                files = "1 file" if len(knob.files) == 1 else f"{len(knob.files)} files"
                say(f"{knob.name}: {knob.now} -> {knob.before} ({files})")
                restorer.revert(knob)
                reverted = series(reader)
                with _shielded():
                    restorer.restore()
                say(f"{knob.name}: restored {knob.now}")
                steps.append(AblationStep(knob, reverted, judge(baseline, reverted, b)))
                for name, v in steps[-1].verdicts:
                    say(contribution(knob, name, v))
            return Ablation(baseline, tuple(steps))
        finally:
            if restorer.changed:
                with _shielded():
                    back = restorer.restore()
                for f in back:
                    say(f"restored {f.path} = {f.now}")


def _reader_of(asked: FigureReader | None, baseline: Series) -> FigureReader | None:
    """The reader the baseline settled on, so every series is read alike."""
    return asked if asked is not None else BUILT_IN.get(baseline.reader)


def plan_text(knobs: Sequence[Knob], skips: Sequence[Skip], n: int) -> str:
    """What the ablation will do, printed before it does anything."""
    total = n * (len(knobs) + 1)
    out = [
        f"ablation: {n} runs with the Plan's values (the baseline), then {n} runs with each "
        f"setting below reverted to its value before hostc and restored right after: "
        f"{total} runs"
    ]
    width = max([len(k.name) for k in knobs] + [len(s.name) for s in skips] + [8])
    out.append("revert:" if knobs else "revert: nothing (no live setting with a known old value)")
    for k in knobs:
        files = f", {len(k.files)} files" if len(k.files) > 1 else ""
        out.append(f"  {k.name.ljust(width)}  {k.now} -> {k.before}  ({k.source}{files})")
    other = [s for s in skips if not s.same]
    if other:
        out.append("never touched:")
        out += [f"  {s.name.ljust(width)}  {s.why}" for s in other]
    same = [s.name for s in skips if s.same]
    if same:
        out.append("unchanged by hostc (the same value before): " + ", ".join(same))
    return "\n".join(out) + "\n"


def ablation_json(result: Ablation, skips: Sequence[Skip]) -> dict[str, Any]:
    """The record's `ablation` member (the baseline is the record's `runs`)."""
    steps = [
        {
            "setting": s.knob.name,
            "reason": s.knob.reason,
            "source": s.knob.source,
            "files": [
                {"path": f.path, "plan": f.now, "reverted_to": f.before} for f in s.knob.files
            ],
            "runs": series_json(s.series)["runs"],
            "verdicts": {name: verdict_json(v) for name, v in s.verdicts},
        }
        for s in result.steps
    ]
    return {
        "steps": steps,
        "skipped": [{"setting": s.name, "why": s.why} for s in skips],
        "restored": True,
    }
