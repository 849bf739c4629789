"""Synthetic machines with Linux-style CPU numbering, for examples and property tests.

Linux numbers the first thread of every core first (socket by socket), then
the second threads: on 2 sockets × 32 cores × SMT2, node 0 is 0-31,64-95.
"""

from __future__ import annotations

from hostc.topology.model import Gpu, LogicalCpu, Nic, NumaNode, OsRelease, Topology


def machine(
    *,
    packages: int = 2,
    nodes_per_package: int = 1,
    cores_per_node: int = 4,
    smt: int = 2,
    memory_mib: int = 65536,
    cpuless_nodes: int = 0,
    offline: frozenset[int] = frozenset(),
    gpus_per_node: int = 0,
    nics_per_node: int = 0,
    arch: str = "x86_64",
    kernel: str | None = "6.8.0-45-generic",
    hugepage_sizes: tuple[str, ...] = ("2M", "1G"),
    gpu_model: str | None = None,
    cpu_vendor: str | None = None,
    cpu_model: str | None = None,
    os: OsRelease | None = None,
) -> Topology:
    nodes_with_cpus = packages * nodes_per_package
    total_cores = nodes_with_cpus * cores_per_node
    cpus = []
    for thread in range(smt):
        for core in range(total_cores):
            cid = thread * total_cores + core
            node = core // cores_per_node
            if cid in offline:
                cpus.append(LogicalCpu(id=cid, online=False))
                continue
            # the core is named by its lowest online thread
            first = next(
                (
                    t * total_cores + core
                    for t in range(smt)
                    if t * total_cores + core not in offline
                ),
                cid,
            )
            cpus.append(
                LogicalCpu(
                    id=cid, online=True, core=first, package=node // nodes_per_package, node=node
                )
            )
    cpus.sort(key=lambda c: c.id)
    count = nodes_with_cpus + cpuless_nodes
    nodes = []
    for n in range(count):
        dist = [
            10 if m == n else (12 if m // nodes_per_package == n // nodes_per_package else 21)
            for m in range(count)
        ]
        nodes.append(NumaNode(id=n, memory_mib=memory_mib, distances=dist))
    gpus = []
    nics = []
    bus = 0x17
    for n in range(nodes_with_cpus):
        for _ in range(gpus_per_node):
            gpus.append(
                Gpu(
                    name=f"GPU{len(gpus)}",
                    pci=f"{bus // 256:04x}:{bus % 256:02x}:00.0",
                    node=n,
                    vendor="NVIDIA",
                    model=gpu_model,
                )
            )
            bus += 0x10
    bus = 0x18
    for n in range(nodes_with_cpus):
        for _ in range(nics_per_node):
            i = len(nics)
            nics.append(
                Nic(
                    name=f"mlx5_{i}",
                    pci=f"{bus // 256:04x}:{bus % 256:02x}:00.0",
                    node=n,
                    netdev=f"ibp{bus}s0",
                    rdma=f"mlx5_{i}",
                    vendor="Mellanox",
                )
            )
            bus += 0x10
    return Topology(
        arch=arch,
        cpus=cpus,
        nodes=nodes,
        source="synthetic",
        kernel=kernel,
        hugepage_sizes=list(hugepage_sizes),
        gpus=gpus,
        nics=nics,
        cpu_vendor=cpu_vendor,
        cpu_model=cpu_model,
        os=os,
    )


def _hwloc_mask(ids: range) -> str:
    """hwloc's form: 32-bit words, most significant first, zero words left empty."""
    from hostc.cpuset import CpuSet

    words = CpuSet(ids).mask().split(",")
    return ",".join("" if w == "00000000" and i else f"0x{w}" for i, w in enumerate(words))


def hwloc_xml(*, packages: int, numa: int, cores: int, pus: int, memory: int = 1 << 30) -> str:
    """An hwloc v2 export like `lstopo --if synthetic --input "pack:P numa:N core:C pu:T"`.

    PUs are numbered in order (core k holds PUs k*T … k*T+T-1), each NUMA node is
    the memory child of a Group holding its cores, as lstopo writes it.
    """
    total = packages * numa * cores * pus
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
        '<topology version="2.0">',
        f'  <object type="Machine" os_index="0" cpuset="{_hwloc_mask(range(total))}" '
        f'complete_cpuset="{_hwloc_mask(range(total))}" '
        f'allowed_cpuset="{_hwloc_mask(range(total))}">',
    ]
    pu = 0
    core_id = 0
    for p in range(packages):
        per_pkg = numa * cores * pus
        lines.append(
            f'    <object type="Package" os_index="{p}" '
            f'cpuset="{_hwloc_mask(range(p * per_pkg, (p + 1) * per_pkg))}">'
        )
        for n in range(numa):
            node = p * numa + n
            span = range(pu, pu + cores * pus)
            lines.append(f'      <object type="Group" cpuset="{_hwloc_mask(span)}">')
            lines.append(
                f'        <object type="NUMANode" os_index="{node}" '
                f'cpuset="{_hwloc_mask(span)}" local_memory="{memory}"/>'
            )
            for _ in range(cores):
                threads = range(pu, pu + pus)
                lines.append(
                    f'        <object type="Core" os_index="{core_id}" '
                    f'cpuset="{_hwloc_mask(threads)}">'
                )
                for t in threads:
                    mask = _hwloc_mask(range(t, t + 1))
                    lines.append(f'          <object type="PU" os_index="{t}" cpuset="{mask}"/>')
                lines.append("        </object>")
                pu += pus
                core_id += 1
            lines.append("      </object>")
        lines.append("    </object>")
    lines += ["  </object>", "</topology>", ""]
    return "\n".join(lines)


#: The h100 example's machine: 2 sockets x 32 cores x SMT2; node 0 is 0-31,64-95,
#: node 1 is 32-63,96-127; GPU0/1 on node 0, GPU2/3 on node 1; 512 GiB per node.
H100_KW: dict[str, int | str] = {
    "packages": 2,
    "cores_per_node": 32,
    "smt": 2,
    "memory_mib": 524288,
    "gpus_per_node": 2,
    "nics_per_node": 1,
    "cpu_vendor": "intel",
}
