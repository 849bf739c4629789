"""The CLI contracts users script against (DESIGN.md, "Contracts users depend on").

Everything runs `python -m hostc` in a subprocess, as a user or pipeline would:
stdout/stderr split, exit codes 0/1/2, `--out DIR/<target>/<path>`, `--check`
diffs, the JSON manifest, determinism, and that a failed build writes nothing.
Golden trees are only ever compared against, never modified: tests that need a
changed tree copy it into tmp_path first.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hostc import api
from hostc.delivery.owned import RECORD
from hostc.diagnostics import HostcError
from hostc.topology import snapshot

from conftest import EXAMPLES, ROOT
from topogen import machine

GOLDEN = ROOT / "golden"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "node.toml").is_file())
H100 = "h100-4gpu-inference"
TARGETS = tuple(api.targets())  # the registry, in order: no hand-kept list
SUBCOMMANDS = ("build", "check", "plan", "targets", "schema", "probe", "import")
IMPORTERS = ("hwloc", "lscpu", "numactl", "nvidia-smi")


def hostc(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "hostc", *map(str, args)],
        capture_output=True,
        cwd=cwd or ROOT,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def spec_of(name: str) -> Path:
    return EXAMPLES / name / "node.toml"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root by its posix relative path (hidden temp files included),
    but the build's record of what it wrote (`hostc.delivery.owned`)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p != root / RECORD
    }


def artifact_tree(root: Path) -> dict[str, bytes]:
    """What `--target all` writes for the example whose golden tree is `root`: its file
    targets' folders (not plan.json, not the wrapper targets' folders)."""
    plan, _ = api.compile_file(EXAMPLES / root.name / "node.toml")
    wanted = {a.target for a in api.emit(plan, ["all"])}
    return {k: v for k, v in tree(root).items() if k.split("/")[0] in wanted}


def stat_tree(root: Path) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and p != root / RECORD:
            st = p.stat()
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), st.st_mtime_ns, st.st_mode)
    return out


def golden_copy(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / "golden"
    shutil.copytree(GOLDEN / name, dest)
    return dest


def example_copy(name: str, tmp_path: Path) -> Path:
    """The example's spec and snapshot in tmp_path (so a test can break the spec)."""
    dest = tmp_path / "spec"
    shutil.copytree(EXAMPLES / name, dest)
    return dest / "node.toml"


def no_traceback(r: subprocess.CompletedProcess[bytes]) -> None:
    err = r.stderr.decode()
    assert "Traceback" not in err, err
    assert "internal error" not in err, err


def test_examples_and_golden_are_paired() -> None:
    assert NAMES, "no examples found"
    assert H100 in NAMES
    # golden/fleet holds the example fleet's hosts (examples/fleet/hosts/, no node.toml)
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) == sorted([*NAMES, "fleet"])


# ---- build to stdout ---------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_single_target_prints_golden_file(name: str) -> None:
    r = hostc("build", spec_of(name), "--target", "sysctl")
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == (GOLDEN / name / "sysctl/etc/sysctl.d/90-hostc.conf").read_bytes()


def test_cmdline_target_prints_one_line() -> None:
    r = hostc("build", spec_of(H100), "-t", "cmdline")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == (GOLDEN / H100 / "cmdline/kernel-cmdline").read_bytes()
    assert r.stdout.count(b"\n") == 1


@pytest.mark.parametrize(
    "selection",
    [["--target", "all"], [], ["--target", "limits"], ["-t", "sysctl", "-t", "cmdline"]],
    ids=["all", "default", "limits-makes-two", "two-targets"],
)
def test_several_artifacts_without_out_is_a_usage_error(selection: list[str]) -> None:
    r = hostc("build", spec_of(H100), *selection)
    no_traceback(r)
    assert r.returncode == 2
    assert r.stdout == b""
    err = r.stderr.decode()
    assert err.startswith("error: ")
    assert "--out" in err


