"""Write artifacts atomically; `delivery.manifest` describes them (JSON),
`delivery.compare` diffs them with a tree.

A build renders everything in memory first; only then are files replaced one
by one with os.replace, so a failed build leaves the previous output as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from hostc.artifact import Artifact
from hostc.delivery.descriptors import close_all, default_acl, holds, replace_at, umask
from hostc.delivery.descriptors import stage_at as _stage_at  # a name tests can replace
from hostc.delivery.refusals import check_out, refuse_file_out, refuse_special, refuse_virtual
from hostc.diagnostics import HostcError, file_error
from hostc.inputs import overwrites_input
from hostc.record import Record


def destination(out: Path, art: Artifact) -> Path:
    return out.joinpath(art.target, art.relpath)  # one parse, not one per `/`


@attrs.frozen(repr=False, eq=False)
class Judged(Record):
    """What a command that writes many hosts (a fleet build) judged once for them all,
    instead of once a host: its caller checked `--out` (`refusals.check_out`), and this
    is the process's umask (`descriptors.umask`, read when the command started)."""

    umask: int | None

    @classmethod
    def now(cls) -> Judged:
        return cls(umask())


#: called once every file is in place, with the written folder's descriptor and the
#: folders made under it: `hostc.delivery.owned`'s next step (stale files, its record)
AfterWrite = Callable[[int, list[tuple[str, ...]]], None]


def write(
    artifacts: Iterable[Artifact],
    out: Path,
    protect: Iterable[Path] = (),
    after: AfterWrite | None = None,
    host: str = "",
    judged: Judged | None = None,
) -> Placed:
    """Stage every file next to its destination first, then rename them all; a file
    already in place is left as it is (`Placed`).

    A failure while staging (a path blocked by a file or a symbolic link, a full disk)
    removes the staged files and every directory this call created, and leaves every
    previous output untouched.  Renames replace one file at a time, so a reader (or a
    build killed half-way) sees each file either old or new.

    Below `out` (a fleet's `host` folder too) nothing is reached by path: each folder
    is opened relative to its parent's descriptor with O_NOFOLLOW, so a link in the
    tree (planted before the build or during it) is refused, never written through,
    and the renames happen inside the folders already opened.  `judged`: the caller
    checked `out` and read the umask once for all its hosts (a fleet), not again for each.
    A file is created 0600 and given its mode once written, or created with its mode
    where the kernel gives it exactly that mode (`_Tree.exact`)."""
    if judged is None:
        check_out(out)
        judged = Judged.now()
    assert host not in (".", "..") and "/" not in host, host  # fleet.HOST_NAME is one word
    top, base = ([host], out / host) if host else ([], out)
    arts = list(artifacts)
    files = [destination(base, a) for a in arts]
    clash = overwrites_input(files, protect)
    if clash is not None:
        why = "refusing to write: the build would overwrite its own input"
        hint = "write the build into a directory that holds none of its inputs"
        raise HostcError([file_error(str(clash), why, hint=hint)])
    tree = _Tree(out, judged.umask)
    staged: list[tuple[int, str, str, Path]] = []
    unchanged: list[Path] = []
    try:
        tree.open_root()
        for art, dest in zip(arts, files, strict=True):
            step = tree.stage(art, top, dest, dest.parts[len(base.parts) :])
            if step is None:
                unchanged.append(dest)
            else:
                staged.append(step)
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
    return Placed(tuple(files), tuple(unchanged))


@attrs.frozen(repr=False, eq=False)
class Placed(Record):
    """What `write` left in place: every destination, in the artifacts' order, and those
    of them that already held the file and were left untouched.

    A destination that already is the file (a regular file, not a link, owned by this
    user, with the same mode and bytes) keeps its inode and modification time: a
    rebuild touches only what changed, so `rsync`, `make` or a watcher that goes by
    modification times sees only the files that did."""

    files: tuple[Path, ...]
    unchanged: tuple[Path, ...]


