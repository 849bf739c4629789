"""`--check`: the build compared with a tree on disk, never reading through a link.

A golden tree is a reviewer's input as much as a spec is: a symbolic link in it is
reported as a link (its target neither opened nor shown), and what is shown from a
file on disk goes through `diagnostics.printable` first.
"""

from __future__ import annotations

import difflib
import enum
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from hostc.artifact import Artifact
from hostc.delivery.descriptors import is_staging_file
from hostc.delivery.output import destination
from hostc.diagnostics import printable


class _NotAFile(enum.Enum):
    LINK = "a symbolic link, not followed"
    DIRECTORY = "a directory"
    OTHER = "not a regular file"
    LARGE = "a file too large to be hostc's, not read"


#: No artifact comes near this; a larger file in a golden tree is not read.
READ_LIMIT = 16 << 20


def _read(out: Path, parts: tuple[str, ...]) -> bytes | _NotAFile | None:
    """The bytes at `out/parts…`, None when nothing is there; never through a link.

    A symbolic link anywhere below `out` (a golden tree is a reviewer's input too)
    is reported as what it is, and its target is neither opened nor shown.
    """
    fds: list[int] = []
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
        fds.append(fd)
        for i, part in enumerate(parts):
            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            last = i == len(parts) - 1
            if stat.S_ISLNK(st.st_mode):
                return _NotAFile.LINK
            if last:
                if stat.S_ISDIR(st.st_mode):
                    return _NotAFile.DIRECTORY
                if not stat.S_ISREG(st.st_mode):
                    return _NotAFile.OTHER
                if st.st_size > READ_LIMIT:
                    return _NotAFile.LARGE
                ffd = os.open(part, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
                with os.fdopen(ffd, "rb") as f:
                    return f.read(READ_LIMIT + 1)
            if not stat.S_ISDIR(st.st_mode):
                return None
            fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            fds.append(fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    finally:
        for fd in fds:
            os.close(fd)
    return None


def differences(artifacts: list[Artifact], out: Path) -> list[tuple[str, str]]:
    """(path under `out`, unified diff) for each file that differs; [] when identical.

    Files under a selected target's folder that the build no longer makes count
    as differences too (a stale golden file must not linger).  Hidden staging
    files a killed build left behind (`STAGING_SUFFIX`) are not.  A symbolic link
    in the tree is a difference, shown as a link: its target is never read.
    """
    found: list[tuple[str, str]] = []
    expected = {destination(out, a) for a in artifacts}
    for art in artifacts:
        old = _read(out, Path(art.target, art.relpath).parts)
        new = art.data
        if old == new:
            continue
        rel = f"{art.target}/{art.relpath}"
        if isinstance(old, _NotAFile):
            found.append((rel, f"--- a/{rel} ({old.value})\n+++ b/{rel}\n"))
            continue
        chunks = difflib.unified_diff(
            [] if old is None else _lines(old),
            _lines(new),
            fromfile="/dev/null" if old is None else f"a/{rel}",
            tofile=f"b/{rel}",
        )
        found.append((rel, _join(chunks)))
    for target in sorted({a.target for a in artifacts}):
        found += _stale(out, target, expected)
    return found


def diff(artifacts: list[Artifact], out: Path) -> str:
    """Unified diff from what is in `out` to what the build makes; '' when identical."""
    return "".join(text for _, text in differences(artifacts, out))


def _stale(out: Path, target: str, expected: set[Path]) -> list[tuple[str, str]]:
    """Files (and links) under `out/target` the build does not make; links not followed."""
    root = out / target
    if root.is_symlink() or not root.is_dir():
        return []
    found: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):  # os.walk does not follow links
        base = Path(dirpath)
        links = [d for d in dirnames if (base / d).is_symlink()]
        for path in sorted([*(base / f for f in filenames), *(base / d for d in links)]):
            if path in expected or is_staging_file(path):
                continue
            rel = printable(path.relative_to(out).as_posix())
            data = _read(out, path.relative_to(out).parts)
            if isinstance(data, _NotAFile) or data is None:
                what = data.value if isinstance(data, _NotAFile) else "gone"
                found.append((rel, f"--- a/{rel} ({what})\n+++ /dev/null\n"))
                continue
            chunks = difflib.unified_diff(_lines(data), [], fromfile=f"a/{rel}", tofile="/dev/null")
            found.append((rel, _join(chunks)))
    return sorted(found)


def _join(chunks: Iterable[str]) -> str:
    return "".join(
        c if c.endswith("\n") else c + "\n\\ No newline at end of file\n" for c in chunks
    )


def _lines(data: bytes) -> list[str]:
    """Lines for a diff, split on LF only so a stray CR stays visible; bad bytes escaped."""
    text = data.decode("utf-8", errors="backslashreplace")
    if "\x1b" in text or "\x9b" in text or "\r" in text or not text.isprintable():
        # what a terminal would act on (escapes, bidi, a CR) is shown escaped; tabs and
        # line feeds stay as they are
        text = "\n".join(
            "\t".join(printable(cell) for cell in line.split("\t")) for line in text.split("\n")
        )
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
