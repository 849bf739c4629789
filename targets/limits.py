"""limits: both places a limit must be raised, PAM sessions and systemd services.

pam_limits never applies to services and systemd never reads limits.d, so
each limit is written twice from the same Plan entry.  `*` lines do not
apply to root, hence the explicit root lines.
"""

from __future__ import annotations

from hostc.artifact import Artifact
from hostc.plan import Limit, Plan
from hostc.targets._render import render

PAM_PATH = "/etc/security/limits.d/90-hostc.conf"
SYSTEMD_PATH = "/etc/systemd/system.conf.d/90-hostc-limits.conf"

_SYSTEMD_KEY = {"nofile": "DefaultLimitNOFILE", "memlock": "DefaultLimitMEMLOCK"}


def systemd_value(limit: Limit) -> str:
    """systemd takes bytes (memlock) and `infinity`; limits.d takes KiB and `unlimited`."""
    if limit.value == "unlimited":
        return "infinity"
    if limit.item == "memlock":
        return f"{int(limit.value)}K"
    return f"{limit.value}:{limit.value}"


def emit(plan: Plan) -> list[Artifact]:
    rows = [(lim, _SYSTEMD_KEY[lim.item], systemd_value(lim)) for lim in plan.limits]
    return [
        Artifact("limits", PAM_PATH, render("limits.conf.j2", plan=plan, limits=plan.limits)),
        Artifact("limits", SYSTEMD_PATH, render("system-limits.conf.j2", plan=plan, rows=rows)),
    ]
