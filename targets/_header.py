"""The header line, the first comment of every host file: the one line that names the host.

Apart from `_render` so that a target or a re-heading (`_anonymous`) that needs only
this line loads no template engine (a `--target cmdline` build imports no jinja2).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import attrs

from hostc.record import Record
from hostc.targets._escape import comment, finalize

if TYPE_CHECKING:
    from hostc.plan.model import Plan


@attrs.frozen(repr=False, eq=False)
class Header(Record):
    """What the first comment of every host file names: the host and its role (None: a
    format whose header never named it, the kubelet's YAML)."""

    name: str
    role: str | None

    @property
    def line(self) -> str:
        """The header line, without its newline: a template prints it as
        `{{ host.line }}`, or `headed` puts it above a rendering no host's name is in
        (`shared`), so a build makes the header once per host instead of once per file."""
        return _header_line(self)


@functools.lru_cache(maxsize=256)
def _header_line(host: Header) -> str:
    """Keyed by the header's value (a host's name and role), never by identity.  Every
    format with a header comments with `#` and needs one line there, so one escaping
    serves all (`comment`, then `finalize` as for a template's value); made here, not
    by a template, since a fleet makes one per host (a jinja2 render costs ten times)."""
    role = "" if host.role is None else f" (role {host.role})"
    return str(
        finalize(comment(f"Managed by hostc for {host.name}{role}; regenerate, do not edit."))
    )


def header(plan: Plan, *, role: bool = True) -> Header:
    return Header(plan.host.name, plan.host.role if role else None)
