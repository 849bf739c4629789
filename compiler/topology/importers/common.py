"""What every importer ends with: validation raised as one error, and `--arch`.

Five importers used to copy the validate-then-raise tail; one function keeps
their messages and file attribution the same.
"""

from __future__ import annotations

import re

import attrs

from hostc.diagnostics import HostcError, file_error, with_file
from hostc.topology.model import Topology
from hostc.topology.validate import validate

# ASCII only: int() and str.isdecimal() accept Arabic-Indic and full-width digits.
_NUMBER = re.compile(r"[0-9]{1,9}")


def number(text: str) -> int | None:
    """`text` as a non-negative int if it is ASCII digits (at most 9 of them), else None."""
    return int(text) if _NUMBER.fullmatch(text) else None


def finish(topo: Topology, file: str) -> Topology:
    """`topo` if it validates; else every problem, attributed to `file`, as one HostcError."""
    problems = validate(topo)
    if problems:
        raise HostcError(with_file(problems, file))
    return topo


def with_arch(topo: Topology, arch: str | None, file: str) -> Topology:
    """Fill in `--arch` where the source does not say; a contradiction is an error."""
    if arch is None:
        return topo
    if not re.fullmatch(r"[a-z0-9_]{2,20}", arch):
        raise HostcError(
            [file_error(file, f"--arch {arch[:40]!r} is not a machine name like x86_64, aarch64")]
        )
    if topo.arch not in ("unknown", arch):
        raise HostcError(
            [
                file_error(
                    file,
                    f"the file says the architecture is {topo.arch}, but --arch says {arch}",
                    hint="drop --arch: the file knows",
                )
            ]
        )
    return attrs.evolve(topo, arch=arch)
