"""modprobe: /etc/modprobe.d/90-hostc.conf, blacklists (optionally hard blocks),
/etc/modprobe.d/90-hostc-options.conf, module options, and
/etc/modules-load.d/90-hostc.conf, the modules loaded at every boot.

`blacklist X` only ignores X's aliases (explicit loads and dependencies still
work); `install X /bin/false` makes every modprobe of X fail.  Both act on future
loads only and unload nothing, so a change to them takes effect at the next boot and
owes no reboot; a loaded module keeps the options it was loaded with, so an options
change owes one (modprobe.d(5), targets.md §6).  Two files, so that each change is
judged by what it holds.  Modules in the initramfs need it rebuilt.
systemd-modules-load reads modules-load.d early at every boot; restarting it
loads the list now (modules-load.d(5)).
"""

from __future__ import annotations

import attrs

from hostc.artifact import Action, Activation
from hostc.plan.model import Plan, Reason
from hostc.record import Record
from hostc.targets import gpudirect
from hostc.targets._emitter import Emitter
from hostc.targets._escape import oneline, word
from hostc.targets._render import Row, config, header

PATH = "/etc/modprobe.d/90-hostc.conf"
OPTIONS_PATH = "/etc/modprobe.d/90-hostc-options.conf"
LOAD_PATH = "/etc/modules-load.d/90-hostc.conf"
LOADER = "systemd-modules-load.service"


def applies(plan: Plan) -> str | None:
    g = plan.runtime.gpudirect
    if plan.runtime.modules or plan.modules_load or (g is not None and g.peermem):
        return None
    return "the spec lists no [modules] to blacklist or configure, and none is to be loaded"


@attrs.frozen(repr=False, eq=False)
class ModuleRow(Record):
    """One module's modprobe.d lines, its name and options escaped already."""

    reason: Reason
    name: str
    blacklist: bool
    hard: bool
    options: str


def emit(plan: Plan, out: Emitter) -> None:
    host = header(plan)
    rows = [
        ModuleRow(
            m.reason, word(m.name), m.blacklist, m.hard, oneline(m.options) if m.options else ""
        )
        for m in plan.runtime.modules
    ]
    blocks = tuple(attrs.evolve(r, options="") for r in rows if r.blacklist or r.hard)
    if blocks:
        text = config(host, "modprobe.conf.j2", modules=blocks, options=False)
        later = Activation(Action.NEXT_BOOT, "module blacklists")
        out.file(PATH, text, Activation(Action.INITRAMFS), later)
    options = tuple(attrs.evolve(r, blacklist=False, hard=False) for r in rows if r.options)
    if options:
        text = config(host, "modprobe.conf.j2", modules=options, options=True)
        out.file(OPTIONS_PATH, text, Activation(Action.INITRAMFS), Activation(Action.REBOOT))
    if plan.modules_load:
        rows_ = tuple(Row(m.reason, word(m.name)) for m in plan.modules_load)
        text = config(host, "modules-load.conf.j2", rows=rows_)
        out.file(LOAD_PATH, text, Activation(Action.START, LOADER))
    gpudirect.emit(plan, out)
