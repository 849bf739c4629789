"""grub: a /etc/default/grub.d drop-in that appends to GRUB_CMDLINE_LINUX.

Appends (`${GRUB_CMDLINE_LINUX:+$GRUB_CMDLINE_LINUX }`) rather than replacing,
so the distro's own arguments survive; `_LINUX` rather than `_DEFAULT`, because
cloud images override `_DEFAULT` in their own drop-ins.
"""

from __future__ import annotations

from hostc.artifact import Artifact
from hostc.plan import Plan
from hostc.targets._render import render

PATH = "/etc/default/grub.d/90-hostc.cfg"


def emit(plan: Plan) -> list[Artifact]:
    text = render("grub.cfg.j2", plan=plan, args=plan.kernel_args)
    return [Artifact("grub", PATH, text)]
