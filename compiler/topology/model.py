"""Topology: what the machine is.  Importers produce it; check and lower read it.

The snapshot file (hostc's own TOML) is this model written by cattrs and
tomli-w, so attribute names are the file's keys and field metadata is the
documentation that `hostc schema topology` publishes.

A Topology cannot change, as a loaded spec cannot: its arrays are tuples and its
tables FrozenMaps all the way down, whoever builds it (a list or dict given to a
constructor or to `attrs.evolve` is copied into one), so `topo.cpus.append(…)`
fails where it is written, and the snapshot `api` caches and shares stays as read.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

import attrs

from hostc.cpuset import CpuSet
from hostc.fielddoc import doc
from hostc.knowledge.family import OsFamily
from hostc.record import FrozenMap, Record
from hostc.topology.devices import CLOSE_LINKS
from hostc.topology.devices import Gpu as Gpu  # the devices a Topology holds: named here too
from hostc.topology.devices import Link as Link
from hostc.topology.devices import Nic as Nic


def freeze(record: object, *fields: str) -> None:
    """Each named field of a just-made `record` given as a list (a dict), or any other
    iterable, made a tuple (a FrozenMap): the declared types say tuple, and this holds
    a Topology built in Python to them too (its builder's list is not the field)."""
    for name in fields:
        value = getattr(record, name)
        kind = type(value)
        if kind is not tuple and kind is not FrozenMap:
            table = kind is dict or isinstance(value, Mapping)
            object.__setattr__(record, name, FrozenMap(value) if table else tuple(value))


@attrs.frozen(repr=False, eq=False)
class LogicalCpu(Record):
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


@attrs.frozen(repr=False, eq=False)
class NumaNode(Record):
    id: int = attrs.field(metadata=doc("NUMA node id", 0))
    memory_mib: int | None = attrs.field(
        default=None, metadata=doc("total memory of the node in MiB (unknown in some captures)")
    )
    distances: tuple[int, ...] = attrs.field(
        default=(),
        metadata=doc("SLIT distances to every node, in the order of the `nodes` list", [10, 21]),
    )
    hugepages: Mapping[str, int] = attrs.field(
        factory=FrozenMap,
        metadata=doc("hugepage pools present at capture, size → pages", {"1G": 0}),
    )

    def __attrs_post_init__(self) -> None:
        freeze(self, "distances", "hugepages")


_OS_ID = re.compile(r"[a-z0-9._-]+")


@attrs.frozen(repr=False, eq=False)
class OsRelease(Record):
    """The distribution, from os-release(5): decides the delivery (cloud-init, Ignition …)."""

    id: str = attrs.field(metadata=doc("ID= (lowercase: ubuntu, rhel, fedora-coreos …)", "ubuntu"))
    version_id: str | None = attrs.field(
        default=None, metadata=doc("VERSION_ID= (22.04, 9.4 …)", "22.04")
    )
    id_like: tuple[str, ...] = attrs.field(
        default=(), metadata=doc("ID_LIKE=, split at spaces", ["debian"])
    )

    def __attrs_post_init__(self) -> None:
        freeze(self, "id_like")

    @property
    def family(self) -> OsFamily:
        """What decides the delivery and package names (`OsFamily.from_os_release`)."""
        return OsFamily.from_os_release(self.id, self.id_like)


def valid_os_id(value: str) -> bool:
    """os-release(5): IDs are lowercase letters, digits and `._-`."""
    return _OS_ID.fullmatch(value) is not None


#: x86 writes BAD_APICID (0xFFFF) as cluster_id where the CPU reports no L2 cluster
#: (arch/x86: `topo.l2c_id = BAD_APICID`, a u16); other architectures write -1
#: (include/linux/topology.h's default).  Either is "no cluster", never a cluster's id.
NO_CLUSTER = 0xFFFF


def known_cluster(value: int | None) -> int | None:
    """`value` as a cluster id, None where the kernel meant "no cluster"."""
    return None if value is None or value < 0 or value == NO_CLUSTER else value


#: The machine facts `hostc probe` reads beyond the topology (absent: not known, as in a
#: snapshot written before them or by an importer that cannot tell; `check` then says
#: nothing).  A driver named `none` is none loaded.
HYPERVISOR_DOC = (
    "whether /proc/cpuinfo's flags carry `hypervisor` (x86): the machine is a virtual machine"
)
CPUFREQ_DOC = (
    "cpufreq scaling driver of CPU 0 (cpu0/cpufreq/scaling_driver); `none`: no driver is "
    "loaded, so governor, EPP and P-state settings do nothing"
)
CPUIDLE_DOC = (
    "cpuidle driver (cpu/cpuidle/current_driver); `none`: no driver is loaded, so C-state "
    "limits (PM QoS, max_cstate) do nothing"
)
#: How a driver name is spelled (sysfs writes module-like names: intel_pstate, acpi-cpufreq)
_DRIVER = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
NO_DRIVER = "none"


def valid_driver(value: str) -> bool:
    return _DRIVER.fullmatch(value) is not None


#: A Topology's arrays and tables: tuples and FrozenMaps however it was built (`freeze`).
ARRAYS = (
    *("cpus", "nodes", "hugepage_sizes", "gpus", "nics", "links"),
    *("unknown", "kernel_config", "notes"),
)


@attrs.frozen(repr=False, eq=False)
class Topology(Record):
    """A machine: CPUs, NUMA nodes, devices.  `hostc probe` and `hostc import` write it."""

    arch: str = attrs.field(metadata=doc("machine architecture (uname -m)", "x86_64"))
    cpus: tuple[LogicalCpu, ...] = attrs.field(metadata=doc("every CPU, online or not"))
    nodes: tuple[NumaNode, ...] = attrs.field(metadata=doc("NUMA nodes, CPU-less ones included"))
    version: int = attrs.field(default=2, metadata=doc("snapshot format version", 2))
    source: str | None = attrs.field(
        default=None, metadata=doc("what produced the snapshot (probe, hwloc, lscpu, …)")
    )
    kernel: str | None = attrs.field(
        default=None, metadata=doc("kernel release the host runs (uname -r)", "6.8.0-45-generic")
    )
    cmdline: str | None = attrs.field(
        default=None, metadata=doc("/proc/cmdline (old snapshots; never probed: may hold secrets)")
    )
    hugepage_sizes: tuple[str, ...] = attrs.field(
        default=(),
        metadata=doc("hugepage sizes the CPU supports", ["2M", "1G"]),
    )
    gpus: tuple[Gpu, ...] = attrs.field(default=(), metadata=doc("GPUs (3D/VGA controllers)"))
    nics: tuple[Nic, ...] = attrs.field(default=(), metadata=doc("network and RDMA devices"))
    links: tuple[Link, ...] = attrs.field(
        default=(),
        metadata=doc("GPU/NIC link matrix from nvidia-smi topo -m"),
    )
    unknown: tuple[str, ...] = attrs.field(
        default=(),
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
    kernel_config: Mapping[str, str] = attrs.field(
        factory=FrozenMap,
        metadata=doc(
            "the kernel build options hostc consults (from /boot/config-<release>): y, m or n",
            {"CONFIG_NO_HZ_FULL": "y", "CONFIG_RCU_NOCB_CPU": "y"},
        ),
    )
    notes: tuple[str, ...] = attrs.field(
        default=(),
        metadata=doc(
            "what the source said with reservations (device locality spans, sizes left out)"
        ),
    )
    hypervisor: bool | None = attrs.field(default=None, metadata=doc(HYPERVISOR_DOC, False))
    cpufreq_driver: str | None = attrs.field(
        default=None, metadata=doc(CPUFREQ_DOC, "intel_pstate")
    )
    cpuidle_driver: str | None = attrs.field(default=None, metadata=doc(CPUIDLE_DOC, "intel_idle"))

    def __attrs_post_init__(self) -> None:
        freeze(self, *ARRAYS)

    # Derived views of the frozen snapshot: computed on first use, kept in the instance's
    # own slots (attrs ≥ 23.2 gives frozen slotted classes cached_property), so a stage
    # or target that asks again pays an attribute read, and they die with the snapshot.

    @functools.cached_property
    def online(self) -> CpuSet:
        return CpuSet(c.id for c in self.cpus if c.online)

    @functools.cached_property
    def present(self) -> CpuSet:
        """Every CPU the snapshot lists, online or not."""
        return CpuSet(c.id for c in self.cpus)

    @property
    def boot_cpu(self) -> int:
        """The CPU the kernel keeps for timekeeping: the lowest online one."""
        return self.online.min()

    def node_cpus(self, node: int) -> CpuSet:
        return self.cpus_of_nodes((node,))

    @functools.cached_property
    def _by_node(self) -> dict[int | None, CpuSet]:
        ids: dict[int | None, list[int]] = {}
        for c in self.cpus:
            if c.online:
                ids.setdefault(c.node, []).append(c.id)
        return {n: CpuSet(v) for n, v in ids.items()}

    def cpus_of_nodes(self, nodes: Iterable[int]) -> CpuSet:
        by_node = self._by_node
        wanted = set(nodes)
        if len(wanted) == 1:
            return by_node.get(next(iter(wanted)), CpuSet())
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
        return next((core for core in self._cores.values() if cpu in core), CpuSet([cpu]))

    @functools.cached_property
    def _cores(self) -> dict[int, CpuSet]:
        out: dict[int, set[int]] = {}
        for c in self.cpus:
            if c.online:
                out.setdefault(c.core if c.core is not None else c.id, set()).add(c.id)
        return {k: CpuSet(v) for k, v in sorted(out.items())}

    def cores(self) -> dict[int, CpuSet]:
        """Online cores: core id → its online threads (a fresh dict; the sets are shared)."""
        return dict(self._cores)

    @functools.cached_property
    def core_list(self) -> tuple[CpuSet, ...]:
        """The online cores, by core id."""
        return tuple(self._cores.values())

    @functools.cached_property
    def cores_by_first(self) -> tuple[tuple[int, int], ...]:
        """Each online core as (its first CPU, its mask), by first CPU."""
        return tuple(sorted((c.min(), c.bits) for c in self.core_list))

    @functools.cached_property
    def smt_unknown(self) -> CpuSet:
        """Online CPUs whose core (so whose SMT siblings) the snapshot does not say."""
        return CpuSet(c.id for c in self.cpus if c.online and c.core is None)

    @functools.cached_property
    def memory_nodes(self) -> tuple[int, ...]:
        """Nodes with CPUs and memory (or unknown memory): where a hugepage `total` is split.

        CPU-less nodes (HBM, MCDRAM, GPU memory, CXL) are left out: pages there are
        far from every CPU, and such memory is usually reserved for its device.
        """
        return tuple(
            n.id
            for n in sorted(self.nodes, key=lambda n: n.id)
            if n.memory_mib != 0 and self.node_cpus(n.id)
        )

    @functools.cached_property
    def cpuless_memory_nodes(self) -> tuple[int, ...]:
        """Nodes with memory but no CPUs (HBM, MCDRAM, GPU memory, CXL)."""
        return tuple(n.id for n in self.nodes if n.memory_mib != 0 and not self.node_cpus(n.id))

    def first_cores(self, per_node: int) -> CpuSet:
        """The first `per_node` whole cores of each NUMA node, the boot CPU's core first
        (the default housekeeping set); computed once per snapshot and count."""
        found = self._first_cores.get(per_node)
        if found is None:
            found = self._first_cores[per_node] = _first_cores(self, per_node)
        return found

    @functools.cached_property
    def _first_cores(self) -> dict[int, CpuSet]:
        return {}

    @functools.cached_property
    def close_peers(self) -> Mapping[str, frozenset[str]]:
        """Device → the devices on a PIX/PXB path to it (behind the same PCIe switches,
        the path GPUDirect RDMA wants), from the link matrix."""
        peers: dict[str, set[str]] = {}
        for link in self.links:
            if link.kind.upper() in CLOSE_LINKS:
                peers.setdefault(link.a, set()).add(link.b)
                peers.setdefault(link.b, set()).add(link.a)
        return FrozenMap({k: frozenset(v) for k, v in peers.items()})

    @functools.cached_property
    def packages_by_node(self) -> tuple[tuple[int, int | None], ...]:
        """Each node with online CPUs and the package of its first listed one, by node."""
        packages: dict[int, int | None] = {}
        for c in self.cpus:
            if c.online and c.node is not None and c.node not in packages:
                packages[c.node] = c.package
        return tuple(sorted(packages.items()))

    @functools.cached_property
    def offline_by_node(self) -> tuple[tuple[int | None, CpuSet], ...]:
        """Offline CPUs per node (None: the snapshot does not say which), nodes first."""
        offline: dict[int | None, list[int]] = {}
        for c in self.cpus:
            if not c.online:
                offline.setdefault(c.node, []).append(c.id)
        ordered = sorted(offline.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
        return tuple((n, CpuSet(ids)) for n, ids in ordered)

    @functools.cached_property
    def gpu_nic_links(self) -> tuple[tuple[str, str, str], ...]:
        """The link matrix's GPU-NIC cells as (gpu, nic, kind), either order of the matrix
        read GPU first, each once, sorted (kind too: one order whatever the matrix says)."""
        gpus = {g.name for g in self.gpus}
        nics = {n.name for n in self.nics}
        cells = set()
        for link in self.links:
            if link.a in gpus and link.b in nics:
                cells.add((link.a, link.b, link.kind))
            elif link.b in gpus and link.a in nics:
                cells.add((link.b, link.a, link.kind))
        return tuple(sorted(cells))

    @functools.cached_property
    def nic_names(self) -> tuple[tuple[Nic, frozenset[str]], ...]:
        """Each NIC with every name the link matrix may use for it."""
        return tuple((n, frozenset(x for x in (n.name, n.rdma, n.netdev) if x)) for n in self.nics)


def _first_cores(topo: Topology, per_node: int) -> CpuSet:
    boot = topo.boot_cpu
    # one pass: a core lies in its first CPU's node, so only those cores are candidates
    node_of = {c.id: c.node for c in topo.cpus}
    by_node: dict[int | None, list[tuple[bool, int, frozenset[int]]]] = {}
    for core in topo.core_list:
        first = min(core.ids)
        by_node.setdefault(node_of[first], []).append((boot not in core.ids, first, core.ids))
    picked: set[int] = set()
    for node in topo.node_ids():
        node_cpus = topo.node_cpus(node).ids
        node_cores = sorted(c for c in by_node.get(node, ()) if c[2] <= node_cpus)
        for _, _, ids in node_cores[:per_node]:
            picked |= ids
    return CpuSet(picked)
