"""The one writer of live kernel values `hostc bench --ablate` uses (and nothing else).

A value goes only to a file that already exists under /proc/sys or /sys (never one
made, never through a final link, never a path that leaves those trees through a
link or `..`), as one write of one line, as `echo VALUE > FILE` does: the kernel
takes a sysfs or sysctl value in a single write.  `root` prefixes every path: `/` on
a host, a sandbox in the tests, where /proc/sys and /sys are plain files.  Writing
there needs root on a real host; a refusal names the file and what the kernel said.
"""

from __future__ import annotations

import os
from pathlib import Path

from hostc.diagnostics import HostcError, file_error

#: the trees a live value may be written in
TREES = ("/proc/sys/", "/sys/")
#: longer than any sysctl or sysfs value hostc reverts (a cpumask of 8192 CPUs is 2 KiB)
VALUE_MAX = 4096


def _refuse(path: str, message: str) -> HostcError:
    return HostcError([file_error(path, message)])


def place(root: Path, path: str) -> Path:
    """Where `path` (a host path) lies under `root`; anything outside TREES is refused."""
    parts = path.split("/")
    if not path.startswith(TREES) or ".." in parts or "." in parts:
        raise _refuse(path, "hostc bench writes only existing files under /proc/sys and /sys")
    return root / path.lstrip("/")


def write_value(root: Path, path: str, value: str) -> None:
    """`value` written to `path` under `root` (module docstring)."""
    data = (value + "\n").encode("utf-8")
    if not value or "\n" in value or len(data) > VALUE_MAX or not value.isprintable():
        raise _refuse(path, f"refusing to write {value[:80]!r}: not one short printable line")
    dest = place(root, path)
    base = os.path.realpath(root)
    real = os.path.realpath(dest)
    inside = [os.path.join(base, t.strip("/")) + os.sep for t in TREES]
    if not any(real.startswith(t) for t in inside):
        raise _refuse(path, "refusing to write: a link leads it out of /proc/sys and /sys")
    flags = os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(dest, flags)
    except FileNotFoundError:
        raise _refuse(path, "does not exist here (this kernel has no such setting)") from None
    except OSError as e:
        hint = " (run as root)" if isinstance(e, PermissionError) else ""
        raise _refuse(path, f"cannot open it for writing: {e.strerror or e}{hint}") from None
    try:
        written = os.write(fd, data)
    except OSError as e:
        raise _refuse(path, f"the kernel refused {value!r}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if written != len(data):
        raise _refuse(path, f"only {written} of {len(data)} bytes of {value!r} were taken")
