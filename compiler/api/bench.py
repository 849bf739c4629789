"""The API of `hostc bench`: run a benchmark N times and record it, compare two records,
and ablate a Plan's live settings (`hostc.bench`).  No printing: progress goes to the
`say` callback the caller passes.  It loads the audit's readers: the command imports it
when it runs (its options need only `hostc.api.benchargs`)."""

from __future__ import annotations

from hostc.bench.ablate import (
    Ablation,
    Bench,
    ablation_json,
    contribution,
    plan_text,
    run_ablation,
)
from hostc.bench.compare import Comparison, compare, comparison_json, text
from hostc.bench.generic import READER_HELP, reader_for
from hostc.bench.knobs import Knob, Skip, plan_at
from hostc.bench.readers import Better, Figure, FigureReader
from hostc.bench.record import Loaded, document, load, save
from hostc.bench.run import Interrupted, RunFailed, Series, run_series
from hostc.bench.stats import ALPHA, MAX_RUNS, MIN_EFFECT, spread

__all__ = [
    "ALPHA",
    "MAX_RUNS",
    "MIN_EFFECT",
    "READER_HELP",
    "Ablation",
    "Bench",
    "Better",
    "Comparison",
    "Figure",
    "FigureReader",
    "Interrupted",
    "Knob",
    "Loaded",
    "RunFailed",
    "Series",
    "Skip",
    "ablation_json",
    "compare",
    "comparison_json",
    "contribution",
    "document",
    "load",
    "plan_at",
    "plan_text",
    "reader_for",
    "run_ablation",
    "run_series",
    "save",
    "spread",
    "text",
]
