"""Describe artifacts for a provisioning system that places the files itself: the
`--json` manifest (each file, its sha256 and activation, its content or where it was
written) and the apply steps for the host's OS family."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from pathlib import Path

from hostc.artifact import Artifact
from hostc.delivery.activation import needs_reboot, steps
from hostc.delivery.output import destination
from hostc.plan.model import OsFamily


def manifest(artifacts: list[Artifact], out: Path | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for a in artifacts:
        row: dict[str, object] = {
            "target": a.target,
            "path": a.path,
            "kind": a.kind.value,
            "mode": f"{a.mode:04o}",
            "sha256": hashlib.sha256(a.data).hexdigest(),
            "activation": [str(x) for x in a.activation],
        }
        if out is None:
            try:
                row["content"] = a.data.decode("utf-8")
            except UnicodeDecodeError:
                row["content_base64"] = base64.b64encode(a.data).decode("ascii")
        else:
            row["written"] = str(destination(out, a))
        rows.append(row)
    return rows


def apply_manifest(artifacts: Iterable[Artifact], family: OsFamily) -> dict[str, object]:
    """The manifest's top level for a provisioning system that places the files itself:
    the apply steps for the host's OS family, in order, and whether a reboot follows."""
    arts = list(artifacts)
    return {
        # live: only makes the running host take the change now (skip it when a reboot
        # follows); package: what provides argv[0] where a base image may lack it
        "apply": [
            {"argv": list(s.command), "why": s.why, "live": s.live, "package": s.package}
            for s in steps(arts, family)
        ],
        "reboot": needs_reboot(arts),
    }
