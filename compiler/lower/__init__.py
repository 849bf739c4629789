"""lower: HostSpec × Topology → Plan.  Pure; assumes `hostc.check` found no errors."""

from __future__ import annotations

from hostc.lower.assemble import lower

__all__ = ["lower"]
