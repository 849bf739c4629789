"""The kernel command line and its carriers.

IOMMU and PCIe ACS for GPUDirect, the tick only where one thread polls, backported
P-state modes, idle drivers the kernel was built without, the GRUB variable that wins,
and grubby's persistence on RHEL.  Each test fails on the output before the fix.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import attrs
import pytest
from test_runtime import TUNED, compile_, files, h100, spec

from hostc import api
from hostc.diagnostics import HostcError
from hostc.plan.kernelargs import KernelArg, cmdline, kernel_args
from hostc.plan.model import BootCarrier
from hostc.report import plan_view
from hostc.settings import table as t
from hostc.spec import model as m
from hostc.topology.model import OsRelease

from conftest import IN_CI, ROOT, need_tool, shared


def _args(plan: object) -> list[str]:
    return cmdline(plan).split()  # type: ignore[arg-type]


def _warnings(s: m.HostSpec, topo: object = None) -> list[str]:
    _, diags = api.compile_plan(s, topo or h100(), spec_file="t.toml")  # type: ignore[arg-type]
    return [d.message for d in diags]


# --- IOMMU and ACS (GPUDirect RDMA) ---


def test_iommu_pt_on_intel_does_not_force_vt_d_on_but_turns_acs_redirect_off() -> None:
    """K1: VT-d may be on anyway (DMAR opt-in, a DEFAULT_ON kernel, an admin) and firmware
    may set ACS itself; the argument is harmless with the IOMMU off, as NVIDIA's profiles."""
    plan = compile_(spec(kernel=m.Kernel(iommu=m.IommuMode.PT)))
    assert plan.host.cpu_vendor == "intel" and not plan.host.intel_iommu_default_on
    assert _args(plan)[-2:] == ["iommu=pt", "pci=disable_acs_redir=pci:0:0"]
    assert not any(a.startswith("intel_iommu") for a in _args(plan))
    io = plan.runtime.iommu
    assert io is not None and io.acs_off is not None
    assert "VT-d may be on without intel_iommu=on" in io.acs_off.why


@pytest.mark.parametrize("vendor", ["intel", "amd"])
def test_gpus_and_rdma_nics_on_one_host_get_iommu_pt_and_acs_off_without_a_pinned_workload(
    vendor: str,
) -> None:
    """W6: the trigger is the hardware (the condition that loads nvidia-peermem), not a
    workload handed NCCL_IB_HCA: the EPYC training box pins nothing."""
    plan = compile_(spec(cpu=m.Cpu(), workload=[]), h100(cpu_vendor=vendor))
    assert not plan.workloads
    assert _args(plan)[-2:] == ["iommu=pt", "pci=disable_acs_redir=pci:0:0"]
    assert plan.runtime.iommu is not None
    assert "GPUs and RDMA NICs on one host" in plan.runtime.iommu.reason.why
    nogpu = compile_(spec(cpu=m.Cpu(), workload=[]), h100(cpu_vendor=vendor, gpus_per_node=0))
    assert nogpu.runtime.iommu is None
    epyc = api.compile_file(ROOT / "examples/epyc-1s-training/node.toml")[0]
    assert {"iommu=pt", "pci=disable_acs_redir=pci:0:0"} <= set(_args(epyc))


@pytest.mark.parametrize("vendor", ["intel", "amd"])
def test_rdma_workload_gets_iommu_pass_through_on_both_vendors(vendor: str) -> None:
    plan = compile_(spec(), h100(cpu_vendor=vendor))
    assert plan.workloads[0].env and "iommu=pt" in _args(plan)
    assert "intel_iommu=on" not in _args(plan)
    assert plan.runtime.iommu is not None
    assert "GPUDirect RDMA" in plan.runtime.iommu.reason.why


