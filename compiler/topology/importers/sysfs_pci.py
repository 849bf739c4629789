"""PCI devices in sysfs: compute GPUs and accelerators, and network adapters with
the netdev and RDMA device the kernel made for them, each with its NUMA node.
"""

from __future__ import annotations

import re

from hostc.topology.importers.sysfs_reader import Reader, known
from hostc.topology.model import Gpu, Nic

PCI_DIR = "sys/bus/pci/devices"
_VENDORS = {0x10DE: "NVIDIA", 0x1002: "AMD", 0x8086: "Intel", 0x15B3: "Mellanox"}
# Display controllers that are never compute GPUs: BMC consoles (ASPEED, Matrox)
# and the emulated adapters of QEMU/Bochs, Cirrus, virtio/QXL, VMware, Hyper-V.
_NOT_GPUS = {0x1A03, 0x102B, 0x1234, 0x1013, 0x1AF4, 0x1B36, 0x15AD, 0x1414}
_PCI_ADDR = re.compile(r"^([0-9a-f]+):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")


def _pci_key(addr: str) -> tuple[int, int, int, int, str]:
    """Numeric bus order, so GPU0 is the GPU on the lowest bus whatever the listing order."""
    m = _PCI_ADDR.match(addr.lower())
    if m is None:
        return (1 << 32, 0, 0, 0, addr)
    dom, bus, dev, fn = (int(g, 16) for g in m.groups())
    return (dom, bus, dev, fn, addr)


def _first_entry(r: Reader, rel: str) -> str | None:
    """The first name in `rel` (a device's netdev or RDMA device), marked for capture."""
    names = r.listdir(rel)
    if not names:
        return None
    r.mark(f"{rel}/{names[0]}")
    return names[0]


def read_devices(r: Reader, sole_node: int | None) -> tuple[list[Gpu], list[Nic]]:
    """GPUs and NICs in PCI order; `sole_node` places devices on a one-node machine."""
    gpus: list[Gpu] = []
    nics: list[Nic] = []
    for addr in sorted(r.listdir(PCI_DIR), key=_pci_key):
        d = f"{PCI_DIR}/{addr}"
        r.mark(d)
        cls = r.integer(f"{d}/class", base=16)
        if cls is None:
            continue
        base = cls >> 16
        if base not in (0x02, 0x03, 0x12) and cls >> 8 != 0x0C06:
            continue
        vendor_id = r.integer(f"{d}/vendor", base=16)
        if base == 0x03 and vendor_id in _NOT_GPUS:
            continue
        device_id = r.integer(f"{d}/device", base=16)
        node = known(r.integer(f"{d}/numa_node"))
        if node is None and sole_node is not None:
            # Firmware often leaves numa_node at -1 on one-node machines, where
            # the answer is not in doubt.  On several nodes it stays unknown.
            node = sole_node
        vendor = None if vendor_id is None else _VENDORS.get(vendor_id, f"0x{vendor_id:04x}")
        if base in (0x03, 0x12):
            model = None
            if vendor_id is not None and device_id is not None:
                model = f"{vendor_id:04x}:{device_id:04x}"  # lspci -n form; no pci.ids lookup
            gpus.append(Gpu(f"GPU{len(gpus)}", addr, node, vendor, model))
            continue
        netdev = _first_entry(r, f"{d}/net")
        if netdev is None:  # virtio-net hangs its netdev one level down
            for sub in (s for s in r.listdir(d) if re.fullmatch(r"virtio\d+", s)):
                if netdev := _first_entry(r, f"{d}/{sub}/net"):
                    break
        rdma = _first_entry(r, f"{d}/infiniband")
        nics.append(Nic(rdma or netdev or addr, addr, node, netdev, rdma, vendor))
    return gpus, nics
