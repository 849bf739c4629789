"""Import `numactl --hardware` (`numactl -H`) output.

numactl is the one common tool that prints per-node memory and the SLIT
distance matrix, and the only text source that shows CPU-less nodes (GPU
memory, HBM, CXL).  It says nothing about cores, sockets or devices, so those
are recorded as unknown instead of invented.
"""

from __future__ import annotations

import re

from hostc.cpuset import MAX_CPU, CpuListError, CpuSet
from hostc.topology.importers._text import fail, text_lines
from hostc.topology.importers.common import finish
from hostc.topology.model import LogicalCpu, NumaNode, Topology

# ASCII digits only (`\d` takes Arabic-Indic ones), and few enough for int().
_N = r"[0-9]{1,9}"
_AVAILABLE = re.compile(rf"^available:\s*({_N})\s+nodes?\s*\(([^)]*)\)$")
_CPUS = re.compile(rf"^node\s+({_N})\s+cpus:(.*)$")
_SIZE = re.compile(rf"^node\s+({_N})\s+size:\s*({_N})\s*MB$")
_FREE = re.compile(rf"^node\s+({_N})\s+free:\s*({_N})\s*MB$")
_DIST_COLS = re.compile(rf"^node((?:\s+{_N})+)$")
_DIST_ROW = re.compile(rf"^({_N}):((?:\s+{_N})+)$")
_WORD = re.compile(_N)
_FENCE = re.compile(r"^`{3,}\w*$")  # a Markdown fence left over from a paste