@pytest.mark.parametrize(
    ("kernel", "warned"), [("6.8.0-1013-nvidia-64k", True), (None, True), ("6.11.0-1", False)]
)
def test_grace_iommu_passthrough_says_what_it_does_and_warns_before_linux_6_11(
    kernel: str | None, warned: bool
) -> None:
    """Review §2 (Grace): off x86 the spec's IOMMU choice is iommu.passthrough=1; its
    reason says what the kernel does with it, and hostc check warns where arm-smmu-v3
    cannot give a pass-through GPU a PASID (NVIDIA's nvidia-tuned sets 0 there)."""
    grace = attrs.evolve(h100(), arch="aarch64", cpu_vendor="arm", kernel=kernel)
    s = spec(kernel=m.Kernel(iommu=m.IommuMode.PT))
    plan = compile_(s, grace)
    (arg,) = (a for a in kernel_args(plan) if a.key.startswith("iommu"))
    assert (arg.key, arg.value) == ("iommu.passthrough", "1")
    assert "makes DMA bypass the IOMMU by default" in arg.reason.why
    warnings = [w for w in _warnings(s, grace) if "nvidia_uvm" in w]
    assert bool(warnings) is warned, warnings
    on_x86 = _warnings(s, attrs.evolve(h100(), kernel=kernel))
    assert not [w for w in on_x86 if "nvidia_uvm" in w]


def test_no_iommu_preset_without_rdma_nics() -> None:
    plan = compile_(spec(), h100(nics_per_node=0))
    assert plan.runtime.iommu is None and "iommu=pt" not in _args(plan)


def test_iommu_forced_on_turns_acs_redirect_off_and_warns() -> None:
    s = spec(kernel=m.Kernel(iommu=m.IommuMode.ON))
    args = _args(compile_(s))
    assert args[-3:] == ["iommu=pt", "intel_iommu=on", "pci=disable_acs_redir=pci:0:0"]
    assert any("merges IOMMU groups" in w for w in _warnings(s))
    amd = _args(compile_(s, h100(cpu_vendor="amd")))
    assert "intel_iommu=on" not in amd and "pci=disable_acs_redir=pci:0:0" in amd


def test_iommu_on_before_4_19_keeps_redirect_and_says_so() -> None:
    s = spec(kernel=m.Kernel(iommu=m.IommuMode.ON))
    plan = compile_(s, h100(kernel="4.18.0-553.el8"))
    assert not any(a.startswith("pci=") for a in _args(plan))
    assert any("predates pci=disable_acs_redir" in w for w in _warnings(s, h100(kernel="4.18.0")))


def test_plan_says_acs_decides_gpudirect_bandwidth() -> None:
    text = plan_view.render(compile_(spec()))
    assert "PCIe ACS decides GPUDirect RDMA bandwidth" in text
    none = plan_view.render(compile_(spec(), h100(nics_per_node=0)))
    assert "PCIe ACS" not in none


# --- nohz_full only where one thread polls per CPU ---


def test_default_isolation_leaves_the_tick_on_and_says_why() -> None:
    plan = compile_(spec())
    args = _args(plan)
    assert not any(a.startswith("nohz_full") for a in args)
    assert {"isolcpus", "rcu_nocbs", "irqaffinity"} <= {a.split("=")[0] for a in args}
    left = {x.setting: x.reason.why for x in plan.left_out}
    assert "exactly one runnable task" in left["nohz_full"]


def test_busy_poll_workload_gets_nohz_full_on_its_cpus_only() -> None:
    s = spec(
        cpu=m.Cpu(housekeeping_per_node=2, isolate="rest"),
        workload=[
            m.Workload("poller", ["GPU0", "GPU1"], busy_poll=True),
            m.Workload("vllm", ["GPU2", "GPU3"]),
        ],
    )
    plan = compile_(s)
    nohz = plan.isolation_by("nohz_full")
    assert nohz is not None and nohz.cpus == plan.workloads[0].cpus
    assert f"nohz_full={plan.workloads[0].cpus}" in _args(plan)
    assert str(nohz.reason.source) == "workload[0].busy_poll"
    assert "no_hz.rst" in nohz.reason.why
    assert "nohz_full" not in {x.setting for x in plan.left_out}


def test_explicit_nohz_full_mechanism_still_covers_every_isolated_cpu() -> None:
    s = spec(cpu=m.Cpu(housekeeping_per_node=2, isolate="workload", mechanisms=["nohz_full"]))
    plan = compile_(s)
    assert f"nohz_full={plan.partition.isolated}" in _args(plan)


def test_busy_poll_is_in_the_schema() -> None:
    from hostc.api import schemas as schema

    workload = schema.build("node")["$defs"]["Workload"]["properties"]
    assert workload["busy_poll"]["type"] == "boolean"


