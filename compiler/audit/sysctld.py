"""Which sysctl.d file wins for a key, in systemd-sysctl's order.

sysctl.d(5): every `*.conf` of the directories below is sorted by file name
regardless of its directory; a name in an earlier directory hides the same name
in a later one; when several files set a key, the one sorting last wins.
procps' `sysctl --system` then reads /etc/sysctl.conf last (Debian's systemd
links /etc/sysctl.d/99-sysctl.conf to it).  A key is spelled with `.` or `/`
separators; a leading `-` only silences errors.  So hostc's 90-hostc.conf loses
to any 99-*.conf that sets the same key: audit names the file that won.
"""

from __future__ import annotations

from hostc.audit.host import HostReader

#: systemd-sysctl's directories, most important first (sysctl.d(5), systemd ≥ 246
#: adds /usr/local/lib/sysctl.d; /lib/sysctl.d on split-usr systems).
SYSCTL_DIRS = (
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/lib/sysctl.d",
)
SYSCTL_CONF = "/etc/sysctl.conf"


def normal_key(key: str) -> str:
    """`kernel/domainname` and `kernel.domainname` are the same key (sysctl.d(5))."""
    key = key.strip().lstrip("-").strip()
    return key.replace("/", ".") if "/" in key.partition(".")[0] or "." not in key else key


def files_in_order(host: HostReader) -> list[str]:
    """The files systemd-sysctl reads, in the order it applies them."""
    chosen: dict[str, str] = {}
    for d in SYSCTL_DIRS:
        for name in host.listdir(d):
            if name.endswith(".conf") and name not in chosen:
                chosen[name] = f"{d}/{name}"
    return [chosen[n] for n in sorted(chosen)] + [SYSCTL_CONF]


def assignments(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        out[normal_key(key)] = " ".join(value.split())
    return out


def table(host: HostReader) -> dict[str, tuple[str, str]]:
    """key → (file, value) of its last assignment, built once per host.

    Each distinct file is decoded and parsed once, and merged once, at the place of
    its last name (the winner of a key is the last file that sets it): a thousand
    hard links to one large file cost one parse and one merge, not a thousand.
    """
    memo = host.memo.get("sysctl.d")
    if isinstance(memo, dict):
        return memo
    last: dict[int, tuple[str, bytes]] = {}  # by file's bytes: its last path
    for path in files_in_order(host):
        data = host.raw(path)
        if data is not None:
            last.pop(id(data), None)
            last[id(data)] = (path, data)
    found: dict[str, tuple[str, str]] = {}
    for path, data in last.values():  # in the order of each file's last place
        for key, value in assignments(data.decode("utf-8", "replace")).items():
            found[key] = (path, value)
    host.memo["sysctl.d"] = found
    return found


def winner(host: HostReader, key: str) -> tuple[str, str] | None:
    """(file, value) of the last assignment of `key`; None when no file sets it."""
    return table(host).get(key)
