"""hwloc XML, the machine side: CPUs (PUs), NUMA nodes, memory, hugepages, distances.

The two formats place NUMA nodes differently (v1: tree ancestors of the CPUs;
v2: memory children beside them), so the rules here are written against the
tree's shape rather than the version number where possible.  Every walk is
linear in the objects: an 8,192-PU export reads in about the time it parses.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from hostc.cpuset import MAX_CPU, CpuSet
from hostc.knowledge.arch import known_hugepage_size
from hostc.topology.importers.hwloc_xml import (
    HINT,
    Bad,
    Element,
    Tree,
    info,
    int_attr,
    mask,
    numbers,
    objects,
    opt_int,
    type_of,
)
from hostc.topology.model import LogicalCpu, NumaNode
from hostc.units import format_kib

# Memory that hwloc attaches beside the DDR node and that Linux shows as CPU-less.
_SIDE_MEMORY = frozenset({"MCDRAM", "HBM", "GPUMemory", "NVM", "SPM", "CXL-DRAM"})


def _memory_children(el: Element) -> list[Element]:
    """v2 NUMA nodes attached to `el`, including those behind memory-side caches."""
    out: list[Element] = []
    for child in objects(el):
        if type_of(child) == "NUMANode":
            out.append(child)
        elif type_of(child) == "MemCache":
            out.extend(n for n in child.iter("object") if type_of(n) == "NUMANode")
    return out


def _home_node(
    tree: Tree, pu: Element, v1: bool, cache: dict[Element, Element | None]
) -> Element | None:
    """The node Linux lists the PU under.

    v2 gives HBM/MCDRAM/GPU memory the cpuset of the DDR node beside it, so the
    cpuset cannot decide; the DDR node is the first ordinary memory child of the
    PU's closest ancestor that has memory children.
    """
    for anc in tree.ancestors(pu):
        if type_of(anc) == "NUMANode":
            return anc
        if v1:
            continue
        if anc not in cache:
            kids = _memory_children(anc)
            plain = [k for k in kids if k.get("subtype") not in _SIDE_MEMORY]
            cache[anc] = next(iter(plain or kids), None)
        if (home := cache[anc]) is not None:
            return home
    return None


def _kinds(root: Element) -> dict[int, str]:
    """CPU → kind name; one kind (or none) means a homogeneous CPU, so no names."""
    kinds = [k for k in root if k.tag == "cpukind"]
    if len(kinds) < 2:
        return {}
    effs = [opt_int(k, "forced_efficiency", "cpukind") for k in kinds]
    order = list(range(len(kinds)))
    if all(e is not None for e in effs):
        order.sort(key=lambda i: (effs[i], i))
    out: dict[int, str] = {}
    for rank, i in enumerate(order):
        name = info(kinds[i], "CoreType") or f"kind{rank}"
        for cpu in mask(kinds[i], "cpuset") or CpuSet():
            out.setdefault(cpu, name)
    return out


def _pages(el: Element) -> list[tuple[int, int]]:
    return [
        (int_attr(p, "size", "page_type"), int_attr(p, "count", "page_type"))
        for p in el
        if p.tag == "page_type"
    ]


def _hugepages(pages: list[tuple[int, int]], base: int) -> dict[str, int]:
    return {format_kib(size // 1024): count for size, count in sorted(pages) if size > base}


def _matrices(root: Element, tree: Tree) -> Iterator[tuple[int, list[int], list[int]]]:
    """NUMA distance matrices as (preference, node ids, row-major values)."""
    gp = {el.get("gp_index"): int_attr(el, "os_index", "NUMANode") for el in tree.numa}
    for d in root.iter("distances2"):
        if d.get("type") != "NUMANode":
            continue
        n = int_attr(d, "nbobjs", "distances2")
        raw = numbers((e for e in d if e.tag == "indexes"), "distances2 indexes")
        values = numbers((e for e in d if e.tag == "u64values"), "distances2")
        if len(raw) != n or len(values) != n * n:
            raise Bad(
                f"a NUMA distance matrix for {n} nodes has {len(raw)} indexes and "
                f"{len(values)} values",
                f'nbobjs="{n}"',
            )
        if d.get("indexing") == "gp":
            if any(str(i) not in gp for i in raw):
                continue
            ids = [gp[str(i)] for i in raw]
        else:
            ids = raw
        kind = opt_int(d, "kind", "distances2") or 0
        # Prefer what the OS reported as latency (the SLIT) over user-given values.
        yield (0 if kind & 4 else 2) + (0 if kind & 1 else 1), ids, values
    for owner in tree.order:
        for d in (e for e in owner if e.tag == "distances"):
            n = int_attr(d, "nbobjs", "distances")
            level = [owner]
            for _ in range(int_attr(d, "relative_depth", "distances")):
                level = [c for x in level for c in objects(x)]
                if not level:
                    break
            if not any(type_of(x) == "NUMANode" for x in level):
                continue
            # v1 orders objects by logical index: the document order of the level.
            nodes = [x for x in owner.iter("object") if x is not owner and type_of(x) == "NUMANode"]
            if len(nodes) != n:
                continue
            try:
                base = float(d.get("latency_base", "1"))
                lat = [float(e.get("value", "")) for e in d if e.tag == "latency"]
            except ValueError:
                raise Bad(
                    "a v1 distance matrix holds a value that is not a number", f'nbobjs="{n}"'
                ) from None
            if len(lat) != n * n or not all(math.isfinite(v * base) for v in lat):
                raise Bad(
                    f"a v1 distance matrix for {n} nodes has {len(lat)} finite values",
                    f'nbobjs="{n}"',
                )
            ids = [int_attr(x, "os_index", "NUMANode") for x in nodes]
            yield 0, ids, [round(v * base) for v in lat]


def _distances(root: Element, tree: Tree, ids: list[int]) -> dict[int, list[int]]:
    want = set(ids)
    best: tuple[int, list[int], list[int]] | None = None
    for m in _matrices(root, tree):
        if set(m[1]) == want and len(m[1]) == len(want) and (best is None or m[0] < best[0]):
            best = m
    if best is None or len(ids) < 2:
        return {}
    pos = {node: i for i, node in enumerate(best[1])}
    n = len(best[1])
    return {a: [best[2][pos[a] * n + pos[b]] for b in ids] for a in ids}


def read_cpus(root: Element, tree: Tree, node_ids: dict[Element, int]) -> list[LogicalCpu]:
    v1 = root.get("version") is None or root.get("version", "").startswith("1.")
    pkg_ids = {el: i for i, el in enumerate(tree.packages)}
    home_cache: dict[Element, Element | None] = {}
    kinds = _kinds(root)
    core_of: dict[Element, int] = {}
    pu_ids: dict[Element, int] = {}
    seen: set[int] = set()
    for pu in (el for el in tree.order if type_of(el) == "PU"):
        cpu = int_attr(pu, "os_index", "PU")
        if cpu > MAX_CPU:
            raise Bad(f"CPU {cpu} is beyond CPU {MAX_CPU}", f'os_index="{cpu}"')
        if cpu in seen:
            raise Bad(f"CPU {cpu} is listed twice", f'type="PU" os_index="{cpu}"')
        seen.add(cpu)
        pu_ids[pu] = cpu
        core = tree.nearest(pu, "Core")
        if core is not None:
            core_of[core] = min(core_of.get(core, cpu), cpu)
    if not pu_ids:
        raise Bad("the topology has no PU objects, so it names no CPUs", hint=HINT)
    cpus: list[LogicalCpu] = []
    for pu, cpu in pu_ids.items():
        pkg, die, core = (tree.nearest(pu, t) for t in ("Package", "Die", "Core"))
        home = _home_node(tree, pu, v1, home_cache)
        if home is None and node_ids:
            raise Bad(f"CPU {cpu} is in no NUMA node", f'type="PU" os_index="{cpu}"')
        package = None if pkg is None else opt_int(pkg, "os_index", "Package")
        cpus.append(
            LogicalCpu(
                id=cpu,
                core=None if core is None else core_of[core],
                package=pkg_ids[pkg] if pkg is not None and package is None else package,
                node=0 if home is None else node_ids[home],
                die=None if die is None else opt_int(die, "os_index", "Die"),
                kind=kinds.get(cpu),
            )
        )
    # v1 also lists online CPUs that a cgroup hid; both kinds are unusable here.
    absent = CpuSet()
    for attr in ("complete_cpuset", "online_cpuset"):
        absent |= mask(tree.machine, attr) or CpuSet()
    cpus += [LogicalCpu(id=c, online=False) for c in absent - CpuSet(pu_ids.values())]
    return sorted(cpus, key=lambda c: c.id)


def read_nodes(
    root: Element, tree: Tree, node_ids: dict[Element, int]
) -> tuple[list[NumaNode], list[str], list[str]]:
    """Nodes sorted by id, the hugepage sizes, and the sizes dropped as unknown."""
    # Without NUMANode objects (hwloc 1.x on a UMA machine) the Machine is node 0.
    owners = {nid: el for el, nid in node_ids.items()} or {0: tree.machine}
    pages = {nid: _pages(el) for nid, el in owners.items()}
    sizes = {size for ps in [*pages.values(), _pages(tree.machine)] for size, _ in ps}
    # The smallest listed size is the base page unless it is already a huge one.
    base = min(sizes) if sizes and min(sizes) <= 65536 else 0
    huge = [format_kib(s // 1024) for s in sorted(sizes) if s > base]
    # an exotic size must not sink the whole import: it is left out, and said so
    dropped = [s for s in huge if not known_hugepage_size(s)]
    memory = {nid: opt_int(el, "local_memory", "NUMANode") for nid, el in owners.items()}
    # hwloc writes local_memory only when non-zero, so once any node has it, the
    # others have none (memory-less nodes with CPUs), rather than unknown memory.
    known = any(m is not None for m in memory.values())
    ids = sorted(owners)
    dist = _distances(root, tree, ids)
    nodes = []
    for nid in ids:
        mem = memory[nid]
        hp = {k: v for k, v in _hugepages(pages[nid], base).items() if k not in dropped}
        mib = mem // 1048576 if mem is not None else (0 if known else None)
        nodes.append(
            NumaNode(id=nid, memory_mib=mib, distances=tuple(dist.get(nid, ())), hugepages=hp)
        )
    return nodes, [s for s in huge if s not in dropped], dropped
