"""Assemble the Plan from the resolved parts: the one place spec keys meet preset settings."""

from __future__ import annotations

from hostc import kernelfacts, osfacts, settings
from hostc.lower import cpu, kernel, memory, placement, runtime
from hostc.lower import kubelet as lower_kubelet
from hostc.lower.hardware import hardware
from hostc.osfacts import feature_release, split_os, tuned_profile_dirs
from hostc.plan import (
    UNLIMITED,
    Boot,
    BootCarrier,
    CpuPartition,
    HostFacts,
    HugepagePool,
    Limit,
    ModuleLoad,
    NodeView,
    OsFamily,
    Plan,
    Reason,
    RuntimeOwner,
    Sysctl,
    Workload,
)
from hostc.provenance import HOST, SpecKey, key
from hostc.settings import table as t
from hostc.spec import presets
from hostc.spec.model import HostSpec
from hostc.topology.model import OsRelease, Topology, os_family


def overrides(spec: HostSpec) -> list[presets.Override]:
    """Every spec key that sets a preset setting: the spec's sysctls, then each row of
    the settings table whose spec key the spec gives."""
    out = [
        presets.Override(settings.sysctl(k), v, key("sysctl", k)) for k, v in spec.sysctl.items()
    ]
    for s in settings.SETTINGS:
        if s.spec_key is None or s.family is settings.Family.DERIVED:
            continue
        given, value = s.spec_value(spec)
        if given:
            out.append(presets.Override(s, value, SpecKey(s.spec_key)))
    return out


def context(spec: HostSpec, topo: Topology, pins: list[Workload]) -> presets.Context:
    kernel = memory.kernel_version(memory.kernel_release(spec, topo))
    amd_pstate = feature_release("amd_pstate", os_of(spec, topo)[0], kernel)
    return presets.Context(
        role=spec.host.role.value,
        arch=topo.arch,
        cpu_vendor=topo.cpu_vendor,
        kernel=kernel,
        pinned=bool(pins),
        multi_node=len(topo.nodes) > 1,
        rdma=any(k == "NCCL_IB_HCA" for w in pins for k, _ in w.env),
        features=(("amd_pstate", amd_pstate),) if amd_pstate is not None else (),
        gpu_vendors=tuple(sorted({g.vendor.lower() for g in topo.gpus if g.vendor})),
        rdma_nics=sum(1 for n in topo.nics if n.rdma),
    )


def host_facts(spec: HostSpec, topo: Topology) -> HostFacts:
    release = memory.kernel_release(spec, topo)
    vendor = topo.cpu_vendor
    os_id, family = os_of(spec, topo)
    systemd, unified, raises = systemd_facts(spec, topo)
    return HostFacts(
        name=spec.host.name,
        role=spec.host.role.value,
        arch=topo.arch,
        cpu_vendor=vendor,
        kernel=release,
        kernel_version=memory.kernel_version(release),
        os=os_id,
        os_family=family,
        cmdline_budget=kernel.budget(topo.arch),
        reason=Reason(HOST, "the host as the spec and its topology snapshot describe it"),
        tuned_profile_dirs=tuned_profile_dirs(os_id),
        intel_idle=built_with(topo, kernelfacts.INTEL_IDLE_CONFIG),
        intel_iommu_default_on=built_with(topo, kernelfacts.INTEL_IOMMU_DEFAULT_ON_CONFIG),
        systemd=systemd,
        unified_cgroup=unified,
        raises_nr_open=raises,
    )


def systemd_facts(spec: HostSpec, topo: Topology) -> tuple[int | None, bool | None, bool | None]:
    """The release's systemd, whether it boots the unified cgroup hierarchy and whether
    its systemd raises fs.nr_open, from the distribution tables (None: not known)."""
    rel = os_release(spec, topo)
    if rel is None:
        return None, None, None
    return (
        osfacts.systemd_version(rel.id, rel.version_id),
        osfacts.unified_cgroup(rel.id, rel.version_id),
        osfacts.raises_nr_open(rel.id, rel.version_id),
    )


