"""`hostc probe` records the hypervisor flag and the cpufreq/cpuidle drivers, and
`hostc check`/`plan` warn from them: settings a VM or a driverless host ignores, one
housekeeping CPU for the whole host, a GPU role with no GPU (first-day-3 F5).  A
snapshot without the facts (every committed one) gets no driver warning."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hostc.api import read_topology
from tests.conftest import run_hostc

from sysfs_fixtures import FCpu, build, smt_host

SPEC = """version = 1
[host]
name = "guest"
role = "{role}"
topology = "topology.toml"
os = "ubuntu-24.04"
[[workload]]
name = "server"
nodes = [0]
[cpu]
isolate = "workload"
housekeeping_per_node = 1
"""


def _vm(tmp_path: Path, *, cpufreq: str | None, cpuidle: str | None) -> Path:
    """A 2-vCPU AMD guest with the hypervisor flag; its cpufreq directory empty unless
    `cpufreq` names a driver, cpuidle's current_driver as given."""
    root = build(smt_host(1, 2, 1, 1), tmp_path / "root")
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc/cpuinfo").write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 hypervisor\n\n"
        "processor\t: 1\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 hypervisor\n"
    )
    cpu = root / "sys/devices/system/cpu"
    (cpu / "cpufreq").mkdir()
    if cpufreq is not None:
        (cpu / "cpu0/cpufreq").mkdir()
        (cpu / "cpu0/cpufreq/scaling_driver").write_text(f"{cpufreq}\n")
    if cpuidle is not None:
        (cpu / "cpuidle").mkdir()
        (cpu / "cpuidle/current_driver").write_text(f"{cpuidle}\n")
    return root


def _spec(tmp_path: Path, root: Path, role: str = "inference") -> Path:
    r = run_hostc("probe", "--root", root, "-o", tmp_path / "topology.toml")
    assert r.returncode == 0, r.stderr
    spec = tmp_path / "node.toml"
    spec.write_text(SPEC.format(role=role))
    return spec


def test_probe_records_the_hypervisor_flag_and_the_drivers(tmp_path: Path) -> None:
    _spec(tmp_path, _vm(tmp_path, cpufreq=None, cpuidle="none"))
    snap = (tmp_path / "topology.toml").read_text()
    assert "hypervisor = true\n" in snap
    assert 'cpufreq_driver = "none"\n' in snap and 'cpuidle_driver = "none"\n' in snap
    # a capture stores only the flag, not the CPU's other flags, and probes the same
    archive = tmp_path / "cap.tar.gz"
    r = run_hostc("probe", "--root", tmp_path / "root", "--capture", archive)
    assert r.returncode == 0, r.stderr
    again = run_hostc("probe", "--root", archive)
    assert again.returncode == 0, again.stderr
    assert again.stdout == snap


def test_probe_of_bare_metal_names_the_driver(tmp_path: Path) -> None:
    root = _vm(tmp_path, cpufreq="amd-pstate-epp", cpuidle="acpi_idle")
    cpuinfo = root / "proc/cpuinfo"
    cpuinfo.write_text(cpuinfo.read_text().replace(" hypervisor", ""))
    spec = _spec(tmp_path, root)
    snap = (tmp_path / "topology.toml").read_text()
    assert "hypervisor = false\n" in snap and 'cpufreq_driver = "amd-pstate-epp"\n' in snap
    r = run_hostc("check", spec)
    assert "have no effect" not in r.stderr and "has no effect" not in r.stderr


def test_check_and_plan_warn_on_a_driverless_vm(tmp_path: Path) -> None:
    spec = _spec(tmp_path, _vm(tmp_path, cpufreq=None, cpuidle="none"))
    for command in ("check", "plan"):
        r = run_hostc(command, spec)
        assert r.returncode == 0, r.stderr
        err = " ".join(r.stderr.split())
        assert (
            "host.topology: a virtual machine (the hypervisor CPU flag) with no cpufreq driver "
            "(the snapshot's cpufreq_driver is `none`): "
            "cpu_governor, energy_performance_preference, pstate have no effect here" in err
        ), err
        assert (
            'hint: leave them out: preset.exclude = ["cpu_governor", '
            '"energy_performance_preference", "pstate"]' in err
        )
        assert "no cpuidle driver" in err and 'preset.exclude = ["max_cstate"]' in err
        assert "cpu.housekeeping_per_node: 1 housekeeping CPU (0) serves the whole host" in err
        assert "host.role: role inference with no GPU in the snapshot" in err
    # the hint's exclusions silence it
    spec.write_text(
        spec.read_text()
        + '[preset]\nexclude = ["cpu_governor", "energy_performance_preference", "pstate", '
        '"max_cstate"]\n'
    )
    r = run_hostc("check", spec)
    assert "no effect" not in r.stderr, r.stderr


def test_a_vm_with_no_driver_facts_still_warns_from_the_flag(tmp_path: Path) -> None:
    root = _vm(tmp_path, cpufreq=None, cpuidle=None)
    (root / "sys/devices/system/cpu/cpufreq").rmdir()  # an old capture: nothing known
    spec = _spec(tmp_path, root)
    snap = (tmp_path / "topology.toml").read_text()
    assert "cpufreq_driver" not in snap and "cpuidle_driver" not in snap
    r = run_hostc("check", spec)
    assert "a virtual machine (the hypervisor CPU flag)" in r.stderr, r.stderr
    assert "cpuidle" not in r.stderr  # not known: no word


def test_a_snapshot_without_the_facts_gets_no_driver_warning(tmp_path: Path) -> None:
    spec = _spec(tmp_path, _vm(tmp_path, cpufreq=None, cpuidle="none"))
    snap = tmp_path / "topology.toml"
    text = snap.read_text()
    for line in ("hypervisor = true\n", 'cpufreq_driver = "none"\n', 'cpuidle_driver = "none"\n'):
        text = text.replace(line, "")
    snap.write_text(text)
    r = run_hostc("check", spec)
    assert r.returncode == 0 and "no effect" not in r.stderr, r.stderr


def test_the_kernels_no_cluster_id_is_not_written_and_reads_as_none(tmp_path: Path) -> None:
    """x86 writes cluster_id 65535 (BAD_APICID) where there is no cluster (F15)."""
    host = smt_host(1, 2, 1, 1)
    host = replace(host, cpus=tuple(FCpu(c.id, c.core_id, cluster=65535) for c in host.cpus))
    root = build(host, tmp_path / "root")
    r = run_hostc("probe", "--root", root)
    assert r.returncode == 0, r.stderr
    assert "[clusters]" not in r.stdout and "65535" not in r.stdout
    # a snapshot written before this reads as no cluster
    old = r.stdout.replace("[dies]", '[clusters]\n65535 = "0-1"\n\n[dies]')
    (tmp_path / "topology.toml").write_text(old)
    spec = tmp_path / "node.toml"
    spec.write_text(SPEC.format(role="general"))
    assert run_hostc("check", spec).returncode == 0
    assert all(c.cluster is None for c in read_topology(tmp_path / "topology.toml").cpus)
