"""Bounded reading of every file hostc is handed (spec, snapshots, import sources, --base),
and whether an output path is one of those inputs.

A path on a command line or in `host.topology` can name anything: /dev/zero, a
FIFO that never ends, a directory, a multi-gigabyte log, /etc/shadow.  Each of
these must become one clear diagnostic, and none may echo the file's content
(a file that is not hostc's may be a secret).  The limits are far above any real
input: the largest hwloc export in the shared corpus is 335 KB, an 8,192-CPU
synthetic export 5.3 MB.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from hostc.diagnostics import HostcError, file_error

#: Import sources: lstopo XML, lscpu, numactl, nvidia-smi text.
SOURCE_LIMIT = 16 << 20
#: hostc's own snapshot (version 1 of an 8,192-CPU machine is about 1 MB).
SNAPSHOT_LIMIT = 8 << 20


#: (device, inode) of every file read since `session()` began (None: no session), so
#: that no writer of the same command replaces one of its inputs.
_READ: set[tuple[int, int]] | None = None


@contextlib.contextmanager
def session() -> Iterator[None]:
    """One command: every file `read_bytes_bounded` reads is remembered, and every
    destination (`refusals.refuse_special`) that is one of them is refused."""
    global _READ
    old, _READ = _READ, set()
    try:
        yield
    finally:
        _READ = old


def read_by_this_command(path: Path, dir_fd: int | None = None) -> str | None:
    """Why `path` may not be written (it is a file this command read), or None."""
    if not _READ:
        return None
    try:
        st = os.stat(path, dir_fd=dir_fd)
    except (OSError, ValueError):
        return None
    if (st.st_dev, st.st_ino) in _READ:
        return "is an input of this command; hostc never overwrites what it reads"
    return None


def _mib(n: int) -> str:
    """A limit as a person reads it: `16 MiB`, or `64 KiB` below a mebibyte."""
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n / (1 << 10):g} KiB"


def too_large(name: str, size: int, limit: int, what: str) -> HostcError:
    """The error for a file of `size` bytes where a `what` is at most `limit` bytes."""
    return HostcError([file_error(name, f"is {size} bytes; a {what} is at most {_mib(limit)}")])


def read_bytes_bounded(path: Path, *, limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or a HostcError naming `path`.

    `what` names the file in messages ("topology snapshot", "hwloc XML").  The
    size is checked on the open descriptor and again while reading, so a file that
    grows (or a /proc file that claims 0 bytes) cannot get past the limit.
    """
    name = str(path)

    def fail(message: str, hint: str | None = None) -> HostcError:
        return HostcError([file_error(name, message, hint=hint)])

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise fail(f"{what} not found") from None
    except IsADirectoryError:
        raise fail(f"is a directory, not a {what}") from None
    except OSError as e:
        raise fail(f"cannot read the {what}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise fail(f"is a directory, not a {what}")
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(st.st_mode)
                else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "not a regular file"
            )
            raise fail(f"is {kind}, not a regular file; hostc reads a {what} from a file")
        if st.st_size > limit:
            raise too_large(name, st.st_size, limit, what)
        if _READ is not None:
            _READ.add((st.st_dev, st.st_ino))
        chunks: list[bytes] = []
        total = 0
        # the size it claims, and one byte more to see the end in the same read: asking
        # for a megabyte would allocate one for every 2 KB spec (/proc files claim 0)
        step = min(max(st.st_size + 1, 1 << 16), 1 << 20)
        while True:
            try:
                chunk = os.read(fd, min(step, limit + 1 - total))
            except OSError as e:
                raise fail(f"cannot read the {what}: {e.strerror or e}") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise fail(f"is larger than {_mib(limit)}, too large for a {what}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_bounded(path: Path, *, limit: int, what: str) -> str:
    """`read_bytes_bounded`, decoded as UTF-8; a file that is not text says so, nothing more."""
    data = read_bytes_bounded(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise HostcError(
            [file_error(str(path), f"is not UTF-8 text, so not a {what}", line=line)]
        ) from None


#: JSON hostc reads (plan.json, a kubelet checkpoint) nests a few levels; past this it is
#: not one, and Python's recursive walkers would fail on it.
JSON_NESTING = 64


def loads_toml(text: str) -> dict[str, Any]:
    """`tomli.loads`, where a number past int()'s digit limit (4,300) is a TOMLDecodeError
    like any other bad value, not a ValueError from inside the parser."""
    import tomli

    try:
        return tomli.loads(text)
    except tomli.TOMLDecodeError:
        raise
    except ValueError:
        long = re.search(r"[0-9][0-9_]{999,}", text)
        raise tomli.TOMLDecodeError(
            "a number has more digits than any value can", text, long.start() if long else 0
        ) from None


def is_number(text: str) -> bool:
    """ASCII decimal digits, few enough for int(): `str.isdigit` also takes `²` and `١٢`,
    which int() refuses or reads, and int() refuses more than 4,300 digits."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def nesting_depth(data: object) -> int:
    deepest, todo = 0, [(data, 1)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            if depth <= JSON_NESTING:
                children = node.values() if isinstance(node, dict) else node
                todo += [(v, depth + 1) for v in children]
    return deepest


def loads_json(text: str, file: str, what: str) -> Any:
    """JSON text → data, or one HostcError naming `file`: nesting past JSON_NESTING and
    numbers past int()'s digit limit are refused like a syntax error, never raised as
    RecursionError or ValueError."""
    deep = f"nests deeper than {JSON_NESTING} levels"
    try:
        data = json.loads(text)
    except RecursionError:
        raise HostcError([file_error(file, f"not a {what}: {deep}")]) from None
    except ValueError as e:  # JSONDecodeError, and int()'s digit limit
        why = str(e).split(";", 1)[0][:200]
        raise HostcError([file_error(file, f"not a {what}: {why}")]) from None
    if nesting_depth(data) > JSON_NESTING:
        raise HostcError([file_error(file, f"not a {what}: {deep}")])
    return data


def overwrites_input(dests: Iterable[Path], inputs: Iterable[Path]) -> Path | None:
    """The first destination that is (the same file as) one of `inputs`, or None.

    Compared by device and inode where the destination exists (a hard link or a
    path through a link is the same file), else by the resolved path."""
    ids: set[tuple[int, int]] = set()
    paths: set[Path] = set()
    for p in inputs:
        with contextlib.suppress(OSError, RuntimeError):
            paths.add(p.resolve())
            st = os.stat(p)
            ids.add((st.st_dev, st.st_ino))
    if not paths:
        return None
    for d in dests:
        try:
            st = os.stat(d)
        except (OSError, ValueError):
            with contextlib.suppress(OSError, RuntimeError):
                if d.resolve() in paths:
                    return d
            continue
        if (st.st_dev, st.st_ino) in ids:
            return d
    return None


#: Characters that make a spec argument a glob.
GLOB_CHARS = frozenset("*?[")


def is_selection(arg: str) -> bool:
    """A directory, a glob or an @list names many hosts (a fleet build, `hostc.fleet.runner`);
    anything else (an existing file above all, whatever its name) is one spec."""
    path = Path(arg)
    if path.is_file():
        return False
    return arg.startswith("@") or bool(GLOB_CHARS & set(arg)) or path.is_dir()
