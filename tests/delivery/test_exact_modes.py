"""A written file has exactly its artifact's mode, however the umask and the folder's
default ACL would have changed it; where neither can (a folder the write made, a root
without a default ACL, a umask that clears none of the mode's bits) it is created with
its mode and no fchmod is spent (issue 56: a fresh fleet host's 18 calls)."""

from __future__ import annotations

import errno
import os
import stat
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostc import api
from hostc.delivery import descriptors
from hostc.delivery.output import Judged, write

from conftest import ROOT

SPEC = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"


@pytest.fixture
def arts() -> list[api.Artifact]:
    plan, _ = api.compile_file(SPEC)
    found = api.emit(plan, ["all"])
    assert {a.mode for a in found} >= {0o644, 0o755}  # both kinds of file, or nothing shown
    return found


@pytest.fixture
def mask() -> Iterator[None]:
    """The test sets the umask (`_umask`); the process's own is put back after."""
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)


def _umask(m: int) -> None:
    os.umask(m)


def _modes(root: Path) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): stat.S_IMODE(p.lstat().st_mode)
        for p in root.rglob("*")
        if p.is_file() and p.name != ".hostc-build.json"
    }


def _wanted(arts: list[api.Artifact], host: str) -> dict[str, int]:
    return {f"{host}/{a.target}/{a.relpath}": a.mode for a in arts}


def _fchmods(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fchmod

    def counted(fd: int, mode: int) -> None:
        calls.append(mode)
        real(fd, mode)

    monkeypatch.setattr(os, "fchmod", counted)
    return calls


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o027, 0o077, 0o000])
def test_every_file_has_its_mode_under_any_umask(
    tmp_path: Path, arts: list[api.Artifact], umask: int, mask: None
) -> None:
    """What the umask would clear is given back by fchmod; what it would not is created
    so.  The umask is read, never set (`descriptors.umask`)."""
    _umask(umask)
    assert descriptors.umask() == umask
    write(arts, tmp_path / "out", host="h1")
    assert _modes(tmp_path / "out") == _wanted(arts, "h1")


def test_a_fresh_host_under_umask_022_spends_no_fchmod(
    tmp_path: Path, arts: list[api.Artifact], mask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _umask(0o022)
    calls = _fchmods(monkeypatch)
    write(arts, tmp_path / "out", host="h1", judged=Judged(0o022))
    assert calls == []
    assert _modes(tmp_path / "out") == _wanted(arts, "h1")


def test_a_folder_an_earlier_build_made_gets_fchmod(
    tmp_path: Path, arts: list[api.Artifact], mask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder made before this write may have been given a default ACL since: a file
    rewritten there is staged 0600 and given its mode."""
    _umask(0o022)
    out = tmp_path / "out"
    write(arts, out, host="h1")
    changed = [a for a in arts if a.target == "sysctl"][:1]
    assert changed
    target = out / "h1" / changed[0].target / changed[0].relpath
    target.write_bytes(b"edited\n")  # this one file differs: it is written again
    calls = _fchmods(monkeypatch)
    write(arts, out, host="h1")
    assert calls == [changed[0].mode]
    assert _modes(out) == _wanted(arts, "h1")


def _default_acl(folder: Path) -> None:
    """A default ACL u::rwx,g::---,o::--- on `folder` (posix_acl_xattr's version 2 form,
    entries tag, permissions, id): files created below get at most rw------- whatever
    mode they are created with (acl(5))."""
    entries = [(0x01, 7), (0x04, 0), (0x20, 0)]  # ACL_USER_OBJ, ACL_GROUP_OBJ, ACL_OTHER
    value = struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", t, p, 0xFFFFFFFF) for t, p in entries
    )
    try:
        os.setxattr(folder, "system.posix_acl_default", value)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.ENOTSUP):
            pytest.skip(f"{folder}'s file system keeps no POSIX ACL")
        raise


def test_a_default_acl_on_out_is_overruled_by_each_files_mode(
    tmp_path: Path, arts: list[api.Artifact], mask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a default ACL the umask is not applied and the ACL's permissions are: a file
    created 0644 would be 0600.  The write sees the ACL and gives every file its mode."""
    _umask(0o022)
    out = tmp_path / "out"
    out.mkdir()
    _default_acl(out)
    calls = _fchmods(monkeypatch)
    write(arts, out, host="h1", judged=Judged(0o022))
    assert len(calls) == len(arts)
    assert _modes(out) == _wanted(arts, "h1")
    fd = os.open(out, os.O_RDONLY)
    try:
        assert descriptors.default_acl(fd)
    finally:
        os.close(fd)
