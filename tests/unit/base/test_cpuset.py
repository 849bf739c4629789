"""CpuSet: the kernel's cpulist syntax, canonical form, masks."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hostc.cpuset import MAX_CPU, CpuListError, CpuSet

ids = st.frozensets(st.integers(min_value=0, max_value=1023), max_size=200)
#: anywhere up to the cap: masks are bitmasks, so high ids are where size bugs hide
wide = st.frozensets(st.integers(min_value=0, max_value=MAX_CPU), max_size=64) | st.builds(
    lambda lo, n, step: frozenset(range(lo, min(lo + n * step, MAX_CPU + 1), step)),
    st.integers(0, MAX_CPU),
    st.integers(0, 3000),
    st.integers(1, 3),
)


@given(wide)
def test_bitmask_views_agree_with_the_ids(cpus: frozenset[int]) -> None:
    s = CpuSet(cpus)
    assert list(s) == sorted(cpus) and s.ids == cpus and len(s) == len(cpus)
    assert all(c in s for c in cpus) and -1 not in s and (MAX_CPU + 1) not in s
    expected, prev = [], None
    for c in sorted(cpus):  # runs of consecutive ids, the slow obvious way
        if prev is not None and c == prev + 1:
            expected[-1] = (expected[-1][0], c)
        else:
            expected.append((c, c))
        prev = c
    assert s.ranges() == expected
    assert CpuSet.parse(str(s)) == s and CpuSet.from_mask(s.mask()) == s
    if cpus:
        assert s.min() == min(cpus)


def test_ids_past_the_cap_are_refused() -> None:
    with pytest.raises(ValueError):
        CpuSet([MAX_CPU + 1])
    with pytest.raises(ValueError):
        CpuSet([-1])


@given(ids)
def test_format_parse_round_trip(cpus: frozenset[int]) -> None:
    s = CpuSet(cpus)
    assert CpuSet.parse(str(s)) == s


@given(ids)
def test_canonical_form_is_ascending_merged_ranges(cpus: frozenset[int]) -> None:
    text = str(CpuSet(cpus))
    bounds = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        bounds.append((int(lo), int(hi or lo)))
    for (a, b), (c, _) in itertools.pairwise(bounds):
        assert a <= b < c - 1  # ascending, and adjacent ranges are merged


@given(ids)
def test_mask_round_trip(cpus: frozenset[int]) -> None:
    s = CpuSet(cpus)
    assert CpuSet.from_mask(s.mask()) == s


@given(st.lists(st.integers(0, 300), max_size=50), st.lists(st.integers(0, 300), max_size=50))
def test_set_algebra(a: list[int], b: list[int]) -> None:
    x, y = CpuSet(a), CpuSet(b)
    assert (x | y).ids == set(a) | set(b)
    assert (x & y).ids == set(a) & set(b)
    assert (x - y).ids == set(a) - set(b)
    # results take a fast path past the constructor: they must be ordinary CpuSets
    for got, want in ((x | y, set(a) | set(b)), (x & y, set(a) & set(b)), (x - y, set(a) - set(b))):
        built = CpuSet(want)
        assert got == built and hash(got) == hash(built)
        assert str(got) == str(built) and got.mask() == built.mask()
        assert CpuSet.parse(str(got)) == got


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0-3,8-11", [0, 1, 2, 3, 8, 9, 10, 11]),
        ("5,1,3", [1, 3, 5]),
        (" 0 - 1 ".replace(" ", ""), [0, 1]),
        ("100-130:2/25", [100, 101, 125, 126]),
        ("", []),
    ],
)
def test_parse(text: str, expected: list[int]) -> None:
    assert list(CpuSet.parse(text)) == expected


@pytest.mark.parametrize("text", ["3-1", "a", "1,,2", "0-N", "all", "-1", "1-2:0/4", "1-"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(CpuListError):
        CpuSet.parse(text)


def test_mask_words() -> None:
    assert CpuSet.parse("0-1").mask() == "00000003"
    assert CpuSet.parse("0,64").mask() == "00000001,00000000,00000001"
    assert CpuSet.from_mask("0x00000001,,0x00000001") == CpuSet.parse("0,64")
