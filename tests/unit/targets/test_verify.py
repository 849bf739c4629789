"""hostc-verify: the boot-time verifier script, run with sh against host trees.

The script reads the host under $HOSTC_VERIFY_ROOT (unset on a real host); a
fake `systemctl show` answers from the same tree, so one tampered value must
turn exit 0 into exit 1 with a DRIFT line naming it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from audit_host import channel_queues, perfect_host, put, show

from hostc.artifact import Artifact
from hostc.audit.host import CAPTURED
from hostc.plan.model import Plan
from hostc.targets import Emitter, verify

from conftest import example_plan, need_tool

#: the ordinary service whose CPUs the verifier and audit read (review-outputs-4 R1)
SERVICE_PROBE = "systemd-journald.service"

EXAMPLES = ["dgx-h100-inference", "h100-kubeadm", "epyc-1s-training", "epyc-rhel9-inference"]

FAKE_SYSTEMCTL = """#!/bin/sh
# systemctl show -p PROP --value [UNIT]: answered from the tree's captured properties of
# UNIT, or of the manager
sed -n "s/^$3=//p" "$HOSTC_VERIFY_ROOT/{captured}/systemctl-show/${{5:-manager}}"
"""


def verify_files(plan: Plan) -> list[Artifact]:
    out = Emitter("systemd")
    verify.emit(plan, out)
    return out.artifacts


def script_of(plan: Plan, where: Path) -> Path:
    art = next(a for a in verify_files(plan) if a.path == verify.SCRIPT)
    where.write_bytes(art.data)
    where.chmod(0o755)
    return where


def run_verify(script: Path, root: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "systemctl"
    fake.write_text(FAKE_SYSTEMCTL.format(captured=CAPTURED))
    fake.chmod(0o755)
    env = {**os.environ, "HOSTC_VERIFY_ROOT": str(root), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(
        ["sh", str(script)], capture_output=True, text=True, env=env, timeout=60, check=False
    )


@pytest.mark.parametrize("name", EXAMPLES)
def test_verifier_passes_on_a_host_that_has_the_plan(name: str, tmp_path: Path) -> None:
    plan = example_plan(name)
    root = perfect_host(plan, tmp_path / "root")
    done = run_verify(script_of(plan, tmp_path / "hostc-verify"), root, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "DRIFT" not in done.stdout


def test_verifier_fails_and_names_a_changed_sysctl(tmp_path: Path) -> None:
    plan = example_plan("h100-kubeadm")
    root = perfect_host(plan, tmp_path / "root")
    put(root, "/proc/sys/vm/swappiness", "60\n")
    done = run_verify(script_of(plan, tmp_path / "hostc-verify"), root, tmp_path)
    assert done.returncode == 1
    assert "hostc-verify: DRIFT sysctl vm.swappiness: expected 1, found 60" in done.stdout


def test_verifier_fails_on_a_missing_kernel_argument(tmp_path: Path) -> None:
    plan = example_plan("h100-kubeadm")
    root = perfect_host(plan, tmp_path / "root")
    put(root, "/proc/cmdline", "ro quiet nohz_full=2-3\n")
    done = run_verify(script_of(plan, tmp_path / "hostc-verify"), root, tmp_path)
    assert done.returncode == 1
    assert "DRIFT kernel isolcpus: expected isolcpus=managed_irq," in done.stdout
    assert "DRIFT kernel rcu_nocbs: expected rcu_nocbs=2-31" in done.stdout


def test_verifier_leaves_the_managers_memlock_default_alone(tmp_path: Path) -> None:
    """memlock goes only to the workloads' drop-ins (targets/limits.py), so the manager
    keeps systemd's own default (8 MiB on systemd 252): found in a booted Debian 12 VM
    (tests/vm/test_vm_tuned.py), where the verifier failed on DefaultLimitMEMLOCK."""
    plan = example_plan("h100-kubeadm")
    assert plan.limit("memlock") is not None
    root = perfect_host(plan, tmp_path / "root")
    show(root, None, {"DefaultLimitMEMLOCK": "8388608"})
    done = run_verify(script_of(plan, tmp_path / "hostc-verify"), root, tmp_path)
    assert done.returncode == 0, done.stdout
    assert "memlock" not in done.stdout
    assert "ok services' nofile limit" in done.stdout


def test_verifier_skips_what_the_host_cannot_show(tmp_path: Path) -> None:
    """No cpufreq (a VM): logged as skipped, not drift."""
    plan = example_plan("h100-kubeadm")
    root = perfect_host(plan, tmp_path / "root")
    for f in (root / "sys/devices/system/cpu/cpufreq/policy0").iterdir():
        f.unlink()
    done = run_verify(script_of(plan, tmp_path / "hostc-verify"), root, tmp_path)
    assert done.returncode == 0, done.stdout
    assert "hostc-verify: skip cpu_governor: no CPU exposes scaling_governor" in done.stdout


@pytest.mark.parametrize("name", EXAMPLES)
def test_verifier_passes_shellcheck(name: str, tmp_path: Path) -> None:
    tool = need_tool("shellcheck")
    script = script_of(example_plan(name), tmp_path / "hostc-verify")
    done = subprocess.run(
        [tool, "-s", "sh", str(script)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout


def test_the_unit_runs_the_script_after_the_tuning_and_is_enabled() -> None:
    arts = {a.path: a for a in verify_files(example_plan("h100-kubeadm"))}
    unit = arts[verify.UNIT_PATH].text
    assert f"ExecStart={verify.SCRIPT}" in unit
    assert "After=hostc-tuning.service" in unit and "Type=oneshot" in unit
    assert "WantedBy=multi-user.target" in unit
    assert any(str(a) == f"enable {verify.UNIT}" for a in arts[verify.UNIT_PATH].activation)


def test_verifier_and_audit_accept_every_pci_word_the_kernel_applies(tmp_path: Path) -> None:
    """N7: the kernel runs pci_setup for every pci= word, so NVIDIA's pci=realloc=off after
    hostc's pci=disable_acs_redir is both in force, not drift; hugepage pairs likewise."""
    from hostc import api

    plan = example_plan("epyc-rhel9-inference")
    root = perfect_host(plan, tmp_path / "root")
    line = (root / "proc/cmdline").read_text().split()
    extra = ["hugepagesz=2M", "hugepages=512", "pci=realloc=off"]
    put(root, "/proc/cmdline", " ".join(line + extra) + "\n")
    script = script_of(plan, tmp_path / "hostc-verify")
    done = run_verify(script, root, tmp_path)
    assert done.returncode == 0, done.stdout
    assert "ok kernel pci = pci=disable_acs_redir=pci:0:0" in done.stdout
    findings = {f.setting: f for f in api.audit(plan, root)}
    assert findings["kernel pci"].found == "pci=disable_acs_redir=pci:0:0"
    assert not [f for f in findings.values() if f.status.name == "DIFFERS"]
    # the word itself gone: drift, showing the pci= words that are there
    kept = [w for w in line if not w.startswith("pci=")]
    put(root, "/proc/cmdline", " ".join([*kept, "pci=realloc=off"]) + "\n")
    done = run_verify(script, root, tmp_path)
    assert done.returncode == 1
    assert (
        "DRIFT kernel pci: expected pci=disable_acs_redir=pci:0:0, found pci=realloc=off"
        in done.stdout
    )


