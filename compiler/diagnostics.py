"""Diagnostics are data: stages collect them and raise one HostcError; only the CLI prints.

Taken from Butane's report and the operator's field error list: every problem
names the file and the key path it came from, and all of them are reported
together so a user fixes a spec in one round.
"""

from __future__ import annotations

import datetime
import enum
import json
import re
from collections.abc import Iterable, Mapping

import attrs

# the key path type and its builders, re-exported: a stage imports them with `error`
from hostc.keypath import ROOT as ROOT
from hostc.keypath import KeyPath as KeyPath
from hostc.keypath import Named as Named
from hostc.keypath import at as at
from hostc.keypath import label as label
from hostc.knowledge import charsets
from hostc.locate import locate
from hostc.record import Record


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


@attrs.frozen(repr=False, eq=False)
class Diagnostic(Record):
    severity: Severity
    #: where in the input: a TOML key path (`cpu.isolate`), typed (`hostc.keypath`)
    path: KeyPath
    message: str
    hint: str | None = None
    file: str | None = None
    line: int | None = None

    def render(self) -> str:
        """One line (two with a hint), every field through `printable`: a key path,
        a file name or a quoted value cannot move the cursor or reorder the text."""
        where = printable(self.file or "<input>")
        if self.line is not None:
            where += f":{self.line}"
        message = printable(self.message)
        head = (
            f"{self.severity}: {where}: {printable(str(self.path))}: {message}"
            if self.path
            else (f"{self.severity}: {where}: {message}")
        )
        return head + (f"\n  hint: {printable(self.hint)}" if self.hint else "")

    def to_json(self) -> dict[str, object]:
        out = {k: v for k, v in attrs.asdict(self, recurse=False).items() if v is not None}
        out["path"] = str(self.path)
        return out


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: object) -> str:
    """`text` safe to echo to a terminal: every character of `charsets.TERMINAL_UNSAFE`
    as a visible `\\xNN` or `\\uNNNN` escape.  The one function every echo of
    hostc goes through (diagnostics, paths in summaries, usage errors)."""
    s = str(text)
    if s.isascii() and s.isprintable():
        return s
    return charsets.TERMINAL_UNSAFE.sub(_escape, s)


def terminal(text: str) -> str:
    """A whole text safe to write to a terminal: as `printable`, but line feeds and tabs
    kept.  The one escaping function of the terminal medium: `cli.run` routes stdout and
    stderr through it (`cli_text.TerminalSafe`), so no command prints raw host data."""
    if text.isascii() and text.isprintable():
        return text
    return charsets.TERMINAL_UNSAFE_TEXT.sub(_escape, text)


#: A lone surrogate: what Python's surrogateescape puts in a file name for each byte that
#: is not UTF-8 (U+DC80-U+DCFF, byte 0xff as U+DCFF), and what no UTF-8 output can carry.
_SURROGATE = re.compile("[\ud800-\udfff]")
#: ... and how json.dumps(ensure_ascii=True) writes one (a pair, a character past U+FFFF,
#: matches too: it only costs the check below)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _byte(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else f"\\u{c:04x}"


def _without_surrogates(value: object) -> object:
    if isinstance(value, str):
        return _SURROGATE.sub(_byte, value)
    if isinstance(value, Mapping):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_surrogates(v) for v in value]
    return value


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def json_text(doc: object, *, ascii_only: bool = False) -> str:
    """`doc` as the JSON hostc prints (`--json`, `--format json`; no final newline): valid
    JSON in valid UTF-8, whatever a name in it holds.  The one writer of that medium.

    - A byte of a file name that is not UTF-8 (a lone surrogate, as Python decodes it) is
      written as the four characters `\\xNN` (`\\xff`), as a terminal shows a byte;
      any other lone surrogate as the six characters `\\uDNNN`.  A lone surrogate is no
      character: raw it is no UTF-8, and as a JSON escape strict parsers refuse it.
    - A character a terminal must not be handed raw (`charsets.TERMINAL_UNSAFE_TEXT`:
      DEL, C1, bidi, zero-width, separators) is a JSON `\\uNNNN` escape, which reads
      back as the very character (the terminal's own escape, `\\x85`, is no JSON).
    - `ascii_only`: every other non-ASCII character escaped too (the outputs that always were
      ASCII stay so)."""
    text = json.dumps(doc, indent=2, ensure_ascii=ascii_only)
    if (_SURROGATE_ESCAPE if ascii_only else _SURROGATE).search(text):
        text = json.dumps(_without_surrogates(doc), indent=2, ensure_ascii=ascii_only)
    if text.isascii():
        return text
    return charsets.TERMINAL_UNSAFE_TEXT.sub(_json_escape, text)


#: The TOML type of a Python value, as a message names it (`got a string`).
_KINDS = {bool: "a boolean", int: "an integer", str: "a string", float: "a float"}


def kind_of(value: object) -> str:
    """What `value` is, in TOML's words, for every "expected …, got …" message: `a string`,
    `an array`, `a table`; `None` (TOML has no null); any other object by its class with
    an article (`a Path`), so no message says `got NoneType` or `got str`."""
    if value is None:
        return "None"
    if (kind := _KINDS.get(type(value))) is not None:
        return kind
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return "a date or time"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def error(path: KeyPath, message: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(Severity.ERROR, path, message, hint)


def warning(path: KeyPath, message: str, hint: str | None = None) -> Diagnostic:
    return Diagnostic(Severity.WARNING, path, message, hint)


class HostcError(Exception):
    """Raised by a stage with every problem it found; the CLI turns it into exit 2."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)


def with_file(
    diags: Iterable[Diagnostic], file: str, source: str | None = None
) -> list[Diagnostic]:
    """Attach the file name and, when the TOML source is known, the line of the key path."""
    out = []
    for d in diags:
        line = d.line
        if line is None and source is not None and d.path:
            line = locate(d.path, source)
        out.append(attrs.evolve(d, file=d.file or file, line=line))
    return out


def raise_if_errors(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Return the warnings; raise when any error is present."""
    diags = list(diags)
    if any(d.severity is Severity.ERROR for d in diags):
        raise HostcError(diags)
    return diags


def file_error(
    file: str,
    message: str,
    *,
    line: int | None = None,
    hint: str | None = None,
    path: KeyPath = ROOT,
) -> Diagnostic:
    """An error about a whole input file (missing, unreadable, not parseable)."""
    return Diagnostic(Severity.ERROR, path, message, hint=hint, file=file, line=line)


def toml_syntax_error(e: Exception, file: str) -> Diagnostic:
    """tomli (as tomllib) puts the position in the message text; move it to the line field."""
    msg = str(e)
    m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
    line = int(m.group(1)) if m else None
    msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
    return file_error(file, f"TOML syntax error: {msg}", line=line)
