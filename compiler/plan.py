"""The Plan: hostc's one intermediate representation.  Every target reads only this.

Each entry carries a Reason (Butane's translation set, attached to the value):
the spec key or preset layer that asked for it and a one-line rationale.
Emitters write it as a comment; `hostc plan` prints it; reviewers read it in PRs.
CPU sets are CpuSet values resolved here, once; no target derives one.
"""

from __future__ import annotations

import attrs

from hostc.cpuset import CpuSet


@attrs.frozen
class Reason:
    source: str  # "cpu.isolate", "preset:inference", "topology:node0"
    why: str

    def __str__(self) -> str:
        return f"{self.source}: {self.why}"


@attrs.frozen
class CpuPartition:
    """Invariants (checked by property tests): housekeeping ∪ isolated == online,
    disjoint, SMT siblings never split, the boot CPU is housekeeping."""

    online: CpuSet
    housekeeping: CpuSet
    isolated: CpuSet
    housekeeping_reason: Reason
    isolated_reason: Reason


@attrs.frozen
class NodeView:
    """One NUMA node as `hostc plan` shows it."""

    id: int
    cpus: CpuSet
    housekeeping: CpuSet
    isolated: CpuSet
    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    memory_mib: int | None
    hugepages: tuple[tuple[str, int], ...]  # (size, pages)
    memory_left_mib: int | None


@attrs.frozen
class HugepagePool:
    size: str  # kernel form: 2M, 1G
    per_node: tuple[tuple[int, int], ...]  # (node, pages), nodes with pages > 0
    reason: Reason
    node_form: bool  # per-node counts on the cmdline (Linux ≥ 5.16)

    @property
    def total(self) -> int:
        return sum(n for _, n in self.per_node)


@attrs.frozen
class KernelArg:
    key: str
    value: str | None  # None for flags (`nosoftlockup`)
    reason: Reason

    def __str__(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"


@attrs.frozen
class Sysctl:
    key: str
    value: str
    reason: Reason


@attrs.frozen
class Limit:
    item: str  # nofile | memlock
    value: str  # "1048576" or "unlimited"; memlock in KiB
    reason: Reason


@attrs.frozen
class WorkloadPin:
    """A service pinned to its GPUs' NUMA node(s): CPUs and memory together."""

    name: str
    gpus: tuple[str, ...]
    nodes: tuple[int, ...]
    cpus: CpuSet
    reason: Reason

    @property
    def numactl(self) -> str:
        nodes = ",".join(str(n) for n in self.nodes)
        return f"numactl --physcpubind={self.cpus} --membind={nodes}"


@attrs.frozen
class Plan:
    host: str
    role: str
    arch: str
    kernel: str | None
    partition: CpuPartition
    nodes: tuple[NodeView, ...]
    hugepages: tuple[HugepagePool, ...]
    kernel_args: tuple[KernelArg, ...]
    sysctls: tuple[Sysctl, ...]
    limits: tuple[Limit, ...]
    workloads: tuple[WorkloadPin, ...]
    cmdline_budget: int  # bytes hostc may use on this arch

    @property
    def cmdline(self) -> str:
        return " ".join(str(a) for a in self.kernel_args)

    def limit(self, item: str) -> Limit | None:
        return next((x for x in self.limits if x.item == item), None)
