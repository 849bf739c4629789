"""A fleet host's build reused: whether OUT/<host>/ is exactly what a build of the same
inputs would leave there, so the host need not be compiled again (issue 56).  Apart from
`contentkey` (the key and its seal) and `owned` (the build record), which both read, so
neither imports the other."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from hostc.delivery import contentkey, statindex
from hostc.delivery.compare import _stale
from hostc.delivery.descriptors import Folders, NoOpenat2, as_written, read_at, read_beneath
from hostc.delivery.owned import FAILED, RECORD, RECORD_LIMIT, BuildRecord, RecordRow, sealed_body


def unchanged(folder: Path, key: str) -> list[str] | None:
    """The files (paths) `folder`'s build record lists when a build of the inputs `key`
    names would leave the folder exactly as it is, else None (build it): the record was
    written by a build of these very inputs on this machine (`contentkey.sealed`), the
    host is not marked failed, and every file the record lists is still there as hostc
    wrote it (a regular file, not a link, this user's, with its mode and bytes: what
    `output.write` checks before it leaves a file as it is).  A file edited, replaced or
    removed since means a build, as before.  The bytes are read once: after a check by
    them has passed, the statuses of the record and its files are kept (`statindex`),
    and a later check that finds each with the very status kept reads none of them."""
    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if _exists(root, FAILED):
            return None
        where = statindex.place(folder)
        kept = statindex.recall(where)
        if kept is not None and statindex.holds(root, key, kept):
            return [path for path, _ in kept.files]
        return _by_bytes(root, where, key)
    finally:
        os.close(root)


def _by_bytes(root: int, where: statindex.Place, key: str) -> list[str] | None:
    """`unchanged` by the record's seal and every file's bytes; what it found is kept."""
    found = _unchecked(root)
    if found is None or not sealed(key, found):
        return None
    rows = found[0]["files"]
    stats = _intact(root, rows)
    if stats is None:
        return None
    paths = [r["path"] for r in rows]
    statindex.keep(where, key, found[2], list(zip(paths, stats, strict=True)))
    return paths


#: a build record as read: its fields (NOT validated), its bytes and its status
Found = tuple[BuildRecord, bytes, os.stat_result]


def record(folder: Path) -> Found | None:
    """`folder`'s build record as JSON, NOT validated, and its bytes: trusted only once
    `sealed` says this very hostc wrote it from the inputs a key names (the key holds
    hostc's version and sources, so the record has this hostc's format); `owned.read`'s
    checks, for a record from anywhere, cost a fleet host more than the skip saves."""
    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return _unchecked(root)
    finally:
        os.close(root)


def sealed(key: str, found: Found) -> bool:
    """Whether the record read was written by a build of the inputs `key` names, here
    (`contentkey.sealed` over its bytes without the seal: `owned.sealed_body`)."""
    doc, data, _ = found
    mark = doc.get(contentkey.FIELD)
    if not isinstance(mark, str):
        return False
    return contentkey.sealed(key, sealed_body(data, mark), mark)


def _unchecked(root: int) -> Found | None:
    try:
        found = read_at(root, RECORD, RECORD_LIMIT)
    except OSError:
        return None
    if found is None or len(found[1]) > RECORD_LIMIT:
        return None
    try:
        doc = json.loads(found[1])
    except (ValueError, RecursionError):
        return None
    return (doc, found[1], found[0]) if isinstance(doc, dict) else None  # type: ignore[return-value]


def current(folder: Path, key: str, scope: set[str]) -> int | None:
    """`build --check` (and `pre-commit`) without compiling: how many files a build of the
    inputs `key` names makes, when comparing them with `folder` would find no
    difference; None to compile and compare.  That holds when the folder is `unchanged`
    (so its record lists exactly what such a build makes: every row under `scope`, the
    folders this build writes, none carried from another target) and no other file
    lies under those rows' target folders (what `compare.differences` reports as
    stale, the same walk)."""
    paths = unchanged(folder, key)
    if paths is None:
        return None
    targets = {p.split("/")[0] for p in paths}
    if not targets <= scope:
        return None
    expected = {folder / p for p in paths}
    if any(_stale(folder, t, expected) for t in sorted(targets)):
        return None
    return len(paths)


def _exists(root: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=root, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def _intact(root: int, rows: list[RecordRow]) -> list[os.stat_result] | None:
    """Each recorded file's status when every one is in place as hostc wrote it (never
    through a link), else None: each opened in one call that refuses a link on its way
    (`descriptors.read_beneath`), or, where the kernel has no such call, with each folder
    on the way opened once for them all (`descriptors.Folders`)."""
    me = os.geteuid()
    try:
        return _all_same(lambda path: read_beneath(root, path, RECORD_LIMIT), rows, me)
    except NoOpenat2:
        pass
    except OSError:  # unreadable: built again, as in the walk below
        return None
    folders = Folders(root)

    def walked(path: str) -> tuple[os.stat_result, bytes] | None:
        *dirs, name = path.split("/")
        dfd = folders.at(dirs)
        return None if dfd is None else read_at(dfd, name, RECORD_LIMIT)

    try:
        return _all_same(walked, rows, me)
    except OSError:
        return None
    finally:
        folders.close()


def _all_same(
    read: Callable[[str], tuple[os.stat_result, bytes] | None], rows: list[RecordRow], me: int
) -> list[os.stat_result] | None:
    """The statuses of the recorded files, read one by one by `read`, while each is its
    row as hostc wrote it (`_same`); None at the first that is not."""
    stats = []
    for row in rows:
        got = read(row["path"])
        if got is None or not _same(got, row, me):
            return None
        stats.append(got[0])
    return stats


def _same(found: tuple[os.stat_result, bytes], row: RecordRow, me: int) -> bool:
    """Whether the file read (`read_at`) is the recorded one as hostc wrote it: its
    owner and mode (`descriptors.as_written`) and its bytes' digest."""
    st, data = found
    return as_written(st, _mode(row), me) and hashlib.sha256(data).hexdigest() == row["sha256"]


def _mode(row: RecordRow) -> int:
    """The row's recorded mode, four octal digits as `owned` writes it ("0644"), or -1 (no
    file has it) when it is anything else."""
    text = row.get("mode", "0644")
    ok = isinstance(text, str) and len(text) == 4 and all(c in "01234567" for c in text)
    return int(text, 8) if ok else -1
