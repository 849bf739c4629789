"""The nesting guard of spec data: how deeply arrays and tables nest."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hostc.spec.parse import NESTING_LIMIT, nesting_depth

values = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=40,
)


def _reference(v: Any, d: int = 0) -> int:
    """Every value's level, scalars included (the walk the guard shortcuts)."""
    items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
    return max([d, *(_reference(x, d + 1) for x in items)])


@given(values)
def test_depth_is_the_deepest_level_of_any_value(data: Any) -> None:
    assert nesting_depth(data) == _reference(data)


def test_deeper_than_the_limit_is_seen() -> None:
    data: Any = 1
    for _ in range(NESTING_LIMIT + 5):
        data = [data]
    assert nesting_depth({"a": data}) > NESTING_LIMIT
