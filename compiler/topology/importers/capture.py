"""Capture the files `hostc probe` reads into a small archive that probes the same.

A capture lets a machine's topology be reproduced, debugged and tested
elsewhere without copying /sys (which cannot be tarred directly: its files claim
4096 bytes and its PCI devices are symlinks into a tree of thousands of files).
The archive is deterministic, so capturing an unchanged host twice gives the
same bytes and captures can be checked in and diffed.  Reading one back is
`archive.extracted`, which probe uses without importing this module.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from hostc.diagnostics import HostcError, file_error
from hostc.inputs import overwrites_input
from hostc.topology.importers import sysfs
from hostc.topology.importers.archive import archive_bytes
from hostc.topology.importers.sysfs_reader import Reader


def capture(
    out: Path | None,
    root: Path = Path("/"),
    extra: tuple[dict[str, bytes], set[str]] | None = None,
) -> bytes:
    """The archive's bytes, to be written to `out` (by the API, atomically, so a failed
    capture never leaves half an archive): `out` is refused if it is a file the capture read
    (None: standard output).

    `extra` adds files and directories read by someone else (what `hostc audit`
    reads for a spec's Plan: `hostc probe --capture --spec`).

    Malformed files are captured as found (reproducing a failing probe is the
    point of a capture); only a root that is no Linux tree at all is refused.
    """
    if not root.is_dir():
        raise HostcError([file_error(str(root), "no such directory to capture")])
    reader = Reader(root)
    _, stored = sysfs.collect(reader, live=root.resolve() == Path("/"))
    files = dict(reader.files)
    dirs = set(reader.dirs)
    if extra is not None:
        files.update(extra[0])
        dirs |= extra[1]
    if stored is None and root.resolve() == Path("/"):
        text, _ = sysfs.run_nvidia_smi()
        if text is not None:
            files[sysfs.SMI_FILE] = text.encode("utf-8")
    read = [p for rel in reader.files if (p := reader.path(rel)) is not None]
    if out is not None and overwrites_input([out], read) is not None:
        raise HostcError(
            [file_error(str(out), "refusing to write: the capture would overwrite a file it read")]
        )
    return archive_bytes(files, dirs)


def members(data: bytes) -> list[str]:
    """The member names of an archive `capture` made."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getnames()
