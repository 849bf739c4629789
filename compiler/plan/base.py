"""The vocabulary every part of the Plan shares: when a setting takes effect, the OS
release and family, and the Reason each value carries (Butane's provenance on the value)."""

from __future__ import annotations

from typing import Final

import attrs

from hostc.knowledge.family import OsFamily as OsFamily
from hostc.provenance import Reason as Reason
from hostc.provenance import Value as Value
from hostc.record import Record
from hostc.vocab import When as When

UNLIMITED: Final = "unlimited"


@attrs.frozen(repr=False, eq=False)
class Distro(Record):
    """An OS release as os-release names it: `ID` and `VERSION_ID` (`rhel`, `9.4`).
    Shown, and written to plan.json, as `ID-VERSION_ID` (`rhel-9.4`)."""

    id: str
    version: str | None = None

    def __str__(self) -> str:
        return self.id + (f"-{self.version}" if self.version else "")
