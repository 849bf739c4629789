"""`hostc bench compare A B`: each figure of two records, its spread and its verdict,
and what was in effect differently between them (the build, the kernel command line,
the Plan's runtime settings as the first run of each found them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from hostc.bench.record import FigureMeta, Loaded
from hostc.bench.stats import (
    ALPHA,
    METHOD,
    MIN_EFFECT,
    BenchVerdict,
    Spread,
    floor_p,
    verdict,
    verdict_json,
)
from hostc.diagnostics import HostcError, file_error
from hostc.record import Record


@attrs.frozen(repr=False, eq=False)
class FigureRow(Record):
    name: str
    meta: FigureMeta
    verdict: BenchVerdict | None
    missing: str = ""  # why there is no verdict


@attrs.frozen(repr=False, eq=False)
class Comparison(Record):
    a: Loaded
    b: Loaded
    rows: tuple[FigureRow, ...]
    notes: tuple[str, ...]
    alpha: float
    min_effect: float


def _chosen(a: Loaded, b: Loaded, figures: Sequence[str], every: bool) -> list[str]:
    known = list(dict.fromkeys([*a.figures, *b.figures]))
    for name in figures:
        if name not in known:
            raise HostcError(
                [
                    file_error(
                        "--figure",
                        f"no figure {name!r} in either record",
                        hint="the records hold: " + ", ".join(known[:20]),
                    )
                ]
            )
    if figures:
        return list(figures)
    meta = {**b.figures, **a.figures}
    return [n for n in known if every or meta[n].headline]


def _row(name: str, a: Loaded, b: Loaded, alpha: float, min_effect: float) -> FigureRow:
    meta = a.figures.get(name) or b.figures[name]
    va, vb = a.values.get(name), b.values.get(name)
    if not va or not vb:
        side = "A" if not va else "B"
        return FigureRow(name, meta, None, f"{side} has no run with this figure")
    return FigureRow(name, meta, verdict(va, vb, meta.better, alpha=alpha, min_effect=min_effect))


def _settings(effect: dict[str, Any]) -> dict[str, object]:
    rows = effect.get("settings")
    if not isinstance(rows, list):
        return {}
    return {str(r.get("setting")): r.get("found") for r in rows if isinstance(r, dict)}


def notes(a: Loaded, b: Loaded) -> list[str]:
    """What differed between the two records besides their figures."""
    out = []
    if a.command != b.command:
        out.append(
            f"the records ran different commands: {' '.join(a.command)} | {' '.join(b.command)}"
        )
    if a.reader != b.reader:
        out.append(f"the records were read by different readers: {a.reader} | {b.reader}")
    for name in set(a.figures) & set(b.figures):
        if a.figures[name].better is not b.figures[name].better:
            out.append(f"{name}: the records disagree on which way is better; A's is used")
    ea = a.in_effect[0] if a.in_effect else {}
    eb = b.in_effect[0] if b.in_effect else {}
    if ea.get("build") != eb.get("build"):
        out.append(f"build: {_build(ea.get('build'))} -> {_build(eb.get('build'))}")
    if ea.get("cmdline") != eb.get("cmdline"):
        out.append(f"kernel command line: {ea.get('cmdline')} -> {eb.get('cmdline')}")
    sa, sb = _settings(ea), _settings(eb)
    for name in sorted(set(sa) | set(sb)):
        if sa.get(name) != sb.get(name):
            out.append(
                f"{name}: {sa.get(name, '(not recorded)')} -> {sb.get(name, '(not recorded)')}"
            )
    return out


def _build(build: object) -> str:
    if isinstance(build, dict):
        sha = str(build.get("sha256", ""))[:12]
        return f"{sha or 'pending only'} ({build.get('host', '?')})"
    return str(build or "none")


def compare(
    a: Loaded,
    b: Loaded,
    *,
    figures: Sequence[str] = (),
    every: bool = False,
    alpha: float = ALPHA,
    min_effect: float = MIN_EFFECT,
) -> Comparison:
    rows = tuple(_row(n, a, b, alpha, min_effect) for n in _chosen(a, b, figures, every))
    return Comparison(a, b, rows, tuple(notes(a, b)), alpha, min_effect)


def _side(s: Spread) -> str:
    return f"{s.median:.4g} [{s.low:.4g}-{s.high:.4g}, MAD {s.mad:.3g}]"


def text(c: Comparison) -> str:
    out = [f"A: {c.a.path}", f"B: {c.b.path}"]
    for r in c.rows:
        head = f"{r.name} ({r.meta.unit or 'no unit'}, {r.meta.better.value} is better)"
        v = r.verdict
        if v is None:
            out.append(f"{head}: no verdict: {r.missing}")
            continue
        rel = f" {v.relative:+.1%}" if v.relative is not None else ""
        out.append(
            f"{head}: A {_side(v.a)}, B {_side(v.b)},{rel or ' +0'}: {v.word.value}: {v.why}"
        )
    out += [f"note: {n}" for n in c.notes]
    out.append(footer(c))
    return "\n".join(out) + "\n"


def footer(c: Comparison) -> str:
    judged = [r.verdict for r in c.rows if r.verdict is not None]
    sizes = sorted({(v.b.n, v.a.n) for v in judged})
    floors = "; ".join(
        f"n = {n} vs {m}: p cannot go below {floor_p((n, m)):.3g} one-sided "
        f"({2 * floor_p((n, m)):.3g} two-sided), reached only when every run of one side "
        "beats every run of the other"
        for n, m in sizes
    )
    many = (
        f"; {len(judged)} figures judged: about {len(judged) * 2 * c.alpha:.1f} of them may "
        "be called better or worse by chance alone"
        if len(judged) > 1
        else ""
    )
    return (
        f"method: {METHOD} per figure, alpha {c.alpha:g} per direction, and a change past "
        f"{c.min_effect:.0%} of A's median and past the runs' scatter; runs of the same "
        f"thing are called better at most {c.alpha:.0%} of the time, better or worse at "
        f"most {2 * c.alpha:.0%} ({floors or 'no figure judged'}){many}"
    )


def comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "a": c.a.path,
        "b": c.b.path,
        "alpha": c.alpha,
        "min_effect": c.min_effect,
        "method": METHOD,
        "figures": [
            {
                "figure": r.name,
                "unit": r.meta.unit,
                "better": r.meta.better.value,
                **(verdict_json(r.verdict) if r.verdict is not None else {"verdict": None}),
                **({"missing": r.missing} if r.missing else {}),
            }
            for r in c.rows
        ],
        "notes": list(c.notes),
    }
