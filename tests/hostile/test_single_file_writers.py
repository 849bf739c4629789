"""Every command that writes one named file (`import -o`, `probe -o`, `probe --capture`,
`init -o`) writes it one way, `hostc.delivery.output.write_bytes`, and `init --root`
reads its tree one way, `HostTree` (issue 51, item 2).

The rules: a destination that is a symbolic link, dangling or not, is refused (exit 2,
naming it) and left as it was, its target untouched: the writers used to check the
special-file rule through the link and then rename over the link itself, so `-o
/dev/stdout` as root left the machine's /dev/stdout a regular file until reboot.  No file
is created or replaced under /dev, /proc or /sys, however the path reaches them.  A FIFO
never makes a writer wait, and a command with two outputs (`init`) writes neither when
either is refused.  `init --root DIR` resolves links inside DIR as the probe does, so an
absolute link to a FIFO outside never blocks it and a file outside is never read.

The /dev cases run in a private mount namespace (`unshare --mount`) with a tmpfs over
/dev, so the machine's own /dev/stdout is never at stake even when the code under test
is wrong; the rest use the test's tmp folder, the virtual roots moved into it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hostc import api
from hostc.delivery import refusals
from hostc.diagnostics import HostcError

import special_files
from conftest import IN_CI, ROOT, run_hostc
from special_files import STDOUT_LINK, fifo, sysfs, writers

#: far above a run's time, far below a hang
TIMEOUT = 30


def _run(argv: list[str]) -> tuple[object, str]:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", "blocked"
    return r.returncode, r.stderr


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
def test_no_single_file_writer_follows_or_replaces_a_symbolic_link(
    tmp_path: Path, dangling: bool
) -> None:
    for name, argv in writers(tmp_path, tmp_path / "work" / "out").items():
        work = tmp_path / "work"
        work.mkdir()
        target = tmp_path / "kept.txt"
        if not dangling:
            target.write_text("kept\n")
        (work / "out").symlink_to(target)
        rc, err = _run(argv)
        assert rc == 2, (name, rc, err)
        assert "Traceback" not in err, (name, err)
        assert "symbolic link" in err and str(work / "out") in err, (name, err)
        assert os.readlink(work / "out") == str(target), name  # still the same link
        if dangling:
            assert not target.exists(), name  # nothing made at its end either
        else:
            assert target.read_text() == "kept\n", name
        assert sorted(p.name for p in work.iterdir()) == ["out"], name  # init: no snapshot
        (work / "out").unlink()
        work.rmdir()
        target.unlink(missing_ok=True)


@pytest.mark.parametrize("refused", ["node.toml", "topology.toml"])
def test_init_writes_neither_file_when_either_destination_is_refused(
    tmp_path: Path, refused: str
) -> None:
    """A FIFO as the spec, or a link as the snapshot beside it: refused before the probe,
    without blocking, and the other file is not written either."""
    root = sysfs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    if refused == "node.toml":
        fifo(out / "node.toml")
    else:
        (out / "topology.toml").symlink_to(tmp_path / "elsewhere.toml")
    argv = [sys.executable, "-m", "hostc", "init", "--root", str(root), "--force"]
    rc, err = _run([*argv, "-o", str(out / "node.toml")])
    assert rc == 2, err
    assert "Traceback" not in err and str(out / refused) in err, err
    assert [p.name for p in out.iterdir()] == [refused]  # the other one was not written
    assert not (tmp_path / "elsewhere.toml").exists()


@pytest.mark.parametrize("outside", ["fifo", "file"])
def test_init_root_reads_nothing_outside_its_tree(tmp_path: Path, outside: str) -> None:
    """Absolute links in the tree at what `init` reads besides the probe: /proc/cpuinfo
    (at a FIFO outside, which would block a plain open, or at a file outside that says
    hypervisor), /sys/hypervisor/type and the cpufreq folder (at a policy outside).
    Resolved inside the tree they lead nowhere: no VM, no cpufreq driver."""
    root = sysfs(tmp_path)
    away = tmp_path / "outside"
    away.mkdir()
    (away / "policy0").mkdir()
    (away / "type").write_text("xen\n")
    if outside == "fifo":
        fifo(away / "cpuinfo")
    else:
        (away / "cpuinfo").write_text("processor\t: 0\nflags\t\t: fpu hypervisor\n")
    (root / "proc" / "cpuinfo").symlink_to(away / "cpuinfo")
    (root / "sys" / "hypervisor").mkdir()
    (root / "sys" / "hypervisor" / "type").symlink_to(away / "type")
    (root / "sys" / "devices" / "system" / "cpu" / "cpufreq").symlink_to(away)
    argv = [sys.executable, "-m", "hostc", "init", "--root", str(root)]
    rc, err = _run([*argv, "-o", str(tmp_path / "spec" / "node.toml")])
    assert rc == 0, err
    assert "virtual machine" not in err, err
    assert "no cpufreq driver" in err, err


def test_no_output_file_is_made_under_a_virtual_root_through_a_linked_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The virtual roots moved into tmp: a folder reached through a link into one, a
    folder still to be made under one, the archive `capture` writes."""
    dev = tmp_path / "dev"
    dev.mkdir()
    monkeypatch.setattr(refusals, "VIRTUAL_ROOTS", (str(dev),))
    (tmp_path / "via").symlink_to(dev)
    text = api.dumps_snapshot(api.probe(sysfs(tmp_path)))
    with pytest.raises(OSError, match="no file under /dev, /proc or /sys"):
        api.write_snapshot(text, tmp_path / "via" / "topology.toml")
    with pytest.raises(OSError, match="no file under /dev, /proc or /sys"):
        api.write_file(tmp_path / "via" / "made" / "node.toml", text, parents=True)
    with pytest.raises(HostcError, match="no file under /dev, /proc or /sys"):
        api.capture(tmp_path / "via" / "c.tar.gz", sysfs(tmp_path))
    assert list(dev.iterdir()) == []
    api.write_snapshot(text, tmp_path / "topology.toml")  # outside them: written
    assert (tmp_path / "topology.toml").read_text() == text


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


def test_dash_o_dev_stdout_is_refused_and_dev_stdout_stays_a_link(tmp_path: Path) -> None:
    """Every writer at /dev/stdout, its standard output a regular file (so the link leads
    to a regular file), and at a new name in /dev, against a /dev that exists only in this
    test's mount namespace: refused with a pointer to `-o -`; /dev as it was."""
    unshare = _need_namespace()
    r = subprocess.run(
        [unshare, "--mount", "--propagation", "private", sys.executable,
         special_files.__file__, str(tmp_path), "dev-links"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    results = json.loads(r.stdout)
    assert len(results) == 2 * len(writers(tmp_path, tmp_path / "x")), results
    for case, got in results.items():
        assert got["rc"] == 2, (case, got)
        assert got["stdout link"] == STDOUT_LINK, (case, got)
        assert got["made in /dev"] == [], (case, got)
        err = str(got["err"])
        assert "Traceback" not in err and "use -o - for standard output" in err, (case, err)
        assert case.split(" ")[-1] in err, (case, err)  # names the path it refused


def test_dash_o_dash_still_writes_standard_output(tmp_path: Path) -> None:
    r = run_hostc("probe", "--root", sysfs(tmp_path), "-o", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# hostc topology snapshot"), r.stdout[:200]
