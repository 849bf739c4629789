"""The vocabulary every part of the Plan shares: when a setting takes effect, the OS
family, and the Reason each value carries (Butane's provenance on the value)."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Final, Generic, TypeVar

import attrs

from hostc.provenance import Source

if TYPE_CHECKING:
    from hostc.settings.model import Setting

T = TypeVar("T")


class When(enum.StrEnum):
    """When a setting takes effect on the host."""

    BOOT = "boot"  # kernel command line: a reboot
    SYSCTL = "sysctl"  # sysctl.d, applied by systemd-sysctl at boot or `sysctl --system`
    RUNTIME = "runtime"  # sysfs, IRQ masks, services: a oneshot unit at boot
    SERVICE = "service"  # per systemd service (limits, placement): on (re)start
    SESSION = "session"  # pam_limits: sessions opened afterwards


class OsFamily(enum.StrEnum):
    DEBIAN = "debian"  # Debian, Ubuntu: update-grub reads /etc/default/grub.d
    RHEL = "rhel"  # RHEL, Fedora, Rocky, Alma: BLS entries edited by grubby
    COREOS = "coreos"  # Fedora CoreOS, RHCOS, Flatcar: Ignition, kargs
    SUSE = "suse"
    UNKNOWN = "unknown"


@attrs.frozen
class Reason:
    source: Source  # a spec key, a preset layer or a named fact (`str()`: as shown)
    why: str

    def __str__(self) -> str:
        return f"{self.source}: {self.why}"


@attrs.frozen
class Value(Generic[T]):
    """One setting's value in the Plan, with its reason.  When it takes effect, and its
    name in plan.json, belong to the setting (`hostc.settings`), not to each value."""

    setting: Setting[T] = attrs.field(repr=False)
    value: T
    reason: Reason

    @property
    def when(self) -> When:
        return self.setting.when

    @property
    def shown(self) -> str:
        """The value as `hostc plan` shows it."""
        return str(self.value)

    @property
    def name(self) -> str:
        return self.setting.name


UNLIMITED: Final = "unlimited"
