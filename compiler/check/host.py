"""Host rules: what the release's systemd can do for the workloads (names are the
converter's: `spec.text.Name`)."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, warning
from hostc.knowledge import distro as osfacts
from hostc.resolve import Resolved
from hostc.topology.model import OsRelease


def _workload_release(r: Resolved) -> OsRelease | None:
    """The release whose systemd runs the workload drop-ins (None: no workload, or the
    release is unknown; a malformed one is resolve's to report)."""
    return r.host.os if r.spec.workload else None


def systemd_binds_memory(r: Resolved) -> Iterator[Diagnostic]:
    """The workload drop-ins bind memory with NUMAPolicy=/NUMAMask= (systemd ≥ 243)."""
    spec, rel = r.spec, _workload_release(r)
    if rel is None:
        return
    version = r.host.systemd
    if version is None or version >= osfacts.NUMA_POLICY_SINCE:
        return
    yield warning(
        at("host", "os") if spec.host.os is not None else at("host", "topology"),
        f"{rel.id} {rel.version_id} ships systemd {version}, which ignores NUMAPolicy= and "
        f"NUMAMask= (systemd {osfacts.NUMA_POLICY_SINCE}): the workloads get their CPUs, "
        "but their memory is not bound to the GPUs' node",
        hint="start the servers under `numactl --membind` (hostc plan prints the line), "
        "or boot a newer release",
    )


def systemd_contains_workloads(r: Resolved) -> Iterator[Diagnostic]:
    """AllowedCPUs=/AllowedMemoryNodes= (systemd ≥ 244, unified cgroup hierarchy) keep a
    workload on its CPUs and nodes; where the release cannot, they are left out and the
    placement is only where the service starts."""
    spec, rel = r.spec, _workload_release(r)
    if rel is None:
        return
    version = r.host.systemd
    old = version is not None and version < osfacts.ALLOWED_CPUS_SINCE
    if not old and r.host.unified_cgroup is not False:
        return
    why = (
        f"ships systemd {version} (AllowedCPUs= needs {osfacts.ALLOWED_CPUS_SINCE})"
        if old
        else "boots the hybrid (v1) cgroup hierarchy, where systemd's cpuset settings do nothing"
    )
    yield warning(
        at("host", "os") if spec.host.os is not None else at("host", "topology"),
        f"{rel.id} {rel.version_id} {why}: the workloads start on their CPUs and nodes, but "
        "a runtime that calls sched_setaffinity or set_mempolicy can move off them",
        hint="boot with systemd.unified_cgroup_hierarchy=1, or a newer release",
    )
