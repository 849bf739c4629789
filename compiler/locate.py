"""Map a TOML key path (`cpu.housekeeping`, `hugepages.per_node.1`) to a line number.

tomllib keeps no positions, so this scans the source: table headers set the
current prefix, `key =` lines complete it.  Best effort: when the exact key is
not written (a default, a missing key), the nearest written parent wins, like
Butane's deepest-node lookup.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*((?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_\-.\s])+?)\s*=")


def _split(dotted: str) -> list[str]:
    parts = re.findall(r"\"[^\"]*\"|'[^']*'|[^.]+", dotted)
    return [p.strip().strip("\"'") for p in parts if p.strip()]


def locate(path: str, source: str) -> int | None:
    want = _split(path.replace("[", ".").replace("]", ""))
    best: tuple[int, int] | None = None  # (matched depth, line)
    prefix: list[str] = []
    for n, raw in enumerate(source.splitlines(), start=1):
        m = _HEADER.match(raw)
        if m:
            prefix = _split(m.group(1))
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
    return best[1] if best else None
