"""A fleet host's build reused: whether OUT/<host>/ is exactly what a build of the same
inputs would leave there, so the host need not be compiled again (issue 56).  Apart from
`contentkey` (the key and its seal) and `owned` (the build record), which both read, so
neither imports the other."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from hostc.delivery import contentkey
from hostc.delivery.output import read_at
from hostc.delivery.owned import (
    FAILED,
    RECORD,
    RECORD_LIMIT,
    BuildRecord,
    RecordRow,
    _open_dirs,
    _record_at,
)
from hostc.diagnostics import HostcError


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
        try:
            doc = _record_at(root, str(folder / RECORD))
        except HostcError:
            return None
        if doc is None or not contentkey.sealed(key, doc):
            return None
        return doc if all(_intact(root, row) for row in doc["files"]) else None
    finally:
        os.close(root)


def _exists(root: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=root, follow_symlinks=False)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def _intact(root: int, row: RecordRow) -> bool:
    """Whether the recorded file is in place as hostc wrote it (never through a link)."""
    *dirs, name = row["path"].split("/")
    fds = _open_dirs(root, dirs)
    if isinstance(fds, str):
        return False
    try:
        found = read_at(fds[-1] if fds else root, name, RECORD_LIMIT)
    except OSError:
        return False
    finally:
        for x in fds:
            os.close(x)
    if found is None:
        return False
    st, data = found
    return (
        st.st_uid == os.geteuid()
        and f"{stat.S_IMODE(st.st_mode):04o}" == row.get("mode", "0644")
        and hashlib.sha256(data).hexdigest() == row["sha256"]
    )
