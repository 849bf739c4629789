"""Artifact: one emitted file as bytes, what it is, and how it takes effect.

Wrapper targets (cloud-init, Ignition, rootfs) compose the file targets'
artifacts; everything they need to carry a file to a host and make it take
effect is here, as data, so they never look inside a file or a template.
"""

from __future__ import annotations

import enum

import attrs

from hostc.record import Record


class ArtifactKind(enum.StrEnum):
    FILE = "file"  # installed on the host at `path` (absolute)
    DELIVERABLE = "deliverable"  # handed to a person or a tool (`user-data`, a tarball)


class Action(enum.StrEnum):
    """How a file takes effect.  The apply steps per OS family: `hostc.delivery.activation`."""

    SYSCTL = "sysctl"  # sysctl --system
    BOOTLOADER = "bootloader"  # regenerate the boot configuration (update-grub, grubby, …)
    RUN = "run"  # run the file itself, or the script named by `unit` (its own artifact)
    DAEMON_RELOAD = "daemon-reload"  # systemctl daemon-reload: units, drop-ins, system.conf.d
    ENABLE = "enable"  # systemctl enable <unit>
    ENABLE_NOW = "enable-now"  # systemctl enable --now <unit>: a service later steps need
    START = "start"  # systemctl start <unit> (or restart, when it already ran)
    RESTART = "restart"  # systemctl try-restart <unit>: a running service rereads its config
    INITRAMFS = "initramfs"  # rebuild the initramfs (modprobe.d for modules loaded early)
    NEW_SESSION = "new-session"  # pam_limits: takes effect for sessions opened afterwards
    NEXT_START = "next-start"  # takes effect when `unit` next starts (no step restarts it)
    NEXT_BOOT = "next-boot"  # takes effect at the next boot; no step, and it owes no reboot
    REMOVE = "remove"  # delete `unit` (a path) before the next start: a stale state file
    REBOOT = "reboot"  # only a reboot makes it take effect (kernel command line)
    TUNED_PROFILE = "tuned-profile"  # tuned-adm profile <unit>: select and apply a TuneD profile
    PYTHON_MODULE = (
        "python-module"  # <unit> = "MODULE PACKAGE": a module TuneD imports, checked first
    )
    #: <unit> = hostc-apply: runs last, and runs each other step only when its files changed
    COMMIT = "commit"


@attrs.frozen(repr=False, eq=False)
class Activation(Record):
    action: Action
    unit: str | None = None  # the systemd unit for ENABLE/START/RESTART, a path for REMOVE

    def __str__(self) -> str:
        return self.action.value if self.unit is None else f"{self.action.value} {self.unit}"


@attrs.frozen(repr=False, eq=False)
class Artifact(Record):
    target: str
    path: str  # absolute path on the host (ArtifactKind.FILE), or a deliverable's name
    data: bytes
    mode: int = 0o644
    kind: ArtifactKind = ArtifactKind.FILE
    activation: tuple[Activation, ...] = ()

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")

    @property
    def relpath(self) -> str:
        """Where it goes under `--out DIR/<target>/`."""
        return self.path.lstrip("/")


def file(target: str, path: str, text: str, *activation: Activation, mode: int = 0o644) -> Artifact:
    """A text file installed on the host."""
    return Artifact(target, path, text.encode("utf-8"), mode, ArtifactKind.FILE, tuple(activation))


def deliverable(target: str, name: str, data: str | bytes, mode: int = 0o644) -> Artifact:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return Artifact(target, name, raw, mode, ArtifactKind.DELIVERABLE)