def test_shared_cpus_are_fine_while_the_tick_stays_on() -> None:
    shared = spec(workload=[m.Workload("a", ["GPU0"], share_cpus=True), m.Workload("b", ["GPU1"])])
    assert not any("share isolated CPUs" in w for w in _warnings(shared))


# --- backported amd_pstate (RHEL 9.3+) ---


@pytest.mark.parametrize(
    ("os", "kernel", "want"),
    [
        ("rhel-9.3", (5, 14), (6, 4)),
        ("rocky-9.4", (5, 14), (6, 4)),
        ("rhel-9.2", (5, 14), (5, 14)),
        ("rhel-8.10", (4, 18), (4, 18)),
        ("ubuntu-22.04", (5, 15), (5, 15)),
        ("rhel-9.4", (6, 8), (6, 8)),
        (None, (5, 14), (5, 14)),
        ("rhel-9.4", None, None),
    ],
)
def test_amd_pstate_backport_table(
    os: str | None, kernel: tuple[int, int] | None, want: tuple[int, int] | None
) -> None:
    from hostc.knowledge import distro as osfacts

    assert osfacts.feature_release("amd_pstate", os, kernel) == want
    assert all(osfacts.KERNEL_BACKPORTS.sources().values())  # each fact names its source


def test_rhel_9_3_epyc_gets_amd_pstate_active_and_epp() -> None:
    amd = {"cpu_vendor": "amd", "kernel": "5.14.0-427.13.1.el9_4.x86_64"}
    plan = compile_(spec(host=m.Host(name="t", role=m.Role.INFERENCE, os="rhel-9.4")), h100(**amd))
    assert "amd_pstate=active" in _args(plan)
    assert plan.runtime.tunable(t.EPP) is not None
    old = compile_(spec(host=m.Host(name="t", role=m.Role.INFERENCE, os="rhel-9.2")), h100(**amd))
    assert "amd_pstate=active" not in _args(old) and old.runtime.tunable(t.EPP) is None
    ok = spec(
        host=m.Host(name="t", role=m.Role.INFERENCE, os="rhel-9.4"),
        cpufreq=m.Cpufreq(pstate=m.PstateMode("guided")),
    )
    assert not any("amd_pstate=guided needs" in w for w in _warnings(ok, h100(**amd)))


# --- intel_idle on kernels built without it ---


def _intel_idle(config: dict[str, str]) -> list[KernelArg]:
    """Boot-time caps chosen explicitly (the default limits C-states at runtime)."""
    topo = attrs.evolve(h100(), kernel_config=config)
    s = spec()
    s = attrs.evolve(s, kernel=attrs.evolve(s.kernel, cstates_at=m.CStatesAt.BOOT))
    return [a for a in kernel_args(compile_(s, topo)) if a.key.endswith("max_cstate")]


def test_kernel_without_intel_idle_gets_only_processor_max_cstate() -> None:
    args = _intel_idle({"CONFIG_INTEL_IDLE": "n"})
    assert [str(a) for a in args] == ["processor.max_cstate=1"]
    assert "acpi_idle" in args[0].reason.why


def test_kernel_with_intel_idle_keeps_both_without_a_caveat() -> None:
    args = _intel_idle({"CONFIG_INTEL_IDLE": "y"})
    assert [a.key for a in args] == ["intel_idle.max_cstate", "processor.max_cstate"]
    assert "CONFIG_INTEL_IDLE" not in args[0].reason.why


def test_unknown_idle_driver_is_said_not_guessed() -> None:
    args = _intel_idle({})
    assert [a.key for a in args] == ["intel_idle.max_cstate", "processor.max_cstate"]
    assert "does not record CONFIG_INTEL_IDLE" in args[0].reason.why


def test_probe_reads_config_intel_idle(tmp_path: Path) -> None:
    from hostc.topology.importers.sysfs import probe

    from sysfs_fixtures import build, smt_host

    root = build(smt_host(1, 2, 2, 1), tmp_path)
    config = root / "boot/config-6.8.0-45-generic"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("CONFIG_SMP=y\n# CONFIG_INTEL_IDLE is not set\n")
    assert probe(root).kernel_config == {"CONFIG_INTEL_IDLE": "n"}


# --- the kernel-argument carrier when TuneD owns the runtime settings ---


