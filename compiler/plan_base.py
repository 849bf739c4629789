"""The vocabulary every part of the Plan shares: when a setting takes effect, the OS
family, and the Reason each value carries (Butane's provenance on the value)."""

from __future__ import annotations

import enum
from typing import Final

import attrs

from hostc.vocab import OsFamily as OsFamily


class When(enum.StrEnum):
    """When a setting takes effect on the host."""

    BOOT = "boot"  # kernel command line: a reboot
    SYSCTL = "sysctl"  # sysctl.d, applied by systemd-sysctl at boot or `sysctl --system`
    RUNTIME = "runtime"  # sysfs, IRQ masks, services: a oneshot unit at boot
    SERVICE = "service"  # per systemd service (limits, placement): on (re)start
    SESSION = "session"  # pam_limits: sessions opened afterwards


@attrs.frozen
class Reason:
    source: str  # "cpu.isolate", "preset:inference", "topology:node0"
    why: str

    def __str__(self) -> str:
        return f"{self.source}: {self.why}"


UNLIMITED: Final = "unlimited"
