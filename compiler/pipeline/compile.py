"""The pipeline's front half: a spec and its topology snapshot → a checked Plan.

Specs and snapshots are remembered by content (a fleet compiles one node.toml per
node class against the few snapshots of its hardware models), and so are the stages
of a layered spec read from the disk, by the value of the spec without its host's
name (`_compile_shared`: a fleet's hosts of one class share them); a spec built in
Python is rebuilt through the loader's converter (`hostc.spec.structure`) first.
`hostc.api` re-exports it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from hostc.diagnostics import (
    Diagnostic,
    HostcError,
    Severity,
    at,
    error,
    kind_of,
    raise_if_errors,
    with_file,
)
from hostc.inputs import SNAPSHOT_LIMIT, read_text_bounded
from hostc.patharg import as_path
from hostc.plan.model import Plan
from hostc.record import Record
from hostc.spec import layers
from hostc.spec import load as spec_load  # from_data through the module: tests count its calls
from hostc.spec.load import converted, load_layered, origin, to_data
from hostc.spec.model import HostSpec
from hostc.spec.parse import SPEC_LIMIT, declares_layers
from hostc.spec.text import Name
from hostc.topology.model import Topology

if TYPE_CHECKING:
    from hostc.spec.layers import Files


def read_topology(path: str | os.PathLike[str]) -> Topology:
    """A topology snapshot from its file."""
    from hostc.topology.snapshot import read

    return read(as_path(path, "topology"))


def topology_path(
    spec: HostSpec,
    spec_path: str | os.PathLike[str],
    override: str | os.PathLike[str] | None = None,
    spec_source: str | None = None,
) -> Path:
    """An explicit override wins; else `host.topology`, relative to the spec file."""
    spec_path = as_path(spec_path, "spec_path")
    if override is not None:
        return as_path(override, "topology")
    if not isinstance(spec, HostSpec):
        raise HostcError([error(at("spec"), f"expected a HostSpec, got {kind_of(spec)}")])
    if spec.host.topology is None:
        raise HostcError(
            with_file(
                [
                    error(
                        at("host", "topology"),
                        "no topology snapshot: hostc never guesses the hardware",
                        hint='set host.topology = "topology.toml" or name a snapshot '
                        "explicitly; capture one with `hostc probe -o topology.toml`",
                    )
                ],
                str(spec_path),
                spec_source,
            )
        )
    if not spec.host.topology.strip():
        raise HostcError(
            with_file(
                [
                    error(
                        at("host", "topology"),
                        "is empty: it names the topology snapshot, relative to the spec",
                        hint='host.topology = "topology.toml"',
                    )
                ],
                str(spec_path),
                spec_source,
            )
        )
    return spec_path.parent / spec.host.topology


def compile_plan(
    spec: HostSpec,
    topo: Topology,
    *,
    spec_file: str | None = None,
    spec_source: str | None = None,
) -> tuple[Plan, list[Diagnostic]]:
    """resolve → check → lower → check the plan.  Returns the Plan and the warnings.

    A spec built in Python (`HostSpec(kernel=Kernel(transparent_hugepage="always"))`)
    goes through the loader's converter first, so it gets the same types and rules.
    Diagnostics name `spec_file`; without it, the file the spec was loaded from
    (`<data>` for `spec_from_data` or a spec built in Python), never a made-up one."""
    spec = _typed(spec, spec_file or "<data>")
    if spec_file is None:
        spec_file, text = origin(spec) or ("<data>", None)
        spec_source = spec_source if spec_source is not None else text
    if not isinstance(topo, Topology):
        raise HostcError([error(at("topology"), f"expected a Topology, got {kind_of(topo)}")])
    return _attributed(_checked(spec, topo), spec_file, spec_source)


@attrs.frozen(repr=False, eq=False)
class _Checked(Record):
    """What resolve → check → lower → check the plan found, before any file is named: the
    Plan (None: errors stopped it before lowering) and the diagnostics of each half."""

    plan: Plan | None
    found: tuple[Diagnostic, ...]  # resolve's and check's (only the errors, if any)
    later: tuple[Diagnostic, ...] = ()  # check_plan's and check_machine's


def _checked(spec: HostSpec, topo: Topology) -> _Checked:
    """`compile_plan`'s stages, a pure function of the spec and the topology."""
    from hostc.check import check, check_machine, check_plan
    from hostc.lower import lower
    from hostc.resolve import resolve

    resolved, unresolved = resolve(spec, topo)
    found = unresolved + check(resolved)
    if any(d.severity is Severity.ERROR for d in found):
        # An error leaves its input out of what the rules see, so the warnings beside it
        # may be its consequences (a workload's unknown GPU leaves no CPU isolated: "no
        # CPU ends up isolated") and would send the reader after the wrong line.  Errors
        # first; the warnings come back once they are fixed (first-day-4 E3).
        return _Checked(None, tuple(d for d in found if d.severity is Severity.ERROR))
    plan = lower(resolved)
    return _Checked(plan, tuple(found), tuple(check_plan(plan) + check_machine(resolved, plan)))


