"""The compact snapshot file (`version = 2`): CPU facts as cpulists, not one table per CPU.

Version 1 wrote `{ id = 7, online = true, core = 7, package = 0, node = 0 }` for
every CPU: 224 lines on a DGX, 8,192 on a large machine, slow to parse and
unreadable in a pull request.  Version 2 says the same with a few cpulists:

    offline = "224-255"
    [packages]            # package id → its CPUs
    0 = "0-55,112-167"
    [[nodes]]
    id = 0
    cpus = "0-55,112-167"           # every CPU of the node
    cores = "0,112 1,113 2,114 …"   # SMT siblings, one group per core

A core is named by its lowest online thread (as in version 1); online CPUs in
no group have unknown siblings.  This module holds the file model and maps a
`Topology` to it; `compact_read` maps it back, and `snapshot` reads the version
field and validates.
"""

from __future__ import annotations

import attrs

from hostc.cpuset import CpuSet
from hostc.fielddoc import doc
from hostc.inputs import is_number
from hostc.record import Record
from hostc.topology.model import (
    CPUFREQ_DOC,
    CPUIDLE_DOC,
    HYPERVISOR_DOC,
    Gpu,
    Link,
    Nic,
    OsRelease,
    Topology,
)

VERSION = 2


@attrs.frozen(repr=False, eq=False)
class NodeFile(Record):
    """One NUMA node and the CPUs on it."""

    id: int = attrs.field(metadata=doc("NUMA node id", 0))
    cpus: str = attrs.field(
        default="", metadata=doc("every CPU of the node, online or not (cpulist)", "0-31,64-95")
    )
    cores: str = attrs.field(
        default="",
        metadata=doc(
            "SMT siblings: one cpulist per core, separated by spaces; online CPUs of the node "
            "in no group have unknown siblings",
            "0,64 1,65 2,66",
        ),
    )
    memory_mib: int | None = attrs.field(
        default=None, metadata=doc("total memory of the node in MiB (unknown in some captures)")
    )
    distances: list[int] = attrs.field(
        factory=list,
        metadata=doc("SLIT distances to every node, in the order of the `nodes` list", [10, 21]),
    )
    hugepages: dict[str, int] = attrs.field(
        factory=dict, metadata=doc("hugepage pools present at capture, size → pages", {"1G": 0})
    )


#: The file's CPU group tables (`[packages]` …): each value → the cpulist of its CPUs.
GROUPS = ("packages", "dies", "clusters", "kinds")


@attrs.frozen(repr=False, eq=False)
class SnapshotFile(Record):
    """A machine: CPUs, NUMA nodes, devices.  `hostc probe` and `hostc import` write it."""

    version: int = attrs.field(metadata=doc("snapshot format version (1 is still read)", 2))
    arch: str = attrs.field(metadata=doc("machine architecture (uname -m)", "x86_64"))
    nodes: list[NodeFile] = attrs.field(metadata=doc("NUMA nodes, CPU-less ones included"))
    source: str | None = attrs.field(
        default=None, metadata=doc("what produced the snapshot (probe, hwloc, lscpu, …)")
    )
    kernel: str | None = attrs.field(
        default=None, metadata=doc("kernel release the host runs (uname -r)", "6.8.0-45-generic")
    )
    cpu_vendor: str | None = attrs.field(
        default=None, metadata=doc("CPU vendor: intel, amd, hygon; arm64 implementer", "intel")
    )
    cpu_model: str | None = attrs.field(default=None, metadata=doc("CPU model name"))
    hypervisor: bool | None = attrs.field(default=None, metadata=doc(HYPERVISOR_DOC, False))
    cpufreq_driver: str | None = attrs.field(
        default=None, metadata=doc(CPUFREQ_DOC, "intel_pstate")
    )
    cpuidle_driver: str | None = attrs.field(default=None, metadata=doc(CPUIDLE_DOC, "intel_idle"))
    kernel_config: dict[str, str] = attrs.field(
        factory=dict,
        metadata=doc(
            "the kernel build options hostc consults (from /boot/config-<release>): y, m or n",
            {"CONFIG_NO_HZ_FULL": "y", "CONFIG_RCU_NOCB_CPU": "y"},
        ),
    )
    cmdline: str | None = attrs.field(
        default=None, metadata=doc("/proc/cmdline at capture, for auditing")
    )
    hugepage_sizes: list[str] = attrs.field(
        factory=list, metadata=doc("hugepage sizes the CPU supports", ["2M", "1G"])
    )
    offline: str = attrs.field(default="", metadata=doc("offline CPUs (cpulist)", "128-255"))
    hidden_cpus: str = attrs.field(
        default="",
        metadata=doc("online CPUs the export left out (listed offline), cpulist"),
    )
    disallowed_cpus: str = attrs.field(
        default="", metadata=doc("CPUs outside the capturing process's cgroup, cpulist")
    )
    unknown: list[str] = attrs.field(
        factory=list,
        metadata=doc("facts the source could not tell (e.g. smt, memory)", ["smt"]),
    )
    notes: list[str] = attrs.field(
        factory=list, metadata=doc("what the source said with reservations")
    )
    os: OsRelease | None = attrs.field(
        default=None, metadata=doc("distribution from /etc/os-release")
    )
    packages: dict[str, str] = attrs.field(
        factory=dict, metadata=doc("socket id → its CPUs (cpulist)", {"0": "0-31,64-95"})
    )
    dies: dict[str, str] = attrs.field(factory=dict, metadata=doc("die id → its CPUs"))
    clusters: dict[str, str] = attrs.field(
        factory=dict, metadata=doc("cluster id (arm64, hybrid x86) → its CPUs")
    )
    kinds: dict[str, str] = attrs.field(
        factory=dict,
        metadata=doc("core kind on hybrid CPUs → its CPUs", {"IntelCore": "0-11"}),
    )
    gpus: list[Gpu] = attrs.field(factory=list, metadata=doc("GPUs (3D/VGA controllers)"))
    nics: list[Nic] = attrs.field(factory=list, metadata=doc("network and RDMA devices"))
    links: dict[str, str] = attrs.field(
        factory=dict,
        metadata=doc(
            "GPU/NIC link matrix from nvidia-smi topo -m: device → `OTHER:KIND` cells, "
            "separated by spaces",
            {"GPU0": "GPU1:NV18 NIC0:PIX"},
        ),
    )


