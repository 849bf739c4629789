"""The hugepage request: pages per NUMA node as the spec asks, of one page size.

`hugepages.per_node` as given, or `hugepages.total` split evenly over the nodes with
CPUs and memory (remainder to low ids); whether the kernel takes per-node counts at
boot (`hugepages=0:N,1:M`, Linux ≥ 5.16) decides how lower spells it and what check
says about an uneven split.
"""

from __future__ import annotations

import attrs

from hostc.knowledge import kernel as kernelfacts
from hostc.record import Record
from hostc.spec.model import HostSpec
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
class HugepageRequest(Record):
    size: PageSize  # the pool's page size (1G when the spec does not say)
    per_node: dict[int, int]  # node → pages, by node id
    node_form: bool  # the kernel takes per-node counts at boot (known and ≥ 5.16)


def request(spec: HostSpec, topo: Topology, kernel: tuple[int, int] | None) -> HugepageRequest:
    hp = spec.hugepages
    assert hp is not None
    if hp.per_node is not None:
        counts = {n: c for n, c in sorted(hp.per_node.items())}
    else:
        total = hp.total or 0
        nodes = topo.memory_nodes
        base, extra = divmod(total, len(nodes)) if nodes else (0, 0)
        counts = {n: base + (1 if i < extra else 0) for i, n in enumerate(nodes)}
    return HugepageRequest(
        size=hp.size if hp.size is not None else DEFAULT_PAGE_SIZE,
        per_node=counts,
        node_form=kernel is not None and kernel >= kernelfacts.HUGEPAGES_NODE_FORM_SINCE,
    )
