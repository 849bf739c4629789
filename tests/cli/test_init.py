"""`hostc init`: a starting spec `hostc check` accepts, for this machine (a probed root)
or a snapshot, asking nothing; it warns about a VM, a host too small to isolate, no
GPU, no cpufreq driver, and never overwrites a file without --force (first-day-3 F5, F16)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import run_hostc, shared

from sysfs_fixtures import build, smt_host

LSCPU = ("topologies", "lscpu", "puget-wrx90-threadripper-pro-1s-24cpu-lscpu-e.txt")
G4DN = ("topologies", "hwloc", "g4dnmetal.xml")  # 96 CPUs, 8 GPUs on 2 nodes


def vm_root(tmp_path: Path) -> Path:
    """A 2-vCPU guest: the hypervisor CPU flag, no cpufreq policy."""
    root = build(smt_host(1, 2, 1, 1), tmp_path / "root")
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc/cpuinfo").write_text(
        "processor\t: 0\nflags\t\t: fpu sse2 hypervisor\n\nprocessor\t: 1\n"
        "flags\t\t: fpu sse2 hypervisor\n"
    )
    return root


def test_init_on_a_small_vm_warns_and_leaves_out_what_has_no_effect(tmp_path: Path) -> None:
    spec = tmp_path / "site/node.toml"
    r = run_hostc("init", "--root", vm_root(tmp_path), "-o", spec, "--name", "guest")
    assert r.returncode == 0, r.stderr
    assert "virtual machine (the hypervisor CPU flag)" in r.stderr
    assert "2 online CPUs: too small to isolate anything" in r.stderr
    assert 'role = "general"' in spec.read_text(), "no GPU seen: the general preset"
    assert "role inference with no GPU" not in r.stderr
    assert "no cpufreq driver" in r.stderr
    assert (tmp_path / "site/topology.toml").is_file()
    checked = run_hostc("check", spec)
    assert checked.returncode == 0 and "role" not in checked.stderr, checked.stderr
    plan = run_hostc("plan", spec).stdout
    assert "isolated - (0)" in plan
    for absent in ("scaling_governor", "energy_performance_preference", "pstate=", "idle states"):
        assert absent not in plan, absent


def test_init_from_a_real_snapshot_takes_the_role_flag(tmp_path: Path) -> None:
    snap = tmp_path / "topology.toml"
    r = run_hostc("import", "lscpu", shared(*LSCPU), "-o", snap)
    assert r.returncode == 0, r.stderr
    spec = tmp_path / "specs/node.toml"
    r = run_hostc("init", "--topology", snap, "-o", spec, "--role", "training")
    assert r.returncode == 0, r.stderr
    text = spec.read_text()
    assert 'role = "training"' in text and 'topology = "../topology.toml"' in text
    assert "records neither a hypervisor nor a cpufreq driver" in r.stderr
    assert run_hostc("check", spec).returncode == 0


def test_init_with_gpus_isolates_the_servers_nodes(tmp_path: Path) -> None:
    snap = tmp_path / "topology.toml"
    assert run_hostc("import", "hwloc", shared(*G4DN), "-o", snap).returncode == 0
    spec = tmp_path / "node.toml"
    r = run_hostc("init", "--topology", snap, "-o", spec)
    assert r.returncode == 0, r.stderr
    assert "[[workload]]" in spec.read_text() and 'isolate = "workload"' in spec.read_text()
    assert run_hostc("check", spec).returncode == 0
    assert "isolated - (0)" not in run_hostc("plan", spec).stdout


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    root = vm_root(tmp_path)
    spec = tmp_path / "node.toml"
    spec.write_text("mine\n")
    r = run_hostc("init", "--root", root, "-o", spec)
    assert r.returncode == 2
    assert "exists; not overwritten" in r.stderr
    assert spec.read_text() == "mine\n" and not (tmp_path / "topology.toml").exists()
    r = run_hostc("init", "--root", root, "-o", spec, "--force")
    assert r.returncode == 0, r.stderr
    assert spec.read_text().startswith("# Starting spec written by `hostc init`")


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), st.lists(st.text(), max_size=4)))
def test_every_value_init_writes_reads_back_as_itself(value: str | list[str]) -> None:
    """A snapshot's GPU names and the --topology path reach node.toml: a `"` or `\\`
    in them must not end the string and start a key of its own."""
    from hostc.api.init import _toml

    assert tomllib.loads(f"v = {_toml(value)}\nafter = 1\n") == {"v": value, "after": 1}
