"""Runtime tuning and GPU-local services.

One test per knob (spec in → Plan entry with its reason → the lines of every
target that carries it), the two reference tuning profiles (inference, training)
value for value, properties over generated topologies, and the real validators (TuneD's
own profile loader, systemd-analyze verify, shellcheck).
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostc import api
from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError
from hostc.lower.assemble import tuned_facts
from hostc.plan.kernelargs import cmdline
from hostc.plan.model import BootCarrier, Distro, IrqOwner, Plan, RuntimeOwner
from hostc.settings import Family
from hostc.settings import table as t
from hostc.spec import model as m
from hostc.topology.model import OsRelease, Topology

from conftest import ROOT, need_tool
from topogen import machine

UBUNTU = OsRelease("ubuntu", "22.04", ["debian"])


def h100(**kw: object) -> Topology:
    """A 2-socket 4×H100 host: node 0 = 0-31,64-95, one NIC per node."""
    args: dict[str, object] = dict(
        packages=2, cores_per_node=32, smt=2, memory_mib=524288, gpus_per_node=2,
        nics_per_node=1, cpu_vendor="intel", os=UBUNTU,
    )  # fmt: skip
    args.update(kw)
    return machine(**args)  # type: ignore[arg-type]


def spec(role: m.Role = m.Role.INFERENCE, **kw: object) -> m.HostSpec:
    base: dict[str, object] = dict(
        host=m.Host(name="t", role=role),
        cpu=m.Cpu(housekeeping_per_node=2, isolate="workload"),
        workload=[m.Workload("vllm", ["GPU0", "GPU1"])],
    )
    base.update(kw)
    return m.HostSpec(**base)  # type: ignore[arg-type]


def compile_(s: m.HostSpec, topo: Topology | None = None) -> Plan:
    plan, _ = api.compile_plan(s, topo or h100(), spec_file="t.toml")
    return plan


def files(plan: Plan, *targets: str) -> dict[str, str]:
    return {a.path: a.text for a in api.emit(plan, list(targets)) if a.path.startswith("/")}


SCRIPT = "/usr/local/sbin/hostc-tuning"
VERIFY = "/usr/local/sbin/hostc-verify"
TUNED = "/etc/tuned/hostc/tuned.conf"  # the h100() host's release (before TuneD 2.23)
TUNED_OWNED = {"runtime": m.Runtime(m.RuntimeOwner.TUNED)}


def tuned_ini(plan: Plan) -> configparser.ConfigParser:
    ini = configparser.ConfigParser(delimiters=("=",), interpolation=None, comment_prefixes=("#",))
    ini.optionxform = str  # type: ignore[assignment,method-assign]
    ini.read_string(files(plan, "tuned")[TUNED])
    return ini


# --- one test per knob -----------------------------------------------------------


def test_governor_preset_spec_and_exclude() -> None:
    plan = compile_(spec())
    gov = plan.runtime.tunable(t.GOVERNOR)
    assert gov is not None and gov.value == "performance"
    assert str(gov.reason.source) == "preset:inference"
    assert 'put performance "$f"' in files(plan, "systemd")[SCRIPT]
    tplan = compile_(spec(**TUNED_OWNED))
    assert tuned_ini(tplan)["cpu"]["governor"] == "performance"
    mine = compile_(spec(cpufreq=m.Cpufreq(governor=m.Governor.SCHEDUTIL)))
    gov = mine.runtime.tunable(t.GOVERNOR)
    assert gov is not None
    assert (gov.value, str(gov.reason.source)) == (
        "schedutil",
        "cpufreq.governor",
    )
    gone = compile_(spec(preset=m.Preset(exclude=["cpu_governor"])))
    assert gone.runtime.tunable(t.GOVERNOR) is None
    assert "scaling_governor" not in files(gone, "systemd")[SCRIPT]


def test_general_role_gets_no_governor() -> None:
    plan = compile_(spec(role=m.Role.GENERAL))
    assert plan.runtime.tunable(t.GOVERNOR) is None and plan.runtime.tunable(t.EPP) is None


def test_epp() -> None:
    plan = compile_(spec())
    epp = plan.runtime.tunable(t.EPP)
    assert epp is not None and epp.value == "performance"
    assert 'put performance "$f"' in files(plan, "systemd")[SCRIPT]
    assert "energy_performance_preference" in files(plan, "systemd")[SCRIPT]
    ini = tuned_ini(compile_(spec(**TUNED_OWNED)))  # ubuntu-22.04: TuneD version unknown
    epp_sysfs = "/sys/devices/system/cpu/cpufreq/policy*/energy_performance_preference"
    assert ini["sysfs"][epp_sysfs] == "performance"
    assert "energy_performance_preference" not in ini["cpu"]
    assert ini["cpu"]["energy_perf_bias"] == "performance"
    amd = tuned_ini(compile_(spec(**TUNED_OWNED), h100(cpu_vendor="amd")))
    assert amd["sysfs"][epp_sysfs] == "performance"
    assert "energy_perf_bias" not in amd["cpu"]  # an Intel register: AMD has no EPB


@pytest.mark.parametrize(("vendor", "kernel", "preset"), [
    ("intel", "5.15.0", True), ("amd", "6.8.0", True), ("amd", "5.15.0", False),
])  # fmt: skip
def test_epp_only_where_a_driver_has_it(vendor: str, kernel: str, preset: bool) -> None:
    topo = h100(cpu_vendor=vendor, kernel=kernel)
    assert (compile_(spec(), topo).runtime.tunable(t.EPP) is not None) is preset
    asked = spec(cpufreq=m.Cpufreq(energy_performance_preference=m.Epp.PERFORMANCE))
    _, warnings = api.compile_plan(asked, topo, spec_file="t.toml")
    said = [w for w in warnings if str(w.path) == "cpufreq.energy_performance_preference"]
    assert bool(said) is not preset


@pytest.mark.parametrize(
    ("vendor", "kernel", "want"),
    [
        ("amd", "6.8.0", "amd_pstate=active"),
        ("amd", "5.15.0", None),  # no active/EPP mode before 6.3
        ("intel", "6.8.0", None),  # intel_pstate's default (active with HWP) is left alone
    ],
)
def test_pstate_by_vendor_and_kernel(vendor: str, kernel: str, want: str | None) -> None:
    plan = compile_(spec(), h100(cpu_vendor=vendor, kernel=kernel))
    line = cmdline(plan)
    if want is None:
        assert plan.runtime.pstate is None
        assert "pstate=" not in line
    else:
        assert want in line.split()
        assert plan.runtime.pstate is not None
        assert str(plan.runtime.pstate.reason.source) == "preset:inference"


def test_pstate_from_the_spec_is_spelled_by_vendor() -> None:
    s = spec(cpufreq=m.Cpufreq(pstate=m.PstateMode.PASSIVE))
    assert "intel_pstate=passive" in cmdline(compile_(s)).split()
    assert "amd_pstate=passive" in cmdline(compile_(s, h100(cpu_vendor="amd"))).split()
    with pytest.raises(HostcError, match="no guided mode"):
        compile_(spec(cpufreq=m.Cpufreq(pstate=m.PstateMode.GUIDED)))


def test_thp_defrag() -> None:
    plan = compile_(spec())
    defrag = plan.runtime.tunable(t.THP_DEFRAG)
    assert defrag is not None and defrag.value == "defer+madvise"
    assert (
        "put defer+madvise /sys/kernel/mm/transparent_hugepage/defrag"
        in (files(plan, "systemd")[SCRIPT])
    )
    vm = tuned_ini(compile_(spec(**TUNED_OWNED)))["vm"]
    assert vm["transparent_hugepage.defrag"] == "defer+madvise"
    assert "transparent_hugepages" not in vm  # the mode is written under [sysfs]
    never = compile_(spec(kernel=m.Kernel(transparent_hugepage_defrag=m.ThpDefrag.NEVER)))
    never_defrag = never.runtime.tunable(t.THP_DEFRAG)
    assert never_defrag is not None
    assert str(never_defrag.reason.source) == "kernel.transparent_hugepage_defrag"


def test_irqbalance_owner_bans_isolated_cpus_with_the_shipped_variable() -> None:
    plan = compile_(spec())
    irq = plan.runtime.irq
    assert irq is not None and irq.owner is IrqOwner.IRQBALANCE
    assert irq.banned == plan.partition.isolated
    dropin = files(plan, "systemd")["/etc/systemd/system/irqbalance.service.d/90-hostc.conf"]
    assert "Environment=IRQBALANCE_BANNED_CPULIST=2-31,66-95\n" in dropin
    assert (
        "Conflicts=irqbalance"
        not in files(plan, "systemd")["/etc/systemd/system/hostc-tuning.service"]
    )
    old = compile_(spec(), h100(os=OsRelease("debian", "11", [])))
    dropin = files(old, "systemd")["/etc/systemd/system/irqbalance.service.d/90-hostc.conf"]
    mask = CpuSet.parse("2-31,66-95").mask()
    assert f"Environment=IRQBALANCE_BANNED_CPUS={mask}\n" in dropin
    assert CpuSet.from_mask(mask) == old.partition.isolated


def test_hostc_owner_pins_devices_to_their_node_and_stops_irqbalance() -> None:
    plan = compile_(spec(irq=m.Irq(m.IrqOwner.HOSTC)))
    irq = plan.runtime.irq
    assert irq is not None and irq.owner is IrqOwner.HOSTC
    by = {d.device: d for d in irq.devices}
    assert by["mlx5_0"].cpus == CpuSet.parse("0-1,64-65")  # node 0's housekeeping
    assert by["mlx5_1"].cpus == CpuSet.parse("32-63,96-127")  # node 1 is all housekeeping
    out = files(plan, "systemd")
    script = out[SCRIPT]
    assert "pin_device 0000:18:00.0 0-1,64-65\n" in script
    mask = CpuSet.parse("0-1,32-65,96-127").mask()
    assert f"put_mask {mask} /proc/irq/default_smp_affinity" in script
    unit = out["/etc/systemd/system/hostc-tuning.service"]
    assert "Conflicts=irqbalance.service" in unit
    assert "disable irqbalance.service" in out["/etc/systemd/system-preset/90-hostc.preset"]
    assert "/etc/systemd/system/irqbalance.service.d/90-hostc.conf" not in out


def test_device_on_a_node_without_housekeeping_falls_back_to_all() -> None:
    s = spec(
        irq=m.Irq(m.IrqOwner.HOSTC),
        cpu=m.Cpu(housekeeping="0-1,64-65", isolate="rest", allow_node_without_housekeeping=True),
        workload=[m.Workload("a", ["GPU0"]), m.Workload("b", ["GPU2"])],
    )
    plan = compile_(s)
    assert plan.runtime.irq is not None
    by = {d.device: d for d in plan.runtime.irq.devices}
    assert by["GPU2"].cpus == plan.partition.housekeeping
    assert "no housekeeping CPU" in by["GPU2"].reason.why


def test_no_irq_settings_without_isolation() -> None:
    plan = compile_(spec(cpu=m.Cpu(), workload=[]))
    assert plan.runtime.irq is None and plan.runtime.cpumasks == ()
    assert "irqbalance" not in " ".join(files(plan, "systemd"))


def test_irqaffinity_reason_says_it_is_only_the_default() -> None:
    plan = compile_(spec())
    iso = plan.isolation_by("irqaffinity")
    assert iso is not None and "after boot" in iso.reason.why


def test_workqueue_and_writeback_masks() -> None:
    plan = compile_(spec())
    assert {x.name: x.cpus for x in plan.runtime.cpumasks} == {
        "workqueue": plan.partition.housekeeping,
        "writeback": plan.partition.housekeeping,
    }
    mask = plan.partition.housekeeping.mask()
    script = files(plan, "systemd")[SCRIPT]
    assert f"put_mask {mask} /sys/devices/virtual/workqueue/cpumask" in script
    assert f"put_mask {mask} /sys/bus/workqueue/devices/writeback/cpumask" in script
    sysfs = tuned_ini(compile_(spec(**TUNED_OWNED)))["sysfs"]
    assert sysfs["/sys/devices/virtual/workqueue/cpumask"] == mask


def test_modules_and_options() -> None:
    mods = m.Modules(blacklist=["bluetooth", "btusb"], hard_block=True, options={"btusb": "a=1"})
    plan = compile_(spec(modules=mods))
    built = files(plan, "modprobe")
    text = built["/etc/modprobe.d/90-hostc.conf"]
    for line in ("blacklist bluetooth", "install bluetooth /bin/false", "blacklist btusb"):
        assert line + "\n" in text
    assert "\noptions " not in text
    assert "options btusb a=1\n" in built["/etc/modprobe.d/90-hostc-options.conf"]
    # blacklists act on future loads (the next boot); options owe a reboot (R5)
    acts = {a.path: {str(x) for x in a.activation} for a in api.emit(plan, ["modprobe"])}
    assert acts["/etc/modprobe.d/90-hostc.conf"] == {"initramfs", "next-boot module blacklists"}
    assert acts["/etc/modprobe.d/90-hostc-options.conf"] == {"initramfs", "reboot"}


@pytest.mark.parametrize(
    ("mods", "path"),
    [
        (m.Modules(blacklist=["blue tooth"]), "modules.blacklist[0]"),
        (m.Modules(options={"x": "a=1\ninstall x /bin/sh"}), "modules.options.x"),
    ],
)
def test_bad_module_names_are_refused(mods: m.Modules, path: str) -> None:
    with pytest.raises(HostcError) as e:
        compile_(spec(modules=mods))
    assert path in [str(d.path) for d in e.value.errors]


def test_services_disabled_by_preset_and_script() -> None:
    plan = compile_(spec(services=m.Services(["cups.service", "avahi-daemon.service"])))
    out = files(plan, "systemd")
    preset = out["/etc/systemd/system-preset/90-hostc.preset"]
    assert "disable cups.service\n" in preset and "disable avahi-daemon.service\n" in preset
    assert "disable_unit cups.service\n" in out[SCRIPT]
    with pytest.raises(HostcError) as e:
        compile_(spec(services=m.Services(["cups service"])))
    assert str(e.value.errors[0].path) == "services.disable[0]"


def test_iommu_typed() -> None:
    plan = compile_(spec(kernel=m.Kernel(iommu=m.IommuMode.PT)))
    assert "iommu=pt" in cmdline(plan).split() and "intel_iommu" not in cmdline(plan)
    amd = compile_(spec(kernel=m.Kernel(iommu=m.IommuMode.PT)), h100(cpu_vendor="amd"))
    assert "iommu=pt" in cmdline(amd).split() and "intel_iommu" not in cmdline(amd)
    for arg in ("iommu=pt", "intel_iommu=on", "amd_iommu=on"):
        with pytest.raises(HostcError, match="derived by hostc"):
            compile_(spec(kernel=m.Kernel(extra_args=[arg])))


LEGACY, PROFILES = "/etc/tuned", "/etc/tuned/profiles"


@pytest.mark.parametrize(
    ("os", "dirs"),
    [
        ("ubuntu-22.04", (LEGACY,)),
        ("ubuntu-24.10", (LEGACY,)),
        ("ubuntu-25.04", (PROFILES,)),
        ("debian-12", (LEGACY,)),
        ("debian-13", (PROFILES,)),
        ("rhel-8.10", (LEGACY,)),
        ("rocky-9.4", (LEGACY,)),
        ("fedora-39", (LEGACY,)),
        ("fedora-41", (PROFILES,)),
        ("fedora-40", (LEGACY, PROFILES)),  # between: hostc does not know its TuneD
        ("rhel-10.0", (LEGACY, PROFILES)),
        ("arch", (LEGACY, PROFILES)),
        (None, (LEGACY, PROFILES)),
    ],
)
def test_tuned_profile_goes_where_the_release_s_tuned_reads_it(
    os: str | None, dirs: tuple[str, ...]
) -> None:
    """TuneD 2.23 moved user profiles to /etc/tuned/profiles and stopped reading
    /etc/tuned/<name>: a profile in the wrong one is a profile that does not exist."""
    host = m.Host(name="t", role=m.Role.INFERENCE, os=os)  # host.os, as a spec says it
    plan = compile_(spec(host=host, **TUNED_OWNED), h100(os=None))
    assert plan.host.tuned_profile_dirs == dirs
    arts = [a for a in api.emit(plan, ["tuned"]) if a.path.endswith("/tuned.conf")]
    assert [a.path for a in arts] == [f"{d}/hostc/tuned.conf" for d in dirs]
    assert len({a.data for a in arts}) == 1  # the same profile wherever it goes
    steps = [list(s.argv) for s in api.apply_steps(plan, arts)]
    assert steps.count(["tuned-adm", "profile", "hostc"]) == 1


def test_a_hand_built_tuned_plan_without_a_profile_dir_is_refused() -> None:
    """A Plan invariant: breaking it is a bug (an internal error, exit 3), not advice."""
    from hostc.check import PlanInvariantError, check_plan

    plan = compile_(spec(**TUNED_OWNED))
    bare = attrs.evolve(plan, host=attrs.evolve(plan.host, tuned_profile_dirs=()))
    with pytest.raises(PlanInvariantError, match=r"^plan\.host\.tuned_profile_dirs: "):
        check_plan(bare)


def test_tuned_and_systemd_never_own_the_same_knob() -> None:
    ours = compile_(spec())
    assert ours.runtime.owner is RuntimeOwner.SYSTEMD
    assert api.targets()["tuned"].applies(ours) is not None
    assert "tuned" not in {a.target for a in api.emit(ours, ["all"])}
    theirs = compile_(spec(**TUNED_OWNED))
    assert api.targets()["tuned"].applies(theirs) is None
    out = files(theirs, "systemd")
    assert SCRIPT not in out  # nothing left for hostc-tuning (no services listed)
    assert "/etc/systemd/system/irqbalance.service.d/90-hostc.conf" not in out
    assert "/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf" not in out
    assert "/etc/systemd/system/vllm.service.d/90-hostc.conf" in out
    ini = tuned_ini(theirs)
    assert ini["irqbalance"]["banned_cpus"] == "2-31,66-95"
    assert "bootloader" not in ini  # Ubuntu: the GRUB drop-in carries the arguments
    with pytest.raises(HostcError, match=r"irq\.owner"):
        compile_(spec(irq=m.Irq(m.IrqOwner.HOSTC), **TUNED_OWNED))


def test_force_latency_follows_the_cstate_limit() -> None:
    ini = tuned_ini(compile_(spec(**TUNED_OWNED)))  # ubuntu-22.04: TuneD unknown
    assert ini["cpu"]["force_latency"] == "cstate.id:1|3"
    training = compile_(spec(role=m.Role.TRAINING, **TUNED_OWNED))
    assert "force_latency" not in tuned_ini(training)["cpu"]


# --- workloads ------------------------------------------------------------------


def test_h100_acceptance_plan() -> None:
    plan, _ = api.compile_file(ROOT / "examples/h100-4gpu-inference/node.toml")
    (w,) = plan.workloads
    assert plan.nodes[0].housekeeping == CpuSet.parse("0-1,64-65")
    assert w.cpus == CpuSet.parse("2-31,66-95") == plan.nodes[0].isolated
    assert w.nodes == (0,) and w.unit == "vllm.service" and w.nics == ("mlx5_0",)
    assert dict(w.env) == {"NCCL_IB_HCA": "=mlx5_0"}
    from hostc.report import plan_view

    text = plan_view.render(plan)
    assert "unit vllm.service  cpus 2-31,66-95 (60)  memory node(s) 0" in text
    assert "NCCL_IB_HCA==mlx5_0" in text
    assert "(preset) preset:inference" in text and "(spec) " in text
    out = files(plan, "systemd")["/etc/systemd/system/vllm.service.d/90-hostc.conf"]
    for line in (
        "CPUAffinity=2-31,66-95",
        "NUMAPolicy=bind",
        "NUMAMask=0",
        'Environment="NCCL_IB_HCA==mlx5_0"',
        "LimitMEMLOCK=infinity",
        "LimitNOFILE=1048576",
    ):
        assert line + "\n" in out


def test_dgx_pairs_get_their_own_cores() -> None:
    plan, _ = api.compile_file(ROOT / "examples/dgx-h100-inference/node.toml")
    assert len(plan.workloads) == 4
    cpus = [w.cpus for w in plan.workloads]
    for i, a in enumerate(cpus):
        for b in cpus[i + 1 :]:
            assert a.isdisjoint(b)
    assert [w.nodes for w in plan.workloads] == [(0,), (0,), (1,), (1,)]


def test_nics_from_links_when_the_snapshot_has_them() -> None:
    from hostc.topology.model import Link

    topo = h100(nics_per_node=2)
    topo = attrs.evolve(topo, links=[Link("GPU0", "mlx5_1", "PIX"), Link("GPU1", "mlx5_0", "SYS")])
    plan = compile_(spec(), topo)
    assert plan.workloads[0].nics == ("mlx5_1",)
    assert plan.workloads[0].nics_reason is not None
    assert "PIX/PXB" in plan.workloads[0].nics_reason.why


def test_workload_by_nodes_and_unit_name() -> None:
    s = spec(workload=[m.Workload("tok", nodes=[0], unit="tokenizer@1.service")])
    plan = compile_(s)
    (w,) = plan.workloads
    assert w.unit == "tokenizer@1.service" and w.nodes == (0,)
    assert w.cpus <= plan.partition.isolated
    assert "/etc/systemd/system/tokenizer@1.service.d/90-hostc.conf" in files(plan, "systemd")
    with pytest.raises(HostcError):
        compile_(spec(workload=[m.Workload("x", ["GPU0"], unit="x.timer")]))


def test_env_is_quoted_for_systemd() -> None:
    from hostc.targets._systemd_syntax import env_assignment

    assert env_assignment("A", 'x"y\\z%n') == '"A=x\\"y\\\\z%%n"'


# --- warnings and --strict -------------------------------------------------------


def warnings_of(s: m.HostSpec, topo: Topology | None = None) -> list[str]:
    _, found = api.compile_plan(s, topo or h100(), spec_file="t.toml")
    return [d.message for d in found]


def test_warnings() -> None:
    poll = [m.Workload("a", ["GPU0"], share_cpus=True, busy_poll=True)]
    shared = spec(workload=[*poll, m.Workload("b", ["GPU1"])])
    assert any("share isolated CPUs" in w for w in warnings_of(shared))
    span = spec(workload=[m.Workload("a", ["GPU0", "GPU2"])], cpu=m.Cpu())
    assert any("span NUMA nodes" in w for w in warnings_of(span))
    thp = spec(kernel=m.Kernel(transparent_hugepage=m.ThpMode.ALWAYS))
    assert any("THP `always`" in w for w in warnings_of(thp))
    unpinned = spec(cpu=m.Cpu(housekeeping_per_node=2, isolate="rest"))
    assert any("run no workload" in w for w in warnings_of(unpinned))
    slow = spec(workload=poll, cpufreq=m.Cpufreq(governor=m.Governor.POWERSAVE))
    assert any("intel_pstate" in w for w in warnings_of(slow))
    assert not any("intel_pstate" in w for w in warnings_of(spec()))


def test_strict_makes_warnings_errors(tmp_path: Path) -> None:
    src = ROOT / "examples/h100-4gpu-inference"
    shutil.copy(src / "topology.toml", tmp_path)
    text = (src / "node.toml").read_text() + '\n[kernel]\ntransparent_hugepage = "always"\n'
    (tmp_path / "node.toml").write_text(text)
    for cmd in ("check", "plan", "build"):
        r = subprocess.run(
            [sys.executable, "-m", "hostc", cmd, str(tmp_path / "node.toml"),
             "--strict", *(["--out", str(tmp_path / "o")] if cmd == "build" else [])],
            capture_output=True, cwd=ROOT, check=False,
        )  # fmt: skip
        assert r.returncode == 2, (cmd, r.stderr)
        assert b"error:" in r.stderr and b"THP `always`" in r.stderr
    assert not (tmp_path / "o").exists()


# --- the two reference tuning profiles, inference and training -------------------

#: (setting, inference, training) as the wiki's profiles give them; None: not set.
REFERENCE = [
    ("vm.max_map_count", "1048576", "1048576"),
    ("vm.swappiness", "1", "1"),
    ("vm.overcommit_memory", "1", "1"),
    ("kernel.numa_balancing", "1", "0"),
    ("fs.aio-max-nr", "1048576", "1048576"),
    ("fs.inotify.max_user_watches", None, "524288"),
    ("net.core.rmem_max", "268435456", "536870912"),
    ("net.core.wmem_max", "268435456", "536870912"),
    ("net.ipv4.tcp_rmem", "4096 87380 268435456", "4096 131072 536870912"),
    ("net.ipv4.tcp_wmem", "4096 65536 268435456", "4096 131072 536870912"),
    ("net.core.netdev_max_backlog", "250000", None),
    ("net.core.somaxconn", "65535", None),
    ("cmdline:transparent_hugepage", "madvise", "madvise"),
    ("cmdline:intel_idle.max_cstate", "1", None),
    ("cmdline:processor.max_cstate", "1", None),
    ("governor", "performance", "performance"),
    ("irqbalance", "off", None),
]

#: Deliberate departures from the reference profiles, each with its reason.
DEPARTURES = {
    ("fs.inotify.max_user_watches", "training"): (
        None,
        "since 5.11 the default scales with RAM up to 1048576: 524288 would lower it",
    ),
    ("net.ipv4.tcp_rmem", "inference"): (
        "4096 131072 268435456",
        "87380 would lower the initial size below the kernel's own default since 4.20",
    ),
    ("cmdline:intel_idle.max_cstate", "inference"): (
        None,
        "C1 only on the workload CPUs, per CPU at runtime (PM QoS; no_hz.rst prefers it), "
        'not on every CPU at boot; kernel.cstates_at = "boot" keeps the wiki\'s arguments',
    ),
    ("cmdline:processor.max_cstate", "inference"): (
        None,
        "as intel_idle.max_cstate: runtime PM QoS on the workload CPUs instead",
    ),
    ("irqbalance", "inference"): (
        "banned",
        "one IRQ owner: irqbalance stays with the isolated CPUs banned (irq.owner = hostc "
        "turns it off and pins NIC IRQs node-locally, as the wiki does)",
    ),
}


def _value(plan: Plan, setting: str) -> str | None:
    if setting.startswith("cmdline:"):
        args = dict(a.partition("=")[::2] for a in cmdline(plan).split())
        return args.get(setting.removeprefix("cmdline:"))
    if setting == "governor":
        gov = plan.runtime.tunable(t.GOVERNOR)
        return gov.value if gov else None
    if setting == "irqbalance":
        irq = plan.runtime.irq
        if irq is None:
            return None
        return "banned" if irq.owner is IrqOwner.IRQBALANCE else "off"
    return {s.key: s.value for s in plan.sysctls}.get(setting)


@pytest.mark.parametrize("role", ["inference", "training"])
def test_reference_profiles_value_for_value(role: str) -> None:
    isolate = role == "inference"  # the wiki's inference profile pins NIC IRQs
    s = spec(
        role=m.Role(role),
        cpu=m.Cpu(housekeeping_per_node=2, isolate="workload") if isolate else m.Cpu(),
        workload=[] if not isolate else [m.Workload("vllm", ["GPU0", "GPU1"])],
    )
    plan = compile_(s, h100(kernel="6.8.0"))
    for setting, inf, train in REFERENCE:
        want = inf if role == "inference" else train
        if (setting, role) in DEPARTURES:
            want = DEPARTURES[(setting, role)][0]
        if setting == "kernel.numa_balancing" and role == "inference":
            want = "0"  # pinned with membind (the wiki's 1 is for unpinned hosts)
        assert _value(plan, setting) == want, setting
    unpinned = compile_(spec(cpu=m.Cpu(), workload=[]), h100(kernel="6.8.0"))
    assert _value(unpinned, "kernel.numa_balancing") == "1"
    old = compile_(spec(role=m.Role.TRAINING, cpu=m.Cpu(), workload=[]), h100(kernel="5.10.0"))
    assert _value(old, "fs.inotify.max_user_watches") == "524288"


# --- properties ------------------------------------------------------------------


@st.composite
def placed(draw: st.DrawFn) -> tuple[Topology, m.HostSpec]:
    topo = machine(
        packages=draw(st.integers(1, 2)),
        nodes_per_package=draw(st.integers(1, 2)),
        cores_per_node=draw(st.integers(2, 8)),
        smt=draw(st.sampled_from([1, 2])),
        gpus_per_node=draw(st.integers(1, 4)),
        nics_per_node=draw(st.integers(0, 2)),
        cpu_vendor=draw(st.sampled_from(["intel", "amd", None])),
        os=draw(st.sampled_from([UBUNTU, OsRelease("debian", "11", []), None])),
    )
    gpus = [g.name for g in topo.gpus]
    chosen = draw(st.lists(st.sampled_from(gpus), min_size=1, unique=True))
    groups = draw(st.integers(1, len(chosen)))
    workloads = [
        m.Workload(f"w{i}", chosen[i::groups], share_cpus=draw(st.booleans()) and i == 0)
        for i in range(groups)
    ]
    s = m.HostSpec(
        host=m.Host(name="prop", role=m.Role.INFERENCE),
        cpu=m.Cpu(housekeeping_per_node=1, isolate=draw(st.sampled_from(["workload", "rest"]))),
        workload=workloads,
        irq=m.Irq(draw(st.sampled_from(list(m.IrqOwner)))),
    )
    return topo, s


def _systemd_list(text: str, key: str) -> list[str]:
    return [ln.split("=", 1)[1] for ln in text.splitlines() if ln.startswith(key + "=")]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(placed())
def test_placement_and_artifacts_agree_with_the_plan(case: tuple[Topology, m.HostSpec]) -> None:
    topo, s = case
    try:
        plan, _ = api.compile_plan(s, topo, spec_file="p.toml")
    except HostcError:
        return
    iso = plan.partition.isolated
    gpu_node = {g.name: g.node for g in topo.gpus}
    out = files(plan, "systemd")
    for i, w in enumerate(plan.workloads):
        assert w.nodes == tuple(sorted({gpu_node[g] for g in w.gpus}))
        assert w.cpus <= topo.cpus_of_nodes(w.nodes)
        if iso & topo.cpus_of_nodes(w.nodes):
            assert w.cpus <= iso
        for v in plan.workloads[i + 1 :]:
            if not (w.shared or v.shared) and w.cpus <= iso and v.cpus <= iso:
                # disjoint wherever each shared node has a core for each of its workloads
                # (too few cores: they share, and check warns about it)
                def enough(node: int) -> bool:
                    cores = [c for c in plan.partition.cores if c <= iso & topo.node_cpus(node)]
                    users = [x for x in plan.workloads if node in x.nodes and not x.shared]
                    return len(cores) >= len(users)

                if all(enough(n) for n in set(w.nodes) | set(v.nodes)):
                    assert w.cpus.isdisjoint(v.cpus), (w.name, v.name)
        dropin = out[f"/etc/systemd/system/{w.unit}.d/90-hostc.conf"]
        assert [CpuSet.parse(x) for x in _systemd_list(dropin, "CPUAffinity")] == [w.cpus]
        assert _systemd_list(dropin, "NUMAMask") == [",".join(map(str, w.nodes))]
    irq = plan.runtime.irq
    if not iso:
        assert irq is None
        return
    assert irq is not None and irq.banned == iso
    manager = out["/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf"]
    assert [CpuSet.parse(x) for x in _systemd_list(manager, "CPUAffinity")] == [
        plan.partition.housekeeping
    ]
    if irq.owner is IrqOwner.IRQBALANCE:
        text = out["/etc/systemd/system/irqbalance.service.d/90-hostc.conf"]
        (env,) = _systemd_list(text, "Environment")
        var, _, value = env.partition("=")
        got = CpuSet.from_mask(value) if var == "IRQBALANCE_BANNED_CPUS" else CpuSet.parse(value)
        assert got == iso
    else:
        script = out[SCRIPT]
        found = re.search(r"^put_mask (\S+) /proc/irq/default_smp_affinity$", script, re.M)
        assert found and CpuSet.from_mask(found.group(1)) == plan.partition.housekeeping
        for d in irq.devices:
            assert d.cpus <= plan.partition.housekeeping
            local = plan.partition.housekeeping & topo.node_cpus(d.node or 0)
            assert d.cpus == (local or plan.partition.housekeeping)
            assert f"pin_device {d.pci} {d.cpus}\n" in script
    if irq.owner is IrqOwner.IRQBALANCE:
        tplan = attrs.evolve(
            plan,
            host=attrs.evolve(
                plan.host, os=Distro("debian", "12"), tuned=tuned_facts("debian-12")
            ),  # a TuneD with cgroup_ps_blacklist
            runtime=attrs.evolve(plan.runtime, owner=RuntimeOwner.TUNED),
        )
        ini = tuned_ini(tplan)
        assert CpuSet.parse(ini["scheduler"]["isolated_cores"]) == iso
        assert CpuSet.parse(ini["irqbalance"]["banned_cpus"]) == iso
        assert CpuSet.parse(ini["systemd"]["cpu_affinity"]) == plan.partition.housekeeping


# --- real validators -------------------------------------------------------------


def _example_plans() -> list[Plan]:
    return [api.compile_file(p)[0] for p in sorted((ROOT / "examples").glob("*/node.toml"))]


def _variants() -> list[Plan]:
    """Every example, plus each with TuneD owning the runtime (so every profile shape loads)."""
    out = []
    for plan in _example_plans():
        out.append(plan)
        if plan.runtime.owner is RuntimeOwner.SYSTEMD and (
            plan.runtime.irq is None or plan.runtime.irq.owner is IrqOwner.IRQBALANCE
        ):
            rt = attrs.evolve(plan.runtime, owner=RuntimeOwner.TUNED)
            out.append(attrs.evolve(plan, runtime=rt))
    return out


def test_tuned_loads_every_profile_with_its_own_loader(tmp_path: Path) -> None:
    if not Path("/usr/lib/python3/dist-packages/tuned").is_dir():
        need_tool("tuned-adm")  # fails under CI, skips elsewhere
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
    import json

    n = 0
    for i, plan in enumerate(_variants()):
        if api.targets()["tuned"].applies(plan) is not None:
            continue
        d = tmp_path / str(i) / "hostc"
        d.mkdir(parents=True)
        (d / "tuned.conf").write_text(files(plan, "tuned")[TUNED])
        r = subprocess.run(
            ["/usr/bin/python3", "-c", code, str(d.parent)], capture_output=True, check=False
        )
        assert r.returncode == 0, r.stderr.decode()
        units = json.loads(r.stdout)
        if plan.boot.carrier is BootCarrier.TUNED:
            assert units["bootloader"]["cmdline_hostc"] == cmdline(plan)
        else:  # Debian/Ubuntu: the GRUB drop-in carries the arguments
            assert "bootloader" not in units
        assert {s.key: s.value for s in plan.sysctls} == units["sysctl"]
        n += 1
    assert n >= 3


def test_systemd_analyze_verify_accepts_every_unit(tmp_path: Path) -> None:
    tool = need_tool("systemd-analyze")
    checked = 0
    for i, plan in enumerate(_example_plans()):
        if api.targets()["systemd"].applies(plan) is not None:
            continue
        root = tmp_path / str(i)
        units = root / "units"
        units.mkdir(parents=True)
        out = files(plan, "systemd")
        for path, text in out.items():
            if path.startswith("/etc/systemd/system/"):
                dest = units / path.removeprefix("/etc/systemd/system/")
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(text)
        for exe, unit_name in ((SCRIPT, "hostc-tuning.service"), (VERIFY, "hostc-verify.service")):
            if exe in out:
                script = root / unit_name.removesuffix(".service")
                script.write_text(out[exe])
                script.chmod(0o755)
                unit = units / unit_name
                unit.write_text(unit.read_text().replace(f"ExecStart={exe}", f"ExecStart={script}"))
        names = [p.name for p in units.glob("*.service")]
        for w in plan.workloads:  # a stub for the workload's own unit
            (units / w.unit).write_text(
                "[Unit]\nDescription=stub\n[Service]\nExecStart=/bin/true\n"
            )
            names.append(w.unit)
        env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:", "SYSTEMD_LOG_LEVEL": "notice"}
        r = subprocess.run(
            [tool, "verify", "--man=no", *(str(units / n) for n in sorted(set(names)))],
            capture_output=True, env=env, check=False,
        )  # fmt: skip
        assert r.returncode == 0 and r.stderr == b"", r.stderr.decode()
        checked += 1
    assert checked >= 2


def test_shellcheck_accepts_the_tuning_script(tmp_path: Path) -> None:
    tool = need_tool("shellcheck")
    n = 0
    for i, plan in enumerate(_example_plans()):
        out = files(plan, "systemd") if api.targets()["systemd"].applies(plan) is None else {}
        if SCRIPT not in out:
            continue
        f = tmp_path / f"hostc-tuning-{i}"
        f.write_text(out[SCRIPT])
        r = subprocess.run([tool, "-s", "sh", str(f)], capture_output=True, check=False)
        assert r.returncode == 0, r.stdout.decode()
        n += 1
    assert n >= 2


def test_tuning_script_runs_and_is_idempotent(tmp_path: Path) -> None:
    """Against a fake tree: missing paths are skipped with exit 0, a second run sets nothing."""
    plan, _ = api.compile_file(ROOT / "examples/h100-4gpu-inference/node.toml")
    text = files(plan, "systemd")[SCRIPT]
    fake = tmp_path / "sys/kernel/mm/transparent_hugepage"
    fake.mkdir(parents=True)
    (fake / "defrag").write_text("always defer [madvise] defer+madvise never\n")
    text = text.replace("/sys/", f"{tmp_path}/sys/")
    script = tmp_path / "run.sh"
    script.write_text(text)
    first = subprocess.run(["sh", str(script)], capture_output=True, check=False)
    assert first.returncode == 0, first.stderr
    assert b"set " in first.stdout and b"skip " in first.stdout
    (fake / "defrag").write_text("always defer [defer+madvise] madvise never\n")
    second = subprocess.run(["sh", str(script)], capture_output=True, check=False)
    assert second.returncode == 0 and b"hostc-tuning: set" not in second.stdout


def test_dgx_example_pins_each_gpu_pair_to_its_own_pix_nics() -> None:
    """The DGX-like example: one server per GPU pair, each with the NICs on its PCIe switch."""

    plan, _ = api.compile_file(ROOT / "examples/dgx-h100-inference/node.toml")
    got = {w.name: (w.gpus, w.nics, w.nodes) for w in plan.workloads}
    assert got == {
        "serve-a": (("GPU0", "GPU1"), ("mlx5_0", "mlx5_1"), (0,)),
        "serve-b": (("GPU2", "GPU3"), ("mlx5_2", "mlx5_3"), (0,)),
        "serve-c": (("GPU4", "GPU5"), ("mlx5_4", "mlx5_5"), (1,)),
        "serve-d": (("GPU6", "GPU7"), ("mlx5_6", "mlx5_7"), (1,)),
    }
    for w in plan.workloads:
        assert dict(w.env)["NCCL_IB_HCA"] == "=" + ",".join(w.nics)
        assert w.cpus <= plan.partition.isolated


@pytest.mark.parametrize("owner", [m.RuntimeOwner.SYSTEMD, m.RuntimeOwner.TUNED])
def test_every_sysfs_row_is_carried_observed_and_explained_from_its_row_alone(
    owner: m.RuntimeOwner,
) -> None:
    """Issue 33 §5.1: a sysfs knob is its row.  Whatever rows the Plan holds in
    `runtime.tunables`, the runtime owner's file writes each (hostc-tuning into the row's
    file; TuneD by the row's option or under [sysfs] by its file), hostc-verify and audit
    observe each by its row's name, and explain finds its line, with no code naming it."""
    from hostc.audit.observe import expectations
    from hostc.report.explain import settings as catalog

    plan = compile_(
        spec(runtime=m.Runtime(owner), host=m.Host(name="t", role=m.Role.INFERENCE, os="rhel-9.4"))
    )
    assert {v.setting for v in plan.runtime.tunables} >= {t.GOVERNOR, t.EPP, t.THP_DEFRAG}
    out = files(plan, "systemd", *(["tuned"] if owner is m.RuntimeOwner.TUNED else []))
    carrier = SCRIPT if owner is m.RuntimeOwner.SYSTEMD else next(p for p in out if "tuned" in p)
    text = out[carrier]
    observed = {e.setting for e in expectations(plan)}
    entries = {e.name: e for e in catalog(plan)}
    for v in plan.runtime.tunables:
        s, f = v.setting, v.setting.sysfs
        assert f is not None and s.family is Family.SYSFS
        if owner is m.RuntimeOwner.SYSTEMD:
            assert f"put {v.shown} {f.path}" in text or f.path in text, s.name
        else:
            spelled = (s.tuned[1] if s.tuned else f.path) + f"={v.shown}"
            assert spelled in text or f"{f.path}={v.shown}" in text, s.name
        assert s.name in observed and f"{s.name} " in out.get(VERIFY, "") + " ", s.name
        lines = [ln for ln in text.splitlines() if entries[s.name].carries(carrier, ln)]
        assert lines, s.name  # hostc-tuning's loop names the file, its body the value
        assert owner is m.RuntimeOwner.SYSTEMD or any(v.shown in ln for ln in lines), lines
