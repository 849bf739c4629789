"""Paths as the API takes them: `str` or any `os.PathLike`, anything else a HostcError.

An embedder passing `"node.toml"` instead of `Path("node.toml")`, or bytes, or None,
gets a diagnostic naming the argument, never an AttributeError from deep inside.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from hostc.artifact import Artifact
from hostc.diagnostics import HostcError, at, error, kind_of

T = TypeVar("T")


def as_path(value: object, what: str) -> Path:
    """`value` as a Path: a str or an os.PathLike of str."""
    if isinstance(value, Path):
        return value
    if isinstance(value, str | os.PathLike):
        p = os.fspath(value)
        if isinstance(p, str) and p and "\0" not in p:
            return Path(p)
    raise HostcError(
        [error(at(what), f"expected a path (str or os.PathLike), got {kind_of(value)}")]
    )


def as_names(value: object, what: str = "targets") -> list[str]:
    """A list of names: an iterable of str, but never one bare str (which would iterate
    into its characters, or name one target by accident)."""
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise HostcError(
            [
                error(
                    at(what),
                    f"expected a list of target names, got {kind_of(value)}",
                    hint='emit(plan, ["sysctl"]), not emit(plan, "sysctl")',
                )
            ]
        )
    names = list(value)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise HostcError([error(at(what), f"target names are strings, got {kind_of(bad[0])}")])
    return names


def of_type(value: T, cls: type[T] | tuple[type, ...], what: str, expected: str) -> T:
    """`value` when it is a `cls`, else a HostcError naming the argument."""
    if not isinstance(value, cls):
        raise HostcError([error(at(what), f"expected {expected}, got {kind_of(value)}")])
    return value


def artifact_list(value: object, what: str = "artifacts") -> list[Any]:
    """A list of Artifacts (any iterable of them, not a bare one)."""
    if isinstance(value, str | bytes | Artifact) or not hasattr(value, "__iter__"):
        raise HostcError([error(at(what), f"expected a list of Artifacts, got {kind_of(value)}")])
    items = list(value)
    if not all(isinstance(a, Artifact) for a in items):
        raise HostcError([error(at(what), "expected a list of Artifacts")])
    return items
