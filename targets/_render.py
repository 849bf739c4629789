"""The one jinja2 environment: StrictUndefined, keep_trailing_newline, quoting filters.

Every value a template prints comes from the Plan, and most of it from a user's
spec or a snapshot.  The loader and check refuse unsafe text already; the
templates escape again for their own format, so one missed check cannot forge a
line:

- `comment` / `oneline` make any text one printable line (control characters
  dropped, whitespace collapsed);
- `grubarg` passes a kernel argument only if every character is one that sh
  (inside double quotes) and GRUB's script language (unquoted) take literally;
- `sysctl_key`, `sysctl_value` and `word` refuse what sysctl.d and limits.d
  would read as a comment, a separator or a second field;
- `shell` quotes for sh and refuses control characters;
- `finalize` refuses any `{{ … }}` output holding a control character (a newline
  in a value would start a new line: a shell command, a sysctl, a limit), the
  filters' output and the rows' text escaped in Python included.

A refused value raises `UnsafeValue`: it is a bug in the checks, never output.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import attrs
import jinja2

from hostc.plan.model import Reason
from hostc.record import Record
from hostc.targets._escape import (
    UnsafeValue,
    comment,
    finalize,
    grubarg,
    oneline,
    shell,
    sysctl_key,
    sysctl_value,
    word,
)
from hostc.targets._header import Header, header

__all__ = [
    "Header",
    "Row",
    "UnsafeValue",
    "config",
    "env",
    "headed",
    "header",
    "render",
    "script",
    "shared",
]


@attrs.frozen(repr=False, eq=False)
class Row(Record):
    """One setting as a template lays it out: its reason (a comment above it) and its
    text, escaped for the target's format in Python; the template adds only syntax."""

    reason: Reason | None
    text: str


def _generation() -> str:
    """What else shapes the compiled code: this module (the environment's options).  A
    change to it starts a new cache instead of loading code compiled the old way."""
    return hashlib.sha1(Path(__file__).read_bytes(), usedforsecurity=False).hexdigest()[:16]


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept the way Python keeps .pyc files, so a cold `hostc build`
    does not compile its templates again (13 of them: about 20 ms, a tenth of a build).

    Beside the templates in `__pycache__`, or under `sys.pycache_prefix`; written only
    where Python would write bytecode (not under PYTHONDONTWRITEBYTECODE); keyed by
    the jinja2 version and, inside, by Python's version and the template's checksum.
    A cache that cannot be read or written only means compiling again."""

    def __init__(self, templates: Path) -> None:
        if sys.pycache_prefix:
            where = Path(sys.pycache_prefix) / templates.relative_to(templates.anchor)
        else:
            where = templates / "__pycache__"
        super().__init__(str(where), f"jinja2-{jinja2.__version__}-{_generation()}-%s.cache")

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if sys.dont_write_bytecode:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass


@functools.cache
def env() -> jinja2.Environment:
    templates = Path(__file__).resolve().parent / "templates"
    e = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
        bytecode_cache=_CompiledTemplates(templates),
        auto_reload=False,  # templates ship with the package: no stat per get_template
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=finalize,
    )
    # No globals (range, dict, lipsum, …): a template prints only what its target
    # passes in, and each render no longer copies them into a fresh context.
    e.globals.clear()
    e.filters["shell"] = shell
    e.filters["comment"] = comment
    e.filters["oneline"] = oneline
    e.filters["grubarg"] = grubarg
    e.filters["sysctl_key"] = sysctl_key
    e.filters["sysctl_value"] = sysctl_value
    e.filters["word"] = word
    return e


@functools.cache
def _template(name: str) -> jinja2.Template:
    """Templates ship with the package and never change under a running hostc."""
    return env().get_template(name)


def render(template: str, **context: Any) -> str:
    return _template(template).render(**context)


def config(host: Header, template: str, **context: Hashable) -> str:
    """A host file whose one line naming the host is its header, its first line (a
    configuration file, a unit): `headed` of `shared`."""
    return headed(host, shared(template, **context))


def script(host: Header, template: str, **context: Hashable) -> str:
    """A shell script whose one line naming the host is its header: `headed` of `shared`,
    under the shebang."""
    return headed(host, shared(template, **context), shebang=True)


def headed(host: Header, body: str, *, shebang: bool = False) -> str:
    """`body` (a rendering that names no host) under the host's header line, escaped and
    checked as it was rendered (`Header.line`), and a script's shebang above it."""
    return f"#!/bin/sh\n{host.line}\n{body}" if shebang else f"{host.line}\n{body}"


@functools.lru_cache(maxsize=1024, typed=True)
def shared(template: str, **context: Hashable) -> str:
    """`render` of a template that names no host, remembered by the value of all it is
    given: a fleet's hosts of one class render it once, the others take it from here.
    Every value is hashable and compared by value (tuples, frozen Records, CpuSets),
    never by identity, so a host whose inputs differ in one value renders its own."""
    return render(template, **context)
