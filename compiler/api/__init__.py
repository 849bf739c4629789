"""The Python API: the same stages and types the CLI uses, and no printing.

    spec, source = load_spec("node.toml")          # str or os.PathLike
    spec = loads_spec(text, path="node.toml")      # or spec_from_data({...})
    topo = read_topology(topology_path(spec, Path("node.toml")))
    plan, warnings = compile_plan(spec, topo)    # diagnostics name the spec's own file
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
from collections.abc import Iterable, Mapping

from hostc.api.report import (
    SCHEMAS,
    audit,
    audit_json,
    audit_state,
    audit_text,
    drift,
    explain,
    fleet_diff,
    fleet_review_text,
    is_fleet_diff,
    plan_diff,
    plan_json,
    plan_text,
    render_svg,
    review_text,
    schema,
)
from hostc.api.topology import (
    IMPORT_KINDS,
    capture,
    capture_bytes,
    check_file,
    dumps_snapshot,
    import_source,
    probe,
    read_snapshot,
    read_source,
    start_spec,
    write_file,
    write_snapshot,
)
from hostc.artifact import Artifact
from hostc.delivery.activation import Step, steps
from hostc.delivery.activation import needs_reboot as _needs_reboot
from hostc.delivery.compare import diff as _diff
from hostc.delivery.compare import differences as _differences
from hostc.delivery.manifest import apply_manifest as _apply_manifest
from hostc.delivery.manifest import manifest as _manifest
from hostc.delivery.output import Judged
from hostc.delivery.refusals import check_out as _check_out
from hostc.diagnostics import Diagnostic, HostcError
from hostc.inputs import overwrites_input
from hostc.patharg import artifact_list, as_path, of_type
from hostc.pipeline.build import changed, prune, stale_hosts, target_scope, write, write_build
from hostc.pipeline.compile import (
    build_inputs,
    compile_file,
    compile_plan,
    read_topology,
    spec_files,
    topology_path,
)
from hostc.pipeline.emit import emit, size_warnings, target_warnings, targets
from hostc.plan.model import Plan
from hostc.spec.load import from_data, loads
from hostc.spec.load import load as load_spec
from hostc.spec.model import HostSpec

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
    "check_file",
    "check_out",
    "compile_file",
    "compile_plan",
    "diff",
    "differences",
    "drift",
    "dumps_snapshot",
    "emit",
    "explain",
    "fleet_diff",
    "fleet_review_text",
    "import_source",
    "is_fleet_diff",
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
    "size_warnings",
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
    "write_file",
    "write_snapshot",
]


def loads_spec(text: str, path: str | os.PathLike[str] = "<string>") -> HostSpec:
    """A spec from its text; `path` is only the name diagnostics give it (`<string>`
    unless given: the text came from no file, so no file is named)."""
    return loads(text, str(as_path(path, "path")))


def spec_from_data(data: Mapping[str, object], path: str = "<data>") -> HostSpec:
    """A spec from a mapping shaped like node.toml, through the loader's own converter."""
    return from_data(data, path)


def check_out(out: str | os.PathLike[str]) -> Judged:
    """Raise HostcError when `out` may not receive a build (a system directory, under
    /proc, /sys or /dev, an existing non-directory): what `write` refuses, asked once.
    Else what a fleet's writes may then take as judged (`Job.judged`: the umask too)."""
    _check_out(as_path(out, "out"))
    return Judged.now()


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
    plan = of_type(plan, Plan, "plan", "a Plan")
    return steps(artifact_list(artifacts), plan.host.os_family)


def needs_reboot(artifacts: Iterable[Artifact]) -> bool:
    """Whether any of `artifacts` takes effect only after a reboot."""
    return _needs_reboot(artifact_list(artifacts))


def apply_manifest(plan: Plan, artifacts: Iterable[Artifact]) -> dict[str, object]:
    """`apply` (argv and why per step) and `reboot`, as `hostc build --json` prints them."""
    plan = of_type(plan, Plan, "plan", "a Plan")
    return _apply_manifest(artifact_list(artifacts), plan.host.os_family)
