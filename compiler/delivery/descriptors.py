"""Files and folders reached through open folder descriptors, never by path: a file read
(`read_at`), folders walked once each (`Folders`), a file staged beside its name and
renamed over it (`stage_at`, `replace_at`), descriptors closed in runs (`close_all`).
The one mechanism below every writer (`hostc.delivery.output`: a build's tree and a
single named file; `owned`: the build record) and the reused host's check (`reuse`)."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: Staged files are hidden and carry this suffix: `.90-hostc.conf.k3j_x9ab.hostc-tmp`.
#: A build killed (SIGKILL) between staging and renaming can leave them behind;
#: they are never a destination, `--check` ignores them, and removing them is safe.
STAGING_SUFFIX = ".hostc-tmp"


def is_staging_file(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(STAGING_SUFFIX)


def read_at(dfd: int, name: str, limit: int) -> tuple[os.stat_result, bytes] | None:
    """A regular file in the folder `dfd`: its status and at most `limit` + 1 bytes (one
    past: a longer file shows it), opened without following a link and without blocking
    on a FIFO; None when absent, unopenable or not a regular file.  Read through the
    descriptor: a file object costs a stat, a tty probe and a seek more."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    except OSError:
        return None
    return _read_fd(fd, limit)


class NoOpenat2(Exception):
    """This kernel (before 5.6), platform or seccomp filter gives no openat2: walk the
    folders one by one instead (`Folders`)."""


#: openat2(2) (linux/openat2.h): one number on every architecture hostc runs on
_SYS_OPENAT2 = 437
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
#: the C call and its argument, made on first use (None: this process has no openat2)
_OPENAT2: list[Any] = []


def _openat2() -> Any:
    if not _OPENAT2:
        import ctypes
        import platform

        call: Any = None
        if platform.system() == "Linux" and platform.machine() in ("x86_64", "aarch64"):

            class How(ctypes.Structure):
                _fields_ = [(n, ctypes.c_uint64) for n in ("flags", "mode", "resolve")]

            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            how = How(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)
            fn = ctypes.CDLL(None, use_errno=True).syscall
            fn.restype = ctypes.c_long
            fn.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p]
            fn.argtypes += [ctypes.c_size_t]
            call = (fn, how, ctypes.addressof(how), ctypes.sizeof(how), ctypes.get_errno)
        _OPENAT2.append(call)
    return _OPENAT2[0]


def read_beneath(dfd: int, path: str, limit: int) -> tuple[os.stat_result, bytes] | None:
    """`read_at` of `path` (`a/b/name`) below the folder `dfd`, opened in one openat2 call
    that fails on a symbolic link anywhere on the way (RESOLVE_NO_SYMLINKS) and on a path
    leaving `dfd` (RESOLVE_BENEATH), so no folder on the way is opened by itself: a reused
    fleet host's 18 files lie in 37 folders.  NoOpenat2 where there is no such call."""
    fd = _open_beneath(dfd, path)
    return None if fd is None else _read_fd(fd, limit)


def stat_beneath(dfd: int, path: str) -> os.stat_result | None:
    """The status of the file `path` below the folder `dfd`, opened as `read_beneath`
    opens it (no link on the way, nothing outside `dfd`), and not read: what a reused
    host's file is compared by once its bytes have been checked (`statindex`)."""
    fd = _open_beneath(dfd, path)
    if fd is None:
        return None
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def _open_beneath(dfd: int, path: str) -> int | None:
    """openat2 of `path` below `dfd` (see `read_beneath`): a descriptor, None when it
    cannot be opened so, NoOpenat2 where the call is missing."""
    call = _openat2()
    if call is None:
        raise NoOpenat2
    fn, _, how, size, errno_of = call
    fd = fn(_SYS_OPENAT2, dfd, os.fsencode(path), how, size)
    if fd < 0:
        if errno_of() in (errno.ENOSYS, errno.EPERM):
            _OPENAT2[0] = None  # a filter's EPERM or a kernel's ENOSYS holds for the process
            raise NoOpenat2
        return None
    return int(fd)


