"""Colours and sizes of the partition picture: one palette, colour-blind-safe where it
matters (Okabe-Ito for workloads), always paired with a text label."""

from __future__ import annotations

from hostc.report.roles import HOUSEKEEPING, ISOLATED, OFFLINE, CpuRole

#: (fill, text colour) per CPU class without a workload
CLASS_COLOURS = {
    HOUSEKEEPING: ("#f0b429", "#1f1f1f"),
    ISOLATED: ("#b9d7ee", "#1f1f1f"),
    OFFLINE: ("#e4e4e4", "#6b6b6b"),
}
#: workload fills in Plan order (Okabe-Ito without the yellow, then darker tones); all take
#: white text.  Past the last, colours repeat: the label still tells workloads apart.
WORKLOAD_COLOURS = (
    "#0072b2",
    "#009e73",
    "#d55e00",
    "#cc79a7",
    "#56449c",
    "#8a5a00",
    "#2a7f62",
    "#a3313d",
)
GPU_FILL = "#4d7a0c"
NIC_FILL = "#3d5a80"
HUGEPAGE_FILLS = ("#7b5ea7", "#b39ddb", "#5e4b8b")
RESERVED_FILL = "#e07b39"
REST_FILL = "#dcdcdc"
INK = "#1f1f1f"
MUTED = "#5a5a5a"
FRAME = "#8a8a8a"
PACKAGE_BG = "#f7f7f5"
NODE_BG = "#ffffff"

WIDTH = 960
MARGIN = 16
PAD = 12
CELL_W = 30
THREAD_H = 16
COLUMNS = 28  # cores per row before the grid wraps
FOLD_CORES = 64  # a node with more cores draws runs of like cores instead of cells


def colours(role: CpuRole, workloads: tuple[str, ...]) -> tuple[str, str]:
    """Fill and text colour of a CPU: its first workload's colour, else its class's."""
    if role.workloads and role.cls != OFFLINE:
        i = workloads.index(role.workloads[0]) % len(WORKLOAD_COLOURS)
        return WORKLOAD_COLOURS[i], "#ffffff"
    return CLASS_COLOURS[role.cls]
