"""The partition as a picture: `hostc plan --format svg`, `api.render_svg`.

Per package a box, per NUMA node a box inside it: the CPUs (SMT siblings stacked in
one core's column), coloured AND labelled by what the Plan makes them; the node's GPUs
and NICs with the link kind between them; the node's memory as a bar.  Under it the
kernel command line's isolation arguments.  Every element has a `<title>` (hover, screen
readers); every CPU cell or folded run carries `data-cpu`/`data-cpus` and `data-class`,
so a test reads the partition back from the picture.  Bytes are deterministic: integer
coordinates, Plan order, the serializer escapes every name from the input.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import attrs

from hostc.cpuset import CpuSet
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import NodeView, Plan
from hostc.record import Record
from hostc.report import palette as P
from hostc.report.roles import HOUSEKEEPING, ISOLATED, OFFLINE, CpuRole, offline, roles
from hostc.report.svgcpus import CHANGED, CellContext, Core, cpus_area
from hostc.report.svgdoc import dumps, el, fit, root, titled, width_of
from hostc.report.svgparts import DeviceIndex, device_index, devices, memory_bar

ISOLATION_ARGS = ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity")
INNER = P.WIDTH - 2 * P.MARGIN - 4 * P.PAD  # width of a node's content


def render_svg(plan: Plan, changed: CpuSet | None = None) -> str:
    """The SVG document, as text.  `changed`: CPUs a review page outlines in red."""
    body = ET.Element("g")
    y = _header(body, plan)
    y = _legend(body, y, plan, bool(changed))
    by_role = roles(plan)
    ctx = CellContext(tuple(w.name for w in plan.workloads), plan.partition.boot_cpu, changed)
    # indexed once per picture: each node reads its own rows (never the whole Plan again)
    pic = _Picture(by_role, ctx, _cores_by_node(plan), device_index(plan))
    for pkg, nodes in _packages(plan):
        y = _package(body, y, pkg, nodes, pic) + 12
    y = _unplaced(body, y, plan, by_role, ctx)
    y = _cmdline(body, y, plan)
    height = y + P.MARGIN
    svg = root(P.WIDTH, height, _summary(plan))
    el(svg, "title", _summary(plan))
    el(svg, "rect", x=0, y=0, width=P.WIDTH, height=height, fill="#ffffff")
    svg.extend(list(body))
    return dumps(svg)


def _summary(plan: Plan) -> str:
    p = plan.partition
    works = "; ".join(f"{w.name} on CPUs {w.cpus}" for w in plan.workloads)
    return (
        f"CPU partition of {plan.host.name}: {len(p.online)} online CPUs, housekeeping "
        f"{p.housekeeping or 'none'}, isolated {p.isolated or 'none'}"
        + (f"; {works}" if works else "")
    )


def _header(g: ET.Element, plan: Plan) -> int:
    h, p = plan.host, plan.partition
    el(
        g,
        "text",
        f"{h.name} — {h.role}",
        x=P.MARGIN,
        y=P.MARGIN + 16,
        font_size=18,
        font_weight="bold",
        fill=P.INK,
    )
    release = str(h.os) if h.os else None
    facts = " · ".join(
        x for x in (h.arch, h.cpu_vendor, h.kernel and f"kernel {h.kernel}", release) if x
    )
    el(g, "text", fit(facts, INNER, 12), x=P.MARGIN, y=P.MARGIN + 34, font_size=12, fill=P.MUTED)
    counts = (
        f"{len(p.online)} online CPUs: {len(p.housekeeping)} housekeeping, {len(p.isolated)} "
        f"isolated"
        + (f", {len(offline(plan))} offline" if offline(plan) else "")
        + (f" · boot CPU {p.boot_cpu}" if p.boot_cpu is not None else "")
    )
    el(g, "text", counts, x=P.MARGIN, y=P.MARGIN + 52, font_size=12, fill=P.INK)
    return P.MARGIN + 64


def _legend(g: ET.Element, y: int, plan: Plan, changed: bool = False) -> int:
    """Swatch and name for each class and workload present, and the boot CPU's outline."""
    found = {r for r in roles(plan).values()}
    items: list[tuple[CpuRole, str]] = [
        (CpuRole(c), n)
        for c, n in (
            (HOUSEKEEPING, "housekeeping (hk)"),
            (ISOLATED, "isolated, no workload (iso)"),
            (OFFLINE, "offline (off)"),
        )
        if CpuRole(c) in found
    ]
    items += [(CpuRole(ISOLATED, (w.name,)), f"workload {w.name}") for w in plan.workloads]
    lg = el(g, "g", data_legend="cpus")
    x = P.MARGIN
    works = tuple(w.name for w in plan.workloads)
    for role, name in items:
        w = 20 + width_of(name, 11) + 14
        if x + w > P.WIDTH - P.MARGIN:
            x, y = P.MARGIN, y + 20
        fill, _ = P.colours(role, works)
        titled(lg, "rect", name, x=x, y=y, width=14, height=14, rx=2, fill=fill, stroke=P.FRAME)
        el(lg, "text", name, x=x + 20, y=y + 11, font_size=11, fill=P.INK)
        x += w
    outlines = [("boot CPU (outlined, bold)", P.INK)] if plan.partition.boot_cpu is not None else []
    outlines += [("changed in this diff (red outline)", CHANGED)] if changed else []
    for name, stroke in outlines:
        w = 20 + width_of(name, 11) + 14
        if x + w > P.WIDTH - P.MARGIN:
            x, y = P.MARGIN, y + 20
        titled(
            lg,
            "rect",
            name,
            x=x,
            y=y,
            width=14,
            height=14,
            rx=2,
            fill="#ffffff",
            stroke=stroke,
            stroke_width=2,
        )
        el(lg, "text", name, x=x + 20, y=y + 11, font_size=11, fill=P.INK)
        x += w
    return y + 28


