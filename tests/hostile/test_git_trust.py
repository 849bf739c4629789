"""`hostc diff DIR@REV DIR` runs on a CI runner over a pull request's files (issue 51
item 1): git must never trust the tree it reads.  The repository is the one hostc was
started in; git runs with nothing a tree can configure and no transport; a compared path
that leaves the repository or crosses a link or a nested repository, in the working tree
or at the revision, is refused with its name.  Each test plants what a pull request can
add and checks that nothing ran and that the answer is an error, never "No change"."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, run_hostc

HOSTS = ("dgx-r1-01", "dgx-r1-02")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed fleet repository (two DGX hosts, their class and topology); returns
    its top.  The hosts are in `hosts/`."""
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    top = tmp_path / "repo"
    src = ROOT / "examples"
    shutil.copytree(src / "fleet" / "classes", top / "classes")
    (top / "hosts").mkdir()
    for host in HOSTS:
        text = (src / "fleet" / "hosts" / f"{host}.toml").read_text()
        (top / "hosts" / f"{host}.toml").write_text(text)
    shutil.copytree(src / "dgx-h100-inference", top / "dgx-h100-inference")
    # the example's hosts name their class and topology from examples/fleet/hosts/
    for spec in (top / "hosts").glob("*.toml"):
        spec.write_text(
            spec.read_text().replace("../../dgx-h100-inference", "../dgx-h100-inference")
        )
    for cls in (top / "classes").glob("*.toml"):
        cls.write_text(cls.read_text().replace("../../dgx-h100-inference", "../dgx-h100-inference"))
    _git(top, "init", "-q", "-b", "main")
    _git(top, "add", "-A")
    _git(top, "commit", "-qm", "fleet")
    ok = run_hostc("diff", "hosts/@main", "hosts/", cwd=top)
    assert ok.returncode == 0, ok.stdout + ok.stderr  # the fixture itself compares clean
    return top


def _plant_bare_repository(folder: Path, marker: Path) -> None:
    """What a pull request can add to a folder: a bare repository's files whose `config`
    runs `marker`'s creation through an `ext::` promisor remote (a lazily fetched tree of
    the branch's commit) and through `core.fsmonitor`."""
    src = folder.parent / ".plant-src"
    subprocess.run(["git", "init", "-q", "--bare", str(src)], check=True)
    blob = subprocess.run(
        ["git", "-C", str(src), "hash-object", "-w", "--stdin"],
        input="hi\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = subprocess.run(
        ["git", "-C", str(src), "mktree"],
        input=f"100644 blob {blob}\tf\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    commit = _git(src, "commit-tree", tree, "-m", "x").strip()
    loose = src / "objects" / commit[:2] / commit[2:]
    (folder / "objects" / commit[:2]).mkdir(parents=True)
    shutil.copy(loose, folder / "objects" / commit[:2])  # the commit only: its tree is lazy
    (folder / "refs" / "heads").mkdir(parents=True)
    (folder / "refs" / "heads" / "main").write_text(commit + "\n")
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "config").write_text(
        # a work tree of its own, so `./` paths resolve and git reads the lazy tree
        "[core]\n\trepositoryformatversion = 1\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = "touch {marker}.fsmonitor"\n'
        "[extensions]\n\tpartialClone = origin\n"
        f'[remote "origin"]\n\turl = "ext::sh -c touch% {marker}"\n\tpromisor = true\n'
        '[protocol "ext"]\n\tallow = always\n'
    )
    shutil.rmtree(src)
    # the planted repository is live: plain git in the folder runs the remote's command
    subprocess.run(["git", "-C", str(folder), "ls-tree", "main"], capture_output=True)
    assert marker.exists(), "the planted repository should run its command under plain git"
    marker.unlink()


def _ran(marker: Path) -> list[str]:
    return [p.name for p in marker.parent.glob(marker.name + "*")]


@pytest.mark.parametrize(
    ("where", "old", "new"),
    [
        ("", "hosts/@main", "hosts/"),
        ("", "hosts/dgx-r1-01.toml@main", "hosts/dgx-r1-01.toml"),
        ("hosts", "./@main", "./"),
        ("hosts", "dgx-r1-01.toml@main", "dgx-r1-01.toml"),
    ],
)
def test_a_repository_planted_in_a_compared_folder_is_never_used_and_runs_nothing(
    repo: Path, tmp_path: Path, where: str, old: str, new: str
) -> None:
    marker = tmp_path / "PWNED"
    _plant_bare_repository(repo / "hosts", marker)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "a pull request's files")
    r = run_hostc("diff", old, new, cwd=repo / where)
    assert _ran(marker) == [], "a command of the compared tree ran"
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "repository" in r.stderr, r.stderr


def test_a_dot_git_file_in_a_compared_folder_never_chooses_the_repository(
    repo: Path, tmp_path: Path
) -> None:
    """A `.git` file (`gitdir: …`) in the compared folder points git at a repository of
    the attacker's choosing; it is refused as a nested repository."""
    marker = tmp_path / "PWNED"
    evil = tmp_path / "evil.git"
    evil.mkdir()
    _plant_bare_repository(evil, marker)
    (repo / "hosts" / ".git").write_text(f"gitdir: {evil}\n")
    for args in (("hosts/@main", "hosts/"), ("hosts/dgx-r1-01.toml@main", "hosts/dgx-r1-01.toml")):
        r = run_hostc("diff", *args, cwd=repo)
        assert _ran(marker) == []
        assert r.returncode == 2 and "a nested git repository" in r.stderr, r.stderr


