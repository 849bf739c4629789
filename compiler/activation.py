"""Apply steps: how a set of artifacts takes effect on a host of a given OS family.

Artifacts say *what* must happen (`Action`); this module says how each OS
family does it, in one order that is safe to run twice.  Wrapper targets
(cloud-init runcmd, the Packer example, the JSON manifest) and provisioning
systems take their steps from here, never from template comments.
Commands are argv lists: no shell ever sees a value from the input.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from hostc.artifact import Action, Artifact, Kind
from hostc.plan import OsFamily


@attrs.frozen
class Step:
    argv: tuple[str, ...]
    why: str


#: How each family regenerates its boot configuration from the files hostc installs.
_BOOTLOADER: dict[OsFamily, tuple[str, ...] | None] = {
    OsFamily.DEBIAN: ("update-grub",),
    OsFamily.UNKNOWN: ("update-grub",),
    OsFamily.RHEL: None,  # the grubby script (Action.RUN) edits the BLS entries itself
    OsFamily.COREOS: None,  # kernel arguments travel in Ignition's kernelArguments
    OsFamily.SUSE: None,  # no carrier (plan.boot): the kernel-cmdline deliverable only
}
_INITRAMFS: dict[OsFamily, tuple[str, ...] | None] = {
    OsFamily.DEBIAN: ("update-initramfs", "-u"),
    OsFamily.UNKNOWN: ("update-initramfs", "-u"),
    OsFamily.RHEL: ("dracut", "-f"),
    OsFamily.SUSE: ("dracut", "-f"),
    OsFamily.COREOS: None,
}

#: The order steps run in: state removed before services start, units reloaded
#: before they are enabled, the boot configuration last (a reboot follows it).
ORDER = (
    Action.REMOVE,
    Action.DAEMON_RELOAD,
    Action.DAEMON_REEXEC,
    Action.SYSCTL,
    Action.RUN,
    Action.ENABLE,
    Action.START,
    Action.RESTART,
    Action.INITRAMFS,
    Action.TUNED_PROFILE,
    Action.BOOTLOADER,
)


def _step(action: Action, unit: str | None, art: Artifact, family: OsFamily) -> Step | None:
    if action is Action.SYSCTL:
        return Step(("sysctl", "--system"), "load sysctl.d now (systemd-sysctl ran before)")
    if action is Action.DAEMON_RELOAD:
        return Step(("systemctl", "daemon-reload"), "systemd rereads units and drop-ins")
    if action is Action.DAEMON_REEXEC:
        return Step(("systemctl", "daemon-reexec"), "the manager rereads system.conf.d")
    if action is Action.ENABLE and unit:
        return Step(("systemctl", "enable", unit), f"start {unit} at every boot")
    if action is Action.START and unit:
        return Step(("systemctl", "restart", unit), f"apply {unit} now")
    if action is Action.RESTART and unit:
        return Step(("systemctl", "try-restart", unit), f"a running {unit} rereads its config")
    if action is Action.RUN:
        script = unit or art.path
        return Step((script,), f"{script} applies what it carries")
    if action is Action.REMOVE and unit:
        return Step(("rm", "-f", "--", unit), f"stale state in {unit} would be restored")
    if action is Action.INITRAMFS:
        argv = _INITRAMFS[family]
        return None if argv is None else Step(argv, "modules loaded from the initramfs")
    if action is Action.TUNED_PROFILE and unit:
        return Step(("tuned-adm", "profile", unit), f"TuneD applies profile {unit}")
    if action is Action.BOOTLOADER:
        argv = _BOOTLOADER[family]
        return None if argv is None else Step(argv, "regenerate the boot configuration")
    return None


def steps(artifacts: Iterable[Artifact], family: OsFamily) -> list[Step]:
    """Every step the host files need, once each, in ORDER."""
    found: dict[Action, list[Step]] = {a: [] for a in ORDER}
    for art in artifacts:
        if art.kind is not Kind.FILE:
            continue
        for act in art.activation:
            if act.action not in found:
                continue
            step = _step(act.action, act.unit, art, family)
            if step is not None and step not in found[act.action]:
                found[act.action].append(step)
    return [s for a in ORDER for s in found[a]]


def needs_reboot(artifacts: Iterable[Artifact]) -> bool:
    return any(
        act.action is Action.REBOOT
        for a in artifacts
        if a.kind is Kind.FILE
        for act in a.activation
    )
