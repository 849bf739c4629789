"""The compact snapshot file (`version = 2`) read back into a Topology.

`compact` holds the file model and writes it; reading is the larger half because
the file can say things a Topology cannot (a CPU on two nodes, a core across
nodes, `0` and `00` as one package), and each such problem is reported with the
file's own key path.  `file_path` maps a `validate` problem about `cpus[i]` back
to where that CPU is spelled in the file.
"""

from __future__ import annotations

import re

from hostc.cpuset import MAX_CPU, CpuListError, CpuSet
from hostc.diagnostics import Diagnostic, KeyPath, at, error
from hostc.record import FrozenMap
from hostc.topology.compact import GROUPS, VERSION, SnapshotFile
from hostc.topology.model import Link, LogicalCpu, NumaNode, Topology, known_cluster

_DIGITS = re.compile(r"[0-9]{1,9}")
# A core group is almost always plain ids ("0,112"); those skip the cpulist parser.
_PLAIN_GROUP = re.compile(r"[0-9]{1,5}(?:-[0-9]{1,5})?(?:,[0-9]{1,5}(?:-[0-9]{1,5})?)*")


class _Problems:
    def __init__(self) -> None:
        self.out: list[Diagnostic] = []

    def group(self, text: str, path: KeyPath) -> list[int]:
        if _PLAIN_GROUP.fullmatch(text):
            ids: list[int] = []
            for part in text.split(","):
                lo, _, hi = part.partition("-")
                ids.extend(range(int(lo), int(hi or lo) + 1))
            if ids and max(ids) <= MAX_CPU and len(set(ids)) == len(ids):
                return sorted(ids)
        return list(self.cpulist(text, path))

    def cpulist(self, text: str, path: KeyPath) -> CpuSet:
        try:
            return CpuSet.parse(text)
        except CpuListError as e:
            self.out.append(error(path, f"not a cpulist: {e}"))
            return CpuSet()


def _links_from_file(rows: dict[str, str], p: _Problems) -> tuple[Link, ...]:
    out: list[Link] = []
    for a, cells in rows.items():
        for cell in cells.split():
            b, sep, kind = cell.rpartition(":")
            if not sep or not b or not kind:
                p.out.append(error(at("links", a), f"cell {cell[:40]!r} is not OTHER:KIND"))
                continue
            out.append(Link(a=a, b=b, kind=kind))
    return tuple(out)


def _node_of(f: SnapshotFile, p: _Problems) -> dict[int, int]:
    """CPU → the node whose `cpus` lists it; a CPU on two nodes is a problem."""
    node: dict[int, int] = {}
    for i, n in enumerate(f.nodes):
        for cpu in p.cpulist(n.cpus, at("nodes", i, "cpus")):
            if cpu in node:
                p.out.append(
                    error(at("nodes", i, "cpus"), f"CPU {cpu} is also on NUMA node {node[cpu]}")
                )
            node[cpu] = n.id
    return node


def _core_of(
    f: SnapshotFile, p: _Problems, node: dict[int, int], offline: CpuSet
) -> dict[int, int]:
    """CPU → its core (the group's lowest CPU); a group must hold online CPUs of its node."""
    core: dict[int, int] = {}
    for i, n in enumerate(f.nodes):
        for group_text in n.cores.split():
            group = p.group(group_text, at("nodes", i, "cores"))
            if not group:
                continue
            first = group[0]
            for cpu in group:
                where = at("nodes", i, "cores")
                if node.get(cpu) != n.id:
                    p.out.append(error(where, f"core {group_text}: CPU {cpu} is not in `cpus`"))
                elif cpu in offline:
                    p.out.append(error(where, f"core {group_text}: CPU {cpu} is offline"))
                elif cpu in core:
                    p.out.append(error(where, f"CPU {cpu} is in two cores"))
                core[cpu] = first
    return core


