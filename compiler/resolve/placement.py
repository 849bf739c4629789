"""GPU-local workloads: CPUs, memory nodes, closest NICs and NCCL's environment.

Each `[[workload]]` runs on the NUMA node(s) of its GPUs (or the nodes it
names).  On an isolated host it gets isolated CPUs of those nodes; workloads
that share a node split its isolated cores (whole cores, in proportion to the
GPUs each has there, spec order) unless one of them asks to share on purpose.
NICs are the ones on a PIX/PXB path to its GPUs when the snapshot has the link
matrix, else the ones on the same NUMA node.

Resolved here, once per host (`Resolved.placements`): the preset merge is judged on the
placements (pinned workloads, RDMA NICs handed out) and lowering copies them into the
Plan, so the spec's `[[workload]]` and `[nccl]` keys are read in this one module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hostc.cpuset import CpuSet
from hostc.knowledge.gpu import MAX_NVLINKS_PER_GPU, NVSWITCH_DAEMONS, nvswitch
from hostc.plan.model import CpuPartition, Placement, Reason
from hostc.provenance import key, topology
from hostc.resolve.cpu import gpu_nodes
from hostc.spec.model import HostSpec
from hostc.spec.model import Workload as SpecWorkload
from hostc.topology.model import Nic, Topology


def nodes_of(topo: Topology, w: SpecWorkload) -> list[int]:
    if w.nodes is not None and not w.gpus:
        return sorted(set(w.nodes))
    return gpu_nodes(topo, w.gpus)


def unit_of(w: SpecWorkload) -> str:
    return w.unit if w.unit is not None else f"{w.name}.service"


def _weights(gpu_node: dict[str, int | None], w: SpecWorkload, node: int) -> int:
    return max(1, sum(1 for g in w.gpus if gpu_node.get(g) == node))


def split(cores: Sequence[int], weights: Sequence[int]) -> list[CpuSet]:
    """Whole cores (as masks), contiguous, in proportion to `weights` (largest
    remainder, in order)."""
    total = sum(weights)
    n = len(cores)
    exact = [n * w / total for w in weights]
    counts = [int(x) for x in exact]
    left = n - sum(counts)
    for i in sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))[:left]:
        counts[i] += 1
    out, at = [], 0
    for c in counts:
        bits = 0
        for core in cores[at : at + c]:
            bits |= core
        out.append(CpuSet._from_bits(bits))
        at += c
    return out


def isolated_shares(
    spec: HostSpec, topo: Topology, part: CpuPartition, nodes: Sequence[Sequence[int]]
) -> list[CpuSet]:
    """Each workload's isolated CPUs (empty where its nodes have none); `nodes[i]` are
    workload i's NUMA nodes.  Worked in masks, one CpuSet per workload at the end."""
    shares = [0] * len(spec.workload)
    gpu_node = {g.name: g.node for g in topo.gpus}
    by_first = topo.cores_by_first  # the partition's cores: the snapshot's online ones
    isolated = part.isolated.bits
    for node in topo.node_ids():
        iso = topo.node_cpus(node).bits & isolated
        if not iso:
            continue
        here = [i for i in range(len(spec.workload)) if node in nodes[i]]
        own = [i for i in here if not spec.workload[i].share_cpus]
        for i in here:
            if spec.workload[i].share_cpus:
                shares[i] |= iso
        if not own:
            continue
        outside = ~iso
        cores = [bits for _, bits in by_first if not bits & outside]
        if len(cores) < len(own):  # too few cores to split: they share (check warns)
            for i in own:
                shares[i] |= iso
            continue
        parts = split(cores, [_weights(gpu_node, spec.workload[i], node) for i in own])
        for i, cpus in zip(own, parts, strict=True):
            shares[i] |= cpus.bits
    return [CpuSet._from_bits(s) for s in shares]


def closest_nics(
    topo: Topology, gpus: Sequence[str], nodes: Sequence[int]
) -> tuple[list[Nic], str]:
    if topo.links and gpus:
        peers = topo.close_peers
        close = frozenset().union(*(peers.get(g, ()) for g in gpus))
        found = [n for n, names in topo.nic_names if not names.isdisjoint(close)]
        if found:
            return found, "on a PIX/PXB path to its GPUs (the snapshot's link matrix)"
    on_node = [n for n in topo.nics if n.node is not None and n.node in nodes]
    return on_node, "on the same NUMA node as its GPUs (no PIX/PXB link in the snapshot)"


