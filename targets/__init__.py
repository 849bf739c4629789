"""The target registry: an explicit table, no discovery by file name.

Every target is a pure function of the Plan.  Targets never import the spec
or topology modules (tests/test_architecture.py enforces it).
"""

from __future__ import annotations

from hostc.artifact import Target
from hostc.targets import cmdline, grub, limits, sysctl

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "cmdline",
            "one line of kernel arguments (grubby, systemd-boot, PXE, Ignition)",
            cmdline.emit,
        ),
        Target("grub", "/etc/default/grub.d drop-in appending to GRUB_CMDLINE_LINUX", grub.emit),
        Target("sysctl", "/etc/sysctl.d/90-hostc.conf", sysctl.emit),
        Target(
            "limits",
            "limits.d for PAM sessions and system.conf.d for systemd services",
            limits.emit,
        ),
    )
}
