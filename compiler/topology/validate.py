"""Snapshot validation on read: a broken snapshot is an input error, never an exception later.

As strict as the spec: CPU ids within the spec's cap, cores that name a CPU of
their own node, references that resolve, a well-formed distance matrix and
hugepage sizes the kernel has.  Every check is linear in the CPUs, so an
8,192-CPU snapshot validates as fast as it parses.
"""

from __future__ import annotations

import re
from collections import Counter

from hostc.cpuset import MAX_CPU, CpuSet
from hostc.diagnostics import Diagnostic, at, error
from hostc.knowledge.arch import known_hugepage_size
from hostc.topology.model import Topology, valid_driver, valid_os_id

# uname -r: ASCII digits (int() would take Arabic-Indic ones), no spaces or controls.
_KERNEL = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}[\x21-\x7e]{0,100}")
# `unknown` holds plain fact names (smt, memory, …); CPU lists and notes have their own fields.
_FACT = re.compile(r"[a-z][a-z0-9-]{0,40}")
#: ACPI SLIT: 10 is local, 11-254 remote, 255 unreachable (never written by Linux for a node).
_LOCAL, _FARTHEST = 10, 254


def _cpus(topo: Topology, out: list[Diagnostic]) -> None:
    node_ids = {x.id for x in topo.nodes}
    for cid, n in Counter(c.id for c in topo.cpus).items():
        if n > 1:
            out.append(error(at("cpus"), f"CPU {cid} is listed {n} times"))
    by_id = {c.id: c for c in topo.cpus}
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(topo.cpus):
        if not 0 <= c.id <= MAX_CPU:
            out.append(error(at("cpus", i, "id"), f"CPU id {c.id} is outside 0..{MAX_CPU}"))
        if c.node is not None and c.node not in node_ids:
            out.append(
                error(
                    at("cpus", i, "node"),
                    f"CPU {c.id} is on NUMA node {c.node}, which is not in `nodes`",
                )
            )
        if not c.online:
            continue
        if c.node is None:
            out.append(error(at("cpus", i, "node"), f"online CPU {c.id} has no NUMA node"))
        if c.core is not None:
            groups.setdefault(c.core, []).append(i)
    if not any(c.online for c in topo.cpus) and topo.cpus:
        out.append(error(at("cpus"), "no CPU is online"))
    for core, idx in groups.items():
        first = topo.cpus[idx[0]]
        named = by_id.get(core)
        if named is None or not named.online or named.core != core:
            out.append(
                error(
                    at("cpus", idx[0], "core"),
                    f"CPU {first.id} names core {core}, which is no online CPU of that core",
                    hint="a core is named by its lowest online thread",
                )
            )
            continue
        members = [topo.cpus[i] for i in idx]
        if min(c.id for c in members) != core:
            out.append(
                error(
                    at("cpus", idx[0], "core"),
                    f"core {core} is not named by its lowest online thread "
                    f"({min(c.id for c in members)})",
                )
            )
        pk = {c.package for c in members}
        nd = {c.node for c in members}
        if len(pk) > 1 or len(nd) > 1:
            cpus = ",".join(str(c.id) for c in members)
            out.append(
                error(
                    at("cpus", idx[0], "core"),
                    f"core {core} (CPUs {cpus}) spans several packages or NUMA nodes",
                )
            )


def _nodes(topo: Topology, out: list[Diagnostic]) -> None:
    for nid, n in Counter(x.id for x in topo.nodes).items():
        if n > 1:
            out.append(error(at("nodes"), f"NUMA node {nid} is listed {n} times"))
    count = len(topo.nodes)
    for i, nd_ in enumerate(topo.nodes):
        if nd_.id < 0:
            out.append(error(at("nodes", i, "id"), f"negative NUMA node id {nd_.id}"))
        if nd_.memory_mib is not None and nd_.memory_mib < 0:
            out.append(error(at("nodes", i, "memory_mib"), f"node {nd_.id} has negative memory"))
        for size, pages in nd_.hugepages.items():
            if not known_hugepage_size(size):
                out.append(
                    error(
                        at("nodes", i, "hugepages"),
                        f"unknown hugepage size {size!r}",
                        hint="write sizes as the kernel does: 2M, 1G",
                    )
                )
            elif pages < 0:
                out.append(
                    error(at("nodes", i, "hugepages"), f"negative {size} page count {pages}")
                )
        d = nd_.distances
        if not d:
            continue
        where = at("nodes", i, "distances")
        if len(d) != count:
            out.append(error(where, f"node {nd_.id} has {len(d)} distances for {count} nodes"))
            continue
        if d[i] != _LOCAL:
            out.append(error(where, f"node {nd_.id}'s distance to itself is {d[i]}, not 10"))
        bad = [x for j, x in enumerate(d) if j != i and not _LOCAL < x <= _FARTHEST]
        if bad:
            out.append(
                error(
                    where,
                    f"node {nd_.id} has remote distances {bad}; SLIT remote distances "
                    f"are 11..{_FARTHEST}",
                )
            )
    with_d = [n for n in topo.nodes if n.distances]
    if with_d and len(with_d) != count:
        out.append(error(at("nodes"), "some nodes have distances and others none"))


