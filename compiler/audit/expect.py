"""What audit expects of a host: one `Expect` per value the Plan says the host has, and
the `Look` that reads it (`hostc.audit.observers.OBSERVERS`); `hostc.audit.observe`
makes the list from a Plan."""

from __future__ import annotations

from enum import StrEnum

import attrs

from hostc.plan.model import Reason
from hostc.record import Record

#: Files that carry the next boot's command line: one holding a token /proc/cmdline
#: lacks means the setting is installed and waits for a reboot.
BOOT_CARRIERS = (
    "/etc/default/grub.d/",
    "/etc/default/grub",
    "/boot/grub/grub.cfg",
    "/boot/grub2/grub.cfg",
    "/etc/kernel/cmdline",
    "/boot/loader/entries/",
    "/etc/tuned/bootcmdline",
)
MANAGER_CPUS_FILE = "/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf"


class Look(StrEnum):
    """How a value is looked at: the reader `hostc.audit.observers.OBSERVERS` runs for
    an `Expect` (a closed set, so a typo is a type error, not a KeyError on a host)."""

    CMDLINE = "cmdline"
    CMDLINE_WORD = "cmdline-word"
    VALUE = "value"
    RELEASE = "release"
    CPULIST = "cpulist"
    MASK = "mask"
    SELECTED = "selected"
    FIRST_WORD = "first-word"
    SYSCTL = "sysctl"
    MANAGER = "manager"
    PID_CPUS = "pid-cpus"
    SERVICE_CPUS = "service-cpus"
    UNIT_CPUS = "unit-cpus"
    UNIT_NUMA = "unit-numa"
    UNIT = "unit"
    PER_CPU = "per-cpu"
    IRQS_OFF = "irqs-off"
    DEVICE_IRQS = "device-irqs"
    MODULE_ABSENT = "module-absent"
    MODULE_PARAM = "module-param"
    CHECKPOINT = "checkpoint"
    POD_CPUS = "pod-cpus"
    GPUDIRECT = "gpudirect"
    PM_QOS = "pm-qos"
    EACH_VALUE = "each-value"
    NIC_CHANNELS = "nic-channels"
    IOMMU_MODE = "iommu-mode"
    ACS_REDIRECT = "acs-redirect"
    RCU_OFFLOADED = "rcu-offloaded"
    RCU_KTHREAD_CPUS = "rcu-kthread-cpus"
    STARTED_BEFORE = "started-before"
    KUBELET_RESERVED = "kubelet-reserved"
    HUGEPAGE_MAP = "hugepage-map"


@attrs.frozen(repr=False, eq=False)
class Expect(Record):
    """One value the Plan says the host has, and how to look at it."""

    kind: Look  # the reader (the TABLE row names the Plan's setting kind)
    setting: str  # what the report calls it
    expected: str
    reason: Reason
    args: tuple[str, ...] = ()  # the observer's arguments (a path, a key, a unit)
    #: (files, token): the value is installed but not yet in effect when one of these
    #: files holds `token` (a kernel argument in the boot loader's configuration).
    pending: tuple[tuple[str, ...], str] | None = None
