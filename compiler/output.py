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
from hostc.plan import OsFamily


def destination(out: Path, art: Artifact) -> Path:
    return out / art.target / art.relpath


def write(artifacts: Iterable[Artifact], out: Path) -> list[Path]:
    """Stage every file next to its destination first, then rename them all.

    A failure while staging (a path blocked by a directory, a full disk) removes
    the staged files and leaves every previous output untouched.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for art in artifacts:
            dest = destination(out, art)
            staged.append((_stage(dest, art.data, art.mode), dest))
            if dest.is_dir():
                raise IsADirectoryError(f"{dest} is a directory")
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, dest in staged:
        os.replace(tmp, dest)
    return [dest for _, dest in staged]


def _stage(dest: Path, data: bytes, mode: int) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _read(path: Path) -> bytes | None:
    """The bytes on disk, or None when there is no file (a directory counts as none)."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def diff(artifacts: list[Artifact], out: Path) -> str:
    """Unified diff from what is in `out` to what the build makes; '' when identical.

    Files under a selected target's folder that the build no longer makes count
    as differences too (a stale golden file must not linger).
    """
    chunks: list[str] = []
    expected = {destination(out, a) for a in artifacts}
    for art in artifacts:
        dest = destination(out, art)
        old = _read(dest)
        new = art.data
        if old == new:
            continue
        rel = f"{art.target}/{art.relpath}"
        if dest.is_dir():
            chunks.append(f"--- a/{rel} (a directory)\n+++ b/{rel}\n")
            continue
        chunks.extend(
            difflib.unified_diff(
                [] if old is None else _lines(old),
                _lines(new),
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
                old_text = path.read_bytes()
                chunks.extend(
                    difflib.unified_diff(
                        _lines(old_text), [], fromfile=f"a/{rel}", tofile="/dev/null"
                    )
                )
    return "".join(
        c if c.endswith("\n") else c + "\n\\ No newline at end of file\n" for c in chunks
    )


def _lines(data: bytes) -> list[str]:
    """Lines for a diff, split on LF only so a stray CR stays visible; bad bytes escaped."""
    parts = data.decode("utf-8", errors="backslashreplace").split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def manifest(artifacts: list[Artifact], out: Path | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for a in artifacts:
        row: dict[str, object] = {
            "target": a.target,
            "path": a.path,
            "kind": a.kind.value,
            "mode": f"{a.mode:04o}",
            "sha256": hashlib.sha256(a.data).hexdigest(),
            "activation": [str(x) for x in a.activation],
        }
        if out is None:
            try:
                row["content"] = a.data.decode("utf-8")
            except UnicodeDecodeError:
                import base64

                row["content_base64"] = base64.b64encode(a.data).decode("ascii")
        else:
            row["written"] = str(destination(out, a))
        rows.append(row)
    return rows


def apply_manifest(artifacts: Iterable[Artifact], family: OsFamily) -> dict[str, object]:
    """The manifest's top level for a provisioning system that places the files itself:
    the apply steps for the host's OS family, in order, and whether a reboot follows."""
    from hostc.activation import needs_reboot, steps

    arts = list(artifacts)
    return {
        "apply": [{"argv": list(s.argv), "why": s.why} for s in steps(arts, family)],
        "reboot": needs_reboot(arts),
    }


def write_text(path: Path, text: str) -> None:
    """One file, atomically (snapshots, schemas)."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` atomically: readers see the old file or the new one, never half."""
    tmp = _stage(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
