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

from hostc.artifact import Action, Activation
from hostc.plan.model import Limit, Plan
from hostc.targets._emitter import Emitter
from hostc.targets._escape import oneline, word
from hostc.targets._render import Row, config, header
from hostc.targets._systemd_syntax import MANAGER_KEY, limit_value

PAM_PATH = "/etc/security/limits.d/90-hostc.conf"
SYSTEMD_PATH = "/etc/systemd/system.conf.d/90-hostc-limits.conf"
#: Limits every service gets by default; memlock is scoped to the services that need it.
MANAGER_ITEMS = ("nofile",)


def container_runtime(plan: Plan) -> str | None:
    """The unit whose children are the containers on a kubelet node: crio or containerd
    for kubeadm; RKE2 and k3s run their containerd under the unit that runs the kubelet
    (`hostc.knowledge.kubelet.runtime_unit`)."""
    return None if plan.kubelet is None else plan.kubelet.runtime_unit


def runtime_dropin_path(unit: str) -> str:
    return f"/etc/systemd/system/{unit}.d/90-hostc-limits.conf"


def _runtime_dropin(plan: Plan, unit: str, memlock: Limit, out: Emitter) -> None:
    row = Row(memlock.reason, word(limit_value(memlock)))
    text = config(header(plan), "runtime-limits.conf.j2", unit=oneline(unit), row=row)
    out.file(
        runtime_dropin_path(unit),
        text,
        Activation(Action.DAEMON_RELOAD),
        Activation(Action.NEXT_START, unit),
    )


def manager_reread(plan: Plan) -> Activation:
    """How the manager takes system.conf.d: `daemon-reload` rereads it and applies the
    defaults to units started afterwards (src/core/main.c, MANAGER_RELOAD:
    parse_configuration, set_manager_defaults; systemd-system.conf(5)), no re-exec
    needed; except on a kubelet node, where a reload can take running containers' GPUs
    away (NVIDIA/nvidia-docker #1730): there hostc reloads nothing for it, and the next
    boot rereads it."""
    if plan.kubelet is None:
        return Activation(Action.DAEMON_RELOAD)
    return Activation(Action.NEXT_BOOT, "the service manager's defaults")


def emit(plan: Plan, out: Emitter) -> None:
    host = header(plan)
    pam = tuple(Row(lim.reason, f"{word(lim.item):<8} {word(lim.value)}") for lim in plan.limits)
    out.file(PAM_PATH, config(host, "limits.conf.j2", rows=pam), Activation(Action.NEW_SESSION))
    manager = tuple(
        Row(lim.reason, f"{word(MANAGER_KEY[lim.item])}={word(limit_value(lim))}")
        for lim in plan.limits
        if lim.item in MANAGER_ITEMS
    )
    if manager:
        text = config(host, "system-limits.conf.j2", rows=manager)
        out.file(SYSTEMD_PATH, text, manager_reread(plan))
    memlock, unit = plan.limit("memlock"), container_runtime(plan)
    if memlock is not None and unit is not None:
        _runtime_dropin(plan, unit, memlock, out)
