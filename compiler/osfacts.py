"""Distribution knowledge as data: what the OS a host boots ships, where it decides output.

One row per release, the version its main repository ships (from the distribution's
own package lists: Ubuntu's and Debian's package pages, RHEL's release notes).
Releases are keyed as os-release writes them: ID and VERSION_ID, RHEL-like ones by
major version.
"""

from __future__ import annotations

import re

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

#: AllowedCPUs= and AllowedMemoryNodes= (the cgroup-v2 cpuset controller, kernel-enforced
#: unlike CPUAffinity=/NUMAPolicy=) arrived in systemd 244 (NEWS "CHANGES WITH 244";
#: systemd.resource-control(5)); they work "only with the unified control group hierarchy".
ALLOWED_CPUS_SINCE = 244

#: From systemd 240, PID 1 can raise fs.nr_open to the kernel's maximum at boot
#: (src/core/main.c bump_file_max_and_nr_open(); NEWS "CHANGES WITH 240"), so a
#: sysctl.d fs.nr_open below 1073741816 would *lower* it there.  But it is a build
#: option (meson `bump-proc-sys-fs-nr-open`), and distributions turn it off.
BUMPS_NR_OPEN_SINCE = 240

#: Distributions whose systemd is built without the fs.nr_open bump: the kernel's
#: 1048576 stays.  Debian (and Ubuntu, built from Debian's packaging): Debian 12's
#: /lib/systemd/systemd (252.39-1~deb12u2) holds the fs.file-max bump's strings but
#: none of the fs.nr_open ones.  openSUSE/SLES: systemd.spec passes
#: -Dbump-proc-sys-fs-nr-open=false.  Releases not listed are unknown.
NR_OPEN_NOT_RAISED = frozenset({"debian", "ubuntu", "opensuse-leap", "opensuse-tumbleweed", "sles"})


def raises_nr_open(os_id: str, version_id: str | None) -> bool | None:
    """Whether the release's systemd raises fs.nr_open at boot (None: not known)."""
    if os_id in NR_OPEN_NOT_RAISED:
        return False
    version = systemd_version(os_id, version_id)
    if version is not None and version < BUMPS_NR_OPEN_SINCE:
        return False
    return None


#: The first release of each distribution whose systemd boots the unified (v2) cgroup
#: hierarchy by default: Debian 11 (bullseye release notes, "cgroup v2 by default"),
#: Ubuntu 21.10 (release notes: "unified cgroup hierarchy"), RHEL 9 (release notes:
#: "cgroup v2 is the default"), Fedora 31 (change "CGroupsV2").  Earlier ones mount the
#: hybrid hierarchy, where systemd's cpuset settings do nothing.
UNIFIED_CGROUP_SINCE: dict[str, tuple[int, ...]] = {
    "debian": (11,),
    "ubuntu": (21, 10),
    "fedora": (31,),
    **{rhel: (9,) for rhel in ("rhel", "centos", "rocky", "almalinux", "ol")},
}

_BY_MAJOR = {"rhel", "centos", "rocky", "almalinux", "ol", "debian"}


def systemd_version(os_id: str, version_id: str | None) -> int | None:
    """The systemd a release ships, or None when hostc does not know the release."""
    if version_id is None:
        return None
    key = version_id.split(".")[0] if os_id in _BY_MAJOR else version_id
    return SYSTEMD.get((os_id, key))


def unified_cgroup(os_id: str, version_id: str | None) -> bool | None:
    """Whether the release boots the unified cgroup hierarchy by default (None: unknown)."""
    since, version = UNIFIED_CGROUP_SINCE.get(os_id), _version(version_id)
    if since is None or version is None:
        return None
    return version[: len(since)] >= since


_OS = re.compile(r"^(?P<id>[a-z0-9._-]+?)(?:-(?P<version>[0-9][a-z0-9._~-]*))?$")


def split_os(text: str) -> tuple[str, str | None]:
    """`rhel-9.4` → (rhel, 9.4); `fedora-coreos-40` → (fedora-coreos, 40).  ValueError if not."""
    m = _OS.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not an os-release ID-VERSION_ID such as rhel-9.4")
    return m.group("id"), m.group("version")


#: Where TuneD reads an administrator's profiles.  TuneD 2.23 moved them from
#: /etc/tuned/<name> to /etc/tuned/profiles/<name> and stopped reading the old place
#: (a profile left there is not listed, and `tuned-adm profile` says it does not exist);
#: RHEL 8 and 9 keep the old directory whatever TuneD they ship.
TUNED_LEGACY_DIR = "/etc/tuned"
TUNED_PROFILES_DIR = "/etc/tuned/profiles"

#: Per release: the old directory up to `old_until`, the new one from `new_since`
#: (the TuneD each ships: Debian 12 2.20, 13 2.25; Ubuntu 24.04 2.21, 25.04 2.24;
#: Fedora 39 2.21, 41 2.24).  Releases between, or not listed, get both directories.
_TUNED_DIRS: dict[str, tuple[tuple[int, ...], tuple[int, ...] | None]] = {
    "debian": ((12,), (13,)),
    "ubuntu": ((24, 10), (25, 4)),
    "fedora": ((39,), (41,)),
    **{rhel: ((9,), None) for rhel in ("rhel", "centos", "rocky", "almalinux", "ol")},
}


def _version(text: str | None) -> tuple[int, ...] | None:
    parts = re.findall(r"[0-9]+", text or "")
    return tuple(int(p) for p in parts[:2]) or None


def tuned_profile_dirs(os: str | None) -> tuple[str, ...]:
    """The directories a host's TuneD reads profiles from: one where hostc knows the
    release's TuneD, both where it does not (each TuneD ignores the other's)."""
    both = (TUNED_LEGACY_DIR, TUNED_PROFILES_DIR)
    if os is None:
        return both
    try:
        os_id, version_id = split_os(os)
    except ValueError:
        return both
    known, version = _TUNED_DIRS.get(os_id), _version(version_id)
    if known is None or version is None:
        return both
    old_until, new_since = known
    if version[: len(old_until)] <= old_until:
        return (TUNED_LEGACY_DIR,)
    if new_since is not None and version[: len(new_since)] >= new_since:
        return (TUNED_PROFILES_DIR,)
    return both
