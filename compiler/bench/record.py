"""The bench record: one JSON file per `hostc bench`, and its reader for `compare`.

Schema (version 1; docs/bench.md shows one):

    {"format": "hostc-bench", "version": 1, "kind": "bench" | "ablate",
     "hostc": VERSION, "command": [ARGV…], "reader": NAME, "spec": PATH | null,
     "root": PATH, "started": UTC, "finished": UTC,
     "figures": {NAME: {"unit": U, "better": "higher" | "lower", "headline": BOOL}},
     "runs": [{"index": I, "started": UTC, "finished": UTC, "seconds": S,
               "exit_status": 0, "figures": {NAME: NUMBER},
               "in_effect": {"build": {…} | "none", "cmdline": TEXT | null,
                             "settings": [{"setting", "expected", "found"}]}}],
     "ablation": null | {…}}

`runs` are the baseline of an ablation.  A file that is not such a record is refused
naming the file and the key path (exit 2); a newer version is refused as such.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import attrs

from hostc.bench.readers import Better
from hostc.bench.run import Series
from hostc.delivery.output import write_text
from hostc.diagnostics import HostcError, file_error, json_text
from hostc.inputs import loads_json, read_text_bounded
from hostc.keypath import KeyPath, at
from hostc.record import Record

FORMAT = "hostc-bench"
VERSION = 1
#: no record comes near this (a thousand runs of a hundred figures is a few MB)
READ_LIMIT = 64 << 20


def series_json(series: Series) -> dict[str, Any]:
    """The figures' description (from the first run that has each) and every run."""
    meta: dict[str, Any] = {}
    for run in series.runs:
        for f in run.figures:
            meta.setdefault(
                f.name, {"unit": f.unit, "better": f.better.value, "headline": f.headline}
            )
    runs = [
        {
            "index": r.index,
            "started": r.started,
            "finished": r.finished,
            "seconds": r.seconds,
            "exit_status": r.exit_status,
            "figures": {f.name: f.value for f in r.figures},
            "in_effect": r.in_effect.to_json(),
        }
        for r in series.runs
    ]
    return {"reader": series.reader, "figures": meta, "runs": runs}


def document(
    series: Series,
    *,
    kind: str,
    hostc: str,
    spec: Path | None,
    root: Path,
    ablation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body = series_json(series)
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "hostc": hostc,
        "command": list(series.command),
        "reader": body["reader"],
        "spec": str(spec) if spec is not None else None,
        "root": str(root),
        "started": series.runs[0].started if series.runs else None,
        "finished": series.runs[-1].finished if series.runs else None,
        "figures": body["figures"],
        "runs": body["runs"],
        "ablation": ablation,
    }


def save(folder: Path, doc: dict[str, Any]) -> Path:
    """DIR/bench-<UTC start>.json (a `-N` suffix where that name is taken), written by
    the project's one writer of a named file; the folder is made when missing."""
    started = str(doc.get("started") or "record")
    stamp = started.replace("+00:00", "Z").replace("-", "").replace(":", "")
    stem = f"{doc.get('kind', 'bench')}-{stamp}"
    path = folder / f"{stem}.json"
    n = 1
    while path.exists() or path.is_symlink():
        n += 1
        path = folder / f"{stem}-{n}.json"
    write_text(path, json_text(doc, ascii_only=True) + "\n", parents=True)
    return path


@attrs.frozen(repr=False, eq=False)
class FigureMeta(Record):
    unit: str
    better: Better
    headline: bool


@attrs.frozen(repr=False, eq=False)
class Loaded(Record):
    """A record as `compare` needs it: each figure's values over the runs, in order."""

    path: str
    command: tuple[str, ...]
    reader: str
    figures: dict[str, FigureMeta]
    values: dict[str, tuple[float, ...]]
    in_effect: tuple[dict[str, Any], ...]


def _bad(file: str, where: KeyPath, message: str) -> HostcError:
    return HostcError(
        [file_error(file, message, path=where, hint="pass a file `hostc bench --record` wrote")]
    )


def _meta(file: str, doc: dict[str, Any]) -> dict[str, FigureMeta]:
    figures = doc.get("figures")
    if not isinstance(figures, dict) or not figures:
        raise _bad(file, at("figures"), "expected a table of the figures' units and directions")
    out: dict[str, FigureMeta] = {}
    for name, m in figures.items():
        ok = isinstance(m, dict) and m.get("better") in ("higher", "lower")
        if not ok or not isinstance(m.get("unit"), str):
            raise _bad(file, at("figures", name), "expected {unit, better: higher|lower}")
        out[name] = FigureMeta(m["unit"], Better(m["better"]), m.get("headline") is not False)
    return out


def _values(file: str, doc: dict[str, Any], meta: dict[str, FigureMeta]) -> dict[str, list[float]]:
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        raise _bad(file, at("runs"), "expected a list of at least one run")
    values: dict[str, list[float]] = {name: [] for name in meta}
    for i, run in enumerate(runs):
        figures = run.get("figures") if isinstance(run, dict) else None
        if not isinstance(figures, dict):
            raise _bad(file, at("runs", i, "figures"), "expected a table of figures")
        for name, v in figures.items():
            finite = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            if name not in values or not finite:
                why = "a figure the record does not describe" if finite else "a finite number"
                raise _bad(file, at("runs", i, "figures", name), f"expected {why}")
            values[name].append(float(v))
    return values


def load(path: Path) -> Loaded:
    """A record file, validated; every problem names the file and where in it."""
    file = str(path)
    doc = loads_json(
        read_text_bounded(path, limit=READ_LIMIT, what="bench record"), file, "bench record"
    )
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _bad(file, at("format"), f'not a bench record (no "format": "{FORMAT}")')
    if doc.get("version") != VERSION:
        raise _bad(
            file, at("version"), f"version {doc.get('version')!r}; this hostc reads {VERSION}"
        )
    meta = _meta(file, doc)
    values = _values(file, doc, meta)
    command = doc.get("command")
    argv = tuple(str(a) for a in command) if isinstance(command, list) else ()
    runs = doc["runs"]
    effects = tuple(
        r.get("in_effect") if isinstance(r.get("in_effect"), dict) else {} for r in runs
    )
    return Loaded(
        file,
        argv,
        str(doc.get("reader", "")),
        meta,
        {k: tuple(v) for k, v in values.items() if v},
        effects,
    )