def _drift_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in done.stdout.splitlines() if "DRIFT" in ln]


def test_verifier_and_audit_read_back_pm_qos_channels_iommu_and_acs(tmp_path: Path) -> None:
    """K9: what the last round added is checked after boot, by hostc-verify and by audit
    alike: each isolated CPU's PM QoS latency, the NICs' channels, the IOMMU's
    pass-through and PCIe ACS redirect off on every device that has ACS (the post-boot
    check NVIDIA's nodewright PR #111 makes fatal)."""
    from audit_host import acs_config

    from hostc import api
    from hostc.audit.devices import acs_control

    plan = example_plan("h100-kubeadm")
    root = perfect_host(plan, tmp_path / "root")
    script = script_of(plan, tmp_path / "hostc-verify")
    done = run_verify(script, root, tmp_path)
    assert done.returncode == 0, done.stdout
    for line in (
        "ok CPU PM QoS resume latency = exit latency of cpuidle state 1",
        "ok mlx5_0 channels = at most 4 queues",
        "ok IOMMU mode = pass-through (identity)",
        "ok PCIe ACS redirect = off",
    ):
        assert line in done.stdout
    cpu = plan.cstates.cpus.min()  # type: ignore[union-attr]
    put(root, f"/sys/devices/system/cpu/cpu{cpu}/power/pm_qos_resume_latency_us", "0\n")
    nic = next(e.args[0] for e in verify_expects(plan, "nic-channels"))
    channel_queues(root, nic, 5, 5)  # a fifth channel: one more queue each way
    put(root, "/sys/kernel/iommu_groups/7/type", "DMA-FQ\n")
    bridge = root / "sys/bus/pci/devices/0000:00:02.0/config"
    bridge.parent.mkdir(parents=True)
    bridge.write_bytes(acs_config(0x001D))  # SrcValid ReqRedir+ CmpltRedir+ UpstreamFwd
    assert acs_control(acs_config(0x001D)) == 0x001D
    done = run_verify(script, root, tmp_path)
    assert done.returncode == 1
    assert _drift_lines(done) == [
        "hostc-verify: DRIFT CPU PM QoS resume latency: expected exit latency of cpuidle "
        f"state 1, found cpu{cpu}=0",
        "hostc-verify: DRIFT mlx5_0 channels: expected at most 4 queues, found 5 queues",
        "hostc-verify: DRIFT IOMMU mode: expected pass-through (identity), found translated "
        "in group 7",
        "hostc-verify: DRIFT PCIe ACS redirect: expected off, found on at 0000:00:02.0",
    ]
    audit = {f.setting: f.found for f in api.audit(plan, root) if f.status.name == "DIFFERS"}
    assert audit == {
        "CPU PM QoS resume latency": f"cpu{cpu}=0",
        "mlx5_0 channels": "5 queues",
        "IOMMU mode": "translated in group 7",
        "PCIe ACS redirect": "on at 0000:00:02.0",
    }


