"""The partition picture (`hostc plan --format svg`): valid SVG, deterministic, escaped,
every CPU shown once as the Plan makes it (read back from the SVG), and drawn by a real
browser at the size its viewBox says."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings

from hostc import api
from hostc.plan.model import Plan
from hostc.spec import model as m
from hostc.topology.model import Topology

from conftest import EXAMPLE_NAMES, ROOT, example_plan, run_hostc
from pictures import SVG, browser_check, cpus_shown
from strategies import cases
from topogen import machine

ELEMENTS = {"svg", "g", "rect", "text", "line", "title"}


def expected(plan: Plan, topo: Topology) -> dict[int, tuple[str, str]]:
    """What each CPU is, from the Plan's sets and the snapshot's offline CPUs."""
    out: dict[int, tuple[str, str]] = {}
    for cpu in plan.partition.online:
        cls = "housekeeping" if cpu in plan.partition.housekeeping else "isolated"
        works = ",".join(w.name for w in plan.workloads if cpu in w.cpus)
        out[cpu] = (cls, works)
    for c in topo.cpus:
        if not c.online:
            out[c.id] = ("offline", "")
    for _, cpus in plan.hardware.offline:  # the snapshot's and `cpu.offline`'s
        out.update((cpu, ("offline", "")) for cpu in cpus)
    return out


def assert_every_cpu_once(plan: Plan, topo: Topology) -> None:
    shown = cpus_shown(api.render_svg(plan))
    want = expected(plan, topo)
    assert set(shown) == set(want), "CPUs missing from or invented by the picture"
    bad = {cpu: (got, want[cpu]) for cpu, got in shown.items() if got != [want[cpu]]}
    assert bad == {}, "a CPU shown twice or as the wrong class"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_picture_is_valid_svg_with_titles_and_labels(name: str) -> None:
    root = ET.fromstring(api.render_svg(example_plan(name)))
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img" and root.get("aria-label")
    assert re.fullmatch(r"0 0 \d+ \d+", root.get("viewBox", ""))
    tags = {e.tag for e in root.iter()}
    assert all(t.startswith(SVG) for t in tags), "an element outside the SVG namespace"
    assert {t.removeprefix(SVG) for t in tags} <= ELEMENTS
    for e in root.iter():
        if e.get("data-cpu") is not None or e.get("data-memory") is not None:
            assert e.find(f"{SVG}title") is not None, "a cell without hover text"
    legend = "".join(root.find(f"{SVG}g[@data-legend]").itertext())  # type: ignore[union-attr]
    for w in example_plan(name).workloads:
        assert f"workload {w.name}" in legend, "a workload without its label in the legend"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_picture_shows_every_cpu_of_the_examples_once(name: str) -> None:
    spec = ROOT / "examples" / name / "node.toml"
    topo = api.read_topology(spec.parent / "topology.toml")
    assert_every_cpu_once(example_plan(name), topo)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_picture_shows_every_cpu_once_with_its_plan_class(
    case: tuple[Topology, m.HostSpec],
) -> None:
    topo, spec = case
    try:
        plan, _ = api.compile_plan(spec, topo, spec_file="prop.toml")
    except api.HostcError:
        return
    assert_every_cpu_once(plan, topo)


def test_picture_folds_8192_cpus_into_runs_that_account_for_every_cpu() -> None:
    topo = machine(
        packages=4,
        nodes_per_package=2,
        cores_per_node=512,
        smt=2,
        gpus_per_node=1,
        offline=frozenset({4097, 8000}),
    )
    spec = m.HostSpec(
        host=m.Host(name="big", role=m.Role.INFERENCE),
        cpu=m.Cpu(housekeeping_per_node=2, isolate="rest"),
        workload=[m.Workload("serve-a", ["GPU0"]), m.Workload("serve-b", ["GPU5"])],
    )
    plan, _ = api.compile_plan(spec, topo, spec_file="big.toml")
    assert len(topo.cpus) == 8192
    text = api.render_svg(plan)
    assert 'data-cpus="' in text, "8,192 CPUs are folded into runs"
    assert text.count('data-cpu="') == 2, "only the two node-less offline CPUs get cells"
    assert_every_cpu_once(plan, topo)
    assert len(text) < 400_000, "folded: the picture stays small"


def test_picture_bytes_are_deterministic_and_names_escaped() -> None:
    plan = example_plan("dgx-h100-inference")
    hostile = '<script>&"x\x01'
    works = (attrs.evolve(plan.workloads[0], name=hostile), *plan.workloads[1:])
    text = api.render_svg(attrs.evolve(plan, workloads=works))
    assert text == api.render_svg(attrs.evolve(plan, workloads=works))
    root = ET.fromstring(text)  # still well-formed XML
    assert "<script>" not in text and not root.findall(f".//{SVG}script")
    assert any(hostile.replace("\x01", "\\x01") in (e.text or "") for e in root.iter())


def test_plan_format_svg_prints_the_golden_picture() -> None:
    r = run_hostc("plan", ROOT / "examples" / "dgx-h100-inference" / "node.toml", "--format", "svg")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (ROOT / "golden" / "dgx-h100-inference" / "plan.svg").read_text()


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_browser_draws_the_golden_picture_at_its_viewbox_size(name: str, tmp_path: Path) -> None:
    page = ROOT / "golden" / name / "plan.svg"
    box = ET.parse(page).getroot().get("viewBox", "").split()
    browser_check(page, int(box[2]), int(box[3]), tmp_path)


def test_a_review_outlines_exactly_the_changed_cpus_and_says_so() -> None:
    from hostc.cpuset import CpuSet
    from hostc.report.svg import render_svg

    plan = example_plan("dgx-h100-inference")
    root = ET.fromstring(render_svg(plan, CpuSet.parse("4,116")))
    red = {e.get("data-cpu") for e in root.iter() if e.get("stroke") == "#d00000"}
    assert red == {"4", "116", None}, "the two CPUs, and the legend's swatch"
    cell = next(e for e in root.iter() if e.get("data-cpu") == "4")
    assert "changed in this diff" in (cell.findtext(f"{SVG}title") or "")
    assert render_svg(plan) == api.render_svg(plan), "no highlight: the golden picture"
