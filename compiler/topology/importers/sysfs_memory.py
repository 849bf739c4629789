"""NUMA nodes and memory in sysfs: each node's CPUs, MemTotal, distances and
hugepage pools, or one node from /proc/meminfo on a kernel without NUMA.
"""

from __future__ import annotations

import re

import attrs

from hostc.topology.importers.sysfs_reader import DECIMAL, FILE_LIMIT, Reader, numbered
from hostc.topology.model import LogicalCpu, NumaNode
from hostc.units import format_kib

NODE_DIR = "sys/devices/system/node"
HUGEPAGE_DIR = "sys/kernel/mm/hugepages"
_HUGEPAGES = re.compile(r"^hugepages-([0-9]{1,12})kB$")
_MEMTOTAL = re.compile(r"^(?:Node\s+[0-9]+\s+)?MemTotal:\s+([0-9]{1,15})\s+kB\s*$", re.MULTILINE)


def _memtotal_only(text: str) -> str:
    """Keep meminfo's MemTotal line: the rest changes by the second and is never used."""
    return "".join(line for line in text.splitlines(keepends=True) if "MemTotal:" in line)


def _memtotal_mib(r: Reader, rel: str) -> int | None:
    """MemTotal in MiB; a file without that line is broken, not a machine without memory."""
    text = r.text(rel, keep=_memtotal_only, limit=FILE_LIMIT)
    if text is None:
        return None
    m = _MEMTOTAL.search(text)
    if m is None:
        r.fail(rel, "has no 'MemTotal: N kB' line")
        return None
    return int(m.group(1)) // 1024


def hugepage_dirs(r: Reader, rel: str) -> dict[int, str]:
    """Size in KiB → directory, for the hugepages-<N>kB entries of `rel`."""
    out: dict[int, str] = {}
    for name in r.listdir(rel):
        if m := _HUGEPAGES.match(name):
            out[int(m.group(1))] = f"{rel}/{name}"
            r.mark(f"{rel}/{name}")
    return dict(sorted(out.items()))


def _hugepages(r: Reader, rel: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for kib, d in hugepage_dirs(r, rel).items():
        count = r.integer(f"{d}/nr_hugepages")
        if count is not None:
            out[format_kib(kib)] = count
    return out


def read_nodes(
    r: Reader, cpus: list[LogicalCpu]
) -> tuple[list[NumaNode], list[LogicalCpu], list[str]]:
    """The nodes, the CPUs with their node set, and ["memory"] when a MemTotal is missing."""
    ids = numbered(r, NODE_DIR, "node")
    if not ids:
        # A kernel without CONFIG_NUMA (or a container hiding it) is one node.
        memory = _memtotal_mib(r, "proc/meminfo")
        node = NumaNode(0, memory, (10,), _hugepages(r, HUGEPAGE_DIR))
        cpus = [attrs.evolve(c, node=0) if c.online else c for c in cpus]
        return [node], cpus, ["memory"] if memory is None else []
    nodes: list[NumaNode] = []
    where: dict[int, int] = {}
    unknown: list[str] = []
    for k in ids:
        d = f"{NODE_DIR}/node{k}"
        r.mark(d)
        for cpu in r.cpulist(f"{d}/cpulist") or ():
            if cpu in where:
                r.fail(f"{d}/cpulist", f"CPU {cpu} is also in node{where[cpu]}'s cpulist")
            where[cpu] = k
        memory = _memtotal_mib(r, f"{d}/meminfo")
        if memory is None and "memory" not in unknown:
            unknown.append("memory")
        distances: list[int] = []
        text = r.text(f"{d}/distance")
        if text is not None:
            if all(DECIMAL.fullmatch(x) for x in text.split()):
                distances = [int(x) for x in text.split()]
            else:
                r.fail(f"{d}/distance", f"expected numbers, found {text.strip()[:40]!r}")
            if distances and len(distances) != len(ids):
                r.fail(f"{d}/distance", f"has {len(distances)} distances for {len(ids)} nodes")
                distances = []
        nodes.append(NumaNode(k, memory, tuple(distances), _hugepages(r, f"{d}/hugepages")))
    cpus = [attrs.evolve(c, node=where.get(c.id)) if c.online else c for c in cpus]
    return nodes, cpus, unknown
