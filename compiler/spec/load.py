"""node.toml text → HostSpec.  Only shape and types; every error names file and key path.

The spec path may name anything (/dev/zero, a FIFO, a directory, a secret that
is not TOML): it is read through the same bounded reader as snapshots, and no
error about it echoes its content.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostc.diagnostics import HostcError, error, file_error, toml_syntax_error, with_file
from hostc.spec.model import HostSpec
from hostc.spec.text import shown
from hostc.topology.readfile import read_text_bounded

if TYPE_CHECKING:
    from hostc.spec.layers import Layered

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


def parse(text: str, file: str) -> dict[str, Any]:
    """TOML text → data, with the syntax and nesting checks every spec file gets."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise HostcError([toml_syntax_error(e, file)]) from None
    except RecursionError:
        raise _too_deep(file) from None
    if _depth(data) > NESTING_LIMIT:
        raise _too_deep(file)
    return data


def loads(text: str, file: str = "node.toml") -> HostSpec:
    data = parse(text, file)
    from hostc.spec import layers

    if layers.declares_layers(data):  # `extends`, `[force]`, `[remove]`: read from `file`
        return load_layered(Path(file))[0]
    return from_data(data, file, text)


def from_data(data: dict[str, Any], file: str, text: str | None) -> HostSpec:
    """Parsed (or merged) TOML data → HostSpec: the version, then shape and types."""
    from hostc.convert import diagnostics, structure

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


def load_layered(path: Path) -> tuple[HostSpec, Layered]:
    """A spec with `extends`/`[force]`/`[remove]`: merged, structured, and each problem
    pointed at the file and line that set the value."""
    from hostc.spec import layers

    merged = layers.read(path)
    try:
        return from_data(merged.data, str(path), None), merged
    except HostcError as e:
        raise HostcError(layers.attribute(e.diagnostics, merged)) from None


def load(path: Path) -> tuple[HostSpec, str]:
    """Return the spec and its source text (kept for locating later diagnostics)."""
    text = read_text_bounded(path, limit=SPEC_LIMIT, what="spec")
    return loads(text, str(path)), text
