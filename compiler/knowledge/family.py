"""OS families: what decides a host's delivery and boot configuration, and its facts.

A family groups the distributions that deliver alike (Debian and Ubuntu; RHEL, its
rebuilds and Fedora; the Ignition-booted images; SUSE).  Facts hang off the value:
`OsFamily.boot_carrier`, `.bootloader_argv`, `.initramfs_argv`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from hostc.knowledge.distro import RHEL_LIKE
from hostc.knowledge.table import Table


class OsFamily(enum.StrEnum):
    """What decides the delivery, the boot configuration and the package names."""

    DEBIAN = "debian"  # Debian, Ubuntu: update-grub reads /etc/default/grub.d
    RHEL = "rhel"  # RHEL, Fedora, Rocky, Alma: BLS entries edited by grubby
    COREOS = "coreos"  # Fedora CoreOS, RHCOS, Flatcar: Ignition, kargs
    SUSE = "suse"
    UNKNOWN = "unknown"

    @staticmethod
    def from_os_release(os_id: str, id_like: Iterable[str]) -> OsFamily:
        """The family of an os-release ID and ID_LIKE.

        Image-based systems come first (fedora-coreos is ID_LIKE=fedora, yet it has no
        package manager to deliver with); flatcar is gentoo-like but boots with
        Ignition, so it is coreos here.
        """
        if os_id in FAMILY_IDS[OsFamily.COREOS]:
            return OsFamily.COREOS
        ids = [os_id, *id_like]
        for family in (OsFamily.DEBIAN, OsFamily.RHEL):
            if any(i in FAMILY_IDS[family] for i in ids):
                return family
        if any(i in FAMILY_IDS[OsFamily.SUSE] or i.startswith("opensuse") for i in ids):
            return OsFamily.SUSE
        return OsFamily.UNKNOWN

    @property
    def boot_carrier(self) -> tuple[BootCarrier, str]:
        """The artifact that carries the kernel arguments here, and why."""
        return BOOT_CARRIER[self]

    @property
    def bootloader_argv(self) -> tuple[str, ...] | None:
        """How the family regenerates its boot configuration (None: no step)."""
        return BOOTLOADER_ARGV[self]

    @property
    def initramfs_argv(self) -> tuple[str, ...] | None:
        """How the family rebuilds every installed kernel's initramfs (None: no step)."""
        return INITRAMFS_ARGV[self]


#: os-release IDs (ID= or any of ID_LIKE=) per family; openSUSE IDs match by prefix.
FAMILY_IDS: Table[OsFamily, frozenset[str]] = Table(
    {
        OsFamily.DEBIAN: (frozenset({"debian", "ubuntu"}), "os-release(5) ID=/ID_LIKE=debian"),
        OsFamily.RHEL: (
            frozenset({*RHEL_LIKE, "fedora"}),
            "os-release(5) ID=/ID_LIKE= rhel or fedora (Fedora, RHEL and its rebuilds)",
        ),
        OsFamily.COREOS: (
            frozenset({"fedora-coreos", "rhcos", "flatcar", "coreos"}),
            "os-release(5) ID= of Fedora CoreOS, RHCOS and Flatcar: Ignition-booted images",
        ),
        OsFamily.SUSE: (frozenset({"sles", "suse"}), "os-release(5) ID= sles, opensuse-*"),
        OsFamily.UNKNOWN: (frozenset(), "no family: nothing matched"),
    }
)


class BootCarrier(enum.StrEnum):
    """The one artifact that puts the kernel arguments into this host's boot entries."""

    GRUB = "grub"  # /etc/default/grub.d drop-in, update-grub (Debian family)
    GRUBBY = "grubby"  # grubby edits the BLS entries (RHEL family)
    TUNED = "tuned"  # the TuneD profile's [bootloader] (runtime.owner = tuned)
    IGNITION = "ignition"  # Ignition's kernelArguments (CoreOS family)
    NONE = "none"  # no file target: the kernel-cmdline deliverable only


_GRUB_D = "grub-mkconfig (Debian's 10_linux) sources /etc/default/grub.d/*.cfg"

#: Per family: the carrier and the one-line reason the Plan shows for it.
BOOT_CARRIER: Table[OsFamily, tuple[BootCarrier, str]] = Table(
    {
        OsFamily.DEBIAN: (
            (BootCarrier.GRUB, "Debian's grub-mkconfig sources /etc/default/grub.d"),
            _GRUB_D,
        ),
        OsFamily.UNKNOWN: (
            (
                BootCarrier.GRUB,
                "the OS is not known: the GRUB drop-in, as Debian and Ubuntu read it (set host.os)",
            ),
            _GRUB_D + "; hostc's fallback for an unknown OS",
        ),
        OsFamily.RHEL: (
            (
                BootCarrier.GRUBBY,
                "RHEL-family hosts boot BLS entries that grubby edits; their grub2-mkconfig "
                "does not read /etc/default/grub.d",
            ),
            "RHEL 9 'Managing, monitoring and updating the kernel', ch. 'Configuring kernel "
            "command-line parameters' (grubby --update-kernel)",
        ),
        OsFamily.COREOS: (
            (BootCarrier.IGNITION, "CoreOS-family hosts take kernelArguments in Ignition"),
            "Butane/Ignition spec v3.3+: kernel_arguments (coreos.github.io/butane)",
        ),
        OsFamily.SUSE: (
            (
                BootCarrier.NONE,
                "SUSE's grub2-mkconfig reads only /etc/default/grub, which hostc does not edit",
            ),
            "openSUSE grub2 package: /etc/grub.d/10_linux reads /etc/default/grub only",
        ),
    }
)

_DEBIAN_GRUB = "update-grub(8): grub-mkconfig -o /boot/grub/grub.cfg (Debian grub2-common)"
_DEBIAN_INITRAMFS = "update-initramfs(8): -u -k all updates every installed kernel's initramfs"
_DRACUT = "dracut(8): -f --regenerate-all rebuilds every installed kernel's initramfs"

#: How each family regenerates its boot configuration from the files hostc installs.
BOOTLOADER_ARGV: Table[OsFamily, tuple[str, ...] | None] = Table(
    {
        OsFamily.DEBIAN: (("update-grub",), _DEBIAN_GRUB),
        OsFamily.UNKNOWN: (("update-grub",), _DEBIAN_GRUB + "; the GRUB carrier's step"),
        OsFamily.RHEL: (None, "grubby edits the BLS entries itself (the Action.RUN script)"),
        OsFamily.COREOS: (None, "kernel arguments travel in Ignition's kernelArguments"),
        OsFamily.SUSE: (None, "no carrier (plan.boot): the kernel-cmdline deliverable only"),
    }
)

#: Every installed kernel's initramfs, not only the newest one's (`-u` alone), so the
#: kernel the boot entry names gets it whichever that is.
INITRAMFS_ARGV: Table[OsFamily, tuple[str, ...] | None] = Table(
    {
        OsFamily.DEBIAN: (("update-initramfs", "-u", "-k", "all"), _DEBIAN_INITRAMFS),
        OsFamily.UNKNOWN: (("update-initramfs", "-u", "-k", "all"), _DEBIAN_INITRAMFS),
        OsFamily.RHEL: (("dracut", "-f", "--regenerate-all"), _DRACUT),
        OsFamily.SUSE: (("dracut", "-f", "--regenerate-all"), _DRACUT),
        OsFamily.COREOS: (None, "image-based: rpm-ostree builds the initramfs with the image"),
    }
)
