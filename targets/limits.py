"""limits: both places a limit must be raised, PAM sessions and systemd services.

pam_limits never applies to services and systemd never reads limits.d, so
each limit is written twice from the same Plan entry.  `*` lines do not
apply to root, hence the explicit root lines.  memlock is the exception on the
services' side: an unlimited default would let every service (cups, sshd …) lock
all of RAM, so it goes only to the services that pin GPU/RDMA buffers: the
workloads (their drop-ins, the systemd target) and, on a kubelet node, the
container runtime whose containers do.  Sessions keep it (RDMA users).
"""

from __future__ import annotations

from hostc.artifact import Action, Activation, Artifact, file
from hostc.plan import UNLIMITED, Limit, Plan
from hostc.targets._render import render
from hostc.vocab import Flavor

PAM_PATH = "/etc/security/limits.d/90-hostc.conf"
SYSTEMD_PATH = "/etc/systemd/system.conf.d/90-hostc-limits.conf"
#: Limits every service gets by default; memlock is scoped to the services that need it.
MANAGER_ITEMS = ("nofile",)

#: systemd's name for each limit item (systemd.exec(5), LimitNOFILE= … in system.conf).
SYSTEMD_KEY = {"nofile": "DefaultLimitNOFILE", "memlock": "DefaultLimitMEMLOCK"}


def pam_value(limit: Limit) -> str:
    return str(limit.value)


#: Soft limit systemd advises for services' open files: select() breaks above fd 1023,
#: so programs that need more raise their soft limit up to the hard one themselves.
SERVICE_NOFILE_SOFT = 1024


def systemd_value(limit: Limit, *, nofile_soft: int | None = SERVICE_NOFILE_SOFT) -> str:
    """systemd takes sizes with a unit suffix and `infinity`; limits.d takes KiB and `unlimited`.

    `nofile_soft` is the soft open-files limit to pair with the hard one (None: the same
    as the hard one, for a GPU server that wants every descriptor from the start)."""
    if limit.value == UNLIMITED:
        return "infinity"
    if limit.item == "memlock":
        return f"{limit.value}K"
    if nofile_soft is None:
        return str(limit.value)
    return f"{nofile_soft}:{limit.value}"


def container_runtime(plan: Plan) -> str | None:
    """The unit whose children are the containers on a kubelet node: containerd for
    kubeadm; RKE2 and k3s run their containerd under the unit that runs the kubelet."""
    k = plan.kubelet
    if k is None:
        return None
    return "containerd.service" if k.flavor is Flavor.KUBEADM else k.unit


def runtime_dropin_path(unit: str) -> str:
    return f"/etc/systemd/system/{unit}.d/90-hostc-limits.conf"


def _runtime_dropin(plan: Plan, unit: str, memlock: Limit) -> Artifact:
    text = render(
        "runtime-limits.conf.j2",
        plan=plan,
        unit=unit,
        memlock=memlock,
        value=systemd_value(memlock),
    )
    return file(
        "limits",
        runtime_dropin_path(unit),
        text,
        Activation(Action.DAEMON_RELOAD),
        Activation(Action.NEXT_START, unit),
    )


def emit(plan: Plan) -> list[Artifact]:
    rows = [
        (lim, SYSTEMD_KEY[lim.item], systemd_value(lim))
        for lim in plan.limits
        if lim.item in MANAGER_ITEMS
    ]
    pam = [(lim, pam_value(lim)) for lim in plan.limits]
    out = [
        file(
            "limits",
            PAM_PATH,
            render("limits.conf.j2", plan=plan, limits=pam),
            Activation(Action.NEW_SESSION),
        )
    ]
    if rows:
        out.append(
            file(
                "limits",
                SYSTEMD_PATH,
                render("system-limits.conf.j2", plan=plan, rows=rows),
                Activation(Action.DAEMON_REEXEC),
            )
        )
    memlock, unit = plan.limit("memlock"), container_runtime(plan)
    if memlock is not None and unit is not None:
        out.append(_runtime_dropin(plan, unit, memlock))
    return out
