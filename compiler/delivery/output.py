"""Write artifacts atomically, or describe them (JSON); `delivery.compare` diffs them with a tree.

A build renders everything in memory first; only then are files replaced one
by one with os.replace, so a failed build leaves the previous output as it was.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from hostc.artifact import Artifact
from hostc.delivery.activation import needs_reboot, steps
from hostc.diagnostics import HostcError, file_error
from hostc.inputs import overwrites_input, read_by_this_command
from hostc.plan.model import OsFamily


def destination(out: Path, art: Artifact) -> Path:
    return out / art.target / art.relpath


#: Staged files are hidden and carry this suffix: `.90-hostc.conf.k3j_x9ab.hostc-tmp`.
#: A build killed (SIGKILL) between staging and renaming can leave them behind;
#: they are never a destination, `--check` ignores them, and removing them is safe.
STAGING_SUFFIX = ".hostc-tmp"

#: Directories `--out` refuses: a build there would litter (or, as root, shadow)
#: the system tree.  Anything under the virtual file systems is refused as well.
SYSTEM_DIRS = frozenset(
    {
        *("/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32"),
        *("/proc", "/run", "/sbin", "/sys", "/usr", "/var", "/usr/bin", "/usr/lib"),
        *("/usr/lib64", "/usr/local", "/usr/sbin", "/usr/share", "/var/lib", "/var/log"),
    }
)
_VIRTUAL = ("/proc", "/sys", "/dev")


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


class SpecialFileError(OSError):
    """A device, FIFO, socket or input hostc never replaces (an OSError: writers exit 2)."""


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


def is_staging_file(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(STAGING_SUFFIX)


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
    if any(text == v or text.startswith(v + "/") for v in _VIRTUAL):
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


#: called once every file is in place, with the written folder's descriptor and the
#: folders made under it: `hostc.delivery.owned`'s next step (stale files, its record)
AfterWrite = Callable[[int, list[tuple[str, ...]]], None]


def write(
    artifacts: Iterable[Artifact],
    out: Path,
    protect: Iterable[Path] = (),
    after: AfterWrite | None = None,
    host: str = "",
) -> list[Path]:
    """Stage every file next to its destination first, then rename them all.

    A failure while staging (a path blocked by a file or a symbolic link, a full
    disk) removes the staged files and every directory this call created, and
    leaves every previous output untouched.  Renames replace one file at a time,
    so a reader (or a build killed half-way) sees each file either old or new.

    Below `out` (a fleet's `host` folder too) nothing is reached by path: each folder
    is opened relative to its parent's descriptor with O_NOFOLLOW, so a link in the
    tree (planted before the build or during it) is refused, never written through,
    and the renames happen inside the folders already opened."""
    check_out(out)
    assert host not in (".", "..") and "/" not in host, host  # fleet.HOST_NAME is one word
    top, base = ([host], out / host) if host else ([], out)
    arts = list(artifacts)
    clash = overwrites_input((destination(base, a) for a in arts), protect)
    if clash is not None:
        raise HostcError(
            [
                file_error(
                    str(clash),
                    "refusing to write: the build would overwrite its own input",
                    hint="write the build into a directory that holds none of its inputs",
                )
            ]
        )
    tree = _Tree(out)
    staged: list[tuple[int, str, str, Path]] = []
    try:
        tree.open_root()
        for art in arts:
            dest = destination(base, art)
            *dirs, name = Path(art.target, art.relpath).parts
            dfd = tree.directory([*top, *dirs])
            if dfd not in tree.fresh:  # a directory this call made holds nothing yet
                tree.refuse_directory(dfd, name, dest)
            staged.append((dfd, _stage_at(dfd, name, art.data, art.mode), name, dest))
        for dfd, tmp, name, _ in staged:
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        if after is not None:  # the host's folder and what was made below it
            after(tree.directory(top), [d[len(top) :] for d in tree.made if d[len(top) :]])
    except BaseException:
        for dfd, tmp, _, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        tree.remove_created()
        raise
    finally:
        tree.close()
    return [dest for _, _, _, dest in staged]


class _Tree:
    """The directories under one `--out`, opened one component at a time (openat)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.fds: dict[tuple[str, ...], int] = {}
        self.created: list[tuple[int, str]] = []  # (parent fd, name), outermost first
        self.made: list[tuple[str, ...]] = []  # the same folders, as paths under `out`
        #: descriptors of the directories this call made: empty, so a child is made
        #: without first trying to open it (a fleet build makes ~30 per host)
        self.fresh: set[int] = set()
        self.made_root: list[Path] = []

    def open_root(self) -> None:
        self.made_root = _makedirs(self.out)
        self.fds[()] = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY)
        if self.made_root and self.made_root[-1] == self.out:
            self.fresh.add(self.fds[()])

    def directory(self, parts: list[str]) -> int:
        key: tuple[str, ...] = ()
        fd = self.fds[()]
        for part in parts:
            key = (*key, part)
            if key not in self.fds:
                self.fds[key] = self._open_child(fd, part, key)
            fd = self.fds[key]
        return fd

    def _open_child(self, parent: int, name: str, key: tuple[str, ...]) -> int:
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
        try:
            if parent in self.fresh:
                return self._make_child(parent, name, key)
            return os.open(name, flags, dir_fd=parent)
        except FileNotFoundError:
            return self._make_child(parent, name, key)
        except OSError as e:
            where = str(self.out.joinpath(*key))
            if os.path.islink(where) or e.errno == errno.ELOOP:
                why = "is a symbolic link; hostc never writes through one"
            else:
                why = "is in the way: it is not a directory"
            raise HostcError(
                [file_error(where, f"refusing to write: {why}", hint="remove it, then build")]
            ) from None

    def _make_child(self, parent: int, name: str, key: tuple[str, ...]) -> int:
        try:
            os.mkdir(name, 0o755, dir_fd=parent)
        except FileExistsError:
            # another writer (a fleet build's worker) made it meanwhile: open what is
            # there, still without following a link
            self.fresh.discard(parent)
            return self._open_child(parent, name, key)
        except OSError as e:
            where = str(self.out.joinpath(*key))
            raise HostcError(
                [file_error(where, f"cannot create the directory: {e.strerror or e}")]
            ) from None
        self.created.append((parent, name))
        self.made.append(key)
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        self.fresh.add(fd)
        return fd

    def refuse_directory(self, dfd: int, name: str, dest: Path) -> None:
        """A destination that is a directory, a device node, a FIFO or a socket."""
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(dest))
        refuse_special(Path(name), dfd, shown=dest)

    def remove_created(self) -> None:
        for parent, name in reversed(self.created):
            with contextlib.suppress(OSError):  # not empty: keep it
                os.rmdir(name, dir_fd=parent)
        for d in reversed(self.made_root):
            with contextlib.suppress(OSError):
                d.rmdir()

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def _stage_at(dfd: int, name: str, data: bytes, mode: int) -> str:
    """A hidden staging file in the directory `dfd`, created exclusively, never a link; written
    through the descriptor (a file object cost a stat, a tty probe and a seek a file)."""
    for _ in range(100):
        tmp = f".{name}.{os.urandom(4).hex()}{STAGING_SUFFIX}"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd
            )
        except FileExistsError:
            continue
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        return tmp
    raise FileExistsError(errno.EEXIST, "no free staging name", name)