def _attributed(
    done: _Checked, spec_file: str, spec_source: str | None
) -> tuple[Plan, list[Diagnostic]]:
    """The Plan and the warnings, each diagnostic naming the spec's file (and line); a
    HostcError with the errors where there are any."""
    found = with_file(done.found, spec_file, spec_source)
    raise_if_errors(found)
    assert done.plan is not None  # no error: it was lowered
    found += with_file(done.later, spec_file, spec_source)
    return done.plan, raise_if_errors(found)


def _compile_shared(
    spec: HostSpec, snapshot: str, topology_file: str, spec_file: str
) -> tuple[Plan, list[Diagnostic]]:
    """`compile_plan` of a spec the loader made, against the snapshot `topology_file`
    whose text is `snapshot`, shared by every host of a class: a fleet's hosts of one
    class differ in `host.name` alone, and no stage reads it but the one that copies it
    into the Plan (`resolve.host`), so the stages run on the spec without it
    (`_by_class`, remembered by value) and the Plan gets this host's name back."""
    nameless = attrs.evolve(spec, host=attrs.evolve(spec.host, name=Name("")))
    done = _by_class(nameless, snapshot, topology_file)
    if done.plan is not None:
        host = attrs.evolve(done.plan.host, name=spec.host.name)
        done = attrs.evolve(done, plan=attrs.evolve(done.plan, host=host))
    return _attributed(done, spec_file, None)


@functools.lru_cache(maxsize=64)
def _by_class(spec: HostSpec, snapshot: str, topology_file: str) -> _Checked:
    """`_checked`, remembered by the value of its whole input: the spec (a Record, equal
    by value) and the snapshot's text and file, which the topology is parsed from.
    Only successes are remembered: a HostcError propagates and is not cached."""
    return _checked(spec, _parsed_snapshot(snapshot, topology_file))


def _typed(spec: object, file: str) -> HostSpec:
    """`spec` with every field of its declared type: one the loader's converter made as
    it is (it cannot have changed since), any other one, `attrs.evolve`d or built in
    Python, rebuilt through `spec.load.from_data` (a wrong type is a HostcError there)."""
    if not isinstance(spec, HostSpec):
        raise HostcError([error(at("spec"), f"expected a HostSpec, got {kind_of(spec)}")])
    if converted(spec):
        return spec
    try:
        data = to_data(spec)
    except (TypeError, ValueError) as e:
        raise HostcError([error(at("spec"), f"not a node.toml value: {e}")]) from None
    return spec_load.from_data(data, file)


def compile_file(
    spec_path: str | os.PathLike[str],
    topology: str | os.PathLike[str] | None = None,
    known: Mapping[str, bytes] | None = None,
) -> tuple[Plan, list[Diagnostic]]:
    """The whole front half from a spec file: load, read its snapshot, check, lower.
    `known`: files already read, by normalised path (a fleet host's content key,
    `contentkey.build_key`'s `into`): compiled from those bytes, not read again."""
    spec_path = as_path(spec_path, "spec_path")
    spec, source = _read_spec(spec_path, known)
    if spec is None:  # its text goes on: the layers read and parse it no second time
        override = None if topology is None else as_path(topology, "topology")
        return _compile_layered(spec_path, override, source=source, known=known)
    try:
        topo = _read_topology(topology_path(spec, spec_path, topology, source), known)
    except HostcError as e:
        if topology is not None or spec.host.topology is None:
            raise
        named = f"named by host.topology in {spec_path}, relative to the spec's directory"
        raise HostcError([attrs.evolve(d, hint=d.hint or named) for d in e.diagnostics]) from None
    return compile_plan(spec, topo, spec_file=str(spec_path), spec_source=source)


def build_inputs(
    spec_path: str | os.PathLike[str], topology: str | os.PathLike[str] | None = None
) -> list[Path]:
    """The files a build of `spec_path` reads, which it must never overwrite: the spec
    and its snapshot (only the spec where it names none).  The spec is read through
    `compile_file`'s cache, so a build that just compiled it does not parse it again."""
    spec_path = as_path(spec_path, "spec_path")
    if topology is not None:
        return [spec_path, as_path(topology, "topology")]
    try:
        spec, source = _read_spec(spec_path)
        if spec is None:  # layers: merged from their files, as compile_file does
            spec = load_layered(spec_path)[0]
        return [spec_path, topology_path(spec, spec_path, None, source)]
    except HostcError:
        return [spec_path]


