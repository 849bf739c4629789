"""A knowledge table: a read-only mapping whose every row says where it comes from.

A fact without its source cannot be checked by the next maintainer, so the source is
part of the row, not a comment beside it; `tests/test_knowledge.py` walks every table
of `hostc.knowledge` and fails on a row whose source is empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Table(Mapping[K, V]):
    """Rows `key → (value, source)`, read as a plain mapping `key → value`."""

    __slots__ = ("_sources", "_values")

    def __init__(self, rows: Mapping[K, tuple[V, str]]) -> None:
        self._values: dict[K, V] = {k: v for k, (v, _) in rows.items()}
        self._sources: dict[K, str] = {k: s for k, (_, s) in rows.items()}

    @classmethod
    def members(cls, keys: Iterable[K], source: str) -> Table[K, bool]:
        """A set as a table (every key maps to True), all from one source."""
        return Table({k: (True, source) for k in keys})

    def __getitem__(self, key: K) -> V:
        return self._values[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Table({self._values!r})"

    def source(self, key: K) -> str:
        """Where the row for `key` comes from."""
        return self._sources[key]

    def sources(self) -> Mapping[K, str]:
        return dict(self._sources)
