"""The CLI's own wording, kept apart from its commands: the `--target` help, the one-line
summaries of what a command wrote or found, and a terminal-safe stderr."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import attrs

from hostc.diagnostics import Diagnostic, at, label, printable, terminal

if TYPE_CHECKING:
    from hostc.audit.findings import Finding
    from hostc.topology.model import Topology


#: `--target` help; tests/test_first_hour.py checks it against the registry.
TARGET_HELP = (
    "target name, repeatable (`hostc targets` lists them); `all` (the default) is every "
    "file target that applies to the host: grub or grubby, cmdline, sysctl, limits, "
    "systemd, modprobe, kubelet, tuned.  The wrappers cloud-init, ignition, rootfs, "
    "rootfs-tar and ansible are never in `all`: name them, alone or beside it "
    "(`-t all -t cloud-init`)"
)


def flagged(diags: list[Diagnostic]) -> list[Diagnostic]:
    """An API diagnostic about the target list, as the CLI spells it (`--target`)."""
    flag = label("--target")
    return [attrs.evolve(d, path=flag) if d.path == at("targets") else d for d in diags]


def wrote(written: list[Path], out: Path, unchanged: int = 0) -> str:
    """`wrote 1 file: out/ignition/config.ign`, or the count and the directory; and how
    many of them already held these bytes and were left as they were."""
    if len(written) == 1:
        if unchanged:
            return f"{printable(str(written[0]))} is unchanged: left as it was"
        return f"wrote 1 file: {printable(str(written[0]))}"
    n = len(written) - unchanged
    line = f"wrote {n} file{'' if n == 1 else 's'} under {printable(str(out))}"
    return f"{line}; {unchanged} unchanged, left as they were" if unchanged else line


def found(topo: Topology) -> str:
    """What a probe or an import found, in one line: `found 128 CPUs (2 offline), 2 NUMA
    nodes, 8 GPUs, 8 NICs`."""

    def n(count: int, what: str) -> str:
        return f"{count} {what}{'' if count == 1 else 's'}"

    offline = sum(1 for c in topo.cpus if not c.online)
    cpus = n(len(topo.cpus), "CPU") + (f" ({offline} offline)" if offline else "")
    parts = [cpus, n(len(topo.nodes), "NUMA node"), n(len(topo.gpus), "GPU")]
    return "found " + ", ".join(parts) + f", {n(len(topo.nics), 'NIC')}"


class TerminalSafe:
    """stdout or stderr with every terminal-unsafe character escaped
    (`diagnostics.terminal`), line feeds and tabs kept: the terminal's boundary (click's
    usage errors quote argv; audit prints what a host tree holds).  Bytes written to
    `.buffer` (an artifact, an archive) pass as they are."""

    def __init__(self, stream: object) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(terminal(text))  # type: ignore[attr-defined, no-any-return]

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def unescaped(stream: object) -> object:
    """The stream under a `TerminalSafe` one: for hostc's own control characters (the
    progress bar's carriage return), never for text from input."""
    return stream._stream if isinstance(stream, TerminalSafe) else stream


#: SGR colours of a change's cost on a terminal, as `terraform plan` marks a replacement:
#: bold red for a reboot (or a kubelet reset), bold yellow for a restart
COST_COLOURS = {"reboot": "1;31", "restart": "1;33"}


def wants_colour(stream: object) -> bool:
    """Colour on a terminal only: never in a pipe or a file, never with `NO_COLOR` set
    to anything (no-color.org) or `TERM=dumb`."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def write_costs(stream: TextIO, text: str, costs: Mapping[str, str]) -> None:
    """Write `text`; on a terminal (`wants_colour`), each line that ends with one of
    `costs`' texts (a disruption's line as the text shows it) coloured by that cost's
    word (`Disruption.summary`: reboot red, restart yellow, live and none plain).  The
    text is made terminal-safe first (`terminal`): the colour is hostc's own control
    sequence, never one from input."""
    if not wants_colour(stream) or not any(w in COST_COLOURS for w in costs.values()):
        stream.write(text)
        return
    safe = {terminal(line): word for line, word in costs.items() if word in COST_COLOURS}
    out = []
    for ln in terminal(text).split("\n"):
        word = next((w for line, w in safe.items() if line and ln.endswith(line)), None)
        out.append(f"\x1b[{COST_COLOURS[word]}m{ln}\x1b[0m" if word else ln)
    raw = unescaped(stream)
    raw.write("\n".join(out))  # type: ignore[attr-defined]


def other_machine(findings: list[Finding]) -> str | None:
    """`hostc audit`'s first word when this host is not the snapshot's machine: the
    audit's first row, `online CPUs` (`hostc.audit.observe`: "another one makes every
    other row moot"), differs.  Every row below then compares another machine's Plan,
    and an `applied` there is no success (first-day-4 A1).  None: the same CPUs."""
    row = next((f for f in findings if f.setting == "online CPUs"), None)
    if row is None or row.status != "differs" or row.found is None:
        return None
    return (
        f"this host is not the snapshot's machine: online CPUs {printable(row.found)} "
        f"here, {row.expected} in the snapshot; every row below compares another "
        "machine's Plan (audit on the machine the snapshot was probed on)"
    )
