"""modprobe: /etc/modprobe.d/90-hostc.conf, blacklists (optionally hard blocks) and options,
and /etc/modules-load.d/90-hostc.conf, the modules loaded at every boot.

`blacklist X` only ignores X's aliases (explicit loads and dependencies still
work); `install X /bin/false` makes every modprobe of X fail.  Modules in the
initramfs need it rebuilt, then a reboot (modprobe.d(5), targets.md §6).
systemd-modules-load reads modules-load.d early at every boot; restarting it
loads the list now (modules-load.d(5)).
"""

from __future__ import annotations

from hostc.artifact import Action, Activation, Artifact, file
from hostc.plan import Plan
from hostc.targets._render import render

PATH = "/etc/modprobe.d/90-hostc.conf"
LOAD_PATH = "/etc/modules-load.d/90-hostc.conf"
LOADER = "systemd-modules-load.service"


def applies(plan: Plan) -> str | None:
    if plan.runtime.modules or plan.modules_load:
        return None
    return "the spec lists no [modules] to blacklist or configure, and none is to be loaded"


def emit(plan: Plan) -> list[Artifact]:
    out = []
    if plan.runtime.modules:
        out.append(
            file(
                "modprobe",
                PATH,
                render("modprobe.conf.j2", plan=plan, modules=plan.runtime.modules),
                Activation(Action.INITRAMFS),
                Activation(Action.REBOOT),
            )
        )
    if plan.modules_load:
        out.append(
            file(
                "modprobe",
                LOAD_PATH,
                render("modules-load.conf.j2", plan=plan, modules=plan.modules_load),
                Activation(Action.START, LOADER),
            )
        )
    return out
