"""A fleet host's build reused: whether OUT/<host>/ is exactly what a build of the same
inputs would leave there, so the host need not be compiled again (issue 56).  Apart from
`contentkey` (the key and its seal) and `owned` (the build record), which both read, so
neither imports the other."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from hostc.delivery import contentkey
from hostc.delivery.compare import _stale
from hostc.delivery.descriptors import Folders, NoOpenat2, as_written, read_at, read_beneath
from hostc.delivery.owned import FAILED, RECORD, RECORD_LIMIT, BuildRecord, RecordRow, sealed_body


def unchanged(folder: Path, key: str) -> BuildRecord | None:
    """The record of `folder` when a build of the inputs `key` names would leave the
    folder exactly as it is, else None (build it): the record was written by a build of
    these very inputs on this machine (`contentkey.sealed`), the host is not marked
    failed, and every file the record lists is still there as hostc wrote it (a regular
    file, not a link, this user's, with its mode and bytes: what `output.write` checks
    before it leaves a file as it is).  A file edited, replaced or removed since means a
    build, as before."""
    try:
        root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if _exists(root, FAILED):
            return None
        found = _unchecked(root)
        if found is None or not sealed(key, found):
            return None
        return found[0] if _intact(root, found[0]["files"]) else None
    finally:
        os.close(root)


#: a build record as read: its fields (NOT validated) and its bytes
Found = tuple[BuildRecord, bytes]


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
    doc, data = found
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
    return (doc, found[1]) if isinstance(doc, dict) else None  # type: ignore[return-value]


def current(folder: Path, key: str, scope: set[str]) -> int | None:
    """`build --check` (and `pre-commit`) without compiling: how many files a build of the
    inputs `key` names makes, when comparing them with `folder` would find no
    difference; None to compile and compare.  That holds when the folder is `unchanged`
    (so its record lists exactly what such a build makes: every row under `scope`, the
    folders this build writes, none carried from another target) and no other file
    lies under those rows' target folders (what `compare.differences` reports as
    stale, the same walk)."""
    doc = unchanged(folder, key)
    if doc is None:
        return None
    rows = doc["files"]
    targets = {r["path"].split("/")[0] for r in rows}
    if not targets <= scope:
        return None
    expected = {folder / r["path"] for r in rows}
    if any(_stale(folder, t, expected) for t in sorted(targets)):
        return None
    return len(rows)


def _exists(root: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=root, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def _intact(root: int, rows: list[RecordRow]) -> bool:
    """Whether every recorded file is in place as hostc wrote it (never through a link):
    each opened in one call that refuses a link on its way (`descriptors.read_beneath`),
    or, where the kernel has no such call, with each folder on the way opened once for
    them all (`descriptors.Folders`)."""
    me = os.geteuid()
    try:
        return all(_same(read_beneath(root, r["path"], RECORD_LIMIT), r, me) for r in rows)
    except NoOpenat2:
        pass
    except OSError:  # unreadable: built again, as in the walk below
        return False
    folders = Folders(root)
    try:
        for row in rows:
            *dirs, name = row["path"].split("/")
            dfd = folders.at(dirs)
            if dfd is None:
                return False
            try:
                found = read_at(dfd, name, RECORD_LIMIT)
            except OSError:
                return False
            if not _same(found, row, me):
                return False
        return True
    finally:
        folders.close()


def _same(found: tuple[os.stat_result, bytes] | None, row: RecordRow, me: int) -> bool:
    """Whether the file read (`read_at`) is the recorded one as hostc wrote it: its
    owner and mode (`descriptors.as_written`) and its bytes' digest."""
    if found is None:
        return False
    st, data = found
    return as_written(st, _mode(row), me) and hashlib.sha256(data).hexdigest() == row["sha256"]


def _mode(row: RecordRow) -> int:
    """The row's recorded mode, four octal digits as `owned` writes it ("0644"), or -1 (no
    file has it) when it is anything else."""
    text = row.get("mode", "0644")
    ok = isinstance(text, str) and len(text) == 4 and all(c in "01234567" for c in text)
    return int(text, 8) if ok else -1
