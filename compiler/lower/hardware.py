"""The topology facts the Plan keeps for pictures: packages, offline CPUs, GPU-NIC links."""

from __future__ import annotations

from hostc.plan.model import DeviceLink, Hardware
from hostc.topology.model import Topology


def hardware(topo: Topology) -> Hardware:
    """Packages per node, offline CPUs per node (None: the snapshot does not say), and the
    GPU-NIC links in either order of the matrix, GPU first, sorted for stable output: views
    of the snapshot, computed once however many hosts share it."""
    return Hardware(
        packages=topo.packages_by_node,
        offline=topo.offline_by_node,
        links=tuple(DeviceLink(gpu, nic, kind) for gpu, nic, kind in topo.gpu_nic_links),
    )
