"""Capture archives as files: writing one deterministically, and unpacking one safely.

An archive handed to `hostc probe --root` may come from anywhere, so it is
read as untrusted input: streamed once to check every member (plain files and
directories only, no path outside the archive, a member count and a total size
far above any real capture) before anything is written, so that a gzip of two
million empty members is refused in about a second with little memory.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

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


_CHUNK = 1 << 20


def _plain_chunks(f: BinaryIO) -> Iterator[bytes]:
    """The archive's tar bytes, at most 1 MiB at a time whatever the compression ratio."""
    head = f.read(6)
    f.seek(0)
    d: Any
    if head[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(47)
        while chunk := f.read(_CHUNK):
            while chunk:
                yield d.decompress(chunk, _CHUNK)
                chunk = d.unconsumed_tail
            if d.eof:
                return
        return
    if head[:3] == b"BZh" or head == b"\xfd7zXZ\x00":
        d = bz2.BZ2Decompressor() if head[:3] == b"BZh" else lzma.LZMADecompressor()
        while not d.eof:
            data = d.decompress(f.read(_CHUNK) if d.needs_input else b"", _CHUNK)
            if not data and d.needs_input and not f.peek(1):  # type: ignore[attr-defined]
                return
            yield data
        return
    while chunk := f.read(_CHUNK):
        yield chunk


def _size(header: bytes) -> int:
    field = header[124:136]
    if field[0] & 0x80:  # GNU base-256
        return int.from_bytes(field[1:], "big")
    text = field.split(b"\0", 1)[0].strip()
    return int(text, 8) if text else 0


def _count(archive: Path) -> None:
    """Count members and their sizes from the raw headers, before tarfile sees any.

    tarfile spends about 0.1 ms on each header; walking them here costs a few
    microseconds, so two million empty members are refused in well under a second.
    """
    count = total = 0
    skip = 0
    pending = bytearray()
    with archive.open("rb") as f:
        for chunk in _plain_chunks(f):
            view = memoryview(chunk)
            if skip:
                step = min(skip, len(view))
                view, skip = view[step:], skip - step
            while len(view):
                if pending or len(view) < 512:
                    take = 512 - len(pending)
                    pending += view[:take]
                    view = view[take:]
                    if len(pending) < 512:
                        break
                    header, pending = bytes(pending), bytearray()
                else:
                    header, view = bytes(view[:512]), view[512:]
                if not any(header):
                    continue  # end-of-archive blocks
                try:
                    size = _size(header)
                except ValueError:
                    raise _bad(archive, "has a damaged tar header") from None
                count += 1
                total += size
                if count > MAX_ARCHIVE_MEMBERS:
                    raise _bad(
                        archive, f"has more than {MAX_ARCHIVE_MEMBERS} members; not a capture"
                    )
                if total > MAX_ARCHIVE_BYTES:
                    raise _bad(
                        archive, f"holds more than {MAX_ARCHIVE_BYTES >> 20} MiB; not a capture"
                    )
                skip = -(-size // 512) * 512
                step = min(skip, len(view))
                view, skip = view[step:], skip - step


def _check(archive: Path) -> None:
    """Refuse the archive before anything is unpacked: counts first, then every member."""
    _count(archive)
    with tarfile.open(archive, "r|*") as tar:
        for m in tar:
            # streaming: keep no list of what was seen (typeshed lacks the attribute)
            tar.members.clear()  # type: ignore[attr-defined]
            parts = PurePosixPath(m.name).parts
            if m.name.startswith("/") or ".." in parts:
                raise _bad(archive, f"member {m.name[:80]!r} points outside the archive")
            if not (m.isfile() or m.isdir()) or m.issparse():
                raise _bad(archive, f"member {m.name[:80]!r} is not a plain file or directory")


def _unpack(archive: Path, dest: Path) -> None:
    """Write the members, counting the bytes really unpacked against MAX_ARCHIVE_BYTES
    (a header's size is not the unpacked size: pax headers and sparse maps change it)."""
    left = MAX_ARCHIVE_BYTES
    with tarfile.open(archive, "r|*") as tar:
        for m in tar:
            tar.members.clear()  # type: ignore[attr-defined]
            target = dest.joinpath(*PurePosixPath(m.name).parts)
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(m)
            data = src.read(left + 1) if src is not None else b""
            left -= len(data)
            if left < 0:
                raise _bad(archive, f"holds more than {MAX_ARCHIVE_BYTES >> 20} MiB; not a capture")
            target.write_bytes(data)


@contextmanager
def extracted(archive: Path) -> Iterator[Path]:
    """Unpack a capture into a temporary directory, refusing anything but plain files and dirs."""
    with tempfile.TemporaryDirectory(prefix="hostc-probe-") as tmp:
        try:
            _check(archive)
            _unpack(archive, Path(tmp))
        except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError) as e:
            raise _bad(archive, f"is not a readable capture archive: {e}") from None
        yield Path(tmp)