def test_warnings_go_to_stderr_and_never_into_the_artifact(tmp_path: Path) -> None:
    spec = example_copy(H100, tmp_path)
    text = spec.read_text()
    start, end = text.index("[[workload]]"), text.index("[cpu]")
    spec.write_text(text[:start] + text[end:].replace('isolate = "workload"', 'isolate = "rest"'))
    r = hostc("build", spec, "--target", "sysctl")
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    assert b"warning" not in r.stdout
    assert r.stdout.startswith(b"# ")
    assert re.search(r"^warning: .*node\.toml:\d+: cpu\.isolate: ", r.stderr.decode(), re.M)
    doc = json.loads(hostc("build", spec, "--target", "sysctl", "--json").stdout)
    assert [w["path"] for w in doc["warnings"]] == ["cpu.isolate"]
    assert doc["warnings"][0]["severity"] == "warning"


def test_unknown_target_is_a_usage_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = hostc("build", spec_of(H100), "--target", "sysctl", "--target", "nosuch", "--out", out)
    no_traceback(r)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "nosuch" in err
    for name in TARGETS:  # the hint lists what is accepted
        assert name in err
    assert not out.exists()


def test_unknown_target_next_to_all_is_still_rejected(tmp_path: Path) -> None:
    """`all` selects every target, but a misspelt name beside it is still a mistake."""
    out = tmp_path / "out"
    r = hostc("build", spec_of(H100), "--target", "all", "--target", "nosuch", "--out", out)
    no_traceback(r)
    assert r.returncode == 2, r.stderr.decode()
    assert "nosuch" in r.stderr.decode()
    assert not out.exists()


def test_missing_spec_argument_is_a_usage_error() -> None:
    r = hostc("build")
    no_traceback(r)
    assert r.returncode == 2


# ---- build --out -------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_out_writes_golden_tree(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = hostc("build", spec_of(name), "--target", "all", "--out", out)
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == b""
    assert tree(out) == artifact_tree(GOLDEN / name)
    plan, _ = api.compile_file(spec_of(name))
    arts = api.emit(plan, ["all"])
    assert {p.name for p in out.iterdir()} == {a.target for a in arts} | {RECORD}
    for a in arts:
        assert (out / a.target / a.relpath).stat().st_mode & 0o777 == a.mode, a.path


