"""grub: a /etc/default/grub.d drop-in that appends to GRUB_CMDLINE_LINUX (Debian family).

Appends (`${GRUB_CMDLINE_LINUX:+$GRUB_CMDLINE_LINUX }`) rather than replacing,
so the distro's own arguments survive; `_LINUX` rather than `_DEFAULT`, because
cloud images override `_DEFAULT` in their own drop-ins.  Only Debian's
grub-mkconfig reads `/etc/default/grub.d`; RHEL-family hosts boot BLS entries
that grubby edits, so the drop-in would do nothing there.
"""

from __future__ import annotations

from hostc.artifact import Action, Activation, Artifact, file
from hostc.kernelargs import kernel_args
from hostc.plan import BootCarrier, Plan
from hostc.targets._render import render

PATH = "/etc/default/grub.d/90-hostc.cfg"


def applies(plan: Plan) -> str | None:
    """The Plan names the one carrier of the kernel arguments (`plan.boot`)."""
    return plan.boot.not_carried_by(BootCarrier.GRUB)


def emit(plan: Plan) -> list[Artifact]:
    text = render("grub.cfg.j2", plan=plan, args=kernel_args(plan))
    return [
        file(
            "grub",
            PATH,
            text,
            Activation(Action.BOOTLOADER),
            Activation(Action.REBOOT),
        )
    ]
