"""cmdline: the kernel arguments hostc adds, as one line.

No comments: consumers read the whole file as the argument string (grubby
`--args="$(cat kernel-cmdline)"`, a PXE template, an Ignition karg list).  It
is not a complete `/etc/kernel/cmdline` (that file must also hold `root=` and
`ro`).  The reasons are in the GRUB drop-in and in `hostc plan`.
"""

from __future__ import annotations

from hostc.artifact import Artifact, deliverable
from hostc.kernelargs import cmdline, kernel_args
from hostc.plan import Plan
from hostc.targets._escape import grubarg


def emit(plan: Plan) -> list[Artifact]:
    for arg in kernel_args(plan):  # the same charset the GRUB drop-in allows
        grubarg(arg)
    line = cmdline(plan)
    return [deliverable("cmdline", "kernel-cmdline", line + "\n")]
