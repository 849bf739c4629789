"""Right on every real host: kernel release, OS family and CPU vendor decide what is emitted.

Each test pins what one host fact changes in the output; the table tests run every
(vendor, OS family, kernel) combination over the examples.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.diagnostics import HostcError, Severity
from hostc.knowledge import kernel as kernelfacts
from hostc.plan.kernelargs import cmdline
from hostc.plan.model import Distro, OsFamily, Plan
from hostc.report import plan_view
from hostc.settings import Family
from hostc.spec import model as m
from hostc.spec import presets
from hostc.topology.model import OsRelease, Topology

from conftest import ROOT, need_tool
from topogen import machine

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/node.toml"))

UBUNTU = OsRelease("ubuntu", "24.04", ["debian"])
RHEL9 = OsRelease("rhel", "9.4", ["fedora"])
COREOS = OsRelease("fedora-coreos", "40", ["fedora"])


def host(
    vendor: str = "intel", kernel: str = "6.8.0-45-generic", os: OsRelease = UBUNTU
) -> Topology:
    return machine(
        packages=2,
        cores_per_node=16,
        smt=2,
        memory_mib=262144,
        gpus_per_node=2,
        nics_per_node=1,
        cpu_vendor=vendor,
        kernel=kernel,
        os=os,
    )


def spec(**kw: object) -> m.HostSpec:
    h = kw.pop("host", m.Host(name="t", role=m.Role.INFERENCE))
    return m.HostSpec(host=h, **kw)  # type: ignore[arg-type]


def isolating(busy_poll: bool = True, **kw: object) -> m.HostSpec:
    return spec(
        workload=[m.Workload("serve", ["GPU0", "GPU1"], busy_poll=busy_poll)],
        cpu=m.Cpu(housekeeping_per_node=1, isolate="workload", **kw),  # type: ignore[arg-type]
    )


def plan_of(s: m.HostSpec, topo: Topology) -> tuple[Plan, list[str]]:
    plan, warnings = api.compile_plan(s, topo)
    return plan, [f"{w.path}: {w.message}" for w in warnings]


def errors_of(s: m.HostSpec, topo: Topology) -> list[str]:
    with pytest.raises(HostcError) as e:
        api.compile_plan(s, topo)
    return [f"{d.path}: {d.message}" for d in e.value.errors]


# 1. isolcpus keeps load balancing unless the spec asks for `domain`


def test_isolcpus_defaults_to_managed_irq_without_domain() -> None:
    plan, warnings = plan_of(isolating(), host())
    assert "isolcpus=managed_irq,1-15,33-47 " in cmdline(plan) + " "
    assert "domain" not in cmdline(plan)
    assert not [w for w in warnings if "domain" in w]


def test_domain_only_when_asked_and_then_warned() -> None:
    plan, warnings = plan_of(isolating(isolcpus_flags=["managed_irq", "domain"]), host())
    assert "isolcpus=managed_irq,domain,1-15,33-47" in cmdline(plan)
    assert any(w.startswith("cpu.isolcpus_flags: `domain` removes") for w in warnings)


def test_empty_flag_list_is_refused_because_bare_isolcpus_means_domain() -> None:
    assert errors_of(isolating(isolcpus_flags=[]), host()) == [
        "cpu.isolcpus_flags: an empty flag list makes a bare isolcpus=, which the kernel "
        "reads as `domain`"
    ]


# 8. managed_irq needs 5.6; older kernels drop the whole parameter


def test_old_kernel_leaves_isolcpus_out_instead_of_voiding_it() -> None:
    plan, warnings = plan_of(isolating(), host(kernel="4.19.0-26-amd64"))
    assert "isolcpus=" not in cmdline(plan)
    assert "nohz_full=1-15,33-47" in cmdline(plan)
    assert any("predates isolcpus' managed_irq flag (5.6)" in w for w in warnings)


def test_old_kernel_with_explicit_managed_irq_is_refused() -> None:
    errs = errors_of(isolating(isolcpus_flags=["managed_irq"]), host(kernel="4.15.0-20-generic"))
    assert errs == [
        "cpu.isolcpus_flags: kernel 4.15 predates isolcpus' managed_irq flag (5.6) and would "
        "ignore the whole isolcpus= parameter"
    ]


# 2. nofile above fs.nr_open


def test_nofile_above_nr_open_raises_nr_open_in_the_same_build() -> None:
    plan, _ = plan_of(spec(limits=m.Limits(nofile=2097152)), host())
    nr = {s.key: s for s in plan.sysctls}["fs.nr_open"]
    assert nr.value == "2097152"
    assert str(nr.reason.source) == "limits.nofile"


def test_nofile_at_the_default_ceiling_needs_no_nr_open() -> None:
    plan, _ = plan_of(spec(), host())
    assert "fs.nr_open" not in {s.key for s in plan.sysctls}


def test_spec_nr_open_below_nofile_is_refused() -> None:
    s = spec(limits=m.Limits(nofile=2097152), sysctl={"fs.nr_open": 1048576})
    assert errors_of(s, host()) == [
        'sysctl."fs.nr_open": fs.nr_open 1048576 is below limits.nofile 2097152: setrlimit '
        "fails with EPERM and pam_limits refuses ssh, sudo and login"
    ]


def test_nofile_beyond_what_the_kernel_can_take_is_refused() -> None:
    errs = errors_of(spec(limits=m.Limits(nofile=kernelfacts.NR_OPEN_MAX + 1)), host())
    assert any(e.startswith("limits.nofile:") for e in errs)


def test_services_get_a_soft_nofile_of_1024() -> None:
    plan, _ = plan_of(spec(limits=m.Limits(nofile=2097152)), host())
    text = {a.path: a.text for a in api.emit(plan, ["limits"])}
    assert (
        "DefaultLimitNOFILE=1024:2097152\n"
        in text["/etc/systemd/system.conf.d/90-hostc-limits.conf"]
    )


# 3. RHEL-family hosts: grubby, not a GRUB drop-in


def test_rhel_gets_the_grubby_script_and_no_grub_dropin() -> None:
    plan, _ = plan_of(isolating(), host(os=RHEL9))
    assert plan.host.os_family is OsFamily.RHEL
    targets = {a.target for a in api.emit(plan, ["all"])}
    assert "grub" not in targets and "grubby" in targets
    with pytest.raises(HostcError) as e:
        api.emit(plan, ["grub"])
    assert "does not read /etc/default/grub.d" in e.value.errors[0].message


def test_debian_gets_the_grub_dropin_and_no_grubby() -> None:
    plan, _ = plan_of(isolating(), host(os=UBUNTU))
    targets = {a.target for a in api.emit(plan, ["all"])}
    assert "grub" in targets and "grubby" not in targets


def test_spec_os_overrides_the_snapshot() -> None:
    s = attrs.evolve(isolating(), host=m.Host(name="t", role=m.Role.INFERENCE, os="rhel-9.4"))
    plan, _ = plan_of(s, host(os=UBUNTU))
    assert plan.host.os == Distro("rhel", "9.4") and plan.host.os_family is OsFamily.RHEL


def _grubby_run(tmp_path: Path, script: str) -> tuple[list[str], str]:
    """Run the script against a stand-in grubby that edits fake BLS entries and logs calls."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    entries = tmp_path / "loader" / "entries"
    entries.mkdir(parents=True, exist_ok=True)
    for ver in ("5.14.0-427", "5.14.0-503"):
        f = entries / f"x-{ver}.conf"
        if not f.exists():
            f.write_text(f"title RHEL {ver}\noptions root=/dev/vda1 ro crashkernel=auto\n")
    fake = bindir / "grubby"
    fake.write_text(
        "#!/usr/bin/env python3\n"
        "import sys, pathlib, os\n"
        "args = sys.argv[1:]\n"
        "open(os.environ['GRUBBY_LOG'], 'a').write(' '.join(args) + '\\n')\n"
        "if args == ['--info=ALL']:\n"
        "    for i, e in enumerate(sorted(pathlib.Path(os.environ['BLS']).glob('*.conf'))):\n"
        "        opts = e.read_text().splitlines()[1].split(' ', 1)[1]\n"
        '        print(f\'index={i}\\nkernel="/boot/{e.stem}"\\nargs="{opts}"\')\n'
        "    sys.exit(0)\n"
        "assert args[0] == '--update-kernel=ALL'\n"
        "for e in sorted(pathlib.Path(os.environ['BLS']).glob('*.conf')):\n"
        "    lines = e.read_text().splitlines()\n"
        "    opts = lines[1].split()[1:]\n"
        "    if args[1].startswith('--remove-args='):\n"
        "        gone = set(args[1].split('=', 1)[1].split())\n"
        "        opts = [o for o in opts if o not in gone]\n"
        "    else:\n"
        "        opts += [o for o in args[1].split('=', 1)[1].split() if o not in opts]\n"
        "    lines[1] = 'options ' + ' '.join(opts)\n"
        "    e.write_text('\\n'.join(lines) + '\\n')\n"
    )
    fake.chmod(0o755)
    path = tmp_path / "hostc-kargs"
    path.write_text(script)
    path.chmod(0o755)
    log = tmp_path / "grubby.log"
    env = {
        **os.environ,
        "PATH": f"{bindir}:{os.environ['PATH']}",
        "HOSTC_ROOT": str(tmp_path / "root"),
        "GRUBBY_LOG": str(log),
        "BLS": str(entries),
    }
    r = subprocess.run(["sh", str(path)], env=env, capture_output=True, check=False)
    assert r.returncode == 0, r.stderr.decode()
    options = sorted(e.read_text().splitlines()[1] for e in entries.glob("*.conf"))
    return options, log.read_text()


