"""The YAML serializer the YAML targets share (cloud-init, Ansible, kubelet): one dumper
class, made once, and one loader for the parse-back check each target runs.

PyYAML's pure-Python emitter and parser cost ~115 ms per host for a cloud-init
user-data (each file's readability check dumps and reloads it) and ~90 ms for an Ansible
vars file: over a thousand-host fleet, minutes of a build that otherwise takes seconds.
So libyaml's C emitter and parser are used when PyYAML was built with them (every PyPI
wheel is), with PyYAML's own representer and resolver either way, so a document is
represented the same way.  The pure-Python classes remain the fallback; the golden files
are the same bytes from both (tests/unit/targets/test_yaml.py dumps the examples' documents
both ways and compares).
"""

from __future__ import annotations

import functools
from typing import Any


def yaml() -> Any:
    """PyYAML, imported by the YAML targets only (a build without them never loads it)."""
    import yaml as module  # type: ignore[import-untyped, unused-ignore]

    return module


class Block(str):
    """A string to be written as a literal block scalar (`|`)."""


class Flow(list[str]):
    """A list written as a one-line flow sequence: `[sysctl, --system]`."""


@functools.cache
def dumper(c: bool = True) -> Any:
    """A safe dumper that never writes an anchor or alias (`&id001`, `*id001`), writes
    `Block` as `|` and `Flow` on one line; libyaml's emitter when `c` and available."""
    y = yaml()
    base = y.CSafeDumper if c and y.__with_libyaml__ else y.SafeDumper
    made: Any = type("Dumper", (base,), {"ignore_aliases": lambda self, data: True})
    made.add_representer(
        Block, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", str(s), style="|")
    )
    made.add_representer(
        Flow, lambda d, s: d.represent_sequence("tag:yaml.org,2002:seq", list(s), flow_style=True)
    )
    return made


def dump(doc: object, *, c: bool = True, **options: Any) -> str:
    """`doc` as YAML, keys in their order; `options` are yaml.dump's (width, indent, …)."""
    text: str = yaml().dump(doc, Dumper=dumper(c), sort_keys=False, **options)
    return text


def load(text: str) -> Any:
    """`text` parsed back as plain data (the safe loader: no tags, no objects)."""
    y = yaml()
    return y.load(text, Loader=y.CSafeLoader if y.__with_libyaml__ else y.SafeLoader)
