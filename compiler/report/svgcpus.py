"""The CPU area of one NUMA node: a cell per CPU with its SMT siblings stacked, or,
past FOLD_CORES cores, one block per run of like CPUs that carries its cpulist."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from hostc.cpuset import CpuSet
from hostc.report import palette as P
from hostc.report.roles import OFFLINE, CpuRole
from hostc.report.svgdoc import el, fit, titled

Core = tuple[int, ...]


def cpus_area(
    g: ET.Element,
    x: int,
    y: int,
    cores: Sequence[Core],
    roles: dict[int, CpuRole],
    ctx: CellContext,
) -> int:
    """Draw the node's cores at (x, y); return the height used."""
    if len(cores) > P.FOLD_CORES:
        return _folded(g, x, y, _runs(cores, roles), ctx)
    return _grid(g, x, y, cores, roles, ctx)


class CellContext:
    """What every cell needs besides its CPU: workload order, the boot CPU, and the CPUs a
    review marks as changed (none in `hostc plan --format svg`)."""

    def __init__(
        self, workloads: tuple[str, ...], boot_cpu: int | None, changed: CpuSet | None = None
    ) -> None:
        self.workloads = workloads
        self.boot_cpu = boot_cpu
        self.changed = changed or CpuSet()


CHANGED = "#d00000"


def _stroke(boot: bool, changed: bool) -> dict[str, str | int]:
    """A changed CPU is outlined red (over the boot CPU's black); others have no outline."""
    if changed:
        return {"stroke": CHANGED, "stroke_width": 2}
    return {"stroke": P.INK if boot else "none", "stroke_width": 2 if boot else 0}


def _describe(cpu: int, role: CpuRole, ctx: CellContext) -> str:
    parts = [f"CPU {cpu}", role.cls]
    if role.workloads:
        parts.append("workload " + ", ".join(role.workloads))
    if cpu == ctx.boot_cpu:
        parts.append("boot CPU")
    if cpu in ctx.changed:
        parts.append("changed in this diff")
    return " · ".join(parts)


def _grid(
    g: ET.Element,
    x: int,
    y: int,
    cores: Sequence[Core],
    roles: dict[int, CpuRole],
    ctx: CellContext,
) -> int:
    smt = max((len(c) for c in cores), default=1)
    row_h = 14 + smt * P.THREAD_H + 6
    for start in range(0, len(cores), P.COLUMNS):
        row = cores[start : start + P.COLUMNS]
        top = y + (start // P.COLUMNS) * row_h
        _labels(g, x, top, [roles[c[0]] for c in row])
        for i, core in enumerate(row):
            cx = x + i * P.CELL_W
            cg = el(g, "g", data_core=",".join(map(str, core)))
            for t, cpu in enumerate(core):
                _cell(cg, cx, top + 14 + t * P.THREAD_H, cpu, roles[cpu], ctx)
    rows = (len(cores) + P.COLUMNS - 1) // P.COLUMNS
    return rows * row_h


def _cell(g: ET.Element, x: int, y: int, cpu: int, role: CpuRole, ctx: CellContext) -> None:
    fill, ink = P.colours(role, ctx.workloads)
    boot = cpu == ctx.boot_cpu
    titled(
        g,
        "rect",
        _describe(cpu, role, ctx),
        x=x,
        y=y,
        width=P.CELL_W - 2,
        height=P.THREAD_H - 2,
        rx=2,
        fill=fill,
        **_stroke(boot, cpu in ctx.changed),
        data_cpu=cpu,
        data_class=role.cls,
        data_workload=",".join(role.workloads),
    )
    size = 9 if cpu < 1000 else 8
    el(
        g,
        "text",
        str(cpu),
        x=x + (P.CELL_W - 2) // 2,
        y=y + P.THREAD_H - 5,
        font_size=size,
        font_weight="bold" if boot else "normal",
        text_anchor="middle",
        fill=ink,
    )


def _labels(g: ET.Element, x: int, y: int, row: list[CpuRole]) -> None:
    """Above each stretch of like cores, its name: the workload or the class."""
    i = 0
    while i < len(row):
        j = i
        while j + 1 < len(row) and row[j + 1].key == row[i].key:
            j += 1
        width = (j - i + 1) * P.CELL_W - 2
        left = x + i * P.CELL_W
        el(g, "line", x1=left, y1=y + 12, x2=left + width, y2=y + 12, stroke=P.MUTED)
        el(
            g,
            "text",
            _label(row[i].key, width),
            x=left + width // 2,
            y=y + 10,
            font_size=10,
            text_anchor="middle",
            fill=P.INK,
        )
        i = j + 1


#: the short form of a class name where a stretch is too narrow for the full one
SHORT = {"housekeeping": "hk", "isolated": "iso", "offline": "off"}


def _label(key: str, width: int) -> str:
    """The full name if it fits, else the class's short form (the legend explains it),
    else the name cut with an ellipsis (the cells' titles carry it whole)."""
    if fit(key, width, 10) == key or key not in SHORT:
        return fit(key, width, 10)
    return SHORT[key]


Run = tuple[CpuRole, list[int], int]  # role, CPUs, cores


def _runs(cores: Sequence[Core], roles: dict[int, CpuRole]) -> list[Run]:
    """Consecutive CPUs (in core order) with one role: a new run where the role changes."""
    out: list[Run] = []
    for core in cores:
        for t, cpu in enumerate(core):
            role = roles[cpu]
            if out and out[-1][0] == role:
                out[-1][1].append(cpu)
                if t == 0:
                    out[-1] = (role, out[-1][1], out[-1][2] + 1)
            else:
                out.append((role, [cpu], 1 if t == 0 else 0))
    return out


def _folded(g: ET.Element, x: int, y: int, runs: list[Run], ctx: CellContext) -> int:
    per_row, gap, h = 4, 8, 46
    inner = P.COLUMNS * P.CELL_W - 2
    w = (inner - (per_row - 1) * gap) // per_row
    for i, (role, ids, cores) in enumerate(runs):
        bx, by = x + (i % per_row) * (w + gap), y + (i // per_row) * (h + gap)
        cpus = CpuSet(ids)
        fill, ink = P.colours(role, ctx.workloads)
        boot = ctx.boot_cpu in cpus
        what = (
            f"{role.key}: {cores} cores, {len(cpus)} CPUs"
            if role.cls != OFFLINE
            else (f"offline: {len(cpus)} CPUs")
        )
        rg = el(g, "g", data_cpus=str(cpus), data_class=role.cls)
        rg.set("data-workload", ",".join(role.workloads))
        moved = cpus & ctx.changed
        tip = f"{what} · CPUs {cpus}" + (f" · boot CPU {ctx.boot_cpu}" if boot else "")
        tip += f" · changed in this diff: {moved}" if moved else ""
        extra = _stroke(False, True) if moved else {}
        titled(rg, "rect", tip, x=bx, y=by, width=w, height=h, rx=3, fill=fill, **extra)
        lines = [
            (fit(role.key, w - 8, 11), 11, "bold"),
            (fit(what.split(": ", 1)[1], w - 8, 10), 10, "normal"),
            (fit(str(cpus), w - 8, 9), 9, "normal"),
        ]
        for k, (text, size, weight) in enumerate(lines):
            el(
                rg,
                "text",
                text,
                x=bx + 5,
                y=by + 14 + k * 13,
                font_size=size,
                font_weight=weight,
                fill=ink,
            )
    rows = (len(runs) + per_row - 1) // per_row
    return rows * (h + gap)
