"""Import `nvidia-smi topo -m` and merge it onto a CPU-side snapshot.

nvidia-smi is the only common tool that says which NUMA node and CPUs each GPU
is close to and which NIC shares its PCIe switch, which is what GPU-aware CPU
isolation and NIC selection need.  It says little about the CPUs themselves, so
the normal path is `merge` onto an lscpu/numactl/hwloc snapshot; standing alone
it yields only the CPUs some GPU names, and says so in `unknown`.
"""

from __future__ import annotations

import re

import attrs

from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import Diagnostic, HostcError, at, error, file_error, with_file
from hostc.record import Record
from hostc.topology.importers._text import fail, text_lines
from hostc.topology.importers.common import finish
from hostc.topology.model import Gpu, Link, LogicalCpu, Nic, NumaNode, Topology

# Column titles with spaces; with TABs expanded they can only be found by name.
_ATTRS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_TITLE = re.compile("|".join(re.escape(a) for a in _ATTRS) + r"|\S+")
_GPU = re.compile(r"^GPU[0-9]+$")
_NIC = re.compile(r"^NIC[0-9]+$")
_KIND = re.compile(r"^[A-Z]+[0-9]*$")  # NV12, PIX, PXB, PHB, NODE, SYS, SOC, …
_LEGEND_NIC = re.compile(r"^(NIC[0-9]+):\s*(\S+)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NEAR = frozenset({"PIX", "PXB", "PHB", "NODE"})  # paths that never cross NUMA nodes
#: The most devices (GPUs and NICs) one matrix may name: the largest hosts have 8-16
#: GPUs and as many NICs; the matrix is quadratic in them (a 2,000-GPU one took 10-40 s
#: and wrote a snapshot past SNAPSHOT_LIMIT), so it is refused from its header.
MAX_DEVICES = 256


@attrs.frozen(repr=False, eq=False)
class SmiTopo(Record):
    """What `nvidia-smi topo -m` says, before it is placed on a machine."""

    gpus: tuple[Gpu, ...]
    nics: tuple[Nic, ...]
    links: tuple[Link, ...]
    file: str = "<nvidia-smi>"


def _affinity(cell: str, what: str, file: str, no: int) -> CpuSet | None:
    if cell == "N/A":
        return None
    try:
        return CpuSet.parse(cell)
    except CpuListError as e:
        raise fail(file, f"{what}: CPU Affinity {cell!r} is not a cpulist ({e})", line=no) from None


def _numa(cell: str, what: str, file: str, no: int) -> int | None:
    """A GPU local to several nodes (a list such as `0-1`) has no single home: None."""
    if cell == "N/A":
        return None
    try:
        nodes = CpuSet.parse(cell)
    except CpuListError:
        raise fail(
            file, f"{what}: NUMA Affinity {cell!r} is neither a node id nor N/A", line=no
        ) from None
    return nodes.min() if len(nodes) == 1 else None


def _legend(lines: list[str], start: int, file: str) -> dict[str, str]:
    """`NIC Legend:` maps NICn to the RDMA device; the plain `Legend:` is prose."""
    out: dict[str, str] = {}
    in_nics = False
    for no, raw in enumerate(lines[start:], start + 1):
        line = raw.strip()
        if line == "NIC Legend:":
            in_nics = True
        elif in_nics and line:
            m = _LEGEND_NIC.match(line)
            if m is None:
                raise fail(file, f"NIC Legend line {line[:60]!r} is not `NICn: device`", line=no)
            out[m.group(1)] = m.group(2)
    return out


def _header(lines: list[str], file: str) -> tuple[int, list[str], list[str]]:
    """(index of the header line, device columns, attribute columns such as CPU Affinity)."""
    start = next(i for i, line in enumerate(lines) if line.strip())
    titles = [m.group() for m in _TITLE.finditer(lines[start])]
    devices: list[str] = []
    for t in titles:
        if t in _ATTRS:
            break
        devices.append(t)
    attrs_ = titles[len(devices) :]
    if len(devices) > MAX_DEVICES:
        raise fail(
            file,
            f"the matrix has {len(devices)} device columns, more than any host hostc "
            f"describes ({MAX_DEVICES}); its {len(devices) ** 2} cells are not read",
            line=start + 1,
        )
    if not any(_GPU.match(d) for d in devices):
        raise fail(
            file,
            "the first line names no GPU0… columns; is this `nvidia-smi topo -m` output?",
        )
    if "CPU Affinity" not in attrs_:
        raise fail(file, "the header has no `CPU Affinity` column", line=start + 1)
    if len(set(titles)) != len(titles):
        raise fail(file, "the header names a column twice", line=start + 1)
    return start, devices, attrs_


def _rows(
    lines: list[str], start: int, devices: list[str], attrs_: list[str], file: str
) -> tuple[dict[str, tuple[int, list[str]]], int]:
    """Each device's (line number, cells), and the index where the matrix ends."""
    rows: dict[str, tuple[int, list[str]]] = {}
    end = len(lines)
    for no, raw in enumerate(lines[start + 1 :], start + 2):
        if not raw.strip() or raw.strip() == "Legend:":
            end = no - 1
            break
        cells = raw.split()
        label = cells[0]
        if label not in devices:
            raise fail(file, f"row {label!r} is not a device of the header", line=no)
        if label in rows:
            raise fail(file, f"device {label} has two rows", line=no)
        is_gpu = _GPU.match(label) is not None
        want = len(devices) + (len(attrs_) if is_gpu else 0)
        if len(cells) - 1 < want or len(cells) - 1 > len(devices) + len(attrs_):
            raise fail(
                file,
                f"row {label} has {len(cells) - 1} cells, expected {want}; "
                "the table is cut or misaligned",
                line=no,
            )
        rows[label] = (no, cells[1:])
    missing = [d for d in devices if d not in rows]
    if missing:
        raise fail(
            file,
            f"no matrix row for {', '.join(missing)}; the table is cut",
            line=min(end + 1, len(lines)),
        )
    return rows, end


def parse(text: str, file: str) -> SmiTopo:
    """Parse the matrix, either TAB-separated (raw) or space-aligned (pasted)."""
    lines = text_lines(
        _ANSI.sub("", text), file, "nvidia-smi", "capture it with `nvidia-smi topo -m`"
    )
    start, devices, attrs_ = _header(lines, file)
    rows, end = _rows(lines, start, devices, attrs_, file)
    legend = _legend(lines, end, file)
    stray = sorted(set(legend) - set(devices))
    if stray:
        raise fail(file, f"NIC Legend names {', '.join(stray)}, which the table lacks")
    gpus: list[Gpu] = []
    nics: list[Nic] = []
    links: list[Link] = []
    for a in devices:
        no, cells = rows[a]
        for b, kind in zip(devices, cells, strict=False):
            if (kind == "X") != (a == b) or not _KIND.match(kind):
                raise fail(file, f"{a}/{b} cell {kind!r} is not a link type", line=no)
            if a != b:
                links.append(Link(a=a, b=b, kind=kind))
        if _GPU.match(a):
            extra = dict(zip(attrs_, cells[len(devices) :], strict=True))
            cpus = _affinity(extra["CPU Affinity"], a, file, no)
            node = _numa(extra.get("NUMA Affinity", "N/A"), a, file, no)
            gpus.append(
                Gpu(
                    name=a, node=node, vendor="NVIDIA", cpus=str(cpus) if cpus is not None else None
                )
            )
        elif _NIC.match(a):
            nics.append(Nic(name=a, rdma=legend.get(a)))
        else:  # old layout: the RDMA device itself is the column title
            nics.append(Nic(name=a, rdma=a))
    return SmiTopo(tuple(gpus), tuple(nics), tuple(links), file)


def _only_node(cpus: str | None, nodes: dict[int, CpuSet]) -> int | None:
    """The one node whose CPUs hold the whole affinity, if exactly one does."""
    if cpus is None:
        return None
    want = CpuSet.parse(cpus)
    hits = [n for n, have in nodes.items() if want and want <= have]
    return hits[0] if len(hits) == 1 else None


def _nic_node(name: str, smi: SmiTopo, gpu_node: dict[str, int | None]) -> int | None:
    """A NIC behind the same host bridge or NUMA node as a placed GPU shares its node."""
    near = {gpu_node.get(link.b) for link in smi.links if link.a == name and link.kind in _NEAR}
    near.discard(None)
    return near.pop() if len(near) == 1 else None


def _standalone(smi: SmiTopo) -> Topology:
    """Only the CPUs some GPU names are known; say so rather than invent the rest."""
    if all(g.cpus is None for g in smi.gpus):
        raise HostcError(
            [
                file_error(
                    smi.file,
                    "every GPU's CPU Affinity is N/A, so nvidia-smi alone cannot tell the CPUs",
                    hint="import the CPUs first (`hostc import lscpu FILE -o SNAPSHOT`), then "
                    "`hostc import nvidia-smi FILE --base SNAPSHOT`",
                )
            ]
        )
    owner: dict[int, tuple[int | None, str]] = {}
    unknown = ["smt", "packages", "memory", "distances", "cpus-outside-gpu-affinity"]
    for g in smi.gpus:
        if g.cpus is None:
            continue
        for c in CpuSet.parse(g.cpus):
            prev = owner.get(c)
            if prev is not None and g.node is not None and prev[0] not in (None, g.node):
                raise HostcError(
                    [
                        file_error(
                            smi.file,
                            f"CPU {c} is in the affinity of {prev[1]} (node {prev[0]}) and "
                            f"{g.name} (node {g.node}); nvidia-smi alone cannot place it",
                            hint="pass a CPU-side snapshot with --base",
                        )
                    ]
                )
            if prev is None or prev[0] is None:
                owner[c] = (g.node, g.name)
    known = sorted({n for n, _ in owner.values() if n is not None})
    if not known or any(n is None for n, _ in owner.values()):
        unknown.append("numa")  # CPUs with no NUMA Affinity go to the lowest node
    fallback = known[0] if known else 0
    cpus = [
        LogicalCpu(id=c, node=n if n is not None else fallback)
        for c, (n, _) in sorted(owner.items())
    ]
    node_ids = sorted({c.node for c in cpus if c.node is not None})
    node_cpus = {n: CpuSet(c.id for c in cpus if c.node == n) for n in node_ids}
    gpus = [
        g if g.node is not None else attrs.evolve(g, node=_only_node(g.cpus, node_cpus))
        for g in smi.gpus
    ]
    gpu_node = {g.name: g.node for g in gpus}
    nics = [attrs.evolve(n, node=_nic_node(n.name, smi, gpu_node)) for n in smi.nics]
    return Topology(
        arch="unknown",
        cpus=tuple(cpus),
        nodes=tuple(NumaNode(id=n) for n in node_ids),
        source="nvidia-smi",
        gpus=tuple(gpus),
        nics=tuple(nics),
        links=smi.links,
        unknown=tuple(unknown),
    )


def _merged_gpus(base: Topology, smi: SmiTopo) -> list[Gpu]:
    node_ids = set(base.node_ids())
    everything = CpuSet(c.id for c in base.cpus)
    node_cpus = {n: CpuSet(c.id for c in base.cpus if c.node == n) for n in node_ids}
    problems: list[Diagnostic] = []
    placed: dict[str, Gpu] = {}
    for i, g in enumerate(smi.gpus):
        if g.node is not None and g.node not in node_ids:
            problems.append(
                error(
                    at("gpus", i, "node"),
                    f"nvidia-smi puts {g.name} on NUMA node "
                    f"{g.node}, which the base snapshot lacks",
                    hint="are both captures from the same machine?",
                )
            )
        if g.cpus is not None and not CpuSet.parse(g.cpus) <= everything:
            problems.append(
                error(
                    at("gpus", i, "cpus"),
                    f"{g.name}'s CPU affinity {g.cpus} names CPUs "
                    f"the base snapshot lacks (it has {everything})",
                    hint="are both captures from the same machine?",
                )
            )
        node = g.node if g.node is not None else _only_node(g.cpus, node_cpus)
        placed[g.name] = attrs.evolve(g, node=node)
    if problems:
        raise HostcError(with_file(problems, smi.file))
    out: list[Gpu] = []
    for b in base.gpus:  # same name: keep what base knows that nvidia-smi does not (pci, model)
        s = placed.pop(b.name, None)
        out.append(
            b
            if s is None
            else attrs.evolve(
                b,
                node=s.node if s.node is not None else b.node,
                cpus=s.cpus or b.cpus,
                vendor=b.vendor or s.vendor,
            )
        )
    return out + list(placed.values())


def merge(base: Topology | None, smi: SmiTopo) -> Topology:
    """Place nvidia-smi's GPUs, NICs and links on `base` (or on what smi alone implies)."""
    if base is None:
        return finish(_standalone(smi), smi.file)
    gpus = _merged_gpus(base, smi)
    gpu_node = {g.name: g.node for g in gpus}
    by_rdma = {(n.rdma or n.name): n for n in base.nics}
    rename: dict[str, str] = {}
    nics = list(base.nics)
    for n in smi.nics:
        inferred = _nic_node(n.name, smi, gpu_node)
        match = by_rdma.get(n.rdma) if n.rdma is not None else None
        if match is not None:  # base knows pci and netdev; links must name the base device
            rename[n.name] = match.name
            if match.node is None and inferred is not None:
                nics[nics.index(match)] = attrs.evolve(match, node=inferred)
        else:
            nics.append(attrs.evolve(n, node=inferred))
    links = tuple(Link(rename.get(k.a, k.a), rename.get(k.b, k.b), k.kind) for k in smi.links)
    unknown = tuple(u for u in base.unknown if u != "devices")
    topo = attrs.evolve(
        base,
        gpus=tuple(gpus),
        nics=tuple(nics),
        links=links,
        unknown=unknown,
        source=f"{base.source or 'snapshot'}+nvidia-smi",
    )
    return finish(topo, smi.file)