def _group_values(name: str, entries: dict[str, str], p: _Problems) -> dict[int, str]:
    """CPU → its key in one of the `GROUPS` tables; numeric tables want distinct numbers."""
    seen: dict[int, str] = {}
    spelled: dict[int, str] = {}  # `0` and `00` are one package: a collision, not a merge
    for key, text in entries.items():
        if name != "kinds" and _DIGITS.fullmatch(key) is None:
            p.out.append(error(at(name, key), f"{name} keys are numbers, not {key!r}"))
            continue
        if name != "kinds":
            if int(key) in spelled:
                p.out.append(
                    error(
                        at(name, key),
                        f"{key!r} and {spelled[int(key)]!r} name the same {name[:-1]} {int(key)}",
                    )
                )
                continue
            spelled[int(key)] = key
        for cpu in p.cpulist(text, at(name, key)):
            if cpu in seen:
                p.out.append(error(at(name, key), f"CPU {cpu} is also in {seen[cpu]}"))
            seen[cpu] = key
    return seen


def _num(d: dict[int, str], cpu: int) -> int | None:
    v = d.get(cpu)
    return None if v is None else int(v)


def _cpus(f: SnapshotFile, p: _Problems) -> tuple[LogicalCpu, ...]:
    """Every CPU the nodes and `offline` name, with its core, node and group values."""
    node = _node_of(f, p)
    offline = p.cpulist(f.offline, at("offline"))
    core = _core_of(f, p, node, offline)
    values = {name: _group_values(name, getattr(f, name), p) for name in GROUPS}
    ids = sorted(set(node) | set(offline.ids))
    known = set(ids)
    for name, seen in values.items():
        stray = CpuSet(c for c in seen if c not in known)
        if stray:
            p.out.append(error(at(name), f"names CPUs {stray}, which are in no node nor `offline`"))
    packages, dies, clusters, kinds = (values[g] for g in GROUPS)
    return tuple(  # a list first: a generator would be resumed once per CPU
        [
            LogicalCpu(
                cpu,
                cpu not in offline,
                core.get(cpu),
                _num(packages, cpu),
                node.get(cpu),
                _num(dies, cpu),
                known_cluster(_num(clusters, cpu)),
                kinds.get(cpu),
            )
            for cpu in ids
        ]
    )


def from_file(f: SnapshotFile) -> tuple[Topology, list[Diagnostic]]:
    """The Topology and the problems only the file form can have (a CPU in two nodes …)."""
    p = _Problems()
    cpus = _cpus(f, p)
    topo = Topology(
        arch=f.arch,
        cpus=cpus,
        nodes=tuple(
            NumaNode(n.id, n.memory_mib, tuple(n.distances), FrozenMap(n.hugepages))
            for n in f.nodes
        ),
        version=VERSION,
        source=f.source,
        kernel=f.kernel,
        cmdline=f.cmdline,
        hugepage_sizes=tuple(f.hugepage_sizes),
        gpus=tuple(f.gpus),
        nics=tuple(f.nics),
        links=_links_from_file(f.links, p),
        unknown=tuple(f.unknown),
        cpu_vendor=f.cpu_vendor,
        cpu_model=f.cpu_model,
        kernel_config=FrozenMap(f.kernel_config),
        os=f.os,
        hidden_cpus=p.cpulist(f.hidden_cpus, at("hidden_cpus")),
        disallowed_cpus=p.cpulist(f.disallowed_cpus, at("disallowed_cpus")),
        notes=tuple(f.notes),
        hypervisor=f.hypervisor,
        cpufreq_driver=f.cpufreq_driver,
        cpuidle_driver=f.cpuidle_driver,
    )
    return topo, p.out


_FIELD_TO_FILE = {"package": "packages", "die": "dies", "cluster": "clusters", "kind": "kinds"}


def file_path(topo: Topology, f: SnapshotFile, path: KeyPath) -> KeyPath:
    """Where a `validate` problem about `cpus[i].field` lives in the version 2 file."""
    match path.parts:
        case ("cpus", int(index), str(field)) if index < len(topo.cpus):
            pass
        case _:
            return path
    cpu = topo.cpus[index]
    if field in _FIELD_TO_FILE:
        return at(_FIELD_TO_FILE[field])
    pos = next((i for i, n in enumerate(f.nodes) if n.id == cpu.node), None)
    if pos is None:
        return at("offline" if not cpu.online else "nodes")
    return at("nodes", pos, "cores" if field == "core" else "cpus")
