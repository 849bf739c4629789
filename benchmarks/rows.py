"""A benchmark's row and the table they print as (`run.py` and `keys.py` alike): one
module both import, so that neither imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Row:
    figure: str
    value: str
    goal: str
    ok: bool | None  # None: informational, no goal
    note: str = ""


def table(rows: list[Row]) -> str:
    head = ("figure", "value", "goal", "result", "notes")
    cells = [
        (r.figure, r.value, r.goal, "—" if r.ok is None else ("pass" if r.ok else "FAIL"), r.note)
        for r in rows
    ]
    widths = [max(len(c[i]) for c in [head, *cells]) for i in range(4)]

    def line(c: Sequence[str]) -> str:
        return "  ".join(x.ljust(w) for x, w in zip(c[:4], widths, strict=True)) + "  " + c[4]

    return "\n".join([line(head), line(["-" * w for w in widths] + ["-----"]), *map(line, cells)])
