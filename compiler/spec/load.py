"""node.toml text → HostSpec.  Only shape and types; every error names file and key path."""

from __future__ import annotations

import tomllib
from pathlib import Path

from hostc.diagnostics import HostcError, error, file_error, toml_syntax_error, with_file
from hostc.spec.model import HostSpec

SPEC_VERSION = 1


def loads(text: str, file: str = "node.toml") -> HostSpec:
    from hostc.convert import diagnostics, structure

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise HostcError([toml_syntax_error(e, file)]) from None
    version = data.get("version", SPEC_VERSION)
    if version != SPEC_VERSION or isinstance(version, bool):
        raise HostcError(
            with_file(
                [
                    error(
                        "version",
                        f"unsupported node.toml version {version!r}",
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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HostcError([file_error(str(path), "spec file not found")]) from None
    except (OSError, UnicodeDecodeError) as e:
        raise HostcError([file_error(str(path), f"cannot read the spec: {e}")]) from None
    return loads(text, str(path)), text