def _packages(plan: Plan) -> list[tuple[int | None, list[NodeView]]]:
    """Nodes grouped by package in package order; CPU-less nodes last, package None."""
    of = dict(plan.hardware.packages)
    groups: dict[int | None, list[NodeView]] = {}
    for n in plan.nodes:
        groups.setdefault(of.get(n.id), []).append(n)
    return sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))


def _package(g: ET.Element, y: int, pkg: int | None, nodes: list[NodeView], pic: _Picture) -> int:
    label = f"package {pkg}" if pkg is not None else "no CPUs (memory or device nodes)"
    pg = el(g, "g", data_package="" if pkg is None else pkg)
    frame = _outer_box(pg, label, y)
    top = y
    y += 28
    for node in nodes:
        y = _node(pg, y, node, pic) + 10
    frame.set("height", str(y - top))
    return y


@attrs.frozen(repr=False, eq=False)
class _Picture(Record):
    """What every node's drawing reads of the whole Plan, computed once per picture."""

    by_role: dict[int, CpuRole]
    ctx: CellContext
    cores: dict[int, list[Core]]  # `_cores_by_node`
    index: DeviceIndex


def _cores_by_node(plan: Plan) -> dict[int, list[Core]]:
    """Each node's cores (online, then its offline CPUs), every core placed once by its
    first CPU's node: linear in the CPUs, where a pass over all cores per node was not."""
    node_of = {cpu: n.id for n in plan.nodes for cpu in n.cpus}
    cpus_of = {n.id: n.cpus for n in plan.nodes}
    out: dict[int, list[Core]] = {}
    for c in plan.partition.cores:
        n = node_of.get(min(c)) if c else None
        if n is not None and c <= cpus_of[n]:
            out.setdefault(n, []).append(tuple(c))
    for n, cpus in plan.hardware.offline:
        if n is not None:
            out.setdefault(n, []).extend((cpu,) for cpu in cpus)
    off = offline(plan)
    return {n: sorted(cores, key=lambda c: (min(c) in off, min(c))) for n, cores in out.items()}


