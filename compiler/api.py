"""The Python API: the same stages and types the CLI uses, and no printing.

    spec, source = load_spec("node.toml")          # str or os.PathLike
    spec = loads_spec(text, path="node.toml")      # or spec_from_data({...})
    topo = read_topology(topology_path(spec, Path("node.toml")))
    plan, warnings = compile_plan(spec, topo, spec_file="node.toml", spec_source=source)
    artifacts = emit(plan, ["sysctl"])
    write(artifacts, Path("out"))
    for step in apply_steps(plan, artifacts):   # then run step.argv on the host
        ...
    reboot = needs_reboot(artifacts)

Every input problem raises HostcError carrying all Diagnostics, and so does an
argument of the wrong type (a path that is not str or os.PathLike, one bare
string where a list of target names belongs, a spec field of the wrong type).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from hostc.activation import Step
from hostc.activation import needs_reboot as _needs_reboot
from hostc.artifact import Artifact, Kind
from hostc.diagnostics import Diagnostic, HostcError, error, raise_if_errors, with_file
from hostc.ingest import capture, dumps_snapshot, import_source, probe, read_source
from hostc.output import apply_manifest as _apply_manifest
from hostc.output import diff as _diff
from hostc.output import manifest as _manifest
from hostc.output import write as _write
from hostc.patharg import artifact_list, as_names, as_path, of_type
from hostc.plan import Plan
from hostc.spec.load import load as load_spec
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology

if TYPE_CHECKING:
    from hostc.audit import Finding
    from hostc.report.explain import Explanation
    from hostc.report.review import Review
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
    "explain",
    "import_source",
    "load_spec",
    "loads_spec",
    "manifest",
    "needs_reboot",
    "plan_diff",
    "probe",
    "read_source",
    "read_topology",
    "render_svg",
    "spec_from_data",
    "target_warnings",
    "targets",
    "topology_path",
    "write",
]


def loads_spec(text: str, path: str | os.PathLike[str] = "node.toml") -> HostSpec:
    """A spec from its text; `path` is only the name diagnostics give it."""
    from hostc.spec.load import loads

    return loads(text, str(as_path(path, "path")))


def spec_from_data(data: Mapping[str, object], path: str = "<data>") -> HostSpec:
    """A spec from a mapping shaped like node.toml, through the loader's own converter."""
    from hostc.spec.load import from_data

    return from_data(data, path)


def as_names_or_paths(value: object) -> list[object]:
    """`protect`: an iterable of paths, never one bare path."""
    if isinstance(value, str | bytes | os.PathLike) or not hasattr(value, "__iter__"):
        raise HostcError([error("protect", "expected a list of paths")])
    return list(value)


def read_topology(path: str | os.PathLike[str]) -> Topology:
    """A topology snapshot from its file."""
    from hostc.topology.snapshot import read

    return read(as_path(path, "topology"))


def write(
    artifacts: Iterable[Artifact], out: str | os.PathLike[str], protect: Iterable[Path] = ()
) -> list[Path]:
    """Write the artifacts under `out` atomically (`hostc.output.write`)."""
    paths = [as_path(p, "protect") for p in as_names_or_paths(protect)]
    return _write(artifact_list(artifacts), as_path(out, "out"), paths)


def diff(artifacts: list[Artifact], out: str | os.PathLike[str]) -> str:
    """Unified diff from the tree `out` to the artifacts; '' when identical."""
    return _diff(artifact_list(artifacts), as_path(out, "out"))


