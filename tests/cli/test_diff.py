# ruff: noqa: E501  (the expected output is asserted line for line, as printed)
"""`hostc diff`: scripted changes on an example print exactly the Plan-level change."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.report.review import md_text

from conftest import ROOT, run_hostc

DGX = ROOT / "examples" / "dgx-h100-inference"


def changed_copy(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    """The DGX example copied with its spec edited."""
    out = tmp_path / "new"
    shutil.copytree(DGX, out)
    spec = out / "node.toml"
    spec.write_text(edit(spec.read_text()))
    return spec


def test_moving_housekeeping_cores_lists_each_move_per_node(tmp_path: Path) -> None:
    new = changed_copy(
        tmp_path, lambda s: s.replace("housekeeping_per_node = 4", "housekeeping_per_node = 5")
    )
    found = api.plan_diff(str(DGX / "node.toml"), str(new))
    assert [attrs.astuple(m) for m in found.plan.moves] == [
        ("0", "4,116", "serve-a", "housekeeping"),
        ("0", "30,142", "serve-b", "serve-a"),
        ("1", "60,172", "serve-c", "housekeeping"),
        ("1", "86,198", "serve-d", "serve-c"),
    ]
    part = next(s for s in found.plan.settings if s.name == "partition")
    assert part.old_reason is not None and part.new_reason is not None
    assert "4 core(s) per NUMA node" in part.old_reason
    assert "5 core(s) per NUMA node" in part.new_reason


def test_changing_a_sysctl_prints_both_values_and_both_reasons(tmp_path: Path) -> None:
    new = changed_copy(tmp_path, lambda s: s + '\n[sysctl]\n"vm.swappiness" = 10\n')
    r = run_hostc("diff", DGX / "node.toml", new)
    assert r.returncode == 1, r.stderr
    assert (
        r.stdout
        == f"""\
### hostc diff: {md_text(DGX / "node.toml")} → {md_text(new)}

**On a running host:** applies live (sysctl); restarts nothing; no reboot

**Spec** (the keys as written; the Plan detail follows)

- `sysctl."vm.swappiness"`: (not set) → `10`

**CPUs**

- no CPU changes its role

**Settings**

- changed `sysctls[vm.swappiness]`: `value=1` → `value=10`
  - was: preset:base: a swapped-out page is a millisecond fault on the hot path; 1 keeps swap as a last resort
  - now: sysctl."vm.swappiness": set by the spec (preset had 1)

**Artifacts**

- changed sysctl:/etc/sysctl.d/90-hostc.conf (+2 −2)
- changed systemd:/usr/local/sbin/hostc-verify (+2 −2)
"""
    )


def test_removing_a_workload_frees_its_cpus_and_removes_its_drop_in(tmp_path: Path) -> None:
    new = changed_copy(
        tmp_path,
        lambda s: s.replace('[[workload]]\nname = "serve-d"\ngpus = ["GPU6", "GPU7"]\n\n', ""),
    )
    r = run_hostc("diff", DGX / "node.toml", new, "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["cpus"] == [
        {"node": "1", "cpus": "86-111,198-223", "old": "serve-d", "new": "serve-c"}
    ]
    assert [(s["name"], s["change"], s["old"], s["new"]) for s in doc["settings"]] == [
        ("workloads[serve-c]", "changed", "cpus=60-85,172-197", "cpus=60-111,172-223"),
        (
            "workloads[serve-d]",
            "removed",
            'gpus=["GPU6","GPU7"] nodes=[1] cpus=86-111,198-223 unit=serve-d.service '
            'nics=["mlx5_6","mlx5_7"] env=[["NCCL_IB_HCA","=mlx5_6,mlx5_7"]] shared=false '
            'after=["nvidia-fabricmanager.service","nvidia-persistenced.service"]',
            None,
        ),
    ]
    # hostc.slice holds every workload's CPUs (kernel 5.15: slice cpusets), and
    # hostc-verify.service is ordered after the workloads
    assert sorted((f["path"], f["change"]) for f in doc["artifacts"]) == [
        ("/etc/systemd/system/hostc-tuning.service", "changed"),
        ("/etc/systemd/system/hostc-verify.service", "changed"),
        ("/etc/systemd/system/hostc.slice", "changed"),
        ("/etc/systemd/system/serve-c.service.d/90-hostc.conf", "changed"),
        ("/etc/systemd/system/serve-d.service.d/90-hostc.conf", "removed"),
        ("/usr/local/sbin/hostc-verify", "changed"),
    ]


def test_no_change_exits_0_and_a_saved_plan_json_is_a_side() -> None:
    golden = ROOT / "golden" / "dgx-h100-inference" / "plan.json"
    r = run_hostc("diff", golden, DGX / "node.toml")
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("No change at Plan level; artifacts not compared.\n")


def test_spec_at_a_git_revision(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git not installed")
    repo = tmp_path / "repo"
    shutil.copytree(DGX, repo)

    def run(*args: str) -> None:
        subprocess.run([git, "-C", str(repo), *args], check=True, capture_output=True)

    run("init", "-q")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    spec = repo / "node.toml"
    spec.write_text(spec.read_text() + '\n[sysctl]\n"vm.swappiness" = 10\n')
    r = run_hostc("diff", f"{spec}@HEAD", spec, "--json", cwd=repo)
    assert r.returncode == 1, r.stderr
    assert [s["name"] for s in json.loads(r.stdout)["settings"]] == ["sysctls[vm.swappiness]"]
    bad = run_hostc("diff", f"{spec}@no-such-rev", spec, cwd=repo)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert f"{spec}@no-such-rev" in bad.stderr


def test_a_fleet_host_at_a_git_revision_reads_its_classes_there_too(tmp_path: Path) -> None:
    """SPEC@REV of a host that extends a class: the class file and the snapshot are read
    at REV as well, so a change to the class alone shows up (a diff that read the class
    from the working tree would say nothing changed)."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git not installed")
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "fleet", repo / "examples" / "fleet")
    shutil.copytree(DGX, repo / "examples" / DGX.name)

    def run(*args: str) -> None:
        subprocess.run([git, "-C", str(repo), *args], check=True, capture_output=True)

    run("init", "-q")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    cls = repo / "examples" / "fleet" / "classes" / "dgx-inference.toml"
    cls.write_text(cls.read_text() + '\n[sysctl]\n"vm.swappiness" = 10\n')
    host = repo / "examples" / "fleet" / "hosts" / "dgx-r1-01.toml"
    r = run_hostc("diff", f"{host}@HEAD", host, "--json", cwd=repo)
    assert r.returncode == 1, r.stdout + r.stderr
    assert [s["name"] for s in json.loads(r.stdout)["settings"]] == ["sysctls[vm.swappiness]"]
    same = run_hostc("diff", f"{host}@HEAD", f"{host}@HEAD", cwd=repo)
    assert same.returncode == 0, same.stdout + same.stderr
    (repo / "examples" / "fleet" / "classes" / "gone.toml").write_text("version = 1\n")
    host.write_text(host.read_text().replace("dgx-inference.toml", "gone.toml"))
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "gone")
    run("rm", "-q", "--cached", "examples/fleet/classes/gone.toml")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "class not in git")
    missing = run_hostc("diff", f"{host}@HEAD", host, cwd=repo)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing.stderr
    assert "gone.toml@HEAD, which does not exist" in missing.stderr, missing.stderr
    (repo / "examples" / "fleet" / "classes" / "dir.toml").mkdir()
    (repo / "examples" / "fleet" / "classes" / "dir.toml" / "x").write_text("x\n")
    host.write_text(host.read_text().replace("gone.toml", "dir.toml"))
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a folder")
    folder = run_hostc("diff", f"{host}@HEAD", host, cwd=repo)
    assert folder.returncode == 2 and "Traceback" not in folder.stderr, folder.stderr
    assert "dir.toml@HEAD, which does not exist" in folder.stderr, folder.stderr  # not a tree


