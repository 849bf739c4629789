"""node.toml text → HostSpec.  Only shape and types; every error names file and key path.

The spec path may name anything (/dev/zero, a FIFO, a directory, a secret that
is not TOML): it is read through the same bounded reader as snapshots, and no
error about it echoes its content.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from hostc.diagnostics import HostcError, error, file_error, toml_syntax_error, with_file
from hostc.spec.model import HostSpec
from hostc.spec.text import shown
from hostc.topology.readfile import read_text_bounded

SPEC_VERSION = 1
#: A spec is a few hundred bytes; a MiB is far above any real one.
SPEC_LIMIT = 1 << 20
#: Arrays and tables nested deeper than this are refused (the model nests 4 deep).
NESTING_LIMIT = 32


def _depth(data: Any) -> int:
    """How deeply arrays and tables nest, counted without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if d > NESTING_LIMIT:
            break
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return deepest


def _too_deep(file: str) -> HostcError:
    return HostcError(
        [
            file_error(
                file,
                f"arrays or tables are nested too deeply (more than {NESTING_LIMIT} levels)",
                hint="node.toml nests a few levels at most; is this the right file?",
            )
        ]
    )


def loads(text: str, file: str = "node.toml") -> HostSpec:
    from hostc.convert import diagnostics, structure

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise HostcError([toml_syntax_error(e, file)]) from None
    except RecursionError:
        raise _too_deep(file) from None
    if _depth(data) > NESTING_LIMIT:
        raise _too_deep(file)
    version = data.get("version", SPEC_VERSION)
    if version != SPEC_VERSION or isinstance(version, bool):
        raise HostcError(
            with_file(
                [
                    error(
                        "version",
                        f"unsupported node.toml version {shown(version)}",
                        hint=f"this hostc reads version {SPEC_VERSION}",
                    )
                ],
                file,
                text,
            )
        )
    try:
        return structure(data, HostSpec)
    except Exception as e:  # cattrs' exception groups, flattened into diagnostics
        raise HostcError(with_file(diagnostics(e), file, text)) from None


def load(path: Path) -> tuple[HostSpec, str]:
    """Return the spec and its source text (kept for locating later diagnostics)."""
    text = read_text_bounded(path, limit=SPEC_LIMIT, what="spec")
    return loads(text, str(path)), text