def test_out_with_selected_targets_writes_only_those(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = hostc("build", spec_of(H100), "-t", "grub", "-t", "limits", "-o", out)
    assert r.returncode == 0, r.stderr.decode()
    assert sorted(p.name for p in out.iterdir()) == [RECORD, "grub", "limits"]
    want = {
        k: v
        for k, v in artifact_tree(GOLDEN / H100).items()
        if k.split("/")[0] in ("grub", "limits")
    }
    assert tree(out) == want


def test_out_replaces_previous_build_in_place(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "sysctl/etc/sysctl.d").mkdir(parents=True)
    (out / "sysctl/etc/sysctl.d/90-hostc.conf").write_text("old\n")
    r = hostc("build", spec_of(H100), "--target", "all", "--out", out)
    assert r.returncode == 0, r.stderr.decode()
    assert tree(out) == artifact_tree(GOLDEN / H100)


def test_out_that_is_a_file_is_an_input_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("a file\n")
    r = hostc("build", spec_of(H100), "--target", "all", "--out", out)
    no_traceback(r)
    assert r.returncode == 2
    assert str(out) in r.stderr.decode()
    assert out.read_text() == "a file\n"


def test_relative_paths_resolve_against_the_spec_not_cwd(tmp_path: Path) -> None:
    """host.topology is relative to node.toml; the user's cwd does not matter."""
    rel = spec_of(H100).relative_to(ROOT)
    r = hostc("build", rel, "--target", "sysctl", cwd=ROOT)
    assert r.returncode == 0, r.stderr.decode()
    r2 = hostc("build", "node.toml", "--target", "sysctl", cwd=EXAMPLES / H100)
    assert r2.returncode == 0, r2.stderr.decode()
    assert (
        r.stdout == r2.stdout == (GOLDEN / H100 / "sysctl/etc/sysctl.d/90-hostc.conf").read_bytes()
    )


# ---- build --check -----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_check_against_golden_passes(name: str) -> None:
    r = hostc("build", spec_of(name), "--target", "all", "--out", GOLDEN / name, "--check")
    no_traceback(r)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    assert r.stdout == b""


def test_check_reports_a_modified_file_as_unified_diff(tmp_path: Path) -> None:
    gold = golden_copy(H100, tmp_path)
    conf = gold / "sysctl/etc/sysctl.d/90-hostc.conf"
    text = conf.read_text()
    assert "vm.swappiness = 1\n" in text
    conf.write_text(text.replace("vm.swappiness = 1\n", "vm.swappiness = 60\n"))
    before = tree(gold)

    r = hostc("build", spec_of(H100), "--target", "all", "--out", gold, "--check")

    no_traceback(r)
    assert r.returncode == 1
    diff = r.stdout.decode()
    assert "--- a/sysctl/etc/sysctl.d/90-hostc.conf\n" in diff
    assert "+++ b/sysctl/etc/sysctl.d/90-hostc.conf\n" in diff
    assert re.search(r"^@@ .* @@", diff, re.M)
    assert "\n-vm.swappiness = 60\n" in diff
    assert "\n+vm.swappiness = 1\n" in diff
    # only the changed file is named
    assert "grub" not in diff and "limits.d" not in diff and "kernel-cmdline" not in diff
    assert tree(gold) == before, "--check must not write"


def test_check_reports_a_stale_file(tmp_path: Path) -> None:
    gold = golden_copy(H100, tmp_path)
    (gold / "sysctl/etc/sysctl.d/80-old.conf").write_text("vm.dirty_ratio = 5\n")
    r = hostc("build", spec_of(H100), "--target", "all", "--out", gold, "--check")
    no_traceback(r)
    assert r.returncode == 1
    diff = r.stdout.decode()
    assert "a/sysctl/etc/sysctl.d/80-old.conf" in diff
    assert "-vm.dirty_ratio = 5" in diff
    assert (gold / "sysctl/etc/sysctl.d/80-old.conf").exists(), "--check must not delete"


def test_check_reports_a_missing_file(tmp_path: Path) -> None:
    gold = golden_copy(H100, tmp_path)
    (gold / "cmdline/kernel-cmdline").unlink()
    r = hostc("build", spec_of(H100), "--target", "all", "--out", gold, "--check")
    assert r.returncode == 1
    diff = r.stdout.decode()
    assert "--- /dev/null" in diff
    assert "+++ b/cmdline/kernel-cmdline" in diff
    assert not (gold / "cmdline/kernel-cmdline").exists()


def test_check_sees_line_ending_changes(tmp_path: Path) -> None:
    """--check compares bytes: a CRLF copy is not what `build --out` would write."""
    gold = golden_copy(H100, tmp_path)
    conf = gold / "sysctl/etc/sysctl.d/90-hostc.conf"
    conf.write_bytes(conf.read_bytes().replace(b"\n", b"\r\n"))
    r = hostc("build", spec_of(H100), "--target", "all", "--out", gold, "--check")
    no_traceback(r)
    assert r.returncode == 1, "a CRLF file passed --check although the build rewrites it"
    assert "sysctl/etc/sysctl.d/90-hostc.conf" in r.stdout.decode()


def test_check_with_non_utf8_file_is_a_difference_not_a_crash(tmp_path: Path) -> None:
    gold = golden_copy(H100, tmp_path)
    conf = gold / "sysctl/etc/sysctl.d/90-hostc.conf"
    conf.write_bytes(b"vm.swappiness = 1\xff\n")
    r = hostc("build", spec_of(H100), "--target", "all", "--out", gold, "--check")
    no_traceback(r)
    assert r.returncode == 1, r.stderr.decode()
    assert "sysctl/etc/sysctl.d/90-hostc.conf" in r.stdout.decode()
    assert conf.read_bytes() == b"vm.swappiness = 1\xff\n"


def test_check_with_directory_where_a_file_belongs_does_not_crash(tmp_path: Path) -> None:
    gold = golden_copy(H100, tmp_path)
    (gold / "cmdline/kernel-cmdline").unlink()
    (gold / "cmdline/kernel-cmdline").mkdir()
    r = hostc("build", spec_of(H100), "--target", "all", "--out", gold, "--check")
    no_traceback(r)
    assert r.returncode in (1, 2), r.stderr.decode()
    assert "cmdline/kernel-cmdline" in r.stdout.decode() + r.stderr.decode()


def test_check_only_compares_selected_targets(tmp_path: Path) -> None:
    gold = golden_copy(H100, tmp_path)
    (gold / "cmdline/kernel-cmdline").write_text("changed\n")
    r = hostc("build", spec_of(H100), "-t", "sysctl", "--out", gold, "--check")
    assert r.returncode == 0, r.stdout.decode()
    r = hostc("build", spec_of(H100), "-t", "cmdline", "--out", gold, "--check")
    assert r.returncode == 1


def test_check_without_out_is_a_usage_error() -> None:
    r = hostc("build", spec_of(H100), "--target", "all", "--check")
    no_traceback(r)
    assert r.returncode == 2
    assert "--out" in r.stderr.decode()


def test_check_of_bad_spec_exits_2_not_1(tmp_path: Path) -> None:
    spec = example_copy(H100, tmp_path)
    spec.write_text(spec.read_text().replace('isolate = "workload"', 'isolate = "3-1"'))
    r = hostc("build", spec, "--target", "all", "--out", GOLDEN / H100, "--check")
    no_traceback(r)
    assert r.returncode == 2
    assert r.stdout == b""


# ---- build --json ------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_json_manifest_carries_content_and_sha256(name: str) -> None:
    r = hostc("build", spec_of(name), "--target", "all", "--json")
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    doc = json.loads(r.stdout)
    assert isinstance(doc.get("warnings"), list)
    rows = doc["artifacts"]
    gold = artifact_tree(GOLDEN / name)
    seen = {}
    for row in rows:
        assert row["target"] in TARGETS
        content = row["content"].encode()
        assert row["sha256"] == hashlib.sha256(content).hexdigest()
        assert row["mode"] in ("0644", "0755")
        assert "written" not in row
        seen[f"{row['target']}/{row['path'].lstrip('/')}"] = content
    assert seen == gold
    assert [r["target"] for r in rows] == sorted((r["target"] for r in rows), key=TARGETS.index)


def test_json_with_out_prints_written_paths(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = hostc("build", spec_of(H100), "--target", "all", "--out", out, "--json")
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    rows = json.loads(r.stdout)["artifacts"]
    assert len(rows) == len(artifact_tree(GOLDEN / H100))
    for row in rows:
        assert "content" not in row
        written = Path(row["written"])
        assert written == out / row["target"] / row["path"].lstrip("/")
        assert row["sha256"] == hashlib.sha256(written.read_bytes()).hexdigest()
    assert tree(out) == artifact_tree(GOLDEN / H100)


def test_json_single_target_is_still_a_manifest() -> None:
    r = hostc("build", spec_of(H100), "--target", "sysctl", "--json")
    assert r.returncode == 0, r.stderr.decode()
    rows = json.loads(r.stdout)["artifacts"]
    assert [(x["target"], x["path"]) for x in rows] == [("sysctl", "/etc/sysctl.d/90-hostc.conf")]


# ---- --topology --------------------------------------------------------------------------


def test_topology_option_overrides_host_topology(tmp_path: Path) -> None:
    spec = tmp_path / "node.toml"
    text = spec_of(H100).read_text()
    assert 'topology = "topology.toml"' in text
    spec.write_text(text.replace('topology = "topology.toml"', 'topology = "elsewhere.toml"'))

    r = hostc("build", spec, "--target", "all", "--out", tmp_path / "x")
    no_traceback(r)
    assert r.returncode == 2
    assert "elsewhere.toml" in r.stderr.decode()
    assert not (tmp_path / "x").exists()

    out = tmp_path / "out"
    r = hostc(
        "build",
        spec,
        "--topology",
        EXAMPLES / H100 / "topology.toml",
        "--target",
        "all",
        "--out",
        out,
    )
    assert r.returncode == 0, r.stderr.decode()
    assert tree(out) == artifact_tree(GOLDEN / H100)


def test_topology_option_wins_over_a_valid_host_topology(tmp_path: Path) -> None:
    """The spec names a valid snapshot; --topology names another machine, and wins."""
    other = tmp_path / "small.toml"
    other.write_text(
        snapshot.dumps(
            machine(packages=2, cores_per_node=16, smt=2, memory_mib=524288, gpus_per_node=2)
        )
    )
    # the example without its `cpu.offline` (CPUs of its own machine, not of this one)
    spec = tmp_path / "node.toml"
    lines = spec_of(H100).read_text().splitlines(keepends=True)
    spec.write_text("".join(x for x in lines if not x.startswith("offline =")))
    shutil.copy(spec_of(H100).parent / "topology.toml", tmp_path / "topology.toml")
    r = hostc("build", spec, "--topology", other, "--target", "cmdline")
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    # 2 x 16 cores x SMT2: node 0 is 0-15,32-47; housekeeping cores 0-1 with 32-33
    assert b"isolcpus=managed_irq,2-15,34-47 " in r.stdout
    assert r.stdout != (GOLDEN / H100 / "cmdline/kernel-cmdline").read_bytes()


# ---- check / plan / targets / schema -----------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_check_command_accepts_examples(name: str) -> None:
    r = hostc("check", spec_of(name))
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().rstrip().endswith(("ok", "warning(s))"))
    assert "error:" not in r.stderr.decode()


def test_check_command_rejects_bad_spec(tmp_path: Path) -> None:
    spec = example_copy(H100, tmp_path)
    spec.write_text(spec.read_text().replace('"GPU1"', '"GPU9"'))
    r = hostc("check", spec)
    no_traceback(r)
    assert r.returncode == 2
    assert 'workload "vllm".gpus[1]' in r.stderr.decode()
    assert b"ok" not in r.stdout


def test_plan_shows_node_table_and_numactl_line() -> None:
    r = hostc("plan", spec_of(H100))
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    head = next(
        i for i, ln in enumerate(lines) if ln.split()[:3] == ["node", "housekeeping", "isolated"]
    )
    node0 = lines[head + 1].split()
    node1 = lines[head + 2].split()
    assert node0[:5] == ["0", "0-1,64-65", "2-31,66-95", "GPU0,GPU1", "mlx5_0"]
    # node 1 without its last 8 cores and their siblings (`cpu.offline = "56-63,120-127"`)
    assert node1[:5] == ["1", "32-55,96-119", "-", "GPU2,GPU3", "mlx5_1"]
    assert "16×1G" in node0
    numactl = [ln for ln in lines if "numactl" in ln]
    assert len(numactl) == 1
    assert "numactl --physcpubind=2-31,66-95 --membind=0" in numactl[0]
    assert "vllm" in numactl[0]


def test_plan_json_is_json() -> None:
    r = hostc("plan", spec_of(H100), "--json")
    assert r.returncode == 0, r.stderr.decode()
    assert isinstance(json.loads(r.stdout), dict)


def test_targets_lists_every_target() -> None:
    r = hostc("targets")
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    names = [ln.split()[0] for ln in lines if ln.startswith("  ")]
    assert sorted(names) == sorted(TARGETS)
    # what `all` means is said, and how to get the wrappers (first-day-3 F15)
    heads = [ln for ln in lines if not ln.startswith("  ")]
    assert heads[0].startswith("file targets: `--target all` (the default) builds each")
    assert heads[1].startswith("wrappers: never in `all`") and "`-t all -t cloud-init`" in heads[1]
    wrappers = names[lines.index(heads[1]) - 1 :]
    assert wrappers == ["cloud-init", "ignition", "rootfs", "rootfs-tar", "ansible"]
    help_text = " ".join(hostc("build", "--help").stdout.decode().split())
    assert "are never in `all`: name them, alone or beside it (`-t all -t cloud-init`)" in help_text


@pytest.mark.parametrize("which", ["node", "topology"])
def test_schema_is_json_and_matches_checked_in_file(which: str) -> None:
    r = hostc("schema", which)
    assert r.returncode == 0, r.stderr.decode()
    doc = json.loads(r.stdout)
    assert doc.get("type") == "object"
    path = ROOT / "schemas" / f"{which}.schema.json"
    if not path.exists():
        pytest.skip(f"{path} is not checked in")
    assert r.stdout == path.read_bytes()


def test_schema_default_is_node() -> None:
    assert hostc("schema").stdout == hostc("schema", "node").stdout


def test_unknown_schema_is_a_usage_error() -> None:
    r = hostc("schema", "bogus")
    no_traceback(r)
    assert r.returncode == 2
    assert "bogus" in r.stderr.decode()


# ---- help and entry points ---------------------------------------------------------------


def test_help() -> None:
    r = hostc("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for sub in SUBCOMMANDS:
        assert sub in out


@pytest.mark.parametrize(
    "argv",
    [[s, "--help"] for s in SUBCOMMANDS] + [["import", s, "--help"] for s in IMPORTERS],
    ids=lambda a: " ".join(a),
)
def test_subcommand_help(argv: list[str]) -> None:
    r = hostc(*argv)
    no_traceback(r)
    assert r.returncode == 0, r.stderr.decode()
    assert b"Usage" in r.stdout


def test_build_help_documents_the_options() -> None:
    out = hostc("build", "--help").stdout.decode()
    for opt in ("--target", "--out", "--check", "--json", "--topology"):
        assert opt in out


def test_python_dash_m_runs_the_cli() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "hostc", "targets"], capture_output=True, cwd="/", timeout=60
    )
    assert r.returncode == 0, r.stderr.decode()
    assert b"sysctl" in r.stdout


def test_console_script_matches_python_dash_m() -> None:
    exe = shutil.which("hostc")
    if exe is None:
        pytest.skip("the hostc console script is not on PATH")
    r = subprocess.run(
        [exe, "build", str(spec_of(H100)), "--target", "sysctl"], capture_output=True, timeout=60
    )
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == hostc("build", spec_of(H100), "--target", "sysctl").stdout


# ---- determinism and atomicity -----------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_builds_are_byte_identical(name: str, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ra = hostc(
        "build",
        spec_of(name),
        "--target",
        "all",
        "--out",
        a,
        env={"PYTHONHASHSEED": "1", "TZ": "UTC", "LC_ALL": "C"},
    )
    rb = hostc(
        "build",
        spec_of(name),
        "--target",
        "all",
        "--out",
        b,
        cwd=tmp_path,
        env={"PYTHONHASHSEED": "2", "TZ": "Asia/Kolkata", "LC_ALL": "C.UTF-8"},
    )
    assert ra.returncode == rb.returncode == 0, ra.stderr.decode() + rb.stderr.decode()
    assert tree(a) == tree(b)
    ja = hostc("build", spec_of(name), "--target", "all", "--json", env={"PYTHONHASHSEED": "3"})
    jb = hostc("build", spec_of(name), "--target", "all", "--json", env={"PYTHONHASHSEED": "4"})
    assert ja.stdout == jb.stdout


