"""The verdict of a comparison: better, worse or within noise, at a stated confidence.

The rule (docs/bench.md), for two series A (before) and B (after) of one figure:

1. Spread: each side's median, min–max and MAD (median absolute deviation).
2. Rank test: the exact one-sided Wilcoxon–Mann–Whitney test of "B's runs rank above
   A's" in the figure's better direction: of the C(m+n, n) ways to deal the pooled runs
   into a side of n and a side of m, the share whose rank sum is at least B's
   (mid-ranks for ties, the exact distribution of those ranks, no approximation).
   With 3 runs against 3 that share is at least 1/20 = 0.05, and it is 0.05 exactly
   when every run of B beats every run of A: so at n = 3 the test says "better" only
   for a complete separation, and it can never reach p < 0.05 one-sided (0.1 two-sided).
3. Size: the medians must differ by more than the threshold, the larger of the
   minimum effect (default 2 % of A's median) and the noise, half the widest
   within-side range (a change smaller than the runs' own scatter is no change).

"better" needs p ≤ alpha (default 0.05) in the better direction and a size past the
threshold; "worse" the same the other way; anything else is "within noise".  False
positives: when A and B are runs of the same thing (the runs exchangeable), a side
of n is dealt at random, and at most alpha of the deals pass step 2 in one direction,
so noise is called "better" at most alpha of the time and "better or worse" at most
2·alpha; step 3 only removes verdicts.  tests/unit/bench/test_bench_stats.py proves it over
every deal of generated series.  Runs taken at different times are exchangeable only
if nothing else drifted meanwhile: the test cannot see a drift that coincides with
the change.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

import attrs

from hostc.bench.readers import Better
from hostc.record import Record

#: the default significance level of one direction
ALPHA = 0.05
#: the default minimum effect, as a fraction of the baseline's median
MIN_EFFECT = 0.02
#: the most runs of one series: the exact test counts every deal of the pooled runs
MAX_RUNS = 20
METHOD = "exact one-sided Wilcoxon-Mann-Whitney rank test"


class Word(enum.StrEnum):
    BETTER = "better"
    WORSE = "worse"
    NOISE = "within noise"


@attrs.frozen(repr=False, eq=False)
class Spread(Record):
    """One side's runs: median, min, max and median absolute deviation."""

    n: int
    median: float
    low: float
    high: float
    mad: float

    @property
    def range(self) -> float:
        return self.high - self.low


def median(values: Sequence[float]) -> float:
    """The middle value (the mean of the two middle ones of an even count)."""
    ordered = sorted(values)
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def spread(values: Sequence[float]) -> Spread:
    med = median(values)
    mad = median([abs(v - med) for v in values])
    return Spread(len(values), med, min(values), max(values), mad)


@attrs.frozen(repr=False, eq=False)
class BenchVerdict(Record):
    """The comparison of one figure: the two sides, the change and its verdict."""

    better: Better
    a: Spread
    b: Spread
    change: float  # median(B) - median(A)
    relative: float | None  # change / |median(A)|, None when A's median is 0
    p: float  # one-sided p in the direction of the change
    p_min: float  # the smallest p these n can give
    threshold: float
    word: Word
    why: str
    alpha: float = ALPHA
    method: str = METHOD


def _ranks(values: Sequence[float]) -> list[int]:
    """Twice each value's mid-rank (1-based), so tied ranks stay integers."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = i + j + 2  # 2 × the mean of ranks i+1 … j+1
        i = j + 1
    return ranks


def rank_sums(ranks: Sequence[int], n: int) -> dict[int, int]:
    """How many of the C(len, n) choices of n ranks have each sum (exact, by counting)."""
    table: list[dict[int, int]] = [{0: 1}] + [{} for _ in range(n)]
    for r in ranks:
        for k in range(n, 0, -1):
            row = table[k]
            for s, c in table[k - 1].items():
                row[s + r] = row.get(s + r, 0) + c
    return table[n]


def one_sided(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """(p that B ranks this high or higher, p that it ranks this low or lower, the
    smallest p any deal gives), under the exact distribution of the pooled ranks."""
    ranks = _ranks([*a, *b])
    sums = rank_sums(ranks, len(b))
    total = sum(sums.values())
    seen = sum(ranks[len(a) :])
    up = sum(c for s, c in sums.items() if s >= seen) / total
    down = sum(c for s, c in sums.items() if s <= seen) / total
    return up, down, min(sums[max(sums)], sums[min(sums)]) / total


def verdict(
    a: Sequence[float],
    b: Sequence[float],
    better: Better,
    *,
    alpha: float = ALPHA,
    min_effect: float = MIN_EFFECT,
) -> BenchVerdict:
    """B against A for a figure that improves in direction `better` (module docstring)."""
    sign = 1.0 if better is Better.HIGHER else -1.0
    sa, sb = spread(a), spread(b)
    up, down, p_min = one_sided([sign * v for v in a], [sign * v for v in b])
    change = sb.median - sa.median
    relative = change / abs(sa.median) if sa.median else None
    noise = max(sa.range, sb.range) / 2
    threshold = max(min_effect * abs(sa.median), noise)
    gain = sign * change
    p = up if gain >= 0 else down
    word, why = _judge(gain, p, p_min, threshold, noise, alpha, (sa.n, sb.n))
    return BenchVerdict(
        better, sa, sb, change, relative, p, p_min, threshold, word, why, alpha, METHOD
    )


def _judge(
    gain: float,
    p: float,
    p_min: float,
    threshold: float,
    noise: float,
    alpha: float,
    sizes: tuple[int, int],
) -> tuple[Word, str]:
    n = f"n = {sizes[1]} vs {sizes[0]}"
    if floor_p(sizes) > alpha:
        return Word.NOISE, (
            f"{n} cannot reach p <= {alpha:g}: the smallest p of so few runs is "
            f"{floor_p(sizes):.3g}; run more repeats"
        )
    if p > alpha:
        return Word.NOISE, f"the runs overlap (p = {p:.3g} > {alpha:g}, {n})"
    if abs(gain) <= threshold:
        what = "the runs' scatter" if threshold == noise else "the minimum effect"
        return Word.NOISE, (
            f"every run moved the same way (p = {p:.3g}) but by no more than {what} "
            f"({threshold:.4g})"
        )
    word = Word.BETTER if gain > 0 else Word.WORSE
    return word, f"p = {p:.3g} <= {alpha:g} one-sided ({n}), past the threshold {threshold:.4g}"


def floor_p(sizes: tuple[int, int]) -> float:
    """The smallest one-sided p of n runs against m without ties: 1 / C(n+m, n), reached
    only when every run of one side beats every run of the other (0.05 at 3 vs 3)."""
    return 1 / math.comb(sizes[0] + sizes[1], sizes[1])


def verdict_json(v: BenchVerdict) -> dict[str, object]:
    def side(s: Spread) -> dict[str, object]:
        return {"n": s.n, "median": s.median, "min": s.low, "max": s.high, "mad": s.mad}

    return {
        "verdict": v.word.value,
        "why": v.why,
        "better": v.better.value,
        "a": side(v.a),
        "b": side(v.b),
        "change": v.change,
        "relative": v.relative,
        "p": v.p,
        "p_min": v.p_min,
        "alpha": v.alpha,
        "threshold": v.threshold,
        "method": v.method,
    }
