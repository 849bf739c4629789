"""cmdline: the kernel arguments as one line, for grubby, kernel-install, PXE or Ignition.

No comments: consumers read the whole file as the argument string.  The
reasons are in the GRUB drop-in and in `hostc plan`.
"""

from __future__ import annotations

from hostc.artifact import Artifact
from hostc.plan import Plan


def emit(plan: Plan) -> list[Artifact]:
    return [Artifact("cmdline", "kernel-cmdline", plan.cmdline + "\n")]