def _node(g: ET.Element, y: int, node: NodeView, pic: _Picture) -> int:
    x = P.MARGIN + P.PAD
    w = P.WIDTH - 2 * x
    ng = el(g, "g", data_node=node.id)
    head = f"NUMA node {node.id}"
    frame = titled(
        ng,
        "rect",
        f"{head}: CPUs {node.cpus or 'none'}",
        x=x,
        y=y,
        width=w,
        height=0,
        rx=5,
        fill=P.NODE_BG,
        stroke=P.FRAME,
    )
    detail = (
        f"{len(node.cpus)} CPUs · housekeeping {node.housekeeping or '-'} · "
        f"isolated {node.isolated or '-'}"
    )
    el(ng, "text", head, x=x + P.PAD, y=y + 18, font_size=12, font_weight="bold", fill=P.INK)
    el(ng, "text", fit(detail, w - 120, 11), x=x + 110, y=y + 18, font_size=11, fill=P.MUTED)
    top, y = y, y + 28
    cores = pic.cores.get(node.id, [])
    if cores:
        y += cpus_area(ng, x + P.PAD, y, cores, pic.by_role, pic.ctx) + 4
    used = devices(ng, x + P.PAD, y, w - 2 * P.PAD, node, pic.index)
    y += used + (6 if used else 0)
    y += memory_bar(ng, x + P.PAD, y, w - 2 * P.PAD, node, pic.index)
    frame.set("height", str(y - top))
    return y


def _unplaced(
    g: ET.Element, y: int, plan: Plan, by_role: dict[int, CpuRole], ctx: CellContext
) -> int:
    """Offline CPUs the snapshot puts on no node (Linux does not say for some)."""
    cores = [(cpu,) for n, cpus in plan.hardware.offline if n is None for cpu in cpus]
    if not cores:
        return y
    label = "offline CPUs, NUMA node unknown"
    ug = el(g, "g", data_node="")
    frame = _outer_box(ug, label, y)
    height = 28 + cpus_area(ug, P.MARGIN + P.PAD, y + 28, cores, by_role, ctx) + 6
    frame.set("height", str(height))
    return y + height + 12


def _cmdline(g: ET.Element, y: int, plan: Plan) -> int:
    """The isolation arguments of the kernel command line, wrapped, in monospace."""
    args = [str(a) for a in kernel_args(plan) if a.key in ISOLATION_ARGS]
    cg = el(g, "g", data_cmdline="isolation")
    el(
        cg,
        "text",
        "kernel command line (isolation)",
        x=P.MARGIN,
        y=y + 14,
        font_size=12,
        font_weight="bold",
        fill=P.INK,
    )
    y += 20
    per_line = (P.WIDTH - 2 * P.MARGIN) * 10 // 66
    lines: list[str] = []
    for a in args or ["(no isolation arguments)"]:
        while len(a) > per_line:
            lines.append(a[:per_line])
            a = "  " + a[per_line:]
        lines.append(a)
    for line in lines:
        el(
            cg,
            "text",
            line,
            x=P.MARGIN,
            y=y + 13,
            font_size=11,
            font_family="DejaVu Sans Mono, monospace",
            fill=P.INK,
        )
        y += 16
    return y


def _outer_box(g: ET.Element, label: str, y: int) -> ET.Element:
    """A full-width box with its bold label (a package, or the offline CPUs of no node);
    its height is set once its contents are drawn."""
    frame = titled(
        g,
        "rect",
        label,
        x=P.MARGIN,
        y=y,
        width=P.WIDTH - 2 * P.MARGIN,
        height=0,
        rx=6,
        fill=P.PACKAGE_BG,
        stroke=P.FRAME,
    )
    el(g, "text", label, x=P.MARGIN + P.PAD, y=y + 18, font_size=13, font_weight="bold", fill=P.INK)
    return frame
