"""The walk that proves a loaded value deeply immutable: a spec, a Topology."""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import pytest

from hostc.cpuset import CpuSet


def mutable_inside(value: Any, path: str) -> Iterator[str]:
    """The key path of every list, dict, set or bytearray inside `value`."""
    if isinstance(value, list | dict | set | bytearray):
        yield f"{path}: {type(value).__name__}"
    elif isinstance(value, str | bytes | int | float | enum.Enum | CpuSet) or value is None:
        return
    elif attrs.has(type(value)):
        for f in attrs.fields(type(value)):
            yield from mutable_inside(getattr(value, f.name), f"{path}.{f.name}")
    elif isinstance(value, tuple):
        for i, v in enumerate(value):
            yield from mutable_inside(v, f"{path}[{i}]")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from mutable_inside(k, f"{path} key {k!r}")
            yield from mutable_inside(v, f"{path}[{k!r}]")
    else:
        pytest.fail(f"{path}: {type(value).__name__}, a type this walk does not know")
