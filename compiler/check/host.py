"""Host rules: the facts the spec states about the host are well formed."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, error
from hostc.lower.assemble import split_os
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology


def os_well_formed(spec: HostSpec, topo: Topology) -> Iterator[Diagnostic]:
    if spec.host.os is None:
        return
    try:
        split_os(spec.host.os)
    except ValueError as e:
        yield error("host.os", str(e), hint='e.g. "ubuntu-22.04", "rhel-9.4", "fedora-coreos-40"')
