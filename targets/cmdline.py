"""cmdline: the kernel arguments hostc adds, as one line.

No comments: consumers read the whole file as the argument string (grubby
`--args="$(cat kernel-cmdline)"`, a PXE template, an Ignition karg list).  It
is not a complete `/etc/kernel/cmdline` (that file must also hold `root=` and
`ro`).  The reasons are in the GRUB drop-in and in `hostc plan`.
"""

from __future__ import annotations

from hostc.plan.kernelargs import cmdline, kernel_args
from hostc.plan.model import Plan
from hostc.targets._emitter import Emitter
from hostc.targets._escape import grubarg


def emit(plan: Plan, out: Emitter) -> None:
    for arg in kernel_args(plan):  # the same charset the GRUB drop-in allows
        grubarg(arg)
    out.deliverable("kernel-cmdline", cmdline(plan) + "\n")
