"""The `[hugepages]` table of node.toml: the hugepage pools, each one page size with its
counts per NUMA node or in total, and where they are reserved, as attrs classes whose
names are the TOML keys (see `hostc.spec.model`)."""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs

from hostc.fielddoc import doc
from hostc.record import Record
from hostc.units import PageSize


class HugepageAllocation(enum.StrEnum):
    """`hugepages.allocate`: where the pools' pages are reserved."""

    BOOT = "boot"  # the kernel command line: before anything can fragment memory
    RUNTIME = "runtime"  # hostc-hugepages.service writes each node's count early in boot


@attrs.frozen(repr=False, eq=False)
class HugepagesPool(Record):
    """One more hugepage pool beside the one `[hugepages]` itself gives (one per size)."""

    size: PageSize = attrs.field(metadata=doc("page size of this pool", "2M"))
    per_node: Mapping[int, int] | None = attrs.field(
        default=None, metadata=doc("pages per NUMA node", {"0": 512})
    )
    total: int | None = attrs.field(
        default=None, metadata=doc("pages in total, split evenly over nodes with memory", 1024)
    )


@attrs.frozen(repr=False, eq=False)
class Hugepages(Record):
    size: PageSize | None = attrs.field(
        default=None,
        metadata=doc("page size of the pool (default 1G)", "1G"),
    )
    default_size: PageSize | None = attrs.field(
        default=None,
        metadata=doc("default_hugepagesz (default: the first pool's size)", "1G"),
    )
    per_node: Mapping[int, int] | None = attrs.field(
        default=None, metadata=doc("pages per NUMA node", {"0": 8, "1": 8})
    )
    total: int | None = attrs.field(
        default=None, metadata=doc("pages in total, split evenly over nodes with memory", 16)
    )
    allocate: HugepageAllocation | None = attrs.field(
        default=None,
        metadata=doc(
            "where every pool is reserved: `boot` (the kernel command line, before memory "
            "fragments) or `runtime` (hostc-hugepages.service writes each NUMA node's count "
            "early in boot, before the container runtimes, kubelets and workloads, with "
            "retries; it can fall short once memory is fragmented).  Default: boot, and "
            "runtime for per-node counts a kernel before 5.16 cannot take at boot",
            "runtime",
        ),
    )
    pools: tuple[HugepagesPool, ...] = attrs.field(
        default=(),
        metadata=doc(
            "further pools, each of another page size (1G for a model and 2M beside it); "
            "with no size, per_node or total here, these are all the pools",
            [{"size": "2M", "total": 1024}],
        ),
    )