@pytest.mark.parametrize(
    ("rx", "tx", "drift"),
    [(8, 4, None), (9, 4, None), (4, 5, None), (10, 5, "5 queues"), (5, 0, "5 queues")],
)
def test_channels_count_queue_pairs_not_mlx5s_af_xdp_or_ptp_receive_queues(
    tmp_path: Path, rx: int, tx: int, drift: str | None
) -> None:
    """mlx5 before Linux 6.1 shows 2 receive queues per channel (its AF_XDP group) and
    one more with PTP receive on; a PTP transmit queue adds one transmit queue.  4
    channels are 4 however many queues of one side there are beyond them; a fifth
    channel (a queue each way), or receive queues alone above 4, is drift."""
    from hostc import api

    plan = example_plan("h100-kubeadm")
    root = perfect_host(plan, tmp_path / "root")
    nic = next(e.args[0] for e in verify_expects(plan, "nic-channels"))
    base = root / f"sys/bus/pci/devices/{nic}/net/eth{nic[5:7]}/queues"
    shutil.rmtree(base)
    channel_queues(root, nic, rx, tx)
    done = run_verify(script_of(plan, tmp_path / "hostc-verify"), root, tmp_path)
    seen = [ln for ln in done.stdout.splitlines() if "mlx5_0 channels" in ln]
    audit = {f.setting: f.found for f in api.audit(plan, root) if f.status.name == "DIFFERS"}
    if drift is None:
        assert seen == ["hostc-verify: ok mlx5_0 channels = at most 4 queues"], seen
        assert "mlx5_0 channels" not in audit
    else:
        assert seen == [
            f"hostc-verify: DRIFT mlx5_0 channels: expected at most 4 queues, found {drift}"
        ]
        assert audit["mlx5_0 channels"] == drift


def verify_expects(plan: Plan, kind: str) -> list[object]:
    from hostc.audit.observe import expectations

    return [e for e in expectations(plan) if e.kind == kind]