def built_with(topo: Topology, option: str) -> bool | None:
    """Whether the snapshot's kernel config has `option` built in (None: not recorded)."""
    value = topo.kernel_config.get(option)
    return None if value is None else value == "y"


def os_release(spec: HostSpec, topo: Topology) -> OsRelease | None:
    """`host.os` (ID-VERSION_ID) wins over the snapshot's os-release."""
    if spec.host.os is None:
        return topo.os
    os_id, version = split_os(spec.host.os)
    return OsRelease(os_id, version)


def os_of(spec: HostSpec, topo: Topology) -> tuple[str | None, OsFamily]:
    rel = os_release(spec, topo)
    if rel is None:
        return None, OsFamily.UNKNOWN
    os_id = rel.id + (f"-{rel.version_id}" if rel.version_id else "")
    return os_id, OsFamily(os_family(rel))


def nr_open_for(limits: list[Limit], sysctls: list[Sysctl], host: HostFacts) -> list[Sysctl]:
    """fs.nr_open raised with a nofile above the kernel's default ceiling, never lowered.

    Without it setrlimit fails with EPERM, pam_limits returns PAM_PERM_DENIED and
    ssh, sudo and login are refused (systemd quietly clamps services instead).  A
    systemd built with the bump raises fs.nr_open to the kernel's maximum at boot,
    where a smaller value from sysctl.d would lower it; so the nofile itself is written
    only where the release's systemd is known not to raise it, and the maximum where
    that is not known (it lowers nothing either way).
    """
    nofile = next((x for x in limits if x.item == "nofile"), None)
    if nofile is None or nofile.value == UNLIMITED or any(s.key == "fs.nr_open" for s in sysctls):
        return []
    if nofile.value <= kernelfacts.NR_OPEN_DEFAULT or host.raises_nr_open:
        return []
    need = (
        f"nofile {nofile.value} exceeds the kernel's default fs.nr_open "
        f"{kernelfacts.NR_OPEN_DEFAULT}: without a higher one, setrlimit fails and "
        "pam_limits refuses logins"
    )
    if host.raises_nr_open is None:
        value = kernelfacts.NR_OPEN_MAX
        why = (
            f"{need}; the kernel's maximum, as a systemd built with the fs.nr_open bump "
            "sets it at boot, so it lowers nothing there (this release's systemd is not "
            "known: set host.os)"
        )
    else:
        value = nofile.value
        release = host.os or "this release"
        if host.systemd is not None and host.systemd < osfacts.BUMPS_NR_OPEN_SINCE:
            how = f"ships systemd {host.systemd}, which predates raising it at boot (240)"
        else:
            how = "builds its systemd without raising it at boot"
        why = f"{need}; {release} {how}"
    return [Sysctl("fs.nr_open", str(value), Reason(nofile.reason.source, why))]


_CARRIER = {
    OsFamily.DEBIAN: (BootCarrier.GRUB, "Debian's grub-mkconfig sources /etc/default/grub.d"),
    OsFamily.UNKNOWN: (
        BootCarrier.GRUB,
        "the OS is not known: the GRUB drop-in, as Debian and Ubuntu read it (set host.os)",
    ),
    OsFamily.RHEL: (
        BootCarrier.GRUBBY,
        "RHEL-family hosts boot BLS entries that grubby edits; their grub2-mkconfig does "
        "not read /etc/default/grub.d",
    ),
    OsFamily.COREOS: (BootCarrier.IGNITION, "CoreOS-family hosts take kernelArguments in Ignition"),
    OsFamily.SUSE: (
        BootCarrier.NONE,
        "SUSE's grub2-mkconfig reads only /etc/default/grub, which hostc does not edit",
    ),
}


