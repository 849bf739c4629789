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


def names_valid(spec: HostSpec, topo: Topology) -> Iterator[Diagnostic]:
    """Names go into comments, file names and `hostc plan` lines: one plain word each.

    The loader refuses bad names already; a HostSpec built in Python gets the same rule.
    """
    from hostc.spec.text import name_problem

    named = [("host.name", spec.host.name)]
    named += [(f"workload[{i}].name", w.name) for i, w in enumerate(spec.workload)]
    for path, name in named:
        if (problem := name_problem(name)) is not None:
            yield error(path, problem)