def _makedirs(path: Path) -> list[Path]:
    """mkdir -p, returning the directories it made, outermost first."""
    missing: list[Path] = []
    p = path
    while not p.is_dir():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    made: list[Path] = []
    try:
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                if d.is_dir():  # made meanwhile by another writer (a fleet worker)
                    continue
                raise
            made.append(d)
    except BaseException:
        for d in reversed(made):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
    return made


def _stage(dest: Path, data: bytes, mode: int) -> Path:
    """`_stage_at` beside `dest`, its folder opened as a path only (as mkstemp, no read right)."""
    dfd = os.open(dest.parent, getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
    try:
        return dest.parent / _stage_at(dfd, dest.name, data, mode)
    finally:
        os.close(dfd)


def manifest(artifacts: list[Artifact], out: Path | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for a in artifacts:
        row: dict[str, object] = {
            "target": a.target,
            "path": a.path,
            "kind": a.kind.value,
            "mode": f"{a.mode:04o}",
            "sha256": hashlib.sha256(a.data).hexdigest(),
            "activation": [str(x) for x in a.activation],
        }
        if out is None:
            try:
                row["content"] = a.data.decode("utf-8")
            except UnicodeDecodeError:
                row["content_base64"] = base64.b64encode(a.data).decode("ascii")
        else:
            row["written"] = str(destination(out, a))
        rows.append(row)
    return rows


def apply_manifest(artifacts: Iterable[Artifact], family: OsFamily) -> dict[str, object]:
    """The manifest's top level for a provisioning system that places the files itself:
    the apply steps for the host's OS family, in order, and whether a reboot follows."""
    arts = list(artifacts)
    return {
        # live: only makes the running host take the change now (skip it when a reboot
        # follows); package: what provides argv[0] where a base image may lack it
        "apply": [
            {"argv": list(s.command), "why": s.why, "live": s.live, "package": s.package}
            for s in steps(arts, family)
        ],
        "reboot": needs_reboot(arts),
    }


def write_text(path: Path, text: str) -> None:
    """One file, atomically (snapshots, schemas)."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` atomically: readers see the old file or the new one, never half.
    A device node, FIFO or socket at `path` is refused (SpecialFileError), not replaced."""
    refuse_special(path)
    tmp = _stage(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
