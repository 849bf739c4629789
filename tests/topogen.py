"""Synthetic machines with Linux-style CPU numbering, for examples and property tests.

Linux numbers the first thread of every core first (socket by socket), then
the second threads: on 2 sockets × 32 cores × SMT2, node 0 is 0-31,64-95.
"""

from __future__ import annotations

from hostc.topology.model import Cpu, Gpu, Nic, NumaNode, OsRelease, Topology


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
                cpus.append(Cpu(id=cid, online=False))
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
                Cpu(id=cid, online=True, core=first, package=node // nodes_per_package, node=node)
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
                    pci=f"0000:{bus:02x}:00.0",
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
                    pci=f"0000:{bus:02x}:00.0",
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
