"""The verdict of `hostc bench compare`: its false-positive rate proven over every deal of
generated runs, its power on a large effect, and the honest limits of n = 3."""

from __future__ import annotations

import itertools
import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hostc.bench.readers import Better
from hostc.bench.stats import ALPHA, Word, floor_p, one_sided, rank_sums, verdict

#: a benchmark figure: positive, finite, with ties (printed to two decimals)
figure = st.floats(min_value=0.01, max_value=1e6, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=60)
@given(
    pooled=st.lists(figure, min_size=4, max_size=8),
    data=st.data(),
    better=st.sampled_from(list(Better)),
)
def test_runs_of_the_same_thing_are_called_better_at_most_alpha_of_the_time(
    pooled: list[float], data: st.DataObject, better: Better
) -> None:
    """The exact statement of the false-positive rate: when A and B are runs of the same
    thing (exchangeable), which runs land in B is a random deal of the pooled runs.
    Over every deal, at most alpha of them may be called better, and at most alpha
    worse, whatever the values (ties included)."""
    n = data.draw(st.integers(min_value=2, max_value=len(pooled) - 2))
    deals = list(itertools.combinations(range(len(pooled)), n))
    words = []
    for chosen in deals:
        b = [pooled[i] for i in chosen]
        a = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        words.append(verdict(a, b, better).word)
    allowed = math.floor(ALPHA * len(deals) + 1e-9)
    assert words.count(Word.BETTER) <= allowed
    assert words.count(Word.WORSE) <= allowed


def test_three_against_three_cannot_go_below_one_in_twenty() -> None:
    """C(6, 3) = 20 deals: only the one where every run of B beats every run of A
    reaches p = 0.05 one-sided (0.1 two-sided); with alpha 0.05 nothing less will do."""
    assert floor_p((3, 3)) == 1 / 20
    up, down, p_min = one_sided([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert (up, down, p_min) == (1 / 20, 1.0, 1 / 20)
    up, _, _ = one_sided([1.0, 2.0, 4.0], [3.0, 5.0, 6.0])  # one run of B below one of A
    assert up == 2 / 20
    assert sum(rank_sums([2, 4, 6, 8, 10, 12], 3).values()) == math.comb(6, 3)


@settings(max_examples=100)
@given(
    base=st.floats(min_value=10, max_value=1e5),
    noise=st.lists(st.floats(min_value=-1, max_value=1), min_size=6, max_size=6),
    scatter=st.floats(min_value=0, max_value=0.01),
    better=st.sampled_from(list(Better)),
)
def test_a_large_effect_is_found_in_three_runs(
    base: float, noise: list[float], scatter: float, better: Better
) -> None:
    """5 % better with at most 1 % scatter per run: every run of B beats every run of A
    and the change is past 2 % and past the scatter, so the verdict is better."""
    sigma = scatter * base
    sign = 1 if better is Better.HIGHER else -1
    a = [base + sigma * e for e in noise[:3]]
    b = [base + sign * 0.05 * base + sigma * e for e in noise[3:]]
    v = verdict(a, b, better)
    assert v.word is Word.BETTER, v.why
    assert verdict(b, a, better).word is Word.WORSE


def test_noise_is_rarely_called_better_in_practice() -> None:
    """Normal noise, 3 runs against 3, 4000 trials (seeded): the rate of a false
    "better" stays within alpha (its binomial margin of three standard errors)."""
    rng = random.Random(53)
    trials = 4000
    false = sum(
        verdict(
            [rng.gauss(100, 2) for _ in range(3)],
            [rng.gauss(100, 2) for _ in range(3)],
            Better.HIGHER,
        ).word
        is Word.BETTER
        for _ in range(trials)
    )
    assert false / trials <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / trials)


def test_too_few_runs_say_so() -> None:
    v = verdict([1.0, 2.0], [10.0, 11.0], Better.HIGHER)
    assert v.word is Word.NOISE
    assert "n = 2 vs 2 cannot reach p <= 0.05" in v.why and "run more repeats" in v.why


def test_a_consistent_change_below_the_minimum_effect_is_noise() -> None:
    v = verdict([100.0, 100.1, 100.2], [100.5, 100.6, 100.7], Better.HIGHER)
    assert v.p == 1 / 20 and v.word is Word.NOISE
    assert "minimum effect" in v.why
    small = verdict([100.0, 100.1, 100.2], [100.5, 100.6, 100.7], Better.HIGHER, min_effect=0.001)
    assert small.word is Word.BETTER


def test_a_change_within_the_runs_scatter_is_noise() -> None:
    """Every run of B above A's, but the medians move by less than the scatter."""
    v = verdict([80.0, 110.0, 110.5], [111.0, 112.0, 150.0], Better.HIGHER)
    assert v.p == 1 / 20 and v.word is Word.NOISE
    assert "scatter" in v.why


def test_lower_is_better_turns_a_faster_latency_into_better() -> None:
    v = verdict([30.9, 31.2, 30.5], [27.4, 27.9, 27.1], Better.LOWER)
    assert v.word is Word.BETTER and v.change < 0
    assert verdict([30.9, 31.2, 30.5], [27.4, 27.9, 27.1], Better.HIGHER).word is Word.WORSE


def test_the_spread_is_median_range_and_mad() -> None:
    v = verdict([1.0, 2.0, 9.0], [1.0, 2.0, 9.0], Better.HIGHER)
    assert (v.a.median, v.a.low, v.a.high, v.a.mad) == (2.0, 1.0, 9.0, 1.0)
    assert v.word is Word.NOISE and v.p > ALPHA
