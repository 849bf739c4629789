"""The API's report half: what `hostc plan`, `explain`, `diff`, `schema` and `audit`
show, as values and text.  `hostc.api` re-exports it; the CLI calls only the API.
Each report module is imported when its function runs, so a build loads none.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from hostc.api import schemas
from hostc.diagnostics import HostcError, file_error, json_text, with_file
from hostc.inputs import SNAPSHOT_LIMIT, read_text_bounded
from hostc.patharg import as_path, of_type
from hostc.pipeline.compile import (
    _compile_layered,
    _read_spec,
    _read_topology,
    compile_plan,
    topology_path,
)
from hostc.pipeline.emit import emit
from hostc.plan.model import Plan
from hostc.report import plan_view
from hostc.spec.load import load_layered

if TYPE_CHECKING:
    from hostc.audit.findings import Finding
    from hostc.fleet.fleetdiff import FleetReview
    from hostc.report.explain import Explanation
    from hostc.report.review import Review

#: What `schema` describes: node.toml and the topology snapshot.
SCHEMAS = ("node", "topology")


def plan_text(plan: Plan) -> str:
    """`hostc plan`: the partition per NUMA node, then every setting with its reason."""
    return plan_view.render(of_type(plan, Plan, "plan", "a Plan"))


def plan_json(plan: Plan) -> str:
    """`hostc plan --json`: the Plan as JSON text (what golden `plan.json` holds)."""
    return plan_view.dumps(of_type(plan, Plan, "plan", "a Plan"))


def render_svg(plan: Plan) -> str:
    """The partition as an SVG picture (`hostc plan --format svg`): deterministic text."""
    from hostc.report.svg import render_svg as _render

    return _render(plan)


def explain(spec_path: Path, what: str, topology: Path | None = None) -> Explanation:
    """`hostc explain`: for a setting name, spec key path or `artifact-path:line`, where
    the value came from, its Plan entry and reason, the artifact lines carrying it, and
    where a host shows it.  An unknown WHAT raises HostcError with close matches."""
    from hostc.report.explain import explain as _explain
    from hostc.resolve import resolve

    spec, source = _read_spec(spec_path)
    if spec is None:  # layers: the Plan's provenance names the file of each value
        spec = load_layered(spec_path)[0]
        topo_path = topology_path(spec, spec_path, topology)
        plan, _ = _compile_layered(spec_path, topology)
    else:
        topo_path = topology_path(spec, spec_path, topology, source)
        plan, _ = compile_plan(
            spec, _read_topology(topo_path), spec_file=str(spec_path), spec_source=source
        )
    # the facts the preset conditions were judged on, exactly as resolve judged them
    ctx = resolve(spec, _read_topology(topo_path))[0].context
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
    from hostc.fleet.diffinputs import review

    return review(old, new)


def is_fleet_diff(old: str, new: str) -> bool:
    """Whether `hostc diff OLD NEW` compares folders of hosts (`fleet_diff`): both sides
    name many hosts; one side only is a HostcError."""
    from hostc.fleet.diffinputs import names_fleet

    a, b = names_fleet(old), names_fleet(new)
    if a != b:
        one = old if a else new
        raise HostcError(
            [
                file_error(
                    one,
                    "names many hosts, the other side one spec",
                    hint="compare a folder with a folder (hostc diff hosts/@main hosts/) or "
                    "a spec with a spec (hostc diff hosts/a.toml@main hosts/a.toml)",
                )
            ]
        )
    return a


def fleet_diff(old: str, new: str, jobs: int | None = None) -> FleetReview:
    """`hostc diff DIR@REV DIR`: each host's Plan diff (`plan_diff`, in `jobs` processes,
    default one per CPU), hosts with identical changes grouped; hosts only one side has
    are added or removed."""
    from hostc.fleet.fleetdiff import fleet_review

    return fleet_review(old, new, jobs)


def fleet_review_text(review: FleetReview, fmt: str) -> str:
    """`hostc diff DIR@REV DIR --format markdown|json`."""
    if fmt == "json":
        from hostc.fleet.fleetdiff import fleet_json

        return json_text(fleet_json(review)) + "\n"
    from hostc.fleet.fleetdiff import fleet_markdown

    return fleet_markdown(review)


def audit(plan: Plan, root: str | os.PathLike[str] = Path("/")) -> list[Finding]:
    """Compare the host under `root` (`/`: this one, live; a copied tree; or a
    `hostc probe --capture --spec` archive) with the Plan: one Finding per setting."""
    from hostc.audit.run import audit_root

    return audit_root(of_type(plan, Plan, "plan", "a Plan"), as_path(root, "root"))


def review_text(review: Review, fmt: str) -> str:
    """`hostc diff --format markdown|json|html`: a Review as text."""
    if fmt == "html":
        from hostc.report.html import page

        return page(review)
    if fmt == "json":
        from hostc.report.review import to_json

        return json_text(to_json(review)) + "\n"
    from hostc.report.review import to_markdown

    return to_markdown(review)


def schema(which: str) -> str:
    """`hostc schema node|topology`: the JSON Schema text (what `schemas/` holds)."""
    return schemas.dumps(which)


def audit_state(
    plan: Plan, root: str | os.PathLike[str] = Path("/")
) -> tuple[dict[str, bytes], set[str]]:
    """The files and directories `audit` reads for `plan` under `root`, for a capture
    (`hostc probe --capture --spec`)."""
    from hostc.audit.run import audit_state as _state

    return _state(of_type(plan, Plan, "plan", "a Plan"), as_path(root, "root"))


def audit_text(findings: list[Finding]) -> str:
    """`hostc audit`: one line per setting."""
    from hostc.audit import findings as report

    return report.render(findings)


def audit_json(findings: list[Finding], source: str | os.PathLike[str]) -> str:
    """`hostc audit --json`."""
    from hostc.audit import findings as report

    return report.dumps(findings, source=as_path(source, "source"))


def drift(findings: list[Finding]) -> bool:
    """Whether any setting differs from the Plan or waits for a reboot (exit 1)."""
    from hostc.audit import findings as report

    return report.drift(findings)
