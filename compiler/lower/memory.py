"""Hugepage budget: pages per (size, NUMA node), reserved at boot, with headroom kept.

Runtime allocation of 1 GiB pages comes up short once memory fragments
(anchors E6), so hostc puts per-node counts on the command line
(`hugepagesz=1G hugepages=0:8,1:8`, Linux ≥ 5.16) and checks them against
each node's memory first.
"""

from __future__ import annotations

from hostc.plan.model import HugepagePool, Reason, Value
from hostc.provenance import SpecKey, key
from hostc.resolve import Resolved
from hostc.resolve.hugepages import DEFAULT_PAGE_SIZE
from hostc.settings.table import DEFAULT_HUGEPAGESZ
from hostc.spec.model import HostSpec
from hostc.units import PageSize


def pools(r: Resolved) -> list[HugepagePool]:
    spec, req = r.spec, r.hugepages
    hp = spec.hugepages
    if hp is None or req is None:
        return []
    counts, node_form = req.per_node, req.node_form
    if hp.per_node is not None:
        src = key("hugepages", "per_node")
        why = "per-node pages reserved at boot, where fragmentation cannot shrink them"
        if not node_form:
            why = (
                "even split requested; this kernel predates per-node counts (5.16), "
                "so the total is given and the kernel splits it evenly"
            )
    else:
        src = key("hugepages", "total")
        why = "total split evenly over the NUMA nodes with memory, reserved at boot"
        if not node_form:
            why += (
                "; this kernel predates per-node counts (5.16), so only the total is given: "
                "the kernel spreads it round-robin and no node's share is pinned (a page "
                "that does not fit on its node comes from another)"
            )
    per_node = tuple((n, c) for n, c in counts.items() if c > 0)
    size, size_src = pool_size(spec)
    return [
        HugepagePool(
            size.kib,
            per_node,
            node_form,
            Reason(src, why),
            Reason(size_src, "the pool's page size; must precede its hugepages="),
        )
    ]


def pool_size(spec: HostSpec) -> tuple[PageSize, SpecKey]:
    """The pool's page size and the key that chose it (1G when the spec does not say)."""
    hp = spec.hugepages
    assert hp is not None
    if hp.size is not None:
        return hp.size, key("hugepages", "size")
    return DEFAULT_PAGE_SIZE, key("hugepages")


def default_size(spec: HostSpec) -> Value[int] | None:
    hp = spec.hugepages
    if hp is None:
        return None
    size, src = (
        (hp.default_size, key("hugepages", "default_size")) if hp.default_size else pool_size(spec)
    )
    return Value(
        DEFAULT_HUGEPAGESZ,
        size.kib,
        Reason(src, "hugetlbfs mounts and MAP_HUGETLB use this size unless told otherwise"),
    )


def reserved_mib(pool_list: list[HugepagePool], node: int) -> int:
    return sum(p.size_kib // 1024 * c for p in pool_list for n, c in p.per_node if n == node)
