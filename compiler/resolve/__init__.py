"""resolve: HostSpec × Topology → Resolved, the facts `check` and `lower` both read.

The pipeline is load/read → resolve → check → lower → check the Plan → emit.  What
the host is (arch, vendor, kernel, distribution), the CPU partition and the hugepage
request are worked out here once, so a rule never re-runs lowering to judge it and
lowering never re-derives a fact a rule already judged.  `resolve` reports only the
facts it cannot read (a malformed `host.os` or `host.kernel`); the rules are check's.

Every spec key is read here: the workloads' placement, the preset merge (each setting
with the layer or spec key that chose it) and the requests of `hostc.resolve.requests`
and `hostc.resolve.kubelet`.  Lowering reads those and never `Resolved.spec`
(`tests/project/test_lowering_reads_resolve.py`).
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

from hostc.diagnostics import Diagnostic
from hostc.plan.model import CpuPartition, Placement
from hostc.provenance import Value
from hostc.record import Record
from hostc.resolve import cpu, hugepages, merge, offline, placement, requests
from hostc.resolve import kubelet as kubelet_request
from hostc.resolve.host import ResolvedHost, resolve_host
from hostc.resolve.hugepages import HugepageRequest
from hostc.resolve.kubelet import KubeletRequest
from hostc.resolve.merge import LeftOuts
from hostc.resolve.requests import IsolationRequest, KernelRequest, RuntimeRequest
from hostc.spec import presets
from hostc.spec.model import HostSpec, Mechanism
from hostc.topology.model import Topology
from hostc.units import PageSize


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

    # What lowering reads (check has accepted the spec by then).

    @functools.cached_property
    def placements(self) -> tuple[Placement, ...]:
        """Each workload on its NUMA nodes' CPUs, with its NICs, in the spec's order."""
        return tuple(placement.workloads(self.spec, self.topo, self.partition))

    @functools.cached_property
    def context(self) -> presets.Context:
        """The facts the presets' conditions are judged on."""
        return merge.context(self.spec, self.topo, self.host, self.placements)

    @functools.cached_property
    def settings(self) -> tuple[Value[Any], ...]:
        """The preset merge: every setting's value and the layer or spec key that chose it."""
        return merge.merged(self.spec, self.context)

    @functools.cached_property
    def left_out(self) -> LeftOuts:
        return merge.left_out(self.spec)

    @functools.cached_property
    def isolation(self) -> IsolationRequest:
        return requests.isolation(self.spec)

    @functools.cached_property
    def kernel(self) -> KernelRequest:
        return requests.kernel(self.spec)

    @functools.cached_property
    def runtime(self) -> RuntimeRequest:
        return requests.runtime(self.spec, self.topo)

    @functools.cached_property
    def kubelet(self) -> KubeletRequest | None:
        return kubelet_request.request(self.spec.kubelet)

    @functools.cached_property
    def default_hugepagesz(self) -> PageSize | None:
        """`hugepages.default_size` (None: not given: the first pool's size)."""
        return requests.default_hugepagesz(self.spec)


def resolve(spec: HostSpec, topo: Topology) -> tuple[Resolved, list[Diagnostic]]:
    """The resolved host and the diagnostics about facts that could not be read."""
    host, found = resolve_host(spec, topo)
    return Resolved(spec, offline.target(spec, topo), host, topo), found
