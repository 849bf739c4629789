"""Kubelet rules: refuse what the kubelet itself would refuse at start-up, with the numbers.

The kubelet checks its reserved-memory sum, its CPU-manager options and their
feature gates only when it starts, on the node, after the image was built;
these rules run the same checks at compile time (anchors E2, E3, E8).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from hostc import vocab
from hostc.check.kubelet_cpu import cpu_manager_options as cpu_manager_options
from hostc.check.kubelet_cpu import option_stage
from hostc.check.kubelet_cpu import strict_reservation as strict_reservation
from hostc.check.kubelet_topology import topology_admits_gpus as topology_admits_gpus
from hostc.diagnostics import Diagnostic, at, error, warning
from hostc.knowledge import kubelet as ko
from hostc.knowledge.kubelet import Quantity, QuantityError
from hostc.plan.model import KubeletPlan, Plan
from hostc.resolve import Resolved
from hostc.spec.model import Kubelet
from hostc.topology.model import Topology

_PERCENT = re.compile(r"^[0-9]{1,3}(\.[0-9]{1,3})?%$")


def _policy(k: Kubelet, topo: Topology) -> vocab.TopologyPolicy | None:
    """The topology-manager policy hostc writes for this spec (lowering's own rule)."""
    most = max(Counter(g.node for g in topo.gpus if g.node is not None).values(), default=0)
    return ko.topology_policy(k.topology_manager_policy, k.max_gpus_per_pod, most)


def version_supported(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    k = spec.kubelet
    if k is None:
        return
    if k.version.major != 1 or k.version < ko.OLDEST:
        yield error(
            at("kubelet", "version"),
            f"kubelet {k.version} is not supported: hostc writes for kubelet "
            f"{ko.OLDEST} and later (the memory manager is on by default from {ko.OLDEST})",
        )
    elif k.flavor is vocab.Flavor.KUBEADM and k.version < ko.CONFIG_DIR_SINCE:
        yield warning(
            at("kubelet", "version"),
            f"kubelet {k.version} has no configuration drop-in directory (beta in "
            f"{ko.CONFIG_DIR_SINCE}): hostc writes a whole KubeletConfiguration file, "
            "which the kubelet reads only once --config points at it",
        )


def role_named(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    k = spec.kubelet
    if k is None:
        return
    if k.flavor is not vocab.Flavor.KUBEADM and k.role is None:
        yield error(
            at("kubelet", "role"),
            f"{k.flavor} runs the kubelet inside {k.flavor}-server or {k.flavor}-agent: say "
            "which, so the right service is restarted",
            hint='role = "agent" for a GPU worker',
        )
    elif k.flavor is vocab.Flavor.KUBEADM and k.role is not None:
        yield warning(
            at("kubelet", "role"),
            "role applies to rke2 and k3s; kubeadm's kubelet is kubelet.service",
        )


def eviction_hard_valid(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    k = spec.kubelet
    if k is None:
        return
    for signal, value in k.eviction_hard.items():
        where = at("kubelet", "eviction_hard", signal)
        if signal not in ko.EVICTION_SIGNALS:
            yield error(
                where,
                f"unknown eviction signal {signal!r}",
                hint="signals: " + ", ".join(ko.EVICTION_SIGNALS),
            )
            continue
        if signal == "memory.available":
            try:
                Quantity.parse(value)
            except QuantityError as e:
                hint = None
                if _PERCENT.match(value.strip()):
                    hint = "hostc needs an amount to make reservedMemory add up: give e.g. 500Mi"
                yield error(where, str(e), hint=hint)
            continue
        if _PERCENT.match(value.strip()):
            continue
        try:
            Quantity.parse(value)
        except QuantityError as e:
            yield error(where, f"{e} (or a percentage such as 10%)")


def _total(k: Kubelet) -> Quantity | None:
    """kube-reserved + system-reserved + evictionHard memory.available, or None if unreadable."""
    try:
        evict = Quantity.parse(k.eviction_hard.get("memory.available", ko.DEFAULT_EVICTION_MEMORY))
    except QuantityError:
        return None
    parts = [r.memory for r in (k.kube_reserved, k.system_reserved) if r and r.memory]
    return Quantity(sum(q.bytes for q in parts) + evict.bytes)


def equation(k: Kubelet, total: Quantity) -> str:
    """`kube_reserved.memory 1Gi + system_reserved.memory 1Gi + eviction_hard
    memory.available 100Mi (default) = 2148Mi`: the right-hand side, spelled out."""
    terms = []
    for key, r in (("kube_reserved", k.kube_reserved), ("system_reserved", k.system_reserved)):
        terms.append(f"{key}.memory {r.memory if r and r.memory else 0}")
    ev = k.eviction_hard.get("memory.available")
    terms.append(
        f"eviction_hard memory.available {ev}"
        if ev
        else f"eviction_hard memory.available {ko.DEFAULT_EVICTION_MEMORY} (default)"
    )
    return " + ".join(terms) + f" = {total.in_mib}"


def reserved_memory_adds_up(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    k = spec.kubelet
    if k is None or k.reserved_memory is None:
        return
    nodes = {n.id: n for n in topo.nodes}
    for node in sorted(k.reserved_memory):
        if node not in nodes:
            yield error(
                at("kubelet", "reserved_memory", str(node)),
                f"NUMA node {node} is not in the topology",
                hint=f"nodes: {', '.join(map(str, sorted(nodes)))}",
            )
        elif nodes[node].memory_mib == 0 and k.reserved_memory[node].bytes:
            yield error(
                at("kubelet", "reserved_memory", str(node)), f"NUMA node {node} has no memory"
            )
    total = _total(k)
    if total is None:
        return
    got = Quantity(sum(q.bytes for q in k.reserved_memory.values()))
    if got != total:
        lhs = " + ".join(f"{n}:{q}" for n, q in sorted(k.reserved_memory.items())) or "nothing"
        yield error(
            at("kubelet", "reserved_memory"),
            f"reserved memory per NUMA node adds up to {lhs} = {got.in_mib}, but "
            f"{equation(k, total)}; the kubelet refuses to start: the total amount "
            f'"{got}" of type "memory" is not equal to the value "{total}" determined by '
            "Node Allocatable feature",
            hint="leave reserved_memory out and hostc splits the sum over the NUMA nodes",
        )
    if k.memory_manager_policy is not vocab.MemoryManagerPolicy.STATIC:
        yield warning(
            at("kubelet", "reserved_memory"),
            "only the Static memory manager reads reservedMemory; it is left out",
        )


def memory_manager_has_reservations(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    k = spec.kubelet
    if k is None or k.memory_manager_policy is not vocab.MemoryManagerPolicy.STATIC:
        return
    total = _total(k)
    if total is not None and total.bytes == 0:
        yield error(
            at("kubelet", "memory_manager_policy"),
            f"the Static memory manager needs memory reserved for the system, but "
            f"{equation(k, total)}; the kubelet refuses to start (you should specify the "
            "system reserved memory)",
            hint="set kubelet.system_reserved.memory (and kube_reserved.memory)",
        )


_COUNT = re.compile(r"[0-9]{1,4}")


def _option_problem(name: str, value: str) -> str | None:
    if name == "prefer-closest-numa-nodes" and value not in ("true", "false"):
        return f'prefer-closest-numa-nodes takes "true" or "false", not {value[:20]!r}'
    if name == "max-allowable-numa-nodes" and not (
        _COUNT.fullmatch(value) and int(value) >= ko.MAX_NUMA_NODES
    ):
        return (
            f"max-allowable-numa-nodes takes a count of at least {ko.MAX_NUMA_NODES} (the "
            f"kubelet refuses a lower one), not {value[:20]!r}"
        )
    return None


def topology_manager_options(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    k = spec.kubelet
    if k is None or not k.topology_manager_policy_options:
        return
    base = at("kubelet", "topology_manager_policy_options")
    for name, value in k.topology_manager_policy_options.items():
        where = base.key(name)
        st = option_stage(where, name, "topology-manager", ko.TOPOLOGY_OPTIONS, k.version)
        if isinstance(st, Diagnostic):
            yield st
        elif st is ko.Stage.ALPHA:
            yield error(
                where,
                f"{name!r} is alpha in kubelet {k.version}, behind feature gates hostc does not "
                "turn on; it is beta, and on by default, from kubelet 1.28",
            )
        elif (problem := _option_problem(name, value)) is not None:
            yield error(where, problem)
    if _policy(k, topo) in (None, vocab.TopologyPolicy.NONE):
        yield warning(
            base,
            "topology-manager options change nothing under the policy none (the kubelet's default)",
        )


def topology_manager_fits_nodes(r: Resolved) -> Iterator[Diagnostic]:
    """More than 8 NUMA nodes (GH200 and its GPU-memory nodes, 4-socket SNC hosts): the
    kubelet's topology manager refuses to start unless the limit is raised."""
    spec, topo = r.spec, r.topo
    k = spec.kubelet
    if k is None or (policy := _policy(k, topo)) in (None, vocab.TopologyPolicy.NONE):
        return
    nodes = len(topo.nodes)
    raised = k.topology_manager_policy_options.get("max-allowable-numa-nodes", "")
    limit = int(raised) if _COUNT.fullmatch(raised) else ko.MAX_NUMA_NODES
    if nodes <= limit:
        return
    why = (
        f"this host has {nodes} NUMA nodes (CPU-less memory nodes count too) and the "
        f"topology manager allows {limit}: the kubelet refuses to start with policy "
        f"{policy}"
        + ("" if k.topology_manager_policy else " (hostc's choice for GPU pods spanning nodes)")
    )
    since = ko.first_release("max-allowable-numa-nodes", ko.TOPOLOGY_OPTIONS)
    if since is not None and k.version >= since:
        yield error(
            at("kubelet", "topology_manager_policy"),
            why,
            hint=f'set topology_manager_policy_options = {{ max-allowable-numa-nodes = "{nodes}" '
            "} (admission takes longer with more nodes), or the policy none",
        )
    else:
        yield error(
            at("kubelet", "topology_manager_policy"),
            why,
            hint=f"kubelet {since} and later can raise the limit (max-allowable-numa-nodes); "
            f"kubelet {k.version} needs the policy none",
        )


# Rules on the finished Plan: what lowering built by construction, checked again.


def _kubelet(plan: Plan) -> KubeletPlan | None:
    return plan.kubelet


def reserved_cpus_leave_pods_room(plan: Plan) -> Iterator[Diagnostic]:
    """The kubelet reserves the housekeeping CPUs (an invariant, `check.plan_rules`):
    the pods, and the workloads the kubelet places, need CPUs outside them."""
    k = _kubelet(plan)
    if k is None:
        return
    if k.cpu.policy == "static" and not (plan.partition.online - k.cpu.reserved):
        yield error(
            at("cpu", "isolate"),
            f"the static CPU manager would reserve every online CPU ({k.cpu.reserved}) for "
            "the system and leave none for pods",
            hint='isolate the CPUs pods should get: cpu.isolate = "rest" or "workload"',
        )
    for w in plan.workloads:
        both = w.cpus & k.cpu.reserved
        if both:
            yield error(
                at("cpu", "isolate"),
                f"workload {w.name} runs on CPUs {both} that the kubelet reserves for the "
                "system; pods get only CPUs outside reservedSystemCPUs",
                hint='isolate its NUMA node\'s CPUs: cpu.isolate = "workload" or "rest"',
            )


def pods_keep_memory(plan: Plan) -> Iterator[Diagnostic]:
    k = _kubelet(plan)
    if k is None:
        return
    for r in k.reserved_memory:
        node = next((n for n in plan.nodes if n.id == r.node), None)
        if node is None or node.memory_mib is None:
            continue
        huge = sum(s * p for s, p in node.hugepages) // 1024
        left = node.memory_mib - huge
        if r.memory.bytes > left * 1024**2:
            yield error(
                at("kubelet"),
                f"NUMA node {r.node} has {node.memory_mib} MiB, {huge} MiB of it hugepages; "
                f"reserving {r.memory.in_mib} more for the system leaves nothing for pods",
            )