def _read_fd(fd: int, limit: int) -> tuple[os.stat_result, bytes] | None:
    """`read_at`'s read of the open file `fd`, which it closes."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        got = b""
        # the first read sized by the file (a buffer of `limit` bytes a file was the
        # reused fleet host's largest cost), the next ones up to one past `limit`
        want = min(limit, st.st_size) + 1
        while len(got) <= limit:
            chunk = os.read(fd, want)
            want = limit + 1 - len(got) - len(chunk)
            if not chunk:
                break
            got += chunk
        return st, got
    finally:
        os.close(fd)


def holds(dfd: int, name: str, data: bytes, mode: int) -> bool:
    """Whether `name` in the folder `dfd` already is the file a write would leave: a
    regular file (`read_at`) owned by this user, with exactly `mode` and `data`."""
    try:
        found = read_at(dfd, name, len(data))
    except OSError:  # unreadable: write it as if it were not there
        return False
    if found is None:
        return False
    st, got = found
    return as_written(st, mode, os.geteuid()) and got == data


def as_written(st: os.stat_result, mode: int, uid: int) -> bool:
    """Whether a regular file found by `read_at` (status `st`) is as a write of hostc's left
    it, apart from its bytes: owned by `uid` (this user) with exactly `mode`.  The one rule
    a rebuild keeps a file by (`holds`) and a reused fleet host's check reads
    (`hostc.delivery.reuse`), each comparing the bytes its own way (the bytes or their
    recorded sha256)."""
    return stat.S_IMODE(st.st_mode) == mode and st.st_uid == uid


class Folders:
    """Folders that exist below the open folder `root`, each opened once (relative to its
    parent, never through a link) however many files are read in it, and all closed in
    one go (`close`): a reused fleet host's 17 files lie in 20 folders, opened 70 times
    when each file walked its own way down."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.fds: dict[tuple[str, ...], int] = {}

    def at(self, parts: Sequence[str]) -> int | None:
        """The folder `root`/`parts`, or None when it is gone, a link or not a folder."""
        fd = self.root
        key: tuple[str, ...] = ()
        for part in parts:
            key = (*key, part)
            found = self.fds.get(key)
            if found is None:
                flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                try:
                    found = self.fds[key] = os.open(part, flags, dir_fd=fd)
                except OSError:
                    return None
            fd = found
        return fd

    def close(self) -> None:
        close_all(self.fds.values())
        self.fds.clear()


def close_all(fds: Iterable[int]) -> None:
    """Close `fds`: each run of consecutive numbers in one `os.closerange`."""
    run: list[int] = []
    for fd in sorted(set(fds)):
        if run and fd != run[-1] + 1:
            os.closerange(run[0], run[-1] + 1)
            run = []
        run.append(fd)
    if run:
        os.closerange(run[0], run[-1] + 1)


#: staging names: a random prefix a process (drawn again in a forked worker) and a count:
#: unguessable to others without a getrandom call a file (18 of a fleet host's 266)
_PREFIX = [os.urandom(6).hex()]
_COUNT = itertools.count(1)
os.register_at_fork(after_in_child=lambda: _PREFIX.__setitem__(0, os.urandom(6).hex()))


def umask() -> int | None:
    """This process's file mode creation mask, as /proc/self/status gives it (Linux 4.7+),
    or None where it cannot be read.  Read, never set: `os.umask` is read only by setting
    it, and a thread creating a file between the two calls would get the wrong mask."""
    try:
        fd = os.open("/proc/self/status", os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 65536)
    except OSError:
        return None
    finally:
        os.close(fd)
    for line in text.splitlines():
        if line.startswith(b"Umask:"):
            try:
                return int(line.split()[1], 8)
            except (IndexError, ValueError):
                return None
    return None


def default_acl(dfd: int) -> bool:
    """Whether the folder `dfd` may have a default ACL (so does every folder made in it):
    a file created there gets the ACL's permissions, not its mode less the umask
    (acl(5), "Object creation and default ACLs").  True where it cannot be told."""
    try:
        os.getxattr(dfd, "system.posix_acl_default")
    except OSError as e:
        return e.errno not in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP)
    return True


def stage_at(
    dfd: int,
    name: str,
    data: bytes,
    mode: int,
    opened: list[int] | None = None,
    exact: bool = False,
) -> str:
    """A hidden staging file in the directory `dfd`, created exclusively, never a link; written
    through the descriptor (a file object cost a stat, a tty probe and a seek a file).
    `opened`: the descriptor is left open and added there, for the caller to close with
    its others (`_Tree.close`); otherwise it is closed here.  Created 0600 and given
    `mode` once written, or, `exact`, created with `mode` (the caller knows that neither
    the umask nor a default ACL changes it: a fleet host's 18 fchmod calls saved)."""
    for _ in range(100):
        tmp = f".{name}.{_PREFIX[0]}{next(_COUNT):x}{STAGING_SUFFIX}"
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                mode if exact else 0o600,
                dir_fd=dfd,
            )
        except FileExistsError:
            continue
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if not exact:
                    os.fchmod(fd, mode)
            finally:
                if opened is None:
                    os.close(fd)
                else:
                    opened.append(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        return tmp
    raise FileExistsError(errno.EEXIST, "no free staging name", name)


def replace_at(dfd: int, name: str, data: bytes, mode: int) -> None:
    """`name` in the folder `dfd` replaced by `data` (staged, then renamed; never through
    a link), unless it already holds exactly that (`_holds`): then it is left as it is."""
    if not holds(dfd, name, data, mode):
        os.replace(stage_at(dfd, name, data, mode), name, src_dir_fd=dfd, dst_dir_fd=dfd)