def _compile_layered(
    spec_path: Path,
    topology: Path | None,
    files: Files | None = None,
    source: str | None = None,
    known: Mapping[str, bytes] | None = None,
) -> tuple[Plan, list[Diagnostic]]:
    """A spec with `extends`: every diagnostic names the file and line that set the value,
    and the Plan carries each value's provenance.  `files`: where the spec, its layers
    and its snapshot are read (default the disk; `hostc diff SPEC@REV`: a revision);
    `source`: the spec's text, when `compile_file` has just read it from the disk;
    `known`: the disk's files already read (`compile_file`)."""
    spec, merged = load_layered(spec_path, files or (_Known(known) if known else None), source)
    try:
        where = topology_path(spec, spec_path, topology)
        # every host of a class shares the stages, on the disk and at a revision (both
        # sides of `hostc diff DIR@REV DIR`)
        if files is None:
            topo, text = _read_snapshot(where, known)
            if text is not None:
                plan, warnings = _compile_shared(spec, text, str(where), str(spec_path))
            else:
                plan, warnings = compile_plan(spec, topo, spec_file=str(spec_path))
        else:
            snapshot = files.text(where, "topology snapshot")
            plan, warnings = _compile_shared(
                spec, snapshot, files.shown(where), files.shown(spec_path)
            )
    except HostcError as e:
        raise HostcError(layers.attribute(e.diagnostics, merged)) from None
    return attrs.evolve(plan, provenance=layers.provenance(merged)), layers.attribute(
        warnings, merged
    )


def compile_layered(spec_path: Path, files: Files) -> tuple[Plan, list[Diagnostic]]:
    """A layered spec compiled from `files` (a git revision's, say) instead of the disk."""
    return _compile_layered(spec_path, None, files)


def _known_text(known: Mapping[str, bytes] | None, path: Path, limit: int) -> str | None:
    """A file's text from the bytes already read (`compile_file`'s `known`), or None:
    not among them, past the limit its reader has here, or not UTF-8 (then the file is
    read again, and its reader says what is wrong with it)."""
    data = known.get(os.path.normpath(path)) if known else None
    if data is None or len(data) > limit:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class _Known(layers.Disk):
    """The disk, where a layer already read (`compile_file`'s `known`) is not read again."""

    def __init__(self, known: Mapping[str, bytes]) -> None:
        self._known = known

    def text(self, path: Path, what: str) -> str:
        found = _known_text(self._known, path, SPEC_LIMIT)
        return super().text(path, what) if found is None else found

    def is_file(self, path: Path) -> bool:
        return os.path.normpath(path) in self._known or super().is_file(path)


def _read_spec(path: Path, known: Mapping[str, bytes] | None = None) -> tuple[HostSpec | None, str]:
    """`load_spec`, remembered by content like snapshots: a fleet keeps one node.toml
    per node class and compiles it for every machine of the class.  None: the spec
    has layers (`extends` …), which are read from their files every time."""
    text = _known_text(known, path, SPEC_LIMIT)
    if text is None:
        text = read_text_bounded(path, limit=SPEC_LIMIT, what="spec")
    return _parsed_spec(text, str(path)), text


@functools.lru_cache(maxsize=64)
def _parsed_spec(text: str, file: str) -> HostSpec | None:
    """A HostSpec is frozen and nothing downstream changes it, so one can be shared.
    Only successes are remembered: a HostcError propagates and is not cached.  Parsed
    through the layers' cache: a layered spec (None here) is merged from that parse."""
    data = layers.parsed(text, file)
    return None if declares_layers(data) else spec_load.from_data(data, file, text)


def _read_topology(path: Path, known: Mapping[str, bytes] | None = None) -> Topology:
    """`read_topology`, remembered by the file's content: a fleet compiles many specs
    against the few snapshots of its hardware models, and parsing and validating a
    snapshot is most of a build.  The file is read every time (or its bytes are
    `known`, read for this build), so an edit is seen."""
    return _read_snapshot(path, known)[0]


def _read_snapshot(
    path: Path, known: Mapping[str, bytes] | None = None
) -> tuple[Topology, str | None]:
    """`_read_topology`, and the text it was parsed from (None: `read_topology` read it,
    after the bounded read failed)."""
    text = _known_text(known, path, SNAPSHOT_LIMIT)
    if text is None:
        try:
            text = read_text_bounded(path, limit=SNAPSHOT_LIMIT, what="topology snapshot")
        except HostcError:
            return read_topology(path), None  # its own messages for a missing or unreadable file
    return _parsed_snapshot(text, str(path)), text


@functools.lru_cache(maxsize=8)
def _parsed_snapshot(text: str, file: str) -> Topology:
    """A Topology is frozen and nothing downstream changes it, so one can be shared.
    Only successes are remembered: a HostcError propagates and is not cached."""
    from hostc.topology.snapshot import loads

    return loads(text, file)


def spec_files(
    spec_path: str | os.PathLike[str], topology: str | os.PathLike[str] | None = None
) -> set[str]:
    """Every file a build of the spec reads, as absolute paths (what `hostc pre-commit`
    matches changed files against): itself, through `extends` its layers, and the
    topology snapshot it names.  Absolute, so that a spec named by an absolute path
    matches the relative names pre-commit passes, and the reverse."""
    path = as_path(spec_path, "spec_path")
    read = layers.chain(path) | {str(p) for p in build_inputs(path, topology)}
    return {os.path.abspath(p) for p in read}
