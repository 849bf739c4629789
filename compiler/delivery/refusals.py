"""Where and over what hostc never writes: the rules every writer asks first.

`--out` is never a file-system root, a system directory or under a virtual file
system; a destination is never a device node, FIFO, socket or one of the command's
own inputs.  `hostc.delivery.output` is the mechanism, this module the rules.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from hostc.diagnostics import HostcError, file_error
from hostc.inputs import read_by_this_command

#: Directories `--out` refuses: a build there would litter (or, as root, shadow)
#: the system tree.  Anything under the virtual file systems is refused as well.
SYSTEM_DIRS = frozenset(
    {
        *("/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32"),
        *("/proc", "/run", "/sbin", "/sys", "/usr", "/var", "/usr/bin", "/usr/lib"),
        *("/usr/lib64", "/usr/local", "/usr/sbin", "/usr/share", "/var/lib", "/var/log"),
    }
)
#: The kernel's virtual file systems: no build and no single output file is created or
#: replaced under them (a file there is a kernel attribute or a device; /dev/stdout is a
#: link the system owns), also when a path reaches them through links.
VIRTUAL_ROOTS = ("/proc", "/sys", "/dev")


#: What hostc will not write over, by file type: it writes regular files only, and never
#: replaces (nor writes through) a device node, FIFO or socket.  `-o -` is standard output.
_SPECIAL = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
}
#: the one rule's words, in every refusal
SPECIAL_RULE = (
    "hostc writes regular files only and never replaces a device, FIFO or socket; "
    "use -o - for standard output"
)


#: the link rule's words, in every refusal of a single output file that is a link
LINK_RULE = (
    "hostc never writes through a symbolic link nor replaces one; name the file itself, "
    "or use -o - for standard output"
)


class SpecialFileError(OSError):
    """A device, FIFO, socket, link or input hostc never replaces, or a place under /dev,
    /proc or /sys it never writes (an OSError: writers exit 2)."""


def special_kind(path: Path, dir_fd: int | None = None) -> str | None:
    """'a character device', 'a FIFO', ... when `path` is (or links to) a special file;
    None when it is a regular file, a directory, absent or unreadable.  Decided by the
    file's type (lstat, then stat through a link) before anything is opened, so a FIFO
    never blocks."""
    for follow in (False, True):
        try:
            mode = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow).st_mode
        except (OSError, ValueError):
            return None
        kind = _SPECIAL.get(stat.S_IFMT(mode))
        if kind is not None:
            return kind
        if not stat.S_ISLNK(mode):
            return None
    return None


def refuse_special(path: Path, dir_fd: int | None = None, shown: Path | None = None) -> None:
    """Raise SpecialFileError when `path` is a device node, FIFO, socket or an input."""
    kind = special_kind(path, dir_fd)
    why = f"is {kind}: {SPECIAL_RULE}" if kind is not None else read_by_this_command(path, dir_fd)
    if why is not None:
        raise SpecialFileError(errno.EPERM, why, str(shown or path))


def unsafe_out(out: Path) -> str | None:
    """Why `out` may not receive a build, or None.

    The rule: never a file-system root or a system directory (also when reached
    through a symlink), never under /proc, /sys or /dev, never an existing
    non-directory.  Any other directory is fine: a build only ever writes
    `DIR/<target>/…`, and only the files it makes.
    """
    try:
        real = out.resolve()
    except (OSError, RuntimeError) as e:
        return f"cannot resolve the path: {e}"
    text = real.as_posix()
    if text in SYSTEM_DIRS or real.parent == real:
        return f"{text} is a system directory; write the build into a directory of its own"
    if virtual_root(text) is not None:
        return f"{text} is inside a virtual file system"
    if real.exists() and not real.is_dir():
        return "exists and is not a directory"
    return None


def check_out(out: Path) -> None:
    """Raise the one error `unsafe_out` finds: a many-host build asks once, before any
    host is built, so an unwritable `--out` is one error rather than one per host."""
    problem = unsafe_out(out)
    if problem is not None:
        raise HostcError([file_error(str(out), f"refusing to write here: {problem}")])


def virtual_root(real: str) -> str | None:
    """The virtual file system (VIRTUAL_ROOTS) the resolved path `real` lies in, or None."""
    for v in VIRTUAL_ROOTS:
        if real == v or real.startswith(v.rstrip("/") + "/"):
            return v
    return None


def refuse_virtual(folder: str, shown: Path) -> None:
    """Raise SpecialFileError when the folder whose real path is `folder` lies under
    /dev, /proc or /sys: `shown` is neither created nor replaced there."""
    v = virtual_root(folder)
    if v is not None:
        raise SpecialFileError(
            errno.EPERM,
            f"would be written in {folder}: hostc creates and replaces no file under "
            "/dev, /proc or /sys; use -o - for standard output",
            str(shown),
        )


def refuse_file_out(dfd: int, name: str, folder: str, shown: Path) -> None:
    """Raise what forbids writing the one output file `name` in the open folder `dfd`
    (whose real path is `folder`): a symbolic link (dangling or not; never followed, never
    replaced), a device node, FIFO or socket, a directory, an input of this command, or
    a folder under /dev, /proc or /sys.  Decided by lstat before anything is opened."""
    try:
        mode: int | None = os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISLNK(mode):
        raise SpecialFileError(errno.ELOOP, f"is a symbolic link: {LINK_RULE}", str(shown))
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(shown))
    refuse_special(Path(name), dfd, shown=shown)
    refuse_virtual(folder, shown)
