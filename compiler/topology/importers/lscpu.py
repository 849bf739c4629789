"""Import `lscpu -p` (CSV) and `lscpu -e` (aligned table) output.

lscpu is the topology tool every Linux host has, and the one people paste into
tickets, so hostc must read what they paste.  It tells CPUs, cores, sockets and
nodes but nothing about memory, distances or devices: those go to `unknown`
rather than being guessed, so `check` can say what it could not verify.
"""

from __future__ import annotations

import re

import attrs

from hostc.cpuset import MAX_CPU
from hostc.knowledge.vendor import cpu_vendor, vendor_of_model
from hostc.record import Record
from hostc.topology.importers._text import fail, text_lines
from hostc.topology.importers.common import finish, number
from hostc.topology.model import LogicalCpu, NumaNode, Topology

# lscpu translates ONLINE (`lscpu -e` in a Chinese locale prints 是); accept the common ones.
_YES = frozenset({"yes", "y", "是", "ja", "oui", "sí", "si", "sim", "да"})
_NO = frozenset({"no", "n", "否", "nein", "non", "não", "nao", "нет"})
# Columns whose values hostc uses; every other column (caches, MHz, …) is skipped.
_USED = ("cpu", "core", "socket", "node", "online")
_TOKEN = re.compile(r"\S+")
# `lscpu` (no option) prints `Key: value` lines; pasted above a table they give the
# vendor, model and architecture that `lscpu -p` and `-e` lack.
_SUMMARY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ()/_-]*):(?:\s+(.*?))?\s*$")
_SUMMARY_KEYS = {"vendor id": "vendor", "model name": "model", "architecture": "arch"}
_ARCH = re.compile(r"[a-z0-9_]{2,20}")


@attrs.frozen(repr=False, eq=False)
class _Row(Record):
    line: int
    cells: dict[str, str]


@attrs.frozen(repr=False, eq=False)
class _Table(Record):
    header_line: int
    columns: list[str]
    rows: list[_Row]


def _parse_p(lines: list[str], file: str) -> _Table:
    """`lscpu -p`: the last `#` line before the data names the columns."""
    header: tuple[int, list[str]] | None = None
    rows: list[_Row] = []
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if not rows:
                header = (no, [c.strip().lower() for c in line[1:].split(",")])
            continue
        if header is None:
            raise fail(file, "data before the `# CPU,Core,…` header line", line=no)
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(header[1]):
            raise fail(
                file,
                f"row has {len(fields)} fields but the header (line {header[0]}) names "
                f"{len(header[1])} columns; the table is cut or edited",
                line=no,
            )
        rows.append(_Row(no, {c: v for c, v in zip(header[1], fields, strict=True) if c}))
    if header is None:
        raise fail(file, "no `# CPU,Core,Socket,Node,…` header line", line=1)
    return _Table(header[0], header[1], rows)


def _assign(tokens: list[re.Match[str]], titles: list[re.Match[str]]) -> list[int]:
    """Column of each token, by where it sits under the header.

    libsmartcols pads every cell to its column's width and aligns the title the
    same way as the cells, so a well-formed cell always overlaps its title;
    a cell wider than the header (a long model name) falls back to the nearest one.
    """
    out = []
    for t in tokens:
        best = max(
            range(len(titles)),
            key=lambda i: (
                min(t.end(), titles[i].end()) - max(t.start(), titles[i].start()),
                -min(abs(t.start() - titles[i].end()), abs(titles[i].start() - t.end())),
            ),
        )
        out.append(best)
    return out


def _parse_e(lines: list[str], file: str) -> _Table:
    """`lscpu -e`: whitespace-aligned; offline CPUs show `-` in unknown cells."""
    start = next(i for i, line in enumerate(lines) if line.strip())
    titles = list(_TOKEN.finditer(lines[start].rstrip()))
    columns = [t.group().lower() for t in titles]
    rows: list[_Row] = []
    for no, raw in enumerate(lines[start + 1 :], start + 2):
        line = raw.rstrip()
        if not line.strip():
            continue
        tokens = list(_TOKEN.finditer(line))
        # With the exact count, order beats alignment (hand-edited pastes drift).
        exact = len(tokens) == len(titles)
        cols = list(range(len(titles))) if exact else _assign(tokens, titles)
        cells: dict[str, str] = {}
        for tok, col in zip(tokens, cols, strict=True):
            name = columns[col]
            cells[name] = f"{cells[name]} {tok.group()}" if name in cells else tok.group()
        for name in _USED:
            if name in columns and name not in cells:
                raise fail(
                    file,
                    f"row has no {name.upper()} value; the table is cut or misaligned",
                    line=no,
                )
        rows.append(_Row(no, cells))
    return _Table(start + 1, columns, rows)


def _int(row: _Row, column: str, file: str) -> int | None:
    value = row.cells.get(column, "")
    if value in ("", "-"):
        return None
    n = number(value)
    if n is None:
        raise fail(file, f"{column} value {value[:20]!r} is not a number", line=row.line)
    if column == "cpu" and n > MAX_CPU:
        raise fail(file, f"CPU {n} is beyond CPU {MAX_CPU}", line=row.line)
    return n