def _devices(topo: Topology, out: list[Diagnostic]) -> None:
    node_ids = {x.id for x in topo.nodes}
    devices: list[tuple[str, list[tuple[str, int | None]]]] = [
        ("gpus", [(g.name, g.node) for g in topo.gpus]),
        ("nics", [(n.name, n.node) for n in topo.nics]),
    ]
    names: set[str] = set()
    for kind, devs in devices:
        for i, (dname, dnode) in enumerate(devs):
            names.add(dname)
            if dnode is not None and dnode not in node_ids:
                out.append(
                    error(
                        at(kind, i, "node"),
                        f"{dname} is on NUMA node {dnode}, which is not in `nodes`",
                    )
                )
        for name, n in Counter(d for d, _ in devs).items():
            if n > 1:
                out.append(error(at(kind), f"device name {name!r} is listed {n} times"))
    for kind, objs in (("gpus", topo.gpus), ("nics", topo.nics)):
        for i, dev in enumerate(objs):
            for field in ("name", "netdev", "rdma", "pci"):
                value = getattr(dev, field, None)
                pattern = _PCI if field == "pci" else _DEVICE
                if value is not None and pattern.fullmatch(value) is None:
                    out.append(
                        error(
                            at(kind, i, field),
                            f"{value[:40]!r} is not a {_WHAT[field == 'pci']}",
                            hint="PCI addresses look like 0000:17:00.0; names like GPU0, "
                            "mlx5_0, ens1f0np0",
                        )
                    )
    for i, g in enumerate(topo.gpus):
        if g.cpus is not None:
            try:
                CpuSet.parse(g.cpus)
            except ValueError as e:
                out.append(error(at("gpus", i, "cpus"), f"not a cpulist: {e}"))
    for i, link in enumerate(topo.links):
        for end in (link.a, link.b):
            if end not in names:
                out.append(error(at("links", i), f"{end} is no GPU or NIC of the snapshot"))


_CONFIG_KEY = re.compile(r"CONFIG_[A-Z0-9_]{1,64}")
#: Device names go into unit files, scripts and NCCL variables: one plain word each
#: (netdevs: at most 15 characters in the kernel; RDMA and nvidia-smi names are short too).
_DEVICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}")
_WHAT = {True: "PCI address", False: "device name"}
_PCI = re.compile(r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")


def _drivers(topo: Topology, out: list[Diagnostic]) -> None:
    for name in ("cpufreq_driver", "cpuidle_driver"):
        driver = getattr(topo, name)
        if driver is not None and not valid_driver(driver):
            out.append(
                error(at(name), f"{driver[:40]!r} is not a driver name (a-z, 0-9, `_.-`) or none")
            )


def validate(topo: Topology) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if not topo.cpus:
        out.append(error(at("cpus"), "the snapshot lists no CPUs"))
    if not topo.nodes:
        out.append(
            error(
                at("nodes"),
                "the snapshot lists no NUMA nodes",
                hint="a machine without NUMA is one node: [[nodes]] id = 0",
            )
        )
    _cpus(topo, out)
    _nodes(topo, out)
    _devices(topo, out)
    for i, s in enumerate(topo.hugepage_sizes):
        if not known_hugepage_size(s):
            out.append(
                error(
                    at("hugepage_sizes", i),
                    f"unknown hugepage size {s!r}",
                    hint="write sizes as the kernel does: 2M, 1G",
                )
            )
    for i, word in enumerate(topo.unknown):
        if _FACT.fullmatch(word) is None:
            out.append(
                error(
                    at("unknown", i),
                    f"{word[:40]!r} is not a fact name (smt, memory, distances, …)",
                    hint="CPU lists go in hidden_cpus/disallowed_cpus, remarks in notes",
                )
            )
    if topo.kernel is not None and _KERNEL.fullmatch(topo.kernel) is None:
        out.append(
            error(
                at("kernel"), f"{topo.kernel[:40]!r} is not a kernel release like 6.8.0-45-generic"
            )
        )
    if topo.os is not None:
        for path, value in [(at("os", "id"), topo.os.id)] + [
            (at("os", "id_like", i), v) for i, v in enumerate(topo.os.id_like)
        ]:
            if not valid_os_id(value):
                out.append(error(path, f"{value[:40]!r} is not an os-release ID (a-z, 0-9, `._-`)"))
    _drivers(topo, out)
    for key, value in topo.kernel_config.items():
        if _CONFIG_KEY.fullmatch(key) is None:
            out.append(error(at("kernel_config"), f"{key[:40]!r} is not a CONFIG_ option name"))
        elif value not in ("y", "m", "n"):
            out.append(error(at("kernel_config", key), f"{value[:20]!r} is not y, m or n"))
    known = CpuSet(c.id for c in topo.cpus if 0 <= c.id <= MAX_CPU)  # others: reported above
    for name, cpus in (
        ("hidden_cpus", topo.hidden_cpus),
        ("disallowed_cpus", topo.disallowed_cpus),
    ):
        if not cpus <= known:
            out.append(error(at(name), f"names CPUs {cpus - known}, which `cpus` lacks"))
    return out
