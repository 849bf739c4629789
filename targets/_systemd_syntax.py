"""How the Plan's values are spelled in systemd's own syntax, where more than one target
writes them (limits, systemd, kubelet): a target never imports another target."""

from __future__ import annotations

from hostc.plan.model import UNLIMITED, Limit

#: systemd's name for each limit item as every service's default (system.conf(5)).
MANAGER_KEY = {"nofile": "DefaultLimitNOFILE", "memlock": "DefaultLimitMEMLOCK"}
#: systemd.exec(5) per-service names of the same limits.
SERVICE_KEY = {"nofile": "LimitNOFILE", "memlock": "LimitMEMLOCK"}

#: Soft limit systemd advises for services' open files: select() breaks above fd 1023,
#: so programs that need more raise their soft limit up to the hard one themselves.
SERVICE_NOFILE_SOFT = 1024


def limit_value(limit: Limit, *, nofile_soft: int | None = SERVICE_NOFILE_SOFT) -> str:
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


def env_assignment(name: str, value: str) -> str:
    """One `Environment=` word: double-quoted, `\\` and `"` escaped, `%` doubled (specifiers)."""
    inner = f"{name}={value}".replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{inner}"'
