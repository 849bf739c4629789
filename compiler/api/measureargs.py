"""`hostc measure`'s option limits and default record, for the command's help: from a
module that loads nothing (`hostc.measure.limits`); only `hostc measure` pays for
`hostc.api.measure`."""

from __future__ import annotations

from hostc.measure.limits import MAX_WINDOW, RECORD

__all__ = ["MAX_WINDOW", "RECORD"]
