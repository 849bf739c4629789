"""`hostc completion SHELL`: print the script that makes bash, zsh or fish complete
hostc's commands, options and file arguments; registered on the app `hostc.cli.main` runs.

The script calls `hostc` back with `_HOSTC_COMPLETE` set (typer's protocol), and typer
answers before any command runs.  The app is built without typer's
`--install-completion` (which edits ~/.bashrc and costs every start the completion
classes' import), so the classes are registered here, only when the shell asks."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from typer._completion_shared import get_completion_script

from hostc.cli.base import _usage, app

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_HOSTC_COMPLETE"

if os.environ.get(COMPLETE_VAR):  # the shell asks for candidates: typer's classes answer
    from typer._completion_classes import completion_init

    completion_init()


@app.command("completion")
def completion_cmd(
    shell: Annotated[str, typer.Argument(help="bash, zsh or fish", metavar="SHELL")],
) -> None:
    """Print the completion script for SHELL (bash, zsh, fish).  Install it with
    `hostc completion bash > ~/.local/share/bash-completion/completions/hostc`
    (zsh: `> ~/.zfunc/_hostc` with `fpath+=~/.zfunc` before `compinit` in ~/.zshrc;
    fish: `> ~/.config/fish/completions/hostc.fish`), then start a new shell."""
    if shell not in SHELLS:
        _usage(f"SHELL: {shell!r} is not one of {', '.join(SHELLS)}")

    script = get_completion_script(prog_name="hostc", complete_var=COMPLETE_VAR, shell=shell)
    typer.echo(script)
