"""Import hwloc XML (`lstopo --of xml`), both the v2.0 format and hwloc 1.x's v1.

hwloc is the one tool that sees CPUs, NUMA memory and PCI devices together, and
sites keep its XML for every node type, so hostc can compile for a machine it
cannot log in to.  The file is read in three parts: `hwloc_xml` (parsing,
bitmaps, the tree), `hwloc_numa` (CPUs, nodes, distances) and `hwloc_io`
(GPUs and NICs).  What the file cannot tell goes to `unknown` instead of being
guessed (`memory`, `distances`, `devices`, `smt`); CPUs outside the cgroup and
online CPUs absent from the export are the typed `disallowed_cpus` and
`hidden_cpus`; sizes hostc does not know and device localities that span nodes
are `notes`.
"""

from __future__ import annotations

from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError, file_error
from hostc.knowledge.vendor import cpu_vendor, vendor_of_model
from hostc.topology.importers.common import finish
from hostc.topology.importers.hwloc_io import read_devices
from hostc.topology.importers.hwloc_numa import read_cpus, read_nodes
from hostc.topology.importers.hwloc_xml import (
    HINT,
    Bad,
    Element,
    Tree,
    info,
    infos,
    int_attr,
    line_of,
    load,
    mask,
    objects,
    type_of,
)
from hostc.topology.model import Topology


def _cpu_identity(tree: Tree, arch: str) -> tuple[str | None, str | None]:
    """Vendor and model: hwloc puts CPUVendor/CPUModel on packages (v1: sometimes the machine)."""
    holders = [*tree.packages, tree.machine]
    raw_vendor = next((v for el in holders if (v := info(el, "CPUVendor"))), None)
    implementer = next((v for el in holders if (v := info(el, "CPUImplementer"))), None)
    model = next((v.strip() for el in holders if (v := info(el, "CPUModel")) and v.strip()), None)
    vendor = cpu_vendor(raw_vendor) or cpu_vendor(implementer) or vendor_of_model(model)
    if vendor is None and arch.startswith("ppc64"):
        vendor = "ibm"  # POWER exports carry a CPUModel but no vendor
    return vendor, model


def _build(root: Element) -> Topology:
    machine = next(objects(root), None)
    if machine is None:
        raise Bad("the <topology> element holds no objects", hint=HINT)
    tree = Tree(machine)
    node_ids: dict[Element, int] = {}
    seen: set[int] = set()
    for el in tree.numa:
        nid = int_attr(el, "os_index", "NUMANode")
        if nid in seen:
            raise Bad(f"NUMA node {nid} is listed twice", f'type="NUMANode" os_index="{nid}"')
        seen.add(nid)
        node_ids[el] = nid
    cpus = read_cpus(root, tree, node_ids)
    nodes, hugepage_sizes, dropped = read_nodes(root, tree, node_ids)
    gpus, nics, notes = read_devices(tree, cpus)
    unknown: list[str] = []
    if any(n.memory_mib is None for n in nodes):
        unknown.append("memory")
    if len(nodes) > 1 and not any(n.distances for n in nodes):
        unknown.append("distances")
    if not any(type_of(el) in ("Bridge", "PCIDev", "OSDev") for el in tree.order):
        unknown.append("devices")  # the x86 backend and filtered exports see no I/O
    if any(c.online and c.core is None for c in cpus):
        unknown.append("smt")
    if dropped:
        notes.insert(0, f"hugepage-sizes:{','.join(dropped)}")
    allowed = mask(machine, "allowed_cpuset")
    present = CpuSet(c.id for c in cpus if c.online)
    disallowed = present - allowed if allowed is not None else CpuSet()
    online = mask(machine, "online_cpuset")
    # online in the kernel but absent from the export (a cgroup or firmware
    # reservation): recorded as offline, and said so, since the boot CPU may hide there
    hidden = online - present if online is not None else CpuSet()
    x86 = ("Backend", "x86") in infos(machine)
    arch = info(machine, "Architecture") or ("x86_64" if x86 else "unknown")
    vendor, model = _cpu_identity(tree, arch)
    return Topology(
        arch=arch,
        cpu_vendor=vendor,
        cpu_model=model,
        hidden_cpus=hidden,
        disallowed_cpus=disallowed,
        cpus=tuple(cpus),
        nodes=tuple(nodes),
        source="hwloc",
        kernel=info(machine, "OSRelease"),
        hugepage_sizes=tuple(hugepage_sizes),
        gpus=tuple(gpus),
        nics=tuple(nics),
        unknown=tuple(unknown),
        notes=tuple(notes),
    )


def parse(text: str, file: str) -> Topology:
    """Read `lstopo --of xml` output; every problem becomes one HostcError naming `file`."""
    try:
        topo = _build(load(text))
    except Bad as e:
        line = e.line if e.line is not None else line_of(text, e.needle)
        raise HostcError([file_error(file, e.message, line=line, hint=e.hint)]) from None
    return finish(topo, file)
