"""Hostile inputs: every file hostc reads is bounded, and one that is not hostc's is not echoed."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import tarfile
import time
import zlib
from pathlib import Path

import pytest

from hostc import api
from hostc.cli import main as cli
from hostc.diagnostics import HostcError
from hostc.inputs import read_text_bounded
from hostc.topology import snapshot
from hostc.topology.importers.archive import MAX_ARCHIVE_MEMBERS

SECRET = "root:$6$Zq8sEcReT$hashhashhash:19000:0:99999:7:::\n"


def _shown(e: HostcError) -> str:
    """What the CLI prints for the error, source snippets included."""
    return "\n".join(cli._show(d) for d in e.diagnostics)


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null"])
def test_devices_are_refused(path: str) -> None:
    if not Path(path).exists():
        pytest.skip(f"{path} missing")
    with pytest.raises(HostcError) as e:
        read_text_bounded(Path(path), limit=1 << 20, what="hwloc XML")
    assert "device" in str(e.value)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(HostcError) as e:
        snapshot.read(fifo)
    assert "FIFO" in str(e.value) and time.monotonic() - start < 2


def test_directory_and_size_limits(tmp_path: Path) -> None:
    with pytest.raises(HostcError, match="directory"):
        api.read_source(tmp_path)
    big = tmp_path / "big.xml"
    with big.open("wb") as f:
        f.truncate(17 << 20)  # sparse: costs no disk
    with pytest.raises(HostcError, match="at most 16 MiB"):
        api.read_source(big)
    snap = tmp_path / "big.toml"
    with snap.open("wb") as f:
        f.truncate(9 << 20)
    with pytest.raises(HostcError, match="at most 8 MiB"):
        snapshot.read(snap)


def test_not_utf8_says_so_without_content(tmp_path: Path) -> None:
    p = tmp_path / "bin"
    p.write_bytes(b"secret-word \xff\xfe")
    with pytest.raises(HostcError) as e:
        api.read_source(p)
    assert "UTF-8" in str(e.value) and "secret-word" not in _shown(e.value)


@pytest.mark.parametrize(
    "content",
    [
        SECRET,
        'password = "hunter2-secret"\n',  # valid TOML, not a snapshot
        "[section]\nkey = hunter2-secret\n",  # TOML syntax error on a line with the secret
    ],
)
def test_foreign_file_as_snapshot_shows_none_of_it(tmp_path: Path, content: str) -> None:
    p = tmp_path / "shadow"
    p.write_text(content)
    with pytest.raises(HostcError) as e:
        snapshot.read(p)
    shown = _shown(e.value)
    assert "not a hostc topology snapshot" in shown
    for word in ("hashhash", "hunter2", "secret", "root:", "password"):
        assert word not in shown.lower(), shown


def test_foreign_file_through_the_spec_is_not_echoed(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text(SECRET)
    spec = tmp_path / "node.toml"
    spec.write_text(f'version = 1\n[host]\nname = "x"\nrole = "general"\ntopology = "{shadow}"\n')
    r = subprocess.run(
        [sys.executable, "-m", "hostc", "check", str(spec)], capture_output=True, text=True
    )
    assert r.returncode == 2, r.stderr
    assert "not a hostc topology snapshot" in r.stderr
    assert "hashhash" not in r.stderr and "root:" not in r.stderr


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("hwloc", "not XML"),
        ("lscpu", "neither"),
        ("numactl", "not `numactl"),
        ("nvidia-smi", "GPU0"),
    ],
)
def test_foreign_file_as_import_source_is_not_echoed(tmp_path: Path, kind: str, words: str) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text(SECRET)
    with pytest.raises(HostcError) as e:
        api.import_source(kind, api.read_source(shadow), file=str(shadow))
    shown = _shown(e.value)
    assert words in shown and "hashhash" not in shown and "root:" not in shown, shown


def test_deep_nesting_is_a_diagnostic(tmp_path: Path) -> None:
    text = "version = 2\nx = " + "[" * 100_000 + "]" * 100_000 + "\n"
    with pytest.raises(HostcError) as e:
        snapshot.loads(text, "deep.toml")
    assert "nest" in str(e.value)
    inline = "version = 2\nx = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n"
    with pytest.raises(HostcError):
        snapshot.loads(inline, "deep.toml")


def _tar_bomb(path: Path, members: int) -> None:
    """`members` empty files in one small gzip stream, made in milliseconds.

    1,000 tar headers are deflated once and ended with a full flush, which makes
    the compressed piece independent of what came before; the piece repeated is a
    valid deflate stream of `members` headers.  The trailer's CRC is left zero:
    hostc must refuse long before it gets there.
    """
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(1000):
            tar.addfile(tarfile.TarInfo(f"f{i}"))
    block = raw.getvalue()[: 1000 * 512]  # without the end-of-archive blocks
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15)
    with path.open("wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")  # gzip header, no name
        for _ in range(members // 1000):
            f.write(piece)
        f.write(end.compress(b"\0" * 1024) + end.flush())
        f.write(b"\0" * 8)


def test_archive_with_two_million_members_is_refused_fast(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.tar.gz"
    _tar_bomb(bomb, 2_000_000)
    start = time.monotonic()
    with pytest.raises(HostcError) as e:
        api.probe(bomb)
    took = time.monotonic() - start
    assert f"more than {MAX_ARCHIVE_MEMBERS} members" in str(e.value)
    assert took < 2.0, took


def _archive(path: Path, *members: tuple[tarfile.TarInfo, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)


@pytest.mark.parametrize(
    ("info", "words"),
    [
        (tarfile.TarInfo("../escape"), "outside"),
        (tarfile.TarInfo("/etc/passwd"), "outside"),
    ],
)
def test_archive_members_outside_are_refused(
    tmp_path: Path, info: tarfile.TarInfo, words: str
) -> None:
    bad = tmp_path / "bad.tar.gz"
    _archive(bad, (info, b""))
    with pytest.raises(HostcError, match=words):
        api.probe(bad)


def test_archive_links_and_huge_members_are_refused(tmp_path: Path) -> None:
    link = tarfile.TarInfo("sys")
    link.type = tarfile.SYMTYPE
    link.linkname = "/sys"
    bad = tmp_path / "link.tar.gz"
    _archive(bad, (link, b""))
    with pytest.raises(HostcError, match="not a plain file"):
        api.probe(bad)
    # a member claiming 1 GiB: refused from its header, before any data is read
    raw = io.BytesIO()
    huge = tarfile.TarInfo("proc/cpuinfo")
    huge.size = 1 << 30
    raw.write(huge.tobuf(format=tarfile.USTAR_FORMAT))
    raw.write(b"\0" * 4096)
    big = tmp_path / "big.tar.gz"
    big.write_bytes(gzip.compress(raw.getvalue()))
    with pytest.raises(HostcError, match="MiB"):
        api.probe(big)