def test_failed_build_leaves_previous_output_untouched(tmp_path: Path) -> None:
    spec = example_copy(H100, tmp_path)
    out = tmp_path / "out"
    r = hostc("build", spec, "--target", "all", "--out", out)
    assert r.returncode == 0, r.stderr.decode()
    before = stat_tree(out)
    assert set(before) == set(artifact_tree(GOLDEN / H100))

    # a spec that lowers fine for some targets but is invalid as a whole
    text = spec.read_text()
    spec.write_text(
        text.replace("[hugepages]", '[sysctl]\n"vm.swappiness" = 7\n\n[hugepages]').replace(
            'isolate = "workload"', 'isolate = "0-127"'
        )
    )
    r = hostc("build", spec, "--target", "all", "--out", out)
    no_traceback(r)
    assert r.returncode == 2
    assert stat_tree(out) == before

    spec.write_text("this is not toml ][\n")
    r = hostc("build", spec, "--target", "all", "--out", out)
    assert r.returncode == 2
    assert stat_tree(out) == before

    r = hostc("build", spec_of(H100), "--target", "sysctl", "--target", "nosuch", "--out", out)
    assert r.returncode == 2
    assert stat_tree(out) == before


def test_successful_rebuild_leaves_no_temporary_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for _ in range(2):
        r = hostc("build", spec_of(H100), "--target", "all", "--out", out)
        assert r.returncode == 0, r.stderr.decode()
    assert set(tree(out)) == set(artifact_tree(GOLDEN / H100))


