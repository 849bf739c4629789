"""A reused fleet host's files are read below its folder in one openat2 call each, which
refuses a symbolic link anywhere on the way (`descriptors.read_beneath`); where the
kernel has no openat2 the folders are walked one by one (`descriptors.Folders`).  Both
give the same answer for every tree an attacker or an editor can leave (issue 56)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hostc import api
from hostc.delivery import reuse

from conftest import ROOT

SPEC = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"
KEY = "k" * 64


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plan, _ = api.compile_file(SPEC)
    api.write_build(plan, api.emit(plan, ["all"]), tmp_path / "out", host="h1", key=KEY)
    return tmp_path / "out" / "h1"


def _deep(host: Path) -> Path:
    """A file at least three folders below the host's folder."""
    return max((p for p in host.rglob("*") if p.is_file()), key=lambda p: len(p.parts))


def _folder_to_link(host: Path) -> None:
    folder = _deep(host).parent
    shutil.copytree(folder, folder.with_name("moved"), copy_function=shutil.copy2)
    shutil.rmtree(folder)
    folder.symlink_to("moved")


def _file_to_link(host: Path) -> None:
    f = _deep(host)
    shutil.copy2(f, f.with_name("copy"))
    f.unlink()
    f.symlink_to("copy")


def _edited(host: Path) -> None:
    f = _deep(host)
    f.write_bytes(f.read_bytes() + b"\n")


def _removed(host: Path) -> None:
    _deep(host).unlink()


def _mode(host: Path) -> None:
    f = _deep(host)
    f.chmod(f.stat().st_mode ^ 0o001)


def _top_link(host: Path) -> None:
    """The target's top folder made a link to a copy of itself (the same bytes)."""
    top = host / "systemd"
    shutil.copytree(top, host / "copy", copy_function=shutil.copy2, symlinks=True)
    shutil.rmtree(top)
    top.symlink_to("copy")


def test_an_untouched_host_is_reused(host: Path, opening: str) -> None:
    assert reuse.unchanged(host, KEY) is not None


@pytest.mark.parametrize(
    "change", [_folder_to_link, _file_to_link, _edited, _removed, _mode, _top_link]
)
def test_every_change_means_a_rebuild(
    host: Path, opening: str, change: Callable[[Path], None]
) -> None:
    """A folder or a file swapped for a link to the same bytes, an edit, a removal, a
    mode bit: not reused, on either path."""
    assert reuse.unchanged(host, KEY) is not None
    change(host)
    assert reuse.unchanged(host, KEY) is None


def test_no_folder_is_opened_on_its_own_with_openat2(
    host: Path, opening: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point of the call: a reused host opens its root, its record and nothing else
    below them by os.open (its files by openat2; outside it, the cache's index of the
    host's statuses, not yet kept for files this new: `statindex`); the walk opens every
    folder on the way."""
    opened: list[str] = []
    real = os.open

    def counted(p: str, *a: object, **k: object) -> int:
        opened.append(str(p))
        return real(p, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counted)
    assert reuse.unchanged(host, KEY) is not None
    folders = {str(p.parent.relative_to(host)) for p in host.rglob("*") if p.is_file()}
    if opening == "openat2":
        cache = host.parent.parent / "cache"  # the `host` fixture's XDG_CACHE_HOME
        mine = [p for p in opened if not Path(p).is_relative_to(cache)]
        assert len(mine) == 2, opened  # the host's folder and its record
        assert len(opened) == 3, opened  # and the index, asked for: none kept yet
    else:
        assert len(opened) > len(folders), opened
