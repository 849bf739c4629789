"""Distribution knowledge as data: what the OS a host boots ships, where it decides output.

One row per release, the version its main repository ships (from the distribution's
own package lists: Ubuntu's and Debian's package pages, RHEL's release notes).
Releases are keyed as os-release writes them: ID and VERSION_ID, RHEL-like ones by
major version.  The OS family (what decides the delivery and the boot configuration)
carries its own facts: `OsFamily.boot_carrier`, `.bootloader_argv`, `.initramfs_argv`.
"""

from __future__ import annotations

import re

from hostc.knowledge.table import Table
from hostc.knowledge.tuned_options import TUNED_OPTION_SINCE

#: The distributions rebuilt from RHEL's sources, keyed by major version like RHEL.
RHEL_LIKE: Table[str, bool] = Table.members(
    ("rhel", "centos", "rocky", "almalinux", "ol"),
    "os-release(5) ID= of RHEL and its rebuilds (CentOS Stream, Rocky, AlmaLinux, Oracle "
    'Linux), each ID_LIKE="rhel …"',
)
_BY_MAJOR = {*RHEL_LIKE, "debian"}

_LP = "Ubuntu {} archive: systemd {} (public dpkg/apt logs)"
_DEB = "Debian {} main: systemd {}"

#: systemd per release.  NUMAPolicy= and NUMAMask= (a workload's memory binding)
#: arrived in systemd 243 (systemd NEWS); older managers log "Unknown key" and start
#: the service unbound.  RHEL 9.0 and 9.1 shipped systemd 250 (imports/c9/systemd-250-6.el9_0,
#: -250-12.el9_1), 9.2 on 252 (imports/c9/systemd-252-13.el9_2): the row holds 252, and no
#: threshold hostc gates on (240, 243, 244) lies between the two.
SYSTEMD: Table[tuple[str, str], int] = Table(
    {
        ("ubuntu", "18.04"): (237, _LP.format("bionic", "237-3ubuntu10.*")),
        ("ubuntu", "20.04"): (245, _LP.format("focal", "245.4-4ubuntu3.*")),
        ("ubuntu", "22.04"): (249, _LP.format("jammy", "249.11-0ubuntu3.*")),
        ("ubuntu", "24.04"): (255, _LP.format("noble", "255.4-1ubuntu8.*")),
        ("debian", "10"): (241, _DEB.format(10, "241-7~deb10u7 (manpages.debian.org/buster)")),
        ("debian", "11"): (247, _DEB.format(11, "247.3-7+deb11u5 (apt-cache policy)")),
        ("debian", "12"): (252, _DEB.format(12, "252.39-1~deb12u2 (apt-cache policy)")),
        **{
            (rhel, "8"): (239, "RHEL 8 systemd-239 (8.10 BaseOS: 239-82.el8_10)")
            for rhel in RHEL_LIKE
        },
        **{
            (rhel, "9"): (252, "git.centos.org rpms/systemd: 9.2+ 252-*.el9_2 (9.0/9.1: 250)")
            for rhel in RHEL_LIKE
        },
    }
)

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
NR_OPEN_NOT_RAISED: Table[str, bool] = Table(
    {
        "debian": (True, "Debian 12 /lib/systemd/systemd 252.39-1~deb12u2: no fs.nr_open strings"),
        "ubuntu": (True, "Ubuntu builds systemd from Debian's packaging (debian/rules)"),
        **{
            suse: (True, "openSUSE systemd.spec: -Dbump-proc-sys-fs-nr-open=false")
            for suse in ("opensuse-leap", "opensuse-tumbleweed", "sles")
        },
    }
)


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
UNIFIED_CGROUP_SINCE: Table[str, tuple[int, ...]] = Table(
    {
        "debian": ((11,), "Debian 11 (bullseye) release notes: cgroup v2 by default"),
        "ubuntu": ((21, 10), "Ubuntu 21.10 release notes: unified cgroup hierarchy"),
        "fedora": ((31,), "Fedora 31 change CGroupsV2"),
        **{rhel: ((9,), "RHEL 9 release notes: cgroup v2 is the default") for rhel in RHEL_LIKE},
    }
)


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
#: (the TuneD each ships, TUNED below: Debian 12 2.20, 13 2.25; Ubuntu 24.04 2.21,
#: 25.04 2.24; Fedora 39 2.21, 41 2.24).  Releases between, or not listed, get both.
_TUNED_DIRS_SRC = (
    "redhat-performance/tuned tuned.spec %changelog 2.23.0-1 (2024-06-06) 'migrated profiles "
    "to /etc/tuned/profiles/', tuned/consts.py CFG_DEF_PROFILE_DIRS; {}"
)
TUNED_DIRS: Table[str, tuple[tuple[int, ...], tuple[int, ...] | None]] = Table(
    {
        "debian": (
            ((12,), (13,)),
            _TUNED_DIRS_SRC.format("Debian 12 tuned 2.20.0-1, 13 2.25.1-1 (apt-cache policy)"),
        ),
        "ubuntu": (
            ((24, 10), (25, 4)),
            _TUNED_DIRS_SRC.format("Ubuntu 24.04 2.21/2.22, 25.04 2.24 [unverified], see TUNED"),
        ),
        "fedora": (
            ((39,), (41,)),
            _TUNED_DIRS_SRC.format("Fedora 39 2.21 at release [updates unverified], 41 2.24.0"),
        ),
        **{
            rhel: (
                ((9,), None),
                "RHEL 8 and 9 keep /etc/tuned whatever TuneD they ship [unverified: upstream "
                "tuned.spec v2.24.0 has no RHEL case for profile_dirs; RHEL dist-git not read]",
            )
            for rhel in RHEL_LIKE
        },
    }
)


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
    known, version = TUNED_DIRS.get(os_id), _version(version_id)
    if known is None or version is None:
        return both
    old_until, new_since = known
    if version[: len(old_until)] <= old_until:
        return (TUNED_LEGACY_DIR,)
    if new_since is not None and version[: len(new_since)] >= new_since:
        return (TUNED_PROFILES_DIR,)
    return both


