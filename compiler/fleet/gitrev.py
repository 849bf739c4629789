"""Files as git has them at a revision (`SPEC@REV`, `DIR@REV`), read so that nothing in
the compared tree can choose the repository, configure git or redirect a path.

`hostc diff hosts/@main hosts/` is a review bot's command: it runs on a CI runner over a
pull request's files.  Three rules, each in one place here:

- **The repository is the one hostc was started in** (the working directory), found once
  and never from inside a compared folder.  git's own discovery refuses a bare
  repository it was not pointed at (`safe.bareRepository=explicit`), so a pull request
  that adds `HEAD`, `config`, `objects/` and `refs/` to `hosts/` never becomes the
  repository, and its `config` is never read.
- **git runs with nothing a tree can configure.**  Every git command gets the same
  argv prefix and environment (`_argv`, `_env`): the user's `GIT_*` variables dropped,
  no pager, no replace objects, literal pathspecs, no fsmonitor, no hooks, and no
  transport at all (`GIT_ALLOW_PROTOCOL` empty: a lazily fetched object of a partial
  clone, an `ext::` remote or a file:// promisor is refused, not run).  Only plumbing
  that reads the object store runs (`rev-parse`, `ls-tree`, `cat-file`), which applies
  no filter, hook or attribute.
- **A path stays a plain path of that repository on both sides.**  It is made relative
  to the repository's top (a link above the top is the user's own layout and is
  followed); below it, a path that leaves the repository, or crosses a symbolic link or
  a nested repository (a `.git` entry, a folder shaped like a bare repository, a
  submodule at the revision), in the working tree or at the revision, is refused with
  its name.  A link could make both sides of a diff the same folder ("No change") or
  read a file from anywhere.

docs/escaping.md states these as the contract users rely on.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import attrs

from hostc.diagnostics import HostcError, file_error
from hostc.fleet.gitrepo import (
    Repository,
    _refuse,
    _relative,
    _run,
    check_worktree,
    repository,
)
from hostc.inputs import SNAPSHOT_LIMIT

#: git's modes for what a tree entry is (`git ls-tree`): a regular or executable file,
#: a folder, a symbolic link, a submodule's commit
_FILE_MODES = frozenset({"100644", "100755"})
_TREE, _LINK, _SUBMODULE = "040000", "120000", "160000"

#: `Revision.fetch`: no blob larger than any read asks for (a snapshot's bound), and no
#: more than this in all, kept in memory per revision
BLOB_LIMIT = SNAPSHOT_LIMIT
FETCH_LIMIT = 512 << 20

#: revisions resolved once while `pinned` holds: (repository top, rev) → Revision
_PINNED: dict[tuple[Path, str], Revision] | None = None


@contextlib.contextmanager
def pinned() -> Iterator[None]:
    """Within it, each `REV` resolves to its commit once and its Revision, with what it
    has listed and read, is shared (`Revision.at`): a fleet review reads a revision's
    tree and blobs once, in the parent, and its forked workers inherit them.  Scoped,
    never process-wide: a branch that moves between two commands is resolved anew."""
    global _PINNED
    before = _PINNED
    _PINNED = {} if before is None else before
    try:
        yield
    finally:
        _PINNED = before


@attrs.define
class Revision:
    """One revision of the repository, resolved once to its commit; its files read by
    object id with a size bound."""

    repo: Repository
    rev: str
    commit: str
    #: path → (mode, kind, object id, size) as `ls-tree -l` gives them; None: not there
    entries: dict[PurePosixPath, tuple[str, str, str, int] | None] = attrs.field(factory=dict)
    #: folders whose every entry is in `entries` (`whole_tree`): a child not there is absent
    listed: set[PurePosixPath] = attrs.field(factory=set)
    #: object id → bytes, read by one `cat-file --batch` (`fetch`); a blob is immutable
    blobs: dict[str, bytes] = attrs.field(factory=dict)

    @classmethod
    def at(cls, rev: str, shown: str) -> Revision:
        if not rev or rev.startswith("-"):  # never an option to git
            raise HostcError([file_error(shown, f"{rev!r} is not a revision")])
        repo = repository(os.getcwd())
        if _PINNED is not None and (repo.top, rev) in _PINNED:
            return _PINNED[repo.top, rev]
        commit = _commit(repo, rev, shown)
        found = cls(repo, rev, commit)
        if _PINNED is not None:
            _PINNED[repo.top, rev] = found
        return found

    def whole_tree(self, shown: str) -> None:
        """Every entry of the revision's tree, by one `ls-tree -r -t` (a fleet review's
        thousands of specs, classes and snapshots: one git process, not several a
        host); then every folder is known whole, and a path it does not list is absent."""
        if PurePosixPath(".") in self.listed:
            return
        args = ["ls-tree", "-r", "-t", "-z", "-l", "--full-tree", self.commit]
        self._rows(_run(shown, self.repo.top, *args))
        self.listed.add(PurePosixPath("."))
        self.listed.update(p for p, e in self.entries.items() if e is not None and e[0] == _TREE)

    def fetch(self, oids: set[str], shown: str) -> None:
        """The blobs `oids` read into `blobs` by one `cat-file --batch` (a missing object
        of a partial clone is reported, never fetched: `GIT_NO_LAZY_FETCH`); only ids
        this revision's tree names as files, each within the largest bound a read asks
        (`read` checks its own), together at most FETCH_LIMIT bytes."""
        sizes = {e[2]: e[3] for e in self.entries.values() if e is not None and e[1] == "blob"}
        want, total = [], sum(map(len, self.blobs.values()))
        for oid in sorted(oids - self.blobs.keys()):
            size = sizes.get(oid)
            if size is None or size > BLOB_LIMIT or total + size > FETCH_LIMIT:
                continue
            want.append(oid)
            total += size
        if not want:
            return
        ask = "".join(f"{o}\n" for o in want).encode("ascii")
        out = _run(shown, self.repo.top, "cat-file", "--batch", stdin=ask)
        at = 0
        while at < len(out):
            end = out.index(b"\n", at)
            head = out[at:end].decode("ascii", "replace").split()
            at = end + 1
            if len(head) != 3 or not head[2].isdigit():
                continue  # "<oid> missing": not there, read (and refused) one by one
            size = int(head[2])
            if head[1] == "blob" and head[0] in sizes and size == sizes[head[0]]:
                self.blobs[head[0]] = out[at : at + size]
            at += size + 1

    def relative(self, path: Path, shown: str) -> PurePosixPath:
        rel = _relative(self.repo, path, shown)
        check_worktree(self.repo, rel, shown)
        return rel

    def _ls(self, paths: list[PurePosixPath], shown: str) -> None:
        want = [
            p
            for p in paths
            if p not in self.entries and str(p) != "." and p.parent not in self.listed
        ]
        if not want:
            return
        args = ["ls-tree", "-z", "-t", "-l", "--full-tree", self.commit, "--", *map(str, want)]
        for p in want:
            self.entries[p] = None
        self._rows(_run(shown, self.repo.top, *args))

    def object_format(self, shown: str) -> str:
        """The hash the repository names objects by (`sha1`, or `sha256`): what a file's
        blob id is computed with (`git hash-object`)."""
        out = _run(shown, self.repo.top, "rev-parse", "--show-object-format")
        found = out.decode("ascii", "replace").strip()
        if found not in ("sha1", "sha256"):
            raise HostcError([file_error(shown, f"unknown object format {found[:20]!r}")])
        return found

    def present(self, oids: set[str], shown: str) -> set[str]:
        """Which of `oids` the object store holds as blobs, by one `cat-file
        --batch-check` (a missing object of a partial clone is reported, never fetched)."""
        if not oids:
            return set()
        ask = "".join(f"{o}\n" for o in sorted(oids)).encode("ascii")
        out = _run(shown, self.repo.top, "cat-file", "--batch-check", stdin=ask)
        found = set()
        for line in out.decode("ascii", "replace").splitlines():
            oid, _, kind = line.partition(" ")
            if kind.startswith("blob ") and oid in oids:
                found.add(oid)
        return found

    def _rows(self, out: bytes) -> None:
        for row in out.split(b"\0"):
            if not row:
                continue
            meta, _, name = row.partition(b"\t")
            fields = meta.decode("ascii", "replace").split()
            if len(fields) != 4:
                continue
            mode, kind, oid, size = fields
            key = PurePosixPath(name.decode("utf-8", "surrogateescape"))
            self.entries[key] = (mode, kind, oid, int(size) if size.isdigit() else 0)

    def entry(self, rel: PurePosixPath, shown: str) -> tuple[str, str, str, int] | None:
        """`rel`'s entry at the revision (None: it has none), each folder on the way
        checked to be a folder: a link or a submodule there is refused."""
        chain = [*reversed(rel.parents[:-1]), rel] if rel.parts else []
        self._ls(chain, shown)
        for p in chain:
            found = self.entries.get(p)
            if found is None:
                return None
            mode = found[0]
            if mode == _LINK:
                _refuse(shown, f"{p} at {self.rev}", "a symbolic link")
            if mode == _SUBMODULE:
                _refuse(shown, f"{p} at {self.rev}", "a submodule (a nested git repository)")
            if p != rel and mode != _TREE:
                return None
        return self.entries.get(rel)

    def read(self, path: Path, limit: int, shown: str) -> str:
        """The file's text at the revision, its size checked before it is read."""
        rel = self.relative(path, shown)
        found = self.entry(rel, shown)
        if found is None:
            raise HostcError([file_error(shown, "no such file at this revision")])
        mode, kind, oid, size = found
        if kind != "blob" or mode not in _FILE_MODES:
            raise HostcError([file_error(shown, f"is a {kind}, not a file")])
        if size > limit:
            raise HostcError([file_error(shown, f"larger than {limit} bytes")])
        data = self.blobs.get(oid)
        if data is None:
            data = _run(shown, self.repo.top, "cat-file", "blob", oid)
        if len(data) > limit:  # the object is immutable; kept as the bound's last word
            raise HostcError([file_error(shown, f"larger than {limit} bytes")])
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise HostcError([file_error(shown, "not UTF-8 text")]) from None

    def listing(self, folder: Path, shown: str) -> list[PurePosixPath]:
        """Every regular file below `folder` at the revision, relative to it; a folder
        that is missing there, or is a link or a submodule, is an error."""
        rel = self.relative(folder, shown)
        if rel.parts:
            found = self.entry(rel, shown)
            if found is None or found[0] != _TREE:
                what = "is not a folder" if found is not None else "has no such folder"
                raise HostcError([file_error(shown, f"{what} at {self.rev}")])
        tree = f"{self.commit}:{rel}" if rel.parts else self.commit
        out = _run(shown, self.repo.top, "ls-tree", "-r", "-z", "--full-tree", tree)
        names = []
        for row in out.split(b"\0"):
            meta, _, name = row.partition(b"\t")
            mode = meta.split(b" ", 1)[0].decode("ascii", "replace")
            if mode in _FILE_MODES or mode == _LINK:
                text = name.decode("utf-8", "surrogateescape")
                if mode == _LINK and text.endswith(".toml"):
                    _refuse(shown, f"{rel / text} at {self.rev}", "a symbolic link")
                if mode in _FILE_MODES:
                    names.append(PurePosixPath(text))
        return names


def _commit(repo: Repository, rev: str, shown: str) -> str:
    """`rev` as a commit's object id; a shallow clone that lacks it says how to fetch it."""
    try:
        out = _run(
            shown,
            repo.top,
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{rev}^{{commit}}",
        )
    except HostcError:
        shallow = _run(shown, repo.top, "rev-parse", "--is-shallow-repository")
        hint = (
            f"this clone is shallow and may lack {rev}: `git fetch --unshallow`, or "
            f"`git fetch origin {rev}` (CI: check out with the full history, "
            "`fetch-depth: 0`)"
            if shallow.strip() == b"true"
            else "name a branch, tag or commit of this repository (`git log` lists them)"
        )
        raise HostcError(
            [file_error(shown, f"{rev!r} names no commit of {repo.top}", hint=hint)]
        ) from None
    commit = out.decode("ascii", "replace").strip()
    if not commit or any(c not in "0123456789abcdef" for c in commit):
        raise HostcError([file_error(shown, f"{rev!r} names no commit")])
    return commit
