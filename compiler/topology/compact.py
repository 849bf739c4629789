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
no group have unknown siblings.  This module maps the file model to `Topology`
and back; `snapshot` reads the version field and validates.
"""

from __future__ import annotations

import re

import attrs

from hostc.cpuset import MAX_CPU, CpuListError, CpuSet
from hostc.diagnostics import Diagnostic, error
from hostc.fielddoc import doc
from hostc.topology.model import Gpu, Link, LogicalCpu, Nic, NumaNode, OsRelease, Topology

VERSION = 2


@attrs.frozen
class NodeFile:
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


_GROUPS = ("packages", "dies", "clusters", "kinds")


@attrs.frozen
class SnapshotFile:
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


def to_file(topo: Topology) -> SnapshotFile:
    """The file form; exact for every Topology that `validate` accepts."""
    by_node: dict[int, list[int]] = {}
    cores: dict[int, list[int]] = {}
    groups: dict[str, dict[str, list[int]]] = {g: {} for g in _GROUPS}
    offline: list[int] = []
    for c in topo.cpus:
        if c.node is not None:
            by_node.setdefault(c.node, []).append(c.id)
        if not c.online:
            offline.append(c.id)
        elif c.core is not None:
            cores.setdefault(c.core, []).append(c.id)
        for name, value in (
            ("packages", c.package),
            ("dies", c.die),
            ("clusters", c.cluster),
            ("kinds", c.kind),
        ):
            if value is not None:
                groups[name].setdefault(str(value), []).append(c.id)
    node_of = {c.id: c.node for c in topo.cpus}
    cores_by_node: dict[int | None, list[str]] = {}
    for core in sorted(cores):
        cores_by_node.setdefault(node_of.get(core), []).append(_group_str(cores[core]))
    nodes = [
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

    def ordered(d: dict[str, list[int]]) -> dict[str, str]:
        keys = sorted(d, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k))
        return {k: _group_str(d[k]) for k in keys}

    return SnapshotFile(
        version=VERSION,
        arch=topo.arch,
        nodes=nodes,
        source=topo.source,
        kernel=topo.kernel,
        cpu_vendor=topo.cpu_vendor,
        cpu_model=topo.cpu_model,
        kernel_config=dict(topo.kernel_config),
        cmdline=topo.cmdline,
        hugepage_sizes=list(topo.hugepage_sizes),
        offline=_group_str(offline),
        hidden_cpus=str(topo.hidden_cpus),
        disallowed_cpus=str(topo.disallowed_cpus),
        unknown=list(topo.unknown),
        notes=list(topo.notes),
        os=topo.os,
        packages=ordered(groups["packages"]),
        dies=ordered(groups["dies"]),
        clusters=ordered(groups["clusters"]),
        kinds=ordered(groups["kinds"]),
        gpus=list(topo.gpus),
        nics=list(topo.nics),
        links=_links_to_file(topo.links),
    )


def _links_to_file(links: list[Link]) -> dict[str, str]:
    rows: dict[str, list[str]] = {}
    for link in links:
        rows.setdefault(link.a, []).append(f"{link.b}:{link.kind}")
    return {a: " ".join(cells) for a, cells in rows.items()}


# ---- file → Topology -------------------------------------------------------

_DIGITS = re.compile(r"[0-9]{1,9}")
# A core group is almost always plain ids ("0,112"); those skip the cpulist parser.
_PLAIN_GROUP = re.compile(r"[0-9]{1,5}(?:-[0-9]{1,5})?(?:,[0-9]{1,5}(?:-[0-9]{1,5})?)*")


class _Problems:
    def __init__(self) -> None:
        self.out: list[Diagnostic] = []

    def group(self, text: str, path: str) -> list[int]:
        if _PLAIN_GROUP.fullmatch(text):
            ids: list[int] = []
            for part in text.split(","):
                lo, _, hi = part.partition("-")
                ids.extend(range(int(lo), int(hi or lo) + 1))
            if ids and max(ids) <= MAX_CPU and len(set(ids)) == len(ids):
                return sorted(ids)
        return list(self.cpulist(text, path))

    def cpulist(self, text: str, path: str) -> CpuSet:
        try:
            return CpuSet.parse(text)
        except CpuListError as e:
            self.out.append(error(path, f"not a cpulist: {e}"))
            return CpuSet()


def _links_from_file(rows: dict[str, str], p: _Problems) -> list[Link]:
    out: list[Link] = []
    for a, cells in rows.items():
        for cell in cells.split():
            b, sep, kind = cell.rpartition(":")
            if not sep or not b or not kind:
                p.out.append(error(f"links.{a}", f"cell {cell[:40]!r} is not OTHER:KIND"))
                continue
            out.append(Link(a=a, b=b, kind=kind))
    return out


def from_file(f: SnapshotFile) -> tuple[Topology, list[Diagnostic]]:
    """The Topology and the problems only the file form can have (a CPU in two nodes …)."""
    p = _Problems()
    node: dict[int, int] = {}
    for i, n in enumerate(f.nodes):
        for cpu in p.cpulist(n.cpus, f"nodes[{i}].cpus"):
            if cpu in node:
                p.out.append(
                    error(f"nodes[{i}].cpus", f"CPU {cpu} is also on NUMA node {node[cpu]}")
                )
            node[cpu] = n.id
    offline = p.cpulist(f.offline, "offline")
    core: dict[int, int] = {}
    for i, n in enumerate(f.nodes):
        for group_text in n.cores.split():
            group = p.group(group_text, f"nodes[{i}].cores")
            if not group:
                continue
            first = group[0]
            for cpu in group:
                where = f"nodes[{i}].cores"
                if node.get(cpu) != n.id:
                    p.out.append(error(where, f"core {group_text}: CPU {cpu} is not in `cpus`"))
                elif cpu in offline:
                    p.out.append(error(where, f"core {group_text}: CPU {cpu} is offline"))
                elif cpu in core:
                    p.out.append(error(where, f"CPU {cpu} is in two cores"))
                core[cpu] = first
    values: dict[str, dict[int, str]] = {}
    for name in _GROUPS:
        seen: dict[int, str] = {}
        spelled: dict[int, str] = {}  # `0` and `00` are one package: a collision, not a merge
        for key, text in getattr(f, name).items():
            if name != "kinds" and _DIGITS.fullmatch(key) is None:
                p.out.append(error(f"{name}.{key}", f"{name} keys are numbers, not {key!r}"))
                continue
            if name != "kinds":
                if int(key) in spelled:
                    p.out.append(
                        error(
                            f"{name}.{key}",
                            f"{key!r} and {spelled[int(key)]!r} name the same {name[:-1]} "
                            f"{int(key)}",
                        )
                    )
                    continue
                spelled[int(key)] = key
            for cpu in p.cpulist(text, f"{name}.{key}"):
                if cpu in seen:
                    p.out.append(error(f"{name}.{key}", f"CPU {cpu} is also in {seen[cpu]}"))
                seen[cpu] = key
        values[name] = seen
    ids = sorted(set(node) | set(offline.ids))
    known = set(ids)
    for name, seen in values.items():
        stray = CpuSet(c for c in seen if c not in known)
        if stray:
            p.out.append(error(name, f"names CPUs {stray}, which are in no node nor `offline`"))
    packages, dies, clusters, kinds = (values[g] for g in _GROUPS)

    def num(d: dict[int, str], cpu: int) -> int | None:
        v = d.get(cpu)
        return None if v is None else int(v)

    cpus = [
        LogicalCpu(
            cpu,
            cpu not in offline,
            core.get(cpu),
            num(packages, cpu),
            node.get(cpu),
            num(dies, cpu),
            num(clusters, cpu),
            kinds.get(cpu),
        )
        for cpu in ids
    ]
    topo = Topology(
        arch=f.arch,
        cpus=cpus,
        nodes=[NumaNode(n.id, n.memory_mib, list(n.distances), dict(n.hugepages)) for n in f.nodes],
        version=VERSION,
        source=f.source,
        kernel=f.kernel,
        cmdline=f.cmdline,
        hugepage_sizes=list(f.hugepage_sizes),
        gpus=list(f.gpus),
        nics=list(f.nics),
        links=_links_from_file(f.links, p),
        unknown=list(f.unknown),
        cpu_vendor=f.cpu_vendor,
        cpu_model=f.cpu_model,
        kernel_config=dict(f.kernel_config),
        os=f.os,
        hidden_cpus=p.cpulist(f.hidden_cpus, "hidden_cpus"),
        disallowed_cpus=p.cpulist(f.disallowed_cpus, "disallowed_cpus"),
        notes=list(f.notes),
    )
    return topo, p.out


_CPU_PATH = re.compile(r"^cpus\[(\d+)\]\.(\w+)$")
_FIELD_TO_FILE = {"package": "packages", "die": "dies", "cluster": "clusters", "kind": "kinds"}


def file_path(topo: Topology, f: SnapshotFile, path: str) -> str:
    """Where a `validate` problem about `cpus[i].field` lives in the version 2 file."""
    m = _CPU_PATH.match(path)
    if m is None:
        return path
    index, field = int(m.group(1)), m.group(2)
    if index >= len(topo.cpus):
        return path
    cpu = topo.cpus[index]
    if field in _FIELD_TO_FILE:
        return _FIELD_TO_FILE[field]
    pos = next((i for i, n in enumerate(f.nodes) if n.id == cpu.node), None)
    if pos is None:
        return "offline" if not cpu.online else "nodes"
    return f"nodes[{pos}].cores" if field == "core" else f"nodes[{pos}].cpus"
