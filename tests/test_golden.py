"""Golden files: every example × every target equals golden/.  Stale golden fails.

Regenerate after an intended change (then read the diff as a reviewer would):
    python tests/regen_golden.py && git diff golden/
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.targets import TargetRole
from hostc.topology import snapshot

from regen_golden import fleet_specs, specs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/node.toml"))
#: golden folder → spec, for the single-file examples and every host of the example fleet
SPECS = dict(specs())


def _spec(name: str) -> Path:
    return SPECS[name]


def _build(name: str) -> list[api.Artifact]:
    """`all` (every applicable file target) and every wrapper target."""
    spec_path = _spec(name)
    plan, _ = api.compile_file(spec_path)
    wrappers = [n for n, t in api.targets().items() if t.role is TargetRole.WRAPPER]
    return api.emit(plan, ["all", *wrappers])


def test_at_least_three_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("name", sorted(SPECS))
def test_golden_is_current(name: str) -> None:
    arts = _build(name)
    plan, _ = api.compile_file(_spec(name))
    applicable = {n for n, t in api.targets().items() if t.applies(plan) is None}
    assert {a.target for a in arts} == applicable, "every target has golden output"
    delta = api.diff(arts, ROOT / "golden" / name)
    assert delta == "", f"golden/{name} is stale; regenerate it (see this module's docstring)"
    present = {p.name for p in (ROOT / "golden" / name).iterdir()}
    assert present == applicable | {"plan.json", "plan.svg"}, "a target folder is stale or missing"


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_snapshot_round_trips(name: str) -> None:
    path = ROOT / "examples" / name / "topology.toml"
    text = path.read_text()
    assert snapshot.dumps(snapshot.loads(text, str(path))) == text


def test_no_stray_golden_dirs() -> None:
    found = sorted(p.name for p in (ROOT / "golden").iterdir() if p.is_dir())
    assert found == sorted([*EXAMPLES, "fleet"])
    hosts = sorted(f"fleet/{p.name}" for p in (ROOT / "golden" / "fleet").iterdir())
    assert hosts == [name for name, _ in fleet_specs()]


def test_fleet_golden_matches_a_fleet_build(tmp_path: Path) -> None:
    """`hostc build examples/fleet/hosts/ --out DIR` writes what golden/fleet holds."""
    from hostc import fleet

    hosts = fleet.select(str(ROOT / "examples" / "fleet" / "hosts"))
    wrappers = [n for n, t in api.targets().items() if t.role is TargetRole.WRAPPER]
    job = fleet.Job("build", ("all", *wrappers), tmp_path / "out", compare=False)
    results = fleet.run(hosts, job, 1, lambda done, total: None)
    assert all(r.ok for r in results)
    for h in hosts:
        built = sorted(
            str(p.relative_to(tmp_path / "out" / h.name))
            for p in (tmp_path / "out" / h.name).rglob("*")
            if p.is_file()
        )
        golden = ROOT / "golden" / "fleet" / h.name
        kept = sorted(str(p.relative_to(golden)) for p in golden.rglob("*") if p.is_file())
        assert built == [k for k in kept if k not in ("plan.json", "plan.svg")]


def test_diff_reports_stale_and_extra_files(tmp_path: Path) -> None:
    arts = _build(EXAMPLES[0])
    api.write(arts, tmp_path)
    assert api.diff(arts, tmp_path) == ""
    target = tmp_path / arts[0].target / arts[0].relpath
    target.write_text("changed\n")
    (tmp_path / arts[0].target / "leftover.conf").write_text("x\n")
    delta = api.diff(arts, tmp_path)
    assert f"a/{arts[0].target}/{arts[0].relpath}" in delta
    assert f"a/{arts[0].target}/leftover.conf" in delta


def test_failed_write_replaces_nothing(tmp_path: Path) -> None:
    """A destination blocked by a directory aborts before any file is replaced."""
    arts = _build(EXAMPLES[0])
    api.write(arts, tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    changed = [attrs.evolve(a, data=a.data + b"# new\n") for a in arts]
    blocked = tmp_path / changed[-1].target / changed[-1].relpath
    blocked.unlink()
    blocked.mkdir()
    with pytest.raises(IsADirectoryError):
        api.write(changed, tmp_path)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    del before[blocked]
    assert after == before


@pytest.mark.parametrize("name", EXAMPLES)
def test_golden_picture_is_current(name: str) -> None:
    """golden/<example>/plan.svg is the partition picture: a PR that moves a CPU shows it."""
    plan, _ = api.compile_file(ROOT / "examples" / name / "node.toml")
    svg = (ROOT / "golden" / name / "plan.svg").read_text(encoding="utf-8")
    assert api.render_svg(plan) == svg, f"golden/{name}/plan.svg is stale; regenerate it"