# ---- Topology → file -------------------------------------------------------


def _group_str(ids: list[int]) -> str:
    return str(CpuSet(ids))


def _node_files(topo: Topology) -> list[NodeFile]:
    """Each node with its CPUs and its cores, a core listed under the node of its name."""
    by_node: dict[int, list[int]] = {}
    cores: dict[int, list[int]] = {}
    for c in topo.cpus:
        if c.node is not None:
            by_node.setdefault(c.node, []).append(c.id)
        if c.online and c.core is not None:
            cores.setdefault(c.core, []).append(c.id)
    node_of = {c.id: c.node for c in topo.cpus}
    cores_by_node: dict[int | None, list[str]] = {}
    for core in sorted(cores):
        cores_by_node.setdefault(node_of.get(core), []).append(_group_str(cores[core]))
    return [
        NodeFile(
            id=n.id,
            cpus=_group_str(by_node.get(n.id, [])),
            cores=" ".join(cores_by_node.get(n.id, [])),
            memory_mib=n.memory_mib,
            distances=list(n.distances),
            hugepages=dict(n.hugepages),
        )
        for n in topo.nodes
    ]


def _ordered(d: dict[str, list[int]]) -> dict[str, str]:
    """Numeric keys in numeric order, then the rest (kinds) by name: a stable file."""
    keys = sorted(d, key=lambda k: (not is_number(k), int(k) if is_number(k) else 0, k))
    return {k: _group_str(d[k]) for k in keys}


def _cpu_groups(topo: Topology) -> dict[str, dict[str, str]]:
    """packages, dies, clusters and kinds: each value → the cpulist of the CPUs that have it."""
    groups: dict[str, dict[str, list[int]]] = {g: {} for g in GROUPS}
    for c in topo.cpus:
        for name, value in (
            ("packages", c.package),
            ("dies", c.die),
            ("clusters", c.cluster),
            ("kinds", c.kind),
        ):
            if value is not None:
                groups[name].setdefault(str(value), []).append(c.id)
    return {name: _ordered(ids) for name, ids in groups.items()}


def to_file(topo: Topology) -> SnapshotFile:
    """The file form; exact for every Topology that `validate` accepts."""
    groups = _cpu_groups(topo)
    return SnapshotFile(
        version=VERSION,
        arch=topo.arch,
        nodes=_node_files(topo),
        source=topo.source,
        kernel=topo.kernel,
        cpu_vendor=topo.cpu_vendor,
        cpu_model=topo.cpu_model,
        hypervisor=topo.hypervisor,
        cpufreq_driver=topo.cpufreq_driver,
        cpuidle_driver=topo.cpuidle_driver,
        kernel_config=dict(topo.kernel_config),
        cmdline=topo.cmdline,
        hugepage_sizes=list(topo.hugepage_sizes),
        offline=_group_str([c.id for c in topo.cpus if not c.online]),
        hidden_cpus=str(topo.hidden_cpus),
        disallowed_cpus=str(topo.disallowed_cpus),
        unknown=list(topo.unknown),
        notes=list(topo.notes),
        os=topo.os,
        packages=groups["packages"],
        dies=groups["dies"],
        clusters=groups["clusters"],
        kinds=groups["kinds"],
        gpus=list(topo.gpus),
        nics=list(topo.nics),
        links=_links_to_file(topo.links),
    )


def _links_to_file(links: tuple[Link, ...]) -> dict[str, str]:
    rows: dict[str, list[str]] = {}
    for link in links:
        rows.setdefault(link.a, []).append(f"{link.b}:{link.kind}")
    return {a: " ".join(cells) for a, cells in rows.items()}
