"""Runtime tuning that holds on a real node.

Each test protects one behaviour: TuneD leaves pinned servers where they are and gets
only the options its version reads; C-states are limited per CPU at runtime on the
workload CPUs; NIC queues follow the housekeeping CPUs; MCE polling stays off isolated
CPUs; hostc-tuning tells managed IRQs from refusals, compares masks by value and fails
when a write is refused; irqbalance never runs with a ban list it did not get from
hostc; on RHEL TuneD stops before hostc-tuning owns the runtime settings.  The script
runs against fake /sys and /proc trees (and a fake ethtool), TuneD profiles through
TuneD's own loader.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import attrs
import pytest
from test_runtime import SCRIPT, TUNED, compile_, files, h100, spec, tuned_ini

from hostc import api
from hostc.cpuset import CpuSet
from hostc.knowledge import distro as osfacts
from hostc.knowledge.arch import FIRST_HALT_STATE, Arch
from hostc.lower import runtime as lower_runtime
from hostc.lower.assemble import tuned_facts
from hostc.plan.kernelargs import cmdline
from hostc.plan.model import Distro, IrqOwner, Plan, RuntimeOwner
from hostc.resolve import requests
from hostc.settings import table as t
from hostc.spec import model as m
from hostc.topology.model import OsRelease

from conftest import ROOT, example_plan, need_tool

DEBIAN12 = OsRelease("debian", "12", [])  # TuneD 2.20.0
TUNED_OWNED = {"runtime": m.Runtime(m.RuntimeOwner.TUNED)}
HOSTC_IRQ = {"irq": m.Irq(IrqOwner.HOSTC)}


def example(name: str) -> Plan:
    return api.compile_file(ROOT / f"examples/{name}/node.toml")[0]


def run_script(
    plan: Plan, root: Path, bin_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """hostc-tuning with /sys and /proc moved under `root`, and `bin_dir` first on PATH."""
    text = files(plan, "systemd")[SCRIPT]
    text = text.replace("/sys/", f"{root}/sys/").replace("/proc/", f"{root}/proc/")
    script = root / "hostc-tuning"
    script.write_text(text)
    path = f"{bin_dir}:/usr/bin:/bin" if bin_dir else "/usr/bin:/bin"
    return subprocess.run(
        ["sh", str(script)], capture_output=True, text=True, env={"PATH": path}, check=False
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# --- TuneD: the scheduler leaves pinned servers alone --------------------------------


def test_tuned_scheduler_blacklists_each_workload_cgroup() -> None:
    plan = compile_(spec(**TUNED_OWNED), h100(os=DEBIAN12))
    sched = tuned_ini(plan)["scheduler"]
    assert sched["isolated_cores"] == str(plan.partition.isolated)
    assert sched["runtime"] == "0"
    (pattern,) = sched["cgroup_ps_blacklist"].split(";")
    assert re.search(pattern, "0::/system.slice/vllm.service")
    assert re.search(pattern, "0::/system.slice/vllm.service/payload")
    assert not re.search(pattern, "0::/system.slice/vllm2.service")
    assert not re.search(pattern, "0::/system.slice/xvllm.service")


def test_tuned_leaves_the_container_runtime_alone_on_kubelet_nodes() -> None:
    """N1: TuneD's [scheduler] re-pins every process outside its blacklist, the runtime and
    its shims included, which undoes the runtime drop-in's all-CPUs affinity on kernels
    >= 6.2 (containerd #11345 returns).  Kubelet nodes get no [scheduler] at all."""
    plan = example("dgx-h100-rke2")
    plan = attrs.evolve(
        plan,
        host=attrs.evolve(
            plan.host, os=Distro("debian", "12"), tuned=tuned_facts("debian-12")
        ),  # TuneD 2.20: has the blacklist
        runtime=attrs.evolve(plan.runtime, owner=RuntimeOwner.TUNED),
    )
    text = {a.path: a.text for a in api.emit(plan, ["tuned"])}[TUNED]
    assert "\n[scheduler]\n" not in text and "isolated_cores=" not in text
    assert "[scheduler] isolated_cores left out on this kubelet node" in text
    assert "containerd #11345" in text
    assert f"cpu_affinity={plan.partition.housekeeping}" in text
    pinned = compile_(spec(**TUNED_OWNED), h100(os=DEBIAN12))  # no kubelet: kept
    assert tuned_ini(pinned)["scheduler"]["isolated_cores"] == str(pinned.partition.isolated)


def test_tuned_without_cgroup_blacklist_gets_no_isolated_cores() -> None:
    """A TuneD hostc does not know (ubuntu-22.04 here) may predate cgroup_ps_blacklist."""
    ini = tuned_ini(compile_(spec(**TUNED_OWNED)))
    assert "scheduler" not in ini
    assert CpuSet.parse(ini["systemd"]["cpu_affinity"]) == compile_(spec()).partition.housekeeping


def test_tuned_loader_keeps_the_blacklist_verbatim(tmp_path: Path) -> None:
    """TuneD's own loader and variable expansion leave the regexes as written."""
    if not Path("/usr/lib/python3/dist-packages/tuned").is_dir():
        need_tool("tuned-adm")
    plan = example("dgx-h100-inference")
    plan = attrs.evolve(
        plan,
        host=attrs.evolve(plan.host, os=Distro("debian", "12"), tuned=tuned_facts("debian-12")),
        runtime=attrs.evolve(plan.runtime, owner=RuntimeOwner.TUNED),
    )
    text = {a.path: a.text for a in api.emit(plan, ["tuned"])}[TUNED]
    d = tmp_path / "hostc"
    d.mkdir()
    (d / "tuned.conf").write_text(text)
    code = (
        "import sys, json\n"
        "import tuned.profiles as P\n"
        "from tuned.utils.global_config import GlobalConfig\n"
        "from tuned.profiles.variables import Variables\n"
        "v = Variables()\n"
        "p = P.Loader(P.Locator(['/usr/lib/tuned', sys.argv[1]]), P.Factory(), P.Merger(),"
        " GlobalConfig(), v).load(['hostc'])\n"
        "print(json.dumps({u: {k: v.expand(x) for k, x in unit.options.items()}"
        " for u, unit in p.units.items()}))\n"
    )
    r = subprocess.run(
        ["/usr/bin/python3", "-c", code, str(tmp_path)], capture_output=True, check=False
    )
    assert r.returncode == 0, r.stderr.decode()
    units = json.loads(r.stdout)
    want = next(x for x in text.splitlines() if x.startswith("cgroup_ps_blacklist="))
    assert units["scheduler"]["cgroup_ps_blacklist"] == want.partition("=")[2]
    assert units["scheduler"]["runtime"] == "0"
    nets = [u for u in units if u.startswith("net_")]
    assert nets and all(units[u]["channels"].startswith("combined ") for u in nets)
    assert units["cpu"]["energy_performance_preference"] == "performance"


# --- TuneD: options by the host's TuneD version ---------------------------------------


@pytest.mark.parametrize(
    ("os", "version"),
    [
        ("debian-12", (2, 20, 0)),
        ("debian-13", (2, 25, 1)),
        ("ubuntu-24.04", (2, 21, 0)),
        ("ubuntu-25.04", (2, 24, 0)),
        ("fedora-39", (2, 21, 0)),
        ("fedora-41", (2, 24, 0)),
        ("ubuntu-22.04", None),
        ("rhel-9.4", (2, 16, 0)),  # the oldest RHEL 9 minor's: a floor
        ("rhel-8.10", None),
        (None, None),
    ],
)
def test_tuned_version_per_release(os: str | None, version: tuple[int, int, int] | None) -> None:
    assert osfacts.tuned_version(os) == version


def test_tuned_option_versions_hold_for_the_installed_tuned() -> None:
    """Every option hostc gates at or below the installed TuneD is one that TuneD reads."""
    base = Path("/usr/lib/python3/dist-packages/tuned")
    if not base.is_dir():
        need_tool("tuned-adm")
    ver_text = (base / "version.py").read_text()
    installed = tuple(
        int(re.search(rf"TUNED_VERSION_{k} = (\d+)", ver_text).group(1))  # type: ignore[union-attr]
        for k in ("MAJOR", "MINOR", "PATCH")
    )
    sources = {
        "cpu.energy_performance_preference": ("plugin_cpu.py", '"energy_performance_preference"'),
        "cpu.force_latency.cstate.id_no_zero": ("plugin_cpu.py", "cstate.id_no_zero:"),
        "scheduler.cgroup_ps_blacklist": ("plugin_scheduler.py", '"cgroup_ps_blacklist"'),
        "scheduler.runtime": ("plugin_scheduler.py", '"runtime"'),
        "net.channels": ("plugin_net.py", "_get_config_options_channels"),
        "irqbalance.banned_cpus": ("plugin_irqbalance.py", '"banned_cpus"'),
        "systemd.cpu_affinity": ("plugin_systemd.py", '"cpu_affinity"'),
        "vm.transparent_hugepage.defrag": ("plugin_vm.py", '"transparent_hugepage.defrag"'),
        "cpu.energy_perf_bias": ("plugin_cpu.py", '"energy_perf_bias"'),
        "cpu.min_perf_pct": ("plugin_cpu.py", '"min_perf_pct"'),
        "bootloader.cmdline_suffix": ("plugin_bootloader.py", '"cmdline"'),
        "net.dynamic": ("plugin_net.py", '"dynamic"'),
        "unit.devices_udev_regex": ("../profiles/unit.py", '"devices_udev_regex"'),
        "unit.type": ("../profiles/unit.py", '"type"'),
    }
    assert set(sources) == set(osfacts.TUNED_OPTION_SINCE)
    for option, since in osfacts.TUNED_OPTION_SINCE.items():
        plugin, needle = sources[option]
        if since <= installed:
            assert needle in (base / "plugins" / plugin).read_text(), option
    assert osfacts.TUNED_OPTION_SINCE["cpu.energy_performance_preference"] == (2, 20, 0)


def test_tuned_epp_option_only_where_the_tuned_reads_it() -> None:
    known = tuned_ini(compile_(spec(**TUNED_OWNED), h100(os=DEBIAN12)))
    assert known["cpu"]["energy_performance_preference"] == "performance"
    assert not any("energy_performance_preference" in k for k in known["sysfs"])
    unknown = tuned_ini(compile_(spec(**TUNED_OWNED)))  # ubuntu-22.04
    assert "energy_performance_preference" not in unknown["cpu"]
    path = "/sys/devices/system/cpu/cpufreq/policy*/energy_performance_preference"
    assert unknown["sysfs"][path] == "performance"


def test_an_unknown_tuned_gets_the_force_latency_form_every_release_reads() -> None:
    """`cstate.id_no_zero` needs TuneD 2.18 (fc0dbea); a release hostc does not know may
    be older, and an older TuneD cannot parse it, so it gets `cstate.id`, which every
    release reads (review-outputs-4 G3: ubuntu-22.04 got the 2.18 form)."""
    unknown = files(compile_(spec(**TUNED_OWNED)), "tuned")[TUNED]  # ubuntu-22.04
    assert "\nforce_latency=cstate.id:1|3\n" in unknown
    assert "cstate.id_no_zero: that form needs TuneD 2.18.0 (hostc does not know" in unknown
    assert tuned_facts("ubuntu-22.04").cstate_id_no_zero is False
    assert tuned_facts(None).cstate_id_no_zero is False
    known = tuned_ini(compile_(spec(**TUNED_OWNED), h100(os=DEBIAN12)))  # 2.20.0
    assert known["cpu"]["force_latency"] == "cstate.id_no_zero:1|3"
    assert tuned_facts("debian-12").cstate_id_no_zero is True


def test_tuned_nic_channels_only_where_the_tuned_reads_them() -> None:
    rest = {"cpu": m.Cpu(housekeeping_per_node=2, isolate="rest"), **TUNED_OWNED}
    known = tuned_ini(compile_(spec(**rest), h100(os=DEBIAN12)))
    nets = [u for u in known.sections() if known[u].get("type") == "net"]
    assert nets and {known[u]["channels"] for u in nets} == {"combined 4"}  # 2 cores × 2
    unknown = tuned_ini(compile_(spec(**rest)))  # ubuntu-22.04: unknown TuneD
    assert not [u for u in unknown.sections() if u.startswith("net")]
    # one count per node differs (4 and 64): each NIC's own section has its node's count
    # (issue 52 F1; one [net] for every device used to leave them all out)
    plan = compile_(spec(**TUNED_OWNED), h100(os=DEBIAN12))
    per = tuned_ini(plan)
    assert {per[f"net_{c.device}"]["channels"] for c in plan.runtime.nic_channels} == {
        f"combined {c.count}" for c in plan.runtime.nic_channels
    }


# --- C-states: per CPU, at runtime, on the workload CPUs ----------------------------------


def test_cstates_limited_per_cpu_at_runtime_on_the_workload_and_device_irq_cpus() -> None:
    """K8: the isolated CPUs, and the housekeeping CPUs of the GPU/NIC nodes, which take
    those devices' interrupts (request ingress, completions): not left in deep C-states."""
    plan = compile_(spec())
    part = plan.partition
    assert plan.cstates is not None and plan.cstates.cpus == part.online  # GPUs on each node
    assert "max_cstate" not in cmdline(plan)
    script = files(plan, "systemd")[SCRIPT]
    assert f"for cpu in {part.online.expanded(' ')}; do" in script
    assert "housekeeping CPUs of the GPU and NIC nodes" in plan.cstates.reason.why
    assert "power/pm_qos_resume_latency_us" in script


def test_pm_qos_state_is_the_first_halt_state_of_the_arch() -> None:
    """K8: cpuidle state 1 is C1 on x86 (state 0 polls); on arm64 state 0 is WFI and
    state 1 already a power-down state, so C1's limit reads state 0 there."""
    x86 = compile_(spec())
    assert x86.cstates is not None and x86.cstates.state == 1
    assert "cpuidle/state1/latency" in files(x86, "systemd")[SCRIPT]
    assert FIRST_HALT_STATE[Arch.X86_64] == 1 and FIRST_HALT_STATE[Arch.AARCH64] == 0
    arm = compile_(spec(), h100(arch="aarch64", cpu_vendor=None))
    assert arm.cstates is None  # the inference preset limits C-states on x86 only


def test_cstates_without_isolation_go_to_the_workloads_cpus() -> None:
    plan = compile_(spec(cpu=m.Cpu()))
    assert plan.cstates is not None and not plan.partition.isolated
    assert plan.cstates.cpus == plan.workloads[0].cpus


def test_boot_cstate_caps_by_explicit_choice() -> None:
    s = spec(kernel=m.Kernel(cstates_at=m.CStatesAt.BOOT))
    plan = compile_(s)
    assert plan.cstates is not None and plan.cstates.cpus is None
    assert "intel_idle.max_cstate=1 processor.max_cstate=1" in cmdline(plan)
    assert "pm_qos_resume_latency_us" not in files(plan, "systemd")[SCRIPT]


def test_cstate_script_writes_each_cpu_s_state_latency(tmp_path: Path) -> None:
    plan = compile_(spec())
    cpus = list(plan.cstates.cpus)  # type: ignore[union-attr]
    base = tmp_path / "sys/devices/system/cpu"
    _write(base / f"cpu{cpus[0]}/cpuidle/state1/latency", "2\n")
    _write(base / f"cpu{cpus[0]}/power/pm_qos_resume_latency_us", "0\n")
    _write(base / f"cpu{cpus[1]}/cpuidle/state1/latency", "0\n")  # 0 would mean "none"
    _write(base / f"cpu{cpus[1]}/power/pm_qos_resume_latency_us", "0\n")
    r = run_script(plan, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (base / f"cpu{cpus[0]}/power/pm_qos_resume_latency_us").read_text() == "2\n"
    assert (base / f"cpu{cpus[1]}/power/pm_qos_resume_latency_us").read_text() == "1\n"
    skipped = len(cpus) - 2
    assert f"C-states: PM QoS latency set on 2 CPUs; {skipped} CPUs without cpuidle" in r.stdout
    assert "pm_qos_resume_latency_us" not in r.stdout  # one summary line, not one per CPU


# --- NIC channels ---------------------------------------------------------------------

FAKE_ETHTOOL = """#!/bin/sh
state="{state}"
if [ "$1" = -l ]; then
    printf 'Channel parameters for %s:\\nPre-set maximums:\\nRX:\\t\\tn/a\\nCombined:\\t63\\n' "$2"
    printf 'Current hardware settings:\\nRX:\\t\\tn/a\\nCombined:\\t%s\\n' "$(cat "$state/$2")"
    exit 0
fi
[ "$1" = -L ] && [ "$3" = combined ] && printf '%s\\n' "$4" >"$state/$2"
"""


def test_nic_channels_shrink_to_the_node_s_housekeeping_cpus(tmp_path: Path) -> None:
    plan = compile_(spec())
    # node 0: 2 isolated-free cores × 2 threads; node 1 has no isolated CPU at all
    assert {(c.device, c.count) for c in plan.runtime.nic_channels} == {
        ("mlx5_0", 4),
        ("mlx5_1", 64),
    }
    nic = plan.runtime.nic_channels[0]
    state = tmp_path / "state"
    state.mkdir()
    (state / "ens1").write_text("63\n")
    _write(tmp_path / f"sys/bus/pci/devices/{nic.pci}/net/ens1/mtu", "1500\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ethtool").write_text(FAKE_ETHTOOL.format(state=state))
    (bin_dir / "ethtool").chmod(0o755)
    first = run_script(plan, tmp_path, bin_dir)
    assert first.returncode == 0, first.stdout + first.stderr
    assert (state / "ens1").read_text() == f"{nic.count}\n"
    assert f"set channels of ens1: combined {nic.count} (was 63)" in first.stdout
    second = run_script(plan, tmp_path, bin_dir)
    assert "channels of ens1" not in second.stdout


def test_nic_channels_skipped_without_ethtool(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    text = files(compile_(spec()), "systemd")[SCRIPT]
    text = text.replace("/sys/", f"{tmp_path}/sys/").replace("/proc/", f"{tmp_path}/proc/")
    (tmp_path / "s").write_text(text.replace("command -v ethtool", "command -v ethtool-absent"))
    r = subprocess.run(["sh", str(tmp_path / "s")], capture_output=True, text=True, check=False)
    assert r.returncode == 0 and "skip NIC channels: no ethtool" in r.stdout


# --- MCE polling ----------------------------------------------------------------------


MCE = "/sys/devices/system/machinecheck/machinecheck*/"
POLLER = [m.Workload("vllm", ["GPU0", "GPU1"], busy_poll=True)]


def test_mce_poll_stopped_only_where_the_tick_is_stopped_and_cmci_kept() -> None:
    """N4: without nohz_full the HZ tick runs on the isolated CPUs anyway, so the 5-minute
    poll costs nothing; with it, check_interval=0 stops the poll and keeps CMCI.  ignore_ce
    (CMCI and corrected-error reporting off node-wide) is never written."""
    plain = compile_(spec())
    assert plain.isolation_by("nohz_full") is None and plain.runtime.sysfs == ()
    assert "machinecheck" not in files(plain, "systemd")[SCRIPT]
    assert "machinecheck" not in files(compile_(spec(**TUNED_OWNED)), "tuned")[TUNED]
    plan = compile_(spec(workload=POLLER))
    (w,) = plan.runtime.sysfs
    assert (w.glob, w.value) == (MCE + "check_interval", "0")
    assert str(w.reason.source) == "workload[0].busy_poll"
    assert "corrected errors are no longer polled" in w.reason.why
    assert "machinecheck*/check_interval; do" in files(plan, "systemd")[SCRIPT]
    ini = tuned_ini(compile_(spec(workload=POLLER, **TUNED_OWNED)))
    assert ini["sysfs"][MCE + "check_interval"] == "0"
    arm = h100(arch="aarch64", cpu_vendor=None)
    assert compile_(spec(workload=POLLER), arm).runtime.sysfs == ()
    tuned = files(compile_(spec(workload=POLLER, **TUNED_OWNED)), "tuned")[TUNED]
    for text in (files(plan, "systemd")[SCRIPT], tuned):
        assert "machinecheck*/ignore_ce" not in text


# --- hostc-tuning: masks, refusals, managed IRQs ----------------------------------------


def test_cpumask_compared_by_value_not_by_text(tmp_path: Path) -> None:
    """The kernel prints %*pb in its own width: leading zero words are not a difference."""
    plan = compile_(spec())
    mask = plan.partition.housekeeping.mask()
    wq = tmp_path / "sys/devices/virtual/workqueue/cpumask"
    _write(wq, "00000000," + mask.upper() + "\n")
    r = run_script(plan, tmp_path)
    assert r.returncode == 0, r.stdout
    assert "workqueue/cpumask" not in r.stdout
    assert wq.read_text() == "00000000," + mask.upper() + "\n"


def test_script_exits_non_zero_when_a_write_is_refused(tmp_path: Path) -> None:
    plan = compile_(spec())
    (tmp_path / "sys/kernel/mm/transparent_hugepage/defrag").mkdir(parents=True)  # unwritable
    r = run_script(plan, tmp_path)
    assert r.returncode == 1
    assert "refused" in r.stdout and "done: " in r.stdout and "1 refused" in r.stdout


def _irq(root: Path, n: int, current: str, effective: str, writable: bool) -> None:
    d = root / f"proc/irq/{n}"
    d.mkdir(parents=True)
    (d / "effective_affinity_list").write_text(effective + "\n")
    if writable:
        (d / "smp_affinity_list").write_text(current + "\n")
    else:  # a directory: every write fails, as the kernel's EIO on a managed IRQ
        (d / "smp_affinity_list").mkdir()


def test_managed_irqs_are_not_failures_but_misplaced_ones_are(tmp_path: Path) -> None:
    plan = compile_(spec(**HOSTC_IRQ))
    hk = plan.partition.housekeeping
    iso = plan.partition.isolated
    first_hk, first_iso = min(hk), min(iso)
    _write(tmp_path / "proc/irq/default_smp_affinity", hk.mask() + "\n")
    _write(tmp_path / "proc/cmdline", f"ro {_isolcpus(plan)} quiet\n")  # booted with it
    _irq(tmp_path, 10, str(CpuSet(range(0, 128))), str(first_iso), True)  # moved
    _irq(tmp_path, 11, "", str(first_hk), False)  # managed, kernel put it on housekeeping
    r = run_script(plan, tmp_path)
    assert r.returncode == 0, r.stdout
    assert (
        "interrupts: 1 moved, 0 already placed, 1 placed by the kernel (managed), 0 refused"
        in r.stdout
    )
    assert r.stdout.count("IRQ") == 0  # one summary line, no line per interrupt
    _irq(tmp_path, 12, "", str(first_iso), False)  # refused and still on an isolated CPU
    r = run_script(plan, tmp_path)
    assert r.returncode == 1
    assert f"refused IRQ 12 -> {hk}: still on {first_iso}" in r.stdout


def _isolcpus(plan: Plan) -> str:
    from hostc.plan.kernelargs import kernel_args

    return next(str(a) for a in kernel_args(plan) if a.key == "isolcpus")


def test_managed_irqs_refused_before_the_isolating_reboot_are_no_failure(tmp_path: Path) -> None:
    """apply.sh restarts hostc-tuning before the reboot that brings isolcpus=managed_irq:
    the kernel's managed interrupts still sit on soon-isolated CPUs and refuse to move.
    That waits for the reboot (found in a booted VM: the live step failed)."""
    plan = compile_(spec(**HOSTC_IRQ))
    hk, iso = plan.partition.housekeeping, plan.partition.isolated
    _write(tmp_path / "proc/irq/default_smp_affinity", hk.mask() + "\n")
    _write(tmp_path / "proc/cmdline", "ro quiet\n")  # the old kernel command line
    _irq(tmp_path, 12, "", str(min(iso)), False)  # refused, on a soon-isolated CPU
    r = run_script(plan, tmp_path)
    assert r.returncode == 0, r.stdout
    assert "1 refused until the reboot into the Plan's isolcpus" in r.stdout
    _write(tmp_path / "proc/cmdline", f"ro {_isolcpus(plan)}\n")  # after the reboot
    assert run_script(plan, tmp_path).returncode == 1


def test_hostc_irq_owner_reruns_on_nic_add_and_after_the_drivers() -> None:
    out = files(compile_(spec(**HOSTC_IRQ)), "systemd")
    unit = out["/etc/systemd/system/hostc-tuning.service"]
    assert "After=openibd.service nvidia-persistenced.service systemd-udev-settle.service" in unit
    assert "Wants=" not in unit
    rules = out["/etc/udev/rules.d/90-hostc-tuning.rules"]
    assert 'SUBSYSTEM=="net"' in rules
    # debounced: one transient timer of a fixed name, then one queued restart (no reload)
    run = (
        'RUN+="/usr/bin/systemd-run --no-block --collect --on-active=5 '
        '--unit=hostc-tuning-udev /bin/systemctl --no-block restart hostc-tuning.service"'
    )
    lines = [x for x in rules.splitlines() if x and not x.startswith("#")]
    assert lines and all(x.endswith(run) for x in lines)
    plan = compile_(spec(**HOSTC_IRQ))
    for c in plan.runtime.nic_channels:
        assert (c.netdev or c.rdma or c.pci) in rules


THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"


def test_a_thp_mode_reaches_the_running_kernel_without_a_reboot(tmp_path: Path) -> None:
    """`transparent_hugepage=` only sets the boot's start value of THP's `enabled`, which
    takes a mode at runtime (transhuge.rst); a mode change cost a reboot because only
    the command line carried it (review-outputs-4 R10).  The runtime owner now writes
    `enabled` too: hostc-tuning, or TuneD's [sysfs] (its [vm] transparent_hugepages
    writes nothing while the command line carries the word, as hostc's does)."""
    never = spec(kernel=m.Kernel(transparent_hugepage=m.ThpMode.NEVER))
    plan = compile_(never)
    assert "transparent_hugepage=never" in cmdline(plan).split()  # the boot's start
    script = files(plan, "systemd")[SCRIPT]
    assert f"\nput never {THP_ENABLED}\n" in script
    assert "THP mode" in files(plan, "systemd")["/etc/systemd/system/hostc-tuning.service"]
    _write(tmp_path / THP_ENABLED.lstrip("/"), "always [madvise] never\n")
    run_script(plan, tmp_path)
    assert (tmp_path / THP_ENABLED.lstrip("/")).read_text() == "never\n"
    # TuneD owns the runtime: [sysfs], which writes whatever the command line says
    ini = tuned_ini(compile_(spec(kernel=never.kernel, **TUNED_OWNED)))
    assert ini["sysfs"][THP_ENABLED] == "never"
    assert "transparent_hugepages" not in ini["vm"]
    # what a change of the mode alone owes: the rest of the command line is the same
    from hostc.knowledge.kernel import TUNED_SKIPPED_WITH_CMDLINE
    from hostc.plan.kernelargs import applied_live, boot_only

    assert TUNED_SKIPPED_WITH_CMDLINE["vm.transparent_hugepages"] == "transparent_hugepage="

    madvise = compile_(spec())
    assert [str(a) for a in applied_live(plan)] == ["transparent_hugepage=never"]
    assert boot_only(plan) == boot_only(madvise) and cmdline(plan) != cmdline(madvise)
    assert "transparent_hugepage" not in boot_only(plan)


def _runs(events: list[float], inner_blocks: bool, debounce: float, run_s: float) -> list[float]:
    """When hostc-tuning starts, for udev events at `events` (seconds), as systemd treats
    the rule (`hostc.knowledge.udev.DEBOUNCE`): an event whose `systemd-run --unit=NAME`
    finds the name free makes a timer that fires `debounce` s later and restarts the
    unit; the name stays taken until the transient service ends, at once when the inner
    systemctl only queues the restart, or when the run ends when it waits for it."""
    starts: list[float] = []
    free_at = float("-inf")
    for at in sorted(events):
        if at < free_at:
            continue  # "failed with exit code 1": served by the run already queued, or lost
        fire = at + debounce
        starts.append(fire)
        free_at = fire + (run_s if inner_blocks else 0.0)
    return starts


def test_a_nic_that_appears_while_hostc_tuning_runs_gets_a_run_after_it() -> None:
    """The inner `systemctl restart` of the udev rule blocked until hostc-tuning ended, so
    the transient unit kept its name for the whole run: a NIC that appeared after the run
    had scanned got "systemd-run ... failed with exit code 1" and was never configured
    (review-outputs-4 R2, seen in a booted Debian 12).  The inner systemctl only queues
    the restart, so the name is free as the timer fires and a late device gets a run."""
    from hostc.targets import systemd as ts

    rules = files(compile_(spec(**HOSTC_IRQ)), "systemd")[ts.UDEV_RULES]
    runs = [
        shlex.split(line.split('RUN+="', 1)[1].removesuffix('"'))
        for line in rules.splitlines()
        if line and not line.startswith("#")
    ]
    assert runs
    for argv in runs:
        inner = next(i for i, a in enumerate(argv) if i and not a.startswith("--"))
        outer, command = argv[:inner], argv[inner:]
        assert outer[0] == "/usr/bin/systemd-run"
        assert {"--no-block", "--collect", "--unit=hostc-tuning-udev"} <= set(outer)
        assert f"--on-active={ts.UDEV_DEBOUNCE_S}" in outer
        assert command[0] == "/bin/systemctl" and command[-2:] == ["restart", ts.UNIT]
        blocks = "--no-block" not in command
        assert not blocks, "the inner systemctl waits for the run: the name stays taken"
    # a driver reload: every port within 1 s gives one run; a PF probed late, 3.4 s into
    # an 8 s run (VM3), gets its own run after it
    burst, late = [0.0, 0.2, 0.9], 5.0 + 3.4
    assert _runs(burst, blocks, ts.UDEV_DEBOUNCE_S, 8.0) == [5.0]
    assert _runs([*burst, late], blocks, ts.UDEV_DEBOUNCE_S, 8.0) == [5.0, late + 5.0]
    assert _runs([*burst, late], True, ts.UDEV_DEBOUNCE_S, 8.0) == [5.0]  # the old rule
    from hostc.knowledge.udev import DEBOUNCE  # the facts this test models

    assert "once its associated unit deactivated again" in DEBOUNCE.source("RemainAfterElapse=no")


def test_udev_rules_match_the_pf_netdevs_and_rdma_devices_by_name_not_by_parent() -> None:
    """`KERNELS` matches any ancestor: a pod's IPoIB pkey child, a VF or a representor
    under the PF re-ran hostc-tuning (review K3).  The DGX snapshot names every NIC, so
    no line matches by parent; each line is `KEY=="value"` matches and one `RUN+=`."""
    from hostc.targets import systemd as ts

    plan = example_plan("dgx-h100-inference")
    rules = files(plan, "systemd")[ts.UDEV_RULES]
    pair = re.compile(r'(ACTION|SUBSYSTEM|KERNEL|NAME|KERNELS)=="([^"]*)"|RUN\+="([^"]*)"')
    lines = [x for x in rules.splitlines() if x and not x.startswith("#")]
    got = {}
    for line in lines:
        parts = line.split(", ")
        assert all(pair.fullmatch(p) for p in parts), line
        subsystem, match = parts[1], parts[2]
        got[subsystem + " " + match.split("==")[0]] = set(
            match.split("==")[1].strip('"').split("|")
        )
    names = {c.netdev for c in plan.runtime.nic_channels}
    rdma = {c.rdma for c in plan.runtime.nic_channels}
    assert got == {
        'SUBSYSTEM=="net" NAME': names,
        'SUBSYSTEM=="net" KERNEL': names,
        'SUBSYSTEM=="infiniband" KERNEL': rdma,
    }
    assert "ibp24s0" in names and "mlx5_0" in rdma and "KERNELS" not in rules.replace("# ", "")


def test_irq_owned_nics_are_matched_by_name_when_their_channels_are_kept() -> None:
    """`nic_channels = "keep"` leaves no channel rows; the NICs hostc pins interrupts
    for still come back by name, not by a PCI function a pod's child netdev shares."""
    from hostc.targets import systemd as ts

    plan = example_plan("dgx-h100-inference")
    assert plan.runtime.irq is not None and plan.runtime.irq.owner is IrqOwner.HOSTC
    kept = attrs.evolve(plan, runtime=attrs.evolve(plan.runtime, nic_channels=()))
    rules = files(kept, "systemd")[ts.UDEV_RULES]
    nics = [d for d in plan.runtime.irq.devices if d.kind == "nic"]
    assert nics and all(d.netdev and d.netdev in rules for d in nics)
    assert "KERNELS" not in rules.replace("# ", "")


def test_a_nic_the_snapshot_does_not_name_falls_back_to_its_pci_function() -> None:
    plan = example_plan("dgx-h100-inference")
    rt = plan.runtime
    bare = tuple(attrs.evolve(c, netdev=None, rdma=None) for c in rt.nic_channels)
    assert rt.irq is not None
    devices = tuple(attrs.evolve(d, netdev=None, rdma=None) for d in rt.irq.devices)
    irq = attrs.evolve(rt.irq, devices=devices)
    plan = attrs.evolve(plan, runtime=attrs.evolve(rt, nic_channels=bare, irq=irq))
    from hostc.targets import systemd as ts

    rules = ts.udev_rules(plan)
    assert rules is not None
    kernels = [x for x in rules.splitlines() if 'KERNELS=="' in x and not x.startswith("#")]
    assert len(kernels) == 2 and all(c.pci in kernels[0] for c in bare)


# --- irqbalance: the env file cannot replace the ban silently -------------------------


def _guard(text: str) -> str:
    line = next(x for x in text.splitlines() if x.startswith("ExecStartPre="))
    return line.removeprefix("ExecStartPre=/bin/sh -c ").strip("'").replace("$$", "$")


@pytest.mark.parametrize(
    ("env", "starts"),
    [
        ({}, True),
        ({"IRQBALANCE_BANNED_CPUS": ""}, True),  # empty: ignored by irqbalance ≥ 1.7.0
        ({"IRQBALANCE_BANNED_CPUS": "ff"}, False),  # read first: would replace the list
        ({"IRQBALANCE_BANNED_CPULIST": "0"}, False),  # the env file wins over Environment=
    ],
)
def test_irqbalance_refuses_a_ban_list_from_its_env_file(env: dict[str, str], starts: bool) -> None:
    plan = compile_(spec())
    text = files(plan, "systemd")["/etc/systemd/system/irqbalance.service.d/90-hostc.conf"]
    ours = {"IRQBALANCE_BANNED_CPULIST": str(plan.partition.isolated)}
    r = subprocess.run(
        ["sh", "-c", _guard(text)], env={**ours, **env}, capture_output=True, check=False
    )
    assert (r.returncode == 0) is starts


# --- RHEL: one runtime owner ----------------------------------------------------------


def test_rhel_stops_its_default_tuned_before_hostc_tuning_owns_the_runtime() -> None:
    plan = example("epyc-rhel9-inference")
    assert plan.runtime.owner is RuntimeOwner.SYSTEMD
    (tuned,) = [s for s in plan.runtime.services_off if s.unit == "tuned.service"]
    assert tuned.conflicts
    out = files(plan, "systemd")
    unit = out["/etc/systemd/system/hostc-tuning.service"]
    assert "Conflicts=tuned.service" in unit and "After=tuned.service" in unit
    assert "disable tuned.service" in out["/etc/systemd/system-preset/90-hostc.preset"]
    ubuntu = compile_(spec())
    assert all(s.unit != "tuned.service" for s in ubuntu.runtime.services_off)


def test_tuned_owner_on_rhel_keeps_tuned() -> None:
    plan = example("epyc-rhel9-inference")
    got = lower_runtime.services(
        requests.runtime(spec(), h100()),
        plan.runtime.irq,
        plan.host,
        RuntimeOwner.TUNED,
        plan.runtime.owner_reason.source,
    )
    assert got == []


# --- presets: no-op sysctls and true reasons -----------------------------------------


def test_numa_balancing_only_on_multi_node_hosts() -> None:
    one = compile_(spec(role=m.Role.TRAINING, cpu=m.Cpu(), workload=[]), h100(packages=1))
    assert "kernel.numa_balancing" not in {s.key for s in one.sysctls}
    two = compile_(spec(role=m.Role.TRAINING, cpu=m.Cpu(), workload=[]))
    assert {s.key: s.value for s in two.sysctls}["kernel.numa_balancing"] == "0"


def test_reasons_say_what_the_setting_does_for_the_role() -> None:
    inf = compile_(spec()).runtime
    train = compile_(spec(role=m.Role.TRAINING, cpu=m.Cpu(), workload=[])).runtime
    inf_gov, train_gov = inf.tunable(t.GOVERNOR), train.tunable(t.GOVERNOR)
    assert inf_gov is not None and train_gov is not None
    assert "token" not in train_gov.reason.why
    defrag = inf.tunable(t.THP_DEFRAG)
    assert defrag is not None and "kcompactd" not in defrag.reason.why


def test_tuned_owner_reason_says_the_cstate_limit_covers_every_cpu() -> None:
    plan = compile_(spec(**TUNED_OWNED))
    assert plan.cstates is not None and plan.cstates.cpus == plan.partition.online
    assert "every CPU" in plan.cstates.reason.why
    assert "max_cstate" not in cmdline(plan)
    assert tuned_ini(plan)["cpu"]["force_latency"] == "cstate.id:1|3"  # unknown TuneD


def test_check_says_when_tuned_cannot_keep_pinned_servers() -> None:
    def warned(topo_os: OsRelease) -> bool:
        _, warnings = api.compile_plan(spec(**TUNED_OWNED), h100(os=topo_os), spec_file="t")
        return any(
            str(w.path) == "runtime.owner" and "isolated_cores" in w.message for w in warnings
        )

    assert warned(OsRelease("ubuntu", "22.04", ["debian"]))
    assert not warned(DEBIAN12)


def test_reasons_tell_epb_from_epp_and_numa_balancing_from_kubelet_binding() -> None:
    """K12: energy_perf_bias was commented with the EPP reason ('HWP EPP'); the
    numa_balancing reason said no workload is pinned, false on a Static-memory node."""
    text = files(compile_(spec(**TUNED_OWNED)), "tuned")[TUNED]
    lines = text.splitlines()
    at = lines.index("energy_perf_bias=performance")
    assert "is not EPP" in lines[at - 2] and "HWP EPP" not in lines[at - 1]
    kubeadm = example("h100-kubeadm")
    nb = next(s for s in kubeadm.sysctls if s.key == "kernel.numa_balancing")
    assert "no workload is pinned" not in nb.reason.why
    # issue 52 F4: single-numa-node with a Static memory manager binds the pods: off
    assert nb.value == "0" and "Static memory manager" in nb.reason.why


# --- NIC channels: a spec choice with its cost named ------------------------------------


def test_nic_channel_shrinking_is_a_choice_whose_throughput_cost_is_named() -> None:
    """K4: shrinking caps kernel TCP/IP over the NIC (NFS, S3 model loading) at the
    housekeeping CPUs; `hostc plan` says so, and `irq.nic_channels = "keep"` leaves the
    driver's count (NTO makes it opt-in, TuneD does it only in realtime)."""
    plan = compile_(spec())
    assert plan.runtime.nic_channels
    why = plan.runtime.nic_channels[0].reason.why
    assert "kernel TCP/IP over it (NFS, S3 model loading) is spread over" in why
    assert 'irq.nic_channels = "keep"' in why
    kept = compile_(spec(irq=m.Irq(nic_channels=m.NicChannelChoice.KEEP)))
    assert kept.runtime.nic_channels == ()
    assert "nic_channels " not in files(kept, "systemd")[SCRIPT]
    asked = compile_(spec(irq=m.Irq(nic_channels=m.NicChannelChoice.HOUSEKEEPING)))
    assert str(asked.runtime.nic_channels[0].reason.source) == "irq.nic_channels"
