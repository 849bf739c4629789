"""The user's own figure: `line:NAME`, `regex:PATTERN`, `json:PATH`, and `--reader`'s
parser (`reader_for`), which also knows the built-in readers and `auto`.

A generic reader cannot know which way its figure improves unless the unit says so:
`line:NAME` takes it from the unit printed after the number (a rate such as `GB/s`,
`tok/s`, `samples/sec` is better higher, a time such as `ms` or `s` better lower);
otherwise, and always for `regex:` and `json:`, `--better higher|lower` says it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from hostc.bench.readers import BUILT_IN, NUMBER, Better, Figure, FigureReader, lines, number
from hostc.diagnostics import HostcError, file_error

#: units of time: a smaller figure is better
TIMES = frozenset({"ns", "us", "µs", "ms", "s", "sec", "secs", "second", "seconds", "min", "h"})
#: a unit that ends in one of these is a rate: a larger figure is better
RATES = ("/s", "/sec", "/second", "per_s", "/min", "/h", "ps", "it/s")
#: the longest JSON text read from a run's output
JSON_LIMIT = 16 << 20
_PATH_PART = re.compile(r"\.?([^.\[\]]+)|\[(-?\d+)\]")


def _fail(message: str, hint: str | None = None) -> HostcError:
    return HostcError([file_error("--reader", message, hint=hint)])


def unit_better(unit: str) -> Better | None:
    """Which way a figure in `unit` improves, when the unit alone says it."""
    if unit in TIMES:
        return Better.LOWER
    if unit.lower().endswith(RATES):
        return Better.HIGHER
    return None


def line_reader(name: str, better: Better | None) -> FigureReader:
    """The last line holding `NAME: NUMBER UNIT` (or `NAME = NUMBER`), NAME not the end
    of a longer word (`loss` is not `val_loss`)."""
    pattern = re.compile(rf"(?<!\w){re.escape(name)}\s*[:=]\s*({NUMBER})[ \t]*([^\s,;]*)")

    def read(text: str) -> tuple[Figure, ...]:
        found = [m for line in lines(text) if (m := pattern.search(line))]
        value = number(found[-1].group(1)) if found else None
        if value is None:
            return ()
        unit = found[-1].group(2)
        way = better or unit_better(unit)
        if way is None:
            raise _fail(
                f"cannot tell whether a higher {name!r} is better (its unit is "
                f"{unit or 'missing'!r})",
                "pass --better higher or --better lower",
            )
        return (Figure(name, value, unit, way),)

    return FigureReader(f"line:{name}", "the user's line", read)


def regex_reader(pattern_text: str, better: Better | None) -> FigureReader:
    """The last match of PATTERN: one named group is the figure (its name), an optional
    group `unit` its unit."""
    try:
        pattern = re.compile(pattern_text)
    except re.error as e:
        raise _fail(f"regex:{pattern_text!r} is no regular expression: {e}") from None
    names = [n for n in pattern.groupindex if n != "unit"]
    if len(names) != 1:
        raise _fail(
            f"regex:{pattern_text!r} needs exactly one named group for the figure",
            "name the number: regex:'step time (?P<step_ms>[0-9.]+) ms'",
        )
    if better is None:
        raise _fail("a regex: reader needs --better higher or --better lower")
    way, name = better, names[0]

    def read(text: str) -> tuple[Figure, ...]:
        found = [m for line in lines(text) if (m := pattern.search(line))]
        value = number(found[-1].group(name) or "") if found else None
        if value is None:
            return ()
        unit = found[-1].groupdict().get("unit") or ""
        return (Figure(name, value, unit, way),)

    return FigureReader(f"regex:{pattern_text}", "the user's pattern", read)


def json_path(path: str) -> list[str | int]:
    """`a.b[0].c` → ['a', 'b', 0, 'c']; what does not parse is refused."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(path):
        m = _PATH_PART.match(path, pos)
        if m is None or m.end() == pos:
            raise _fail(f"json:{path!r} is no path (keys joined by '.', indexes as [N])")
        parts.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    if not parts:
        raise _fail("json: needs a path, such as json:average_bus_bandwidth.bandwidth")
    return parts


def last_json(text: str) -> Any:
    """The whole output as JSON, else the last top-level JSON value among those that
    start a line (a benchmark that prints, then dumps its results); a value inside
    another is never taken for it."""
    text = text[-JSON_LIMIT:]
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    found, end = None, 0
    for m in re.finditer(r"(?m)^[ \t]*([\[{])", text):
        if m.start(1) < end:
            continue  # inside the value found last
        try:
            found, end = decoder.raw_decode(text, m.start(1))
        except (ValueError, RecursionError):
            continue
    return found


def _walk(doc: Any, parts: list[str | int]) -> Any:
    for part in parts:
        index = isinstance(part, int) and isinstance(doc, list) and -len(doc) <= part < len(doc)
        if not (index or (isinstance(part, str) and isinstance(doc, dict) and part in doc)):
            return None
        doc = doc[part]
    return doc


def json_reader(path: str, better: Better | None) -> FigureReader:
    parts = json_path(path)
    if better is None:
        raise _fail("a json: reader needs --better higher or --better lower")
    way = better

    def read(text: str) -> tuple[Figure, ...]:
        value = _walk(last_json(text), parts)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return ()
        found = number(repr(value))
        return (Figure(path, found, "", way),) if found is not None else ()

    return FigureReader(f"json:{path}", "the user's JSON", read)


GENERIC: dict[str, Callable[[str, Better | None], FigureReader]] = {
    "line": line_reader,
    "regex": regex_reader,
    "json": json_reader,
}
#: what `--reader` accepts, for messages and --help
READER_HELP = "auto, " + ", ".join(BUILT_IN) + ", line:NAME, regex:PATTERN or json:PATH"


def reader_for(spec: str, better: Better | None) -> FigureReader | None:
    """The reader `--reader SPEC` names; None for `auto` (each run tries the built-in
    ones).  An unknown name, or --better given to a reader that knows its direction,
    is refused."""
    kind, sep, arg = spec.partition(":")
    if sep and kind in GENERIC:
        return GENERIC[kind](arg, better)
    if spec == "auto" or spec in BUILT_IN:
        if better is not None:
            raise _fail(f"--better goes with a line:, regex: or json: reader, not {spec!r}")
        return None if spec == "auto" else BUILT_IN[spec]
    raise _fail(f"unknown reader {spec!r}", f"choose from {READER_HELP}")


def read_auto(text: str) -> tuple[FigureReader, tuple[Figure, ...]] | None:
    """The first built-in reader that finds a figure in `text`, with its figures."""
    for reader in BUILT_IN.values():
        found = reader.read(text)
        if found:
            return reader, found
    return None