def test_grubby_script_puts_the_plans_args_into_every_entry_and_replaces_its_own(
    tmp_path: Path,
) -> None:
    topo = host(os=RHEL9)
    first, _ = plan_of(isolating(), topo)
    script = next(a for a in api.emit(first, ["grubby"]))
    assert stat.S_IMODE(script.mode) == 0o755
    options, log = _grubby_run(tmp_path, script.text)
    want = f"options root=/dev/vda1 ro crashkernel=auto {cmdline(first)}"
    assert options == [want, want]
    assert "--remove-args" not in log and "--info=ALL" in log
    # a second build with another partition replaces hostc's arguments, keeps the distro's
    second, _ = plan_of(isolating(), attrs.evolve(topo))
    s2 = attrs.evolve(isolating(), cpu=m.Cpu(housekeeping_per_node=2, isolate="workload"))
    second, _ = plan_of(s2, topo)
    options, log = _grubby_run(tmp_path, next(iter(api.emit(second, ["grubby"]))).text)
    want = f"options root=/dev/vda1 ro crashkernel=auto {cmdline(second)}"
    assert options == [want, want]
    assert f"--remove-args={cmdline(first)}" in log
    # and running it again changes nothing
    again, _ = _grubby_run(tmp_path, next(iter(api.emit(second, ["grubby"]))).text)
    assert again == options


