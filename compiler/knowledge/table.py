"""A knowledge table: a read-only mapping whose every row says where it comes from.

A fact without its source cannot be checked by the next maintainer, so the source is
part of the row, not a comment beside it; `tests/unit/base/test_knowledge.py` walks every table
of `hostc.knowledge` and fails on a row whose source is empty.  The mapping itself is
`record.FrozenMap` (one read-only mapping in hostc, not two): a table adds its sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from hostc.record import FrozenMap

K = TypeVar("K")
V = TypeVar("V")


class Table(FrozenMap[K, V]):
    """Rows `key → (value, source)`, read as a plain mapping `key → value`."""

    __slots__ = ("_sources",)

    def __init__(self, rows: Mapping[K, tuple[V, str]]) -> None:
        super().__init__((k, v) for k, (v, _) in rows.items())
        self._sources: dict[K, str] = {k: s for k, (_, s) in rows.items()}

    @classmethod
    def members(cls, keys: Iterable[K], source: str) -> Table[K, bool]:
        """A set as a table (every key maps to True), all from one source."""
        return Table({k: (True, source) for k in keys})

    def __repr__(self) -> str:
        return f"Table({dict(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.__class__, ({k: (v, self._sources[k]) for k, v in self.items()},))

    def source(self, key: K) -> str:
        """Where the row for `key` comes from."""
        return self._sources[key]

    def sources(self) -> Mapping[K, str]:
        return dict(self._sources)
