"""The hugepage request: per pool, pages per NUMA node as the spec asks, one page size each.

A pool is `[hugepages]`'s own size/per_node/total (the single-pool form, unchanged) and
each entry of `hugepages.pools`.  Its counts are `per_node` as given, or `total` split
evenly over the nodes with CPUs and memory (remainder to low ids).  Where each pool is
reserved is decided here, once, for check and lower: on the kernel command line (the
default: `hugepages=0:N,1:M` from Linux 5.16, the total before), or at runtime by
hostc-hugepages.service where the spec asks (`hugepages.allocate = "runtime"`) or where
the command line cannot say per-node counts (a kernel before 5.16 with counts that
differ per node, or an even split that would also land on CPU-less nodes).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from hostc.keypath import KeyPath, at
from hostc.knowledge import kernel as kernelfacts
from hostc.record import Record
from hostc.spec.model import HostSpec, HugepageAllocation, Hugepages
from hostc.topology.model import Topology
from hostc.units import PageSize

DEFAULT_PAGE_SIZE = PageSize(1024 * 1024)

#: hostc never reserves more than a node's memory minus this headroom, so the
#: kernel, page cache and services keep room: max(4 GiB, 10 % of the node).
HEADROOM_MIN_MIB = 4096
HEADROOM_FRACTION = 0.10


def headroom_mib(memory_mib: int) -> int:
    return max(HEADROOM_MIN_MIB, int(memory_mib * HEADROOM_FRACTION))


@attrs.frozen(repr=False, eq=False)
class PoolSpec(Record):
    """One pool as the spec writes it, with the key path it is written at."""

    path: KeyPath  # `hugepages` (the single-pool form) or `hugepages.pools[i]`
    size: PageSize | None  # None: not given (the top-level pool's default is 1G)
    per_node: Mapping[int, int] | None
    total: int | None

    @property
    def counts_sound(self) -> bool:
        """Exactly one of per_node and total is given (check reports the other cases)."""
        return (self.per_node is None) != (self.total is None)


def pool_specs(hp: Hugepages) -> list[PoolSpec]:
    """The pools the spec writes, in its order: `[hugepages]`'s own when it gives a size
    or counts (or when there is no `pools` list: then it is the one pool, as before
    pools existed), then each `pools` entry."""
    out = []
    top = (hp.size, hp.per_node, hp.total) != (None, None, None)
    if top or not hp.pools:
        out.append(PoolSpec(at("hugepages"), hp.size, hp.per_node, hp.total))
    for i, p in enumerate(hp.pools):
        out.append(PoolSpec(at("hugepages", "pools", i), p.size, p.per_node, p.total))
    return out


@attrs.frozen(repr=False, eq=False)
class HugepageRequest(Record):
    path: KeyPath  # where the pool is written (diagnostics and reasons name it)
    size: PageSize  # the pool's page size (1G when the spec does not say)
    size_given: bool  # the spec gives the size (else the 1G default)
    per_node: dict[int, int]  # node → pages, by node id
    by_node: bool  # the spec gives per_node (else total, split here)
    node_form: bool  # the kernel takes per-node counts at boot (known and ≥ 5.16)
    #: hostc-hugepages.service writes the counts at runtime (else the command line)
    runtime: bool
    #: `hugepages.allocate` chose boot or runtime (else hostc did, by the kernel)
    asked: bool


def _even(counts: Mapping[int, int], topo: Topology) -> bool:
    """Whether the kernel's own split of the total gives exactly these counts: the same
    count on every node with CPUs and memory, none elsewhere, and no CPU-less memory
    node for the boot-time spread to land on."""
    nodes = topo.memory_nodes
    same = len({counts.get(n, 0) for n in nodes}) == 1 and set(counts) <= set(nodes)
    return same and not topo.cpuless_memory_nodes


def _runtime(
    hp: Hugepages,
    p: PoolSpec,
    counts: Mapping[int, int],
    node_form: bool,
    known: bool,
    topo: Topology,
) -> bool:
    if hp.allocate is not None:
        return hp.allocate is HugepageAllocation.RUNTIME
    if p.per_node is None or node_form or not known:
        return False  # a total, the node form, or an unknown kernel (check says so)
    return not _even(counts, topo)


def _counts(p: PoolSpec, topo: Topology) -> dict[int, int]:
    if p.per_node is not None:
        return {n: c for n, c in sorted(p.per_node.items())}
    total = p.total or 0
    nodes = topo.memory_nodes
    base, extra = divmod(total, len(nodes)) if nodes else (0, 0)
    return {n: base + (1 if i < extra else 0) for i, n in enumerate(nodes)}


def request(
    spec: HostSpec, topo: Topology, kernel: tuple[int, int] | None
) -> tuple[HugepageRequest, ...]:
    """Every pool the spec asks for, in its order (none without `[hugepages]`)."""
    hp = spec.hugepages
    if hp is None:
        return ()
    node_form = kernel is not None and kernel >= kernelfacts.HUGEPAGES_NODE_FORM_SINCE
    out = []
    for p in pool_specs(hp):
        counts = _counts(p, topo)
        runtime = _runtime(hp, p, counts, node_form, kernel is not None, topo)
        out.append(
            HugepageRequest(
                path=p.path,
                size=p.size if p.size is not None else DEFAULT_PAGE_SIZE,
                size_given=p.size is not None,
                per_node=counts,
                by_node=p.per_node is not None,
                node_form=node_form,
                runtime=runtime,
                asked=hp.allocate is not None,
            )
        )
    return tuple(out)
