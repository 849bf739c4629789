"""Read and write hostc's topology snapshot (TOML), validating on read.

`dumps` writes version 2 (`compact`: CPU facts as cpulists); `loads` reads
versions 1 and 2.  A file that is not a snapshot (a path typo, `/etc/shadow`)
is refused without echoing any of its content: no line, no value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import tomli

from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import Diagnostic, HostcError, at, error, file_error, with_file
from hostc.inputs import SNAPSHOT_LIMIT, loads_toml, read_text_bounded
from hostc.topology import compact, compact_read
from hostc.topology.model import Topology, known_cluster
from hostc.topology.validate import validate

SNAPSHOT_VERSION = compact.VERSION
READ_VERSIONS = (1, 2)
#: A snapshot nests four levels deep; anything past this is not one.
MAX_NESTING = 32
HEADER = "# hostc topology snapshot (written by hostc; see `hostc schema topology`)\n"
_HINT = "capture one with `hostc probe -o FILE` or `hostc import hwloc lstopo.xml -o FILE`"
_STRINGS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
)
_BRACKETS = re.compile(r"[\[\]{}]")
_LOOKS_HOSTC = re.compile(r"\A(?:#[^\n]*\n|\s)*version\s*=")


def _prune(value: Any) -> Any:
    """Drop None (TOML has no null) and empty values, recursively; the FrozenMaps and
    tuples of a Topology (which `attrs.asdict` keeps) become the dicts and lists tomli-w
    writes."""
    if isinstance(value, Mapping):
        return {
            k: _prune(v)
            for k, v in value.items()
            if v is not None and v != [] and v != () and v != {} and v != ""
        }
    if isinstance(value, list | tuple):
        return [_prune(v) for v in value]
    return value


def dumps(topo: Topology, version: int = SNAPSHOT_VERSION) -> str:
    """The snapshot text; `version=1` writes the old one-table-per-CPU form (still read)."""
    import tomli_w

    if version == 1:
        return HEADER + tomli_w.dumps(_v1(topo))
    f = compact.to_file(topo)
    raw = _prune(attrs.asdict(f, recurse=True))
    raw["version"] = f.version  # first, and kept even where pruning would drop it
    lists = {k: raw.pop(k) for k in ("nodes", "gpus", "nics", "links") if k in raw}
    data = {"version": raw.pop("version"), **raw, **lists}
    return HEADER + tomli_w.dumps(data)


def _v1(topo: Topology) -> dict[str, Any]:
    """Version 1: every CPU a table; typed facts encoded in `unknown` as v1 readers expect."""
    unknown = list(topo.unknown)
    if topo.hidden_cpus:
        unknown.append(f"hidden-cpus:{topo.hidden_cpus}")
    if topo.disallowed_cpus:
        unknown.append(f"disallowed-cpus:{topo.disallowed_cpus}")
    v1 = attrs.evolve(
        topo,
        unknown=(*unknown, *topo.notes),
        notes=(),
        hidden_cpus=CpuSet(),
        disallowed_cpus=CpuSet(),
    )
    raw = attrs.asdict(v1, recurse=True, filter=lambda a, v: not isinstance(v, CpuSet))
    raw = _prune(raw)
    raw.pop("version", None)
    return {"version": 1, **raw}


def _nesting(text: str) -> int:
    """The deepest bracket nesting outside strings and comments (stops past the limit)."""
    depth = deepest = 0
    for m in _BRACKETS.finditer(_STRINGS.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_NESTING:
                    break
        else:
            depth -= 1
    return deepest


def _not_snapshot(file: str, why: str) -> HostcError:
    return HostcError([file_error(file, f"not a hostc topology snapshot: {why}", hint=_HINT)])


def _is_spec(data: dict[str, Any]) -> bool:
    """A node.toml given where a snapshot belongs: it has a key only a spec has (`host`,
    `preset`, `workload` …) and none only a snapshot has (first-day-3 F10)."""
    from hostc.spec.model import HostSpec
    from hostc.spec.parse import LAYER_KEYS

    snapshot = {f.name for c in (Topology, compact.SnapshotFile) for f in attrs.fields(c)}
    spec = {f.name for f in attrs.fields(HostSpec)} | set(LAYER_KEYS)
    keys = set(data)
    return bool(keys & (spec - snapshot)) and not keys & (snapshot - spec)


def _parse_toml(text: str, file: str) -> dict[str, Any]:
    if _nesting(text) > MAX_NESTING:
        raise _not_snapshot(file, f"arrays or tables nest deeper than {MAX_NESTING} levels")
    try:
        return loads_toml(text)
    except RecursionError:
        raise _not_snapshot(file, "it nests too deeply") from None
    except tomli.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        if _LOOKS_HOSTC.match(text):  # our own file: the line may be shown
            line = int(m.group(1)) if m else None
            raise HostcError(
                [file_error(file, f"TOML syntax error: {reason}", line=line)]
            ) from None
        where = f" at line {m.group(1)}, column {m.group(2)}" if m else ""
        # tomllib's reasons name no content, and the line itself is not shown.
        raise _not_snapshot(file, f"not TOML ({reason}{where})") from None


def _legacy_unknown(topo: Topology) -> tuple[Topology, list[Diagnostic]]:
    """Version 1 encoded some facts as strings in `unknown`: make them typed fields."""
    plain: list[str] = []
    notes = list(topo.notes)
    hidden, disallowed = topo.hidden_cpus, topo.disallowed_cpus
    problems: list[Diagnostic] = []
    for i, u in enumerate(topo.unknown):
        kind, sep, rest = u.partition(":")
        if kind in ("hidden-cpus", "disallowed-cpus"):
            try:
                cpus = CpuSet.parse(rest)
            except CpuListError as e:
                problems.append(error(at("unknown", i), f"{kind}: not a cpulist: {e}"))
                continue
            if kind == "hidden-cpus":
                hidden |= cpus
            else:
                disallowed |= cpus
        elif sep:
            notes.append(u)
        else:
            plain.append(u)
    topo = attrs.evolve(
        topo,
        unknown=tuple(plain),
        notes=tuple(notes),
        hidden_cpus=hidden,
        disallowed_cpus=disallowed,
        version=SNAPSHOT_VERSION,
    )
    return topo, problems


def _no_cluster(topo: Topology) -> Topology:
    """Version 1 wrote a CPU's cluster as read: the kernel's "no cluster" id becomes none."""
    if all(known_cluster(c.cluster) == c.cluster for c in topo.cpus):
        return topo
    cpus = tuple(attrs.evolve(c, cluster=known_cluster(c.cluster)) for c in topo.cpus)
    return attrs.evolve(topo, cpus=cpus)


def loads(text: str, file: str = "<snapshot>") -> Topology:
    """Parse and validate a snapshot; every problem is raised as one HostcError."""
    from hostc.spec.structure import diagnostics, structure

    data = _parse_toml(text, file)
    if _is_spec(data):
        raise HostcError(
            [
                file_error(
                    file,
                    "this is a node.toml spec, not a topology snapshot",
                    hint="`hostc probe` writes one (the spec names it in host.topology)",
                )
            ]
        )
    version = data.get("version")
    if version is None:
        if not {"arch", "cpus", "nodes"} <= data.keys():
            raise _not_snapshot(file, "it has no `version` key")
        version = 1  # the first snapshots were written without one
    if isinstance(version, bool) or version not in READ_VERSIONS:
        raise HostcError(
            with_file(
                [
                    error(
                        at("version"),
                        f"unsupported snapshot version {version!r}",
                        hint=f"this hostc reads versions {', '.join(map(str, READ_VERSIONS))}",
                    )
                ],
                file,
                text,
            )
        )
    problems: list[Diagnostic]
    try:
        if version == 1:
            v1 = dict(data)
            v1["version"] = 1
            topo, problems = _legacy_unknown(structure(v1, Topology))
            topo = _no_cluster(topo)
            f = None
        else:
            f = structure(data, compact.SnapshotFile)
            topo, problems = compact_read.from_file(f)
    except HostcError:
        raise
    except Exception as e:  # cattrs raises exception groups; all become diagnostics
        raise HostcError(with_file(diagnostics(e), file, text)) from None
    if not problems:
        found = validate(topo)
        if f is not None:
            found = [attrs.evolve(d, path=compact_read.file_path(topo, f, d.path)) for d in found]
        problems = found
    if problems:
        raise HostcError(with_file(problems, file, text))
    return topo


def read(path: Path) -> Topology:
    try:
        text = read_text_bounded(path, limit=SNAPSHOT_LIMIT, what="topology snapshot")
    except HostcError as e:
        if any(d.message.endswith("not found") for d in e.diagnostics):
            missing = file_error(str(path), "topology snapshot not found", hint=_HINT)
            raise HostcError([missing]) from None
        raise
    return loads(text, str(path))
