"""cmdline: the kernel arguments hostc adds, as one line.

No comments: consumers read the whole file as the argument string (grubby
`--args="$(cat kernel-cmdline)"`, a PXE template, an Ignition karg list).  It
is not a complete `/etc/kernel/cmdline` (that file must also hold `root=` and
`ro`).  The reasons are in the GRUB drop-in and in `hostc plan`.
"""

from __future__ import annotations

from hostc.artifact import Artifact, deliverable
from hostc.kernelargs import cmdline
from hostc.plan import Plan


def emit(plan: Plan) -> list[Artifact]:
    return [deliverable("cmdline", "kernel-cmdline", cmdline(plan) + "\n")]
