"""Many hosts per command, as the CLI and scripts reach them: the fleet runner
(`hostc.fleet.runner`: a selection of specs built, checked, planned or costed in a
process pool, one Result per host) and the summaries of a fleet's changes
(`hostc.fleet.fleetdiff`).  Names only: the machinery lives in `hostc.fleet`, below
the API, and never imports it.

The review's names load when first asked for (`__getattr__`): a fleet build never
reviews, and the review's modules (git's reads, the diff's two sides, the pages) were
45 ms of every fleet build's start."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hostc.fleet.runner import FAILED, Job, Result, affected, ansible_fleet, run, stale_hosts
from hostc.fleet.selection import FleetHost, select
from hostc.pipeline.build import fleet_line

if TYPE_CHECKING:
    from hostc.fleet.fleetdiff import FleetReview, fleet_disruption, stale_summary
    from hostc.report.review import md_text

#: each lazily loaded name and its module
_LAZY = {
    "FleetReview": "hostc.fleet.fleetdiff",
    "fleet_disruption": "hostc.fleet.fleetdiff",
    "stale_summary": "hostc.fleet.fleetdiff",
    "md_text": "hostc.report.review",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FAILED",
    "FleetHost",
    "FleetReview",
    "Job",
    "Result",
    "affected",
    "ansible_fleet",
    "fleet_disruption",
    "fleet_line",
    "md_text",
    "run",
    "select",
    "stale_hosts",
    "stale_summary",
]
