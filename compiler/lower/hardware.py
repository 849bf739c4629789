"""The topology facts the Plan keeps for pictures: packages, offline CPUs, GPU-NIC links."""

from __future__ import annotations

from hostc.cpuset import CpuSet
from hostc.plan import DeviceLink, Hardware
from hostc.topology.model import Topology


def hardware(topo: Topology) -> Hardware:
    """Packages per node, offline CPUs per node (None: the snapshot does not say), and the
    GPU-NIC links in either order of the matrix, GPU first, sorted for stable output."""
    packages: dict[int, int | None] = {}
    offline: dict[int | None, list[int]] = {}
    for c in topo.cpus:
        if c.online and c.node is not None:
            packages.setdefault(c.node, c.package)
        elif not c.online:
            offline.setdefault(c.node, []).append(c.id)
    gpus = {g.name for g in topo.gpus}
    nics = {n.name for n in topo.nics}
    links = set()
    for link in topo.links:
        if link.a in gpus and link.b in nics:
            links.add(DeviceLink(link.a, link.b, link.kind))
        elif link.b in gpus and link.a in nics:
            links.add(DeviceLink(link.b, link.a, link.kind))
    return Hardware(
        packages=tuple(sorted(packages.items())),
        offline=tuple(
            (n, CpuSet(ids))
            for n, ids in sorted(offline.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
        ),
        links=tuple(sorted(links, key=lambda x: (x.gpu, x.nic))),
    )
