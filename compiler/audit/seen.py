"""What an observer saw: the value found, whether it matches, and a note."""

from __future__ import annotations

import attrs

from hostc.record import Record


@attrs.frozen(repr=False, eq=False)
class Seen(Record):
    found: str | None
    ok: bool | None  # None: not observable here
    note: str = ""


def absent(why: str) -> Seen:
    """Nothing to read here: not observable, with the reason."""
    return Seen(None, None, why)