class _Tree:
    """The directories under one `--out`, opened one component at a time (openat)."""

    def __init__(self, out: Path, mask: int | None) -> None:
        self.out = out
        #: the umask, where files made in `clean` folders get exactly their mode from it
        self.mask = mask
        #: folders this call made below an `out` without a default ACL (`exact`)
        self.clean: set[int] = set()
        self.fds: dict[tuple[str, ...], int] = {}
        self.created: list[tuple[int, str]] = []  # (parent fd, name), outermost first
        self.made: list[tuple[str, ...]] = []  # the same folders, as paths under `out`
        #: descriptors of the directories this call made: empty, so a child is made
        #: without first trying to open it (a fleet build makes ~30 per host)
        self.fresh: set[int] = set()
        self.made_root: list[Path] = []
        #: the staged files' descriptors, closed with the folders' (`close`)
        self.staged: list[int] = []

    def open_root(self) -> None:
        self.made_root = _makedirs(self.out)
        self.fds[()] = root = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY)
        if self.made_root and self.made_root[-1] == self.out:
            self.fresh.add(root)
        if self.mask is not None and not default_acl(root):
            self.clean.add(root)  # the folders made in it inherit no default ACL either

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
        if parent in self.clean:
            self.clean.add(fd)
        return fd

    def exact(self, dfd: int, mode: int) -> bool:
        """Whether a file created with `mode` in the folder `dfd` gets exactly `mode`: the
        root or a folder this call made below it, the root without a default ACL (a folder
        made by an earlier build may have been given one since: not clean), and a umask
        that clears none of the mode's bits."""
        return dfd in self.clean and not mode & (self.mask or 0)

    def stage(
        self, art: Artifact, top: list[str], dest: Path, parts: tuple[str, ...]
    ) -> tuple[int, str, str, Path] | None:
        """Stage `art` in its folder below `top` (made or opened): (folder, staged name,
        name, dest), or None when the folder already holds this very file (`descriptors.holds`).
        `parts`: its target folder and path's parts, as `dest`'s below the host's folder
        (a path parsed once a file, not again here)."""
        *dirs, name = parts
        dfd = self.directory([*top, *dirs])
        if dfd not in self.fresh:  # a directory this call made holds nothing yet
            self.refuse_directory(dfd, name, dest)
            if holds(dfd, name, art.data, art.mode):
                return None
        exact = self.exact(dfd, art.mode)
        return dfd, _stage_at(dfd, name, art.data, art.mode, self.staged, exact), name, dest

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
        """Every folder and staged file this call opened, closed in as few calls as their
        numbers allow: the kernel hands out the lowest free number, so they are mostly one
        run, one close_range (a fleet host's ~50 closes were a fifth of its system calls).
        Only numbers this call opened are in a run: nothing else is ever closed."""
        close_all([*self.fds.values(), *self.staged])
        self.fds.clear()
        self.staged.clear()


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


def _open_folder(folder: Path) -> int:
    """`folder` opened as a path only (as mkstemp: no read right needed), for the *at calls."""
    flags = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
    return os.open(folder, flags)


def _real_folder(dfd: int, folder: Path) -> str:
    """The real path of the open folder `dfd` as the kernel has it (its links resolved
    when it was opened, so a link swapped since changes nothing); `folder` resolved where
    /proc is not mounted."""
    try:
        real = os.readlink(f"/proc/self/fd/{dfd}")
    except OSError:
        real = ""
    return real if real.startswith("/") else str(folder.resolve())


def _name(path: Path) -> str:
    if path.name in ("", ".", ".."):  # `-o /`, `-o ..`: a folder, never a file's name
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    return path.name


def check_file(path: Path) -> None:
    """Raise what `write_bytes` would refuse `path` for, writing nothing: a command with
    two outputs (`hostc init`) asks for both before it writes either.  A folder that is
    not there yet is judged by where it would be made."""
    name = _name(path)
    try:
        dfd = _open_folder(path.parent)
    except FileNotFoundError:
        refuse_virtual(str(path.parent.resolve()), path)
        return
    try:
        refuse_file_out(dfd, name, _real_folder(dfd, path.parent), path)
    finally:
        os.close(dfd)


def write_text(path: Path, text: str, *, parents: bool = False) -> None:
    """`write_bytes` of `text` as UTF-8 (snapshots, specs, schemas)."""
    write_bytes(path, text.encode("utf-8"), parents=parents)


def write_bytes(path: Path, data: bytes, mode: int = 0o644, *, parents: bool = False) -> None:
    """The one writer of a single named file (`-o FILE`, `--capture FILE`, `hostc init`'s
    spec and snapshot, regenerated files): its folder opened once, the file staged in it
    and renamed over the name (`replace_at`), so readers see the old file or the new one.

    Refused before anything is written (SpecialFileError, IsADirectoryError; `refusals.
    refuse_file_out`): a name that is a symbolic link, dangling or not (never followed,
    never replaced: `-o /dev/stdout` as root left a regular file in /dev), a device node,
    FIFO or socket, a directory, an input of this command, and any name whose folder
    really lies under /dev, /proc or /sys, however the path reaches it.  `parents`: make
    the missing folders first (mkdir -p, never under those), removed again on failure."""
    name = _name(path)
    made: list[Path] = []
    if parents:
        refuse_virtual(str(path.parent.resolve()), path)
        made = _makedirs(path.parent)
    try:
        dfd = _open_folder(path.parent)
        try:
            refuse_file_out(dfd, name, _real_folder(dfd, path.parent), path)
            replace_at(dfd, name, data, mode)
        finally:
            os.close(dfd)
    except BaseException:
        for d in reversed(made):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
