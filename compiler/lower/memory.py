"""Hugepage budget: pages per (size, NUMA node), with headroom kept, one pool per size.

Runtime allocation of 1 GiB pages comes up short once memory fragments
(anchors E6), so hostc puts per-node counts on the command line
(`hugepagesz=1G hugepages=0:8,1:8`, Linux ≥ 5.16) and checks them against
each node's memory first.  Where the command line cannot say per-node counts (a
kernel before 5.16) or the spec asks for it (`hugepages.allocate = "runtime"`), the
pool is written per node by hostc-hugepages.service early in boot instead
(`When.RUNTIME`), as the kernel's own documentation suggests for runtime pools
("early in the boot process when the possibility of getting physical contiguous
pages is still very high", admin-guide/mm/hugetlbpage.rst).
"""

from __future__ import annotations

from hostc.plan.model import HugepagePool, Reason, Value, When
from hostc.provenance import Source, SpecKey, SpecKeys, key
from hostc.resolve import Resolved
from hostc.resolve.hugepages import HugepageRequest
from hostc.settings.table import DEFAULT_HUGEPAGESZ

_SINCE = "5.16"
#: what the runtime path does, in every runtime pool's reason
_RUNTIME = (
    "hostc-hugepages.service writes each node's count early in boot, before the container "
    "runtimes, kubelets and workloads start, retrying with the node compacted; it fails, "
    "naming the node, the size and the count it got, where fragmented memory leaves a "
    "node short"
)


def _key(req: HugepageRequest, *more: str) -> SpecKey:
    return key(*req.path.unnamed(), *more)


def _why(req: HugepageRequest, release: str | None) -> str:
    if req.runtime and req.by_node:
        if req.asked:
            return f"per-node pages reserved at runtime, as asked: {_RUNTIME}"
        return (
            f"kernel {release} predates per-node counts on the command line ({_SINCE}), "
            f"so they are reserved at runtime: {_RUNTIME}"
        )
    if req.runtime:
        return (
            "total split evenly over the NUMA nodes with memory, reserved per node at "
            f"runtime, as asked: {_RUNTIME}"
        )
    if req.by_node:
        if req.node_form:
            return "per-node pages reserved at boot, where fragmentation cannot shrink them"
        return (
            "even split requested; this kernel predates per-node counts (5.16), "
            "so the total is given and the kernel splits it evenly"
        )
    why = "total split evenly over the NUMA nodes with memory, reserved at boot"
    if not req.node_form:
        why += (
            "; this kernel predates per-node counts (5.16), so only the total is given: "
            "the kernel spreads it round-robin and no node's share is pinned (a page "
            "that does not fit on its node comes from another)"
        )
    return why


def pools(r: Resolved) -> list[HugepagePool]:
    """One Plan pool per requested pool, in the spec's order."""
    out = []
    for req in r.hugepages:
        counts = _key(req, "per_node" if req.by_node else "total")
        src: Source = SpecKeys((counts, key("hugepages", "allocate"))) if req.asked else counts
        size_src = _key(req, "size") if req.size_given else _key(req)
        size_why = (
            f"the pool's page size: hostc-hugepages.service writes hugepages-{req.size.kib}kB"
            if req.runtime
            else "the pool's page size; must precede its hugepages="
        )
        out.append(
            HugepagePool(
                req.size.kib,
                tuple((n, c) for n, c in req.per_node.items() if c > 0),
                req.node_form,
                Reason(src, _why(req, r.host.kernel_release)),
                Reason(size_src, size_why),
                When.RUNTIME if req.runtime else When.BOOT,
            )
        )
    return out


def default_size(r: Resolved) -> Value[int] | None:
    """`default_hugepagesz`: `hugepages.default_size`, else the first pool's size (None:
    no pool has a page)."""
    if not any(c > 0 for q in r.hugepages for c in q.per_node.values()):
        return None
    first = r.hugepages[0]
    if r.default_hugepagesz is not None:
        size, src = r.default_hugepagesz, key("hugepages", "default_size")
    else:
        size = first.size
        src = _key(first, "size") if first.size_given else _key(first)
    return Value(
        DEFAULT_HUGEPAGESZ,
        size.kib,
        Reason(src, "hugetlbfs mounts and MAP_HUGETLB use this size unless told otherwise"),
    )


def reserved_mib(pool_list: list[HugepagePool], node: int) -> int:
    return sum(p.size_kib // 1024 * c for p in pool_list for n, c in p.per_node if n == node)
