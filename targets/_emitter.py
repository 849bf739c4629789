"""What every target module writes into: one target's artifacts under its name.

Apart from `_render` (which loads jinja2) so that a target without a template, the
command line alone, imports no template engine; apart from the registry
(`hostc.targets`), which imports the target modules that import this.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from hostc.artifact import Action, Activation, Artifact, ArtifactKind, deliverable, file


@attrs.define
class Emitter:
    """Collects one target's artifacts under the target's name, which the registry gives."""

    target: str
    artifacts: list[Artifact] = attrs.field(factory=list)

    def file(self, path: str, text: str, *activation: Activation, mode: int = 0o644) -> None:
        """A text file installed on the host."""
        self.artifacts.append(file(self.target, path, text, *activation, mode=mode))

    def unit(self, path: str, text: str, name: str, *, start: bool = False) -> None:
        """A unit file of hostc's own (the one rule of what installing one does): the
        manager rereads it and it is enabled; `start`: a oneshot that also runs now."""
        now = (Activation(Action.START, name),) if start else ()
        self.file(
            path, text, Activation(Action.DAEMON_RELOAD), Activation(Action.ENABLE, name), *now
        )

    def deliverable(self, name: str, data: str | bytes, mode: int = 0o644) -> None:
        """A file handed to a person or a tool (`user-data`, a tarball)."""
        self.artifacts.append(deliverable(self.target, name, data, mode))

    def carry(self, files: Iterable[Artifact]) -> None:
        """Other targets' host files, unchanged but for the target that carries them."""
        self.artifacts += [
            attrs.evolve(a, target=self.target) for a in files if a.kind is ArtifactKind.FILE
        ]
