"""Topology: what the machine is.  Importers produce it; check and lower read it.

The snapshot file (hostc's own TOML) is this model written by cattrs and
tomli-w, so attribute names are the file's keys and field metadata is the
documentation that `hostc schema topology` publishes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import attrs

from hostc.cpuset import CpuSet
from hostc.fielddoc import doc
from hostc.knowledge.family import OsFamily
from hostc.memo import memo_of


@attrs.frozen
class LogicalCpu:
    """One logical CPU (a PU, a hardware thread)."""

    id: int = attrs.field(metadata=doc("Linux CPU number", 0))
    online: bool = attrs.field(default=True, metadata=doc("whether the CPU is online"))
    core: int | None = attrs.field(
        default=None,
        metadata=doc(
            "the physical core, named by its lowest-numbered thread: CPUs sharing it are "
            "SMT siblings (unknown for offline CPUs)",
            0,
        ),
    )
    package: int | None = attrs.field(default=None, metadata=doc("socket (physical package) id"))
    node: int | None = attrs.field(default=None, metadata=doc("NUMA node id"))
    die: int | None = attrs.field(default=None, metadata=doc("die id, where the kernel exposes it"))
    cluster: int | None = attrs.field(default=None, metadata=doc("cluster id (arm64, hybrid x86)"))
    kind: str | None = attrs.field(
        default=None, metadata=doc("core kind on hybrid CPUs (IntelCore, IntelAtom, …)")
    )


@attrs.frozen
class NumaNode:
    id: int = attrs.field(metadata=doc("NUMA node id", 0))
    memory_mib: int | None = attrs.field(
        default=None, metadata=doc("total memory of the node in MiB (unknown in some captures)")
    )
    distances: list[int] = attrs.field(
        factory=list,
        metadata=doc("SLIT distances to every node, in the order of the `nodes` list", [10, 21]),
    )
    hugepages: dict[str, int] = attrs.field(
        factory=dict, metadata=doc("hugepage pools present at capture, size → pages", {"1G": 0})
    )


@attrs.frozen
class Gpu:
    name: str = attrs.field(metadata=doc("GPU name as nvidia-smi shows it", "GPU0"))
    pci: str | None = attrs.field(default=None, metadata=doc("PCI address", "0000:17:00.0"))
    node: int | None = attrs.field(default=None, metadata=doc("NUMA node the GPU is attached to"))
    vendor: str | None = attrs.field(default=None, metadata=doc("vendor (NVIDIA, AMD, …)"))
    model: str | None = attrs.field(default=None, metadata=doc("model name"))
    cpus: str | None = attrs.field(
        default=None, metadata=doc("CPU affinity reported by the driver (cpulist)")
    )


@attrs.frozen
class Nic:
    name: str = attrs.field(metadata=doc("name: netdev, RDMA device or nvidia-smi NICn", "mlx5_0"))
    pci: str | None = attrs.field(default=None, metadata=doc("PCI address"))
    node: int | None = attrs.field(default=None, metadata=doc("NUMA node the NIC is attached to"))
    netdev: str | None = attrs.field(default=None, metadata=doc("network interface name", "ens1"))
    rdma: str | None = attrs.field(default=None, metadata=doc("RDMA/InfiniBand device", "mlx5_0"))
    vendor: str | None = attrs.field(default=None, metadata=doc("vendor"))


@attrs.frozen
class Link:
    """One cell of the `nvidia-smi topo -m` matrix (kept for NIC selection)."""

    a: str = attrs.field(metadata=doc("device (GPU0, NIC1)"))
    b: str = attrs.field(metadata=doc("device (GPU1, NIC0)"))
    kind: str = attrs.field(metadata=doc("link type: NV#, PIX, PXB, PHB, NODE, SYS", "NV18"))


_OS_ID = re.compile(r"[a-z0-9._-]+")


@attrs.frozen
class OsRelease:
    """The distribution, from os-release(5): decides the delivery (cloud-init, Ignition …)."""

    id: str = attrs.field(metadata=doc("ID= (lowercase: ubuntu, rhel, fedora-coreos …)", "ubuntu"))
    version_id: str | None = attrs.field(
        default=None, metadata=doc("VERSION_ID= (22.04, 9.4 …)", "22.04")
    )
    id_like: list[str] = attrs.field(
        factory=list, metadata=doc("ID_LIKE=, split at spaces", ["debian"])
    )

    @property
    def family(self) -> OsFamily:
        """What decides the delivery and package names (`OsFamily.from_os_release`)."""
        return OsFamily.from_os_release(self.id, self.id_like)


def valid_os_id(value: str) -> bool:
    """os-release(5): IDs are lowercase letters, digits and `._-`."""
    return _OS_ID.fullmatch(value) is not None


@attrs.frozen
class Topology:
    """A machine: CPUs, NUMA nodes, devices.  `hostc probe` and `hostc import` write it."""

    arch: str = attrs.field(metadata=doc("machine architecture (uname -m)", "x86_64"))
    cpus: list[LogicalCpu] = attrs.field(metadata=doc("every CPU, online or not"))
    nodes: list[NumaNode] = attrs.field(metadata=doc("NUMA nodes, CPU-less ones included"))
    version: int = attrs.field(default=2, metadata=doc("snapshot format version", 2))
    source: str | None = attrs.field(
        default=None, metadata=doc("what produced the snapshot (probe, hwloc, lscpu, …)")
    )
    kernel: str | None = attrs.field(
        default=None, metadata=doc("kernel release the host runs (uname -r)", "6.8.0-45-generic")
    )
    cmdline: str | None = attrs.field(
        default=None, metadata=doc("/proc/cmdline at capture, for auditing")
    )
    hugepage_sizes: list[str] = attrs.field(
        factory=list, metadata=doc("hugepage sizes the CPU supports", ["2M", "1G"])
    )
    gpus: list[Gpu] = attrs.field(factory=list, metadata=doc("GPUs (3D/VGA controllers)"))
    nics: list[Nic] = attrs.field(factory=list, metadata=doc("network and RDMA devices"))
    links: list[Link] = attrs.field(
        factory=list, metadata=doc("GPU/NIC link matrix from nvidia-smi topo -m")
    )
    unknown: list[str] = attrs.field(
        factory=list,
        metadata=doc("facts the source could not tell (e.g. smt, memory)", ["smt"]),
    )
    cpu_vendor: str | None = attrs.field(
        default=None,
        metadata=doc("CPU vendor: intel, amd, hygon; arm64 implementer (arm, ampere, nvidia)"),
    )
    cpu_model: str | None = attrs.field(default=None, metadata=doc("CPU model name"))
    os: OsRelease | None = attrs.field(
        default=None, metadata=doc("distribution from /etc/os-release")
    )
    hidden_cpus: CpuSet = attrs.field(
        factory=CpuSet,
        metadata=doc(
            "online CPUs the export left out (cgroup or firmware reservation): listed offline"
        ),
    )
    disallowed_cpus: CpuSet = attrs.field(
        factory=CpuSet,
        metadata=doc("CPUs present but outside the capturing process's cgroup"),
    )
    kernel_config: dict[str, str] = attrs.field(
        factory=dict,
        metadata=doc(
            "the kernel build options hostc consults (from /boot/config-<release>): y, m or n",
            {"CONFIG_NO_HZ_FULL": "y", "CONFIG_RCU_NOCB_CPU": "y"},
        ),
    )
    notes: list[str] = attrs.field(
        factory=list,
        metadata=doc(
            "what the source said with reservations (device locality spans, sizes left out)"
        ),
    )

    # Derived views.  cached_property needs a __dict__, which frozen slotted
    # attrs classes lack, so these are plain (cheap) methods and properties.

    def memo(self) -> dict[object, Any]:
        """Derived views, computed once per Topology (frozen: they cannot go stale);
        lower keeps its own pure functions of the topology here too."""
        return memo_of(self)

    @property
    def online(self) -> CpuSet:
        m = self.memo()
        if "online" not in m:
            m["online"] = CpuSet(c.id for c in self.cpus if c.online)
        return m["online"]  # type: ignore[no-any-return]

    @property
    def present(self) -> CpuSet:
        """Every CPU the snapshot lists, online or not."""
        m = self.memo()
        if "present" not in m:
            m["present"] = CpuSet(c.id for c in self.cpus)
        return m["present"]  # type: ignore[no-any-return]

    @property
    def boot_cpu(self) -> int:
        """The CPU the kernel keeps for timekeeping: the lowest online one."""
        return self.online.min()

    def node_cpus(self, node: int) -> CpuSet:
        return self.cpus_of_nodes((node,))

    def cpus_of_nodes(self, nodes: Iterable[int]) -> CpuSet:
        m = self.memo()
        by_node = m.get("by_node")
        if by_node is None:
            ids: dict[int | None, list[int]] = {}
            for c in self.cpus:
                if c.online:
                    ids.setdefault(c.node, []).append(c.id)
            by_node = m["by_node"] = {n: CpuSet(v) for n, v in ids.items()}
        wanted = set(nodes)
        if len(wanted) == 1:
            return by_node.get(next(iter(wanted)), CpuSet())  # type: ignore[no-any-return]
        bits = 0
        for n in wanted:
            if n in by_node:
                bits |= by_node[n].bits
        return CpuSet._from_bits(bits)

    def node_ids(self) -> list[int]:
        return sorted(n.id for n in self.nodes)

    def node(self, node_id: int) -> NumaNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def siblings(self, cpu: int) -> CpuSet:
        """Online SMT siblings of `cpu`, itself included."""
        return next((core for core in self.cores().values() if cpu in core), CpuSet([cpu]))

    def cores(self) -> dict[int, CpuSet]:
        """Online cores: core id → its online threads (a fresh dict; the sets are shared)."""
        m = self.memo()
        if "cores" not in m:
            out: dict[int, set[int]] = {}
            for c in self.cpus:
                if c.online:
                    out.setdefault(c.core if c.core is not None else c.id, set()).add(c.id)
            m["cores"] = {k: CpuSet(v) for k, v in sorted(out.items())}
        return dict(m["cores"])
