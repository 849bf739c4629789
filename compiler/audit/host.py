"""The host audit looks at: a live root, a directory copy, or a capture archive.

Every read is recorded (path → bytes), so that `hostc probe --capture --spec` can
store exactly what audit reads and an audit of the capture elsewhere reads the
same bytes.  State that only a command can show (`systemctl show`) is stored in
the capture as a file under `CAPTURED`, and read from there when the host is not
live: an archive never runs commands.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from hostc.diagnostics import HostcError
from hostc.topology.importers.chroot import HostTree, TreeTooLarge

#: Where a capture stores command output (a name no real /proc or /sys file has).
CAPTURED = "hostc-capture"
#: A kernel file or config file audit reads is small; anything past this is not one.
READ_LIMIT = 4 << 20
#: `systemctl show -p` properties audit asks of every unit (one call per unit).
UNIT_PROPERTIES = (
    "LoadState",
    "ActiveState",
    "SubState",
    "Result",
    "UnitFileState",
    "MainPID",
    "CPUAffinity",
    "NUMAPolicy",
    "NUMAMask",
    # the start order at boot (hostc.audit.order): monotonic µs, and the units it is after
    "ActiveEnterTimestampMonotonic",
    "InactiveExitTimestampMonotonic",
    "After",
)
#: The manager's own properties (the defaults the limits target sets).
MANAGER_PROPERTIES = (
    "DefaultLimitNOFILE",
    "DefaultLimitNOFILESoft",
    "DefaultLimitMEMLOCK",
    "DefaultLimitMEMLOCKSoft",
    "CPUAffinity",
)
_UNIT = re.compile(r"[A-Za-z0-9:_.@-]{1,256}")


class HostReader:
    """Reads under `root` through the one host-tree reader (`HostTree`: links resolved
    inside the root, each file read once, a byte budget); `live` hosts also answer
    `systemctl show` by running it."""

    def __init__(self, root: Path, *, live: bool, shown: str | None = None) -> None:
        self.root = root
        self.live = live
        self.tree = HostTree(root, shown=shown)
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        #: what an observer derived from the files once (the sysctl.d table), by name
        self.memo: dict[str, object] = {}

    def text(self, rel: str) -> str | None:
        """A file's text, or None when it is absent or unreadable (not observable)."""
        data = self.raw(rel)
        return None if data is None else data.decode("utf-8", "replace")

    def raw(self, rel: str) -> bytes | None:
        """A file's bytes (one object per file: hard links share it), or None."""
        rel = rel.strip("/")
        if rel in self.files:
            return self.files[rel]
        try:
            data = self.tree.read(rel, limit=READ_LIMIT, what=f"/{rel}")
        except TreeTooLarge:
            raise
        except (HostcError, OSError):
            return None
        if data is not None:
            self.files[rel] = data
        return data

    def listdir(self, rel: str) -> list[str]:
        """Entry names; each entry is recorded too (a directory as one, a file with its
        bytes), so a capture lists the same names (`msi_irqs/*` are read by name only)."""
        rel = rel.strip("/")
        try:
            names = self.tree.names(rel)
        except OSError:
            return []
        if names is None:
            return []
        self.dirs.add(rel)
        for name in names:
            sub = f"{rel}/{name}"
            if self.tree.is_dir(sub):
                self.dirs.add(sub)
            elif sub not in self.files:
                self.text(sub)
        return names

    def show(self, unit: str | None) -> dict[str, str] | None:
        """`systemctl show` of `unit` (None: the manager), or None where nobody can say."""
        name = unit or "manager"
        if unit is not None and not _UNIT.fullmatch(unit):
            return None
        rel = f"{CAPTURED}/systemctl-show/{name}"
        if self.live:
            text = _systemctl_show(unit)
            if text is None:
                return None
            self.files[rel] = text.encode("utf-8")
        else:
            found = self.text(rel)
            if found is None:
                return None
            text = found
        return dict(line.partition("=")[::2] for line in text.splitlines() if "=" in line)


def _systemctl_show(unit: str | None) -> str | None:
    """Run `systemctl show` (no shell: the unit is one argv word after `--`)."""
    exe = shutil.which("systemctl")
    if exe is None:
        return None
    props = MANAGER_PROPERTIES if unit is None else UNIT_PROPERTIES
    argv = [exe, "show", "-p", ",".join(props)]
    if unit is not None:
        argv += ["--", unit]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")
