"""The host's facts, resolved once from the spec and its snapshot: arch, CPU vendor,
kernel release, distribution and what the distribution's release ships.  Arch and
vendor are typed here (`Arch`, `Vendor`): the snapshot spells open sets, everything
after resolve compares members.

The spec's `host.kernel` and `host.os` win over the snapshot's `uname -r` and
os-release; a value that cannot be read is unknown here (None) and the one
diagnostic about it is resolve's.
"""

from __future__ import annotations

import functools
import re

import attrs

from hostc.diagnostics import Diagnostic, at, error
from hostc.knowledge import distro as osfacts
from hostc.knowledge.arch import Arch
from hostc.knowledge.vendor import Vendor
from hostc.plan.base import OsFamily
from hostc.provenance import Source, key, topology
from hostc.record import Record
from hostc.spec.model import HostSpec
from hostc.topology.model import OsRelease, Topology
from hostc.vocab import Role

_VERSION = re.compile(r"^([0-9]+)\.([0-9]+)")


@attrs.frozen(repr=False, eq=False)
class ResolvedHost(Record):
    """What the host is, as check and lower both read it (None: not known)."""

    name: str  # `host.name`, the node class the comments and file names carry
    role: Role  # `host.role`
    arch: Arch  # the snapshot's `uname -m` spelling typed (OTHER: a name hostc does not know)
    cpu_vendor: Vendor | None  # the snapshot's vendor typed (None: it does not say)
    kernel_release: str | None  # as given: host.kernel, else the snapshot's uname -r
    kernel: tuple[int, int] | None  # its (major, minor)
    os: OsRelease | None  # host.os (ID-VERSION_ID), else the snapshot's os-release
    os_source: Source  # where `os` came from: `host.os`, else the snapshot
    os_id: str | None  # ID-VERSION_ID, as the Plan and the distribution tables name it
    os_family: OsFamily
    systemd: int | None  # the release's systemd
    unified_cgroup: bool | None  # whether it boots the unified cgroup hierarchy
    raises_nr_open: bool | None  # whether its systemd raises fs.nr_open at boot
    amd_pstate: tuple[int, int] | None  # the upstream release whose amd_pstate it has


@functools.lru_cache(maxsize=256)
def kernel_version(release: str | None) -> tuple[int, int] | None:
    """(major, minor) of a release string; a pure function of the text, asked per build."""
    if not release:
        return None
    m = _VERSION.match(release.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def os_release(spec: HostSpec, topo: Topology) -> OsRelease | None:
    """`host.os` (ID-VERSION_ID) wins over the snapshot's os-release (ValueError when
    `host.os` is not ID-VERSION_ID)."""
    if spec.host.os is None:
        return topo.os
    os_id, version = osfacts.split_os(spec.host.os)
    return OsRelease(os_id, version)


def os_of(rel: OsRelease | None) -> tuple[str | None, OsFamily]:
    if rel is None:
        return None, OsFamily.UNKNOWN
    os_id = rel.id + (f"-{rel.version_id}" if rel.version_id else "")
    return os_id, rel.family


def systemd_facts(rel: OsRelease | None) -> tuple[int | None, bool | None, bool | None]:
    """The release's systemd, whether it boots the unified cgroup hierarchy and whether
    its systemd raises fs.nr_open, from the distribution tables (None: not known)."""
    if rel is None:
        return None, None, None
    return (
        osfacts.systemd_version(rel.id, rel.version_id),
        osfacts.unified_cgroup(rel.id, rel.version_id),
        osfacts.raises_nr_open(rel.id, rel.version_id),
    )


def resolve_host(spec: HostSpec, topo: Topology) -> tuple[ResolvedHost, list[Diagnostic]]:
    found: list[Diagnostic] = []
    try:
        rel = os_release(spec, topo)
    except ValueError as e:
        rel = None
        found.append(
            error(
                at("host", "os"), str(e), hint='e.g. "ubuntu-22.04", "rhel-9.4", "fedora-coreos-40"'
            )
        )
    if spec.host.kernel is not None and kernel_version(spec.host.kernel) is None:
        found.append(
            error(
                at("host", "kernel"),
                f"{spec.host.kernel!r} is not a kernel release (expected e.g. 6.8 or "
                "6.8.0-45-generic)",
                hint=f"the snapshot says {topo.kernel}" if topo.kernel else None,
            )
        )
    release = spec.host.kernel or topo.kernel
    kernel = kernel_version(release)
    os_id, family = os_of(rel)
    systemd, unified, raises = systemd_facts(rel)
    host = ResolvedHost(
        name=spec.host.name,
        role=spec.host.role,
        arch=Arch.from_uname(topo.arch),
        cpu_vendor=Vendor.of(topo.cpu_vendor),
        kernel_release=release,
        kernel=kernel,
        os=rel,
        os_source=key("host", "os") if spec.host.os is not None else topology("os"),
        os_id=os_id,
        os_family=family,
        systemd=systemd,
        unified_cgroup=unified,
        raises_nr_open=raises,
        amd_pstate=osfacts.feature_release("amd_pstate", os_id, kernel),
    )
    return host, found
