"""`KeyPath`: where in an input a diagnostic points, typed (Butane's `path.ContextPath`).

A path is a tuple of parts: a key (`str`), an index (`int`), or a `Named` entry of an
array of tables that carries a name (`[[workload]]`).  It is built with `at(...)` or
the builders (`.key`, `.index`, `.named`) and rendered once, by `str()`:

    at("workload", Named(4, "serve-e"), "gpus", 0)   →  workload "serve-e".gpus[0]
    at("sysctl", "vm.swappiness")                      →  sysctl."vm.swappiness"
    at("kernel", "extra_args", 0)                      →  kernel.extra_args[0]

A named entry is shown by its name: after layers merge, its index is the merged
position and means nothing to a reader of any one file (first-day-3 F12); the index is
kept for `hostc.locate`, which finds the line by the typed parts, never by re-parsing
the text.

The one escape hatch is `Label`: a location that is no key path of a TOML input (a
line of a text importer's input, a file inside a capture).  It renders as written
and is never located.  Every other diagnostic path is a key path.
"""

from __future__ import annotations

import json
import re

import attrs

from hostc.knowledge import charsets
from hostc.record import Record

#: How much of a key a path shows.
KEY_MAX = 80
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _quoted(key: str) -> str:
    inner = json.dumps(key, ensure_ascii=False)[1:-1]
    inner = "".join(f"\\u{ord(c):04x}" if charsets.CONTROL.match(c) else c for c in inner)
    if len(inner) > KEY_MAX:
        inner = inner[: KEY_MAX - 1] + "…"
    return f'"{inner}"'


def toml_key(key: str) -> str:
    """One key as a TOML key path spells it: bare when it can be, else quoted with escapes
    (a key holding a newline must not start a new line in a diagnostic), cut short."""
    if _BARE_KEY.match(key) and len(key) <= KEY_MAX:
        return key
    return _quoted(key)


@attrs.frozen(repr=False, eq=False)
class Named(Record):
    """An entry of a named array of tables: `index` in the (merged) array, for locating
    its line; `name`, for showing it."""

    index: int
    name: str


@attrs.frozen(repr=False, eq=False)
class Label(Record):
    """The escape hatch: a location that is no TOML key path (`line 3`), shown as is."""

    text: str


Part = str | int | Named


@attrs.frozen(repr=False, eq=False)
class KeyPath(Record):
    parts: tuple[Part, ...] = ()
    #: set instead of `parts` for a location that is no key path (see `Label`)
    label: Label | None = None

    def key(self, *names: str) -> KeyPath:
        return KeyPath((*self.parts, *names))

    def index(self, i: int) -> KeyPath:
        return KeyPath((*self.parts, i))

    def named(self, i: int, name: str) -> KeyPath:
        return KeyPath((*self.parts, Named(i, name)))

    def __add__(self, other: KeyPath) -> KeyPath:
        return KeyPath((*self.parts, *other.parts))

    def __bool__(self) -> bool:
        return bool(self.parts) or self.label is not None

    def __str__(self) -> str:
        if self.label is not None:
            return self.label.text
        out = ""
        for p in self.parts:
            if isinstance(p, Named):
                out += f" {_quoted(p.name)}"
            elif isinstance(p, int):
                out += f"[{p}]"
            else:
                out += ("." if out else "") + toml_key(p)
        return out

    def indexed(self) -> str:
        """The path with every named entry by its index (`workload[4].gpus[0]`): the key
        path of a merged spec that provenance records."""
        return str(KeyPath(self.unnamed())) if self.label is None else ""

    def unnamed(self) -> tuple[str | int, ...]:
        """The parts, a named entry as its index: what `hostc.locate` looks up."""
        return tuple(p.index if isinstance(p, Named) else p for p in self.parts)


ROOT = KeyPath()


def at(*parts: Part) -> KeyPath:
    """`at("workload", 0, "gpus")`: a path from its parts."""
    return KeyPath(parts)


def label(text: str) -> KeyPath:
    """A location that is no key path (see `Label`)."""
    return KeyPath(label=Label(text))