def test_grubby_script_passes_shellcheck(tmp_path: Path) -> None:
    tool = need_tool("shellcheck")
    plan, _ = plan_of(isolating(), host(os=RHEL9))
    path = tmp_path / "hostc-kargs"
    path.write_bytes(api.emit(plan, ["grubby"])[0].data)
    r = subprocess.run([tool, "-s", "sh", str(path)], capture_output=True, check=False)
    assert r.returncode == 0, r.stdout.decode()


# 4. presets never lower a kernel default on the target kernel

RELEASES = ["4.19.0", "5.4.0", "5.10.0", "5.15.0", "6.1.0", "6.8.0"]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("role", ["inference", "training", "general"])
@pytest.mark.parametrize("pinned", [False, True])
def test_no_preset_value_below_the_kernels_default(release: str, role: str, pinned: bool) -> None:
    version = tuple(int(x) for x in release.split(".")[:2])
    for vendor in ("intel", "amd"):
        ctx = presets.Context(role, "x86_64", vendor, version, pinned)  # type: ignore[arg-type]
        for r in presets.merge(ctx):
            if r.setting.family is not Family.SYSCTL:
                continue
            fact = r.setting  # its row holds what the kernel says about it
            assert fact.source, f"{r.name}: its row in settings/table.py names no kernel source"
            assert fact.exists(version), f"{r.name} does not exist on {release}"  # type: ignore[arg-type]
            default = fact.kernel_default(version)  # type: ignore[arg-type]
            if not fact.limit or default is None:
                continue
            values = tuple(int(v) for v in str(r.value).split())
            assert len(values) == len(default)
            assert all(v >= d for v, d in zip(values, default, strict=True)), (
                f"{role} on {release}: {r.name} = {r.value} lowers the default {default}"
            )


