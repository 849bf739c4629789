"""Kubelet topology-manager admission: would the kubelet admit the pods this node is for?

Asked with the kubelet's own hint merge (`hostc.check.topology_hints`), for the largest GPU
request the spec declares (`max_gpus_per_pod`) and for workloads whose GPUs span nodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from hostc import vocab
from hostc.check import topology_hints as th
from hostc.diagnostics import Diagnostic, at, error, warning
from hostc.resolve import Resolved
from hostc.resolve.cpu import gpu_nodes
from hostc.spec.model import Kubelet
from hostc.topology.model import Topology


def _big_pod_admitted(k: Kubelet, topo: Topology, policy: vocab.TopologyPolicy) -> bool:
    """The kubelet's own merge for a pod with `max_gpus_per_pod` GPUs whose CPU and memory
    requests fit one NUMA node (one CPU, one MiB): is it admitted under `policy`?"""
    gpus = Counter(g.node for g in topo.gpus if g.node is not None)
    nodes = sorted(n.id for n in topo.nodes)
    cpus = {n.id: len(topo.node_cpus(n.id)) for n in topo.nodes}
    memory = {n.id: n.memory_mib or 0 for n in topo.nodes}
    providers = [
        th.provider_hints(k.max_gpus_per_pod or 0, {n: gpus.get(n, 0) for n in nodes}),
        th.provider_hints(1, cpus),
    ]
    if k.memory_manager_policy is vocab.MemoryManagerPolicy.STATIC:
        providers.append(th.provider_hints(1, memory))
    return th.admits(policy, nodes, providers)


def topology_admits_gpus(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    k = spec.kubelet
    if k is None:
        return
    if k.topology_manager_policy is vocab.TopologyPolicy.SINGLE_NUMA_NODE:
        for i, w in enumerate(spec.workload):
            nodes = gpu_nodes(topo, w.gpus)
            if len(nodes) > 1:
                yield error(
                    spec.workload_at(i).key("gpus"),
                    f"{w.name} uses GPUs on NUMA nodes {','.join(map(str, nodes))}, but the "
                    "topology manager policy single-numa-node admits only pods that fit on "
                    "one node: the pod fails with TopologyAffinityError",
                    hint="use topology_manager_policy best-effort, or GPUs of one node",
                )
    policy = k.topology_manager_policy
    if k.max_gpus_per_pod is None or policy not in (
        vocab.TopologyPolicy.RESTRICTED,
        vocab.TopologyPolicy.SINGLE_NUMA_NODE,
    ):
        return
    most = max(Counter(g.node for g in topo.gpus if g.node is not None).values(), default=0)
    if k.max_gpus_per_pod <= most or _big_pod_admitted(k, topo, policy):
        return
    head = (
        f"a pod asking for {k.max_gpus_per_pod} GPUs spans NUMA nodes (no node has more than "
        f"{most})"
    )
    tail = "TopologyAffinityError, and its controller recreates it in a loop"
    hint = "use topology_manager_policy best-effort: it aligns what it can and admits the pod"
    if policy is vocab.TopologyPolicy.SINGLE_NUMA_NODE:
        yield error(
            at("kubelet", "topology_manager_policy"),
            f"{head}; single-numa-node admits only pods that fit one node, so it fails with "
            + tail,
            hint=hint,
        )
        return
    yield warning(
        at("kubelet", "topology_manager_policy"),
        f"{head}; its GPU hint prefers several nodes while its CPU "
        + ("and memory hints prefer" if k.memory_manager_policy else "hint prefers")
        + " one, so no merged hint is preferred (the kubelet marks a merged hint preferred only "
        "if all affinities are equal) and restricted rejects it with "
        + tail
        + " (only pods whose CPU and memory requests also need several nodes pass)",
        hint=hint,
    )
