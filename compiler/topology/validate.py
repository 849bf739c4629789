"""Snapshot validation on read: a broken snapshot is an input error, never an exception later."""

from __future__ import annotations

from collections import Counter

from hostc.diagnostics import Diagnostic, error
from hostc.topology.model import Topology

_SIZES = {"64K", "2M", "32M", "512M", "1G", "16G", "16M"}


def validate(topo: Topology) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if not topo.cpus:
        out.append(error("cpus", "the snapshot lists no CPUs"))
    if not topo.nodes:
        out.append(
            error(
                "nodes",
                "the snapshot lists no NUMA nodes",
                hint="a machine without NUMA is one node: [[nodes]] id = 0",
            )
        )
    for cid, n in Counter(c.id for c in topo.cpus).items():
        if n > 1:
            out.append(error("cpus", f"CPU {cid} is listed {n} times"))
    for nid, n in Counter(x.id for x in topo.nodes).items():
        if n > 1:
            out.append(error("nodes", f"NUMA node {nid} is listed {n} times"))
    node_ids = {x.id for x in topo.nodes}
    for i, c in enumerate(topo.cpus):
        if c.id < 0:
            out.append(error(f"cpus[{i}].id", f"negative CPU id {c.id}"))
        if not c.online:
            continue
        if c.node is None:
            out.append(error(f"cpus[{i}].node", f"online CPU {c.id} has no NUMA node"))
        elif c.node not in node_ids:
            out.append(
                error(
                    f"cpus[{i}].node",
                    f"CPU {c.id} is on NUMA node {c.node}, which is not in `nodes`",
                )
            )
    if not any(c.online for c in topo.cpus) and topo.cpus:
        out.append(error("cpus", "no CPU is online"))
    # SMT siblings must agree on package and node (a core cannot straddle sockets).
    cores: dict[int, list[int]] = {}
    for i, c in enumerate(topo.cpus):
        if c.online and c.core is not None:
            cores.setdefault(c.core, []).append(i)
    for core, idx in cores.items():
        pk = {topo.cpus[i].package for i in idx}
        nd = {topo.cpus[i].node for i in idx}
        if len(pk) > 1 or len(nd) > 1:
            cpus = ",".join(str(topo.cpus[i].id) for i in idx)
            out.append(
                error(
                    f"cpus[{idx[0]}].core",
                    f"core {core} (CPUs {cpus}) spans several packages or NUMA nodes",
                )
            )
    count = len(topo.nodes)
    for i, nd_ in enumerate(topo.nodes):
        if nd_.memory_mib is not None and nd_.memory_mib < 0:
            out.append(error(f"nodes[{i}].memory_mib", f"node {nd_.id} has negative memory"))
        if nd_.distances and len(nd_.distances) != count:
            out.append(
                error(
                    f"nodes[{i}].distances",
                    f"node {nd_.id} has {len(nd_.distances)} distances for {count} nodes",
                )
            )
    devices: list[tuple[str, list[tuple[str, int | None]]]] = [
        ("gpus", [(g.name, g.node) for g in topo.gpus]),
        ("nics", [(n.name, n.node) for n in topo.nics]),
    ]
    for kind, devs in devices:
        for i, (dname, dnode) in enumerate(devs):
            if dnode is not None and dnode not in node_ids:
                out.append(
                    error(
                        f"{kind}[{i}].node",
                        f"{dname} is on NUMA node {dnode}, which is not in `nodes`",
                    )
                )
        for name, n in Counter(d for d, _ in devs).items():
            if n > 1:
                out.append(error(kind, f"device name {name!r} is listed {n} times"))
    for i, s in enumerate(topo.hugepage_sizes):
        if s not in _SIZES:
            out.append(
                error(
                    f"hugepage_sizes[{i}]",
                    f"unknown hugepage size {s!r}",
                    hint="write sizes as the kernel does: 2M, 1G",
                )
            )
    return out
