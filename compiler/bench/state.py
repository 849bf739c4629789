"""What was in effect on the host when a benchmark ran: the applied build, the kernel
command line, and the live values of the Plan's runtime settings.

Everything is read through the audit's reader (`hostc.audit.host.HostReader`, which
never runs a command here) and, for the settings, through the audit's own table and
observers: a value shows here exactly as `hostc audit` shows it.

The build is the one hostc-apply made current, `/var/lib/hostc/manifest`
(`hostc.targets.lifecycle`): named by the sha256 of its bytes and the host its header
names; a `manifest.new` beside it is a build delivered but not yet applied.  "none":
no manifest (no hostc build applied here, or not readable by this user).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from hostc.audit.host import HostReader
from hostc.audit.observe import TABLE, Expect
from hostc.audit.observers import OBSERVERS
from hostc.diagnostics import HostcError, file_error
from hostc.plan.model import Plan
from hostc.record import Record

#: the audit table's groups a record keeps: what a running host can change live
RECORDED = ("kernel-argument settings", "sysctls", "sysfs settings", "kernel cpumasks")
_HEAD = "# hostc manifest for "


@attrs.frozen(repr=False, eq=False)
class SeenSetting(Record):
    """One runtime setting of the Plan as the host showed it (None: not readable)."""

    setting: str
    expected: str
    found: str | None


@attrs.frozen(repr=False, eq=False)
class InEffect(Record):
    build: dict[str, str] | None
    cmdline: str | None
    settings: tuple[SeenSetting, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "build": self.build if self.build is not None else "none",
            "cmdline": self.cmdline,
            "settings": [
                {"setting": s.setting, "expected": s.expected, "found": s.found}
                for s in self.settings
            ],
        }


def runtime_expectations(plan: Plan) -> list[Expect]:
    """The audit's expectations of the groups a record keeps, in the table's order."""
    return [e for name, rows in TABLE if name in RECORDED for e in rows(plan)]


def observe(host: HostReader, e: Expect) -> str | None:
    """The value the audit's observer for `e` finds (None: nothing to read)."""
    return OBSERVERS[e.kind](host, e).found


def build_identity(host: HostReader) -> dict[str, str] | None:
    # imported here: the lifecycle target loads jinja2, which no start-up may pay for
    from hostc.targets.lifecycle import MANIFEST, NEW_MANIFEST

    data = host.raw(MANIFEST)
    pending = host.raw(NEW_MANIFEST)
    if data is None and pending is None:
        return None
    out: dict[str, str] = {}
    if data is not None:
        first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
        name = first[len(_HEAD) :].split(":", 1)[0] if first.startswith(_HEAD) else ""
        out.update(manifest=MANIFEST, sha256=hashlib.sha256(data).hexdigest(), host=name)
    if pending is not None:
        out["pending"] = hashlib.sha256(pending).hexdigest()
    return out


def in_effect(root: Path, plan: Plan | None) -> InEffect:
    """What is in effect under `root` now (a fresh read: nothing is cached across runs)."""
    host = HostReader(root, live=False)
    cmdline = host.text("/proc/cmdline")
    settings = tuple(
        SeenSetting(e.setting, e.expected, observe(host, e))
        for e in (runtime_expectations(plan) if plan is not None else [])
    )
    return InEffect(build_identity(host), cmdline.strip() if cmdline else None, settings)


def host_tree(root: Path) -> Path:
    """`root`, refused unless it is a directory (`/`, or a host tree in the tests)."""
    if not root.is_dir():
        raise HostcError([file_error(str(root), "no such directory (the host tree read)")])
    return root


@contextmanager
def host_at(path: Path) -> Iterator[HostReader]:
    """A reader of a host tree or of a `hostc probe --capture` archive (never live)."""
    if not path.exists():
        raise HostcError([file_error(str(path), "no such directory or capture archive")])
    if path.is_file():
        from hostc.topology.importers.archive import extracted

        with extracted(path) as tree:
            yield HostReader(tree, live=False, shown=str(path))
    else:
        yield HostReader(path, live=False)
