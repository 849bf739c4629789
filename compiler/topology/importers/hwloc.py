"""Import hwloc XML (`lstopo --of xml`), both the v2.0 format and hwloc 1.x's v1.

hwloc is the one tool that sees CPUs, NUMA memory and PCI devices together, and
sites keep its XML for every node type, so hostc can compile for a machine it
cannot log in to.  The two formats place NUMA nodes differently (v1: tree
ancestors of the CPUs; v2: memory children beside them), so every rule here is
written against the tree's shape rather than the version number where possible.
What the file cannot tell goes to `unknown` instead of being guessed: the words
`memory`, `distances`, `devices` and `smt` as the other importers use them, plus
`disallowed-cpus:LIST` (present but outside the cgroup), `hidden-cpus:LIST` (online
but absent from the export), `hugepage-sizes:LIST`
(sizes hostc does not know, left out), and `locality:NAME spans nodes A,B` or
`locality:NAME unknown` for devices whose NUMA node hostc will not pick.
"""

from __future__ import annotations

import functools
import math
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Iterator

import attrs

from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import HostcError, file_error, with_file
from hostc.topology.model import Cpu, Gpu, Nic, NumaNode, Topology
from hostc.topology.validate import validate
from hostc.units import format_kib

_HINT = "export the topology with `lstopo --of xml FILE` (hwloc 2.x) on the host"
# hwloc writes 32-bit words as 0x%08x, empty words for 0, and a `0xf...f,` prefix
# for bitmaps that are infinitely set; anything else is a damaged file.
_MASK = re.compile(r"(?:0xf\.\.\.f,?)?(?:0x[0-9a-fA-F]{1,8})?(?:,(?:0x[0-9a-fA-F]{1,8})?)*")
_PCI_TYPE = re.compile(r"([0-9a-fA-F]{4}) \[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_BUSID = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)")
_POSITION = re.compile(r": line \d+, column \d+$")
# Memory that hwloc attaches beside the DDR node and that Linux shows as CPU-less.
_SIDE_MEMORY = frozenset({"MCDRAM", "HBM", "GPUMemory", "NVM", "SPM", "CXL-DRAM"})
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

Element = ET.Element


