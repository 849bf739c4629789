"""Build fake Linux roots (sysfs and procfs files) from compact descriptions.

Checked-in copies of /sys would be large and opaque; a description says in a
few lines what machine a test is about, and the builder writes the files the
way the kernel does (siblings only among online CPUs, cpu0 without an online
file, PCI devices as symlinks into /sys/devices).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from hostc.cpuset import CpuSet

GIB_KIB = 1 << 20


@dataclass(frozen=True)
class FCpu:
    id: int
    core_id: int = 0  # the kernel's per-package core number, not the model's core
    package: int = 0
    node: int = 0
    online: bool = True
    die: int | None = 0
    cluster: int | None = None
    capacity: int | None = None


@dataclass(frozen=True)
class FNode:
    id: int
    mem_kib: int
    distances: tuple[int, ...]
    hugepages: dict[int, int] = field(default_factory=dict)  # size in KiB → pages


@dataclass(frozen=True)
class FPci:
    addr: str
    cls: int
    vendor: int
    device: int
    numa_node: int = -1
    net: tuple[str, ...] = ()
    ib: tuple[str, ...] = ()


@dataclass(frozen=True)
class FHost:
    cpus: tuple[FCpu, ...]
    nodes: tuple[FNode, ...] | None  # None: a kernel without /sys/devices/system/node
    pci: tuple[FPci, ...] = ()
    hugepage_sizes_kib: tuple[int, ...] = (2048, GIB_KIB)
    meminfo_kib: int = 32 * GIB_KIB
    cmdline: str = "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/sda1 ro quiet"
    osrelease: str = "6.8.0-45-generic"
    arch: str | None = "x86_64"
    hybrid: dict[str, str] | None = None  # {"cpu_core": "0-7", "cpu_atom": "8-15"}
    smi_text: str | None = None
    overrides: dict[str, str | None] = field(default_factory=dict)  # path → text, None: delete


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _cpulist(ids: Iterable[int]) -> str:
    return f"{CpuSet(ids)}\n"


def build(host: FHost, root: Path) -> Path:
    """Write `host` under `root` and return `root`."""
    cpu_dir = root / "sys/devices/system/cpu"
    cpu_dir.mkdir(parents=True, exist_ok=True)
    all_ids = [c.id for c in host.cpus]
    online = [c.id for c in host.cpus if c.online]
    _write(cpu_dir / "possible", _cpulist(all_ids))
    _write(cpu_dir / "present", _cpulist(all_ids))
    _write(cpu_dir / "online", _cpulist(online))
    _write(cpu_dir / "offline", _cpulist(set(all_ids) - set(online)))
    _write(cpu_dir / "kernel_max", "8191\n")
    for c in host.cpus:
        d = cpu_dir / f"cpu{c.id}"
        d.mkdir()
        if c.id != 0:
            _write(d / "online", "1\n" if c.online else "0\n")
        if c.capacity is not None:
            _write(d / "cpu_capacity", f"{c.capacity}\n")
        if not c.online:
            continue  # the kernel removes the topology directory of an offline CPU
        sib = [
            s.id
            for s in host.cpus
            if s.online and (s.package, s.die, s.core_id) == (c.package, c.die, c.core_id)
        ]
        t = d / "topology"
        _write(t / "core_id", f"{c.core_id}\n")
        _write(t / "physical_package_id", f"{c.package}\n")
        if c.die is not None:
            _write(t / "die_id", f"{c.die}\n")
        if c.cluster is not None:
            _write(t / "cluster_id", f"{c.cluster}\n")
        _write(t / "thread_siblings_list", _cpulist(sib))
        _write(t / "core_cpus_list", _cpulist(sib))
        _write(t / "thread_siblings", "ignored mask\n")
    if host.nodes is not None:
        node_dir = root / "sys/devices/system/node"
        _write(node_dir / "possible", _cpulist(n.id for n in host.nodes))
        for n in host.nodes:
            d = node_dir / f"node{n.id}"
            _write(d / "cpulist", _cpulist(c.id for c in host.cpus if c.online and c.node == n.id))
            _write(
                d / "meminfo",
                f"Node {n.id} MemTotal:       {n.mem_kib} kB\n"
                f"Node {n.id} MemFree:        {n.mem_kib // 2} kB\n"
                f"Node {n.id} MemUsed:        {n.mem_kib // 2} kB\n",
            )
            _write(d / "distance", " ".join(str(x) for x in n.distances) + "\n")
            for kib in host.hugepage_sizes_kib:
                h = d / "hugepages" / f"hugepages-{kib}kB"
                _write(h / "nr_hugepages", f"{n.hugepages.get(kib, 0)}\n")
                _write(h / "free_hugepages", "0\n")
    _write(
        root / "proc/meminfo",
        f"MemTotal:       {host.meminfo_kib} kB\nMemFree:        {host.meminfo_kib // 3} kB\n",
    )
    for kib in host.hugepage_sizes_kib:
        total = sum(n.hugepages.get(kib, 0) for n in host.nodes or ())
        _write(root / f"sys/kernel/mm/hugepages/hugepages-{kib}kB/nr_hugepages", f"{total}\n")
    links = root / "sys/bus/pci/devices"
    links.mkdir(parents=True, exist_ok=True)
    for p in host.pci:
        domain, bus = p.addr.split(":")[:2]
        real = root / f"sys/devices/pci{domain}:{bus}" / p.addr
        _write(real / "class", f"0x{p.cls:06x}\n")
        _write(real / "vendor", f"0x{p.vendor:04x}\n")
        _write(real / "device", f"0x{p.device:04x}\n")
        _write(real / "numa_node", f"{p.numa_node}\n")
        _write(real / "irq", "42\n")
        for sub, names in (("net", p.net), ("infiniband", p.ib)):
            for name in names:
                _write(real / sub / name / "uevent", f"NAME={name}\n")
        (links / p.addr).symlink_to(Path(f"../../../devices/pci{domain}:{bus}/{p.addr}"))
    _write(root / "proc/cmdline", host.cmdline + "\n")
    _write(root / "proc/sys/kernel/osrelease", host.osrelease + "\n")
    if host.arch is not None:
        _write(root / "proc/sys/kernel/arch", host.arch + "\n")
    for pmu, cpus in (host.hybrid or {}).items():
        _write(root / f"sys/devices/{pmu}/cpus", cpus + "\n")
    if host.smi_text is not None:
        _write(root / "hostc/nvidia-smi-topo.txt", host.smi_text)
    for rel, text in host.overrides.items():
        if text is None:
            (root / rel).unlink()
        else:
            _write(root / rel, text)
    return root


def distances(count: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(10 if i == j else 21 for j in range(count)) for i in range(count))


def smt_host(packages: int, cores: int, smt: int, nodes: int, offline: Iterable[int] = ()) -> FHost:
    """`packages` sockets of `cores` cores with `smt` threads, numbered as x86 does.

    Thread t of global core k is CPU t * (packages * cores) + k.  With one node
    per package each socket is a node; with two nodes on one socket the cores
    split in halves (sub-NUMA clustering); with one node everything is node 0.
    """
    total = packages * cores
    off = set(offline)
    cpus = []
    for t in range(smt):
        for k in range(total):
            package, core_id = divmod(k, cores)
            if nodes == packages:
                node = package
            elif nodes > packages:
                node = 0 if core_id < (cores + 1) // 2 else 1
            else:
                node = 0
            cid = t * total + k
            cpus.append(FCpu(cid, core_id, package, node, online=cid not in off))
    cpus.sort(key=lambda c: c.id)
    table = distances(nodes)
    fnodes = tuple(FNode(i, 64 * GIB_KIB, table[i]) for i in range(nodes))
    return FHost(tuple(cpus), fnodes)


SMI_TOPO_4GPU = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV12\tNV12\tNV12\tPXB\tSYS\t0-3,8-11\t0\t\tN/A
GPU1\tNV12\t X \tNV12\tNV12\tPXB\tSYS\t0-3,8-11\t0\t\tN/A
GPU2\tNV12\tNV12\t X \tNV12\tSYS\tNODE\t4-7,12-15\t1\t\tN/A
GPU3\tNV12\tNV12\tNV12\t X \tSYS\tNODE\t4-7,12-15\t1\t\tN/A
NIC0\tPXB\tPXB\tSYS\tSYS\t X \tSYS
NIC1\tSYS\tSYS\tNODE\tNODE\tSYS\t X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes
  NODE = Connection traversing PCIe and the interconnect between host bridges in a node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: ens1f0
"""


