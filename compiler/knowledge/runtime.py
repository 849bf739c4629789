"""Container-runtime knowledge: when a service's CPU affinity leaks into every pod.

The service manager's `CPUAffinity=` (system.conf.d) is a sched_setaffinity() mask that
every service inherits, the container runtime and the runc it starts included.

- Linux 6.2, commit da019032819a ("sched: Enforce user requested affinity"): a task
  keeps the user-requested mask when it moves into a cpuset; its CPUs become the
  intersection, where older kernels reset them to the cpuset.  So a container started by
  a runtime that inherited the housekeeping mask stays on the housekeeping CPUs, whatever
  its pod's cpuset says (containerd issue #11345: non-Guaranteed pods "CPU confined to
  systemd's CPUAffinity").
- The same reset before 6.2 hits PID 1: the first unit with `AllowedCPUs=` makes systemd
  enable the cpuset controller, every task moves into a new cpuset and loses its mask, so
  PID 1's housekeeping `CPUAffinity=` becomes every CPU, and so does every service it
  starts from then on (seen in a booted Debian 12, kernel 6.1: hostc's VM test of
  `hostc audit`).  systemd re-applies `CPUAffinity=` only on a daemon-reload, so the
  workload drop-ins put PID 1 back themselves (`targets.systemd._pid1_repin`).
- runc resets the inherited mask itself from v1.3.1 and v1.2.7 ("libct: reset CPU
  affinity by default": PR #4858, backports #4865 to 1.3 and #4869 to 1.2; rancher/rke2
  PR #8852 bumped runc for it).  Distribution runc packages older than those keep the bug.
- systemd 244 (systemd.resource-control(5): `AllowedCPUs=` "version-info v244", "supported
  only with the unified control group hierarchy"): confines a unit through the cgroup-v2
  cpuset, which children leave when they move to another cgroup, unlike an affinity mask.
  (RHEL 8's systemd 239 carries a backport; hostc gates on the upstream number and leaves
  it out there.)
"""

from __future__ import annotations

from hostc.knowledge.table import Table

#: The first kernel whose cpuset attach keeps a task's requested affinity (da019032819a).
KEEPS_REQUESTED_AFFINITY = (6, 2)

#: runc releases that reset an inherited affinity, per release line: (major, minor) → patch.
RUNC_RESETS_AFFINITY: Table[tuple[int, int], int] = Table(
    {
        (1, 2): (7, "opencontainers/runc PR #4869 (backport of #4858), released in v1.2.7"),
        (1, 3): (1, "opencontainers/runc PR #4865 (backport of #4858), released in v1.3.1"),
    }
)

#: systemd's `AllowedCPUs=` (cgroup-v2 cpuset) arrived in 244.
ALLOWED_CPUS_SINCE = 244


def kernel_keeps_affinity(kernel: tuple[int, int] | None) -> bool | None:
    """Whether a kernel release intersects a moved task's requested mask with its cpuset
    (None: the release is unknown)."""
    return None if kernel is None else kernel >= KEEPS_REQUESTED_AFFINITY


def runc_resets_affinity(version: tuple[int, int, int]) -> bool:
    """Whether a runc release resets the affinity it inherited before starting a container."""
    major, minor, patch = version
    if (major, minor) in RUNC_RESETS_AFFINITY:
        return patch >= RUNC_RESETS_AFFINITY[(major, minor)]
    return (major, minor) > max(RUNC_RESETS_AFFINITY)