#: The TuneD each release's main repository ships (the same package lists as the
#: profile directories above; Debian 12's 2.20.0 is also the reference host's,
#: `apt-cache policy tuned`).  Releases not listed are unknown: an option that needs
#: a newer TuneD is then left out or written another way, never guessed.
TUNED: Table[tuple[str, str], tuple[int, int, int]] = Table(
    {
        ("debian", "12"): (
            (2, 20, 0),
            "Debian 12 (bookworm) main tuned 2.20.0-1, apt-cache policy tuned",
        ),
        ("debian", "13"): ((2, 25, 1), "Debian 13 (trixie) main tuned 2.25.1-1, apt-cache policy"),
        ("ubuntu", "24.04"): (
            (2, 21, 0),
            "noble tuned 2.21 [unverified: no Ubuntu listing found; Debian's changelog has "
            "2.21.0-1 2023-12-29, 2.21.0-2 2024-02-18, 2.22.0-1 2024-02-22: noble 2.21 or 2.22]",
        ),
        ("ubuntu", "25.04"): (
            (2, 24, 0),
            "plucky tuned 2.24 [unverified: no Ubuntu listing found; Debian's changelog has "
            "2.24.0-1 2024-10-29, 2.24.1-1 2024-12-04, 2.25.1-1 2025-04-01: plucky 2.24.x]",
        ),
        ("fedora", "39"): (
            (2, 21, 0),
            "Fedora 39 (2023-11-07) tuned 2.21.0, tagged v2.21.0 2023-08-29 [unverified: "
            "no Fedora 39 listing found; its updates may carry 2.22-2.24]",
        ),
        ("fedora", "41"): (
            (2, 24, 0),
            "packages.fedoraproject.org/pkgs/tuned: Fedora 41 2.24.0-4.fc41 (later 2.25.1-2.fc41)",
        ),
        # the oldest TuneD of any RHEL 9 minor: the row gates options, never guesses newer
        **{
            (rhel, "9"): (
                (2, 16, 0),
                "RHEL 9 dist-git tuned.spec %changelog (the el9 sources as OpenELA imports "
                "them, github.com/openela-main/tuned branch el9): 2.16.0-1 (2021-07-21) "
                "replaced the 2.15.0 builds of the Fedora 34 fork ten months before RHEL "
                "9.0 (GA 2022-05), 2.18.0-1 is of 2022-02-09; 9.2 ships 2.20.0-1.el9, 9.3 "
                "2.21.0-1.el9_3 (branches el-9.2, el-9.3): every RHEL 9 minor ships 2.16.0 "
                "or later",
            )
            for rhel in RHEL_LIKE
        },
    }
)


def tuned_version(os: str | None) -> tuple[int, int, int] | None:
    """The TuneD a release ships (None: hostc does not know it)."""
    if os is None:
        return None
    try:
        os_id, version_id = split_os(os)
    except ValueError:
        return None
    if version_id is None:
        return None
    key = version_id.split(".")[0] if os_id in _BY_MAJOR else version_id
    return TUNED.get((os_id, key))


#: Where the tuned package does not depend on the package that ships the `perf` Python
#: module, which TuneD's [scheduler] and [irqbalance] plugins import (plugin_scheduler.py,
#: plugin_irqbalance.py): without it both plugins fail to load ("failed to initialize
#: plugin scheduler" in tuned.log), their options are not applied, and `tuned-adm verify`
#: still succeeds.  Debian 12's tuned 2.20.0-1 recommends only linux-cpupower; the module
#: is linux-perf's (found in a booted Debian 12 VM, tests/test_vm_tuned.py).  Fedora's
#: and RHEL's tuned require python3-perf.
TUNED_PERF_PACKAGE: Table[str, str] = Table(
    {"debian": ("linux-perf", "Debian 12 tuned 2.20.0-1 Recommends; tests/test_vm_tuned.py")}
)


