"""Assemble the Plan from what resolve made: the merged settings, the placements and the
requests, each with its provenance (lowering never reads the spec)."""

from __future__ import annotations

from typing import Any

from hostc import settings
from hostc.knowledge import distro as osfacts
from hostc.knowledge import kernel as kernelfacts
from hostc.knowledge.distro import tuned_profile_dirs
from hostc.lower import kernel, memory, runtime
from hostc.lower import kubelet as lower_kubelet
from hostc.lower.hardware import hardware
from hostc.plan.kernelargs import budget
from hostc.plan.model import (
    UNLIMITED,
    Boot,
    BootCarrier,
    CpuPartition,
    Distro,
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
    TunedFacts,
)
from hostc.provenance import HOST, Value, key
from hostc.resolve import Resolved
from hostc.settings import table as t
from hostc.topology.model import Topology
from hostc.vocab import LimitItem


def host_facts(r: Resolved) -> HostFacts:
    topo, h = r.topo, r.host
    return HostFacts(
        name=h.name,
        role=h.role,
        arch=h.arch,
        cpu_vendor=h.cpu_vendor,
        kernel=h.kernel_release,
        kernel_version=h.kernel,
        os=Distro(h.os.id, h.os.version_id) if h.os is not None else None,
        os_family=h.os_family,
        cmdline_budget=budget(h.arch),
        reason=Reason(HOST, "the host as the spec and its topology snapshot describe it"),
        tuned_profile_dirs=tuned_profile_dirs(h.os_id),
        intel_idle=built_with(topo, kernelfacts.INTEL_IDLE_CONFIG),
        intel_iommu_default_on=built_with(topo, kernelfacts.INTEL_IOMMU_DEFAULT_ON_CONFIG),
        systemd=h.systemd,
        unified_cgroup=h.unified_cgroup,
        raises_nr_open=h.raises_nr_open,
        tuned=tuned_facts(h.os_id),
    )


def tuned_facts(os: str | None) -> TunedFacts:
    """What the TuneD of release `os` (ID-VERSION_ID) reads, from the distribution tables."""
    return TunedFacts(
        version=osfacts.tuned_version(os),
        perf_package=osfacts.tuned_perf_package(os),
        epp=osfacts.tuned_reads(os, "cpu.energy_performance_preference"),
        cgroup_ps_blacklist=osfacts.tuned_reads(os, "scheduler.cgroup_ps_blacklist"),
        net_channels=osfacts.tuned_reads(os, "net.channels"),
        # an unknown release gets the form every release reads (cstate.id, 2.13), never
        # the 2.18 one guessed (review-outputs-4 G3)
        cstate_id_no_zero=osfacts.tuned_reads(os, "cpu.force_latency.cstate.id_no_zero"),
    )


def built_with(topo: Topology, option: str) -> bool | None:
    """Whether the snapshot's kernel config has `option` built in (None: not recorded)."""
    value = topo.kernel_config.get(option)
    return None if value is None else value == "y"


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
    carrier, why = host.os_family.boot_carrier
    return Boot(carrier, Reason(HOST, f"{host.os or host.os_family}: {why}"))


_ONE = (settings.Family.ONE, settings.Family.SYSFS, settings.Family.CMDLINE)


def _by_family(
    merged: tuple[Value[Any], ...],
) -> dict[settings.Family, list[Value[Any]]]:
    out: dict[settings.Family, list[Value[Any]]] = {f: [] for f in settings.Family}
    for r in merged:
        out[r.setting.family].append(r)
    return out


def lower(resolved: Resolved) -> Plan:
    """The Plan of a resolved host that `check` accepted."""
    topo, part = resolved.topo, resolved.partition
    pins = resolved.placements
    pools = memory.pools(resolved)
    host = host_facts(resolved)
    merged = resolved.settings
    one = {r.setting: r for r in merged if r.setting.family in _ONE}
    isolation = kernel.isolation(resolved.isolation, part, resolved.host.kernel, pins)
    tick = next((m for m in isolation if m.mechanism == "nohz_full"), None)
    runtime_plan = runtime.runtime(
        resolved.runtime, topo, part, host, resolved.host.os_source, one, tick
    )
    by_family = _by_family(merged)
    cstates = runtime.cstate_limit(
        resolved.kernel, part, pins, one.get(t.MAX_CSTATE), runtime_plan.owner, topo
    )
    limits = [Limit(LimitItem(r.name), r.value, r.reason) for r in by_family[settings.Family.LIMIT]]
    sysctls = [Sysctl(r.name, str(r.value), r.reason) for r in by_family[settings.Family.SYSCTL]]
    sysctls += nr_open_for(limits, sysctls, host)
    nodes = node_views(topo, part, pools)
    return Plan(
        host=host,
        partition=part,
        isolation=tuple(isolation),
        nodes=nodes,
        default_hugepagesz=memory.default_size(resolved),
        hugepages=tuple(pools),
        cmdline_settings=tuple(one[s] for s in t.CMDLINE_ROWS if s in one),  # the table's order
        cstates=cstates,
        extra_args=tuple(kernel.extra_args(resolved.kernel)),
        sysctls=tuple(sysctls),
        limits=tuple(limits),
        workloads=pins,
        runtime=runtime_plan,
        kubelet=lower_kubelet.lower(resolved.kubelet, part, nodes, host),
        left_out=(
            *resolved.left_out.preset,
            *kernel.nohz_left_out(resolved.isolation, isolation),
            *resolved.left_out.realtime,
        ),
        boot=boot(host, runtime_plan.owner),
        modules_load=tuple(
            ModuleLoad(r.value, r.reason) for r in by_family[settings.Family.MODULE_LOAD]
        ),
        hardware=hardware(topo),
    )


def node_views(
    topo: Topology, part: CpuPartition, pools: list[HugepagePool]
) -> tuple[NodeView, ...]:
    """Each NUMA node as `hostc plan` shows it: its CPUs on each side, devices, memory."""
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
    return tuple(nodes)