# ---- the Python API ----------------------------------------------------------------------


def _api_artifacts(spec_path: Path, targets: list[str]) -> list[api.Artifact]:
    spec, source = api.load_spec(spec_path)
    topo = api.read_topology(api.topology_path(spec, spec_path, None, source))
    plan, warnings = api.compile_plan(spec, topo, spec_file=str(spec_path), spec_source=source)
    assert all(w.severity == "warning" for w in warnings)
    return api.emit(plan, targets)


@pytest.mark.parametrize("name", NAMES)
def test_api_gives_the_same_bytes_as_the_cli(name: str, tmp_path: Path) -> None:
    arts = _api_artifacts(spec_of(name), ["all"])
    api.write(arts, tmp_path / "api")
    r = hostc("build", spec_of(name), "--target", "all", "--out", tmp_path / "cli")
    assert r.returncode == 0, r.stderr.decode()
    assert tree(tmp_path / "api") == tree(tmp_path / "cli") == artifact_tree(GOLDEN / name)

    rows = json.loads(hostc("build", spec_of(name), "--target", "all", "--json").stdout)
    assert [(a.target, a.path, a.text) for a in arts] == [
        (x["target"], x["path"], x["content"]) for x in rows["artifacts"]
    ]
    assert api.manifest(arts, None) == rows["artifacts"]
    assert api.diff(arts, GOLDEN / name) == ""

    (sysctl,) = _api_artifacts(spec_of(name), ["sysctl"])
    assert sysctl.text.encode() == hostc("build", spec_of(name), "-t", "sysctl").stdout