def boot(host: HostFacts, owner: RuntimeOwner) -> Boot:
    """Exactly one carrier of the kernel arguments per host, decided here once."""
    if owner is RuntimeOwner.TUNED and host.os_family is OsFamily.DEBIAN:
        return Boot(
            BootCarrier.GRUB,
            Reason(
                HOST,
                f"{host.os}: TuneD owns the runtime settings, but its [bootloader] does not "
                "patch grub.cfg on Debian/Ubuntu (TuneD issue #528, PR #387 unmerged): "
                "the GRUB drop-in carries the arguments",
            ),
        )
    if owner is RuntimeOwner.TUNED:
        return Boot(
            BootCarrier.TUNED,
            Reason(
                key("runtime", "owner"), "TuneD owns the tuning, its [bootloader] the arguments"
            ),
        )
    carrier, why = _CARRIER[host.os_family]
    return Boot(carrier, Reason(HOST, f"{host.os or host.os_family}: {why}"))


_ONE = (settings.Family.ONE, settings.Family.SYSFS)


def _by_family(
    merged: list[presets.Resolved],
) -> dict[settings.Family, list[presets.Resolved]]:
    out: dict[settings.Family, list[presets.Resolved]] = {f: [] for f in settings.Family}
    for r in merged:
        out[r.setting.family].append(r)
    return out


def node_views(topo: Topology, part: CpuPartition, pools: list[HugepagePool]) -> list[NodeView]:
    """Each NUMA node as `hostc plan` shows it: its CPUs split, devices, memory left."""
    nodes = []
    for node in sorted(topo.nodes, key=lambda n: n.id):
        cpus = topo.node_cpus(node.id)
        reserved = memory.reserved_mib(pools, node.id)
        nodes.append(
            NodeView(
                id=node.id,
                cpus=cpus,
                housekeeping=cpus & part.housekeeping,
                isolated=cpus & part.isolated,
                gpus=tuple(g.name for g in topo.gpus if g.node == node.id),
                nics=tuple(n.name for n in topo.nics if n.node == node.id),
                memory_mib=node.memory_mib,
                hugepages=tuple(
                    (p.size_kib, c) for p in pools for n, c in p.per_node if n == node.id
                ),
                memory_left_mib=None if node.memory_mib is None else node.memory_mib - reserved,
            )
        )
    return nodes


def lower(spec: HostSpec, topo: Topology) -> Plan:
    part = cpu.partition(spec, topo)
    pins = placement.workloads(spec, topo, part)
    pools = memory.pools(spec, topo)
    host = host_facts(spec, topo)
    ctx = context(spec, topo, pins)
    merged = presets.merge(ctx, overrides(spec), spec.preset.exclude)
    one = {r.setting: r for r in merged if r.setting.family in _ONE}
    runtime_plan = runtime.runtime(spec, topo, part, host, one)
    by_family = _by_family(merged)
    cstates = runtime.cstate_limit(spec, part, pins, one.get(t.MAX_CSTATE), runtime_plan.owner)
    limits = [Limit(r.name, r.value, r.reason) for r in by_family[settings.Family.LIMIT]]
    sysctls = [Sysctl(r.name, str(r.value), r.reason) for r in by_family[settings.Family.SYSCTL]]
    sysctls += nr_open_for(limits, sysctls, host)
    nodes = node_views(topo, part, pools)
    isolation = kernel.isolation(spec, part, ctx.kernel, pins)
    return Plan(
        host=host,
        partition=part,
        isolation=tuple(isolation),
        nodes=tuple(nodes),
        default_hugepagesz=memory.default_size(spec) if any(p.per_node for p in pools) else None,
        hugepages=tuple(pools),
        thp=one.get(t.THP),
        cstates=cstates,
        extra_args=tuple(kernel.extra_args(spec)),
        sysctls=tuple(sysctls),
        limits=tuple(limits),
        workloads=tuple(pins),
        runtime=runtime_plan,
        kubelet=lower_kubelet.lower(spec, part, tuple(nodes), host),
        left_out=(
            *(
                x
                for x in presets.LEFT_OUT
                if not (x.setting == "skew_tick" and spec.kernel.skew_tick)
            ),
            *kernel.nohz_left_out(spec, isolation),
        ),
        boot=boot(host, runtime_plan.owner),
        modules_load=tuple(
            ModuleLoad(r.value, r.reason) for r in by_family[settings.Family.MODULE_LOAD]
        ),
        hardware=hardware(topo),
    )