def test_inotify_preset_only_before_5_11() -> None:
    old, _ = plan_of(spec(), host(kernel="5.10.0-30-amd64"))
    new, _ = plan_of(spec(), host(kernel="5.11.0-1"))
    assert "fs.inotify.max_user_watches" in {s.key for s in old.sysctls}
    assert "fs.inotify.max_user_watches" not in {s.key for s in new.sysctls}


# 5. C-state arguments by CPU vendor


@pytest.mark.parametrize(
    ("vendor", "want"),
    [
        ("intel", "intel_idle.max_cstate=1 processor.max_cstate=1"),
        ("amd", "processor.max_cstate=1"),
    ],
)
def test_cstate_arguments_follow_the_vendor(vendor: str, want: str) -> None:
    boot = attrs.evolve(spec(), kernel=m.Kernel(cstates_at=m.CStatesAt.BOOT))
    plan, _ = plan_of(boot, host(vendor=vendor))
    line = cmdline(plan)
    assert want in line
    if vendor == "amd":
        assert "intel_idle" not in line


def test_no_cstate_arguments_off_x86() -> None:
    arm = attrs.evolve(host(vendor="arm"), arch="aarch64")
    plan, _ = plan_of(spec(), arm)
    assert "max_cstate" not in cmdline(plan)


# 6. sysctls the target kernel does not have


def test_sysctl_missing_on_the_target_kernel_is_a_warning_naming_the_release() -> None:
    s = spec(sysctl={"kernel.sched_min_granularity_ns": 10000000})
    _, warnings = plan_of(s, host(kernel="6.8.0-45-generic"))
    assert warnings == [
        'sysctl."kernel.sched_min_granularity_ns": kernel.sched_min_granularity_ns left '
        "/proc/sys in Linux 5.13; on kernel 6.8 `sysctl --system` logs 'cannot stat' and the "
        "setting does nothing"
    ]
    _, old = plan_of(s, host(kernel="5.10.0"))
    assert old == []


# 9. hugepage sizes


def test_unknown_hugepage_sizes_are_a_warning_with_the_arch_usual_sizes() -> None:
    power = attrs.evolve(host(), arch="ppc64", hugepage_sizes=[])
    s = spec(hugepages=m.Hugepages(size="1G", total=2))
    _, warnings = api.compile_plan(s, power)
    [w] = [w for w in warnings if str(w.path) == "hugepages.size"]
    assert w.message.endswith("so 1G cannot be checked")
    assert w.hint == "ppc64 usually offers 16M, 16G"


def test_known_hugepage_sizes_refuse_an_unsupported_one() -> None:
    s = spec(hugepages=m.Hugepages(size="16M", total=2))
    assert errors_of(s, host()) == ["hugepages.size: this CPU does not support 16M pages"]


def _hugepage_errors(s: m.HostSpec, topo: Topology) -> list[tuple[str, str, str | None]]:
    with pytest.raises(HostcError) as e:
        api.compile_plan(s, topo)
    return [(str(d.path), d.message, d.hint) for d in e.value.errors]