def _raises_hostc_error(fn: object, *args: object, **kw: object) -> HostcError:
    try:
        fn(*args, **kw)  # type: ignore[operator]
    except HostcError as e:
        assert e.diagnostics
        return e
    except SystemExit as e:  # pragma: no cover - the failure being guarded against
        pytest.fail(f"the API exited ({e.code}) instead of raising HostcError")
    pytest.fail("no HostcError raised")


def test_api_raises_hostc_error_on_bad_input(tmp_path: Path) -> None:
    # missing spec file
    e = _raises_hostc_error(api.load_spec, tmp_path / "none.toml")
    assert "none.toml" in e.diagnostics[0].render()

    # TOML syntax and shape errors
    bad = tmp_path / "node.toml"
    bad.write_text("version = 1\n[host\n")
    _raises_hostc_error(api.load_spec, bad)
    bad.write_text('version = 1\n[host]\nname = "x"\nrole = "inferenc"\n')
    e = _raises_hostc_error(api.load_spec, bad)
    assert [str(d.path) for d in e.errors] == ["host.role"]
    assert e.errors[0].line == 4

    # missing topology, and no topology named at all
    spec_path = example_copy(H100, tmp_path)
    spec, source = api.load_spec(spec_path)
    _raises_hostc_error(api.read_topology, tmp_path / "nope.toml")
    no_topo = tmp_path / "notopo.toml"
    no_topo.write_text('version = 1\n[host]\nname = "x"\nrole = "general"\n')
    s2, src2 = api.load_spec(no_topo)
    e = _raises_hostc_error(api.topology_path, s2, no_topo, None, src2)
    assert str(e.errors[0].path) == "host.topology"

    # semantic errors from compile_plan, all of them at once
    spec_path.write_text(
        source.replace('"GPU1"', '"GPU9"').replace(
            "per_node = { 0 = 16 }", "per_node = { 0 = 16, 4 = 1 }"
        )
    )
    spec, source = api.load_spec(spec_path)
    topo = api.read_topology(api.topology_path(spec, spec_path, None, source))
    e = _raises_hostc_error(
        api.compile_plan, spec, topo, spec_file=str(spec_path), spec_source=source
    )
    assert {str(d.path) for d in e.errors} >= {'workload "vllm".gpus[1]', "hugepages.per_node.4"}
    assert all(d.file == str(spec_path) and d.line for d in e.errors)

    # unknown target
    plan, _ = api.compile_plan(*_good_spec_and_topo())
    _raises_hostc_error(api.emit, plan, ["nosuch"])


def _good_spec_and_topo() -> tuple[object, object]:
    spec, source = api.load_spec(spec_of(H100))
    topo = api.read_topology(api.topology_path(spec, spec_of(H100), None, source))
    return spec, topo


def test_api_does_not_print(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _api_artifacts(spec_of(H100), ["all"])
    bad = tmp_path / "node.toml"
    bad.write_text("[bogus]\n")
    with pytest.raises(HostcError):
        api.load_spec(bad)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
