"""`hostc diff DIR@REV DIR` at fleet scale: the hosts whose every input file is the same
on both sides, found without compiling either side (issue 56).

A host's inputs are the files `contentkey.walk` finds from its spec in the working
tree (the spec, its `extends` chain, every snapshot a layer names).  The host is the
same on both sides when each of those paths is, at the revision, a plain file whose
blob id is the id of the working tree's bytes (`git hash-object`, computed here; the
revision's ids come from one `ls-tree -r` through `hostc.fleet.gitrev`, the one place
git runs).  Equal bytes at equal paths make the revision's walk
read the same files, so both sides compile from the same input: "unchanged", and
neither is compiled.  Anything else (a file that differs, is missing, is a link, or a
path `gitrev` refuses) leaves the host to the full review, which says what is wrong.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from hostc.delivery import contentkey
from hostc.diagnostics import HostcError
from hostc.fleet.gitrev import _FILE_MODES, Revision


def _revision_side(arg: str) -> tuple[str, str] | None:
    """(folder, rev) of a `DIR@REV` side, None for a side of the working tree."""
    if "@" not in arg or arg.startswith("@") or Path(arg).exists():
        return None
    name, rev = arg.rsplit("@", 1)
    return name, rev


def same_hosts(old: str, new: str, pairs: list[tuple[str, str, str]]) -> set[str]:
    """The hosts of `pairs` (host, old spec, new spec, as `diffinputs.hosts_at` names
    them) whose inputs are the same files on both sides; only where one side is
    `DIR@REV` and the other the working tree (else none)."""
    sides = _revision_side(old), _revision_side(new)
    if (sides[0] is None) == (sides[1] is None) or not contentkey.enabled():
        return set()
    arg, (_, rev) = (old, sides[0]) if sides[0] is not None else (new, sides[1])  # type: ignore[misc]
    try:
        at = Revision.at(rev, arg)
        algorithm = at.object_format(arg)
    except HostcError:
        return set()
    at_rev = 1 if sides[0] is not None else 2
    wanted: dict[str, list[tuple[Path, str, PurePosixPath]]] = {}
    relative: dict[str, PurePosixPath | None] = {}

    def rel(name: str) -> PurePosixPath | None:
        if name not in relative:
            try:
                relative[name] = at.relative(Path(name), f"{name}@{rev}")
            except HostcError:
                relative[name] = None
        return relative[name]

    for pair in pairs:
        here = pair[3 - at_rev]
        there = pair[at_rev].rsplit("@", 1)[0]
        if os.path.normpath(here) != os.path.normpath(there):
            continue
        found = contentkey.walk(Path(here), contentkey.DISK)
        if found is None:
            continue
        paths = [(Path(n), kind, r) for n, kind in found if (r := rel(n)) is not None]
        if len(paths) == len(found):
            wanted[pair[0]] = paths
    try:
        at.whole_tree(arg)
    except HostcError:
        return set()
    same: dict[str, set[str]] = {}
    for host, paths in wanted.items():
        ids = [_same(at, p, kind, r, algorithm, f"{p}@{rev}") for p, kind, r in paths]
        if all(ids):
            same[host] = {o for o in ids if o}
    try:  # the revision's objects are there to read: a partial clone's missing one is not
        held = at.present(set[str]().union(*same.values()), arg)
    except HostcError:
        return set()
    return {host for host, ids in same.items() if ids <= held}


def _same(
    at: Revision, path: Path, kind: str, rel: PurePosixPath, algorithm: str, shown: str
) -> str | None:
    """The blob id `rel` has both at the revision and in the working tree, or None."""
    try:
        found = at.entry(rel, shown)
    except HostcError:
        return None
    if found is None or found[0] not in _FILE_MODES or found[1] != "blob":
        return None
    data = contentkey.DISK(path, kind)
    if data is None or contentkey.blob_id(data, algorithm) != found[2]:
        return None
    return found[2]


def preload(pairs: list[tuple[str, str, str]]) -> None:
    """The revision sides' files of the hosts `pairs` (host, old, new) are about to be
    reviewed for, read ahead into their (pinned, `gitrev.pinned`) Revision: the tree
    by one `ls-tree -r`, then the blobs by one `cat-file --batch` per level of the
    `extends` chain (each spec's walk, `contentkey.walk`, over what is read so far).
    Only a cache: what it could not read (a path refused, a missing object) is read,
    and judged, by the review itself, one file at a time."""
    sides: dict[str, list[str]] = {}
    for pair in pairs:
        for arg in pair[1:]:
            found = _revision_side(arg)
            if found is not None:
                sides.setdefault(found[1], []).append(found[0])
    for rev, specs in sides.items():
        try:
            at = Revision.at(rev, f"{specs[0]}@{rev}")
            at.whole_tree(f"{specs[0]}@{rev}")
        except HostcError:
            continue
        todo = sorted(set(specs))
        for _ in range(16):  # each round reads one more level of every spec's chain
            wanted: set[str] = set()
            read = _Ahead(at, wanted)
            left = []
            for spec in todo:
                inputs = contentkey.walk(Path(spec), read)
                if inputs is None:
                    left.append(spec)
                    continue
                for name, kind in inputs:  # the walk reads specs; the snapshots too
                    if kind == "snapshot":
                        read(Path(name), kind)
            todo = left
            if not wanted:
                break
            try:
                at.fetch(wanted, f"{todo[0]}@{rev}" if todo else rev)
            except HostcError:
                break


class _Ahead:
    """`contentkey.walk`'s reader over a revision: a blob already read, or None after
    naming the blob it needs in `wanted` (read by the next `cat-file --batch`)."""

    def __init__(self, at: Revision, wanted: set[str]) -> None:
        self.at, self.wanted = at, wanted

    def __call__(self, path: Path, kind: str) -> bytes | None:
        shown = f"{path}@{self.at.rev}"
        try:
            found = self.at.entry(self.at.relative(path, shown), shown)
        except HostcError:
            return None
        if found is None or found[0] not in _FILE_MODES or found[1] != "blob":
            return None
        data = self.at.blobs.get(found[2])
        if data is None:
            self.wanted.add(found[2])
        return data
