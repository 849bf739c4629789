"""Capture the files `hostc probe` reads into a small archive that probes the same.

A capture lets a machine's topology be reproduced, debugged and tested
elsewhere without copying /sys (which cannot be tarred directly: its files claim
4096 bytes and its PCI devices are symlinks into a tree of thousands of files).
The archive is deterministic, so capturing an unchanged host twice gives the
same bytes and captures can be checked in and diffed.  Reading one back lives
here too, because an archive from elsewhere is untrusted input.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from hostc.diagnostics import HostcError, file_error
from hostc.output import write_bytes
from hostc.topology.importers import sysfs

# A capture is a few hundred small files; anything far bigger is not one.
MAX_ARCHIVE_BYTES = 64 << 20
MAX_ARCHIVE_MEMBERS = 100_000


def _member(name: str, *, size: int = 0, directory: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    info.mode = 0o755 if directory else 0o644
    info.size = size
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def archive_bytes(files: dict[str, bytes], dirs: set[str]) -> bytes:
    """A gzip tar with every parent directory listed and nothing that varies by run."""
    all_dirs = set(dirs)
    for path in [*files, *dirs]:
        all_dirs.update(str(p) for p in PurePosixPath(path).parents if str(p) != ".")
    all_dirs -= set(files)
    raw = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name in sorted(all_dirs | set(files)):
            if name in files:
                data = files[name]
                tar.addfile(_member(name, size=len(data)), io.BytesIO(data))
            else:
                tar.addfile(_member(name, directory=True))
    return raw.getvalue()


def capture(out: Path, root: Path = Path("/")) -> list[str]:
    """Write the archive to `out` and return its member names.

    Malformed files are captured as found (reproducing a failing probe is the
    point of a capture); only a root that is no Linux tree at all is refused.
    """
    if not root.is_dir():
        raise HostcError([file_error(str(root), "no such directory to capture")])
    reader = sysfs.Reader(root)
    _, stored = sysfs.collect(reader, live=root.resolve() == Path("/"))
    files = dict(reader.files)
    if stored is None and root.resolve() == Path("/"):
        text, _ = sysfs.run_nvidia_smi()
        if text is not None:
            files[sysfs.SMI_FILE] = text.encode("utf-8")
    data = archive_bytes(files, reader.dirs)
    try:
        # Atomic, so a failed capture never leaves half an archive.
        write_bytes(out, data, mode=0o644)
    except OSError as e:
        raise HostcError(
            [file_error(str(out), f"cannot write the capture: {e.strerror or e}")]
        ) from None
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getnames()


@contextmanager
def extracted(archive: Path) -> Iterator[Path]:
    """Unpack a capture into a temporary directory, refusing anything but plain files and dirs."""

    def bad(message: str) -> HostcError:
        hint = "pass a directory or an archive from `hostc capture`"
        return HostcError([file_error(str(archive), message, hint=hint)])

    with tempfile.TemporaryDirectory(prefix="hostc-probe-") as tmp:
        try:
            with tarfile.open(archive, "r:*") as tar:
                members = tar.getmembers()
                if len(members) > MAX_ARCHIVE_MEMBERS:
                    raise bad(f"has {len(members)} members; a capture has a few hundred")
                if sum(m.size for m in members) > MAX_ARCHIVE_BYTES:
                    raise bad("is too large to be a capture")
                for m in members:
                    parts = PurePosixPath(m.name).parts
                    if m.name.startswith("/") or ".." in parts:
                        raise bad(f"member {m.name!r} points outside the archive")
                    if not (m.isfile() or m.isdir()):
                        raise bad(f"member {m.name!r} is not a plain file or directory")
                tar.extractall(tmp, members=members, filter="data")
        except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
            raise bad(f"is not a readable capture archive: {e}") from None
        yield Path(tmp)