@pytest.mark.parametrize(
    "content",
    ['{"partition": {"online": "0-3", "housekeeping": "x"}}', "[1]", "{", '{"partition": 3}'],
)
def test_a_broken_plan_json_is_one_error_naming_the_file(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text(content)
    r = run_hostc("diff", bad, DGX / "node.toml")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: {bad}: not ") and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_a_plan_json_of_another_format_is_refused_not_misread(tmp_path: Path) -> None:
    """Format 1 (no `format` key) held the governor in `runtime.governor`: compared with
    format 2 it would read as the governor removed and a tunable added (and format 2's
    `thp` against format 3's `cmdline_settings` likewise)."""
    plan = json.loads(run_hostc("plan", DGX / "node.toml", "--json").stdout)
    assert plan["format"] == 3
    del plan["format"]
    old = tmp_path / "plan.json"
    old.write_text(json.dumps(plan))
    r = run_hostc("diff", old, DGX / "node.toml")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    assert f"error: {old}: plan.json format 1, this hostc writes and compares format 3" in (
        r.stderr
    )


def test_a_spec_at_a_revision_that_reads_as_an_option_is_refused(tmp_path: Path) -> None:
    """`SPEC@REV` hands REV to git: a REV starting with `-` would be read as an option."""
    r = run_hostc("diff", "node.toml@--output=x", DGX / "node.toml", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "'--output=x' is not a revision" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_setting_preset_exclude_removes_says_so_with_its_line(tmp_path: Path) -> None:
    """A removal by `preset.exclude` names it and its line, not only the old reason; the
    parent of a removed setting is no `changed … → governor=null` row (first-day-3 F15)."""
    new = changed_copy(
        tmp_path,
        lambda s: s + '\n[preset]\nexclude = [\n  "cpu_governor",\n  "vm.swappiness",\n]\n',
    )
    line = new.read_text().splitlines().index('  "vm.swappiness",') + 1
    r = run_hostc("diff", DGX / "node.toml", new)
    assert r.returncode == 1, r.stderr
    assert (
        "- removed `sysctls[vm.swappiness]`: `value=1`\n"
        "  - was: preset:base: a swapped-out page is a millisecond fault on the hot path; 1 keeps swap as a last resort\n"
        f"  - now: preset.exclude ({md_text(new)}:{line}): vm.swappiness is left out\n"
    ) in r.stdout, r.stdout
    assert (
        f"  - now: preset.exclude ({md_text(new)}:{line - 1}): cpu\\_governor is left out\n"
        in r.stdout
    )
    assert "`runtime`" not in r.stdout and "null" not in r.stdout
    doc = json.loads(run_hostc("diff", DGX / "node.toml", new, "--json").stdout)
    gone = next(s for s in doc["settings"] if s["name"] == "runtime.tunables[cpu_governor]")
    assert gone["new_reason"] == f"preset.exclude ({new}:{line - 1}): cpu_governor is left out"
