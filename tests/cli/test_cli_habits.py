"""Habits users bring from peer tools (issue 35): `--version`, `-h`, one exit-code table,
and a progress bar drawn only on a terminal, with a real carriage return.  Everything
runs the real CLI (`python -m hostc`) in a subprocess; the terminal through a pty."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import hostc

from conftest import EXAMPLES, ROOT

FLEET = EXAMPLES / "fleet" / "hosts"
COMMANDS = (
    "build",
    "check",
    "plan",
    "explain",
    "diff",
    "targets",
    "schema",
    "audit",
    "changed",
    "probe",
    "pre-commit",
    "import",
    "init",
    "completion",
)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "CI"}  # CI turns the bar off


def hostc_run(*args: str | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "hostc", *map(str, args)],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        env=_env(),
    )


def test_version_prints_the_package_metadata_version() -> None:
    r = hostc_run("--version")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode() == f"hostc {version('hostc')}\n"
    assert hostc.__version__ == version("hostc")  # the module and pyproject.toml agree


@pytest.mark.parametrize(
    "argv",
    [[], *([c] for c in COMMANDS), ["import", "hwloc"]],
    ids=lambda a: " ".join(a) or "hostc",
)
def test_dash_h_is_help_on_every_command(argv: list[str]) -> None:
    short, long = hostc_run(*argv, "-h"), hostc_run(*argv, "--help")
    assert short.returncode == 0, short.stderr.decode()
    assert short.stdout == long.stdout
    assert b"-h, --help" in short.stdout


def test_exit_code_table_is_in_help_and_readme_alike() -> None:
    from hostc.cli.base import EXIT_CODES

    table = EXIT_CODES.removeprefix("\b\n")
    out = hostc_run("--help").stdout.decode()
    assert re.sub(r"\s+", " ", table) in re.sub(r"\s+", " ", out)
    readme = (ROOT / "README.md").read_text()
    assert re.sub(r"\s+", " ", table) in re.sub(r"\s+", " ", readme)
    for code in ("0", "1", "2", "3", "130"):
        assert re.search(rf"^\s+{code}\s", table, re.M), code


def _fleet_build(out: Path, stderr: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "hostc", "build", FLEET, "-t", "sysctl", "-o", out, "-j", "1"]
    return subprocess.Popen(
        list(map(str, argv)), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=stderr
    )


def test_progress_bar_on_a_terminal_redraws_with_a_real_carriage_return(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    proc = _fleet_build(tmp_path, slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 0, seen.decode()
    assert b"\r[" in seen and b"hosts" in seen
    assert b"\\x0d" not in seen  # never the escaped form (first-day-3.md, F2)


def test_no_progress_bar_and_no_carriage_return_in_a_pipe(tmp_path: Path) -> None:
    proc = _fleet_build(tmp_path, subprocess.PIPE)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert b"\r" not in err and b"\\x0d" not in err and b"[#" not in err
    assert b"hosts:" in err  # the summary is still there


def test_out_dash_is_standard_output_as_the_hints_say(tmp_path: Path) -> None:
    """`-o -` writes one host's build to standard output (the refusals' hints name it),
    never a folder called `-`; with --check it is a usage error."""
    spec = EXAMPLES / "h100-4gpu-inference" / "node.toml"
    r = subprocess.run(
        [sys.executable, "-m", "hostc", "build", str(spec), "-t", "cmdline", "-o", "-"],
        capture_output=True,
        cwd=tmp_path,
        check=False,
    )
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.startswith(b"#") or b"isolcpus=" in r.stdout, r.stdout[:200]
    assert not (tmp_path / "-").exists()
    r = subprocess.run(
        [sys.executable, "-m", "hostc", "build", str(spec), "-o", "-", "--check"],
        capture_output=True,
        cwd=tmp_path,
        check=False,
    )
    assert r.returncode == 2 and b"standard output" in r.stderr, r.stderr.decode()
    assert not (tmp_path / "-").exists()
