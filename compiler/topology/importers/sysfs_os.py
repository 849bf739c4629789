"""What the operating system says about itself: os-release(5) and the kernel
build options hostc consults from /boot/config-<release>.
"""

from __future__ import annotations

import re

from hostc.topology.importers.sysfs_reader import FILE_LIMIT, Reader
from hostc.topology.model import OsRelease, valid_os_id

OS_RELEASE = ("etc/os-release", "usr/lib/os-release")
_OS_LINE = re.compile(r"^(ID|VERSION_ID|ID_LIKE)=(.*)$")


def _os_release_only(text: str) -> str:
    """Keep ID, VERSION_ID and ID_LIKE: the rest (URLs, names) is never used."""
    return "".join(
        line
        for line in text.splitlines(keepends=True)
        if line.startswith(("ID=", "VERSION_ID=", "ID_LIKE="))
    )


#: The kernel build options hostc consults (kernelfacts.KERNEL_CONFIG); the rest of
#: /boot/config-* is never kept.
_CONFIG_NAMES = (
    "CONFIG_NO_HZ_FULL|CONFIG_RCU_NOCB_CPU|CONFIG_CPU_ISOLATION|CONFIG_INTEL_IDLE"
    "|CONFIG_INTEL_IOMMU_DEFAULT_ON"
)
_CONFIG_LINE = re.compile(rf"^(?:({_CONFIG_NAMES})=([ymn])|# ({_CONFIG_NAMES}) is not set)$")


def _config_only(text: str) -> str:
    """Keep the lines of the options hostc consults: a capture stores no more than that."""
    return "".join(
        line for line in text.splitlines(keepends=True) if _CONFIG_LINE.match(line.strip())
    )


def kernel_config(r: Reader, kernel: str | None) -> dict[str, str]:
    """Build options from /boot/config-<release> (Debian and RHEL install it)."""
    if kernel is None or "/" in kernel:
        return {}
    rel = f"boot/config-{kernel}"
    if not (r.root / rel).exists():
        return {}
    out: dict[str, str] = {}
    for line in (r.text(rel, keep=_config_only, limit=FILE_LIMIT) or "").splitlines():
        if m := _CONFIG_LINE.match(line.strip()):
            if m.group(1):
                out[m.group(1)] = m.group(2)
            else:
                out[m.group(3)] = "n"
    return out


def os_release(r: Reader) -> OsRelease | None:
    """os-release(5): /etc/os-release, else /usr/lib/os-release; shell-quoted values."""
    rel = next((p for p in OS_RELEASE if (r.root / p).exists()), None)
    if rel is None:
        return None
    text = r.text(rel, keep=_os_release_only, limit=FILE_LIMIT)
    if text is None:
        return None
    values: dict[str, str] = {}
    for line in text.splitlines():
        if m := _OS_LINE.match(line.strip()):
            value = m.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            values[m.group(1)] = value
    if "ID" not in values:
        r.fail(rel, "has no ID= line")
        return None
    release = OsRelease(
        id=values["ID"],
        version_id=values.get("VERSION_ID") or None,
        id_like=tuple(values.get("ID_LIKE", "").split()),
    )
    bad = [v for v in [release.id, *release.id_like] if not valid_os_id(v)]
    if bad:
        r.fail(rel, f"ID {bad[0][:40]!r} is not an os-release ID (a-z, 0-9, `._-`)")
        return None
    return release
