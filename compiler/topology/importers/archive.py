"""Capture archives as files: writing one deterministically, and unpacking one safely.

An archive handed to `hostc probe --root` may come from anywhere, so it is
read as untrusted input: streamed once to check every member (plain files and
directories only, no path outside the archive, a member count and a total size
far above any real capture) before anything is written, so that a gzip of two
million empty members is refused in about a second with little memory.
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

# A capture is a few hundred small files; anything far bigger is not one.
MAX_ARCHIVE_BYTES = 64 << 20
MAX_ARCHIVE_MEMBERS = 100_000
_HINT = "pass a directory or an archive from `hostc probe --capture`"


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


def _bad(archive: Path, message: str) -> HostcError:
    return HostcError([file_error(str(archive), message, hint=_HINT)])


def _check(archive: Path) -> None:
    """One streaming pass: refuse the archive before anything is unpacked."""
    count = total = 0
    with tarfile.open(archive, "r|*") as tar:
        for m in tar:
            # streaming: keep no list of what was seen (typeshed lacks the attribute)
            tar.members.clear()  # type: ignore[attr-defined]
            count += 1
            if count > MAX_ARCHIVE_MEMBERS:
                raise _bad(archive, f"has more than {MAX_ARCHIVE_MEMBERS} members; not a capture")
            total += m.size
            if total > MAX_ARCHIVE_BYTES:
                raise _bad(archive, f"holds more than {MAX_ARCHIVE_BYTES >> 20} MiB; not a capture")
            parts = PurePosixPath(m.name).parts
            if m.name.startswith("/") or ".." in parts:
                raise _bad(archive, f"member {m.name[:80]!r} points outside the archive")
            if not (m.isfile() or m.isdir()):
                raise _bad(archive, f"member {m.name[:80]!r} is not a plain file or directory")


def _unpack(archive: Path, dest: Path) -> None:
    with tarfile.open(archive, "r|*") as tar:
        for m in tar:
            tar.members.clear()  # type: ignore[attr-defined]
            target = dest.joinpath(*PurePosixPath(m.name).parts)
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(m)
            data = src.read(MAX_ARCHIVE_BYTES + 1) if src is not None else b""
            target.write_bytes(data)


@contextmanager
def extracted(archive: Path) -> Iterator[Path]:
    """Unpack a capture into a temporary directory, refusing anything but plain files and dirs."""
    with tempfile.TemporaryDirectory(prefix="hostc-probe-") as tmp:
        try:
            _check(archive)
            _unpack(archive, Path(tmp))
        except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
            raise _bad(archive, f"is not a readable capture archive: {e}") from None
        yield Path(tmp)
