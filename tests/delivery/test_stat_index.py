"""A reused fleet host known unchanged by its files' statuses (`statindex`, issue 56):
after one check by the bytes, the next reads no byte, and every change a check by the
bytes sees, the statuses see too, on both ways of opening (openat2 and the folder walk);
an index that is not this folder's, this key's or this machine's is never believed."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_read_beneath import _deep, _mode, _removed

from hostc import api
from hostc.delivery import contentkey, reuse, statindex

from conftest import ROOT

SPEC = ROOT / "examples" / "h100-4gpu-inference" / "node.toml"
KEY = "k" * 64


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A host folder whose statuses are kept: its files are seconds old for the index
    (`RACY_NS` 0), and a change made after it is kept lands on a later clock tick."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    plan, _ = api.compile_file(SPEC)
    api.write_build(plan, api.emit(plan, ["all"]), tmp_path / "out", host="h1", key=KEY)
    folder = tmp_path / "out" / "h1"
    assert reuse.unchanged(folder, KEY) is not None  # by the bytes: kept
    assert statindex.recall(statindex.place(folder)) is not None
    time.sleep(0.05)  # past the coarse clock's tick (1-10 ms): a change shows in ctime
    return folder


def _no_byte_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_a: object, **_k: object) -> None:
        raise AssertionError("a file's bytes were read")

    monkeypatch.setattr(reuse, "read_beneath", refused)
    monkeypatch.setattr(reuse, "read_at", refused)


def test_a_kept_host_is_reused_without_reading_a_byte(
    host: Path, opening: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point: the second check opens each file (never through a link) and compares
    its status; it reads none, and answers what the record lists."""
    rows = json.loads((host / ".hostc-build.json").read_bytes())["files"]
    _no_byte_read(monkeypatch)
    assert reuse.unchanged(host, KEY) == [r["path"] for r in rows]


def _same_size_edit_with_its_times_put_back(host: Path) -> None:
    """The edit a size and a modification time miss: only the change time shows it."""
    f = _deep(host)
    st = f.stat()
    data = f.read_bytes()
    f.write_bytes(data[:-1] + (b"#" if data[-1:] != b"#" else b"!"))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns


def _replaced_by_a_copy(host: Path) -> None:
    """The same bytes, mode and times in another file renamed over it (cp -p; mv)."""
    f = _deep(host)
    shutil.copy2(f, f.with_name("copy"))
    os.replace(f.with_name("copy"), f)


def _folder_to_link(host: Path) -> None:
    folder = _deep(host).parent
    folder.rename(folder.with_name("moved"))  # the very files, their statuses unchanged
    folder.symlink_to("moved")


def _file_to_link(host: Path) -> None:
    f = _deep(host)
    f.rename(f.with_name("moved"))
    f.symlink_to("moved")


def _record_edited(host: Path) -> None:
    record = host / ".hostc-build.json"
    record.write_bytes(record.read_bytes().replace(b'"all"', b'"al1"'))


@pytest.mark.parametrize(
    "change",
    [
        _same_size_edit_with_its_times_put_back,
        _folder_to_link,
        _file_to_link,
        _removed,
        _mode,
        _record_edited,
    ],
)
def test_every_change_means_a_rebuild(
    host: Path, opening: str, change: Callable[[Path], None]
) -> None:
    """Each change, made after the statuses were kept: not reused (the check falls back to
    the bytes, which refuse it as they always did)."""
    assert reuse.unchanged(host, KEY) is not None
    change(host)
    assert reuse.unchanged(host, KEY) is None


def test_a_replaced_file_falls_back_to_its_bytes_and_is_kept_again(
    host: Path, opening: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A status that differs only says "check the bytes": the same bytes in a new file
    (cp -p; mv) are reused, kept anew, and the next check reads no byte."""
    _replaced_by_a_copy(host)
    # the copy's mode is hostc's and so are its bytes: the bytes say unchanged
    assert reuse.unchanged(host, KEY) is not None
    _no_byte_read(monkeypatch)
    assert reuse.unchanged(host, KEY) is not None


def test_another_key_reads_the_bytes(host: Path, opening: str) -> None:
    assert reuse.unchanged(host, "x" * 64) is None  # the record's seal, not the index


@pytest.mark.parametrize("where", ["byte", "other-folder", "other-secret"])
def test_an_index_not_made_here_for_this_folder_is_not_believed(
    host: Path, opening: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flipped byte, another folder's index put in its place, or the cache's secret
    replaced: the index is refused, the bytes are read (and, here, still agree)."""
    index = statindex.place(host).path
    if where == "byte":
        data = bytearray(index.read_bytes())
        data[len(data) // 2] ^= 0x01
        index.write_bytes(bytes(data))
    elif where == "other-folder":
        other = host.with_name("h2")
        shutil.copytree(host, other, symlinks=True)
        shutil.copy2(index, statindex.place(other).path)
        assert statindex.recall(statindex.place(other)) is None
        return
    else:
        secret = contentkey.cache_dir() / contentkey.SECRET
        secret.write_bytes(os.urandom(contentkey.SECRET_BYTES))
        monkeypatch.setattr(contentkey, "_READ", {})
        assert statindex.recall(statindex.place(host)) is None
        assert reuse.unchanged(host, KEY) is None  # nor the record's seal: a rebuild
        return
    assert statindex.recall(statindex.place(host)) is None
    read: list[str] = []
    real = reuse.read_beneath if opening == "openat2" else reuse.read_at

    def counted(dfd: int, name: str, limit: int) -> object:
        read.append(name)
        return real(dfd, name, limit)

    monkeypatch.setattr(reuse, "read_beneath" if opening == "openat2" else "read_at", counted)
    assert reuse.unchanged(host, KEY) is not None
    rows = json.loads((host / ".hostc-build.json").read_bytes())["files"]
    names = {r["path"] if opening == "openat2" else r["path"].split("/")[-1] for r in rows}
    assert names <= set(read), read  # every recorded file's bytes


def test_a_host_written_seconds_ago_is_not_kept(
    tmp_path: Path, opening: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Racily clean (git's term): a file changed within `RACY_NS` of the check could be
    changed again in the same clock tick, so its status is not kept."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    plan, _ = api.compile_file(SPEC)
    api.write_build(plan, api.emit(plan, ["all"]), tmp_path / "out", host="h1", key=KEY)
    assert reuse.unchanged(tmp_path / "out" / "h1", KEY) is not None
    assert statindex.recall(statindex.place(tmp_path / "out" / "h1")) is None


def test_the_index_folder_is_bounded(host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `LIMIT` files the folder is emptied, then the new index is written."""
    folder = statindex.place(host).path.parent
    for i in range(3):
        (folder / f"old{i}").write_bytes(b"x")
    monkeypatch.setattr(statindex, "LIMIT", 3)
    statindex._room.cache_clear()
    (folder / statindex.place(host).path.name).unlink()
    assert reuse.unchanged(host, KEY) is not None
    assert sorted(os.listdir(folder)) == [statindex.place(host).path.name]
