"""limits: both places a limit must be raised, PAM sessions and systemd services.

pam_limits never applies to services and systemd never reads limits.d, so
each limit is written twice from the same Plan entry.  `*` lines do not
apply to root, hence the explicit root lines.
"""

from __future__ import annotations

from hostc.artifact import Action, Activation, Artifact, file
from hostc.plan import UNLIMITED, Limit, Plan
from hostc.targets._render import render

PAM_PATH = "/etc/security/limits.d/90-hostc.conf"
SYSTEMD_PATH = "/etc/systemd/system.conf.d/90-hostc-limits.conf"

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


def emit(plan: Plan) -> list[Artifact]:
    rows = [(lim, SYSTEMD_KEY[lim.item], systemd_value(lim)) for lim in plan.limits]
    pam = [(lim, pam_value(lim)) for lim in plan.limits]
    return [
        file(
            "limits",
            PAM_PATH,
            render("limits.conf.j2", plan=plan, limits=pam),
            Activation(Action.NEW_SESSION),
        ),
        file(
            "limits",
            SYSTEMD_PATH,
            render("system-limits.conf.j2", plan=plan, rows=rows),
            Activation(Action.DAEMON_REEXEC),
        ),
    ]
