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

import functools
import os
import subprocess
from pathlib import Path, PurePosixPath

import attrs

from hostc.diagnostics import HostcError, file_error

#: git's modes for what a tree entry is (`git ls-tree`): a regular or executable file,
#: a folder, a symbolic link, a submodule's commit
_FILE_MODES = frozenset({"100644", "100755"})
_TREE, _LINK, _SUBMODULE = "040000", "120000", "160000"

#: configuration given on git's command line, which no repository's file overrides:
#: nothing runs a program or reaches a network on hostc's behalf
_CONFIG = (
    "safe.bareRepository=explicit",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "protocol.allow=never",
    "core.alternateRefsCommand=",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.askPass=false",
    "credential.helper=",
)


def _env() -> dict[str, str]:
    """The environment every git command runs in: the user's `GIT_*` variables dropped
    (a hook's `GIT_DIR` or `GIT_INDEX_FILE` must not choose the repository either),
    no transport allowed, no lazy fetch (git ≥ 2.44), no prompt, no pager."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_ALLOW_PROTOCOL="",
        GIT_NO_LAZY_FETCH="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        GIT_OPTIONAL_LOCKS="0",
        LC_ALL="C",
    )
    return env


def _argv(*args: str) -> list[str]:
    out = ["git", "--no-pager", "--literal-pathspecs", "--no-replace-objects"]
    for setting in _CONFIG:
        out += ["-c", setting]
    return [*out, *args]


def _run(
    where: str, cwd: Path, *args: str, stdin: bytes | None = None, hint: str | None = None
) -> bytes:
    """`git ARGS` in `cwd` (always the repository's top, or the start directory while
    it is found); its stdout, or one error naming `where`."""
    try:
        r = subprocess.run(
            _argv(*args), input=stdin, capture_output=True, timeout=60, cwd=cwd, env=_env()
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise HostcError([file_error(where, f"cannot run git: {e}")]) from None
    if r.returncode != 0:
        why = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise HostcError([file_error(where, why[-1] if why else "git failed", hint=hint)])
    return r.stdout


class RefusedPath(HostcError):
    """A path that leaves the repository or crosses a link or a nested repository: an
    error wherever it is met, never read as "missing"."""


@attrs.frozen
class Repository:
    """The repository hostc was started in: its work tree's top, as the kernel names it."""

    top: Path


@functools.cache
def repository(start: str) -> Repository:
    """The repository whose work tree holds `start` (hostc's working directory), found
    once; a start outside any work tree (a bare repository included) is an error."""
    out = _run(
        f"{start}",
        Path(start),
        "rev-parse",
        "--show-toplevel",
        hint="run hostc inside the repository's work tree: `cd REPO && hostc diff …`",
    )
    top = out.decode("utf-8", "surrogateescape").rstrip("\n")
    if not top:
        raise HostcError([file_error(start, "not a git repository's work tree")])
    return Repository(Path(os.path.realpath(top)))


def _relative(repo: Repository, path: Path, shown: str) -> PurePosixPath:
    """`path` (relative to the working directory, or absolute) as a path below the
    repository's top, made lexically: `..` may not climb out of it.  Links above the top
    are the user's own layout: an ancestor of `path` that is the top counts as it."""
    absolute = PurePosixPath(os.path.normpath(Path.cwd() / path))
    top = PurePosixPath(repo.top)
    if absolute == top or top in absolute.parents:
        return absolute.relative_to(top)
    for above in absolute.parents:
        try:
            same = os.path.samefile(above, repo.top)
        except OSError:
            continue
        if same:
            return absolute.relative_to(above)
    raise RefusedPath(
        [
            file_error(
                shown,
                f"is outside the repository hostc was started in ({repo.top})",
                hint="hostc reads a revision only from the repository of its working "
                "directory: run it from inside the repository that holds this path",
            )
        ]
    )


def _bare_shaped(folder: Path) -> bool:
    return (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()
    )


def check_worktree(repo: Repository, rel: PurePosixPath, shown: str) -> None:
    """Each folder of `rel` in the work tree, and `rel` itself, is a plain entry: no
    link, no nested repository.  A part missing from the work tree ends the check (the
    revision side is checked by `Revision.entry`)."""
    here = repo.top
    for i, part in enumerate(rel.parts):
        here = here / part
        name = str(PurePosixPath(*rel.parts[: i + 1]))
        if not os.path.lexists(here):
            return
        if here.is_symlink():
            _refuse(shown, name, "a symbolic link")
        if not here.is_dir():
            continue
        if os.path.lexists(here / ".git"):
            _refuse(shown, name, "a nested git repository")
        if _bare_shaped(here):
            _refuse(shown, name, "shaped like a git repository (HEAD, objects/, refs/)")


def _refuse(shown: str, part: str, what: str) -> None:
    raise RefusedPath(
        [
            file_error(
                shown,
                f"{part} is {what}: refused (hostc reads only plain files and folders of "
                "the repository it was started in)",
                hint="compare the folder itself, not a link to it or a repository inside it",
            )
        ]
    )


@attrs.define
class Revision:
    """One revision of the repository, resolved once to its commit; its files read by
    object id with a size bound."""

    repo: Repository
    rev: str
    commit: str
    #: path → (mode, kind, object id, size) as `ls-tree -l` gives them; None: not there
    entries: dict[PurePosixPath, tuple[str, str, str, int] | None] = attrs.field(factory=dict)
    #: folders whose every entry is in `entries` (`prefetch`): a child not there is absent
    listed: set[PurePosixPath] = attrs.field(factory=set)

    @classmethod
    def at(cls, rev: str, shown: str) -> Revision:
        if not rev or rev.startswith("-"):  # never an option to git
            raise HostcError([file_error(shown, f"{rev!r} is not a revision")])
        repo = repository(os.getcwd())
        commit = _commit(repo, rev, shown)
        return cls(repo, rev, commit)

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

    def prefetch(self, folders: list[PurePosixPath], shown: str) -> None:
        """Every entry directly inside each of `folders` at the revision, read by one git
        process (a fleet's thousands of hosts, not a process each); what a folder
        does not list is then known to be absent.  Only the object store is read."""
        want = sorted({f for f in folders if f.parts and f not in self.listed})
        if not want:
            return
        args = ["ls-tree", "-z", "-l", "--full-tree", self.commit, "--", *(f"{f}/" for f in want)]
        self._rows(_run(shown, self.repo.top, *args))
        self.listed.update(want)

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
