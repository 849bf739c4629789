"""Paths under a probe root resolved as if the root were `/`: no link leaves it.

`hostc probe --root DIR` (and `--capture`) read a copied or mounted tree that
may hold links made by someone else.  sysfs itself is full of links (every PCI
device under /sys/bus/pci/devices is one, relative, into /sys/devices), so links
are followed, but the way a chroot follows them: an absolute target starts at
DIR, and `..` stops at DIR.  A link to /etc/shadow reads DIR/etc/shadow, never
the host's file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

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
