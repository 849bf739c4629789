"""`cpu.offline` (issue 52): CPUs the spec takes offline are in no CPU set of the Plan,
are written offline first by the runtime owner, are audited back, and a set the kernel
would refuse or that would leave a node without CPUs is refused with its key path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from refused import refused_build
from test_runtime import SCRIPT, compile_, files, h100, spec, tuned_ini

from hostc.audit.observe import expectations
from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError
from hostc.plan.model import Plan
from hostc.spec import model as m

from conftest import ROOT, run_hostc

#: h100(): node 0 = 0-31,64-95 (GPU0/1), node 1 = 32-63,96-127 (GPU2/3); core N has N+64
OFF = CpuSet.parse("60-63,124-127")
KUBELET = m.Kubelet(
    flavor=m.Flavor.KUBEADM,
    version="1.33",
    kube_reserved=m.KubeletReserved(memory="1Gi"),
    system_reserved=m.KubeletReserved(memory="1Gi"),
)


def offline_plan(off: CpuSet = OFF, **kw: object) -> Plan:
    cpu = m.Cpu(housekeeping_per_node=2, isolate=m.IsolateMode.REST, offline=off)
    return compile_(spec(cpu=cpu, **kw))


def every_cpu_set(plan: Plan) -> dict[str, CpuSet]:
    """Each CPU set of the Plan hostc writes somewhere."""
    p, rt = plan.partition, plan.runtime
    sets = {
        "online": p.online,
        "housekeeping": p.housekeeping,
        "isolated": p.isolated,
        **{f"workload {w.name}": w.cpus for w in plan.workloads},
        **{f"node {n.id}": n.cpus for n in plan.nodes},
        **{f"cpumask {c.name}": c.cpus for c in rt.cpumasks},
    }
    if rt.irq is not None:
        sets |= {"irq banned": rt.irq.banned, "irq default": rt.irq.default}
        sets |= {f"irq {d.device}": d.cpus for d in rt.irq.devices}
    if plan.cstates is not None and plan.cstates.cpus is not None:
        sets["cstates"] = plan.cstates.cpus
    if plan.kubelet is not None:
        sets["kubelet reserved"] = plan.kubelet.cpu.reserved
    return sets


@pytest.mark.parametrize("irq", [m.IrqOwner.IRQBALANCE, m.IrqOwner.HOSTC])
def test_offline_cpus_are_in_no_cpu_set_of_the_plan(irq: m.IrqOwner) -> None:
    plan = offline_plan(irq=m.Irq(owner=irq))
    for name, cpus in every_cpu_set(plan).items():
        assert not cpus & OFF, name
    assert plan.partition.online == CpuSet.parse("0-59,64-123")
    kube = compile_(
        m.HostSpec(
            host=m.Host(name="k", role=m.Role.INFERENCE),
            cpu=m.Cpu(housekeeping_per_node=2, isolate=m.IsolateMode.REST, offline=OFF),
            kubelet=KUBELET,
        )
    )
    assert kube.kubelet is not None and not kube.kubelet.cpu.reserved & OFF
    for name, cpus in every_cpu_set(kube).items():
        assert not cpus & OFF, name


def test_systemd_writes_each_offline_cpu_first_and_tuned_under_sysfs() -> None:
    plan = offline_plan()
    script = files(plan, "systemd")[SCRIPT]
    writes = [f"/sys/devices/system/cpu/cpu{n}/online" for n in OFF]
    at = [script.index(f"put 0 {w}\n") for w in writes]
    assert at == sorted(at)
    assert "offline CPUs" in files(plan, "systemd")["/etc/systemd/system/hostc-tuning.service"]
    tplan = offline_plan(runtime=m.Runtime(m.RuntimeOwner.TUNED))
    sysfs = tuned_ini(tplan)["sysfs"]
    assert all(sysfs[w] == "0" for w in writes)


def test_audit_and_verify_read_each_offline_cpu_back() -> None:
    plan = offline_plan()
    found = {e.setting: e for e in expectations(plan)}
    for n in OFF:
        e = found[f"cpu{n} online"]
        assert (e.expected, e.args) == ("0", (f"/sys/devices/system/cpu/cpu{n}/online",))
    assert found["online CPUs"].expected == "0-59,64-123"
    verify = files(plan, "systemd")["/usr/local/sbin/hostc-verify"]
    assert "check_each 'cpu60 online' 0 /sys/devices/system/cpu/cpu60/online" in verify


def test_the_tuning_script_takes_them_offline_and_skips_their_inactive_policies(
    tmp_path: Path,
) -> None:
    """A second run finds them offline and each offline CPU's cpufreq policy refusing reads
    (EBUSY on an inactive policy; a FIFO the script cannot read stands for it): nothing is
    refused, nothing set."""
    plan = offline_plan(off=CpuSet.parse("62-63,126-127"))
    cpu = tmp_path / "sys/devices/system/cpu"
    for n in (62, 63, 126, 127):
        (cpu / f"cpu{n}").mkdir(parents=True)
        (cpu / f"cpu{n}/online").write_text("1\n")
    (cpu / "cpufreq/policy0").mkdir(parents=True)
    (cpu / "cpufreq/policy0/scaling_governor").write_text("performance\n")
    text = files(plan, "systemd")[SCRIPT].replace("/sys/", f"{tmp_path}/sys/")
    text = text.replace("/proc/", f"{tmp_path}/proc/")
    script = tmp_path / "run.sh"
    script.write_text(text)
    first = subprocess.run(["sh", str(script)], capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    assert all((cpu / f"cpu{n}/online").read_text() == "0\n" for n in (62, 63, 126, 127))
    inactive = cpu / "cpufreq/policy62/scaling_governor"
    inactive.parent.mkdir()
    inactive.mkdir()  # exists, and cat fails on it: what an inactive policy's file does
    second = subprocess.run(["sh", str(script)], capture_output=True, text=True, check=False)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "refused" not in second.stdout.replace("0 refused", "")
    assert f"skip {inactive}: an inactive cpufreq policy" in second.stdout
    assert "hostc-tuning: set" not in second.stdout


# --- refused, with the key path, exit 2 and nothing written ---------------------------


@pytest.mark.parametrize(
    ("offline", "message"),
    [
        ("0,64", "takes the boot CPU 0 offline"),
        ("60", "splits SMT siblings: 60 without 124"),
        ("32-63,96-127", "leaves NUMA node(s) 1 without an online CPU"),
        ("200-201", "CPU(s) 200-201 are not in the topology"),
    ],
)
def test_an_offline_set_the_kernel_refuses_or_that_empties_a_node_is_an_error(
    offline: str, message: str
) -> None:
    with pytest.raises(HostcError) as e:
        offline_plan(off=CpuSet.parse(offline))
    (d,) = [d for d in e.value.diagnostics if d.severity == "error"]
    assert str(d.path) == "cpu.offline" and message in d.message


def test_a_housekeeping_list_naming_an_offline_cpu_says_cpu_offline_took_it() -> None:
    cpu = m.Cpu(
        housekeeping=CpuSet.parse("0-1,32,60,64-65,96,124"),
        isolate=m.IsolateMode.REST,
        offline=CpuSet.parse("60,124"),
    )
    with pytest.raises(HostcError) as e:
        compile_(spec(cpu=cpu))
    msgs = [(str(d.path), d.message) for d in e.value.diagnostics if d.severity == "error"]
    assert msgs == [("cpu.housekeeping", msgs[0][1])]
    assert "taken offline by cpu.offline" in msgs[0][1]


def test_cli_refuses_it_with_file_and_key_path_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    _, err = refused_build(
        tmp_path, "h100-4gpu-inference", 'offline = "56-63,120-127"', 'offline = "0-1,64-65"'
    )
    assert "cpu.offline" in err and "boot CPU 0" in err


def test_hostc_explain_cpu_offline() -> None:
    r = run_hostc("explain", ROOT / "examples/h100-4gpu-inference/node.toml", "cpu.offline")
    assert r.returncode == 0, r.stderr
    assert "/sys/devices/system/cpu/cpu56/online = 0" in r.stdout
    assert "put 0 /sys/devices/system/cpu/cpu56/online" in r.stdout


def test_h100_topology_cores_pair_n_with_n_plus_64() -> None:
    """The fixture the cases above rely on."""
    topo = h100()
    assert topo.siblings(60) == CpuSet.parse("60,124")
    assert topo.node_cpus(1) == CpuSet.parse("32-63,96-127")
