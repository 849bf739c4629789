"""Whole file targets a fleet's hosts of one class share: emitted once per anonymous Plan.

A file target declared `shared` in the registry names its host only in the header
line of each of its artifacts (`_render.header(plan).line`: the first line, or the
second under a `#!/bin/sh` shebang); tests/unit/targets/test_shared_targets.py proves
it for every example and checks that no declared target's code or template reads
the host's name.  Such a target is emitted once per distinct `anonymous` Plan (the
Plan less its host's name and provenance; the registry's `_emitted` memo), where its
header line goes found once (`splices`), and each host of the class takes those
artifacts with its own header line in that place (`headed`): the emit functions,
their contexts and their memo lookups run once per class instead of once per host.

Re-heading is fail-safe: where the anonymous header line is not found exactly once,
at the header's place, in an artifact that names it (an artifact without a header,
`kernel-cmdline`, is taken as it is only if it holds no anonymous header line
either), that host's target is emitted directly instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hostc.artifact import Artifact
from hostc.plan.model import Plan
from hostc.targets._header import Header

#: what a script's header line follows (`_render.script`)
SHEBANG = b"#!/bin/sh\n"

#: where an artifact's header line goes: the bytes before it, which of the host's
#: header lines (`_roles`), and the bytes after it; None: the artifact has none
Splice = tuple[bytes, int, bytes] | None
#: per target: why it does not apply (None: it does), its artifacts, and their splices
#: (None: a header line out of place, so each host's is emitted directly)
Emitted = tuple[tuple[str | None, tuple[Artifact, ...], tuple[Splice, ...] | None], ...]


def anonymous(plan: Plan) -> Plan:
    """The Plan without what names its host, its name and the files that set its values
    (`provenance`), which no shared target and no audit row reads (the header names the
    host): every host of a class with the same values has the same one."""
    return attrs.evolve(plan, host=attrs.evolve(plan.host, name=""), provenance=())


def header_lines(name: str, role: str | None) -> tuple[bytes, ...]:
    """The header lines a target writes for a host of this name and role, in the order a
    `Splice` names them: with the role, and without it (the kubelet's YAML)."""
    return tuple(Header(name, r).line.encode() for r in _roles(role))


def headed(a: Artifact, splice: Splice, own: tuple[bytes, ...]) -> Artifact:
    """A cached artifact with the host's own header line (`header_lines`) in its place;
    every other field as cached."""
    if splice is None:
        return a
    before, which, after = splice
    return Artifact(a.target, a.path, before + own[which] + after, a.mode, a.kind, a.activation)


def _roles(role: str | None) -> tuple[str | None, ...]:
    """The roles a header line names: the host's, and none (the kubelet's YAML)."""
    return (role,) if role is None else (role, None)


class _Misplaced(Exception):
    """An anonymous header line found where no header goes, or more than once."""


def splices(arts: Sequence[Artifact], lines: Sequence[bytes]) -> tuple[Splice, ...] | None:
    """Where each artifact's anonymous header line (one of `lines`) is; None where one's is
    not exactly once at its header's place (the target is emitted directly)."""
    try:
        return tuple(_splice(a.data, lines) for a in arts)
    except _Misplaced:
        return None


def _splice(data: bytes, lines: Sequence[bytes]) -> Splice:
    found = [i for i, anon in enumerate(lines) if anon in data]
    if not found:
        return None
    if len(found) != 1:
        raise _Misplaced
    anon = lines[found[0]]
    at = len(SHEBANG) if data.startswith(SHEBANG) else 0
    if data.count(anon) != 1 or not data.startswith(anon + b"\n", at):
        raise _Misplaced
    return data[:at], found[0], data[at + len(anon) :]
