"""grubby: a script that puts hostc's kernel arguments into RHEL-family BLS boot entries.

RHEL/Fedora `grub2-mkconfig` reads only /etc/default/grub (never grub.d), and
since RHEL 9.3 it leaves the BLS entries' options alone unless given
`--update-bls-cmdline`; the entries themselves are what boots.  grubby edits
them: the script removes the arguments hostc added last time (recorded in
/etc/hostc/kargs), adds the current ones to every installed kernel, and
records them.  Kernels installed later take their options from /etc/kernel/cmdline
(else /proc/cmdline, which lacks the arguments until the reboot), and
`grub2-mkconfig --update-bls-cmdline` rewrites every entry from GRUB_CMDLINE_LINUX,
so the script edits both, word for word.  grubby matches keys loosely in some
versions, so the script then reads `grubby --info=ALL` back and exits non-zero when
an entry lacks an argument.
"""

from __future__ import annotations

from hostc.artifact import Action, Activation
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import BootCarrier, Plan
from hostc.targets._emitter import Emitter
from hostc.targets._escape import oneline, shell
from hostc.targets._render import Row, header, script

PATH = "/usr/local/sbin/hostc-kargs"
STATE = "/etc/hostc/kargs"


def applies(plan: Plan) -> str | None:
    """The Plan names the one carrier of the kernel arguments (`plan.boot`)."""
    return plan.boot.not_carried_by(BootCarrier.GRUBBY)


def emit(plan: Plan, out: Emitter) -> None:
    args = kernel_args(plan)
    rows = tuple(Row(a.reason, oneline(a)) for a in args)
    new = shell(" ".join(map(str, args)))
    text = script(header(plan), "hostc-kargs.sh.j2", args=rows, new=new, state=STATE)
    out.file(PATH, text, Activation(Action.RUN), Activation(Action.REBOOT), mode=0o755)
