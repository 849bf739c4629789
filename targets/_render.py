"""The one jinja2 environment: StrictUndefined, keep_trailing_newline, quoting filters."""

from __future__ import annotations

import functools
import shlex
from typing import Any

import jinja2


def _comment(text: str, prefix: str = "# ") -> str:
    """A reason as a comment: one line, no newlines that would end the comment."""
    return prefix + " ".join(str(text).split())


@functools.cache
def env() -> jinja2.Environment:
    e = jinja2.Environment(
        loader=jinja2.PackageLoader("hostc.targets", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    e.filters["shell"] = shlex.quote
    e.filters["comment"] = _comment
    return e


def render(template: str, **context: Any) -> str:
    return env().get_template(template).render(**context)
