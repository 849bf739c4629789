"""Container-runtime knowledge: when a service's CPU affinity leaks into every pod.

The service manager's `CPUAffinity=` (system.conf.d) is a sched_setaffinity() mask that
every service inherits, the container runtime and the runc it starts included.

- Linux 6.2, commit da019032819a ("sched: Enforce user requested affinity"): a task
  keeps the user-requested mask when it moves into a cpuset; its CPUs become the
  intersection, where older kernels reset them to the cpuset.  So a container started by
  a runtime that inherited the housekeeping mask stays on the housekeeping CPUs, whatever
  its pod's cpuset says (containerd issue #11345: non-Guaranteed pods "CPU confined to
  systemd's CPUAffinity").
- The same reset before 6.2 hits every service, not PID 1 alone.  cpuset_attach()
  (kernel/cgroup/cpuset.c before 6.2) calls `set_cpus_allowed_ptr(task, cpus_attach)`
  with the cpuset's CPUs for every task it attaches, so once anything turns the cpuset
  controller on (a unit's `AllowedCPUs=`, the kubelet's pods, a container), each service
  systemd starts or restarts afterwards lands on its cgroup's cpuset, whatever mask it
  inherited from PID 1; turning the controller on at the root moves every task, PID 1's
  housekeeping `CPUAffinity=` included (da019032819a's message: writing "+cpuset" to the
  root cgroup's cgroup.subtree_control "will reset the cpus affinity of all the processes
  in the system").  Seen in a booted Debian 12, kernel 6.1, systemd 252 (review-outputs-4
  R1): with PID 1 put back, a service started later, a systemd-run unit and a restarted
  service all ran on every CPU.  So hostc confines the services by cpuset instead
  (`SERVICE_SLICES`), gives the workloads a slice of their own (`WORKLOAD_SLICE`), and
  hostc-tuning puts PID 1 (init.scope, in no slice) back; systemd re-applies
  `CPUAffinity=` to PID 1 only at a manager reload (src/core/main.c, MANAGER_RELOAD).
  No distribution backport of da019032819a is known to hostc: RHEL 9's 5.14 counts as
  before 6.2, and an unknown kernel too (the slices are right on any kernel).
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

from hostc.knowledge import kubelet
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

#: Every unit that starts pods, whatever the flavor (unit → True, in this order): each
#: runtime's unit (RUNTIME_UNITS) and each flavor's kubelet unit (`kubelet_unit`).
#: hostc's own units order themselves against all of them; an ordering against a unit
#: a host does not have is ignored (systemd.unit(5): Before=/After= only order units
#: that are started anyway).
KUBE_UNITS: Table[str, bool] = Table(
    {
        **{
            unit: (True, kubelet.RUNTIME_UNITS.source(rt))
            for rt, unit in kubelet.RUNTIME_UNITS.items()
        },
        "kubelet.service": (
            True,
            "kubernetes/release cmd/krel/templates/latest/kubelet/kubelet.spec: "
            "%{_unitdir}/kubelet.service (the kubeadm packages)",
        ),
        "rke2-server.service": (True, "rancher/rke2 bundle/lib/systemd/system/rke2-server.service"),
        "rke2-agent.service": (True, "rancher/rke2 bundle/lib/systemd/system/rke2-agent.service"),
        "k3s.service": (True, "k3s-io/k3s install.sh: SYSTEM_NAME k3s (server)"),
        "k3s-agent.service": (True, "k3s-io/k3s install.sh: SYSTEM_NAME k3s-agent"),
    }
)


#: The slices whose processes a cpuset of the housekeeping CPUs keeps there, on kernels
#: that reset a moved task's CPUs (slice → whose processes it holds).  The container
#: runtime is a system service.  The kubelet's pods are in neither: its node-allocatable
#: cgroup `kubepods` (`kubepods.slice` with the systemd cgroup driver) is made under its
#: --cgroup-root, "/" by default, beside system.slice (kubernetes
#: pkg/kubelet/cm/node_container_manager_linux.go, defaultNodeAllocatableCgroupName), so
#: the pods' own cpusets still place them.
SERVICE_SLICES: Table[str, str] = Table(
    {
        "system.slice": (
            "every system service",
            "systemd.special(5) system.slice: by default, all system services started by "
            "systemd are found in this slice",
        ),
        "user.slice": (
            "every user session and user manager",
            "systemd.special(5) user.slice: by default, all user processes and services "
            "started on behalf of the user, including the per-user systemd instance, are "
            "found in this slice",
        ),
    }
)

#: The workloads' slice (hostc's name).  One word: a dash in a slice's name is a level of
#: the tree (systemd.slice(5): "foo-bar.slice is a slice that is located within
#: foo.slice"), so it sits right under -.slice.  Its cpuset must hold every workload's
#: CPUs: a child's cpuset is clipped to its parent's, and one whose CPUs its parent does
#: not have gets the parent's (Documentation/admin-guide/cgroup-v2.rst, cpuset.cpus and
#: cpuset.cpus.effective: "treated just like an empty cpuset.cpus").
WORKLOAD_SLICE = "hostc.slice"

#: An ordinary service every systemd host runs, in system.slice: its CPUs are the ones
#: services get, which before 6.2 are their slice's cpuset, not PID 1's mask
#: (review-outputs-4 R1: PID 1 re-pinned, every later service on all CPUs).
SERVICE_PROBE = "systemd-journald.service"
#: Where the unified hierarchy shows a slice's cpuset (cgroup-v2.rst, cpuset.cpus).
SLICE_CPUSET = "/sys/fs/cgroup/{}/cpuset.cpus"

#: hostc's units that put the runtime settings in place before every KUBE_UNITS unit and
#: workload starts: its own tuning (runtime.owner = "systemd"), and the wait for TuneD's
#: profile (runtime.owner = "tuned", hostc.targets.tuned_order).  Named here, so the
#: targets that write them and the audit that reads their start order spell them once.
TUNING_UNIT = "hostc-tuning.service"
TUNED_READY_UNIT = "hostc-tuned-ready.service"


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
