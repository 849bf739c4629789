"""modprobe: /etc/modprobe.d/90-hostc.conf, blacklists (optionally hard blocks) and options.

`blacklist X` only ignores X's aliases (explicit loads and dependencies still
work); `install X /bin/false` makes every modprobe of X fail.  Modules in the
initramfs need it rebuilt, then a reboot (modprobe.d(5), targets.md §6).
"""

from __future__ import annotations

from hostc.artifact import Action, Activation, Artifact, file
from hostc.plan import Plan
from hostc.targets._render import render

PATH = "/etc/modprobe.d/90-hostc.conf"


def applies(plan: Plan) -> str | None:
    if plan.runtime.modules:
        return None
    return "the spec lists no [modules] to blacklist or configure"


def emit(plan: Plan) -> list[Artifact]:
    return [
        file(
            "modprobe",
            PATH,
            render("modprobe.conf.j2", plan=plan, modules=plan.runtime.modules),
            Activation(Action.INITRAMFS),
            Activation(Action.REBOOT),
        )
    ]
