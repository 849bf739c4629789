"""Walk a Plan generically: every attrs value in it, with its path, and no hand-kept field list."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from hostc.cpuset import CpuSet
from hostc.plan.model import Reason, Value
from hostc.settings import Setting


def walk(value: Any, path: str = "plan") -> Iterator[tuple[str, Any]]:
    if isinstance(value, CpuSet | Reason | Setting):  # a Value's row is no Plan value
        return
    if attrs.has(type(value)):
        yield path, value
        for f in attrs.fields(type(value)):
            yield from walk(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, tuple | list):
        for i, x in enumerate(value):
            yield from walk(x, f"{path}[{i}]")


def reasons(value: Any) -> Iterator[tuple[str, Reason]]:
    """Every Reason held by any value in the Plan, with the path of its holder."""
    for path, v in walk(value):
        for f in attrs.fields(type(v)):
            r = getattr(v, f.name)
            if isinstance(r, Reason):
                yield f"{path}.{f.name}", r


def settings(value: Any) -> Iterator[tuple[str, Any]]:
    """Values that say when they take effect: the Plan's settings."""
    for path, v in walk(value):
        if isinstance(v, Value) or "when" in attrs.fields_dict(type(v)):
            yield path, v
