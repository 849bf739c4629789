"""`hostc audit`: each status on a host tree where one thing was changed, and the CLI's codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from audit_host import BASE_CMDLINE, perfect_host, put, show

from hostc import api
from hostc.audit.findings import Finding, Status, drift
from hostc.audit.observe import TABLE, Look, expectations
from hostc.audit.observers import OBSERVERS
from hostc.plan.model import Plan

import sysfs_fixtures
from conftest import ROOT, run_hostc

DGX = ROOT / "examples" / "dgx-h100-inference" / "node.toml"
KUBEADM = ROOT / "examples" / "h100-kubeadm" / "node.toml"


def plan_of(spec: Path) -> Plan:
    return api.compile_file(spec)[0]


def by_setting(findings: list[Finding]) -> dict[str, Finding]:
    return {f.setting: f for f in findings}


@pytest.fixture(params=[DGX, KUBEADM], ids=["dgx", "kubeadm"])
def host(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Plan, Path]:
    plan = plan_of(request.param)
    return plan, perfect_host(plan, tmp_path / "root")


def test_every_expectation_kind_has_an_observer() -> None:
    kinds = {e.kind for spec in (DGX, KUBEADM) for e in expectations(plan_of(spec))}
    assert kinds <= set(OBSERVERS)
    assert len({name for name, _ in TABLE}) == len(TABLE)


def test_every_look_has_exactly_one_observer_and_expectations_hold_looks() -> None:
    """Expect.kind is the closed set Look (it was a string that OBSERVERS was keyed by,
    so a misspelt kind failed only on a host, as a KeyError)."""
    assert set(OBSERVERS) == set(Look)
    assert all(isinstance(e.kind, Look) for e in expectations(plan_of(DGX)))


def test_a_host_with_the_plan_applied_has_no_drift(host: tuple[Plan, Path]) -> None:
    plan, root = host
    findings = api.audit(plan, root)
    assert not drift(findings), [f for f in findings if f.status is not Status.APPLIED]
    assert all(f.status is Status.APPLIED for f in findings)


def test_a_changed_sysctl_differs_and_names_the_file_that_wins(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    put(root, "/proc/sys/vm/swappiness", "60\n")
    put(root, "/usr/lib/sysctl.d/99-vendor.conf", "vm/swappiness = 60\n")
    f = by_setting(api.audit(plan, root))["sysctl vm.swappiness"]
    assert (f.status, f.expected, f.found) == (Status.DIFFERS, "1", "60")
    assert f.note == "/usr/lib/sysctl.d/99-vendor.conf sets 60"


def test_a_same_named_file_in_etc_hides_the_vendor_one(tmp_path: Path) -> None:
    """sysctl.d(5): /etc/sysctl.d/x.conf masks /usr/lib/sysctl.d/x.conf of the same name."""
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    put(root, "/usr/lib/sysctl.d/99-vendor.conf", "vm.swappiness = 60\n")
    put(root, "/etc/sysctl.d/99-vendor.conf", "# emptied by the admin\n")
    f = by_setting(api.audit(plan, root))["sysctl vm.swappiness"]
    assert f.note == "/etc/sysctl.d/90-hostc.conf sets 1"


def test_managed_irq_isolation_is_read_from_the_cmdline_not_sys_isolated(tmp_path: Path) -> None:
    """isolcpus=managed_irq leaves /sys/devices/system/cpu/isolated empty: not drift."""
    plan = plan_of(KUBEADM)
    root = perfect_host(plan, tmp_path)
    put(root, "/sys/devices/system/cpu/isolated", "\n")
    f = by_setting(api.audit(plan, root))["kernel isolcpus"]
    assert f.status is Status.APPLIED


def test_an_argument_in_the_grub_drop_in_but_not_in_proc_cmdline_is_pending(tmp_path: Path) -> None:
    plan = plan_of(KUBEADM)
    root = perfect_host(plan, tmp_path)
    put(root, "/proc/cmdline", BASE_CMDLINE + "\n")
    dropin = api.emit(plan, ["grub"])[0]
    put(root, dropin.path, dropin.data.decode())
    findings = by_setting(api.audit(plan, root))
    f = findings["kernel rcu_nocbs"]
    assert f.status is Status.PENDING
    assert f.found == "(absent)"
    assert f.note.startswith("/etc/default/grub.d/90-hostc.cfg has it")
    assert drift(list(findings.values()))


def test_an_interrupt_served_on_an_isolated_cpu_is_drift(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    isolated = plan.partition.isolated
    put(root, "/proc/irq/24/effective_affinity_list", f"{isolated.min()}\n")
    f = by_setting(api.audit(plan, root))["IRQs on isolated CPUs"]
    assert (f.status, f.found) == (Status.DIFFERS, "IRQ 24")


def test_a_managed_irq_confined_to_isolated_cpus_is_not_drift(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    cpu = plan.partition.isolated.min()
    put(root, "/proc/irq/40/smp_affinity_list", f"{cpu}\n")
    put(root, "/proc/irq/40/effective_affinity_list", f"{cpu}\n")
    assert by_setting(api.audit(plan, root))["IRQs on isolated CPUs"].status is Status.APPLIED


def test_a_workload_is_judged_by_its_running_process(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    unit = plan.workloads[0].unit
    show(root, unit, {"MainPID": "1000"})
    put(root, "/proc/1000/status", "Cpus_allowed_list:\t0-223\nMems_allowed_list:\t0-1\n")
    put(root, "/proc/1000/numa_maps", "00400000 default file=/bin/sh\n7f00 bind:0 anon=1\n")
    found = by_setting(api.audit(plan, root))
    assert found[f"{unit} CPUs"].status is Status.DIFFERS
    policy = found[f"{unit} memory policy"]
    assert (policy.status, policy.found) == (Status.DIFFERS, "bind:0,default")
    show(root, unit, {"MainPID": "0", "ActiveState": "inactive"})
    f = by_setting(api.audit(plan, root))[f"{unit} CPUs"]
    assert (f.status, f.note) == (Status.NOT_OBSERVABLE, f"{unit} is not running")


def test_what_a_vm_cannot_show_is_not_observable_and_not_drift(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    for d in (root / "sys/bus/pci/devices", root / "sys/devices/system/cpu/cpufreq"):
        for p in sorted(d.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
    findings = api.audit(plan, root)
    gone = [f for f in findings if f.status is Status.NOT_OBSERVABLE]
    assert {f.setting for f in gone} >= {"cpu_governor"}
    assert all(f.note for f in gone)
    assert not drift(findings)


def test_a_loaded_blacklisted_module_differs(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path)
    put(root, "/proc/modules", "bluetooth 1 0 - Live 0x0\n")
    assert by_setting(api.audit(plan, root))["module bluetooth"].status is Status.DIFFERS


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = perfect_host(plan, tmp_path / "root")
    ok = run_hostc("audit", DGX, "--root", root, "--json")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["ok"] is True and doc["findings"][0]["status"] == "applied"
    put(root, "/proc/sys/vm/swappiness", "60\n")
    bad = run_hostc("audit", DGX, "--root", root)
    assert bad.returncode == 1
    assert any(
        line.startswith("differs") and "vm.swappiness" in line for line in bad.stdout.splitlines()
    )


def test_cli_bad_input_exits_2_without_a_traceback(tmp_path: Path) -> None:
    missing = run_hostc("audit", DGX, "--capture", tmp_path / "nope.tar.gz")
    assert missing.returncode == 2 and "nope.tar.gz" in missing.stderr
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive")
    bad = run_hostc("audit", DGX, "--capture", junk)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    spec = tmp_path / "node.toml"
    spec.write_text("version = 1\n[host\n")
    assert run_hostc("audit", spec).returncode == 2
    assert run_hostc("probe", "--spec", DGX).returncode == 2  # --spec only with --capture
    both = run_hostc("audit", DGX, "--root", tmp_path, "--capture", junk)
    assert both.returncode == 2 and "not both" in both.stderr


def test_a_capture_with_the_spec_audits_like_the_tree_it_came_from(tmp_path: Path) -> None:
    plan = plan_of(DGX)
    root = sysfs_fixtures.build(sysfs_fixtures.two_socket_gpu_host(), tmp_path / "root")
    perfect_host(plan, root)
    put(root, "/proc/sys/vm/swappiness", "60\n")
    archive = tmp_path / "host.tar.gz"
    made = run_hostc("probe", "--root", root, "--capture", archive, "--spec", DGX)
    assert made.returncode == 0, made.stderr
    assert api.audit(plan, archive) == api.audit(plan, root)


def test_this_machine_gets_a_report_and_a_drift_code() -> None:
    """Not a tuned GPU host: a report, exit 1 (drift), never a traceback."""
    done = run_hostc("audit", KUBEADM)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "sysctl vm.max_map_count" in done.stdout


def test_another_kernel_minor_or_machine_differs_but_a_patch_release_does_not(
    tmp_path: Path,
) -> None:
    """The Plan's facts depend on the kernel's major.minor and on the CPUs it was made for."""
    plan = plan_of(KUBEADM)
    root = perfect_host(plan, tmp_path)
    put(root, "/proc/sys/kernel/osrelease", "6.8.0-99-generic\n")
    assert by_setting(api.audit(plan, root))["kernel release"].status is Status.APPLIED
    put(root, "/proc/sys/kernel/osrelease", "6.5.0-45-generic\n")
    put(root, "/sys/devices/system/cpu/online", "0-63\n")
    found = by_setting(api.audit(plan, root))
    assert found["kernel release"].status is Status.DIFFERS
    assert (found["online CPUs"].status, found["online CPUs"].found) == (Status.DIFFERS, "0-63")


def test_audit_finds_a_shared_pool_container_confined_by_the_runtimes_affinity(
    tmp_path: Path,
) -> None:
    """N1: runc < 1.2.7/1.3.1 on kernels >= 6.2 gives a BestEffort container the runtime's
    own affinity (the housekeeping CPUs) instead of its pod's cpuset (containerd #11345);
    the kernel shows no user_cpus_ptr, so audit compares the container with its cgroup."""
    plan = plan_of(KUBEADM)
    root = perfect_host(plan, tmp_path)
    f = by_setting(api.audit(plan, root))["shared-pool containers' CPUs"]
    assert f.status is Status.APPLIED
    hk = str(plan.partition.housekeeping)
    put(root, "/proc/4242/status", f"Cpus_allowed_list:\t{hk}\n")
    f = by_setting(api.audit(plan, root))["shared-pool containers' CPUs"]
    assert f.status is Status.DIFFERS
    assert f.found == f"cri-containerd-1.scope runs on {hk} of its {plan.partition.online}"
    runtime = by_setting(api.audit(plan, root))["containerd.service cpuset"]
    assert runtime.status is Status.APPLIED and runtime.expected == hk
