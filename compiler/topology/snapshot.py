"""Read and write hostc's topology snapshot (TOML), validating on read."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from hostc.diagnostics import HostcError, error, file_error, toml_syntax_error, with_file
from hostc.topology.model import Topology
from hostc.topology.validate import validate

SNAPSHOT_VERSION = 1


def _prune(value: Any) -> Any:
    """Drop None (TOML has no null) and empty containers, recursively."""
    if isinstance(value, dict):
        return {k: _prune(v) for k, v in value.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def dumps(topo: Topology) -> str:
    import tomli_w

    from hostc.convert import converter

    raw = _prune(converter().unstructure(topo))
    data = {"version": raw.pop("version"), **raw}
    header = "# hostc topology snapshot (written by hostc; see `hostc schema topology`)\n"
    return header + tomli_w.dumps(data)


def loads(text: str, file: str = "<snapshot>") -> Topology:
    """Parse and validate a snapshot; every problem is raised as one HostcError."""
    from hostc.convert import diagnostics, structure

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise HostcError([toml_syntax_error(e, file)]) from None
    if (
        not isinstance(data.get("version", SNAPSHOT_VERSION), int)
        or data.get("version", SNAPSHOT_VERSION) != SNAPSHOT_VERSION
    ):
        raise HostcError(
            with_file(
                [
                    error(
                        "version",
                        f"unsupported snapshot version {data.get('version')!r}",
                        hint=f"this hostc reads version {SNAPSHOT_VERSION}",
                    )
                ],
                file,
                text,
            )
        )
    try:
        topo = structure(data, Topology)
    except Exception as e:  # cattrs raises exception groups; all become diagnostics
        raise HostcError(with_file(diagnostics(e), file, text)) from None
    problems = validate(topo)
    if problems:
        raise HostcError(with_file(problems, file, text))
    return topo


def read(path: Path) -> Topology:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HostcError(
            [
                file_error(
                    str(path),
                    "topology snapshot not found",
                    hint="capture one with `hostc probe -o FILE` or "
                    "`hostc import hwloc lstopo.xml -o FILE`",
                )
            ]
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise HostcError([file_error(str(path), f"cannot read the snapshot: {e}")]) from None
    return loads(text, str(path))
