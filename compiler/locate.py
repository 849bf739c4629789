"""Map a TOML key path (`cpu.housekeeping`, `workload[1].gpus`) to a line number.

tomli keeps no positions, so this scans the source: table headers set the
current prefix (array-of-tables headers count their index), `key =` lines
complete it.  Best effort: when the exact key is not written (a default, a
missing key), the nearest written parent wins, like Butane's deepest-node lookup.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*((?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-.\s])+?)\s*=")


def _split(dotted: str) -> list[str]:
    parts = re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", dotted)
    return [p.strip().strip("\"'") for p in parts if p.strip()]


def _path_parts(path: str) -> list[str]:
    """`workload[1].gpus[0]` → ["workload", "#1", "gpus", "#0"]."""
    return _split(re.sub(r"\[(\d+)\]", r".#\1", path))


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


def locate(path: str, source: str) -> int | None:
    want = _path_parts(path)
    lines = source.splitlines()
    best: tuple[int, int] | None = None  # (matched depth, line)
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
            keys = prefix
        else:
            k = _KEY.match(raw)
            if not k:
                continue
            keys = prefix + _split(k.group(1))
        depth = 0
        for a, b in zip(keys, want, strict=False):
            if a != b:
                break
            depth += 1
        if depth == len(keys) and depth > 0 and (best is None or depth > best[0]):
            best = (depth, n)
            rest = want[depth:]
            if not m and rest and rest[0].startswith("#"):
                element = _element_line(lines, n, int(rest[0][1:]))
                if element is not None:
                    best = (depth + 1, element)
    return best[1] if best else None
