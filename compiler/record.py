"""`Record`: the `__eq__`, `__hash__` and `__repr__` every frozen hostc value shares.

hostc's values are declared `@attrs.frozen(repr=False, eq=False)` on a `Record`
base.  attrs would otherwise write and compile these three methods anew for each of
~120 classes, about half of what creating a class costs and a tenth of a cold
`hostc build` (benchmarks/run.py, P1d); these are written once, from the same
`attrs.fields`, and keep attrs' semantics:

- equal: the same class and every field with `eq=True` equal (two or more compared
  as one tuple: a field holding the very same object counts as equal, as in any
  tuple, so one NaN equals itself here);
- hash: of the class and those fields (`hash=True` fields too, `hash=False` ones not),
  so equal values hash alike and the class is a usable dict key, as frozen attrs
  classes are;
- repr: `Name(field=value, …)` over the fields with `repr` on (a callable `repr`
  formats its field), `...` for a value already being printed (a cycle).

A class that needs other semantics (`order=True`, identity `eq=False`, methods of
its own) keeps plain `@attrs.frozen`.

`FrozenMap` is the table such a value holds where a dict would let it change.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, cast

import attrs

Getter = Callable[[Any], Any] | None

#: per class, the getters of the fields its equality and its hash compare (None: none)
_KEYS: dict[type, tuple[Getter, Getter]] = {}
_printing = threading.local()


def _keys(cls: type) -> tuple[Getter, Getter]:
    found = _KEYS.get(cls)
    if found is None:
        fields = attrs.fields(cls)
        eq = [a.name for a in fields if a.eq]
        hashed = [a.name for a in fields if a.hash is True or (a.hash is None and a.eq)]
        found = _KEYS[cls] = (
            operator.attrgetter(*eq) if eq else None,
            operator.attrgetter(*hashed) if hashed else None,
        )
    return found


class Record:
    """The base of a `@attrs.frozen(repr=False, eq=False)` class (module docstring)."""

    __slots__ = ()

    # `_KEYS.get(…) or _keys(…)`: the class's getters without a call in the common case
    # (a fleet's memo keys hash and compare whole specs and Plans: ~300 calls a host)

    def __eq__(self, other: object) -> bool:
        cls = self.__class__
        if other.__class__ is not cls:
            return NotImplemented
        key = (_KEYS.get(cls) or _keys(cls))[0]
        return key is None or bool(key(self) == key(other))

    def __ne__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return not self == other

    def __hash__(self) -> int:
        cls = self.__class__
        key = (_KEYS.get(cls) or _keys(cls))[1]
        return hash((cls, None if key is None else key(self)))

    def __repr__(self) -> str:
        seen: set[int] | None = getattr(_printing, "seen", None)
        if seen is None:
            seen = _printing.seen = set()
        if id(self) in seen:
            return "..."
        seen.add(id(self))
        try:
            parts = []
            for a in attrs.fields(cast(Any, self.__class__)):
                if a.repr is False:
                    continue
                value = getattr(self, a.name, attrs.NOTHING)
                shown = repr(value) if a.repr is True else a.repr(value)
                parts.append(f"{a.name}={shown}")
            name = self.__class__.__qualname__.rsplit(">.", 1)[-1]
            return f"{name}({', '.join(parts)})"
        finally:
            seen.discard(id(self))


K = TypeVar("K")
V_co = TypeVar("V_co", covariant=True)


class FrozenMap(Mapping[K, V_co]):
    """A table that cannot change: what a loaded spec holds where node.toml has a table
    (`[sysctl]`, `modules.options` …), as it holds tuples where node.toml has an array.
    Equal to any mapping with the same items (a dict included), hashable when its values
    are, and it pickles; `dict(m)` is a mutable copy."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[K, V_co] | Iterable[tuple[K, V_co]] = ()) -> None:
        self._items: dict[K, V_co] = dict(items)

    def __getitem__(self, key: K) -> V_co:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"

    def __reduce__(self) -> tuple[type[FrozenMap[K, V_co]], tuple[dict[K, V_co]]]:
        return (self.__class__, (self._items,))
