"""lower: Resolved → Plan.  Pure; assumes `hostc.check` found no errors.

Lowering reads only what `hostc.resolve` made (the merged settings with their
provenance, the placements, the partition and the requests), never the spec: a spec
key is interpreted in resolve, once (`tests/project/test_lowering_reads_resolve.py`).
"""

from __future__ import annotations

from hostc.lower.assemble import lower

__all__ = ["lower"]