def test_no_object_is_fetched_even_for_the_users_own_partial_clone(
    repo: Path, tmp_path: Path
) -> None:
    """The repository hostc was started in may itself be a partial clone whose promisor
    remote runs a command: hostc's git has no transport, so a missing object is an error,
    never a fetch (the pull request cannot configure this repository, but its objects
    may be missing, and nothing on a review bot should reach a network or run a remote)."""
    marker = tmp_path / "PWNED"
    _git(repo, "config", "core.repositoryformatversion", "1")
    _git(repo, "config", "extensions.partialClone", "origin")
    _git(repo, "config", "remote.origin.url", f"ext::sh -c touch% {marker}")
    _git(repo, "config", "remote.origin.promisor", "true")
    _git(repo, "config", "protocol.ext.allow", "always")
    blob = _git(repo, "rev-parse", "main:hosts/dgx-r1-01.toml").strip()
    _git(repo, "repack", "-q", "-a", "-d")  # every object in one pack ...
    _git(repo, "prune-packed")
    # ... then the host's blob made missing: unpack all but it, drop the pack
    packs = list((repo / ".git" / "objects" / "pack").glob("*.pack"))
    data = b"".join(p.read_bytes() for p in packs)
    for p in (repo / ".git" / "objects" / "pack").iterdir():
        p.unlink()
    subprocess.run(["git", "-C", str(repo), "unpack-objects", "-q"], input=data, check=True)
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    r = run_hostc("diff", "hosts/@main", "hosts/", cwd=repo)
    assert _ran(marker) == [], "git fetched a missing object through the promisor remote"
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("form", ["fleet", "host"])
def test_a_compared_folder_replaced_by_a_link_is_refused_never_reported_unchanged(
    repo: Path, form: str
) -> None:
    """A pull request replaces `hosts/` by a link to a copy of the old hosts and changes
    the real ones elsewhere: reading through the link, both sides would be the old
    folder ("No change", exit 0) while the built values change."""
    shutil.copytree(repo / "hosts", repo / "old")
    shutil.move(repo / "hosts", repo / "moved")
    os.symlink("old", repo / "hosts")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "hosts is a link now")
    args = (
        ("hosts/@main~1", "hosts/")
        if form == "fleet"
        else (
            "hosts/dgx-r1-01.toml@main~1",
            "hosts/dgx-r1-01.toml",
        )
    )
    r = run_hostc("diff", *args, cwd=repo)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "hosts is a symbolic link" in r.stderr, r.stderr
    # the same link at the revision side, the working tree a plain folder again
    (repo / "hosts").unlink()
    shutil.move(repo / "moved", repo / "hosts")
    at_rev = (
        ("hosts/@main", "hosts/")
        if form == "fleet"
        else (
            "hosts/dgx-r1-01.toml@main",
            "hosts/dgx-r1-01.toml",
        )
    )
    r = run_hostc("diff", *at_rev, cwd=repo)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "hosts at main is a symbolic link" in r.stderr, r.stderr


def test_a_linked_class_or_snapshot_at_the_revision_is_refused(repo: Path) -> None:
    """The files a host reads at the revision (its `extends` class, its snapshot) are
    held to the same rule as the host: a link committed in their place is refused."""
    cls = repo / "classes" / "dgx-inference.toml"
    cls.rename(repo / "classes" / "real.toml")
    os.symlink("real.toml", cls)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "class is a link")
    r = run_hostc("diff", "hosts/dgx-r1-01.toml@main", "hosts/dgx-r1-01.toml", cwd=repo)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "classes/dgx-inference.toml is a symbolic link" in r.stderr, r.stderr
    cls.unlink()  # a plain file in the working tree: the revision's link is refused itself
    shutil.copy(repo / "classes" / "real.toml", cls)
    r = run_hostc("diff", "hosts/dgx-r1-01.toml@main", "hosts/dgx-r1-01.toml", cwd=repo)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "dgx-inference.toml at main is a symbolic link" in r.stderr, r.stderr


def test_a_path_outside_the_repository_hostc_was_started_in_is_refused(
    repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    spec = other / "hosts" / "dgx-r1-01.toml"
    for arg in (f"{spec}@main", "../other/hosts/dgx-r1-01.toml@main"):
        r = run_hostc("diff", arg, spec, cwd=repo)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "is outside the repository hostc was started in" in r.stderr, r.stderr


def test_a_shallow_clone_says_what_is_missing_and_how_to_fetch_it(
    repo: Path, tmp_path: Path
) -> None:
    spec = repo / "hosts" / "dgx-r1-01.toml"
    spec.write_text(spec.read_text() + "\n")
    _git(repo, "commit", "-qam", "second")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)],
        check=True,
        capture_output=True,
    )
    r = run_hostc("diff", "hosts/@HEAD~1", "hosts/", cwd=clone)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "this clone is shallow" in r.stderr and "git fetch --unshallow" in r.stderr
