"""The Python API: the same stages and types the CLI uses, and no printing.

    spec, source = load_spec("node.toml")          # str or os.PathLike
    spec = loads_spec(text, path="node.toml")      # or spec_from_data({...})
    topo = read_topology(topology_path(spec, Path("node.toml")))
    plan, warnings = compile_plan(spec, topo, spec_file="node.toml", spec_source=source)
    artifacts = emit(plan, ["sysctl"])
    write(artifacts, Path("out"))
    for step in apply_steps(plan, artifacts):   # then run step.command on the host
        ...
    reboot = needs_reboot(artifacts)

Every input problem raises HostcError carrying all Diagnostics, and so does an
argument of the wrong type (a path that is not str or os.PathLike, one bare
string where a list of target names belongs, a spec field of the wrong type).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hostc.activation import Step
from hostc.activation import needs_reboot as _needs_reboot
from hostc.api_build import changed, prune, stale_hosts, target_scope, write_build
from hostc.api_compile import (
    build_inputs,
    compile_file,
    compile_plan,
    read_topology,
    spec_files,
    topology_path,
)
from hostc.api_report import (
    SCHEMAS,
    audit,
    audit_json,
    audit_state,
    audit_text,
    drift,
    explain,
    plan_diff,
    plan_json,
    plan_text,
    render_svg,
    review_text,
    schema,
)
from hostc.api_topology import (
    IMPORT_KINDS,
    capture,
    capture_bytes,
    dumps_snapshot,
    import_source,
    probe,
    read_snapshot,
    read_source,
    start_spec,
    write_snapshot,
)
from hostc.artifact import Artifact
from hostc.compare import diff as _diff
from hostc.compare import differences as _differences
from hostc.diagnostics import Diagnostic, HostcError, error
from hostc.inputs import overwrites_input
from hostc.output import apply_manifest as _apply_manifest
from hostc.output import check_out as _check_out
from hostc.output import manifest as _manifest
from hostc.patharg import artifact_list, as_names, as_path, of_type
from hostc.plan import Plan
from hostc.spec.load import load as load_spec
from hostc.spec.model import HostSpec

if TYPE_CHECKING:
    from hostc.targets import Target

__all__ = [
    "IMPORT_KINDS",
    "SCHEMAS",
    "Artifact",
    "Diagnostic",
    "HostcError",
    "Plan",
    "Step",
    "apply_manifest",
    "apply_steps",
    "audit",
    "audit_json",
    "audit_state",
    "audit_text",
    "build_inputs",
    "capture",
    "capture_bytes",
    "changed",
    "check_out",
    "compile_file",
    "compile_plan",
    "diff",
    "differences",
    "drift",
    "dumps_snapshot",
    "emit",
    "explain",
    "import_source",
    "load_spec",
    "loads_spec",
    "manifest",
    "needs_reboot",
    "overwrites_input",
    "plan_diff",
    "plan_json",
    "plan_text",
    "probe",
    "prune",
    "read_snapshot",
    "read_source",
    "read_topology",
    "render_svg",
    "review_text",
    "schema",
    "spec_files",
    "spec_from_data",
    "stale_hosts",
    "start_spec",
    "target_scope",
    "target_warnings",
    "targets",
    "topology_path",
    "write",
    "write_build",
    "write_snapshot",
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


def check_out(out: str | os.PathLike[str]) -> None:
    """Raise HostcError when `out` may not receive a build (a system directory, under
    /proc, /sys or /dev, an existing non-directory): what `write` refuses, asked once."""
    _check_out(as_path(out, "out"))


def write(
    artifacts: Iterable[Artifact], out: str | os.PathLike[str], protect: Iterable[Path] = ()
) -> list[Path]:
    """Write the artifacts under `out` atomically (`hostc.output.write`), and own them as
    `write_build` does: the previous write's files under the same target folders that
    this one does not make are removed (only hostc's own, unchanged)."""
    from hostc import owned

    paths = [as_path(p, "protect") for p in as_names_or_paths(protect)]
    arts = artifact_list(artifacts)
    owner = owned.Owner(tuple(sorted({a.target for a in arts})))
    return list(owned.write(arts, as_path(out, "out"), paths, owner).written)


def diff(artifacts: list[Artifact], out: str | os.PathLike[str]) -> str:
    """Unified diff from the tree `out` to the artifacts; '' when identical."""
    return _diff(artifact_list(artifacts), as_path(out, "out"))


def differences(artifacts: list[Artifact], out: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """`hostc build --check`: (relative path, unified diff) per file that would change."""
    return _differences(artifact_list(artifacts), as_path(out, "out"))


def manifest(
    artifacts: list[Artifact], out: str | os.PathLike[str] | None
) -> list[dict[str, object]]:
    """Rows of `hostc build --json`: with `out`, where each file was written."""
    return _manifest(artifact_list(artifacts), None if out is None else as_path(out, "out"))


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
    from hostc import targets as registry

    if not isinstance(plan, Plan):
        raise HostcError([error("plan", f"expected a Plan, got {type(plan).__name__}")])
    wanted: Sequence[str] = as_names(names)
    unknown = [n for n in wanted if n != "all" and n not in registry.TARGETS]
    if unknown:
        raise HostcError(
            [
                error(
                    "targets",
                    f"unknown target {n!r}",
                    hint="targets: all, " + ", ".join(registry.TARGETS),
                )
                for n in unknown
            ]
        )
    if off := registry.not_applying(plan, wanted):
        raise HostcError(
            [error("targets", f"target {n!r} does not apply to this host: {why}") for n, why in off]
        )
    return registry.build(plan, wanted)


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