def test_an_unset_hugepage_size_is_checked_against_the_sizes_the_kernel_offers() -> None:
    """The pool's size defaults to 1G; a kernel that does not offer 1G pages refuses
    `hugepagesz=1G` and ignores the `hugepages=` after it, so nothing is reserved
    (review-outputs-4 G1: `hostc check` said ok).  An error naming the size to set, never
    another size picked: the counts are pages of the size."""
    s = spec(hugepages=m.Hugepages(per_node={0: 8, 1: 8}))
    only_2m = attrs.evolve(host(), hugepage_sizes=["2M"])
    [(path, message, hint)] = _hugepage_errors(s, only_2m)
    assert path == "hugepages.size"
    assert message.startswith("not set, so the pool's pages are 1G, and this host's kernel")
    assert "'HugeTLB: unsupported hugepagesz=1G'" in message and "(it offers 2M)" in message
    assert hint == (
        'set size = "2M", the largest size it offers up to 1G, and give the counts in '
        "pages of that size"
    )
    # a 64K-page arm64 kernel (Grace: 6.8.0-1021-nvidia-64k): 2M, 512M and 16G
    grace = attrs.evolve(host(), arch="aarch64", hugepage_sizes=["2M", "512M", "16G"])
    [(_, _, hint)] = _hugepage_errors(s, grace)
    assert hint is not None and hint.startswith('set size = "512M"')
    plan, _ = plan_of(spec(hugepages=m.Hugepages(size="512M", per_node={0: 8, 1: 8})), grace)
    assert "default_hugepagesz=512M hugepagesz=512M hugepages=0:8,1:8" in cmdline(plan)
    # 1G offered, or no page asked for: nothing to say
    assert "hugepagesz=1G" in cmdline(plan_of(s, host())[0])
    plan_of(spec(hugepages=m.Hugepages(total=0)), only_2m)


def test_an_unset_hugepage_size_on_a_snapshot_without_sizes_is_a_warning() -> None:
    power = attrs.evolve(host(), arch="ppc64", hugepage_sizes=[])
    _, warnings = api.compile_plan(spec(hugepages=m.Hugepages(total=2)), power)
    [w] = [w for w in warnings if str(w.path) == "hugepages.size"]
    assert "cannot be checked" in w.message and w.hint == "ppc64 usually offers 16M, 16G; set size"


@pytest.mark.parametrize(("given", "want"), [("2048K", "2M"), ("1024M", "1G"), ("1g", "1G")])
def test_page_sizes_are_read_in_any_unit(given: str, want: str) -> None:
    plan, _ = plan_of(spec(hugepages=m.Hugepages(size=given, total=2)), host())
    assert f"default_hugepagesz={want} hugepagesz={want} hugepages=0:1,1:1" in cmdline(plan)


def test_zero_pages_emit_no_default_size_without_a_pool() -> None:
    plan, _ = plan_of(spec(hugepages=m.Hugepages(size="1G", total=0)), host())
    assert "hugepagesz" not in cmdline(plan)
    assert "hugepages=" not in cmdline(plan)


# 10. messages that contradict the input


def test_nothing_isolated_is_said_once_not_contradicted() -> None:
    topo = host()
    hk = str(topo.online)
    s = spec(cpu=m.Cpu(housekeeping=hk, isolate="rest"))
    _, warnings = plan_of(s, topo)
    assert not any("no [[workload]] is pinned" in w for w in warnings)
    assert any("no CPU ends up isolated" in w for w in warnings)


def test_malformed_host_kernel_is_named_as_such() -> None:
    s = spec(
        host=m.Host(name="t", role=m.Role.INFERENCE, kernel="abc"),
        hugepages=m.Hugepages(size="1G", per_node={0: 2}),
    )
    errs = errors_of(s, host())
    assert errs[0].startswith("host.kernel: 'abc' is not a kernel release")
    assert not any("neither the spec nor the snapshot" in e for e in errs)


