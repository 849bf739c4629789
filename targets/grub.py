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
from hostc.plan import OsFamily, Plan, RuntimeOwner
from hostc.targets._render import render

PATH = "/etc/default/grub.d/90-hostc.cfg"

#: One owner for the kernel arguments: with TuneD in charge, its [bootloader] carries them.
TUNED_OWNS = 'runtime.owner is "tuned": the TuneD profile\'s [bootloader] carries the arguments'


#: Families whose grub-mkconfig sources /etc/default/grub.d/*.cfg.
READS_DROPINS = (OsFamily.DEBIAN, OsFamily.UNKNOWN)


def applies(plan: Plan) -> str | None:
    if plan.runtime.owner is RuntimeOwner.TUNED:
        return TUNED_OWNS
    if plan.host.os_family in READS_DROPINS:
        return None
    return (
        f"{plan.host.os or plan.host.os_family} ({plan.host.os_family} family) does not read "
        "/etc/default/grub.d"
    )


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
