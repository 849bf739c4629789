"""Distribution knowledge as data: what the OS a host boots ships, where it decides output.

One row per release, the version its main repository ships (from the distribution's
own package lists: Ubuntu's and Debian's package pages, RHEL's release notes).
Releases are keyed as os-release writes them: ID and VERSION_ID, RHEL-like ones by
major version.
"""

from __future__ import annotations

#: systemd per release.  NUMAPolicy= and NUMAMask= (a workload's memory binding)
#: arrived in systemd 243 (systemd NEWS); older managers log "Unknown key" and start
#: the service unbound.
SYSTEMD: dict[tuple[str, str], int] = {
    ("ubuntu", "18.04"): 237,
    ("ubuntu", "20.04"): 245,
    ("ubuntu", "22.04"): 249,
    ("ubuntu", "24.04"): 255,
    ("debian", "10"): 241,
    ("debian", "11"): 247,
    ("debian", "12"): 252,
    **{(rhel, "8"): 239 for rhel in ("rhel", "centos", "rocky", "almalinux", "ol")},
    **{(rhel, "9"): 252 for rhel in ("rhel", "centos", "rocky", "almalinux", "ol")},
}

NUMA_POLICY_SINCE = 243

_BY_MAJOR = {"rhel", "centos", "rocky", "almalinux", "ol", "debian"}


def systemd_version(os_id: str, version_id: str | None) -> int | None:
    """The systemd a release ships, or None when hostc does not know the release."""
    if version_id is None:
        return None
    key = version_id.split(".")[0] if os_id in _BY_MAJOR else version_id
    return SYSTEMD.get((os_id, key))