def test_tuned_owner_on_ubuntu_keeps_grub_as_the_argument_carrier() -> None:
    plan = compile_(spec(runtime=m.Runtime(m.RuntimeOwner.TUNED)))
    assert plan.boot.carrier is BootCarrier.GRUB and "#528" in plan.boot.reason.why
    out = files(plan, "tuned", "grub")
    assert "\n[bootloader]\n" not in out[TUNED] and "cmdline_hostc" not in out[TUNED]
    assert "isolcpus=managed_irq" in out["/etc/default/grub.d/90-hostc.cfg"]


def test_tuned_owner_on_rhel_still_carries_arguments_in_bootloader() -> None:
    rhel = OsRelease("rhel", "9.4", ["fedora"])
    plan = compile_(spec(runtime=m.Runtime(m.RuntimeOwner.TUNED)), h100(os=rhel))
    assert plan.boot.carrier is BootCarrier.TUNED
    text = next(iter(files(plan, "tuned").values()))
    assert f"cmdline_hostc={cmdline(plan)}" in text


# --- GRUB: hostc's arguments last on normal entries, none on recovery ---


def _sandbox() -> Path:
    tool = shared("tools", "grub-mkconfig-sandbox")
    need_tool("grub-mkconfig")
    need_tool("unshare")
    if os.geteuid() != 0 or not Path("/etc/grub.d/10_linux").exists():
        why = "the sandbox needs root and /etc/grub.d/10_linux (grub-common)"
        pytest.fail(why) if IN_CI else pytest.skip(why)
    return tool


def test_grub_puts_hostc_args_after_the_distro_default_and_off_recovery(tmp_path: Path) -> None:
    tool = _sandbox()
    plan = compile_(spec())
    (tmp_path / "90-hostc.cfg").write_text(files(plan, "grub")["/etc/default/grub.d/90-hostc.cfg"])
    distro = "quiet splash transparent_hugepage=always"
    r = subprocess.run([tool, str(tmp_path), distro], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    entries = [ln.split(" ro ", 1)[1].split() for ln in r.stdout.splitlines() if "\tlinux\t" in ln]
    normal = [e for e in entries if "single" not in e]
    recovery = [e for e in entries if "single" in e]
    assert normal and recovery
    for args in normal:
        assert args == [*distro.split(), *_args(plan)]  # hostc's THP comes after `always`
    for args in recovery:
        assert not {a.split("=")[0] for a in args} & {"isolcpus", "rcu_nocbs", "irqaffinity"}
        assert "hugepages=0:16" not in args


# --- RHEL: grubby, plus where new boot entries take their options from ---

FAKE_GRUBBY = """#!/usr/bin/env python3
import os, pathlib, re, sys
args = sys.argv[1:]
entries = sorted(pathlib.Path(os.environ["BLS"]).glob("*.conf"))
if args == ["--info=ALL"]:
    for i, e in enumerate(entries):
        print(f'index={i}\\nkernel="/boot/{e.stem}"\\nargs="{e.read_text().strip()}"')
    sys.exit(0)
flag, _, words = args[1].partition("=")
for e in entries:
    opts = e.read_text().split()
    if flag == "--remove-args":
        opts = [o for o in opts if o not in words.split()]
    else:
        for w in words.split():
            key = w.split("=")[0]
            if os.environ.get("FOLD"):  # old grubby: the key matched as a substring
                opts = [o for o in opts if key not in o.split("=")[0]]
            else:
                opts = [o for o in opts if o.split("=")[0] != key or o == w]
            opts += [] if w in opts else [w]
    e.write_text(" ".join(opts) + "\\n")
"""


def _kargs(tmp_path: Path, fold: bool = False) -> tuple[subprocess.CompletedProcess[str], Path]:
    rhel = OsRelease("rhel", "9.4", ["fedora"])
    s = spec(hugepages=m.Hugepages(size="1G", per_node={0: 4}))
    plan = compile_(s, h100(os=rhel))
    bindir, bls, root = tmp_path / "bin", tmp_path / "bls", tmp_path / "root"
    for d in (bindir, bls, root / "etc/default", root / "proc"):
        d.mkdir(parents=True, exist_ok=True)
    (bindir / "grubby").write_text(FAKE_GRUBBY)
    (bindir / "grubby").chmod(0o755)
    for ver in ("5.14.0-427", "0-rescue"):
        (bls / f"{ver}.conf").write_text("root=/dev/vda1 ro crashkernel=auto\n")
    (root / "proc/cmdline").write_text("BOOT_IMAGE=(hd0)/vmlinuz root=/dev/vda1 ro quiet\n")
    (root / "etc/default/grub").write_text('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="ro quiet"\n')
    script = tmp_path / "hostc-kargs"
    script.write_text(files(plan, "grubby")["/usr/local/sbin/hostc-kargs"])
    env = {
        **os.environ,
        "PATH": f"{bindir}:{os.environ['PATH']}",
        "HOSTC_ROOT": str(root),
        "BLS": str(bls),
        "FOLD": "1" if fold else "",
    }
    r = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, timeout=60)
    return r, root