def test_verifier_and_audit_check_the_mce_poll_where_hostc_stops_it(tmp_path: Path) -> None:
    """K9: check_interval=0 (N4, tickless hosts only) is read back from every
    machinecheck CPU; a host that polls again is drift."""
    from hostc import api
    from hostc.spec import model as m

    from topogen import machine

    spec = m.HostSpec(
        host=m.Host(name="k", role=m.Role.INFERENCE),
        cpu=m.Cpu(housekeeping_per_node=1, isolate="rest"),
        workload=[m.Workload("vllm", ["GPU0"], busy_poll=True)],
    )
    plan, _ = api.compile_plan(spec, machine(gpus_per_node=1), spec_file="k.toml")
    root = perfect_host(plan, tmp_path / "root")
    script = script_of(plan, tmp_path / "hostc-verify")
    done = run_verify(script, root, tmp_path)
    assert done.returncode == 0, done.stdout
    put(root, "/sys/devices/system/machinecheck/machinecheck1/check_interval", "300\n")
    done = run_verify(script, root, tmp_path)
    assert _drift_lines(done) == [
        "hostc-verify: DRIFT mce check_interval (/sys/devices/system/machinecheck/"
        "machinecheck1): expected 0, found 300"
    ]
    audit = {f.setting: f.found for f in api.audit(plan, root) if f.status.name == "DIFFERS"}
    assert audit == {"mce check_interval": "0,300"}


def test_verifier_and_audit_read_an_ordinary_services_cpus_not_pid1_alone(
    tmp_path: Path,
) -> None:
    """Review-outputs-4 R1: on kernels before 6.2 PID 1 can be back on the housekeeping
    CPUs while every service started after the cpuset controller came on runs on all
    CPUs.  journald on every CPU, PID 1 on the housekeeping ones: both the boot
    verifier and `hostc audit` name journald's drift."""
    from hostc import api

    plan = example_plan("dgx-h100-inference")  # kernel 5.15
    root = perfect_host(plan, tmp_path / "root")
    show_file = root / CAPTURED / "systemctl-show" / SERVICE_PROBE
    assert show_file.is_file(), "audit expects nothing of journald"
    pid = next(
        line.split("=", 1)[1] for line in show_file.read_text().splitlines() if "MainPID=" in line
    )
    assert pid != "1"
    status = root / "proc" / pid / "status"
    assert f"Cpus_allowed_list:\t{plan.partition.housekeeping}\n" in status.read_text()
    script = script_of(plan, tmp_path / "hostc-verify")
    done = run_verify(script, root, tmp_path)
    assert done.returncode == 0, done.stdout
    assert f"ok services' CPUs ({SERVICE_PROBE}) = {plan.partition.housekeeping}" in done.stdout
    put(root, f"/proc/{pid}/status", f"Cpus_allowed_list:\t{plan.partition.online}\n")
    done = run_verify(script, root, tmp_path)
    assert done.returncode == 1
    assert f"DRIFT services' CPUs ({SERVICE_PROBE}): expected " in done.stdout
    assert "DRIFT PID 1 CPUs" not in done.stdout  # PID 1 alone would have passed
    findings = {f.setting: f for f in api.audit(plan, root)}
    journald = findings[f"services' CPUs ({SERVICE_PROBE})"]
    assert journald.status.name == "DIFFERS" and journald.found == str(plan.partition.online)
    assert findings["PID 1 CPUs"].status.name == "APPLIED"


@pytest.mark.parametrize("name", ["dgx-h100-rke2", "dgx-h100-inference", "h100-kubeadm"])
def test_the_verifier_starts_after_the_runtime_the_kubelet_and_the_workloads(name: str) -> None:
    """Review-outputs-4 G2: hostc-verify read PID 1's CPUs in a race with rke2-agent,
    whose AllowedCPUs= turns the cpuset controller on; it is ordered after every unit
    that starts containers and after the workloads."""
    plan = example_plan(name)
    unit = next(a for a in verify_files(plan) if a.path == verify.UNIT_PATH).text
    after = {u for line in unit.splitlines() if line.startswith("After=") for u in line[6:].split()}
    wanted = {"containerd.service", "crio.service", "kubelet.service", "rke2-agent.service"}
    wanted |= {w.unit for w in plan.workloads}
    if plan.kubelet is not None:
        wanted |= {plan.kubelet.unit}
        if plan.kubelet.runtime is not None:
            wanted.add(plan.kubelet.runtime.unit)
    assert wanted <= after, wanted - after
