"""Golden files: every example's generated tree equals golden/.  Stale golden fails.

File targets and plan.json are kept in full; the wrapper targets as a decoded view
(wrappers.yaml: a body a file target shows is named, the rest pinned by its frame's sha256).
Regenerate after an intended change, then read the diff as a reviewer would:
    python -m pytest --regen tests/golden && git diff golden/
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import attrs
import pytest
import yaml
from plan_delta import ABSENT, leaves

from hostc import api
from hostc.api import fleet
from hostc.delivery.owned import RECORD
from hostc.diagnostics import HostcError
from hostc.report import plan_view
from hostc.topology import snapshot

from conftest import EXAMPLE_NAMES, ROOT
from regenerate import (
    COMMAND,
    FLEET_TWIN,
    GOLDEN,
    WRAPPERS,
    build,
    compile_data,
    fleet_specs,
    golden_tree,
    read_tree,
    specs,
    tree_diff,
)
from wrapper_manifest import is_wrapper, manifest

#: golden folder → spec, for the single-file examples and every host of the example fleet
SPECS = dict(specs())
#: golden folder → spec, for the hosts of the example fleet
FLEET = dict(fleet_specs())


@pytest.mark.parametrize("name", sorted(SPECS))
def test_golden_is_current(name: str) -> None:
    if not name.startswith("fleet/"):  # a fleet host keeps its plan.json only
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
    space in config.ign) still fails, by its frame's sha256."""
    _, arts = build(SPECS[EXAMPLE_NAMES[0]])
    spaced = [
        attrs.evolve(a, data=a.data.replace(b'"3.', b' "3.')) if a.target == "ignition" else a
        for a in arts
    ]
    delta = tree_diff(
        {"wrappers.yaml": (manifest(spaced).encode(), 0o644)},
        {"wrappers.yaml": (manifest(arts).encode(), 0o644)},
    )
    changed = [line for line in delta.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    assert [line.split(":")[0] for line in changed] == ["-    frame_sha256", "+    frame_sha256"]


#: the longest line a golden file may hold, so that its diff stays readable
MAX_LINE = 2000


def test_golden_is_text_with_short_lines() -> None:
    """No binary golden (a tar), no line a reviewer cannot read (a config.ign on one line)."""
    bad = []
    for path in sorted(p for p in GOLDEN.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        try:
            longest = max(map(len, raw.decode("utf-8").splitlines()), default=0)
        except UnicodeDecodeError:
            bad.append(f"{path.relative_to(GOLDEN)}: binary")
            continue
        if b"\0" in raw or longest > MAX_LINE:
            bad.append(f"{path.relative_to(GOLDEN)}: a line of {longest} characters or a NUL")
    assert bad == []


def test_wrappers_yaml_hashes_no_body_it_names() -> None:
    """A body shown as `<same as X>` carries no size or sha256: X's golden pins it, and a
    hash here would change with every change X's own diff shows (hash-only churn)."""
    for name in EXAMPLE_NAMES:
        doc = yaml.load((GOLDEN / name / "wrappers.yaml").read_text(), Loader=yaml.CSafeLoader)
        for target, rows in doc.items():
            for path, row in rows.items():
                if str(row.get("content", "")).startswith("<same as "):
                    assert set(row) <= {"mode", "activation", "content"}, (name, target, path)


def test_a_changed_setting_changes_no_wrappers_yaml() -> None:
    """A new sysctl value changes the file targets that carry it, and not the decoded view
    of the wrappers that carry those files (no hash or size of them churns there)."""
    spec = SPECS["h100-kubeadm"]  # every wrapper: cloud-init, Ignition, rootfs, tar, Ansible
    data = tomllib.loads(spec.read_text())
    data.setdefault("sysctl", {})["vm.swappiness"] = 17
    changed = api.emit(compile_data(spec, data), ["all", *WRAPPERS])
    _, arts = build(spec)
    moved = {a.path for a, b in zip(arts, changed, strict=True) if a.data != b.data}
    assert "/etc/sysctl.d/90-hostc.conf" in moved and "config.ign" in moved
    assert manifest(changed) == manifest(arts)


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


def test_a_plan_delta_gives_back_every_value_of_its_host() -> None:
    """golden/fleet/<host>/plan-delta.txt with its class's first plan.json is the host's
    plan: every leaf of the host's plan.json, and nothing else."""
    deltas = sorted((GOLDEN / "fleet").glob("*/plan-delta.txt"))
    assert len(deltas) >= 2
    for path in deltas:
        lines = path.read_text().splitlines()
        first = re.match(r"# \S+ plan\.json is fleet/(\S+)/plan\.json", lines[0])
        assert first, lines[0]
        have = dict(leaves(json.loads((GOLDEN / "fleet" / first[1] / "plan.json").read_text())))
        body = [line for line in lines if not line.startswith("#")]
        for key, _, here in zip(body[::3], body[1::3], body[2::3], strict=True):
            if here == f"  + {ABSENT}":
                del have[key]
            else:
                have[key] = here.removeprefix("  + ")
        host = FLEET[f"fleet/{path.parent.name}"]
        plan, _ = api.compile_file(host)
        assert have == dict(leaves(json.loads(plan_view.dumps(plan)))), path


def test_a_fleet_build_writes_what_each_host_builds_alone(tmp_path: Path) -> None:
    """`hostc build examples/fleet/hosts/ --out DIR` writes, per host, exactly the
    artifacts of that host's own build (whose plan.json test_golden_is_current checks),
    and for FLEET_TWIN the single-host example's golden, byte for byte, under its name."""
    hosts = fleet.select(str(ROOT / "examples" / "fleet" / "hosts"))
    wrappers = [n for n in api.targets() if is_wrapper(n)]
    job = fleet.Job("build", ("all", *wrappers), tmp_path / "out", compare=False)
    results = fleet.run(hosts, job, 1, lambda done, total: None)
    assert all(r.ok for r in results)
    for h in hosts:
        _, arts = build(FLEET[f"fleet/{h.name}"])
        out = tmp_path / "out" / h.name
        assert api.diff(arts, out) == "", h.name
        written = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
        written.discard(RECORD)
        assert written == {f"{a.target}/{a.relpath}" for a in arts}
    host, example = FLEET_TWIN
    name = {
        n: api.compile_file(s)[0].host.name
        for n, s in (
            (host, ROOT / "examples" / "fleet" / "hosts" / f"{host}.toml"),
            (example, SPECS[example]),
        )
    }
    gold = {
        rel: (data.replace(name[example].encode(), name[host].encode()), mode)
        for rel, (data, mode) in read_tree(GOLDEN / example).items()
        if "/" in rel  # the file targets' folders, not plan.json, plan.svg or wrappers.yaml
    }
    built = read_tree(tmp_path / "out" / host)
    twin = {
        rel: built[rel] for rel in built if rel.split("/")[0] in {g.split("/")[0] for g in gold}
    }
    assert len(gold) > 5 and tree_diff(gold, twin) == "", f"{host} is {example} renamed"


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