def test_grubby_script_persists_args_for_new_kernels(tmp_path: Path) -> None:
    r, root = _kargs(tmp_path)
    assert r.returncode == 0, r.stderr
    state = (root / "etc/hostc/kargs").read_text().split()
    assert "default_hugepagesz=1G" in state and "hugepagesz=1G" in state
    kcmd = (root / "etc/kernel/cmdline").read_text().split()
    assert kcmd == ["root=/dev/vda1", "ro", "quiet", *state]  # BOOT_IMAGE= dropped
    grub = (root / "etc/default/grub").read_text()
    assert f'GRUB_CMDLINE_LINUX="ro quiet {" ".join(state)}"' in grub
    assert grub.startswith("GRUB_TIMEOUT=5\n")
    # a second run replaces its own words and keeps the distro's
    r, root = _kargs(tmp_path)
    assert r.returncode == 0, r.stderr
    assert (root / "etc/kernel/cmdline").read_text().split() == kcmd


def test_grubby_script_fails_when_an_entry_lacks_an_argument(tmp_path: Path) -> None:
    r, _ = _kargs(tmp_path, fold=True)
    assert r.returncode != 0
    assert "boot entries lack: default_hugepagesz=1G" in r.stderr


# --- opt-ins: skew_tick, init_on_alloc (never defaults) ---


def test_skew_tick_and_init_on_alloc_are_off_by_default() -> None:
    plan = compile_(spec())
    assert not any(a.startswith(("skew_tick", "init_on_alloc")) for a in _args(plan))
    assert "skew_tick" in {x.setting for x in plan.left_out}


def test_skew_tick_opt_in_with_its_documented_reason() -> None:
    plan = compile_(spec(kernel=m.Kernel(skew_tick=True)))
    [arg] = [a for a in kernel_args(plan) if a.key == "skew_tick"]
    assert str(arg) == "skew_tick=1" and "jitter sensitive" in arg.reason.why
    assert "skew_tick" not in {x.setting for x in plan.left_out}


def test_init_on_alloc_off_is_an_opt_in_trade_off() -> None:
    plan = compile_(spec(kernel=m.Kernel(init_on_alloc=False)))
    [arg] = [a for a in kernel_args(plan) if a.key == "init_on_alloc"]
    assert str(arg) == "init_on_alloc=0" and "security trade-off" in arg.reason.why
    old = spec(kernel=m.Kernel(init_on_alloc=False))
    assert any("ignores it" in w for w in _warnings(old, h100(kernel="4.19.0-26-amd64")))
    with pytest.raises(HostcError, match="derived by hostc"):
        compile_(spec(kernel=m.Kernel(extra_args=["skew_tick=1"])))


@pytest.mark.parametrize(
    ("fact", "value"),
    [
        ("ACS_REDIR_OFF_SINCE", (4, 19)),  # commit aaca43fda742
        ("ACS_ALL_DEVICES", "pci:0:0"),  # pci_dev_str_match: 0 matches any ID
        ("INTEL_IDLE_CONFIG", "CONFIG_INTEL_IDLE"),
        ("INIT_ON_ALLOC_SINCE", (5, 3)),  # commit 6471384af2a6
    ],
)
def test_kernel_fact_table(fact: str, value: object) -> None:
    from hostc.knowledge import kernel as kernelfacts

    assert getattr(kernelfacts, fact) == value


