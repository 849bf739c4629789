"""Merge two snapshots of one machine (`hostc import KIND FILE --base SNAPSHOT`).

Each text tool sees part of a machine: lscpu the cores and sockets, numactl the
memory and distances, nvidia-smi the GPUs and NICs.  Imported one onto the
other they make one complete snapshot.  The rules:

* a fact one side lacks (None, an empty list, or named in its `unknown`) is
  taken from the other side;
* a fact both sides know must agree; a disagreement is an error naming both
  files, since the two captures are then not of the same machine (or not of the
  same boot);
* CPUs and NUMA nodes are the union of both sides; a fact stays in `unknown`
  only when neither side knows it.
"""

from __future__ import annotations

from typing import TypeVar

import attrs

from hostc.diagnostics import Diagnostic, HostcError, file_error
from hostc.record import FrozenMap
from hostc.topology.model import LogicalCpu, NumaNode, Topology

T = TypeVar("T")

# `unknown` words and the facts they make placeholders of.
_CPU_FACTS = {"node": "numa", "core": "smt", "package": "packages"}


class _Merge:
    def __init__(self, base: Topology, new: Topology, base_file: str, new_file: str) -> None:
        self.base, self.new = base, new
        self.base_file, self.new_file = base_file, new_file
        self.problems: list[Diagnostic] = []

    def conflict(self, what: str, a: object, b: object) -> None:
        if len(self.problems) >= 20:
            return  # the captures are of different machines; twenty examples say so
        self.problems.append(
            file_error(
                self.new_file,
                f"{what}: {self.base_file} says {a}, {self.new_file} says {b}",
                hint="both files must be captured on the same machine",
            )
        )

    def pick(self, what: str, a: T | None, b: T | None, *, a_unknown: bool = False,
             b_unknown: bool = False) -> T | None:  # fmt: skip
        """One fact: the known side wins; two known values must agree."""
        if a is None or a_unknown:
            return b if b is not None and not b_unknown else a
        if b is None or b_unknown or a == b:
            return a
        self.conflict(what, a, b)
        return a

    def fact(self, cid: int, name: str, a: T | None, b: T | None) -> T | None:
        """A CPU fact; one a side lists in `unknown` (lscpu without NUMA: node 0) yields."""
        word = _CPU_FACTS.get(name)
        return self.pick(
            f"CPU {cid} {name}",
            a,
            b,
            a_unknown=word is not None and word in self.base.unknown,
            b_unknown=word is not None and word in self.new.unknown,
        )

    def cpus(self) -> tuple[LogicalCpu, ...]:
        a_by = {c.id: c for c in self.base.cpus}
        b_by = {c.id: c for c in self.new.cpus}
        out: list[LogicalCpu] = []
        for cid in sorted(a_by.keys() | b_by.keys()):
            a, b = a_by.get(cid), b_by.get(cid)
            if a is None or b is None:
                only = a if a is not None else b
                assert only is not None
                out.append(only)
                continue
            online = self.pick(f"CPU {cid} online", a.online, b.online)

            out.append(
                LogicalCpu(
                    id=cid,
                    online=bool(online),
                    core=self.fact(cid, "core", a.core, b.core),
                    package=self.fact(cid, "package", a.package, b.package),
                    node=self.fact(cid, "node", a.node, b.node),
                    die=self.fact(cid, "die", a.die, b.die),
                    cluster=self.fact(cid, "cluster", a.cluster, b.cluster),
                    kind=self.fact(cid, "kind", a.kind, b.kind),
                )
            )
        return tuple(out)

    def nodes(self) -> tuple[NumaNode, ...]:
        a_numa = "numa" not in self.base.unknown
        b_numa = "numa" not in self.new.unknown
        a_by = {n.id: n for n in self.base.nodes} if a_numa or not b_numa else {}
        b_by = {n.id: n for n in self.new.nodes} if b_numa or not a_numa else {}
        ids = sorted(a_by.keys() | b_by.keys())
        a_ids, b_ids = sorted(a_by), sorted(b_by)
        out: list[NumaNode] = []
        for nid in ids:
            a, b = a_by.get(nid), b_by.get(nid)
            if a is None or b is None:
                n = a or b
                assert n is not None
                same = (a_ids if a is not None else b_ids) == ids
                out.append(n if same else attrs.evolve(n, distances=()))
                continue
            mem = self.pick(
                f"NUMA node {nid} memory_mib",
                a.memory_mib,
                b.memory_mib,
                a_unknown="memory" in self.base.unknown,
                b_unknown="memory" in self.new.unknown,
            )
            # distances are in the order of a node list: usable only where it is the union's
            da = a.distances if a_ids == ids else ()
            db = b.distances if b_ids == ids else ()
            dist = self.pick(f"NUMA node {nid} distances", da or None, db or None) or ()
            pages = self.pick(
                f"NUMA node {nid} hugepages", a.hugepages or None, b.hugepages or None
            )
            out.append(NumaNode(nid, mem, dist, pages or FrozenMap()))
        return tuple(out)

    def lists(self, what: str, a: tuple[T, ...], b: tuple[T, ...]) -> tuple[T, ...]:
        if not a or not b or a == b:
            return a or b
        self.conflict(what, f"{len(a)} entries", f"{len(b)} different ones")
        return a


def merge(base: Topology, new: Topology, *, base_file: str, new_file: str) -> Topology:
    """`new` imported onto `base`; raises one HostcError listing every disagreement."""
    m = _Merge(base, new, base_file, new_file)
    arch = m.pick(
        "architecture",
        base.arch,
        new.arch,
        a_unknown=base.arch == "unknown",
        b_unknown=new.arch == "unknown",
    )
    unknown = tuple(u for u in base.unknown if u in new.unknown)
    devices_a = "devices" not in base.unknown
    topo = Topology(
        arch=arch or "unknown",
        cpus=m.cpus(),
        nodes=m.nodes(),
        source="+".join(s for s in (base.source or "snapshot", new.source or "import") if s),
        kernel=m.pick("kernel", base.kernel, new.kernel),
        cmdline=m.pick("cmdline", base.cmdline, new.cmdline),
        hugepage_sizes=m.lists("hugepage sizes", base.hugepage_sizes, new.hugepage_sizes),
        gpus=m.lists("GPUs", base.gpus, new.gpus) if devices_a else new.gpus or base.gpus,
        nics=m.lists("NICs", base.nics, new.nics) if devices_a else new.nics or base.nics,
        links=m.lists("links", base.links, new.links),
        unknown=unknown,
        cpu_vendor=m.pick("cpu vendor", base.cpu_vendor, new.cpu_vendor),
        cpu_model=m.pick("cpu model", base.cpu_model, new.cpu_model),
        os=m.pick("os", base.os, new.os),
        kernel_config=FrozenMap({**base.kernel_config, **new.kernel_config}),
        hidden_cpus=base.hidden_cpus | new.hidden_cpus,
        disallowed_cpus=base.disallowed_cpus | new.disallowed_cpus,
        notes=base.notes + tuple(n for n in new.notes if n not in base.notes),
        hypervisor=m.pick("hypervisor flag", base.hypervisor, new.hypervisor),
        cpufreq_driver=m.pick("cpufreq driver", base.cpufreq_driver, new.cpufreq_driver),
        cpuidle_driver=m.pick("cpuidle driver", base.cpuidle_driver, new.cpuidle_driver),
    )
    if m.problems:
        raise HostcError(m.problems)
    return topo
