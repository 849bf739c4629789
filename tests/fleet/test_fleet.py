"""Many hosts per command: selection, per-host output, errors that fail only their host."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hostc import api
from hostc.delivery.owned import RECORD
from hostc.fleet import runner as fleet

from conftest import ROOT, run_hostc

FLEET = ROOT / "examples" / "fleet"


def _copy_fleet(tmp: Path) -> Path:
    """The example fleet in tmp, its topologies reached by the same relative paths."""
    shutil.copytree(FLEET, tmp / "examples" / "fleet")
    for name in ("dgx-h100-inference", "epyc-1s-training"):
        shutil.copytree(ROOT / "examples" / name, tmp / "examples" / name)
    return tmp / "examples" / "fleet"


def _tree(root: Path) -> dict[str, bytes]:
    """A build's files, its record of them (`hostc.delivery.owned`) left out."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p != root / RECORD
    }


def _single(spec: Path, out: Path) -> dict[str, bytes]:
    plan, _ = api.compile_file(spec)
    api.write(api.emit(plan, ["all"]), out)
    return _tree(out)


def test_a_directory_builds_every_host_like_single_builds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run_hostc("build", FLEET / "hosts", "--out", out, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    hosts = sorted(p.stem for p in (FLEET / "hosts").glob("*.toml"))
    assert sorted(p.name for p in out.iterdir()) == hosts
    assert "12 hosts: 12 built, 0 failed" in r.stderr
    assert "\r[" not in r.stderr, "no progress bar in a pipe"
    for h in ("dgx-r2-05", "epyc-t-04"):
        assert _tree(out / h) == _single(FLEET / "hosts" / f"{h}.toml", tmp_path / "one" / h)


def test_one_bad_host_fails_alone_and_the_others_are_written(tmp_path: Path) -> None:
    fleet_dir = _copy_fleet(tmp_path)
    bad = fleet_dir / "hosts" / "dgx-r1-02.toml"
    bad.write_text(
        bad.read_text().replace("housekeeping_per_node = 6", 'housekeeping_per_node = "6"')
    )
    out = tmp_path / "out"
    r = run_hostc("build", fleet_dir / "hosts", "--out", out, "--jobs", "2")
    assert r.returncode == 2
    assert f"{bad}:8: cpu.housekeeping_per_node" in r.stderr
    assert "12 hosts: 11 built, 1 failed" in r.stderr
    assert not (out / "dgx-r1-02").exists()
    good = sorted(p.name for p in out.iterdir())
    assert len(good) == 11
    for h in good:
        assert _tree(out / h) == _single(fleet_dir / "hosts" / f"{h}.toml", tmp_path / "one" / h)


def _fails_with(tmp: Path, where: str) -> str:
    r = run_hostc("build", tmp / "hosts", "--out", tmp / "out", "--jobs", "2")
    assert r.returncode == 2, r.stderr
    assert where in r.stderr, r.stderr
    assert (tmp / "out" / "good").is_dir(), "the good host is still written"
    return r.stderr


def _fleet_with(tmp: Path, bad: str, extra: dict[str, str] | None = None) -> None:
    (tmp / "hosts").mkdir()
    topo = ROOT / "examples" / "h100-4gpu-inference" / "topology.toml"
    (tmp / "base.toml").write_text(
        f'version = 1\n[host]\nname = "b"\nrole = "general"\ntopology = "{topo}"\n'
    )
    (tmp / "hosts" / "good.toml").write_text('extends = ["../base.toml"]\n')
    (tmp / "hosts" / "bad.toml").write_text(bad)
    for name, text in (extra or {}).items():
        (tmp / name).write_text(text)


def test_an_unwritable_out_is_one_error_before_any_host_is_built(tmp_path: Path) -> None:
    """One root cause, one error: --out under /proc is refused once, not once per host,
    and no host is compiled (the summary table never starts)."""
    r = run_hostc("build", FLEET / "hosts", "--out", "/proc/hostc-out", "--jobs", "2")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert lines == [
        "error: /proc/hostc-out: refusing to write here: /proc/hostc-out is inside a "
        "virtual file system"
    ], r.stderr


def test_check_without_a_build_to_compare_is_one_error(tmp_path: Path) -> None:
    r = run_hostc("build", FLEET / "hosts", "--out", tmp_path / "none", "--check")
    assert r.returncode == 2
    assert r.stderr.startswith(
        f"error: {tmp_path / 'none'}: --check: there is no such directory to compare against"
    ), r.stderr
    assert "---" not in r.stdout + r.stderr, "no host's files shown as new"


def test_a_cycle_names_the_file_and_line_that_closes_it(tmp_path: Path) -> None:
    _fleet_with(
        tmp_path,
        'extends = ["../x.toml"]\n',
        {"x.toml": '# x\nextends = ["hosts/bad.toml"]\n'},
    )
    err = _fails_with(tmp_path, f"{tmp_path}/x.toml:2: extends[0]")
    assert "a cycle" in err and f"{tmp_path}/hosts/bad.toml" in err


def test_a_missing_file_names_the_extends_entry(tmp_path: Path) -> None:
    _fleet_with(tmp_path, 'extends = [\n  "../base.toml",\n  "../gone.toml",\n]\n')
    _fails_with(tmp_path, f"{tmp_path}/hosts/bad.toml:3: extends[1]")


def test_equal_priority_siblings_name_both_files_and_lines(tmp_path: Path) -> None:
    _fleet_with(
        tmp_path,
        'extends = ["../base.toml", "../a.toml", "../b.toml"]\n',
        {"a.toml": "[limits]\nnofile = 4096\n", "b.toml": "\n[limits]\nnofile = 8192\n"},
    )
    err = _fails_with(tmp_path, f"{tmp_path}/b.toml:3: limits.nofile")
    assert f"{tmp_path}/a.toml:2" in err


def test_colliding_host_names_are_an_error(tmp_path: Path) -> None:
    (tmp_path / "h1").mkdir()
    (tmp_path / "h1" / "node.toml").write_text("")
    (tmp_path / "h1.toml").write_text("")
    r = run_hostc("check", tmp_path)
    assert r.returncode == 2 and "outputs would collide" in r.stderr


def test_a_list_file_and_a_glob_select_hosts(tmp_path: Path) -> None:
    listing = tmp_path / "hosts.txt"
    listing.write_text(f"# two hosts\n{FLEET}/hosts/dgx-r1-01.toml\n{FLEET}/hosts/epyc-t-02.toml\n")
    assert [h.name for h in fleet.select(f"@{listing}")] == ["dgx-r1-01", "epyc-t-02"]
    assert len(fleet.select(f"{FLEET}/hosts/epyc-*.toml")) == 6
    r = run_hostc("check", f"@{listing}")
    assert r.returncode == 0, r.stderr
    assert "2 hosts: 2 checked, 0 failed, 0 warning(s)" in r.stderr, r.stderr
    assert r.stderr.splitlines()[0].split() == ["host", "status", "warnings", "errors"]


def test_plan_json_over_a_fleet_is_each_hosts_plan(tmp_path: Path) -> None:
    r = run_hostc("plan", f"{FLEET}/hosts/dgx-r2-*.toml", "--json", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert sorted(doc) == ["dgx-r2-04", "dgx-r2-05", "dgx-r2-06"]
    assert [w["name"] for w in doc["dgx-r2-05"]["workloads"]] == ["serve-a", "serve-b", "serve-c"]


def test_check_compares_every_host(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_hostc("build", FLEET / "hosts", "--out", out, "-q").returncode == 0
    assert run_hostc("build", FLEET / "hosts", "--out", out, "--check", "-q").returncode == 0
    sysctl = out / "epyc-t-03" / "sysctl" / "etc" / "sysctl.d" / "90-hostc.conf"
    sysctl.write_text("changed\n")
    r = run_hostc("build", FLEET / "hosts", "--out", out, "--check")
    assert r.returncode == 1
    assert "epyc-t-03: --- a/sysctl/etc/sysctl.d/90-hostc.conf" in r.stdout
    assert "epyc-t-03  stale" in r.stderr
    assert "12 hosts: 11 current, 1 stale, 0 failed, 0 warning(s)" in r.stderr, r.stderr
    assert "built" not in r.stderr


def test_a_failed_host_keeps_its_previous_output_marked(tmp_path: Path) -> None:
    """The summary says a failed host's folder is an earlier build, `.hostc-failed` names
    the error, `--check` still works, and the next good build removes the marker (F11)."""
    fleet_dir = _copy_fleet(tmp_path)
    out = tmp_path / "out"
    assert run_hostc("build", fleet_dir / "hosts", "--out", out, "-q").returncode == 0
    bad = fleet_dir / "hosts" / "dgx-r1-02.toml"
    good = bad.read_text()
    bad.write_text(good.replace("housekeeping_per_node = 6", 'housekeeping_per_node = "6"'))
    before = _tree(out / "dgx-r1-02")
    r = run_hostc("build", fleet_dir / "hosts", "--out", out, "--jobs", "2")
    assert r.returncode == 2
    folder = out / "dgx-r1-02"
    assert f"previous output kept in {folder}/ (not rebuilt; marked .hostc-failed)" in r.stderr, (
        r.stderr
    )
    marker = (folder / ".hostc-failed").read_text()
    assert "the last build of this host failed" in marker
    assert f"error: {bad}:8: cpu.housekeeping_per_node: expected an integer" in marker
    assert {k: v for k, v in _tree(folder).items() if k != ".hostc-failed"} == before
    # --check: the failed host is an error, the others current; the marker is no file of
    # a target, so it is never reported as stale
    r = run_hostc("build", fleet_dir / "hosts", "--out", out, "--check")
    assert r.returncode == 2 and "11 current, 0 stale, 1 failed" in r.stderr, r.stderr
    assert ".hostc-failed" not in r.stdout
    bad.write_text(good)
    r = run_hostc("build", fleet_dir / "hosts", "--out", out, "-q")
    assert r.returncode == 0, r.stderr
    assert not (folder / ".hostc-failed").exists()
    assert _tree(folder) == before


def test_a_failed_host_with_no_earlier_build_is_not_marked(tmp_path: Path) -> None:
    _fleet_with(tmp_path, "[host\n")
    err = _fails_with(tmp_path, "bad.toml")
    assert "previous output kept" not in err
    assert not (tmp_path / "out" / "bad").exists()


def test_progress_bar_draws_and_finishes() -> None:
    from hostc.cli import fleet_view

    assert fleet_view.bar(0, 4).endswith("0/4 hosts")
    assert "#" * fleet_view.BAR_WIDTH in fleet_view.bar(4, 4)


def test_an_existing_spec_file_is_one_host_whatever_its_name(tmp_path: Path) -> None:
    """`node[1].toml` names a file, not a glob: single-spec behaviour is kept."""
    spec = tmp_path / "node[1].toml"
    spec.write_text((ROOT / "examples" / "h100-4gpu-inference" / "node.toml").read_text())
    (tmp_path / "topology.toml").write_text(
        (ROOT / "examples" / "h100-4gpu-inference" / "topology.toml").read_text()
    )
    assert not fleet.is_selection(str(spec))
    assert fleet.is_selection(str(tmp_path)) and fleet.is_selection(f"{tmp_path}/*.toml")
    r = run_hostc("check", spec)
    assert r.returncode == 0 and r.stdout == f"{spec}: ok\n", r.stdout + r.stderr


def _class_fleet(tmp: Path, hosts: int, body: str) -> Path:
    """`hosts` hosts extending one class file that holds `body`, its snapshot one with
    no GPU (the 4-GPU example's, GPUs removed)."""
    text = (ROOT / "examples" / "h100-4gpu-inference" / "topology.toml").read_text()
    tables = text.split("\n[")
    kept = [t for t in tables[1:] if not t.startswith("[gpus]]")]
    assert len(kept) < len(tables) - 1, "the example lists GPUs"
    (tmp / "nogpu.toml").write_text("\n[".join([tables[0], *kept]))
    (tmp / "class.toml").write_text(
        f'version = 1\n[host]\nname = "c"\ntopology = "nogpu.toml"\n{body}'
    )
    (tmp / "hosts").mkdir()
    for i in range(hosts):
        (tmp / "hosts" / f"h{i:02d}.toml").write_text(
            f'extends = ["../class.toml"]\n[host]\nname = "h{i:02d}"\n'
        )
    return tmp / "hosts"


def test_a_node_class_problem_is_printed_once_with_its_hosts(tmp_path: Path) -> None:
    """One root cause, one diagnostic: a warning from the class file every host extends is
    the same diagnostic for each host (same file, line and words); it is printed once,
    followed by the hosts it concerns, and still counted per host in the table."""
    hosts = _class_fleet(tmp_path, 11, 'role = "training"\n')
    r = run_hostc("build", hosts, "--out", tmp_path / "out", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    head = f"warning: {tmp_path}/class.toml:5: host.role: role training with no GPU"
    assert r.stderr.count(head) == 1, r.stderr
    named = ", ".join(f"h{i:02d}" for i in range(8))
    assert f"\n  for 11 hosts: {named} and 3 more\n" in r.stderr, r.stderr
    assert "11 hosts: 11 built, 0 failed, 11 warning(s)" in r.stderr
    assert r.stderr.index(head) < r.stderr.index("for 11 hosts") < r.stderr.index("\nhost ")


def test_a_node_class_error_fails_every_host_and_is_printed_once(tmp_path: Path) -> None:
    hosts = _class_fleet(tmp_path, 3, 'role = "general"\n[cpu]\nhousekeeping_per_node = "2"\n')
    r = run_hostc("build", hosts, "--out", tmp_path / "out", "--jobs", "2")
    assert r.returncode == 2, r.stderr
    head = f"error: {tmp_path}/class.toml:7: cpu.housekeeping_per_node"
    assert r.stderr.count(head) == 1, r.stderr
    assert "\n  for 3 hosts: h00, h01, h02\n" in r.stderr, r.stderr
    assert "3 hosts: 0 built, 3 failed" in r.stderr
