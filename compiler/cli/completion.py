"""`hostc completion SHELL`: print the script that makes bash, zsh or fish complete
hostc's commands, options and file arguments; registered on the app `hostc.cli.main` runs.

The script calls `hostc` back with `_HOSTC_COMPLETE` set (typer's protocol), and typer
answers before any command runs.  The app is built without typer's
`--install-completion` (which edits ~/.bashrc and costs every start the completion
classes' import), so the classes are registered here, only when the shell asks."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated

import typer
from typer._completion_shared import get_completion_script

from hostc.cli.base import _usage, app

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_HOSTC_COMPLETE"

if os.environ.get(COMPLETE_VAR):  # the shell asks for candidates: typer's classes answer
    from typer._completion_classes import completion_init

    completion_init()


def values(*words: str) -> Callable[[str], list[str]]:
    """A parameter's candidates when the shell asks (typer's `autocompletion`): the
    `words` that start with what is typed."""

    def complete(incomplete: str) -> list[str]:
        return [w for w in words if w.startswith(incomplete)]

    return complete


def target_names(incomplete: str) -> list[str]:
    """`--target`'s candidates: `all` and every registered target (`hostc targets`)."""
    from hostc import api

    return values("all", *api.targets())(incomplete)


@app.command("completion")
def completion_cmd(
    shell: Annotated[
        str,
        typer.Argument(help="bash, zsh or fish", metavar="SHELL", autocompletion=values(*SHELLS)),
    ],
) -> None:
    """Print the completion script for SHELL (bash, zsh, fish).  Try it with
    `source <(hostc completion bash)`; keep it with `mkdir -p
    ~/.local/share/bash-completion/completions` and `hostc completion bash >
    ~/.local/share/bash-completion/completions/hostc` (bash loads that folder through
    the bash-completion package; without it, put the `source` line in ~/.bashrc).
    zsh: `> ~/.zfunc/_hostc` with `fpath+=~/.zfunc` before `compinit` in ~/.zshrc;
    fish: `> ~/.config/fish/completions/hostc.fish`.  Then start a new shell."""
    if shell not in SHELLS:
        _usage(f"SHELL: {shell!r} is not one of {', '.join(SHELLS)}")

    script = get_completion_script(prog_name="hostc", complete_var=COMPLETE_VAR, shell=shell)
    typer.echo(script)
