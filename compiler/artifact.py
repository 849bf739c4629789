"""Artifact: one emitted file, and the Target protocol every emitter follows."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from hostc.plan import Plan


@attrs.frozen
class Artifact:
    target: str
    path: str  # absolute path on the host, or a deliverable's name
    content: str
    mode: int = 0o644

    @property
    def relpath(self) -> str:
        """Where it goes under `--out DIR/<target>/`."""
        return self.path.lstrip("/")


@attrs.frozen
class Target:
    name: str
    summary: str
    emit: Callable[[Plan], list[Artifact]]