def two_socket_gpu_host() -> FHost:
    """16 CPUs (8 cores × SMT2, CPU n and n+8 siblings), 2 sockets = 2 nodes, 4 GPUs, 2 NICs."""
    base = smt_host(2, 4, 2, 2)
    nodes = tuple(
        FNode(n.id, n.mem_kib, n.distances, {2048: 1024, GIB_KIB: 4}) for n in base.nodes or ()
    )
    pci = (
        FPci("0000:00:00.0", 0x060000, 0x8086, 0x09A2, 0),  # host bridge: ignored
        FPci("0000:03:00.0", 0x030000, 0x1A03, 0x2000, 0),  # ASPEED BMC VGA: not a GPU
        FPci("0000:17:00.0", 0x030200, 0x10DE, 0x2330, 0),
        FPci("0000:1a:00.0", 0x020000, 0x15B3, 0x1021, 0, net=("ibp26s0",), ib=("mlx5_0",)),
        FPci("0000:3d:00.0", 0x030200, 0x10DE, 0x2330, 0),
        FPci("0000:99:00.0", 0x030200, 0x10DE, 0x2330, 1),
        FPci("0000:b1:00.0", 0x030200, 0x10DE, 0x2330, 1),
        FPci("0000:c1:00.0", 0x020000, 0x8086, 0x159B, 1, net=("ens1f0",)),
    )
    return replace(base, nodes=nodes, pci=pci)