def _online(row: _Row, file: str) -> bool:
    value = row.cells.get("online")
    if value is None:
        return True  # `lscpu -p` without an Online column lists online CPUs only
    if value.lower() in _YES:
        return True
    if value.lower() in _NO:
        return False
    raise fail(file, f"ONLINE value {value!r} is neither yes nor no", line=row.line)


def _summary(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """The `lscpu` summary facts before the table, and the lines with the summary blanked."""
    facts: dict[str, str] = {}
    out = list(lines)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        m = _SUMMARY.match(line)
        if m is None or line.lstrip().startswith("#"):
            break
        key = _SUMMARY_KEYS.get(m.group(1).strip().lower())
        if key is not None and m.group(2) and key not in facts:
            facts[key] = m.group(2)
        out[i] = ""
    return facts, out


#: One CPU row as read: (cpu, core, socket, node, online, line number).
_Parsed = tuple[int, int | None, int | None, int | None, bool, int]


def _read_rows(table: _Table, file: str) -> list[_Parsed]:
    """Each row's values, checked in file order so the first broken line is the one named."""
    if "cpu" not in table.columns:
        raise fail(
            file,
            f"the header names no CPU column (columns: {', '.join(c for c in table.columns if c)})",
            line=table.header_line,
        )
    if not table.rows:
        raise fail(file, "the header is not followed by any CPU row", line=table.header_line)
    seen: dict[int, int] = {}
    parsed: list[_Parsed] = []
    for row in table.rows:
        cpu = _int(row, "cpu", file)
        if cpu is None:
            raise fail(file, "row has no CPU number", line=row.line)
        if cpu in seen:
            raise fail(
                file, f"CPU {cpu} is listed twice (first on line {seen[cpu]})", line=row.line
            )
        seen[cpu] = row.line
        online = _online(row, file)
        parsed.append(
            (
                cpu,
                _int(row, "core", file),
                _int(row, "socket", file),
                _int(row, "node", file),
                online,
                row.line,
            )
        )
    return parsed


def _logical_cpus(parsed: list[_Parsed], has_numa: bool) -> list[LogicalCpu]:
    """The CPUs in id order, each core named by its lowest online thread."""
    # lscpu's core ids are unique per machine today, but older versions and
    # other architectures restart them per socket, so (socket, core) is the key.
    first: dict[tuple[int | None, int], int] = {}
    for cpu, core, socket, _, online, _ in parsed:
        if online and core is not None:
            key = (socket, core)
            first[key] = min(first.get(key, cpu), cpu)
    cpus = []
    for cpu, core, socket, node, online, _ in sorted(parsed):
        cpus.append(
            LogicalCpu(
                id=cpu,
                online=online,
                core=first[(socket, core)] if online and core is not None else None,
                package=socket,
                node=(node if has_numa else 0),
            )
        )
    return cpus


def _build(table: _Table, file: str) -> Topology:
    """lscpu knows CPUs, cores, sockets and nodes; all else goes to `unknown`."""
    parsed = _read_rows(table, file)
    has_numa = any(p[3] is not None for p in parsed)
    if has_numa:
        for cpu, _, _, node, online, line in parsed:
            if online and node is None:
                raise fail(file, f"online CPU {cpu} has no NUMA node while others do", line=line)
    cpus = _logical_cpus(parsed, has_numa)
    unknown = ["memory", "distances", "devices"]
    if not has_numa:
        unknown.append("numa")
    if all(c.core is None for c in cpus):
        unknown.append("smt")
    if all(c.package is None for c in cpus):
        unknown.append("packages")
    nodes = sorted({c.node for c in cpus if c.node is not None})
    return Topology(
        arch="unknown",
        cpus=tuple(cpus),
        nodes=tuple(NumaNode(id=n) for n in nodes),
        source="lscpu",
        unknown=tuple(unknown),
    )


def parse(text: str, file: str) -> Topology:
    """Parse `lscpu -p` or `lscpu -e` output (told apart by the `#` header of -p)."""
    lines = text_lines(text, file, "lscpu", "capture it with `lscpu -p` or `lscpu -e`")
    facts, lines = _summary(lines)
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("#"):
        table = _parse_p(lines, file)
    elif "cpu" in (t.lower() for t in first.split()):
        table = _parse_e(lines, file)
    else:
        raise fail(
            file,
            "neither `lscpu -p` output (a `# CPU,Core,…` header) nor `lscpu -e` output "
            "(a `CPU NODE SOCKET CORE …` header)",
        )
    topo = _build(table, file)
    arch = facts.get("arch", "")
    topo = attrs.evolve(
        topo,
        arch=arch if _ARCH.fullmatch(arch) else topo.arch,
        cpu_vendor=cpu_vendor(facts.get("vendor")) or vendor_of_model(facts.get("model")),
        cpu_model=facts.get("model"),
    )
    return finish(topo, file)
