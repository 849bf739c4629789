"""Workloads and host-wide limits on a GPU+RDMA node: what the drop-ins, limits, sysctl.d
and modules-load.d say, and the distribution and kernel facts they rest on.

Each test guards against one failure a GPU node meets: NCCL's bootstrap taken from the
RDMA netdevs, workloads only advised (CPUAffinity=) instead of contained, every service
allowed to lock all of RAM, fs.nr_open below what a systemd may have set, no peermem.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import attrs
import pytest

from hostc import api, settings
from hostc.cpuset import CpuSet
from hostc.knowledge import distro as osfacts
from hostc.knowledge import kernel as kernelfacts
from hostc.plan.model import Plan
from hostc.spec import model as m
from hostc.spec import presets
from hostc.topology.model import OsRelease, Topology

from conftest import ROOT, need_tool
from topogen import machine

JAMMY = OsRelease("ubuntu", "22.04", ["debian"])


def host(os: OsRelease | None = JAMMY, nics_per_node: int = 1, **kw: object) -> Topology:
    return machine(  # type: ignore[arg-type]
        packages=2,
        cores_per_node=16,
        smt=2,
        memory_mib=262144,
        gpus_per_node=2,
        nics_per_node=nics_per_node,
        cpu_vendor="intel",
        os=os,
        **kw,
    )


def spec(**kw: object) -> m.HostSpec:
    return m.HostSpec(
        host=m.Host(name="t", role=m.Role.INFERENCE),
        workload=[m.Workload("serve", ["GPU0", "GPU1"])],
        cpu=m.Cpu(housekeeping_per_node=1, isolate="workload"),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def plan_of(s: m.HostSpec, topo: Topology) -> Plan:
    return api.compile_plan(s, topo)[0]


def files(plan: Plan, *targets: str) -> dict[str, str]:
    return {a.path: a.text for a in api.emit(plan, list(targets)) if a.path.startswith("/")}


def example(name: str) -> Plan:
    return api.compile_file(ROOT / "examples" / name / "node.toml")[0]


DROPIN = "/etc/systemd/system/serve.service.d/90-hostc.conf"


# --- NCCL: the bootstrap interface is the user's, the RDMA NICs are the topology's ----


@pytest.mark.parametrize("name", ["dgx-h100-inference", "h100-4gpu-inference"])
def test_nccl_bootstrap_never_goes_to_the_rdma_netdevs(name: str) -> None:
    plan = example(name)
    for w in plan.workloads:
        env = dict(w.env)
        assert "NCCL_SOCKET_IFNAME" not in env
        assert env["NCCL_IB_HCA"].startswith("=")  # exact names stay
    for text in files(plan, "systemd").values():
        assert "NCCL_SOCKET_IFNAME" not in text


def test_named_bootstrap_interface_is_set_exactly_with_its_reason() -> None:
    plan = plan_of(spec(nccl=m.Nccl(socket_ifname="eth0")), host())
    text = files(plan, "systemd")[DROPIN]
    assert 'Environment="NCCL_SOCKET_IFNAME==eth0"\n' in text
    lines = text.splitlines()
    at = lines.index('Environment="NCCL_SOCKET_IFNAME==eth0"')
    assert lines[at - 1].startswith("# nccl.socket_ifname: NCCL bootstraps over this interface")


@pytest.mark.parametrize("bad", ["", "a" * 16, "eth0 x", "../x", "eth0;id", "-eth0", "é0"])
def test_interface_names_outside_ifnamsiz_and_plain_chars_are_refused(bad: str) -> None:
    from hostc.spec.text import ifname_problem

    assert ifname_problem(bad) is not None
    assert ifname_problem("enp1s0f0np0.100") is None


# --- containment: the kernel enforces the placement -----------------------------------


def test_workloads_are_contained_by_their_cgroup_cpuset() -> None:
    plan = plan_of(spec(), host())
    (w,) = plan.workloads
    text = files(plan, "systemd")[DROPIN]
    assert f"CPUAffinity={w.cpus}\n" in text and f"AllowedCPUs={w.cpus}\n" in text
    assert "NUMAMask=0\n" in text and "AllowedMemoryNodes=0\n" in text


@pytest.mark.parametrize(
    ("release", "why"),
    [
        (OsRelease("ubuntu", "18.04", ["debian"]), "systemd 237 predates AllowedCPUs="),
        (OsRelease("ubuntu", "20.04", ["debian"]), "hybrid cgroup hierarchy by default"),
        (OsRelease("rhel", "8.9", ["fedora"]), "cgroup v1 by default"),
    ],
)
def test_cpuset_lines_left_out_where_systemd_ignores_them(release: OsRelease, why: str) -> None:
    plan = plan_of(spec(), host(os=release))
    assert plan.host.cpuset_ignored, why
    text = files(plan, "systemd")[DROPIN]
    assert "AllowedCPUs=" not in text and "AllowedMemoryNodes=" not in text
    assert "CPUAffinity=" in text


def test_systemd_and_cgroup_facts_table() -> None:
    """systemd NEWS 244 (cpuset settings); the distributions' release notes for the
    unified hierarchy by default."""
    assert osfacts.ALLOWED_CPUS_SINCE == 244
    cases = {
        ("debian", "10"): False,
        ("debian", "11"): True,
        ("ubuntu", "20.04"): False,
        ("ubuntu", "21.10"): True,
        ("ubuntu", "22.04"): True,
        ("rhel", "8.9"): False,
        ("rhel", "9.4"): True,
        ("fedora", "30"): False,
        ("fedora", "31"): True,
        ("arch", None): None,
    }
    for (os_id, version), want in cases.items():
        assert osfacts.unified_cgroup(os_id, version) is want, (os_id, version)


# --- memlock: the services that pin buffers, not every service -----------------------


def test_memlock_is_no_longer_every_services_default() -> None:
    plan = plan_of(spec(), host())
    out = files(plan, "limits", "systemd")
    manager = out["/etc/systemd/system.conf.d/90-hostc-limits.conf"]
    assert "DefaultLimitMEMLOCK" not in manager and "DefaultLimitNOFILE=" in manager
    assert "LimitMEMLOCK=infinity\n" in out[DROPIN]
    pam = out["/etc/security/limits.d/90-hostc.conf"]
    assert "*     hard  memlock  unlimited" in pam  # RDMA users keep it


@pytest.mark.parametrize(
    ("name", "unit"),
    [("h100-kubeadm", "containerd.service"), ("dgx-h100-rke2", "rke2-agent.service")],
)
def test_container_runtime_may_lock_memory_on_kubelet_nodes(name: str, unit: str) -> None:
    out = files(example(name), "limits")
    text = out[f"/etc/systemd/system/{unit}.d/90-hostc-limits.conf"]
    assert "[Service]\n" in text and "LimitMEMLOCK=infinity\n" in text


def test_runtime_limits_dropin_passes_systemd_analyze(tmp_path: Path) -> None:
    tool = need_tool("systemd-analyze")
    out = files(example("h100-kubeadm"), "limits")
    units = tmp_path / "units"
    (units / "containerd.service.d").mkdir(parents=True)
    (units / "containerd.service").write_text(
        "[Unit]\nDescription=stub\n[Service]\nExecStart=/bin/true\n"
    )
    path = "/etc/systemd/system/containerd.service.d/90-hostc-limits.conf"
    (units / "containerd.service.d" / "90-hostc-limits.conf").write_text(out[path] + "Bogus=1\n")
    env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:", "SYSTEMD_LOG_LEVEL": "notice"}
    argv = [tool, "verify", "--man=no", str(units / "containerd.service")]
    bad = subprocess.run(argv, capture_output=True, env=env, check=False)
    assert b"Bogus" in bad.stderr  # it reads the drop-in
    (units / "containerd.service.d" / "90-hostc-limits.conf").write_text(out[path])
    r = subprocess.run(argv, capture_output=True, env=env, check=False)
    assert r.returncode == 0 and r.stderr == b"", r.stderr.decode()


# --- hostc-tuning.service: before whatever starts pods or workloads --------------------


def test_tuning_unit_starts_before_kubelet_container_runtime_and_workloads() -> None:
    plan = example("h100-kubeadm")
    unit = files(plan, "systemd")["/etc/systemd/system/hostc-tuning.service"]
    (before,) = [ln for ln in unit.splitlines() if ln.startswith("Before=")]
    for name in ("kubelet.service", "containerd.service", "rke2-agent.service"):
        assert name in before.split("=")[1].split()
    assert "Documentation=file:/usr/local/sbin/hostc-tuning\n" in unit
    assert "man:systemd.service" not in unit


# --- fs.nr_open: raised where nothing else raises it, never lowered --------------------


def _nr_open(os: OsRelease | None) -> str | None:
    plan = plan_of(spec(limits=m.Limits(nofile=2097152)), host(os=os))
    return {s.key: s.value for s in plan.sysctls}.get("fs.nr_open")


def test_nr_open_is_the_nofile_where_systemd_leaves_it_and_the_maximum_where_unknown() -> None:
    assert _nr_open(JAMMY) == "2097152"  # Ubuntu's systemd is built without the bump
    assert _nr_open(OsRelease("ubuntu", "18.04", ["debian"])) == "2097152"
    # RHEL 9's systemd 252 may raise it to the maximum: anything smaller would lower it
    assert _nr_open(OsRelease("rhel", "9.4", ["fedora"])) == str(kernelfacts.NR_OPEN_MAX)
    assert _nr_open(None) == str(kernelfacts.NR_OPEN_MAX)


def test_nr_open_reason_says_why_the_kernel_default_stays() -> None:
    plan = plan_of(spec(limits=m.Limits(nofile=2097152)), host())
    why = {s.key: s.reason.why for s in plan.sysctls}["fs.nr_open"]
    assert "ubuntu-22.04 builds its systemd without raising it at boot" in why
    old = OsRelease("rhel", "8.9", ["fedora"])
    plan = plan_of(spec(limits=m.Limits(nofile=2097152)), host(os=old))
    why = {s.key: s.reason.why for s in plan.sysctls}["fs.nr_open"]
    assert "ships systemd 239, which predates raising it at boot (240)" in why


def test_nr_open_bump_facts_table() -> None:
    """systemd 240 added the bump (NEWS, src/core/main.c); Debian 12's systemd binary has
    the fs.file-max bump compiled in but not the fs.nr_open one; openSUSE's spec turns
    it off (-Dbump-proc-sys-fs-nr-open=false)."""
    assert osfacts.raises_nr_open("debian", "12") is False
    assert osfacts.raises_nr_open("ubuntu", "24.04") is False
    assert osfacts.raises_nr_open("opensuse-tumbleweed", None) is False
    assert osfacts.raises_nr_open("rhel", "8.9") is False  # systemd 239
    assert osfacts.raises_nr_open("rhel", "9.4") is None  # not verified either way
    assert osfacts.raises_nr_open("arch", None) is None


# --- NVIDIA GPU + RDMA base items ------------------------------------------------------


LOAD = "/etc/modules-load.d/90-hostc.conf"


def test_gpu_rdma_hosts_load_umad_at_boot_and_never_peermem_from_modules_load_d() -> None:
    """N5: modules-load.d runs before openibd, and a peermem symbol mismatch with the loaded
    ib_core fails systemd-modules-load.service: peermem moved to hostc-gpudirect."""
    plan = plan_of(spec(), host())
    text = files(plan, "modprobe")[LOAD]
    names = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert names == ["ib_umad"]
    assert "nvidia-peermem" not in text


def test_no_module_loads_without_rdma_nics_or_nvidia_gpus() -> None:
    assert plan_of(spec(), host(nics_per_node=0)).modules_load == ()
    amd = host()
    amd = attrs.evolve(amd, gpus=[attrs.evolve(g, vendor="AMD") for g in amd.gpus])
    assert plan_of(spec(), amd).modules_load == ()
    assert plan_of(spec(), amd).runtime.gpudirect is None


def test_module_loads_can_be_excluded_by_name() -> None:
    plan = plan_of(spec(preset=m.Preset(exclude=["load_ib_umad"])), host())
    assert plan.modules_load == ()


GPUDIRECT_UNIT = "/etc/systemd/system/hostc-gpudirect.service"
GPUDIRECT = "/usr/local/sbin/hostc-gpudirect"
OPEN = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15\n"
CLOSED = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15\n"


def _gpudirect_run(
    tmp_path: Path, mode: str, driver: str | None, kernel: str, tools: dict[str, int]
) -> subprocess.CompletedProcess[str]:
    """hostc-gpudirect with /proc under tmp_path and fake uname, modinfo and modprobe."""
    plan = plan_of(spec(modules=m.Modules(gpudirect=m.GpuDirect(mode))), host())
    text = files(plan, "modprobe")[GPUDIRECT].replace("/proc/", f"{tmp_path}/proc/")
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True, exist_ok=True)
    (tmp_path / "proc/modules").write_text("ib_core 1 0 - Live 0x0\n")
    if driver is not None:
        (tmp_path / "proc/driver/nvidia/version").write_text(driver)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, rc in {"uname": 0, **tools}.items():
        out = f"echo {kernel}; " if name == "uname" else f'echo {name} "$@" >>{tmp_path}/calls; '
        (bin_dir / name).write_text(f"#!/bin/sh\n{out}exit {rc}\n")
        (bin_dir / name).chmod(0o755)
    (tmp_path / "s").write_text(text)
    return subprocess.run(
        ["sh", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        check=False,
    )


def test_peermem_loads_after_openibd_and_the_driver_only_where_dma_buf_is_not_usable(
    tmp_path: Path,
) -> None:
    """N5: auto prefers DMA-BUF (open modules, Linux >= 5.12, NVIDIA's recommendation);
    a host without the module or the driver is no failure; a refusing module is."""
    plan = plan_of(spec(), host())
    assert plan.runtime.gpudirect is not None and plan.runtime.gpudirect.mode == "auto"
    unit = files(plan, "modprobe")[GPUDIRECT_UNIT]
    assert "After=openibd.service nvidia-persistenced.service" in unit
    ok = {"modinfo": 0, "modprobe": 0}
    r = _gpudirect_run(tmp_path / "a", "auto", OPEN, "6.8.0-45-generic", ok)
    assert r.returncode == 0 and "DMA-BUF is usable" in r.stdout
    assert not (tmp_path / "a/calls").exists()
    r = _gpudirect_run(tmp_path / "b", "auto", CLOSED, "6.8.0-45-generic", ok)
    assert r.returncode == 0 and "nvidia-peermem loaded" in r.stdout
    assert "modprobe nvidia-peermem" in (tmp_path / "b/calls").read_text()
    r = _gpudirect_run(tmp_path / "c", "auto", OPEN, "5.4.0-150-generic", {"modinfo": 1})
    assert r.returncode == 0 and "not installed on this host" in r.stdout
    r = _gpudirect_run(tmp_path / "d", "peermem", None, "6.8.0", ok)
    assert r.returncode == 0 and "no NVIDIA driver loaded" in r.stdout
    r = _gpudirect_run(tmp_path / "e", "peermem", OPEN, "6.8.0", {"modinfo": 0, "modprobe": 1})
    assert r.returncode == 1 and "refused to load" in r.stdout
    dmabuf = plan_of(spec(modules=m.Modules(gpudirect=m.GpuDirect.DMABUF)), host())
    assert GPUDIRECT_UNIT not in files(dmabuf, "modprobe")
    assert "DMA-BUF only" in dmabuf.runtime.gpudirect.reason.why  # type: ignore[union-attr]


ARP = {
    "net.ipv4.conf.all.arp_announce": "2",
    "net.ipv4.conf.default.arp_announce": "2",
    "net.ipv4.conf.all.arp_ignore": "1",
    "net.ipv4.conf.default.arp_ignore": "1",
}


def test_arp_sysctls_only_with_several_rdma_nics() -> None:
    one = {s.key for s in plan_of(spec(), host(nics_per_node=0)).sysctls}
    assert not one & set(ARP)
    several = {s.key: s.value for s in plan_of(spec(), host()).sysctls}
    assert {k: several[k] for k in ARP} == ARP


def test_arp_presets_never_lower_the_kernel_default() -> None:
    """ip-sysctl.rst: arp_announce and arp_ignore default to 0 (a table fact each)."""
    ctx = presets.Context(
        role="inference",
        arch="x86_64",
        cpu_vendor="intel",
        kernel=(6, 8),
        pinned=True,
        gpu_vendors=("nvidia",),
        rdma_nics=8,
    )
    got = {r.name: str(r.value) for r in presets.merge(ctx) if r.name in ARP}
    assert got == ARP
    for key, value in got.items():
        fact = settings.sysctl(key)
        assert fact.kernel_default((6, 8)) == (0,) and "ip-sysctl.rst" in fact.source
        assert int(value) >= 0


def test_overcommit_reason_does_not_claim_file_mappings_are_charged() -> None:
    plan = plan_of(spec(), host())
    why = {s.key: s.reason.why for s in plan.sysctls}["vm.overcommit_memory"]
    assert "large mmapped weights" not in why
    assert "read-only or shared file mappings of weights do not" in why


def test_release_that_cannot_contain_workloads_is_warned_about() -> None:
    _, warnings = api.compile_plan(spec(), host(os=OsRelease("ubuntu", "20.04", ["debian"])))
    assert any("hybrid (v1) cgroup hierarchy" in w.message for w in warnings)
    _, none = api.compile_plan(spec(), host())
    assert not any("cgroup hierarchy" in w.message for w in none)


def _on_kernel(plan: Plan, kernel: tuple[int, int] | None) -> Plan:
    release = None if kernel is None else f"{kernel[0]}.{kernel[1]}.0-1-generic"
    host = attrs.evolve(plan.host, kernel=release, kernel_version=kernel)
    return attrs.evolve(plan, host=host)


SLICE_DROPINS = (
    "/etc/systemd/system/system.slice.d/90-hostc.conf",
    "/etc/systemd/system/user.slice.d/90-hostc.conf",
)
WORKLOAD_SLICE = "/etc/systemd/system/hostc.slice"
#: Debian 12, Ubuntu 22.04, RHEL 9 and an unknown kernel reset a moved task's CPUs;
#: 6.2 and later keep them (da019032819a)
KERNELS = [((6, 1), True), ((5, 15), True), ((5, 14), True), (None, True), ((6, 2), False),
           ((6, 8), False)]  # fmt: skip


@pytest.mark.parametrize(("kernel", "sliced"), KERNELS)
def test_services_are_confined_by_their_slices_cpuset_where_the_kernel_resets_them(
    kernel: tuple[int, int] | None, sliced: bool
) -> None:
    """Review-outputs-4 R1: before Linux 6.2 a task moved into a cgroup cpuset gets the
    cpuset's CPUs, so once a workload's AllowedCPUs= turns the controller on, every
    service started or restarted afterwards runs on every CPU (a booted Debian 12,
    6.1, showed it with PID 1 re-pinned).  system.slice and user.slice hold the
    housekeeping CPUs as their own cpuset there, each line under its reason; the
    workloads move to a slice holding all their CPUs (a child cpuset is clipped to its
    parent's).  6.2 and later keep the inherited mask: no slice files."""
    plan = _on_kernel(example("dgx-h100-inference"), kernel)
    out = files(plan, "systemd")
    hk = str(plan.partition.housekeeping)
    for path in SLICE_DROPINS:
        assert (path in out) is sliced, path
        if sliced:
            lines = out[path].splitlines()
            at = lines.index(f"AllowedCPUs={hk}")
            assert lines[at - 1].startswith("# cpu.housekeeping_per_node: every "), lines
            assert "[Slice]" in lines and "6.2" in lines[at - 1]
    assert (WORKLOAD_SLICE in out) is sliced
    union = CpuSet()
    for w in plan.workloads:
        union = union | w.cpus
        dropin = out[f"/etc/systemd/system/{w.unit}.d/90-hostc.conf"].splitlines()
        assert ("Slice=hostc.slice" in dropin) is sliced
        assert f"AllowedCPUs={w.cpus}" in dropin
    if sliced:
        lines = out[WORKLOAD_SLICE].splitlines()
        at = lines.index(f"AllowedCPUs={union}")
        assert lines[at - 1].startswith("# workload: every workload's CPUs"), lines
        assert union.isdisjoint(plan.partition.housekeeping)


@pytest.mark.parametrize(("kernel", "repinned"), KERNELS)
def test_pid1_is_put_back_by_hostc_tuning_only_where_the_kernel_resets_it(
    kernel: tuple[int, int] | None, repinned: bool
) -> None:
    """init.scope is in no slice: where the slices' cpusets are on, a kernel before 6.2
    gives PID 1 every CPU when the controller comes on at the root, and hostc-tuning
    (hostc's own unit, no user-supplied environment) puts it back; no workload does."""
    plan = _on_kernel(example("dgx-h100-inference"), kernel)
    out = files(plan, "systemd")
    hk = plan.partition.housekeeping
    script = out["/usr/local/sbin/hostc-tuning"]
    assert (f"elif taskset -a -p -c {hk} 1 >/dev/null 2>&1; then" in script) is repinned
    assert ("PID 1 CPUs" in out["/etc/systemd/system/hostc-tuning.service"]) is repinned
    for w in plan.workloads:
        assert "taskset" not in out[f"/etc/systemd/system/{w.unit}.d/90-hostc.conf"]


def _privileged_execs(path: str, text: str) -> list[str]:
    """Exec*= lines whose command runs with full privileges (systemd.service(5), the
    `+`, `!` and `!!` prefixes), in any order among the other prefixes (`-`, `@`, `:`)."""
    out = []
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.startswith("Exec"):
            prefix = value[: len(value) - len(value.lstrip("-@:+!"))]
            if "+" in prefix or "!" in prefix:
                out.append(f"{path}: {line}")
    return out


def _unit_files(plan: Plan) -> dict[str, str]:
    """Every unit file and drop-in of every target the plan gets (`all`)."""
    return {a.path: a.text for a in api.emit(plan) if a.path.startswith("/etc/systemd/system/")}


@pytest.mark.parametrize(
    "name", sorted(p.parent.name for p in (ROOT / "examples").glob("*/node.toml"))
)
def test_no_privileged_command_in_a_workloads_or_foreign_units_environment(name: str) -> None:
    """Issue 50: a `+` command in a workload's drop-in ran as root with that unit's
    Environment=/EnvironmentFile= (an LD_PRELOAD there ran as root).  No drop-in for a
    unit hostc does not own, and no workload's, carries one, on the example's kernel and
    on one before 6.2; hostc's own units (hostc-*) are the only place for root work."""
    base = example(name)
    found = []
    for plan in (base, _on_kernel(base, (6, 1)), _on_kernel(base, None)):
        for path, text in _unit_files(plan).items():
            unit = path.removeprefix("/etc/systemd/system/").split("/")[0]
            if unit.startswith("hostc-") and not unit.endswith(".d"):
                continue  # hostc's own unit file
            found += _privileged_execs(path, text)
    assert found == []


def test_the_runtime_stays_on_the_housekeeping_cpus_beside_the_pods_on_a_515_kubelet_node() -> None:
    """Review-outputs-4 G2 (dgx-h100-rke2, kernel 5.15): the runtime's drop-in and the
    pods turn the cpuset controller on at every boot.  The runtime is a system service:
    system.slice's cpuset keeps it (and every other service) on the housekeeping CPUs;
    the pods' kubepods cgroup is beside system.slice, so nothing hostc writes moves the
    runtime or the pods into another slice."""
    plan = example("dgx-h100-rke2")
    assert plan.host.kernel_version == (5, 15) and plan.kubelet is not None
    rt = plan.kubelet.runtime
    assert rt is not None and rt.allowed == plan.partition.housekeeping
    out = files(plan, "systemd", "kubelet")
    assert f"AllowedCPUs={plan.partition.housekeeping}" in out[SLICE_DROPINS[0]].splitlines()
    runtime = out[f"/etc/systemd/system/{rt.unit}.d/90-hostc-cpuaffinity.conf"]
    assert "Slice=" not in runtime and "Exec" not in runtime
    assert WORKLOAD_SLICE not in out  # no workload here
    assert "taskset -a -p -c" in out["/usr/local/sbin/hostc-tuning"]


def test_the_managers_cpuaffinity_file_says_what_keeps_services_on_housekeeping() -> None:
    """The system.conf.d comment claimed "every service without its own CPUAffinity=
    runs on the housekeeping CPUs", false before 6.2 once a cpuset is on; it names the
    slices there and the 6.2 rule elsewhere."""
    path = "/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf"
    old = _on_kernel(example("dgx-h100-inference"), (5, 15))
    text = files(old, "systemd")[path]
    assert "every service without its own CPUAffinity=" not in text
    assert "slices' cpusets (system.slice, user.slice" in text and "puts PID 1 back" in text
    new = files(_on_kernel(old, (6, 8)), "systemd")[path]
    assert "From Linux 6.2 a process keeps this mask inside a cgroup cpuset" in new


def test_hostc_tuning_puts_pid1_back_once_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    """The re-pin in hostc-tuning (kernel 5.15): PID 1 on every CPU is put back with
    `taskset -a -p -c <housekeeping> 1`, once (a second run finds it there); where
    /proc/1/status shows no CPU list, nothing is called (the script's /proc is this
    test's tree, so taskset never reaches the machine running the test)."""
    plan = _on_kernel(example("dgx-h100-inference"), (5, 15))
    hk = str(plan.partition.housekeeping)
    text = files(plan, "systemd")["/usr/local/sbin/hostc-tuning"]
    script = tmp_path / "hostc-tuning"
    script.write_text(
        text.replace("/sys/", f"{tmp_path}/sys/").replace("/proc/", f"{tmp_path}/proc/")
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "taskset.log"
    (bin_dir / "taskset").write_text(f'#!/bin/sh\necho "$*" >>{calls}\n')
    (bin_dir / "taskset").chmod(0o755)

    def run() -> str:
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
        done = subprocess.run(
            ["sh", str(script)], capture_output=True, text=True, env=env, check=False
        )
        return done.stdout

    assert "hostc-tuning: skip PID 1 CPUs: " in run()
    assert not calls.exists()
    status = tmp_path / "proc/1/status"
    status.parent.mkdir(parents=True)
    status.write_text(f"Name:\tsystemd\nCpus_allowed_list:\t{plan.partition.online}\n")
    assert f"hostc-tuning: set PID 1 CPUs = {hk} (was {plan.partition.online})" in run()
    assert calls.read_text() == f"-a -p -c {hk} 1\n"
    status.write_text(f"Name:\tsystemd\nCpus_allowed_list:\t{hk}\n")
    assert "PID 1 CPUs" not in run()
    assert calls.read_text() == f"-a -p -c {hk} 1\n"