class _Bad(Exception):
    """A problem in the file; `needle` is text to search for the line number."""

    def __init__(
        self,
        message: str,
        needle: str | None = None,
        hint: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.needle = needle
        self.hint = hint
        self.line = line


def _line_of(text: str, needle: str | None) -> int | None:
    """ElementTree keeps no line numbers, so find the offending text instead."""
    if not needle:
        return None
    at = text.find(needle)
    return None if at < 0 else text.count("\n", 0, at) + 1


def _short(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def _type(el: Element) -> str:
    t = el.get("type", "")
    return "Package" if t == "Socket" else t  # v1 called packages sockets


def _objects(el: Element) -> Iterator[Element]:
    return (c for c in el if c.tag == "object")


def _int(el: Element, attr: str, what: str) -> int:
    value = el.get(attr)
    if value is None:
        raise _Bad(f"{what} has no {attr} attribute")
    if value.isascii() and value.isdigit() and len(value) < 20:
        return int(value)
    raise _Bad(f"{what}: {attr}={_short(value)} is not a number", f'{attr}="{value}"')


def _opt_int(el: Element, attr: str, what: str) -> int | None:
    return None if el.get(attr) is None else _int(el, attr, what)


def _mask(el: Element, attr: str) -> CpuSet | None:
    value = el.get(attr)
    if value is None:
        return None
    bad = _Bad(
        f"{attr}={_short(value)} is not an hwloc bitmap (hex words like 0x000000ff,,0x1)",
        f'{attr}="{value}"',
    )
    # 2048 words is CPU 65535, where CpuSet.parse stops too; beyond is a damaged file.
    if _MASK.fullmatch(value.strip()) is None or value.count(",") >= 2048:
        raise bad
    try:
        return CpuSet.from_mask(value.strip().removeprefix("0xf...f").lstrip(","))
    except (CpuListError, ValueError):
        raise bad from None


def _numbers(els: Iterable[Element], what: str) -> list[int]:
    out: list[int] = []
    for el in els:
        for tok in (el.text or "").split():
            try:
                out.append(int(tok))
            except ValueError:
                raise _Bad(f"{what}: {_short(tok)} is not a number", tok) from None
    return out


def _infos(el: Element) -> list[tuple[str, str]]:
    return [(i.get("name", ""), i.get("value", "")) for i in el if i.tag == "info"]


def _info(el: Element, name: str) -> str | None:
    return next((v for n, v in _infos(el) if n == name), None)


def _load(text: str) -> Element:
    if not text.strip():
        raise _Bad("the hwloc XML file is empty", hint=_HINT)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        position = getattr(e, "position", None)
        detail = _POSITION.sub("", str(e)).removeprefix("not well-formed").strip(" ()")
        raise _Bad(
            f"not well-formed XML ({detail}): the file is cut short or is not XML",
            hint=_HINT,
            line=position[0] if position else None,
        ) from None
    except (UnicodeError, ValueError) as e:
        raise _Bad(f"cannot read the XML: {e}", hint=_HINT) from None
    if root.tag != "topology":
        raise _Bad(f"not hwloc XML: the root element is <{root.tag}>, not <topology>", hint=_HINT)
    version = root.get("version")
    if version is not None and not version.startswith(("1.", "2.")):
        raise _Bad(
            f"hwloc XML version {version} is not supported (hostc reads v1 and v2.0)",
            f'version="{version}"',
            hint="re-export with hwloc 2.x: `lstopo --of xml FILE`",
        )
    return root


class _Tree:
    """The object tree with parent links, which ElementTree lacks."""

    def __init__(self, machine: Element) -> None:
        self.machine = machine
        self.order = list(machine.iter("object"))
        self.parent: dict[Element, Element] = {}
        for el in self.order:
            for child in _objects(el):
                self.parent[child] = el
            for attr in el.attrib:
                if attr.endswith(("cpuset", "nodeset")):
                    _mask(el, attr)  # hwloc itself accepts bad masks, so check them all
        self.numa = [el for el in self.order if _type(el) == "NUMANode"]
        self.packages = [el for el in self.order if _type(el) == "Package"]

    def ancestors(self, el: Element) -> Iterator[Element]:
        while el in self.parent:
            el = self.parent[el]
            yield el

    def nearest(self, el: Element, kind: str) -> Element | None:
        return next((a for a in self.ancestors(el) if _type(a) == kind), None)


def _memory_children(el: Element) -> list[Element]:
    """v2 NUMA nodes attached to `el`, including those behind memory-side caches."""
    out: list[Element] = []
    for child in _objects(el):
        if _type(child) == "NUMANode":
            out.append(child)
        elif _type(child) == "MemCache":
            out.extend(n for n in child.iter("object") if _type(n) == "NUMANode")
    return out


def _home_node(
    tree: _Tree, pu: Element, v1: bool, cache: dict[Element, Element | None]
) -> Element | None:
    """The node Linux lists the PU under.

    v2 gives HBM/MCDRAM/GPU memory the cpuset of the DDR node beside it, so the
    cpuset cannot decide; the DDR node is the first ordinary memory child of the
    PU's closest ancestor that has memory children.
    """
    for anc in tree.ancestors(pu):
        if _type(anc) == "NUMANode":
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
    effs = [_opt_int(k, "forced_efficiency", "cpukind") for k in kinds]
    order = list(range(len(kinds)))
    if all(e is not None for e in effs):
        order.sort(key=lambda i: (effs[i], i))
    out: dict[int, str] = {}
    for rank, i in enumerate(order):
        name = _info(kinds[i], "CoreType") or f"kind{rank}"
        for cpu in _mask(kinds[i], "cpuset") or CpuSet():
            out.setdefault(cpu, name)
    return out


def _pages(el: Element) -> list[tuple[int, int]]:
    return [
        (_int(p, "size", "page_type"), _int(p, "count", "page_type"))
        for p in el
        if p.tag == "page_type"
    ]


def _hugepages(pages: list[tuple[int, int]], base: int) -> dict[str, int]:
    return {format_kib(size // 1024): count for size, count in sorted(pages) if size > base}


def _matrices(root: Element, tree: _Tree) -> Iterator[tuple[int, list[int], list[int]]]:
    """NUMA distance matrices as (preference, node ids, row-major values)."""
    gp = {el.get("gp_index"): _int(el, "os_index", "NUMANode") for el in tree.numa}
    for d in root.iter("distances2"):
        if d.get("type") != "NUMANode":
            continue
        n = _int(d, "nbobjs", "distances2")
        raw = _numbers((e for e in d if e.tag == "indexes"), "distances2 indexes")
        values = _numbers((e for e in d if e.tag == "u64values"), "distances2")
        if len(raw) != n or len(values) != n * n:
            raise _Bad(
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
        kind = _opt_int(d, "kind", "distances2") or 0
        # Prefer what the OS reported as latency (the SLIT) over user-given values.
        yield (0 if kind & 4 else 2) + (0 if kind & 1 else 1), ids, values
    for owner in tree.order:
        for d in (e for e in owner if e.tag == "distances"):
            n = _int(d, "nbobjs", "distances")
            level = [owner]
            for _ in range(_int(d, "relative_depth", "distances")):
                level = [c for x in level for c in _objects(x)]
                if not level:
                    break
            if not any(_type(x) == "NUMANode" for x in level):
                continue
            # v1 orders objects by logical index: the document order of the level.
            nodes = [x for x in owner.iter("object") if x is not owner and _type(x) == "NUMANode"]
            if len(nodes) != n:
                continue
            try:
                base = float(d.get("latency_base", "1"))
                lat = [float(e.get("value", "")) for e in d if e.tag == "latency"]
            except ValueError:
                raise _Bad(
                    "a v1 distance matrix holds a value that is not a number", f'nbobjs="{n}"'
                ) from None
            if len(lat) != n * n or not all(math.isfinite(v * base) for v in lat):
                raise _Bad(
                    f"a v1 distance matrix for {n} nodes has {len(lat)} finite values",
                    f'nbobjs="{n}"',
                )
            ids = [_int(x, "os_index", "NUMANode") for x in nodes]
            yield 0, ids, [round(v * base) for v in lat]


def _distances(root: Element, tree: _Tree, ids: list[int]) -> dict[int, list[int]]:
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


def _busid_key(busid: str) -> tuple[int, ...]:
    m = _BUSID.fullmatch(busid)
    return tuple(int(g, 16) for g in m.groups()) if m else (1 << 64,)


def _osdev(dev: Element, osdev_type: str) -> str | None:
    return next((o.get("name") for o in _objects(dev) if o.get("osdev_type") == osdev_type), None)


def _io_node(tree: _Tree, dev: Element, cpus: list[Cpu]) -> tuple[int | None, list[int]]:
    """The device's NUMA node: the one whose CPUs its locality (first ancestor with a
    cpuset) covers; with several, the caller records the span instead of picking one."""
    for anc in tree.ancestors(dev):
        if anc.get("cpuset") is None:
            continue
        if _type(anc) == "NUMANode":  # v1 hangs I/O under the node itself
            return _int(anc, "os_index", "NUMANode"), []
        loc = _mask(anc, "cpuset") or CpuSet()
        cover = sorted({c.node for c in cpus if c.online and c.node is not None and c.id in loc})
        return (cover[0], []) if len(cover) == 1 else (None, cover)
    return None, []


def _devices(tree: _Tree, cpus: list[Cpu]) -> tuple[list[Gpu], list[Nic], list[str]]:
    gpus: list[tuple[str, Element, str]] = []
    nics: list[tuple[str, Element, str]] = []
    for el in tree.order:
        m = _PCI_TYPE.match(el.get("pci_type", "")) if _type(el) == "PCIDev" else None
        if m is None:
            continue
        cls, vendor = m.group(1).lower(), m.group(2).lower()
        busid = el.get("pci_busid", "")
        if cls.startswith(("03", "12")) and not (cls.startswith("03") and vendor in _BMC_VENDORS):
            gpus.append((busid, el, vendor))
        elif cls.startswith("02") or cls == "0c06":
            nics.append((busid, el, vendor))
    notes: list[str] = []

    def node_of(name: str, el: Element) -> int | None:
        node, span = _io_node(tree, el, cpus)
        if span:
            notes.append(f"locality:{name} spans nodes {','.join(map(str, span))}")
        elif node is None:
            notes.append(f"locality:{name} unknown")
        return node

    out_gpus: list[Gpu] = []
    for i, (busid, el, vendor) in enumerate(sorted(gpus, key=lambda g: _busid_key(g[0]))):
        models = (_info(o, "GPUModel") for o in _objects(el))
        out_gpus.append(
            Gpu(
                name=f"GPU{i}",
                pci=busid or None,
                node=node_of(f"GPU{i}", el),
                vendor=_VENDORS.get(vendor) or _info(el, "PCIVendor"),
                model=next((m for m in models if m), None) or _info(el, "PCIDevice"),
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
            vendor=_VENDORS.get(vendor) or _info(el, "PCIVendor"),
        )
        for n, busid, el, vendor, netdev, rdma in named
    ]
    return out_gpus, out_nics, notes


def _cpus(root: Element, tree: _Tree, node_ids: dict[Element, int]) -> list[Cpu]:
    v1 = root.get("version") is None or root.get("version", "").startswith("1.")
    pkg_ids = {el: i for i, el in enumerate(tree.packages)}
    home_cache: dict[Element, Element | None] = {}
    kinds = _kinds(root)
    core_of: dict[Element, int] = {}
    pu_ids: dict[Element, int] = {}
    seen: set[int] = set()
    for pu in (el for el in tree.order if _type(el) == "PU"):
        cpu = _int(pu, "os_index", "PU")
        if cpu in seen:
            raise _Bad(f"CPU {cpu} is listed twice", f'type="PU" os_index="{cpu}"')
        seen.add(cpu)
        pu_ids[pu] = cpu
        core = tree.nearest(pu, "Core")
        if core is not None:
            core_of[core] = min(core_of.get(core, cpu), cpu)
    if not pu_ids:
        raise _Bad("the topology has no PU objects, so it names no CPUs", hint=_HINT)
    cpus: list[Cpu] = []
    for pu, cpu in pu_ids.items():
        pkg, die, core = (tree.nearest(pu, t) for t in ("Package", "Die", "Core"))
        home = _home_node(tree, pu, v1, home_cache)
        if home is None and node_ids:
            raise _Bad(f"CPU {cpu} is in no NUMA node", f'type="PU" os_index="{cpu}"')
        package = None if pkg is None else _opt_int(pkg, "os_index", "Package")
        cpus.append(
            Cpu(
                id=cpu,
                core=None if core is None else core_of[core],
                package=pkg_ids[pkg] if pkg is not None and package is None else package,
                node=0 if home is None else node_ids[home],
                die=None if die is None else _opt_int(die, "os_index", "Die"),
                kind=kinds.get(cpu),
            )
        )
    # v1 also lists online CPUs that a cgroup hid; both kinds are unusable here.
    absent = CpuSet()
    for attr in ("complete_cpuset", "online_cpuset"):
        absent |= _mask(tree.machine, attr) or CpuSet()
    cpus += [Cpu(id=c, online=False) for c in absent - CpuSet(pu_ids.values())]
    return sorted(cpus, key=lambda c: c.id)


@functools.cache
def _accepted(size: str) -> bool:
    """Whether validate knows the size; an exotic one must not sink the whole import."""
    probe = Topology(arch="", cpus=[Cpu(id=0, node=0)], nodes=[NumaNode(id=0)])
    return not validate(attrs.evolve(probe, hugepage_sizes=[size]))


def _nodes(
    root: Element, tree: _Tree, node_ids: dict[Element, int]
) -> tuple[list[NumaNode], list[str], list[str]]:
    """Nodes sorted by id, the hugepage sizes, and the sizes dropped as unknown."""
    # Without NUMANode objects (hwloc 1.x on a UMA machine) the Machine is node 0.
    owners = {nid: el for el, nid in node_ids.items()} or {0: tree.machine}
    pages = {nid: _pages(el) for nid, el in owners.items()}
    sizes = {size for ps in [*pages.values(), _pages(tree.machine)] for size, _ in ps}
    # The smallest listed size is the base page unless it is already a huge one.
    base = min(sizes) if sizes and min(sizes) <= 65536 else 0
    huge = [format_kib(s // 1024) for s in sorted(sizes) if s > base]
    dropped = [s for s in huge if not _accepted(s)]
    memory = {nid: _opt_int(el, "local_memory", "NUMANode") for nid, el in owners.items()}
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
        nodes.append(NumaNode(id=nid, memory_mib=mib, distances=dist.get(nid, []), hugepages=hp))
    return nodes, [s for s in huge if s not in dropped], dropped


def _build(root: Element) -> Topology:
    machine = next(_objects(root), None)
    if machine is None:
        raise _Bad("the <topology> element holds no objects", hint=_HINT)
    tree = _Tree(machine)
    node_ids: dict[Element, int] = {}
    seen: set[int] = set()
    for el in tree.numa:
        nid = _int(el, "os_index", "NUMANode")
        if nid in seen:
            raise _Bad(f"NUMA node {nid} is listed twice", f'type="NUMANode" os_index="{nid}"')
        seen.add(nid)
        node_ids[el] = nid
    cpus = _cpus(root, tree, node_ids)
    nodes, hugepage_sizes, dropped = _nodes(root, tree, node_ids)
    gpus, nics, notes = _devices(tree, cpus)
    unknown: list[str] = []
    if any(n.memory_mib is None for n in nodes):
        unknown.append("memory")
    if len(nodes) > 1 and not any(n.distances for n in nodes):
        unknown.append("distances")
    if not any(_type(el) in ("Bridge", "PCIDev", "OSDev") for el in tree.order):
        unknown.append("devices")  # the x86 backend and filtered exports see no I/O
    if any(c.online and c.core is None for c in cpus):
        unknown.append("smt")
    if dropped:
        unknown.append(f"hugepage-sizes:{','.join(dropped)}")
    allowed = _mask(machine, "allowed_cpuset")
    present = CpuSet(c.id for c in cpus if c.online)
    if allowed is not None and present - allowed:
        unknown.append(f"disallowed-cpus:{present - allowed}")
    online = _mask(machine, "online_cpuset")
    if online is not None and online - present:
        # online in the kernel but absent from the export (a cgroup or firmware
        # reservation): recorded as offline, and said so, since the boot CPU may hide there
        unknown.append(f"hidden-cpus:{online - present}")
    x86 = ("Backend", "x86") in _infos(machine)
    return Topology(
        arch=_info(machine, "Architecture") or ("x86_64" if x86 else "unknown"),
        cpus=cpus,
        nodes=nodes,
        source="hwloc",
        kernel=_info(machine, "OSRelease"),
        hugepage_sizes=hugepage_sizes,
        gpus=gpus,
        nics=nics,
        unknown=unknown + notes,
    )


def parse(text: str, file: str) -> Topology:
    """Read `lstopo --of xml` output; every problem becomes one HostcError naming `file`."""
    try:
        topo = _build(_load(text))
    except _Bad as e:
        line = e.line if e.line is not None else _line_of(text, e.needle)
        raise HostcError([file_error(file, e.message, line=line, hint=e.hint)]) from None
    problems = validate(topo)
    if problems:
        raise HostcError(with_file(problems, file))
    return topo