@pytest.mark.parametrize(("kernel", "warned"), [("5.2.0", True), ("5.3.0", False)])
def test_init_on_alloc_boundary(kernel: str, warned: bool) -> None:
    s = spec(kernel=m.Kernel(init_on_alloc=False))
    assert any("ignores it" in w for w in _warnings(s, h100(kernel=kernel))) is warned


# --- hugepages before 5.16: the plan says the per-node intent is not kept ---


@pytest.mark.parametrize(("kernel", "lost"), [("5.15.0-105-generic", True), ("6.8.0", False)])
def test_total_hugepages_reason_says_when_node_shares_are_not_pinned(
    kernel: str, lost: bool
) -> None:
    plan = compile_(spec(hugepages=m.Hugepages(size="1G", total=8)), h100(kernel=kernel))
    [pool] = plan.hugepages
    assert ("no node's share is pinned" in pool.reason.why) is lost
    assert ("no node's share is pinned" in plan_view.render(plan)) is lost


def test_busy_poll_without_isolation_is_warned_not_silent() -> None:
    poll = [m.Workload("poller", ["GPU0", "GPU1"], busy_poll=True)]
    s = spec(workload=poll, cpu=m.Cpu(isolate="none"))
    assert any("keep the timer tick" in w for w in _warnings(s))
    cpu = m.Cpu(housekeeping_per_node=2, isolate="workload", mechanisms=["isolcpus"])
    listed = spec(workload=poll, cpu=cpu)
    assert any("leaves nohz_full out" in w for w in _warnings(listed))


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_grub_dropin_names_keys_the_admin_already_set(shell: str, tmp_path: Path) -> None:
    path = tmp_path / "90-hostc.cfg"
    plan = compile_(spec())
    path.write_text(files(plan, "grub")["/etc/default/grub.d/90-hostc.cfg"])
    run = [
        need_tool(shell),
        "-c",
        'GRUB_CMDLINE_LINUX="console=ttyS0"\n'
        'GRUB_CMDLINE_LINUX_DEFAULT="quiet transparent_hugepage=always iommu=off"\n'
        f'. "{path}"\necho "${{hostc_key-unset}}"',
    ]
    r = subprocess.run(run, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == "unset"  # nothing leaks into grub-mkconfig
    named = sorted(ln.split()[1] for ln in r.stderr.splitlines())
    assert named == ["iommu", "transparent_hugepage"]
    quiet = subprocess.run(
        [need_tool(shell), "-c", f'GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"\n. "{path}"'],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_amd_iommu_is_on_anyway_so_acs_redirect_goes_off_with_pt() -> None:
    plan = compile_(spec(), h100(cpu_vendor="amd"))
    assert _args(plan)[-2:] == ["iommu=pt", "pci=disable_acs_redir=pci:0:0"]
    [acs] = [a for a in kernel_args(plan) if a.key == "pci"]
    assert "AMD IOMMU is on by default" in acs.reason.why
    old = compile_(spec(), h100(cpu_vendor="amd", kernel="4.18.0-553.el8"))
    assert "pci=disable_acs_redir=pci:0:0" not in _args(old)
    assert old.runtime.acs is not None and "redirect stays on" in old.runtime.acs.why


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ("y", "turns the Intel IOMMU on by itself"),
        ("n", "VT-d may be on"),
        (None, "VT-d may be on"),
    ],
)
def test_intel_kernel_gets_acs_redirect_off_with_the_reason_its_build_gives(
    config: str | None, why: str
) -> None:
    kc = {} if config is None else {"CONFIG_INTEL_IOMMU_DEFAULT_ON": config}
    plan = compile_(spec(), attrs.evolve(h100(), kernel_config=kc))
    [acs] = [a for a in kernel_args(plan) if a.key == "pci"]
    assert str(acs) == "pci=disable_acs_redir=pci:0:0" and why in acs.reason.why
    assert "intel_iommu=on" not in _args(plan)


def test_probe_reads_config_intel_iommu_default_on(tmp_path: Path) -> None:
    from hostc.topology.importers.sysfs import probe

    from sysfs_fixtures import build, smt_host

    root = build(smt_host(1, 2, 2, 1), tmp_path)
    config = root / "boot/config-6.8.0-45-generic"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("CONFIG_INTEL_IOMMU_DEFAULT_ON=y\n")
    assert probe(root).kernel_config == {"CONFIG_INTEL_IOMMU_DEFAULT_ON": "y"}
