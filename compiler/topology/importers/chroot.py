"""Paths under a probe root resolved as if the root were `/`: no link leaves it.

`hostc probe --root DIR` (and `--capture`) read a copied or mounted tree that
may hold links made by someone else.  sysfs itself is full of links (every PCI
device under /sys/bus/pci/devices is one, relative, into /sys/devices), so links
are followed, but the way a chroot follows them: an absolute target starts at
DIR, and `..` stops at DIR.  A link to /etc/shadow reads DIR/etc/shadow, never
the host's file.

`HostTree` is the one reader of such a tree (probe, audit, capture): links resolved
this way, every file read once, the bytes read bounded by TREE_BUDGET.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from hostc.diagnostics import HostcError, file_error
from hostc.inputs import read_bytes_bounded, too_large

#: Links followed while resolving one path (Linux's own limit, MAXSYMLINKS).
MAX_LINKS = 40


class Resolver:
    """Resolve relative paths under one root; directories are remembered (sysfs reads
    thousands of files in a few hundred directories)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: dict[str, tuple[str, ...] | None] = {"": ()}

    def path(self, rel: str) -> Path | None:
        """The real path of `rel` inside the root (no link left in it), or None when a
        component is missing or is not a directory."""
        head, _, name = rel.rstrip("/").rpartition("/")
        parent = self._dir(head)
        if parent is None:
            return None
        found = self._walk(list(parent), [name] if name else [])
        return None if found is None else self.root.joinpath(*found)

    def _dir(self, rel: str) -> tuple[str, ...] | None:
        if rel not in self._dirs:
            head, _, name = rel.rpartition("/")
            parent = self._dir(head)
            self._dirs[rel] = None if parent is None else self._walk(list(parent), [name])
        return self._dirs[rel]

    def _walk(self, done: list[str], todo: list[str]) -> tuple[str, ...] | None:
        links = 0
        todo = [p for p in todo if p not in ("", ".")]
        while todo:
            part = todo.pop(0)
            if part == "..":
                if done:
                    done.pop()
                continue
            try:
                st = os.lstat(self.root.joinpath(*done, part))
            except (FileNotFoundError, NotADirectoryError):
                return None
            except OSError as e:
                if e.errno == errno.ENAMETOOLONG:  # no such name can exist in the tree
                    return None
                raise
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", part)
                target = os.readlink(self.root.joinpath(*done, part))
                if target.startswith("/"):
                    done = []
                todo = [p for p in target.split("/") if p not in ("", ".")] + todo
                continue
            done.append(part)
        return tuple(done)


#: What one host tree (a `--root DIR`, an unpacked capture, the live /sys and /proc)
#: may hand hostc, all files read together: a real probe reads about 1 MB, an audit
#: a few hundred KB.  Counted by the bytes actually read, each file once.
TREE_BUDGET = 64 << 20


class TreeTooLarge(HostcError):
    """The tree handed more than TREE_BUDGET bytes: not a host tree; raised, not collected."""


class HostTree:
    """The one reader of a host tree, for `probe --root`, `audit --root` and captures.

    Paths resolve inside the root (`Resolver`); each file is read once, by identity
    (device, inode), so a thousand hard links to one file cost one read (and hand back
    one bytes object, never a copy); the bytes read are counted against TREE_BUDGET by
    their real size, and every read has its own `limit`, a file read before included.
    """

    def __init__(self, root: Path, *, shown: str | None = None, budget: int = TREE_BUDGET) -> None:
        self.root = root
        self.shown = shown or str(root)
        self.budget = budget
        self.spent = 0
        self.resolver = Resolver(root)
        self._read: dict[tuple[int, int], bytes] = {}

    def path(self, rel: str) -> Path | None:
        """`rel` resolved inside the root (OSError: a loop of links)."""
        return self.resolver.path(rel.strip("/"))

    def read(self, rel: str, *, limit: int, what: str) -> bytes | None:
        """The bytes of `rel`, None when absent; HostcError when unreadable or too big."""
        path = self.path(rel)
        if path is None:
            return None
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise HostcError([file_error(str(path), f"cannot read: {e.strerror or e}")]) from None
        key = (st.st_dev, st.st_ino)
        if key in self._read:
            data = self._read[key]
            if len(data) > limit:  # read before, under another name and a larger limit
                raise too_large(str(path), len(data), limit, what)
            return data
        data = read_bytes_bounded(path, limit=limit, what=what)
        self.spent += len(data)
        if self.spent > self.budget:
            raise TreeTooLarge(
                [
                    file_error(
                        self.shown,
                        f"its files hold more than {self.budget >> 20} MiB of what hostc reads;"
                        " not a host tree",
                    )
                ]
            )
        self._read[key] = data
        return data

    def names(self, rel: str) -> list[str] | None:
        """The entry names of directory `rel` (sorted), None when it is none."""
        path = self.path(rel)
        if path is None:
            return None
        try:
            return sorted(os.listdir(path))
        except (FileNotFoundError, NotADirectoryError):
            return None

    def is_dir(self, rel: str) -> bool:
        try:
            path = self.path(rel)
        except OSError:
            return False
        return path is not None and path.is_dir()