class _NumactlReader:
    """Collects what each line says; a line nobody claims is an error, not noise."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.available: tuple[int, list[int]] | None = None
        self.cpus: dict[int, list[int]] = {}
        self.size: dict[int, int] = {}
        self.cpu_line: dict[int, int] = {}
        self.dist_cols: list[int] | None = None
        self.dist_line = 0
        self.dist_rows: dict[int, list[int]] = {}
        self.in_distances = False
        self.no_distances = False

    def line(self, no: int, line: str) -> None:
        if m := _AVAILABLE.match(line):
            self._available(no, int(m.group(1)), m.group(2))
        elif m := _CPUS.match(line):
            self._node_cpus(no, int(m.group(1)), m.group(2))
        elif m := _SIZE.match(line):
            self.size[self._known(no, int(m.group(1)))] = int(m.group(2))
        elif m := _FREE.match(line):
            self._known(no, int(m.group(1)))
        elif line == "node distances:":
            self.in_distances = True
            self.dist_line = no
        elif line == "No distance information available.":
            self.no_distances = True
        elif self.in_distances and self.dist_cols is None and (m := _DIST_COLS.match(line)):
            self.dist_cols = [int(x) for x in m.group(1).split()]
        elif self.dist_cols is not None and (m := _DIST_ROW.match(line)):
            self._dist_row(no, int(m.group(1)), [int(x) for x in m.group(2).split()])
        elif line.startswith("No NUMA available"):
            raise fail(
                self.file,
                "numactl says this host has no NUMA support",
                line=no,
                hint="save `lscpu -p` and run `hostc import lscpu FILE` instead, or "
                "`hostc probe` on the host",
            )
        elif self.available is None:
            # Before the first numactl line this may be any file: show none of it.
            raise fail(
                self.file,
                "not `numactl --hardware` output (it does not start with `available: N nodes`)",
                hint="capture it with `numactl --hardware`",
            )
        else:
            raise fail(
                self.file, f"unexpected line {line[:60]!r} in numactl --hardware output", line=no
            )

    def _available(self, no: int, count: int, ids: str) -> None:
        try:
            nodes = list(CpuSet.parse(ids))
        except CpuListError as e:
            raise fail(self.file, f"bad node list ({e})", line=no) from None
        if len(nodes) != count:
            raise fail(self.file, f"says {count} nodes but lists {len(nodes)} ({ids})", line=no)
        self.available = (no, nodes)

    def _known(self, no: int, node: int) -> int:
        if self.available is None:
            raise fail(self.file, "node lines before the `available: N nodes` line", line=no)
        if node not in self.available[1]:
            raise fail(self.file, f"node {node} is not in the `available:` list", line=no)
        return node

    def _node_cpus(self, no: int, node: int, text: str) -> None:
        self._known(no, node)
        if node in self.cpus:
            raise fail(self.file, f"node {node} has two `cpus:` lines", line=no)
        words = text.split()
        if not all(_WORD.fullmatch(w) for w in words):
            raise fail(
                self.file,
                f"node {node} cpus: {text.strip()[:60]!r} is not a list of numbers",
                line=no,
            )
        cpus = [int(w) for w in words]
        if cpus and max(cpus) > MAX_CPU:
            raise fail(self.file, f"CPU {max(cpus)} is beyond CPU {MAX_CPU}", line=no)
        self.cpus[node] = cpus
        self.cpu_line[node] = no

    def _dist_row(self, no: int, node: int, values: list[int]) -> None:
        assert self.dist_cols is not None
        if node not in self.dist_cols:
            raise fail(self.file, f"distance row for node {node}, which the header lacks", line=no)
        if len(values) != len(self.dist_cols):
            raise fail(
                self.file,
                f"distance row for node {node} has {len(values)} values for "
                f"{len(self.dist_cols)} nodes; the matrix is cut",
                line=no,
            )
        self.dist_rows[node] = values


def _distances(r: _NumactlReader, nodes: list[int], file: str, last: int) -> dict[int, list[int]]:
    """Distances reordered to the sorted node list that `Topology.nodes` uses."""
    if not r.in_distances:
        return {}
    if r.dist_cols is None:
        raise fail(
            file, "`node distances:` is not followed by the node header row", line=r.dist_line
        )
    if sorted(r.dist_cols) != nodes:
        raise fail(
            file, f"distance matrix covers nodes {r.dist_cols}, not {nodes}", line=r.dist_line + 1
        )
    missing = [n for n in r.dist_cols if n not in r.dist_rows]
    if missing:
        raise fail(
            file,
            f"distance matrix has no row for node(s) "
            f"{', '.join(map(str, missing))}; the output is cut",
            line=last,
        )
    index = {n: i for i, n in enumerate(r.dist_cols)}
    return {a: [r.dist_rows[a][index[b]] for b in nodes] for a in nodes}


def parse(text: str, file: str) -> Topology:
    """Parse `numactl --hardware` output into a Topology without core or package facts."""
    lines = text_lines(text, file, "numactl", "capture it with `numactl --hardware`")
    r = _NumactlReader(file)
    last = 1
    for no, raw in enumerate(lines, 1):
        line = raw.strip()
        if line and not _FENCE.match(line):
            r.line(no, line)
            last = no
    if r.available is None:
        raise fail(
            file, "no `available: N nodes (…)` line; is this `numactl --hardware` output?", line=1
        )
    nodes = sorted(r.available[1])
    for n in nodes:
        if n not in r.cpus:
            raise fail(file, f"node {n} has no `cpus:` line; the output is cut", line=last)
        if n not in r.size:
            raise fail(file, f"node {n} has no `size:` line; the output is cut", line=last)
    owner: dict[int, int] = {}
    for n in nodes:
        for c in r.cpus[n]:
            if c in owner:
                raise fail(
                    file, f"CPU {c} is listed on nodes {owner[c]} and {n}", line=r.cpu_line[n]
                )
            owner[c] = n
    if not owner:
        raise fail(file, "no node lists any CPU", line=r.available[0])
    dist = _distances(r, nodes, file, last)
    unknown = ["smt", "packages", "devices"]
    if not dist:
        unknown.append("distances")
    return finish(
        Topology(
            arch="unknown",
            cpus=tuple(LogicalCpu(id=c, node=owner[c]) for c in sorted(owner)),
            # numactl's "MB" is numa_node_size64() >> 20, i.e. MiB already.
            nodes=tuple(
                NumaNode(id=n, memory_mib=r.size[n], distances=tuple(dist.get(n, ())))
                for n in nodes
            ),
            source="numactl",
            unknown=tuple(unknown),
        ),
        file,
    )
