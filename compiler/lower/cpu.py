"""Resolve CPU intent into concrete sets: housekeeping, isolated, workload pins.

These functions are shared by `check` (which validates what they would
produce) and `lower` (which records it in the Plan); they never raise on a
spec that passed the parse rules in `check.cpu`.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable

from hostc.cpuset import CpuSet
from hostc.plan import CpuPartition, Reason
from hostc.provenance import Layer, key, layer
from hostc.spec.model import HostSpec, IsolateMode
from hostc.topology.model import Topology


def per_node_housekeeping(topo: Topology, cores_per_node: int) -> CpuSet:
    """The first N cores of each NUMA node, whole cores, the boot CPU's core first.

    A pure function of the (frozen) topology: computed once per snapshot and count."""
    memo = topo.memo()
    key = ("per_node_housekeeping", cores_per_node)
    if key not in memo:
        memo[key] = _per_node_housekeeping(topo, cores_per_node)
    found: CpuSet = memo[key]
    return found


def _per_node_housekeeping(topo: Topology, cores_per_node: int) -> CpuSet:
    boot = topo.boot_cpu
    # one pass: a core lies in its first CPU's node, so only those cores are candidates
    node_of = {c.id: c.node for c in topo.cpus}
    by_node: dict[int | None, list[tuple[bool, int, frozenset[int]]]] = {}
    for core in topo.cores().values():
        first = min(core.ids)
        by_node.setdefault(node_of[first], []).append((boot not in core.ids, first, core.ids))
    picked: set[int] = set()
    for node in topo.node_ids():
        node_cpus = topo.node_cpus(node).ids
        node_cores = sorted(c for c in by_node.get(node, ()) if c[2] <= node_cpus)
        for _, _, ids in node_cores[:cores_per_node]:
            picked |= ids
    return CpuSet(picked)


def gpu_nodes(topo: Topology, names: Iterable[str]) -> list[int]:
    """NUMA nodes of the named GPUs (unknown names and nodes are check's business)."""
    gpus = {g.name: g for g in topo.gpus}
    return sorted({n for g in names if g in gpus and (n := gpus[g].node) is not None})


def workload_nodes(spec: HostSpec, topo: Topology) -> list[int]:
    named = {n for w in spec.workload if w.nodes is not None and not w.gpus for n in w.nodes}
    return sorted(set(gpu_nodes(topo, (name for w in spec.workload for name in w.gpus))) | named)


def partition(spec: HostSpec, topo: Topology) -> CpuPartition:
    """The partition of `topo` that `spec` asks for; check and lower both need it.

    A pure function of two frozen values, so it is remembered on the snapshot for
    the spec it was computed for (a weak reference: a new spec never sees it)."""
    memo = topo.memo()
    hit = memo.get("partition")
    if hit is not None and hit[0]() is spec:
        found: CpuPartition = hit[1]
        return found
    part = _partition(spec, topo)
    memo["partition"] = (weakref.ref(spec), part)
    return part


def _partition(spec: HostSpec, topo: Topology) -> CpuPartition:
    online = topo.online
    cores = tuple(topo.cores().values())
    boot = topo.boot_cpu if online else None
    explicit = spec.cpu.housekeeping
    if explicit is not None:
        hk = explicit
        hk_reason = Reason(key("cpu", "housekeeping"), "housekeeping CPUs given explicitly")
    else:
        n = spec.cpu.housekeeping_per_node or 1
        hk = per_node_housekeeping(topo, n)
        src = (  # the default rule is shown as the base preset (plan.json keeps its bytes)
            key("cpu", "housekeeping_per_node")
            if spec.cpu.housekeeping_per_node
            else layer(Layer.BASE)
        )
        hk_reason = Reason(
            src, f"{n} core(s) per NUMA node with SMT siblings, the boot CPU's core first"
        )
    iso = spec.cpu.isolation
    if iso is IsolateMode.NONE:
        src = (  # the default rule is shown as the base preset (plan.json keeps its bytes)
            key("cpu", "isolate") if spec.cpu.isolate is not None else layer(Layer.BASE)
        )
        return CpuPartition(
            online,
            online,
            CpuSet(),
            cores,
            boot,
            spec.cpu.allow_node_without_housekeeping,
            Reason(src, "nothing is isolated: every online CPU does housekeeping"),
            Reason(src, "isolation is off unless cpu.isolate asks for it"),
        )
    if iso is IsolateMode.REST:
        isolated = online - hk
        why = "every online CPU outside the housekeeping set"
    elif iso is IsolateMode.WORKLOAD:
        node_ids = workload_nodes(spec, topo)
        isolated = topo.cpus_of_nodes(node_ids) - hk
        nodes = ",".join(map(str, node_ids))
        why = f"CPUs of NUMA node(s) {nodes}, local to the workload GPUs, minus housekeeping"
    else:
        assert isinstance(iso, CpuSet)
        isolated = iso & online
        why = "isolated CPUs given explicitly"
    if explicit is None or iso is not IsolateMode.REST:
        # Whatever is not isolated does housekeeping: the partition covers every online CPU.
        hk = online - isolated
    return CpuPartition(
        online,
        hk,
        isolated,
        cores,
        boot,
        spec.cpu.allow_node_without_housekeeping,
        hk_reason,
        Reason(key("cpu", "isolate"), why),
    )
