"""No writer of hostc replaces (or writes through) a device node, FIFO or socket.

The rule (DESIGN.md, "Writing files"): hostc writes regular files only.  A destination
that is a character or block device, a FIFO or a socket is refused with exit 2 naming
it, before anything is opened (a FIFO never blocks), and is left as it was; `-o -` is
standard output.  Before, the atomic writer renamed its temporary file onto whatever the
target was: `hostc import … -o /dev/null` as root left /dev/null a regular file.

The character-device cases run in a private mount namespace (`unshare --mount`): a tmpfs
over /dev holding its own /dev/null, and one for the build tree, so the machine's own
/dev is never at stake even when the code under test is wrong.  They need root and
unshare (skipped locally without them, failed under CI=true); the FIFO cases need
neither.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import special_files
from conftest import IN_CI, ROOT, run_hostc
from special_files import LSCPU, cases, fifo, sysfs, unix_socket


def _assert_refused(results: dict[str, dict[str, object]], kinds: dict[str, str]) -> None:
    assert results, "no case ran"
    for case, got in results.items():
        kind = case.rsplit(" ", 1)[1]
        assert got["rc"] == 2, (case, got)
        assert got["after"] == kinds[kind], (case, got)  # still a device / FIFO / socket
        err = str(got["err"])
        assert "Traceback" not in err, (case, err)
        assert "never replaces a device, FIFO or socket" in err, (case, err)


def test_every_writer_refuses_a_fifo_and_a_socket_without_blocking(tmp_path: Path) -> None:
    results = cases(tmp_path, {"fifo": fifo, "sock": unix_socket})
    _assert_refused(results, {"fifo": "fifo", "sock": "sock"})
    assert len(results) == 12


def _need_namespace() -> str:
    why = None
    if os.geteuid() != 0:
        why = "a private mount namespace needs root"
    elif shutil.which("unshare") is None:
        why = "unshare (util-linux) is not installed"
    if why is not None:
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)
    return str(shutil.which("unshare"))


def test_every_writer_leaves_dev_null_a_device_in_a_private_namespace(tmp_path: Path) -> None:
    """`-o /dev/null` (and a character device in a build tree), each against a node that
    exists only in this test's mount namespace."""
    unshare = _need_namespace()
    r = subprocess.run(
        [unshare, "--mount", "--propagation", "private", sys.executable,
         special_files.__file__, str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    results = json.loads(r.stdout)
    assert len(results) == 10 and all(case.endswith(" chr") for case in results), results
    _assert_refused(results, {"chr": "chr"})
    literal = {case: got for case, got in results.items() if "/dev/null" in case}
    assert len(literal) == 4 and all("/dev/null" in str(got["err"]) for got in literal.values())
    build = results["build --out chr"]
    assert str(build["target"]) in str(build["err"])  # the file, not only the folder


def test_dash_o_dash_is_standard_output(tmp_path: Path) -> None:
    (tmp_path / "lscpu.txt").write_text(LSCPU)
    r = run_hostc("import", "lscpu", "lscpu.txt", "--arch", "x86_64", "-o", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# hostc topology snapshot"), r.stdout[:200]
    assert not (tmp_path / "-").exists()
    root = sysfs(tmp_path)
    cap = subprocess.run(
        [sys.executable, "-m", "hostc", "probe", "--root", str(root), "--capture", "-"],
        capture_output=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert cap.returncode == 0, cap.stderr
    assert cap.stdout[:2] == b"\x1f\x8b"  # the gzip'd tar `--capture FILE` writes
    assert not (tmp_path / "-").exists()
