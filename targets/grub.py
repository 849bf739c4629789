"""grub: a /etc/default/grub.d drop-in appending to GRUB_CMDLINE_LINUX_DEFAULT (Debian family).

Appends rather than replaces, so the distro's own arguments survive.  `_DEFAULT`, not
`_LINUX`: grub-mkconfig's 10_linux writes `${GRUB_CMDLINE_LINUX}
${GRUB_CMDLINE_LINUX_DEFAULT}` on normal entries, so a value in `_DEFAULT` (a distro's
`transparent_hugepage=always`, an admin's `intel_iommu=off`) would otherwise come after
hostc's and win; and recovery entries take only `_LINUX`, so they boot without isolation
or hugepages.  Cloud images set `_DEFAULT` in 50-cloudimg-settings.cfg, which sorts
before 90-hostc.cfg, so the append survives them.  A key already set there is named on
update-grub's stderr (the kernel would see it twice).  Only Debian's
grub-mkconfig reads `/etc/default/grub.d`; RHEL-family hosts boot BLS entries
that grubby edits, so the drop-in would do nothing there.
"""

from __future__ import annotations

from hostc.artifact import Action, Activation
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import BootCarrier, Plan
from hostc.targets._emitter import Emitter
from hostc.targets._escape import grubarg
from hostc.targets._render import Row, config, header

PATH = "/etc/default/grub.d/90-hostc.cfg"


def applies(plan: Plan) -> str | None:
    """The Plan names the one carrier of the kernel arguments (`plan.boot`)."""
    return plan.boot.not_carried_by(BootCarrier.GRUB)


def emit(plan: Plan, out: Emitter) -> None:
    args = kernel_args(plan)
    keys = " ".join(grubarg(k) for k in dict.fromkeys(a.key for a in args))  # each once
    rows = tuple(Row(a.reason, grubarg(a)) for a in args)
    text = config(header(plan), "grub.cfg.j2", args=rows, keys=keys)
    out.file(PATH, text, Activation(Action.BOOTLOADER), Activation(Action.REBOOT))
