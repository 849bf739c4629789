"""What `hostc bench`'s options show before anything runs (limits and defaults), from
modules that load nothing of the audit or the host readers: every `hostc` start
registers the command, and only `hostc bench` pays for `hostc.api.bench`."""

from __future__ import annotations

from hostc.bench.generic import READER_HELP
from hostc.bench.stats import ALPHA, MAX_RUNS, MIN_EFFECT

__all__ = ["ALPHA", "MAX_RUNS", "MIN_EFFECT", "READER_HELP"]
