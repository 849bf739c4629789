"""A node's devices (GPUs, NICs and the link kind between them) and its memory bar."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import attrs

from hostc.plan.model import DeviceLink, NodeView, Plan
from hostc.record import Record
from hostc.report import palette as P
from hostc.report.svgdoc import el, fit, titled
from hostc.units import format_kib

BOX_W, BOX_H, SLOT = 84, 22, 96
#: link kinds from closest to farthest, as nvidia-smi orders them
CLOSE = ("PIX", "PXB", "PHB", "NODE")


@attrs.frozen(repr=False, eq=False)
class DeviceIndex(Record):
    """What drawing every node's devices and memory needs of the whole Plan, indexed once
    per picture (`device_index`): each node then reads only its own rows.  A scan of all
    links per GPU and per NIC was cubic in the devices; so was a cache keyed on the Plan,
    which hashed the whole Plan (every link) once per node."""

    by_gpu: dict[str, list[DeviceLink]]
    by_nic: dict[str, list[DeviceLink]]
    kind: dict[tuple[str, str], str]  # (gpu, nic) → the first link's kind
    #: GPU → (the workload(s) it serves, the first one's colour), as the CPU cells show
    users: dict[str, tuple[str, str]]
    #: node → its kubelet reservedMemory in MiB, in the Plan's order (static memory only)
    reserved: dict[int, list[int]]


def device_index(plan: Plan) -> DeviceIndex:
    by_gpu: dict[str, list[DeviceLink]] = {}
    by_nic: dict[str, list[DeviceLink]] = {}
    kind: dict[tuple[str, str], str] = {}
    for lk in plan.hardware.links:
        by_gpu.setdefault(lk.gpu, []).append(lk)
        by_nic.setdefault(lk.nic, []).append(lk)
        kind.setdefault((lk.gpu, lk.nic), lk.kind)
    reserved: dict[int, list[int]] = {}
    kube = plan.kubelet
    if kube is not None and kube.memory_manager_static:
        for r in kube.reserved_memory:
            reserved.setdefault(r.node, []).append(r.memory.bytes >> 20)
    return DeviceIndex(by_gpu, by_nic, kind, _users(plan), reserved)


def _columns(node: NodeView, index: DeviceIndex) -> list[tuple[str | None, list[str]]]:
    """One column per GPU with the node's NICs it reaches closest under it; NICs no GPU
    of this node reaches by PIX..NODE get columns of their own."""
    cols: list[tuple[str | None, list[str]]] = [(gpu, []) for gpu in node.gpus]
    first: dict[str, int] = {}  # a GPU's first column
    for i, gpu in enumerate(node.gpus):
        first.setdefault(gpu, i)
    placed: set[str] = set()
    for nic in node.nics:
        best = [lk for lk in index.by_nic.get(nic, ()) if lk.gpu in first and lk.kind in CLOSE]
        if best:
            best.sort(key=lambda lk: (CLOSE.index(lk.kind), first[lk.gpu]))
            cols[first[best[0].gpu]][1].append(nic)
            placed.add(nic)
    cols += [(None, [nic]) for nic in node.nics if nic not in placed]
    return cols


def devices(g: ET.Element, x: int, y: int, width: int, node: NodeView, index: DeviceIndex) -> int:
    """GPUs in a row, each NIC under the GPU it is closest to with the link kind on the
    line between them; the height used (0 without devices)."""
    if not node.gpus and not node.nics:
        return 0
    cols = _columns(node, index)
    users = index.users
    pill = 16 if any(gpu in users for gpu, _ in cols) else 0  # the workload's name above
    step = pill + (86 if any(g and n for g, n in cols) else 30)  # NICs under linked GPUs
    x0 = x
    cx, row = x0, 0
    for gpu, nics in cols:
        span = max(1, len(nics)) * SLOT
        if cx + span > x0 + width and cx > x0:
            cx, row = x0, row + 1
        top = y + row * step + pill
        if gpu is not None:
            far = [f"{lk.nic} {lk.kind}" for lk in index.by_gpu.get(gpu, ())]
            tip = f"GPU {gpu} on node {node.id}" + (" · links: " + ", ".join(far) if far else "")
            gx = cx + (span - BOX_W) // 2
            if gpu in users:
                _pill(g, gx, top - pill, gpu, *users[gpu])
            _box(g, gx, top, gpu, P.GPU_FILL, tip, data_gpu=gpu)
        for k, nic in enumerate(nics):
            nx = cx + k * SLOT + (SLOT - BOX_W) // 2
            ny = top + 56 if gpu is not None else top
            _box(g, nx, ny, nic, P.NIC_FILL, f"NIC {nic} on node {node.id}", data_nic=nic)
            kind = None if gpu is None else index.kind.get((gpu, nic))
            if gpu is not None and kind is not None:
                _link(g, cx + span // 2, top + BOX_H, nx + BOX_W // 2, ny, gpu, nic, kind)
        cx += span
    return (row + 1) * step


def _users(plan: Plan) -> dict[str, tuple[str, str]]:
    """GPU → (the workload(s) it serves, the first one's colour), as the CPU cells show."""
    names: dict[str, list[str]] = {}
    colour: dict[str, str] = {}
    for i, w in enumerate(plan.workloads):
        for gpu in w.gpus:
            names.setdefault(gpu, []).append(w.name)
            colour.setdefault(gpu, P.WORKLOAD_COLOURS[i % len(P.WORKLOAD_COLOURS)])
    return {gpu: ("+".join(n), colour[gpu]) for gpu, n in names.items()}


def _pill(g: ET.Element, x: int, y: int, gpu: str, names: str, fill: str) -> None:
    """The workload a GPU serves, named in its colour just above the GPU."""
    pg = el(g, "g", data_gpu_workload=names)
    titled(pg, "rect", f"{gpu} serves {names}", x=x, y=y, width=BOX_W, height=14, rx=3, fill=fill)
    el(
        pg,
        "text",
        fit(names, BOX_W - 6, 10),
        x=x + BOX_W // 2,
        y=y + 11,
        font_size=10,
        text_anchor="middle",
        fill="#ffffff",
    )


def _box(g: ET.Element, x: int, y: int, name: str, fill: str, tip: str, **data: str) -> None:
    b = el(g, "g", **data)
    titled(b, "rect", tip, x=x, y=y, width=BOX_W, height=BOX_H, rx=4, fill=fill)
    el(
        b,
        "text",
        fit(name, BOX_W - 6, 11),
        x=x + BOX_W // 2,
        y=y + 15,
        font_size=11,
        text_anchor="middle",
        fill="#ffffff",
    )


def _link(g: ET.Element, x1: int, y1: int, x2: int, y2: int, gpu: str, nic: str, kind: str) -> None:
    lg = el(g, "g", data_link=f"{gpu}-{nic}", data_kind=kind)
    titled(
        lg,
        "line",
        f"{gpu} ↔ {nic}: {kind}",
        x1=x1,
        y1=y1,
        x2=x2,
        y2=y2,
        stroke=P.INK,
        stroke_width=2 if kind in ("PIX", "PXB") else 1,
    )
    mx, my = (x1 + x2) // 2, (y1 + y2) // 2
    el(lg, "rect", x=mx - 17, y=my - 8, width=34, height=14, rx=3, fill="#ffffff", stroke=P.FRAME)
    el(lg, "text", kind, x=mx, y=my + 3, font_size=10, text_anchor="middle", fill=P.INK)


def _gib(mib: int) -> str:
    """Fixed formatting: whole GiB from 10 GiB up, one decimal below, MiB under 1 GiB."""
    if mib >= 10240:
        return f"{(mib + 512) // 1024} GiB"
    if mib >= 1024:
        return f"{mib * 10 // 1024 // 10}.{mib * 10 // 1024 % 10} GiB"
    return f"{mib} MiB"


def memory_parts(node: NodeView, index: DeviceIndex) -> list[tuple[str, int, str]]:
    """(label, MiB, fill) for each part of the node's memory: pools, reserved, the rest."""
    parts = [
        (f"hugepages {count}×{format_kib(size)}", size * count // 1024, P.HUGEPAGE_FILLS[i % 3])
        for i, (size, count) in enumerate(node.hugepages)
    ]
    parts += [
        ("kubelet reservedMemory", mib, P.RESERVED_FILL) for mib in index.reserved.get(node.id, ())
    ]
    used = sum(p[1] for p in parts)
    if node.memory_mib is not None:
        parts.append(("rest", max(0, node.memory_mib - used), P.REST_FILL))
    return parts


def memory_bar(
    g: ET.Element, x: int, y: int, width: int, node: NodeView, index: DeviceIndex
) -> int:
    """The node's memory as one bar split into its parts, a text line under it."""
    parts = memory_parts(node, index)
    total = node.memory_mib
    if total is None or total <= 0:
        el(g, "text", "memory: not in the snapshot", x=x, y=y + 12, font_size=11, fill=P.MUTED)
        return 20
    cx = x
    for i, (label, mib, fill) in enumerate(parts):
        w = (width * mib + total // 2) // total if i < len(parts) - 1 else x + width - cx
        w = max(w, 2) if mib > 0 else 0
        titled(
            g,
            "rect",
            f"node {node.id} {label}: {_gib(mib)}",
            x=cx,
            y=y,
            width=w,
            height=14,
            fill=fill,
            data_memory=label,
            data_mib=mib,
        )
        cx += w
    el(g, "rect", x=x, y=y, width=width, height=14, fill="none", stroke=P.FRAME)
    text = f"memory {_gib(total)}: " + " · ".join(f"{lbl} {_gib(m)}" for lbl, m, _ in parts)
    el(g, "text", fit(text, width, 11), x=x, y=y + 28, font_size=11, fill=P.INK)
    return 36
