"""The Python API: the same stages and types the CLI uses, and no printing.

    spec, source = load_spec(Path("node.toml"))
    topo = read_topology(topology_path(spec, Path("node.toml")))
    plan, warnings = compile_plan(spec, topo, spec_file="node.toml", spec_source=source)
    artifacts = emit(plan, ["sysctl"])
    write(artifacts, Path("out"))

Every input problem raises HostcError carrying all Diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from hostc.artifact import Artifact, Target
from hostc.diagnostics import Diagnostic, HostcError, error, raise_if_errors, with_file
from hostc.output import diff, manifest, write
from hostc.plan import Plan
from hostc.spec.load import load as load_spec
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology
from hostc.topology.snapshot import read as read_topology

__all__ = [
    "Artifact",
    "Diagnostic",
    "HostcError",
    "Plan",
    "compile_file",
    "compile_plan",
    "diff",
    "emit",
    "load_spec",
    "manifest",
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
    spec, source = load_spec(spec_path)
    topo = read_topology(topology_path(spec, spec_path, topology, source))
    return compile_plan(spec, topo, spec_file=str(spec_path), spec_source=source)


def targets() -> dict[str, Target]:
    from hostc.targets import TARGETS

    return TARGETS


def emit(plan: Plan, names: Iterable[str] = ("all",)) -> list[Artifact]:
    """Artifacts of the named targets (`all` for every one), in registry order."""
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
    if "all" in wanted:
        wanted = list(registry)
    out: list[Artifact] = []
    for name in registry:
        if name in wanted:
            out.extend(registry[name].emit(plan))
    return out
