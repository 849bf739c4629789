"""Write artifacts atomically, diff them against a tree (`--check`), or describe them (JSON).

A build renders everything in memory first; only then are files replaced one
by one with os.replace, so a failed build leaves the previous output as it was.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from hostc.artifact import Artifact


def destination(out: Path, art: Artifact) -> Path:
    return out / art.target / art.relpath


def write(artifacts: Iterable[Artifact], out: Path) -> list[Path]:
    written = []
    for art in artifacts:
        dest = destination(out, art)
        write_bytes(dest, art.content.encode("utf-8"), art.mode)
        written.append(dest)
    return written


def diff(artifacts: list[Artifact], out: Path) -> str:
    """Unified diff from what is in `out` to what the build makes; '' when identical.

    Files under a selected target's folder that the build no longer makes count
    as differences too (a stale golden file must not linger).
    """
    chunks: list[str] = []
    expected = {destination(out, a) for a in artifacts}
    for art in artifacts:
        dest = destination(out, art)
        try:
            old = dest.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            old = None
        if old == art.content:
            continue
        rel = f"{art.target}/{art.relpath}"
        chunks.extend(
            difflib.unified_diff(
                [] if old is None else old.splitlines(keepends=True),
                art.content.splitlines(keepends=True),
                fromfile="/dev/null" if old is None else f"a/{rel}",
                tofile=f"b/{rel}",
            )
        )
    for target in sorted({a.target for a in artifacts}):
        root = out / target
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if path not in expected:
                rel = path.relative_to(out).as_posix()
                old = path.read_text(encoding="utf-8", errors="replace")
                chunks.extend(
                    difflib.unified_diff(
                        old.splitlines(keepends=True), [], fromfile=f"a/{rel}", tofile="/dev/null"
                    )
                )
    return "".join(
        c if c.endswith("\n") else c + "\n\\ No newline at end of file\n" for c in chunks
    )


def manifest(artifacts: list[Artifact], out: Path | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for a in artifacts:
        row: dict[str, object] = {
            "target": a.target,
            "path": a.path,
            "mode": f"{a.mode:04o}",
            "sha256": hashlib.sha256(a.content.encode()).hexdigest(),
        }
        if out is None:
            row["content"] = a.content
        else:
            row["written"] = str(destination(out, a))
        rows.append(row)
    return rows


def write_text(path: Path, text: str) -> None:
    """One file, atomically (snapshots, schemas)."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` atomically: readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
