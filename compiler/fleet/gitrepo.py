"""Where git finds its repository and how every git command runs: the repository
hostc was started in (never one a compared folder holds), git with nothing a tree can
configure, and a path that stays a plain path of that repository (refused with its name
where it leaves it or crosses a link or a nested repository).  `hostc.fleet.gitrev`
reads files at a revision through these; nothing else starts git.

The rules and why are `hostc.fleet.gitrev`'s docstring and docs/escaping.md.
"""

from __future__ import annotations

import functools
import os
import stat
import subprocess
from pathlib import Path, PurePosixPath

import attrs

from hostc.diagnostics import HostcError, file_error

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
    text = os.path.normpath(os.path.join(os.getcwd(), path))
    top = str(repo.top)
    below = top if top.endswith("/") else top + "/"  # a repository at / is "/"
    if text == top:
        return PurePosixPath(".")
    if text.startswith(below):  # the usual case, by the string: a fleet has thousands
        return PurePosixPath(text[len(below) :])
    absolute = PurePosixPath(text)
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


#: folders of a work tree found plain (`check_worktree`), by (top, folder): a fleet's
#: `hosts/` is checked once a process, not once for each of its thousands of hosts
_PLAIN: set[tuple[Path, str]] = set()


def check_worktree(repo: Repository, rel: PurePosixPath, shown: str) -> None:
    """Each folder of `rel` in the work tree, and `rel` itself, is a plain entry: no
    link, no nested repository.  A part missing from the work tree ends the check (the
    revision side is checked by `Revision.entry`).  A folder found plain is not looked
    at again in this process (a review reads its work tree at one moment)."""
    here = repo.top
    for i, part in enumerate(rel.parts):
        here = here / part
        name = str(PurePosixPath(*rel.parts[: i + 1]))
        if (repo.top, name) in _PLAIN:
            continue
        try:
            mode = os.lstat(here).st_mode
        except (OSError, ValueError):
            return
        if stat.S_ISLNK(mode):
            _refuse(shown, name, "a symbolic link")
        if not stat.S_ISDIR(mode):
            continue
        if os.path.lexists(here / ".git"):
            _refuse(shown, name, "a nested git repository")
        if _bare_shaped(here):
            _refuse(shown, name, "shaped like a git repository (HEAD, objects/, refs/)")
        if len(_PLAIN) > 65536:
            _PLAIN.clear()
        _PLAIN.add((repo.top, name))


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