def tuned_perf_package(os: str | None) -> str | None:
    """The package a host must add for TuneD's perf-using plugins (None: tuned brings it,
    or hostc does not know the release's packaging)."""
    if os is None:
        return None
    try:
        os_id, _ = split_os(os)
    except ValueError:
        return None
    return TUNED_PERF_PACKAGE.get(os_id)


def tuned_reads(os: str | None, option: str) -> bool:
    """Whether the host's TuneD reads `option` (False where its version is unknown)."""
    ver = tuned_version(os)
    return ver is not None and ver >= TUNED_OPTION_SINCE[option]


#: Upstream kernel features a distribution kernel carries before its version number
#: says so: (feature, OS ID) → (first distribution release with it, the upstream release
#: whose behaviour it has).  Gating on the kernel number alone misses them.
KERNEL_BACKPORTS: Table[tuple[str, str], tuple[tuple[int, ...], tuple[int, int]]] = Table(
    {
        ("amd_pstate", rhel): (
            ((9, 3), (6, 4)),
            "docs.redhat.com RHEL 9 9.3_release_notes/kernel_parameters_changes (ch. 5, New "
            "kernel parameters): amd_pstate=[X86] disable|passive|active (amd_pstate_epp)|guided, "
            "guided being upstream 6.4's; CentOS Stream 9 kernel MR 2548 (bz 2088121)",
        )
        for rhel in RHEL_LIKE
    }
)


def feature_release(
    feature: str, os: str | None, kernel: tuple[int, int] | None
) -> tuple[int, int] | None:
    """The upstream release whose `feature` this host's kernel has: its own number, or a
    newer one where the distribution release backports it (None: kernel unknown)."""
    if kernel is None or os is None:
        return kernel
    try:
        os_id, version_id = split_os(os)
    except ValueError:
        return kernel
    version = _version(version_id)
    row = KERNEL_BACKPORTS.get((feature, os_id))
    if row is not None and version is not None and version >= row[0]:
        return max(kernel, row[1])
    return kernel


#: The irqbalance each distribution release ships.  IRQBALANCE_BANNED_CPULIST is read
#: since irqbalance 1.8.0; 1.9 still reads the old hex IRQBALANCE_BANNED_CPUS first
#: and logs "IRQBALANCE_BANNED_CPUS is discarded, Use IRQBALANCE_BANNED_CPULIST
#: instead" (cputree.c setup_banned_cpus).  RHEL 8 minors shipped 1.4 to 1.9
#: [unverified per minor], so RHEL 8 and unknown releases get the hex variable, which
#: every version reads.
IRQBALANCE: Table[tuple[str, str], tuple[int, int, int]] = Table(
    {
        ("ubuntu", "20.04"): (
            (1, 6, 0),
            "focal irqbalance 1.6.0-3ubuntu1 (a 20.04 dpkg listing, with systemd 245.4-4ubuntu3)",
        ),
        ("ubuntu", "22.04"): (
            (1, 8, 0),
            "jammy irqbalance 1.8.0-1build1, updates 1.8.0-1ubuntu0.2 (22.04 dpkg/apt logs)",
        ),
        ("ubuntu", "24.04"): (
            (1, 9, 3),
            "noble irqbalance 1.9.3-1 (apt-cache show, 24.04 pre-release; LP bug 2046470)",
        ),
        ("debian", "11"): ((1, 7, 0), "Debian 11 (bullseye) main irqbalance 1.7.0-1, apt-cache"),
        ("debian", "12"): (
            (1, 9, 2),
            "Debian 12 (bookworm) main irqbalance 1.9.2-1, apt-cache (the reference host's)",
        ),
        ("rhel", "9"): (
            (1, 9, 0),
            "irqbalance-1.9.0-3.el9 in a RHEL 9.1 (el9_1) package list [9.0's unverified]",
        ),
    }
)
IRQBALANCE_CPULIST_SINCE = (1, 8, 0)


def irqbalance_version(name: str, version: str | None) -> tuple[int, int, int] | None:
    """The irqbalance the OS ships, by os-release `ID` and `VERSION_ID` (None: unknown).
    Taken apart by the caller: an ID may hold a dash (`fedora-coreos`)."""
    if version is None:
        return None
    if name in RHEL_LIKE:
        name, version = "rhel", version.split(".")[0]
    if name == "debian":
        version = version.split(".")[0]
    return IRQBALANCE.get((name, version))
