"""Audit a root directory, a capture archive or the live host; capture what audit reads."""

from __future__ import annotations

from pathlib import Path

from hostc.audit.findings import Finding, audit
from hostc.audit.host import HostReader
from hostc.diagnostics import HostcError, file_error
from hostc.plan.model import Plan


def audit_root(plan: Plan, root: Path = Path("/")) -> list[Finding]:
    """`root`: `/` (live: systemctl is asked), a copied tree, or a `hostc probe --capture`
    archive (never live: command output comes from the files the capture stored)."""
    if root.is_file():
        from hostc.topology.importers.archive import extracted

        with extracted(root) as tree:
            return audit(plan, HostReader(tree, live=False, shown=str(root)))
    if not root.is_dir():
        raise HostcError([file_error(str(root), "no such directory or capture archive")])
    return audit(plan, HostReader(root, live=root.resolve() == Path("/")))


def audit_state(plan: Plan, root: Path = Path("/")) -> tuple[dict[str, bytes], set[str]]:
    """The files (and listed directories) auditing `plan` on `root` reads: what a capture
    must hold for an audit of it elsewhere to see the same host."""
    host = HostReader(root, live=root.resolve() == Path("/"))
    audit(plan, host)
    return host.files, host.dirs
