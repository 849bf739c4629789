"""The devices a Topology holds: GPUs, NICs and the link matrix between them.

`hostc.topology.model` holds them in a Topology and names them too, so importers and
stages import them from either module.
"""

from __future__ import annotations

import attrs

from hostc.fielddoc import doc
from hostc.record import Record


@attrs.frozen(repr=False, eq=False)
class Gpu(Record):
    name: str = attrs.field(metadata=doc("GPU name as nvidia-smi shows it", "GPU0"))
    pci: str | None = attrs.field(default=None, metadata=doc("PCI address", "0000:17:00.0"))
    node: int | None = attrs.field(default=None, metadata=doc("NUMA node the GPU is attached to"))
    vendor: str | None = attrs.field(default=None, metadata=doc("vendor (NVIDIA, AMD, …)"))
    model: str | None = attrs.field(default=None, metadata=doc("model name"))
    cpus: str | None = attrs.field(
        default=None, metadata=doc("CPU affinity reported by the driver (cpulist)")
    )


@attrs.frozen(repr=False, eq=False)
class Nic(Record):
    name: str = attrs.field(metadata=doc("name: netdev, RDMA device or nvidia-smi NICn", "mlx5_0"))
    pci: str | None = attrs.field(default=None, metadata=doc("PCI address"))
    node: int | None = attrs.field(default=None, metadata=doc("NUMA node the NIC is attached to"))
    netdev: str | None = attrs.field(default=None, metadata=doc("network interface name", "ens1"))
    rdma: str | None = attrs.field(default=None, metadata=doc("RDMA/InfiniBand device", "mlx5_0"))
    vendor: str | None = attrs.field(default=None, metadata=doc("vendor"))


@attrs.frozen(repr=False, eq=False)
class Link(Record):
    """One cell of the `nvidia-smi topo -m` matrix (kept for NIC selection)."""

    a: str = attrs.field(metadata=doc("device (GPU0, NIC1)"))
    b: str = attrs.field(metadata=doc("device (GPU1, NIC0)"))
    kind: str = attrs.field(metadata=doc("link type: NV#, PIX, PXB, PHB, NODE, SYS", "NV18"))


#: Link types meaning "behind the same PCIe switch(es)": the path GPUDirect RDMA wants.
CLOSE_LINKS = ("PIX", "PXB")
