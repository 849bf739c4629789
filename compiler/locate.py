"""Map a TOML key path (`cpu.housekeeping`, `workload[1].gpus`) to a line number.

tomli keeps no positions, so this scans the source: table headers set the
current prefix (array-of-tables headers count their index), `key =` lines
complete it.  Best effort: when the exact key is not written (a default, a
missing key), the nearest written parent wins, like Butane's deepest-node lookup.
"""

from __future__ import annotations

import functools
import re

import attrs

from hostc.keypath import KeyPath
from hostc.record import Record

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*((?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-.\s])+?)\s*=")


_PART = re.compile(r"\"[^\"]*\"|'[^']*'|[^.]+")
_INDEX = re.compile(r"\[([0-9]{1,9})\]")


def _split(dotted: str) -> list[str]:
    if '"' not in dotted and "'" not in dotted:  # the usual bare key: dots split it
        return [p.strip() for p in dotted.split(".") if p.strip()]
    return [p.strip().strip("\"'") for p in _PART.findall(dotted) if p.strip()]


def _path_parts(path: str) -> list[str]:
    """`workload[1].gpus[0]` → ["workload", "#1", "gpus", "#0"]."""
    return _split(_INDEX.sub(r".#\1", path) if "[" in path else path)


def _element_lines(lines: list[str], start: int) -> list[int]:
    """Lines (1-based) where each element of the array value on line `start` begins: one
    pass over the array, remembered by `Scan`, so asking for every element stays linear."""
    depth = 0
    quote = ""
    out: list[int] = []
    pending = True  # the next non-blank character at depth 1 begins an element
    text = lines[start - 1]
    col = text.index("=") + 1
    for n in range(start, len(lines) + 1):
        row = lines[n - 1] if n != start else text[col:]
        i = 0
        while i < len(row):
            ch = row[i]
            if quote:
                if ch == "\\" and quote == '"':
                    i += 1
                elif ch == quote:
                    quote = ""
            elif depth == 1 and pending and not ch.isspace() and ch not in ",]#":
                out.append(n)
                pending = False
                continue  # the same character is read again as the element's first
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                break
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return out
            elif ch == "," and depth == 1:
                pending = True
            i += 1
    return out


@attrs.frozen(repr=False, eq=False)
class Scan(Record):
    """A source's written keys, scanned once and indexed: each header or `key =` line by
    its full key path (the first line writing it), so that locating one key costs a
    dictionary lookup per part of its path, not a pass over the file (a spec with
    thousands of errors, or a layered spec asked for every key, stays linear)."""

    lines: list[str]
    #: key path → (line, is a header): the first line that writes it
    index: dict[tuple[str, ...], tuple[int, bool]]
    #: line of an array value → the lines its elements begin on (filled when asked)
    elements: dict[int, list[int]] = attrs.field(factory=dict)


def scan(source: str) -> Scan:
    lines = source.splitlines()
    index: dict[tuple[str, ...], tuple[int, bool]] = {}
    prefix: list[str] = []
    counters: dict[str, int] = {}
    for n, raw in enumerate(lines, start=1):
        m = _HEADER.match(raw)
        if m:
            prefix = _split(m.group(2))
            if m.group(1) == "[[":
                name = ".".join(prefix)
                counters[name] = counters.get(name, -1) + 1
                prefix = [*prefix, f"#{counters[name]}"]
            index.setdefault(tuple(prefix), (n, True))
        else:
            k = _KEY.match(raw)
            if k:
                index.setdefault((*prefix, *_split(k.group(1))), (n, False))
    return Scan(lines, index)


@functools.lru_cache(maxsize=16)
def _scanned(source: str) -> Scan:
    """One index per source text: every diagnostic about one file reuses it."""
    return scan(source)


def _typed_parts(path: KeyPath) -> list[str]:
    """The typed parts as the scan keys them: an index (a named entry's too) as `#i`."""
    return [f"#{p}" if isinstance(p, int) else p for p in path.unnamed()]


def locate(path: KeyPath | str, source: str | Scan) -> int | None:
    """The line that writes `path` in `source` (text, or a `scan` of it): the deepest
    written key on the path, or the element of an array value it names.  A typed path is
    read by its parts; a text one (a provenance key, written by `hostc.spec.merge`) is
    split.  A `Label` is no key path: never located."""
    if isinstance(path, KeyPath) and path.label is not None:
        return None
    found = source if isinstance(source, Scan) else _scanned(source)
    want = _typed_parts(path) if isinstance(path, KeyPath) else _path_parts(path)
    for depth in range(len(want), 0, -1):
        hit = found.index.get(tuple(want[:depth]))
        if hit is None:
            continue
        n, header = hit
        rest = want[depth:]
        if not header and rest and rest[0].startswith("#"):
            elements = found.elements.get(n)
            if elements is None:
                elements = found.elements[n] = _element_lines(found.lines, n)
            i = int(rest[0][1:])
            if i < len(elements):
                return elements[i]
        return n
    return None
