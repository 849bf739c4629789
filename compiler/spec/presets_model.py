"""What presets are made of: the context they depend on, conditions and entries."""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs

from hostc.knowledge.arch import Arch
from hostc.knowledge.vendor import Vendor
from hostc.provenance import Layer
from hostc.record import Record
from hostc.settings.model import Setting

T = TypeVar("T")


@attrs.frozen(repr=False, eq=False)
class Context(Record):
    """What presets may depend on: facts about the host and the spec."""

    role: str
    arch: Arch
    cpu_vendor: Vendor | None
    kernel: tuple[int, int] | None
    pinned: bool  # workloads are bound to their NUMA nodes
    multi_node: bool = True  # more than one NUMA node (False: a single-node host)
    #: the kubelet's Static memory manager binds Guaranteed pods' memory to their NUMA
    #: nodes under a restricted or single-numa-node topology policy (`binds_pods`)
    pods_bound: bool = False
    realtime: bool = False  # `cpu.realtime`: real-time threads run on the isolated CPUs
    rdma: bool = False  # a workload is handed RDMA NICs (GPUDirect RDMA)
    #: (feature, upstream release its kernel has) where the distribution backports it
    features: tuple[tuple[str, tuple[int, int]], ...] = ()
    gpu_vendors: tuple[str, ...] = ()  # lower-case vendors of the snapshot's GPUs
    rdma_nics: int = 0  # NICs with an RDMA device
    gpus: int = 0  # GPUs in the snapshot, of any vendor


@attrs.frozen(repr=False, eq=False)
class Cond(Record):
    """Empty tuples mean any.  Kernel bounds: `kernel_min <= release < kernel_below`;
    an unknown kernel release satisfies no bound (a preset must not guess)."""

    arch: tuple[Arch, ...] = ()
    vendor: tuple[Vendor, ...] = ()
    roles: tuple[str, ...] = ()
    pinned: bool | None = None
    pods_bound: bool | None = None
    realtime: bool | None = None
    rdma: bool | None = None
    #: judge the kernel bounds by this feature's backported release (osfacts.KERNEL_BACKPORTS)
    feature: str | None = None
    kernel_min: tuple[int, int] | None = None
    kernel_below: tuple[int, int] | None = None
    multi_node: bool | None = None
    gpu_vendor: tuple[str, ...] = ()  # some GPU of one of these vendors
    min_rdma_nics: int = 0
    min_gpus: int = 0

    def holds(self, ctx: Context) -> bool:
        if ctx.gpus < self.min_gpus:
            return False
        if self.gpu_vendor and not set(self.gpu_vendor) & set(ctx.gpu_vendors):
            return False
        if ctx.rdma_nics < self.min_rdma_nics:
            return False
        if self.arch and ctx.arch not in self.arch:
            return False
        if self.vendor and ctx.cpu_vendor not in self.vendor:
            return False
        if self.roles and ctx.role not in self.roles:
            return False
        if self.pinned is not None and ctx.pinned != self.pinned:
            return False
        if self.pods_bound is not None and ctx.pods_bound != self.pods_bound:
            return False
        if self.realtime is not None and ctx.realtime != self.realtime:
            return False
        if self.multi_node is not None and ctx.multi_node != self.multi_node:
            return False
        if self.rdma is not None and ctx.rdma != self.rdma:
            return False
        if self.kernel_min is not None or self.kernel_below is not None:
            kernel = dict(ctx.features).get(self.feature or "", ctx.kernel)
            if kernel is None:
                return False
            if self.kernel_min is not None and kernel < self.kernel_min:
                return False
            if self.kernel_below is not None and kernel >= self.kernel_below:
                return False
        return True


@attrs.frozen(repr=False, eq=False)
class Entry(Generic[T], Record):
    """A preset layer's value for one setting, typed by the setting's row."""

    layer: Layer
    setting: Setting[T]
    value: T
    why: str
    cond: Cond = Cond()
