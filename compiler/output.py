"""Write artifacts atomically, diff them against a tree (`--check`), or describe them (JSON).

A build renders everything in memory first; only then are files replaced one
by one with os.replace, so a failed build leaves the previous output as it was.
"""

from __future__ import annotations

import contextlib
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


#: Staged files are hidden and carry this suffix: `.90-hostc.conf.k3j_x9ab.hostc-tmp`.
#: A build killed (SIGKILL) between staging and renaming can leave them behind;
#: they are never a destination, `--check` ignores them, and removing them is safe.
STAGING_SUFFIX = ".hostc-tmp"

#: Directories `--out` refuses: a build there would litter (or, as root, shadow)
#: the system tree.  Anything under the virtual file systems is refused as well.
SYSTEM_DIRS = frozenset(
    {
        *("/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32"),
        *("/proc", "/run", "/sbin", "/sys", "/usr", "/var", "/usr/bin", "/usr/lib"),
        *("/usr/lib64", "/usr/local", "/usr/sbin", "/usr/share", "/var/lib", "/var/log"),
    }
)
_VIRTUAL = ("/proc", "/sys", "/dev")


def is_staging_file(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(STAGING_SUFFIX)


def unsafe_out(out: Path) -> str | None:
    """Why `out` may not receive a build, or None.

    The rule: never a file-system root or a system directory (also when reached
    through a symlink), never under /proc, /sys or /dev, never an existing
    non-directory.  Any other directory is fine: a build only ever writes
    `DIR/<target>/…`, and only the files it makes.
    """
    try:
        real = out.resolve()
    except (OSError, RuntimeError) as e:
        return f"cannot resolve the path: {e}"
    text = real.as_posix()
    if text in SYSTEM_DIRS or real.parent == real:
        return f"{text} is a system directory; write the build into a directory of its own"
    if any(text == v or text.startswith(v + "/") for v in _VIRTUAL):
        return f"{text} is inside a virtual file system"
    if real.exists() and not real.is_dir():
        return "exists and is not a directory"
    return None


def write(artifacts: Iterable[Artifact], out: Path) -> list[Path]:
    """Stage every file next to its destination first, then rename them all.

    A failure while staging (a path blocked by a directory, a full disk) removes
    the staged files and every directory this call created, and leaves every
    previous output untouched.  Renames replace one file at a time, so a reader
    (or a build killed half-way) sees each file either old or new, never half.
    """
    from hostc.diagnostics import HostcError, file_error

    problem = unsafe_out(out)
    if problem is not None:
        raise HostcError([file_error(str(out), f"refusing to write here: {problem}")])
    staged: list[tuple[Path, Path]] = []
    created: list[Path] = []
    ready: set[Path] = set()  # folders made or seen by this call: one mkdir -p each
    try:
        for art in artifacts:
            dest = destination(out, art)
            if dest.is_dir():
                raise IsADirectoryError(f"{dest} is a directory")
            if dest.parent not in ready:
                created += _makedirs(dest.parent)
                ready.add(dest.parent)
            staged.append((_stage(dest, art.data, art.mode), dest))
        for tmp, dest in staged:
            os.replace(tmp, dest)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        for d in reversed(created):
            with contextlib.suppress(OSError):  # not empty: keep it
                d.rmdir()
        raise
    return [dest for _, dest in staged]


def _makedirs(path: Path) -> list[Path]:
    """mkdir -p, returning the directories it made, outermost first."""
    missing: list[Path] = []
    p = path
    while not p.is_dir():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    made: list[Path] = []
    try:
        for d in reversed(missing):
            d.mkdir()
            made.append(d)
    except BaseException:
        for d in reversed(made):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
    return made


def _stage(dest: Path, data: bytes, mode: int) -> Path:
    """Write `data` beside `dest` (whose folder `write` has made) under a hidden name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=STAGING_SUFFIX, dir=dest.parent)
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


def differences(artifacts: list[Artifact], out: Path) -> list[tuple[str, str]]:
    """(path under `out`, unified diff) for each file that differs; [] when identical.

    Files under a selected target's folder that the build no longer makes count
    as differences too (a stale golden file must not linger).  Hidden staging
    files a killed build left behind (`STAGING_SUFFIX`) are not.
    """
    found: list[tuple[str, str]] = []
    expected = {destination(out, a) for a in artifacts}
    for art in artifacts:
        dest = destination(out, art)
        old = _read(dest)
        new = art.data
        if old == new:
            continue
        rel = f"{art.target}/{art.relpath}"
        if dest.is_dir():
            found.append((rel, f"--- a/{rel} (a directory)\n+++ b/{rel}\n"))
            continue
        chunks = difflib.unified_diff(
            [] if old is None else _lines(old),
            _lines(new),
            fromfile="/dev/null" if old is None else f"a/{rel}",
            tofile=f"b/{rel}",
        )
        found.append((rel, _join(chunks)))
    for target in sorted({a.target for a in artifacts}):
        root = out / target
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not is_staging_file(p)):
            if path not in expected:
                rel = path.relative_to(out).as_posix()
                chunks = difflib.unified_diff(
                    _lines(path.read_bytes()), [], fromfile=f"a/{rel}", tofile="/dev/null"
                )
                found.append((rel, _join(chunks)))
    return found


def diff(artifacts: list[Artifact], out: Path) -> str:
    """Unified diff from what is in `out` to what the build makes; '' when identical."""
    return "".join(text for _, text in differences(artifacts, out))


def _join(chunks: Iterable[str]) -> str:
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
        # live: only makes the running host take the change now (skip it when a reboot
        # follows); package: what provides argv[0] where a base image may lack it
        "apply": [
            {"argv": list(s.argv), "why": s.why, "live": s.live, "package": s.package}
            for s in steps(arts, family)
        ],
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
