"""Hugepage budget: pages per (size, NUMA node), reserved at boot, with headroom kept.

Runtime allocation of 1 GiB pages comes up short once memory fragments
(anchors E6), so hostc puts per-node counts on the command line
(`hugepagesz=1G hugepages=0:8,1:8`, Linux ≥ 5.16) and checks them against
each node's memory first.
"""

from __future__ import annotations

import functools
import re

from hostc.plan import HugepagePool, Reason, Value
from hostc.provenance import SpecKey, key
from hostc.settings.table import DEFAULT_HUGEPAGESZ
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology
from hostc.units import PageSize

DEFAULT_PAGE_SIZE = PageSize(1024 * 1024)

#: hostc never reserves more than a node's memory minus this headroom, so the
#: kernel, page cache and services keep room: max(4 GiB, 10 % of the node).
HEADROOM_MIN_MIB = 4096
HEADROOM_FRACTION = 0.10

NODE_FORM_SINCE = (5, 16)


def headroom_mib(memory_mib: int) -> int:
    return max(HEADROOM_MIN_MIB, int(memory_mib * HEADROOM_FRACTION))


_VERSION = re.compile(r"^([0-9]+)\.([0-9]+)")


@functools.lru_cache(maxsize=256)
def kernel_version(release: str | None) -> tuple[int, int] | None:
    """(major, minor) of a release string; check and lower ask for it many times a build."""
    if not release:
        return None
    m = _VERSION.match(release.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def kernel_release(spec: HostSpec, topo: Topology) -> str | None:
    return spec.host.kernel or topo.kernel


def memory_nodes(topo: Topology) -> list[int]:
    """Nodes with CPUs and memory (or unknown memory): where a `total` is split.

    CPU-less nodes (HBM, MCDRAM, GPU memory, CXL) are left out: pages there are
    far from every CPU, and such memory is usually reserved for its device.
    """
    memo = topo.memo()
    if "memory_nodes" not in memo:
        memo["memory_nodes"] = [
            n.id
            for n in sorted(topo.nodes, key=lambda n: n.id)
            if n.memory_mib != 0 and topo.node_cpus(n.id)
        ]
    return list(memo["memory_nodes"])


def cpuless_memory_nodes(topo: Topology) -> list[int]:
    """Nodes with memory but no CPUs (HBM, MCDRAM, GPU memory, CXL)."""
    memo = topo.memo()
    if "cpuless_memory_nodes" not in memo:
        memo["cpuless_memory_nodes"] = [
            n.id for n in topo.nodes if n.memory_mib != 0 and not topo.node_cpus(n.id)
        ]
    return list(memo["cpuless_memory_nodes"])


def requested(spec: HostSpec, topo: Topology) -> dict[int, int]:
    """Pages per node as asked: explicit, or `total` split evenly (remainder to low ids)."""
    hp = spec.hugepages
    assert hp is not None
    if hp.per_node is not None:
        return {n: c for n, c in sorted(hp.per_node.items())}
    total = hp.total or 0
    nodes = memory_nodes(topo)
    base, extra = divmod(total, len(nodes)) if nodes else (0, 0)
    return {n: base + (1 if i < extra else 0) for i, n in enumerate(nodes)}


def pools(spec: HostSpec, topo: Topology) -> list[HugepagePool]:
    hp = spec.hugepages
    if hp is None:
        return []
    counts = requested(spec, topo)
    version = kernel_version(kernel_release(spec, topo))
    node_form = version is not None and version >= NODE_FORM_SINCE
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
