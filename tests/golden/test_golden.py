"""Golden files: every example's generated tree equals golden/.  Stale golden fails.

File targets and plan.json are kept in full; the wrapper targets as a decoded view
(wrappers.yaml, whose sha256s pin every byte), and in full for one example only.
Regenerate after an intended change, then read the diff as a reviewer would:
    python -m pytest --regen tests/golden && git diff golden/
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.api import fleet
from hostc.delivery.owned import RECORD
from hostc.diagnostics import HostcError
from hostc.topology import snapshot

from conftest import EXAMPLE_NAMES, ROOT
from regenerate import (
    COMMAND,
    FULL_EXAMPLE,
    GOLDEN,
    build,
    fleet_specs,
    golden_tree,
    read_tree,
    specs,
    tree_diff,
)
from wrapper_manifest import is_wrapper, manifest

#: golden folder → spec, for the single-file examples and every host of the example fleet
SPECS = dict(specs())


@pytest.mark.parametrize("name", sorted(SPECS))
def test_golden_is_current(name: str) -> None:
    plan, arts = build(SPECS[name])
    applicable = {n for n, t in api.targets().items() if t.applies(plan) is None}
    assert {a.target for a in arts} == applicable, "every target has golden output"
    delta = tree_diff(golden_tree(name, SPECS[name]), read_tree(GOLDEN / name))
    if delta:
        pytest.fail(stale_message(name, delta), pytrace=False)  # whole, not truncated


def stale_message(name: str, delta: str) -> str:
    """A stale golden tree's failure: the command, the Plan-level change as `hostc diff`
    shows it (golden plan.json → the spec now), then every file's diff."""
    saved = GOLDEN / name / "plan.json"
    try:
        summary = api.review_text(api.plan_diff(str(saved), str(SPECS[name])), "markdown")
    except HostcError as e:
        summary = f"(no Plan-level summary: {e})\n"
    head = f"golden/{name} is stale; run `{COMMAND}` and review `git diff golden/`"
    return f"{head}\n\n{summary}\n{delta}"


def test_a_stale_golden_message_shows_the_command_and_the_plan_change() -> None:
    name = "dgx-h100-inference"
    message = stale_message(name, "--- a/x\n+++ b/x\n")
    assert "`python -m pytest --regen tests/golden`" in message
    assert f"### hostc diff: {GOLDEN / name / 'plan.json'}" in message
    assert message.endswith("--- a/x\n+++ b/x\n")


def test_a_changed_wrapper_byte_shows_in_the_decoded_view() -> None:
    """A wrapper's golden is its decoded view; a change that decodes the same (one more
    space in config.ign) still fails, by its size and sha256."""
    name = next(n for n in EXAMPLE_NAMES if n != FULL_EXAMPLE)
    _, arts = build(SPECS[name])
    spaced = [
        attrs.evolve(a, data=a.data.replace(b'"3.', b' "3.')) if a.target == "ignition" else a
        for a in arts
    ]
    delta = tree_diff(
        {"wrappers.yaml": (manifest(spaced).encode(), 0o644)},
        {"wrappers.yaml": (manifest(arts).encode(), 0o644)},
    )
    changed = [line for line in delta.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    assert [line.split(":")[0] for line in changed] == [
        "-    size",
        "-    sha256",
        "+    size",
        "+    sha256",
    ]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_snapshot_round_trips(name: str) -> None:
    path = ROOT / "examples" / name / "topology.toml"
    text = path.read_text()
    assert snapshot.dumps(snapshot.loads(text, str(path))) == text


def test_no_stray_golden_dirs() -> None:
    found = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())
    assert found == sorted([*EXAMPLE_NAMES, "fleet"])
    hosts = sorted(f"fleet/{p.name}" for p in (GOLDEN / "fleet").iterdir())
    assert hosts == [name for name, _ in fleet_specs()]


def test_a_fleet_build_writes_what_each_host_builds_alone(tmp_path: Path) -> None:
    """`hostc build examples/fleet/hosts/ --out DIR` writes, per host, exactly the
    artifacts of that host's own build (whose golden test_golden_is_current checks)."""
    hosts = fleet.select(str(ROOT / "examples" / "fleet" / "hosts"))
    wrappers = [n for n in api.targets() if is_wrapper(n)]
    job = fleet.Job("build", ("all", *wrappers), tmp_path / "out", compare=False)
    results = fleet.run(hosts, job, 1, lambda done, total: None)
    assert all(r.ok for r in results)
    for h in hosts:
        _, arts = build(dict(fleet_specs())[f"fleet/{h.name}"])
        out = tmp_path / "out" / h.name
        assert api.diff(arts, out) == "", h.name
        written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
        written.discard(RECORD)
        assert written == {f"{a.target}/{a.relpath}" for a in arts}


def test_diff_reports_stale_and_extra_files(tmp_path: Path) -> None:
    _, arts = build(SPECS[EXAMPLE_NAMES[0]])
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
    _, arts = build(SPECS[EXAMPLE_NAMES[0]])
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
