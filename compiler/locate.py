"""Map a TOML key path (`cpu.housekeeping`, `workload[1].gpus`) to a line number.

tomli keeps no positions, so this scans the source: table headers set the
current prefix (array-of-tables headers count their index), `key =` lines
complete it.  Best effort: when the exact key is not written (a default, a
missing key), the nearest written parent wins, like Butane's deepest-node lookup.
"""

from __future__ import annotations

import re

import attrs

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


def _element_line(lines: list[str], start: int, index: int) -> int | None:
    """Line (1-based) where element `index` of the array value on line `start` begins."""
    depth = 0
    count = 0
    quote = ""
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
            elif depth == 1 and count == index and not ch.isspace() and ch not in ",]#":
                return n
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                break
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return None
            elif ch == "," and depth == 1:
                count += 1
            i += 1
    return None


@attrs.frozen(repr=False, eq=False)
class Scan(Record):
    """A source's written keys, scanned once: each header or `key =` line as its full
    key path and line number (a layered spec asks one file for many keys)."""

    lines: list[str]
    entries: list[tuple[list[str], int, bool]]  # (key path, line, is a header)


def scan(source: str) -> Scan:
    lines = source.splitlines()
    entries: list[tuple[list[str], int, bool]] = []
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
            entries.append((prefix, n, True))
        else:
            k = _KEY.match(raw)
            if k:
                entries.append((prefix + _split(k.group(1)), n, False))
    return Scan(lines, entries)


def locate(path: str, source: str | Scan) -> int | None:
    """The line that writes `path` in `source` (text, or a `scan` of it to ask again)."""
    found = source if isinstance(source, Scan) else scan(source)
    want = _path_parts(path)
    best: tuple[int, int] | None = None  # (matched depth, line)
    for keys, n, header in found.entries:
        depth = 0
        for a, b in zip(keys, want, strict=False):
            if a != b:
                break
            depth += 1
        if depth == len(keys) and depth > 0 and (best is None or depth > best[0]):
            best = (depth, n)
            rest = want[depth:]
            if not header and rest and rest[0].startswith("#"):
                element = _element_line(found.lines, n, int(rest[0][1:]))
                if element is not None:
                    best = (depth + 1, element)
    return best[1] if best else None
