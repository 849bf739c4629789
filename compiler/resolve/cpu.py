"""The CPU partition the spec asks for: housekeeping, isolated, and the mechanisms.

Resolved once per (spec, snapshot) and read by check (which judges it) and lower
(which records it in the Plan).  It never raises on a spec whose CPU keys passed
the parse rules; check asks for it only once the CPUs it names are known to exist.
"""

from __future__ import annotations

from collections.abc import Iterable

from hostc.cpuset import CpuSet
from hostc.plan.model import CpuPartition, Reason
from hostc.provenance import default, key
from hostc.spec.model import HostSpec, IsolateMode
from hostc.topology.model import Topology
from hostc.vocab import IsolcpusFlag, Mechanism

#: Default isolation (NTO's and TuneD's set minus nohz_full): nohz_full only for the
#: CPUs of workloads that declare one busy-polling thread per CPU (`busy_poll`), since
#: adaptive ticks do nothing with more than one runnable task and make user/kernel
#: transitions dearer (Documentation/timers/no_hz.rst).
MECHANISMS_DEFAULT = (
    Mechanism.ISOLCPUS,
    Mechanism.RCU_NOCBS,
    Mechanism.IRQAFFINITY,
)

DEFAULT_ISOLCPUS_FLAGS = (IsolcpusFlag.MANAGED_IRQ,)


def mechanisms(spec: HostSpec) -> tuple[Mechanism, ...]:
    """The spec's list, or the default plus nohz_full where a workload polls."""
    if spec.cpu.mechanisms is not None:
        return tuple(spec.cpu.mechanisms)
    if any(w.busy_poll for w in spec.workload):
        return (Mechanism.ISOLCPUS, Mechanism.NOHZ_FULL, *MECHANISMS_DEFAULT[1:])
    return MECHANISMS_DEFAULT


def isolcpus_flags(spec: HostSpec) -> tuple[IsolcpusFlag, ...]:
    if spec.cpu.isolcpus_flags is None:
        return DEFAULT_ISOLCPUS_FLAGS
    return tuple(spec.cpu.isolcpus_flags)


def gpu_nodes(topo: Topology, names: Iterable[str]) -> list[int]:
    """NUMA nodes of the named GPUs (unknown names and nodes are check's business)."""
    gpus = {g.name: g for g in topo.gpus}
    return sorted({n for g in names if g in gpus and (n := gpus[g].node) is not None})


def workload_nodes(spec: HostSpec, topo: Topology) -> list[int]:
    named = {n for w in spec.workload if w.nodes is not None and not w.gpus for n in w.nodes}
    return sorted(set(gpu_nodes(topo, (name for w in spec.workload for name in w.gpus))) | named)


def partition(spec: HostSpec, topo: Topology) -> CpuPartition:
    """The partition of `topo` that `spec` asks for."""
    online = topo.online
    cores = topo.core_list
    boot = topo.boot_cpu if online else None
    explicit = spec.cpu.housekeeping
    if explicit is not None:
        hk = explicit
        hk_reason = Reason(key("cpu", "housekeeping"), "housekeeping CPUs given explicitly")
    else:
        n = spec.cpu.housekeeping_per_node or 1
        hk = topo.first_cores(n)
        src = (  # no preset entry chooses this: it is hostc's own default rule
            key("cpu", "housekeeping_per_node")
            if spec.cpu.housekeeping_per_node
            else default("housekeeping_per_node")
        )
        hk_reason = Reason(
            src, f"{n} core(s) per NUMA node with SMT siblings, the boot CPU's core first"
        )
    iso = spec.cpu.isolation
    if iso is IsolateMode.NONE:
        src = (  # no preset entry chooses this: it is hostc's own default rule
            key("cpu", "isolate") if spec.cpu.isolate is not None else default("isolate")
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
