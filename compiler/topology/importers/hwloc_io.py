"""hwloc XML, the I/O side: GPUs and NICs from PCI devices, placed on NUMA nodes.

I/O objects hang under the closest normal object and have no cpuset; their
locality is the first ancestor with one.  A locality covering several nodes is
recorded as a note instead of picking one of them.
"""

from __future__ import annotations

import re
from collections import Counter

from hostc.cpuset import CpuSet
from hostc.topology.importers.hwloc_xml import Element, Tree, info, int_attr, mask, objects, type_of
from hostc.topology.model import Gpu, LogicalCpu, Nic

_PCI_TYPE = re.compile(r"([0-9a-fA-F]{4}) \[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_BUSID = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)")
# Server BMCs carry a VGA chip that is no GPU anyone computes on.
_BMC_VENDORS = frozenset({"1a03", "102b"})
# Short vendor names, so a file with PCIVendor infos and one without agree.
# fmt: off
_VENDORS = {
    "10de": "NVIDIA", "1002": "AMD", "8086": "Intel", "15b3": "Mellanox", "14e4": "Broadcom",
    "1077": "QLogic", "1d0f": "Amazon", "1137": "Cisco", "17db": "HPE", "10df": "Emulex",
}
# fmt: on
_OSDEV_NETWORK = "2"
_OSDEV_OPENFABRICS = "3"


def _busid_key(busid: str) -> tuple[int, ...]:
    m = _BUSID.fullmatch(busid)
    return tuple(int(g, 16) for g in m.groups()) if m else (1 << 64,)


def _osdev(dev: Element, osdev_type: str) -> str | None:
    return next((o.get("name") for o in objects(dev) if o.get("osdev_type") == osdev_type), None)


class _Locality:
    """Device → NUMA node, each locality computed once (many devices share a Package)."""

    def __init__(self, tree: Tree, cpus: list[LogicalCpu]) -> None:
        self.tree = tree
        self.node_of = {c.id: c.node for c in cpus if c.online and c.node is not None}
        self.cache: dict[Element, tuple[int | None, list[int]]] = {}

    def __call__(self, dev: Element) -> tuple[int | None, list[int]]:
        """The device's NUMA node: the one whose CPUs its locality (first ancestor with a
        cpuset) covers; with several, the caller records the span instead of picking one."""
        for anc in self.tree.ancestors(dev):
            if anc.get("cpuset") is None:
                continue
            if type_of(anc) == "NUMANode":  # v1 hangs I/O under the node itself
                return int_attr(anc, "os_index", "NUMANode"), []
            if anc not in self.cache:
                loc = mask(anc, "cpuset") or CpuSet()
                cover = sorted({n for c in loc.ids if (n := self.node_of.get(c)) is not None})
                self.cache[anc] = (cover[0], []) if len(cover) == 1 else (None, cover)
            return self.cache[anc]
        return None, []


def read_devices(tree: Tree, cpus: list[LogicalCpu]) -> tuple[list[Gpu], list[Nic], list[str]]:
    gpus: list[tuple[str, Element, str]] = []
    nics: list[tuple[str, Element, str]] = []
    for el in tree.order:
        m = _PCI_TYPE.match(el.get("pci_type", "")) if type_of(el) == "PCIDev" else None
        if m is None:
            continue
        cls, vendor = m.group(1).lower(), m.group(2).lower()
        busid = el.get("pci_busid", "")
        if cls.startswith(("03", "12")) and not (cls.startswith("03") and vendor in _BMC_VENDORS):
            gpus.append((busid, el, vendor))
        elif cls.startswith("02") or cls == "0c06":
            nics.append((busid, el, vendor))
    notes: list[str] = []
    locality = _Locality(tree, cpus)

    def node_of(name: str, el: Element) -> int | None:
        node, span = locality(el)
        if span:
            notes.append(f"locality:{name} spans nodes {','.join(map(str, span))}")
        elif node is None:
            notes.append(f"locality:{name} unknown")
        return node

    out_gpus: list[Gpu] = []
    for i, (busid, el, vendor) in enumerate(sorted(gpus, key=lambda g: _busid_key(g[0]))):
        models = (info(o, "GPUModel") for o in objects(el))
        out_gpus.append(
            Gpu(
                name=f"GPU{i}",
                pci=busid or None,
                node=node_of(f"GPU{i}", el),
                vendor=_VENDORS.get(vendor) or info(el, "PCIVendor"),
                model=next((m for m in models if m), None) or info(el, "PCIDevice"),
            )
        )
    named: list[tuple[str, str, Element, str, str | None, str | None]] = []
    for busid, el, vendor in sorted(nics, key=lambda n: _busid_key(n[0])):
        netdev, rdma = _osdev(el, _OSDEV_NETWORK), _osdev(el, _OSDEV_OPENFABRICS)
        named.append((rdma or netdev or busid, busid, el, vendor, netdev, rdma))
    seen = Counter(n[0] for n in named)
    out_nics = [
        Nic(
            name=(name := f"{n}@{busid}" if seen[n] > 1 else n),
            pci=busid or None,
            node=node_of(name, el),
            netdev=netdev,
            rdma=rdma,
            vendor=_VENDORS.get(vendor) or info(el, "PCIVendor"),
        )
        for n, busid, el, vendor, netdev, rdma in named
    ]
    return out_gpus, out_nics, notes
