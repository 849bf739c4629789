"""`cpu.offline`: CPUs the spec takes offline, and the machine the Plan is then for.

The rule is one function (`problems`), read by check to report and by resolve to
decide: a sound set is taken out of the snapshot's online CPUs before anything else
is resolved, so the partition, the workloads' CPUs, the kubelet's reserved CPUs, the
interrupt masks and the per-node views never hold an offline CPU (one place, not a
subtraction in each); an unsound one leaves the snapshot as it is, so no other rule
reports the consequences of the same mistake.
"""

from __future__ import annotations

import attrs

from hostc.diagnostics import Diagnostic, at, error
from hostc.knowledge import cpus as cpufacts
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology

PATH = at("cpu", "offline")


def problems(spec: HostSpec, snapshot: Topology) -> list[Diagnostic]:
    """What is wrong with `cpu.offline` on this snapshot (empty: it can be applied)."""
    cpus = spec.cpu.offline
    if not cpus:
        return []
    missing = cpus - snapshot.present
    if missing:
        return [
            error(
                PATH,
                f"CPU(s) {missing} are not in the topology",
                hint=f"this machine has CPUs {snapshot.present}",
            )
        ]
    out = []
    online = snapshot.online
    if online and snapshot.boot_cpu in cpus:
        out.append(
            error(
                PATH,
                f"takes the boot CPU {snapshot.boot_cpu} offline: {cpufacts.BOOT_CPU_STAYS}",
                hint=f"leave CPU {snapshot.boot_cpu} and its SMT siblings online",
            )
        )
    split = [c for c in snapshot.core_list if c & cpus and not c <= cpus]
    if split:
        shown = "; ".join(f"{c & cpus} without {c - cpus}" for c in split[:4])
        more = f" (and {len(split) - 4} more cores)" if len(split) > 4 else ""
        out.append(
            error(
                PATH,
                f"splits SMT siblings: {shown}{more}; {cpufacts.WHOLE_CORES_WHY}",
                hint="offline whole cores (every SMT sibling); SMT off on every core is "
                "the kernel's `nosmt` (kernel.extra_args)",
            )
        )
    emptied = [n for n in snapshot.node_ids() if (c := snapshot.node_cpus(n)) and c <= cpus]
    if emptied and not (online <= cpus):
        nodes = ", ".join(map(str, emptied))
        out.append(
            error(
                PATH,
                f"leaves NUMA node(s) {nodes} without an online CPU: the node's memory, "
                "devices and interrupts would be served from other nodes, and its "
                "hugepages and the kubelet's reserved memory there would belong to no CPU",
                hint="keep at least one core online on every NUMA node",
            )
        )
    return out


def target(spec: HostSpec, snapshot: Topology) -> Topology:
    """The machine the Plan is for: the snapshot with `cpu.offline` taken offline when
    the set is sound (check reports it when it is not)."""
    cpus = spec.cpu.offline
    if not cpus or not (cpus & snapshot.online) or problems(spec, snapshot):
        return snapshot
    return attrs.evolve(
        snapshot,
        cpus=tuple(attrs.evolve(c, online=False) if c.id in cpus else c for c in snapshot.cpus),
    )
