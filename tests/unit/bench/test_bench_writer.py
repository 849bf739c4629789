"""The one writer of live values: an existing file under /proc/sys or /sys, one line,
never through a link, never a file it makes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hostc.bench.writer import write_value
from hostc.diagnostics import HostcError


def tree(tmp_path: Path) -> Path:
    (tmp_path / "proc/sys/vm").mkdir(parents=True)
    (tmp_path / "proc/sys/vm/swappiness").write_text("1\n")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/passwd").write_text("root:x:0:0\n")
    return tmp_path


def test_a_value_replaces_the_files_content_in_one_line(tmp_path: Path) -> None:
    root = tree(tmp_path)
    write_value(root, "/proc/sys/vm/swappiness", "60")
    assert (root / "proc/sys/vm/swappiness").read_text() == "60\n"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd", "only existing files under /proc/sys and /sys"),
        ("/proc/sys/../../etc/passwd", "only existing files"),
        ("/proc/sys/vm/dirty_ratio", "does not exist here"),
    ],
)
def test_a_path_outside_the_kernels_trees_or_missing_is_refused(
    tmp_path: Path, path: str, message: str
) -> None:
    root = tree(tmp_path)
    with pytest.raises(HostcError, match=message):
        write_value(root, path, "0")
    assert (root / "etc/passwd").read_text() == "root:x:0:0\n"
    assert not (root / "proc/sys/vm/dirty_ratio").exists()


def test_a_link_is_never_written_through(tmp_path: Path) -> None:
    root = tree(tmp_path)
    os.symlink(root / "etc/passwd", root / "proc/sys/vm/overcommit_memory")
    with pytest.raises(HostcError, match="a link leads it out"):
        write_value(root, "/proc/sys/vm/overcommit_memory", "1")
    (root / "proc/sys/kernel").mkdir()
    os.symlink("../vm/swappiness", root / "proc/sys/kernel/inside")
    with pytest.raises(HostcError, match="cannot open it for writing"):
        write_value(root, "/proc/sys/kernel/inside", "5")  # O_NOFOLLOW: a final link
    assert (root / "etc/passwd").read_text() == "root:x:0:0\n"
    assert (root / "proc/sys/vm/swappiness").read_text() == "1\n"


@pytest.mark.parametrize("value", ["", "1\n0", "a\x1b[2J", "9" * 5000])
def test_a_value_that_is_not_one_short_printable_line_is_refused(
    tmp_path: Path, value: str
) -> None:
    root = tree(tmp_path)
    with pytest.raises(HostcError, match="not one short printable line"):
        write_value(root, "/proc/sys/vm/swappiness", value)
    assert (root / "proc/sys/vm/swappiness").read_text() == "1\n"