# 11. reasons that state the right mechanism; the jitter settings left out on purpose


def test_overcommit_reason_names_the_heuristic() -> None:
    plan, _ = plan_of(spec(), host())
    why = {s.key: s.reason.why for s in plan.sysctls}["vm.overcommit_memory"]
    assert "heuristic mode (0) refuses any single allocation larger than RAM plus swap" in why


def test_plan_lists_the_jitter_settings_left_out() -> None:
    plan, _ = plan_of(isolating(), host())
    text = plan_view.render(plan)
    for name in ("kernel.nmi_watchdog", "vm.stat_interval", "kernel.timer_migration", "skew_tick"):
        assert f"  {name}\n" in text
    assert "nmi_watchdog" not in cmdline(plan)
    assert "kernel.nmi_watchdog" not in {s.key for s in plan.sysctls}


# The table: every example and every (vendor, OS family, kernel) combination


@pytest.mark.parametrize("vendor", ["intel", "amd"])
@pytest.mark.parametrize("os_release", [UBUNTU, RHEL9, COREOS], ids=["debian", "rhel", "coreos"])
@pytest.mark.parametrize("kernel", ["4.19.0", "5.15.0", "6.8.0"])
def test_table(vendor: str, os_release: OsRelease, kernel: str) -> None:
    topo = host(vendor=vendor, kernel=kernel, os=os_release)
    s = attrs.evolve(isolating(), limits=m.Limits(nofile=4194304))
    s = attrs.evolve(s, hugepages=m.Hugepages(size="1G", per_node={0: 2, 1: 2}))
    version = tuple(int(x) for x in kernel.split(".")[:2])
    try:
        plan, _ = plan_of(s, topo)
    except HostcError as e:
        # only a pre-5.16 kernel may refuse, and only the per-node form (even split warns)
        assert version < (5, 16)
        raise AssertionError([d.message for d in e.errors]) from None
    line = cmdline(plan)
    assert "max_cstate" not in line  # C-states per CPU at runtime; boot caps only by choice
    part = plan.partition  # the isolated CPUs and the GPU/NIC nodes' housekeeping (K8)
    assert plan.cstates is not None and plan.cstates.cpus is not None
    assert part.isolated <= plan.cstates.cpus <= part.online
    assert "domain" not in line
    # Debian's systemd leaves fs.nr_open alone; where the release's is not known, the
    # maximum, which no systemd lowers and which nothing else can lower either
    want = "4194304" if os_release is UBUNTU else "1073741816"
    assert {s.key: s for s in plan.sysctls}["fs.nr_open"].value == want
    assert ("hugepages=0:2,1:2" in line) == (version >= (5, 16))
    files = {a.target for a in api.emit(plan, ["all"])}
    assert ("grub" in files) == (os_release is UBUNTU)
    assert ("grubby" in files) == (os_release is RHEL9)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_examples_are_right_for_their_host(example: Path) -> None:
    plan, _ = api.compile_file(example / "node.toml")
    line = cmdline(plan)
    assert "domain" not in line
    if plan.host.cpu_vendor != "intel":
        assert "intel_idle" not in line
    nofile = plan.limit("nofile")
    if nofile is not None and nofile.value != "unlimited" and nofile.value > 1048576:
        assert int({s.key: s.value for s in plan.sysctls}["fs.nr_open"]) >= nofile.value
    for d in [*(api.compile_file(example / "node.toml")[1])]:
        assert d.severity is Severity.WARNING


# CONFIG_NO_HZ_FULL / CONFIG_RCU_NOCB_CPU where probe read the kernel's build options


def test_mechanism_the_kernel_was_built_without_is_refused() -> None:
    topo = attrs.evolve(
        host(), kernel_config={"CONFIG_NO_HZ_FULL": "n", "CONFIG_RCU_NOCB_CPU": "y"}
    )
    assert errors_of(isolating(), topo) == [
        'workload "serve".busy_poll: 6.8.0-45-generic is built without CONFIG_NO_HZ_FULL, so the '
        "kernel ignores nohz_full="
    ]
    plan, _ = plan_of(isolating(busy_poll=False), topo)  # no busy poller: no nohz_full needed
    assert "nohz_full" not in cmdline(plan)
    s = isolating(mechanisms=["isolcpus", "rcu_nocbs", "irqaffinity"])
    plan, _ = plan_of(s, topo)
    assert "nohz_full" not in cmdline(plan) and "rcu_nocbs=" in cmdline(plan)


