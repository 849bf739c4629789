"""How the text importers (lscpu, numactl, nvidia-smi) reject what is not text.

Pasted captures arrive empty, as binary, or with Windows or old-Mac line ends;
each importer must refuse the first two with one clear message before it starts
parsing, and all of them should do so the same way.  Keeping that here means the
wording, the line number of the first bad byte and the newline handling cannot
drift apart between importers.
"""

from __future__ import annotations

import re

from hostc.cpuset import MAX_CPU
from hostc.diagnostics import HostcError, file_error

#: The most lines a text import may have: one per CPU a snapshot can hold (ids up to
#: MAX_CPU: lscpu prints a row per CPU, numactl and nvidia-smi far fewer) plus room
#: for headers and summaries.  Counted before anything is parsed, so a 16 MiB file of
#: short lines is refused at once instead of after minutes and a gigabyte.
MAX_LINES = MAX_CPU + 1 + 4096

# C0 controls and DEL, except TAB, LF and CR, which text output legitimately holds.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def fail(file: str, message: str, line: int | None = None, hint: str | None = None) -> HostcError:
    """One error about `file`, ready to raise."""
    return HostcError([file_error(file, message, line=line, hint=hint)])


def text_lines(text: str, file: str, what: str, hint: str) -> list[str]:
    """`text` split into lines (CRLF and CR normalised to LF), or an error if it is not text.

    `what` names the tool in the messages ("lscpu", "numactl", "nvidia-smi");
    `hint` says how to capture its output and goes with the empty-file error.
    """
    if not text.strip():
        raise fail(file, f"the {what} file is empty", hint=hint)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.count("\n") + 1
    if lines > MAX_LINES:
        raise fail(
            file,
            f"the {what} file has {lines} lines, too many: no machine hostc can describe "
            f"(at most {MAX_CPU + 1} CPUs) prints more than {MAX_LINES}",
        )
    if (bad := _CONTROL.search(text)) is not None:
        raise fail(
            file,
            f"the file holds binary data, not {what} text output",
            line=text.count("\n", 0, bad.start()) + 1,
        )
    return text.split("\n")
