"""The Python API: the same stages and types the CLI uses, and no printing.

    spec, source = load_spec(Path("node.toml"))
    topo = read_topology(topology_path(spec, Path("node.toml")))
    plan, warnings = compile_plan(spec, topo, spec_file="node.toml", spec_source=source)
    artifacts = emit(plan, ["sysctl"])
    write(artifacts, Path("out"))
    for step in apply_steps(plan, artifacts):   # then run step.argv on the host
        ...
    reboot = needs_reboot(artifacts)

Every input problem raises HostcError carrying all Diagnostics.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hostc.activation import Step, needs_reboot
from hostc.artifact import Artifact, Kind
from hostc.diagnostics import Diagnostic, HostcError, error, raise_if_errors, with_file
from hostc.ingest import capture, dumps_snapshot, import_source, probe, read_source
from hostc.output import apply_manifest as _apply_manifest
from hostc.output import diff, manifest, write
from hostc.plan import Plan
from hostc.spec.load import load as load_spec
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology
from hostc.topology.snapshot import read as read_topology

if TYPE_CHECKING:
    from hostc.audit import Finding
    from hostc.targets import Target

__all__ = [
    "Artifact",
    "Diagnostic",
    "HostcError",
    "Plan",
    "Step",
    "apply_manifest",
    "apply_steps",
    "audit",
    "capture",
    "compile_file",
    "compile_plan",
    "diff",
    "dumps_snapshot",
    "emit",
    "import_source",
    "load_spec",
    "manifest",
    "needs_reboot",
    "probe",
    "read_source",
    "read_topology",
    "targets",
    "topology_path",
    "write",
]


def topology_path(
    spec: HostSpec, spec_path: Path, override: Path | None = None, spec_source: str | None = None
) -> Path:
    """`--topology` wins; else `host.topology`, relative to the spec file."""
    if override is not None:
        return override
    if spec.host.topology is None:
        raise HostcError(
            with_file(
                [
                    error(
                        "host.topology",
                        "no topology snapshot: hostc never guesses the hardware",
                        hint='set host.topology = "topology.toml" or pass --topology FILE; '
                        "capture one with `hostc probe -o topology.toml`",
                    )
                ],
                str(spec_path),
                spec_source,
            )
        )
    return spec_path.parent / spec.host.topology


def compile_plan(
    spec: HostSpec, topo: Topology, *, spec_file: str = "node.toml", spec_source: str | None = None
) -> tuple[Plan, list[Diagnostic]]:
    """check → lower → check the plan.  Returns the Plan and the warnings."""
    from hostc.check import check, check_plan
    from hostc.lower import lower

    found = with_file(check(spec, topo), spec_file, spec_source)
    raise_if_errors(found)
    plan = lower(spec, topo)
    found += with_file(check_plan(plan), spec_file, spec_source)
    return plan, raise_if_errors(found)


def compile_file(spec_path: Path, topology: Path | None = None) -> tuple[Plan, list[Diagnostic]]:
    """The whole front half from a spec file: load, read its snapshot, check, lower."""
    spec, source = _read_spec(spec_path)
    topo = _read_topology(topology_path(spec, spec_path, topology, source))
    return compile_plan(spec, topo, spec_file=str(spec_path), spec_source=source)


def _read_spec(path: Path) -> tuple[HostSpec, str]:
    """`load_spec`, remembered by content like snapshots: a fleet keeps one node.toml
    per node class and compiles it for every machine of the class."""
    from hostc.spec.load import SPEC_LIMIT
    from hostc.topology.readfile import read_text_bounded

    text = read_text_bounded(path, limit=SPEC_LIMIT, what="spec")
    return _parsed_spec(text, str(path)), text


@functools.lru_cache(maxsize=64)
def _parsed_spec(text: str, file: str) -> HostSpec:
    """A HostSpec is frozen and nothing downstream changes it, so one can be shared.
    Only successes are remembered: a HostcError propagates and is not cached."""
    from hostc.spec.load import loads

    return loads(text, file)


def _read_topology(path: Path) -> Topology:
    """`read_topology`, remembered by the file's content: a fleet compiles many specs
    against the few snapshots of its hardware models, and parsing and validating a
    snapshot is most of a build.  The file is read every time, so an edit is seen."""
    from hostc.topology.readfile import SNAPSHOT_LIMIT, read_text_bounded

    try:
        text = read_text_bounded(path, limit=SNAPSHOT_LIMIT, what="topology snapshot")
    except HostcError:
        return read_topology(path)  # its own messages for a missing or unreadable file
    return _parsed_snapshot(text, str(path))


@functools.lru_cache(maxsize=8)
def _parsed_snapshot(text: str, file: str) -> Topology:
    """A Topology is frozen and nothing downstream changes it, so one can be shared.
    Only successes are remembered: a HostcError propagates and is not cached."""
    from hostc.topology.snapshot import loads

    return loads(text, file)


def apply_steps(plan: Plan, artifacts: Iterable[Artifact]) -> list[Step]:
    """How the host files among `artifacts` take effect on this host's OS family: argv
    lists, in order, each once, safe to run twice.  `needs_reboot` says whether a
    reboot must follow."""
    from hostc.activation import steps

    return steps(artifacts, plan.host.os_family)


def apply_manifest(plan: Plan, artifacts: Iterable[Artifact]) -> dict[str, object]:
    """`apply` (argv and why per step) and `reboot`, as `hostc build --json` prints them."""
    return _apply_manifest(artifacts, plan.host.os_family)


def targets() -> dict[str, Target]:
    from hostc.targets import TARGETS

    return TARGETS


def emit(plan: Plan, names: Iterable[str] = ("all",)) -> list[Artifact]:
    """Artifacts of the named targets, in registry order.

    `all` means every file target that applies to this host (a GRUB drop-in is
    skipped on a RHEL-family host); naming a target that does not apply is an
    error.  Wrapper targets receive every applicable file target's artifacts.
    """
    from hostc.targets import Role

    registry = targets()
    wanted: Sequence[str] = list(names)
    unknown = [n for n in wanted if n != "all" and n not in registry]
    if unknown:
        raise HostcError(
            [
                error(
                    "--target", f"unknown target {n!r}", hint="targets: all, " + ", ".join(registry)
                )
                for n in unknown
            ]
        )
    problems = [
        error("--target", f"target {n!r} does not apply to this host: {why}")
        for n in wanted
        if n != "all" and (why := registry[n].applies(plan)) is not None
    ]
    if problems:
        raise HostcError(problems)
    files_cache: list[Artifact] | None = None

    def files() -> list[Artifact]:
        nonlocal files_cache
        if files_cache is None:
            files_cache = [
                a
                for t in registry.values()
                if t.role is Role.FILE and t.applies(plan) is None
                for a in t.emit(plan)
                if a.kind is Kind.FILE
            ]
            # every delivery records what it installs, and carries hostc-apply/-revert
            from hostc.targets import lifecycle

            files_cache += lifecycle.artifacts(plan, files_cache)
        return files_cache

    out: list[Artifact] = []
    for name, t in registry.items():
        if name in wanted:
            out.extend(t.emit(plan, files()) if t.role is Role.WRAPPER else t.emit(plan))
        elif "all" in wanted and t.role is Role.FILE and t.applies(plan) is None:
            out.extend(t.emit(plan))
    return out


def audit(plan: Plan, root: Path = Path("/")) -> list[Finding]:
    """Compare the host under `root` (`/`: this one, live; a copied tree; or a
    `hostc probe --capture --spec` archive) with the Plan: one Finding per setting."""
    from hostc.audit.run import audit_root

    return audit_root(plan, root)