_SOCKET_REASON = Reason(
    key("nccl", "socket_ifname"),
    "NCCL bootstraps over this interface (it must carry an IP address); the RDMA NICs "
    "above carry the data",
)


def nccl_env(nics: Sequence[Nic], socket_ifname: str | None = None) -> list[tuple[str, str]]:
    """`=` asks NCCL for exact names: a bare `mlx5_1` would also match mlx5_10 … mlx5_17.

    NCCL_SOCKET_IFNAME picks the interface NCCL *bootstraps* over, which must carry an
    IP address; the RDMA NICs' netdevs often carry none (NCCL then fails at init with
    "Bootstrap : no socket interface found"), and the snapshot holds no addresses.  So
    it is set only from the spec's `[nccl] socket_ifname`, never from the NICs."""
    out = []
    hcas = [n.rdma for n in nics if n.rdma]
    if hcas:
        out.append(("NCCL_IB_HCA", "=" + ",".join(hcas)))
    if socket_ifname is not None:
        out.append(("NCCL_SOCKET_IFNAME", "=" + socket_ifname))
    return out


_NV = re.compile(r"NV([0-9]{1,3})")


def nvlink_counts(topo: Topology) -> dict[str, dict[str, int]]:
    """GPU → peer GPU → NV# of the pair, from the link matrix (either order)."""
    gpus = {g.name for g in topo.gpus}
    out: dict[str, dict[str, int]] = {}
    for link in topo.links:
        m = _NV.fullmatch(link.kind.upper())
        if m and link.a in gpus and link.b in gpus and link.a != link.b:
            out.setdefault(link.a, {})[link.b] = int(m.group(1))
            out.setdefault(link.b, {})[link.a] = int(m.group(1))
    return out


_FM, _PERSISTENCED = NVSWITCH_DAEMONS
_DAEMONS_REASON = Reason(
    topology("links"),
    f"NVSwitch host (a GPU's NV# counts to its peers exceed the {MAX_NVLINKS_PER_GPU} links "
    f"one GPU has): CUDA fails with cudaErrorSystemNotReady until {_FM} "
    f"{NVSWITCH_DAEMONS[_FM]}, and {_PERSISTENCED} {NVSWITCH_DAEMONS[_PERSISTENCED]}; "
    "After= only orders, a host without them is neither held nor failed",
)


def gpu_daemons(topo: Topology) -> tuple[tuple[str, ...], Reason | None]:
    """The GPU daemons a GPU workload starts after (NVSwitch hosts only), with the reason."""
    if nvswitch(nvlink_counts(topo)):
        return tuple(NVSWITCH_DAEMONS), _DAEMONS_REASON
    return (), None


def workloads(spec: HostSpec, topo: Topology, part: CpuPartition) -> list[Placement]:
    nodes_each = [nodes_of(topo, w) for w in spec.workload]
    daemons, daemons_reason = gpu_daemons(topo)
    shares = isolated_shares(spec, topo, part, nodes_each)
    out = []
    for i, w in enumerate(spec.workload):
        nodes = nodes_each[i]
        node_list = ",".join(map(str, nodes))
        iso = shares[i]
        if iso:
            cpus = iso
            what = "isolated CPUs" + (" (shared on purpose)" if w.share_cpus else "")
        else:
            cpus = topo.cpus_of_nodes(nodes)
            what = "CPUs"
        if w.gpus:
            src, whom = key("workload", i, "gpus"), f"{', '.join(w.gpus)} sit"
        else:
            src, whom = key("workload", i, "nodes"), "it asks to run"
        nics, how = closest_nics(topo, w.gpus, nodes)
        out.append(
            Placement(
                w.name,
                tuple(w.gpus),
                tuple(nodes),
                cpus,
                Reason(
                    src,
                    f"{whom} on NUMA node(s) {node_list}: run on its {what} and bind memory there",
                ),
                unit=unit_of(w),
                nics=tuple(n.name for n in nics),
                env=tuple(nccl_env(nics, spec.nccl.socket_ifname)),
                nics_reason=Reason(topology("nics"), f"NICs {how}") if nics else None,
                shared=w.share_cpus,
                socket_reason=_SOCKET_REASON if spec.nccl.socket_ifname is not None else None,
                after=daemons if w.gpus else (),
                after_reason=daemons_reason if w.gpus else None,
            )
        )
    return out