def manifest(
    artifacts: list[Artifact], out: str | os.PathLike[str] | None
) -> list[dict[str, object]]:
    """Rows of `hostc build --json`: with `out`, where each file was written."""
    return _manifest(artifact_list(artifacts), None if out is None else as_path(out, "out"))


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
        raise HostcError([error("spec", f"expected a HostSpec, got {type(spec).__name__}")])
    if spec.host.topology is None:
        raise HostcError(
            with_file(
                [
                    error(
                        "host.topology",
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
                        "host.topology",
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
    spec: HostSpec, topo: Topology, *, spec_file: str = "node.toml", spec_source: str | None = None
) -> tuple[Plan, list[Diagnostic]]:
    """resolve → check → lower → check the plan.  Returns the Plan and the warnings.

    A spec built in Python (`HostSpec(kernel=Kernel(transparent_hugepage="always"))`)
    goes through the loader's converter first, so it gets the same types and rules."""
    from hostc.check import check, check_plan
    from hostc.lower import lower
    from hostc.resolve import resolve

    spec = _typed(spec, spec_file)
    if not isinstance(topo, Topology):
        raise HostcError([error("topology", f"expected a Topology, got {type(topo).__name__}")])

    resolved, unresolved = resolve(spec, topo)
    found = with_file(unresolved + check(resolved), spec_file, spec_source)
    raise_if_errors(found)
    plan = lower(resolved)
    found += with_file(check_plan(plan), spec_file, spec_source)
    return plan, raise_if_errors(found)


def _typed(spec: object, file: str) -> HostSpec:
    """`spec` with every field of its declared type: a loaded spec as it is, any other
    one rebuilt through `spec.load.from_data` (a wrong type is a HostcError there)."""
    from hostc.spec.load import LOADED, from_data, to_data

    if not isinstance(spec, HostSpec):
        raise HostcError([error("spec", f"expected a HostSpec, got {type(spec).__name__}")])
    if LOADED.get(id(spec)) is spec:
        return spec
    try:
        data = to_data(spec)
    except (TypeError, ValueError) as e:
        raise HostcError([error("spec", f"not a node.toml value: {e}")]) from None
    return from_data(data, file)


def compile_file(
    spec_path: str | os.PathLike[str], topology: str | os.PathLike[str] | None = None
) -> tuple[Plan, list[Diagnostic]]:
    """The whole front half from a spec file: load, read its snapshot, check, lower."""
    spec_path = as_path(spec_path, "spec_path")
    spec, source = _read_spec(spec_path)
    if spec is None:
        return _compile_layered(
            spec_path, None if topology is None else as_path(topology, "topology")
        )
    try:
        topo = _read_topology(topology_path(spec, spec_path, topology, source))
    except HostcError as e:
        if topology is not None or spec.host.topology is None:
            raise
        named = f"named by host.topology in {spec_path}, relative to the spec's directory"
        raise HostcError([attrs.evolve(d, hint=d.hint or named) for d in e.diagnostics]) from None
    return compile_plan(spec, topo, spec_file=str(spec_path), spec_source=source)


def _compile_layered(spec_path: Path, topology: Path | None) -> tuple[Plan, list[Diagnostic]]:
    """A spec with `extends`: every diagnostic names the file and line that set the value,
    and the Plan carries each value's provenance."""
    from hostc.spec import layers
    from hostc.spec.load import load_layered

    spec, merged = load_layered(spec_path)
    try:
        topo = _read_topology(topology_path(spec, spec_path, topology))
        plan, warnings = compile_plan(spec, topo, spec_file=str(spec_path))
    except HostcError as e:
        raise HostcError(layers.attribute(e.diagnostics, merged)) from None
    return attrs.evolve(plan, provenance=layers.provenance(merged)), layers.attribute(
        warnings, merged
    )


def _read_spec(path: Path) -> tuple[HostSpec | None, str]:
    """`load_spec`, remembered by content like snapshots: a fleet keeps one node.toml
    per node class and compiles it for every machine of the class.  None: the spec
    has layers (`extends` …), which are read from their files every time."""
    from hostc.spec.load import SPEC_LIMIT
    from hostc.topology.readfile import read_text_bounded

    text = read_text_bounded(path, limit=SPEC_LIMIT, what="spec")
    return _parsed_spec(text, str(path)), text


@functools.lru_cache(maxsize=64)
def _parsed_spec(text: str, file: str) -> HostSpec | None:
    """A HostSpec is frozen and nothing downstream changes it, so one can be shared.
    Only successes are remembered: a HostcError propagates and is not cached."""
    from hostc.spec import layers
    from hostc.spec.load import from_data, parse

    data = parse(text, file)
    return None if layers.declares_layers(data) else from_data(data, file, text)


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

    plan = of_type(plan, Plan, "plan", "a Plan")
    return steps(artifact_list(artifacts), plan.host.os_family)


def needs_reboot(artifacts: Iterable[Artifact]) -> bool:
    """Whether any of `artifacts` takes effect only after a reboot."""
    return _needs_reboot(artifact_list(artifacts))


def apply_manifest(plan: Plan, artifacts: Iterable[Artifact]) -> dict[str, object]:
    """`apply` (argv and why per step) and `reboot`, as `hostc build --json` prints them."""
    plan = of_type(plan, Plan, "plan", "a Plan")
    return _apply_manifest(artifact_list(artifacts), plan.host.os_family)


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
    if not isinstance(plan, Plan):
        raise HostcError([error("plan", f"expected a Plan, got {type(plan).__name__}")])
    wanted: Sequence[str] = as_names(names)
    unknown = [n for n in wanted if n != "all" and n not in registry]
    if unknown:
        raise HostcError(
            [
                error(
                    "targets", f"unknown target {n!r}", hint="targets: all, " + ", ".join(registry)
                )
                for n in unknown
            ]
        )
    problems = [
        error("targets", f"target {n!r} does not apply to this host: {why}")
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
    _one_artifact_per_path(out)
    if files_cache is not None:
        _one_artifact_per_path(files_cache, key=lambda a: a.path)
    return out


def render_svg(plan: Plan) -> str:
    """The partition as an SVG picture (`hostc plan --format svg`): deterministic text."""
    from hostc.report.svg import render_svg as _render

    return _render(plan)


def explain(spec_path: Path, what: str, topology: Path | None = None) -> Explanation:
    """`hostc explain`: for a setting name, spec key path or `artifact-path:line`, where
    the value came from, its Plan entry and reason, the artifact lines carrying it, and
    where a host shows it.  An unknown WHAT raises HostcError with close matches."""
    from hostc.diagnostics import with_file
    from hostc.lower.assemble import context
    from hostc.report.explain import explain as _explain
    from hostc.resolve import resolve
    from hostc.topology.readfile import SNAPSHOT_LIMIT, read_text_bounded

    spec, source = _read_spec(spec_path)
    if spec is None:  # layers: the Plan's provenance names the file of each value
        from hostc.spec.load import load_layered

        spec = load_layered(spec_path)[0]
        topo_path = topology_path(spec, spec_path, topology)
        plan, _ = _compile_layered(spec_path, topology)
    else:
        topo_path = topology_path(spec, spec_path, topology, source)
        plan, _ = compile_plan(
            spec, _read_topology(topo_path), spec_file=str(spec_path), spec_source=source
        )
    # the facts the preset conditions were judged on, exactly as lower resolved them
    ctx = context(resolve(spec, _read_topology(topo_path))[0], list(plan.workloads))
    topo_text = read_text_bounded(topo_path, limit=SNAPSHOT_LIMIT, what="topology snapshot")
    try:
        return _explain(
            plan, emit(plan), what, (str(spec_path), source), (str(topo_path), topo_text), ctx
        )
    except HostcError as e:
        raise HostcError(with_file(e.diagnostics, str(spec_path))) from None


def plan_diff(old: str, new: str) -> Review:
    """`hostc diff`: OLD and NEW are spec files, plan.json files or `SPEC@REV` (a spec and
    its topology at a git revision).  The Plan-level change and, from specs, the artifacts
    whose bytes change."""
    from hostc.report.review import review

    return review(old, new)


def target_warnings(plan: Plan, names: Iterable[str]) -> list[Diagnostic]:
    """Warnings about a target selection that is valid but likely not what the host
    reads: Ignition asked for a host that is not CoreOS-family (as grubby is refused
    for a Debian host, but Ignition may also provision a first boot elsewhere)."""
    from hostc.diagnostics import warning
    from hostc.plan import OsFamily

    plan = of_type(plan, Plan, "plan", "a Plan")
    out = []
    if "ignition" in as_names(names) and plan.host.os_family is not OsFamily.COREOS:
        out.append(
            warning(
                "targets",
                f"ignition is read by CoreOS-family hosts (Fedora CoreOS, RHCOS, Flatcar); "
                f"this host is {plan.host.os or plan.host.os_family}, which does not run "
                "Ignition unless its image does",
                hint="cloud-init or rootfs deliver the same files to other hosts",
            )
        )
    return out


class ArtifactCollision(AssertionError):
    """Two artifacts at one path: a bug in hostc (the checks should have refused the
    spec), so an internal error (exit 3), never a file silently overwritten."""


def _one_artifact_per_path(
    arts: Iterable[Artifact], key: Callable[[Artifact], str] = lambda a: f"{a.target}/{a.relpath}"
) -> None:
    seen: set[str] = set()
    for a in arts:
        k = key(a)
        if k in seen:
            raise ArtifactCollision(f"two artifacts share the path {k}")
        seen.add(k)


def audit(plan: Plan, root: str | os.PathLike[str] = Path("/")) -> list[Finding]:
    """Compare the host under `root` (`/`: this one, live; a copied tree; or a
    `hostc probe --capture --spec` archive) with the Plan: one Finding per setting."""
    from hostc.audit.run import audit_root

    return audit_root(of_type(plan, Plan, "plan", "a Plan"), as_path(root, "root"))