def test_unknown_build_options_are_not_guessed() -> None:
    plan, _ = plan_of(isolating(), host())
    assert "nohz_full=" in cmdline(plan)


@pytest.mark.parametrize(
    ("mode", "kernel", "ok"),
    [("guided", "6.4.0", True), ("guided", "6.3.0", False), ("active", "6.2.0", False)],
)
def test_amd_pstate_modes_need_their_release(mode: str, kernel: str, ok: bool) -> None:
    s = spec(cpufreq=m.Cpufreq(pstate=m.PstateMode(mode)))
    topo = host(vendor="amd", kernel=kernel)
    if ok:
        plan, _ = plan_of(s, topo)
        assert f"amd_pstate={mode}" in cmdline(plan)
    else:
        [e] = errors_of(s, topo)
        assert e.startswith(f"cpufreq.pstate: amd_pstate={mode} needs Linux ≥ 6.")


def test_unknown_vendor_names_every_intel_only_argument() -> None:
    s = attrs.evolve(spec(), kernel=m.Kernel(iommu=m.IommuMode("on"), cstates_at=m.CStatesAt.BOOT))
    _, warnings = plan_of(s, host(vendor=None))  # type: ignore[arg-type]
    [w] = [w for w in warnings if "CPU vendor" in w]
    assert "intel_idle.max_cstate, intel_iommu" in w
    _, known = plan_of(s, host(vendor="amd"))
    assert not [w for w in known if "CPU vendor" in w]


@pytest.mark.parametrize(
    ("os_release", "warned"),
    [
        (OsRelease("rhel", "8.9", ["fedora"]), True),
        (OsRelease("ubuntu", "18.04", ["debian"]), True),
        (RHEL9, False),
        (UBUNTU, False),
        (OsRelease("gentoo", "2.15"), False),  # unknown release: nothing guessed
    ],
    ids=["rhel8", "ubuntu1804", "rhel9", "ubuntu2404", "unknown"],
)
def test_workload_memory_binding_needs_systemd_243(os_release: OsRelease, warned: bool) -> None:
    _, warnings = plan_of(isolating(), host(os=os_release))
    hits = [w for w in warnings if "ignores NUMAPolicy=" in w]
    assert bool(hits) == warned, warnings
    if warned:
        assert "memory is not bound" in hits[0]


def test_spec_os_decides_the_systemd_release() -> None:
    s = attrs.evolve(isolating(), host=m.Host(name="t", role=m.Role.INFERENCE, os="rocky-8.10"))
    _, warnings = plan_of(s, host(os=UBUNTU))
    assert any(w.startswith("host.os: rocky 8.10 ships systemd 239") for w in warnings)


@pytest.mark.parametrize(
    ("os_release", "carrier", "targets"),
    [
        (UBUNTU, "grub", {"grub"}),
        (RHEL9, "grubby", {"grubby"}),
        (COREOS, "ignition", set()),
        (OsRelease("sles", "15.5", ["suse"]), "none", set()),
    ],
    ids=["debian", "rhel", "coreos", "suse"],
)
def test_one_carrier_of_the_kernel_arguments_per_host(
    os_release: OsRelease, carrier: str, targets: set[str]
) -> None:
    plan, warnings = plan_of(isolating(), host(os=os_release))
    assert plan.boot.carrier == carrier
    assert {a.target for a in api.emit(plan, ["all"])} & {"grub", "grubby", "tuned"} == targets
    silent = [w for w in warnings if "no file target carries the kernel arguments" in w]
    assert bool(silent) == (carrier == "none")
