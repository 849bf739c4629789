"""The vocabulary every part of the Plan shares: when a setting takes effect, the OS
family, and the Reason each value carries (Butane's provenance on the value)."""

from __future__ import annotations

from typing import Final

from hostc.knowledge.family import OsFamily as OsFamily
from hostc.provenance import Reason as Reason
from hostc.provenance import Value as Value
from hostc.vocab import When as When

UNLIMITED: Final = "unlimited"
