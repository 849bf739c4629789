"""A reused fleet host's files known unchanged by their status, not by their bytes
(issue 56): git's index, for `reuse.unchanged`.

Checking that OUT/<host>/ is still as hostc wrote it meant reading every recorded file
and hashing it: about 70 KB a host, 45 % of a reused host's instructions.  Once a check
by the bytes has passed, the status of each file as found (device, inode, change time,
modification time, size, mode, owner) is kept here, in the user's cache; the next check
opens each file as before (one openat2 that refuses a link anywhere on the way) and
compares its status with the one kept, and reads no byte.  Any difference at all, in any
file, means the check by the bytes, as without this index: a status can only say
"unchanged", never "changed".

Why a status says it: writing a file's bytes sets its change time (ctime) to the
kernel's clock, and no system call sets ctime to a chosen value, so an edit, a
truncation or a file renamed over it (another inode) shows.  The one way round it is a
change within the clock tick of the status kept; so a status is kept only when its
ctime is at least `RACY_NS` older than the moment it is kept (git's "racily clean"
entries, handled the same way: not trusted until they are old).

Why not in the build record: the record is output (copied into images, compared with
goldens, byte-identical from one machine to the next); a status belongs to this machine
and this copy.  The index is the cache's: a file a host, under `cache_dir()/stat/`,
named by the host folder's path, HMAC'd with the cache's secret over its bytes, the
folder's path and the record's seal (`contentkey.seal`), so an index is only ever read
for the record it was made from, and one planted or edited means the check by the bytes.
Safe to delete; bounded (`LIMIT` files: past it, the folder is emptied and refilled).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from hostc.delivery import contentkey
from hostc.delivery.descriptors import Folders, NoOpenat2, stage_at, stat_beneath
from hostc.delivery.record_format import RECORD

#: what is compared of a file: (st_dev, st_ino, st_ctime_ns, st_mtime_ns, st_size,
#: st_mode, st_uid)
Mark = tuple[int, int, int, int, int, int, int]

#: a status is kept only when its change time is this much older than now (a change
#: within one clock tick of a kept status could not show; ticks are milliseconds on
#: local file systems, a second on some network ones)
RACY_NS = 5_000_000_000
#: index files at most; past it the folder is emptied (each is a few hundred bytes)
LIMIT = 200_000
FORMAT = "hostc-stat-index 1"
#: an index file is read up to this many bytes (18 rows of ~60 bytes are usual)
READ_LIMIT = 1 << 20


def mark(st: os.stat_result) -> Mark:
    return (st.st_dev, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_mode, st.st_uid)


@attrs.frozen
class Place:
    """Where the index of a host folder lies (`path`), and the name its seal binds (the
    folder's absolute path): made once a check (`place`), read by `recall` and `keep`."""

    path: Path
    bound: str


def place(folder: Path) -> Place:
    name = os.path.abspath(folder)
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return Place(contentkey.cache_dir() / "stat" / digest, f"stat-index\0{name}")


@attrs.frozen
class Kept:
    """What a check by the bytes found, kept: the content key the record was sealed
    with, the record file's status, and each recorded file's path and status."""

    key: str
    record: Mark
    files: tuple[tuple[str, Mark], ...]


def recall(where: Place) -> Kept | None:
    """What was kept for a host folder (`where`: `place`) when it was last found intact
    by its bytes; None when nothing is kept or the index is not intact (its seal: made
    here, for this folder)."""
    path, bound = where.path, where.bound
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        data = os.read(fd, READ_LIMIT)
    except OSError:
        return None
    finally:
        os.close(fd)
    body, _, seal = data.rpartition(b"\n")
    if not contentkey.sealed(bound, body, seal.decode("ascii", "replace")):
        return None
    try:
        head, key, record, *rows = body.decode("utf-8", "surrogateescape").split("\n")
        if head != FORMAT:
            return None
        files = []
        for row in rows:
            *numbers, name = row.split(" ", 7)
            files.append((name, _mark(numbers)))
        return Kept(key, _mark(record.split(" ")), tuple(files))
    except ValueError:  # not ours after all: a seal is only as good as its secret
        return None


def _mark(numbers: list[str]) -> Mark:
    if len(numbers) != 7:
        raise ValueError("a status is seven numbers")
    return tuple(int(x) for x in numbers)  # type: ignore[return-value]


def holds(root: int, key: str, kept: Kept) -> bool:
    """Whether `kept` still describes the host folder open as `root` for a build of the
    inputs `key` names: made for that key, the build record the very file it was (so
    its bytes are the ones whose seal was checked then), and every recorded file too."""
    if kept.key != key:
        return False
    try:
        st = os.stat(RECORD, dir_fd=root, follow_symlinks=False)
    except OSError:
        return False
    return mark(st) == kept.record and unmoved(root, kept.files)


def unmoved(root: int, files: Sequence[tuple[str, Mark]]) -> bool:
    """Whether every file `files` names below the open host folder `root` is the very
    file whose status was kept, no byte read: each opened in one call that refuses a link
    on the way (`descriptors.stat_beneath`), or, where the kernel has no such call, its
    status taken in its folder, each folder on the way opened once, never through a link
    (`descriptors.Folders`).  False on any difference (then check the bytes)."""
    try:
        return all(_same(stat_beneath(root, path), want) for path, want in files)
    except NoOpenat2:
        pass
    except OSError:
        return False
    folders = Folders(root)
    try:
        for path, want in files:
            *dirs, name = path.split("/")
            dfd = folders.at(dirs)
            if dfd is None:
                return False
            if not _same(os.stat(name, dir_fd=dfd, follow_symlinks=False), want):
                return False
        return True
    except OSError:
        return False
    finally:
        folders.close()


def _line(st: os.stat_result) -> str:
    return " ".join(str(x) for x in mark(st))


def _same(st: os.stat_result | None, want: Mark) -> bool:
    return st is not None and mark(st) == want


def keep(
    where: Place, key: str, record: os.stat_result, files: Sequence[tuple[str, os.stat_result]]
) -> None:
    """Keep what a check by the bytes just found in a host folder (`where`: `place`): its
    record, sealed with `key`, and each recorded file, by path, for the next check;
    nothing when one of them changed too recently to be trusted (`RACY_NS`) or the cache
    cannot be written (the next check reads the bytes again)."""
    now = time.time_ns()
    if any(now - st.st_ctime_ns < RACY_NS for st in (record, *(st for _, st in files))):
        return
    if any("\n" in path for path, _ in files):
        return  # a record's path is one line of the index, or it is not kept
    path, bound = where.path, where.bound
    lines = [FORMAT, key, _line(record)]
    lines += [f"{_line(st)} {name}" for name, st in files]
    body = "\n".join(lines).encode("utf-8", "surrogateescape")
    seal = contentkey.seal(bound, body)
    if seal is None or not _room(path.parent):
        return
    try:
        dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    try:  # staged and renamed: a concurrent reader sees the old index or the new
        staged = stage_at(dfd, path.name, body + b"\n" + seal.encode(), 0o600, exact=True)
        try:
            os.replace(staged, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(staged, dir_fd=dfd)
    except OSError:
        return
    finally:
        os.close(dfd)


@functools.cache
def _room(folder: Path) -> bool:
    """Whether the index folder exists (made 0700) and holds fewer than `LIMIT` files;
    past it, it is emptied first.  Once a process: a fleet's hosts add at most its size."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        names = os.listdir(folder)
        if len(names) >= LIMIT:
            for n in names:
                os.unlink(folder / n)
    except OSError:
        return False
    return True
