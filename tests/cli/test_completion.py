"""`hostc completion SHELL` prints a script the shell accepts, and through it the real
shell completes hostc's commands and options (README, docs/cli.md: how to install it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need_tool, run_hostc

BIN = Path(sys.executable).parent


def _hostc_on_path() -> dict[str, str]:
    if not (BIN / "hostc").exists():
        pytest.skip(f"no hostc console script beside {sys.executable} (pip install -e .)")
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_naming_hostc(shell: str) -> None:
    r = run_hostc("completion", shell)
    assert r.returncode == 0, r.stderr
    assert "_HOSTC_COMPLETE" in r.stdout and "hostc" in r.stdout
    if shell == "bash":
        check = subprocess.run(
            [need_tool("bash"), "-n"], input=r.stdout, capture_output=True, text=True
        )
        assert check.returncode == 0, check.stderr
    elif shutil.which(shell):  # zsh/fish: parsed where installed (not a CI validator)
        check = subprocess.run([shell, "-n"], input=r.stdout, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def test_completion_of_an_unknown_shell_is_a_usage_error() -> None:
    r = run_hostc("completion", "tcsh")
    assert r.returncode == 2 and r.stdout == ""
    assert "bash, zsh, fish" in r.stderr


def _complete(words: str) -> list[str]:
    """What bash offers after `words` with the installed script, as a user's TAB does."""
    script = (
        "source <(hostc completion bash); COMP_WORDS=($WORDS); "
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); "
        '_hostc_completion hostc; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    r = subprocess.run(
        [need_tool("bash"), "-c", script],
        env={**_hostc_on_path(), "WORDS": words},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_bash_completes_commands_and_options_through_the_script() -> None:
    assert _complete("hostc bu") == ["build"]
    assert "completion" in _complete("hostc co")
    assert "--target" in _complete("hostc build --ta")
