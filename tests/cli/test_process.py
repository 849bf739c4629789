"""The `hostc` process's start and end (hostc/__main__.py): the collector off while the
modules load, `os._exit` after flushing.  What that apparatus must never change: every
byte a command prints and its exit status are those of the plain interpreter's run of
the same command, and nothing that needs the interpreter's finalization is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, PLAIN, ROOT

DGX = EXAMPLES / "dgx-h100-inference" / "node.toml"
BIN = Path(sys.executable).parent / "hostc"


def both(*args: str | Path, cwd: Path = ROOT) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    """The console script's `hostc ARGS` and the plain run of the same ARGS (both
    named `hostc` in click's usage lines)."""
    if not BIN.exists():
        pytest.skip(f"no hostc console script beside {sys.executable} (pip install -e .)")
    argv = list(map(str, args))
    return tuple(
        subprocess.run(head + argv, capture_output=True, cwd=cwd, timeout=120)
        for head in ([str(BIN)], [sys.executable, "-c", PLAIN])
    )


@pytest.mark.parametrize(
    "args",
    [
        ("build", DGX, "--target", "all"),  # ~50 KB on a pipe: flushed before the exit
        ("build", DGX, "--target", "all", "--json"),
        ("plan", DGX),
        ("build", EXAMPLES, "--target", "sysctl"),  # many hosts need --out: exit 2
        ("check", ROOT / "pyproject.toml"),  # not a spec: exit 2, diagnostics on stderr
        ("no-such-command",),
    ],
    ids=["build-stdout", "build-json", "plan", "fleet-no-out", "bad-spec", "usage"],
)
def test_output_and_exit_status_are_the_plain_interpreters(args: tuple[str | Path, ...]) -> None:
    fast, plain = both(*args)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        plain.returncode,
        plain.stdout,
        plain.stderr,
    )


def test_a_fleet_build_writes_every_host_as_the_plain_run_does(tmp_path: Path) -> None:
    """Worker processes and their pool end inside the command, before `os._exit`."""
    out = tmp_path / "a"
    fast, plain = both("build", EXAMPLES, "-t", "sysctl", "-t", "cmdline", "-o", out, "-j", "2")
    assert fast.returncode == plain.returncode == 0, fast.stderr.decode()
    for host in sorted(p.name for p in EXAMPLES.iterdir() if (p / "node.toml").is_file()):
        assert (tmp_path / "a" / host / "sysctl").is_dir(), host


def test_a_closed_stdout_ends_the_process_without_a_traceback() -> None:
    """`hostc build … | head -c1`: the reader goes away; no traceback, no hang."""
    r = subprocess.run(
        f"{sys.executable} -m hostc build {DGX} --target all | head -c 1 >/dev/null; "
        "echo ${PIPESTATUS[0]}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        timeout=120,
    )
    assert b"Traceback" not in r.stderr, r.stderr.decode()
    assert r.stdout.strip().isdigit()


def test_the_collector_is_on_for_the_command_and_nothing_waits_for_finalization(
    tmp_path: Path,
) -> None:
    """After start-up the collector runs (a fleet's hosts are collected), with the
    imported modules frozen out of its way; a build and a fleet build register no exit
    hook of their own (`os._exit` skips them all): only logging's (hostc adds no
    handler) and multiprocessing's (its pool is shut down, its children joined, before
    the command returns)."""
    one = ["build", str(DGX), "--target", "all", "--out", str(tmp_path / "one"), "-q"]
    many = ["build", str(EXAMPLES), "-t", "sysctl", "-o", str(tmp_path / "many"), "-q", "-j", "2"]
    probe = f"""
import atexit, gc, json, logging, multiprocessing
hooks = []
register = atexit.register
def spy(f, *a, **k):
    hooks.append(f"{{f.__module__}}.{{f.__qualname__}}")
    return register(f, *a, **k)
atexit.register = spy
import hostc.__main__
from hostc.cli.main import run
assert gc.isenabled() and gc.get_freeze_count() > 0
assert run({one!r}) == 0
assert run({many!r}) == 0
assert not logging.getLogger().handlers, logging.getLogger().handlers
assert not multiprocessing.active_children()
print(json.dumps(sorted(set(hooks))))
"""
    r = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "HOSTC_DEBUG"},
    )
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)) <= {
        "logging.shutdown",
        "multiprocessing.util._exit_function",
    }, r.stdout
