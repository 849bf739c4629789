"""An example host with TuneD owning the runtime settings, as a spec file beside its
snapshot: the shape issue 52's TuneD tests build (tests/unit/targets/test_tuned_*.py,
tests/cli/test_audit_order.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomli_w

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def variant(
    tmp: Path, example: str, edit: dict[str, Any] | None = None, topo_extra: str = ""
) -> Path:
    """examples/<example> with `[runtime] owner = "tuned"` and `[irq] owner =
    "irqbalance"` (check requires it with that owner; every NIC's queues), each section
    of `edit` merged in, written under `tmp`; the spec's path."""
    src = EXAMPLES / example
    data = tomllib.loads((src / "node.toml").read_text())
    data["runtime"] = {"owner": "tuned"}
    data["irq"] = {"owner": "irqbalance"}
    for section, value in (edit or {}).items():
        data[section] = {**data.get(section, {}), **value}
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "topology.toml").write_text((src / "topology.toml").read_text() + topo_extra)
    data["host"]["topology"] = "topology.toml"
    (tmp / "node.toml").write_text(tomli_w.dumps(data))
    return tmp / "node.toml"
