"""resolve: HostSpec × Topology → Resolved, the facts `check` and `lower` both read.

The pipeline is load/read → resolve → check → lower → check the Plan → emit.  What
the host is (arch, vendor, kernel, distribution), the CPU partition and the hugepage
request are worked out here once, so a rule never re-runs lowering to judge it and
lowering never re-derives a fact a rule already judged.  `resolve` reports only the
facts it cannot read (a malformed `host.os` or `host.kernel`); the rules are check's.
"""

from __future__ import annotations

import functools

import attrs

from hostc.diagnostics import Diagnostic
from hostc.plan.model import CpuPartition
from hostc.record import Record
from hostc.resolve import cpu, hugepages, offline
from hostc.resolve.host import ResolvedHost, resolve_host
from hostc.resolve.hugepages import HugepageRequest
from hostc.spec.model import HostSpec, Mechanism
from hostc.topology.model import Topology


@attrs.frozen(repr=False, eq=False)
class Resolved(Record):
    """One host's spec and snapshot with the facts derived from both.

    The partition and the hugepage request are cached properties: check asks for
    them only once the keys they read are known to be sound."""

    spec: HostSpec
    topo: Topology
    host: ResolvedHost
    #: the snapshot as captured, before `cpu.offline` took CPUs out of it (`topo` is
    #: the machine the Plan is for: `hostc.resolve.offline`); None: the same as `topo`
    snapshot: Topology | None = None

    @functools.cached_property
    def partition(self) -> CpuPartition:
        return cpu.partition(self.spec, self.topo)

    @functools.cached_property
    def hugepages(self) -> tuple[HugepageRequest, ...]:
        """Every hugepage pool the spec asks for (none without `[hugepages]`)."""
        return hugepages.request(self.spec, self.topo, self.host.kernel)

    @functools.cached_property
    def mechanisms(self) -> tuple[Mechanism, ...]:
        """The isolation mechanisms asked for (the default, or the spec's list)."""
        return cpu.mechanisms(self.spec)

    @functools.cached_property
    def isolcpus_flags(self) -> tuple[str, ...]:
        return cpu.isolcpus_flags(self.spec)


def resolve(spec: HostSpec, topo: Topology) -> tuple[Resolved, list[Diagnostic]]:
    """The resolved host and the diagnostics about facts that could not be read."""
    host, found = resolve_host(spec, topo)
    return Resolved(spec, offline.target(spec, topo), host, topo), found
