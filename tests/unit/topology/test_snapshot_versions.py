"""Snapshot version 2 (cpulists), version 1 still read, strict validation, and linear cost."""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs
import pytest

from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import HostcError
from hostc.topology import snapshot
from hostc.topology.importers import hwloc, lscpu, numactl
from hostc.topology.model import Link, LogicalCpu, NumaNode, Topology

from conftest import ROOT
from regenerate import COMMAND
from topogen import hwloc_xml, machine

V1_WITH_ENCODED_FACTS = """\
version = 1
arch = "x86_64"
cpus = [
    { id = 0, online = true, core = 0, package = 0, node = 0 },
    { id = 1, online = true, core = 1, package = 0, node = 0 },
    { id = 2, online = false },
    { id = 3, online = false },
]
source = "hwloc"
unknown = [
    "smt",
    "hidden-cpus:2-3",
    "disallowed-cpus:1",
    "locality:eth0 spans nodes 0,1",
]

[[nodes]]
id = 0
memory_mib = 1024
"""


def test_version_1_with_encoded_facts_is_read_typed() -> None:
    topo = snapshot.loads(V1_WITH_ENCODED_FACTS, "old.toml")
    assert topo.hidden_cpus == CpuSet([2, 3])
    assert topo.disallowed_cpus == CpuSet([1])
    assert topo.unknown == ("smt",)
    assert topo.notes == ("locality:eth0 spans nodes 0,1",)
    text = snapshot.dumps(topo)
    assert text.splitlines()[1] == "version = 2" and 'hidden_cpus = "2-3"' in text
    assert snapshot.loads(text) == topo
    # and the old form can still be written, and reads back the same
    assert snapshot.loads(snapshot.dumps(topo, version=1)) == topo


def test_examples_are_version_2_and_compact() -> None:
    for path in sorted((ROOT / "examples").glob("*/topology.toml")):
        text = path.read_text()
        assert "\nversion = 2\n" in text and "{ id = " not in text, path
        assert snapshot.dumps(snapshot.read(path)) == text, f"{path} is stale: run `{COMMAND}`"


@pytest.mark.parametrize(
    "topo",
    [
        machine(packages=2, cores_per_node=4, smt=2, offline=frozenset({3, 11})),
        machine(packages=1, nodes_per_package=2, cores_per_node=3, smt=4, cpuless_nodes=2),
        machine(packages=2, cores_per_node=2, smt=1, gpus_per_node=1, nics_per_node=1),
    ],
)
def test_round_trip_is_exact(topo: Topology) -> None:
    cpus = [
        attrs.evolve(c, kind="IntelCore" if c.id % 2 else "IntelAtom", die=0, cluster=c.id // 4)
        if c.online
        else c
        for c in topo.cpus
    ]
    names = [g.name for g in topo.gpus] + [n.name for n in topo.nics]
    links = [Link(a, b, "SYS") for a in names for b in names if a != b]
    topo = attrs.evolve(topo, cpus=cpus, links=links, notes=["locality:x unknown"])
    text = snapshot.dumps(topo)
    assert snapshot.loads(text) == topo
    assert snapshot.dumps(snapshot.loads(text)) == text


def test_smt_unknown_cpus_stay_unknown() -> None:
    topo = Topology(
        arch="x86_64",
        cpus=[
            LogicalCpu(0, core=0, node=0),
            LogicalCpu(1, node=0),
            LogicalCpu(2, core=2, node=0),
            LogicalCpu(3, core=2, node=0),
        ],
        nodes=[NumaNode(0)],
    )
    text = snapshot.dumps(topo)
    assert 'cores = "0 2-3"' in text
    assert snapshot.loads(text) == topo


def _loads_error(text: str) -> list[tuple[str, str]]:
    with pytest.raises(HostcError) as e:
        snapshot.loads(text, "s.toml")
    return [(str(d.path), d.message) for d in e.value.diagnostics]


def _v1(cpus: str, nodes: str = "[[nodes]]\nid = 0\n") -> str:
    return f'version = 1\narch = "x86_64"\ncpus = [{cpus}]\n{nodes}'


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        (_v1("{ id = 70000, node = 0 }"), "cpus[0].id", "outside 0..65535"),
        (_v1("{ id = 0, node = 0, core = 5 }"), "cpus[0].core", "no online CPU"),
        (
            _v1(
                "{ id = 0, node = 0, core = 0 }, { id = 1, node = 1, core = 0 }",
                "[[nodes]]\nid = 0\n[[nodes]]\nid = 1\n",
            ),
            "cpus[0].core",
            "spans",
        ),
        (
            _v1("{ id = 0, node = 0, core = 1 }, { id = 1, node = 0, core = 1 }"),
            "cpus[0].core",
            "lowest",
        ),
        (_v1("{ id = 0, node = 3 }"), "cpus[0].node", "not in `nodes`"),
        (
            _v1("{ id = 0, node = 0 }", "[[nodes]]\nid = 0\ndistances = [12]\n"),
            "nodes[0].distances",
            "not 10",
        ),
        (
            _v1(
                "{ id = 0, node = 0 }",
                "[[nodes]]\nid = 0\ndistances = [10, 300]\n"
                "[[nodes]]\nid = 1\ndistances = [300, 10]\n",
            ),
            "nodes[0].distances",
            "11..254",
        ),
        (
            _v1("{ id = 0, node = 0 }", "[[nodes]]\nid = 0\ndistances = [10, 20]\n"),
            "nodes[0].distances",
            "2 distances for 1 nodes",
        ),
        (
            _v1("{ id = 0, node = 0 }", '[[nodes]]\nid = 0\nhugepages = { "3M" = 1 }\n'),
            "nodes[0].hugepages",
            "unknown hugepage size",
        ),
        (
            'version = 1\nkernel = "٦.٨.0"\narch = "x86_64"\ncpus = [{ id = 0, node = 0 }]\n'
            "[[nodes]]\nid = 0\n",
            "kernel",
            "kernel release",
        ),
    ],
)
def test_strict_validation_names_the_key(text: str, path: str, words: str) -> None:
    errors = _loads_error(text)
    assert any(p == path and words in m for p, m in errors), errors


@pytest.mark.parametrize("digits", ["٣", "３", "1٣"])
def test_non_ascii_digits_are_refused_everywhere(digits: str) -> None:
    with pytest.raises(CpuListError):
        CpuSet.parse(f"0-{digits}")
    with pytest.raises(HostcError):
        lscpu.parse(f"# CPU,Core,Socket,Node\n0,0,0,0\n{digits},0,0,0\n", "l.txt")
    with pytest.raises(HostcError):
        numactl.parse(
            f"available: 1 nodes (0)\nnode 0 cpus: 0 {digits}\nnode 0 size: 10 MB\n", "n.txt"
        )


def test_cpu_cap_in_importers() -> None:
    with pytest.raises(HostcError, match="65535"):
        lscpu.parse("# CPU,Core,Socket,Node\n70000,0,0,0\n", "l.txt")
    with pytest.raises(HostcError, match="65535"):
        numactl.parse("available: 1 nodes (0)\nnode 0 cpus: 70000\nnode 0 size: 1 MB\n", "n.txt")
    xml = hwloc_xml(packages=1, numa=1, cores=1, pus=1)
    xml = xml.replace('type="PU" os_index="0"', 'type="PU" os_index="70000"')
    with pytest.raises(HostcError, match="65535"):
        hwloc.parse(xml, "h.xml")


def test_mask_conversions() -> None:
    assert CpuSet.from_mask("0x00000001,,0x00000001") == CpuSet([0, 64])
    assert CpuSet.from_mask("0x80000000,0x00000000") == CpuSet([63])
    big = CpuSet(range(0, 8192, 3))
    assert CpuSet.from_mask(big.mask()) == big
    assert CpuSet([0, 64]).mask() == "00000001,00000000,00000001"
    with pytest.raises(CpuListError):
        CpuSet.from_mask("0x1" + ",0x0" * 3000)  # past CPU 65535
    with pytest.raises(CpuListError):
        CpuSet.from_mask("0x1٣")


def _best(fn: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_dgx_snapshot_reads_fast() -> None:
    text = (ROOT / "examples/dgx-h100-inference/topology.toml").read_text()
    import tomllib

    assert _best(lambda: tomllib.loads(text), 20) < 0.002  # TOML parsing itself: about 0.5 ms
    assert _best(lambda: snapshot.loads(text), 20) < 0.01  # with structure and validation


def _per_cpu(small: Callable[[], object], big: Callable[[], object]) -> float:
    """Cost per CPU of the 8,192-CPU case over the 64-CPU one: linear means about 1."""
    return (_best(big, 3) / 8192) / (_best(small, 10) / 64)


def test_snapshot_read_and_write_are_linear() -> None:
    small_t = machine(packages=2, cores_per_node=16, smt=2)
    big_t = machine(packages=16, cores_per_node=256, smt=2)
    small, big = snapshot.dumps(small_t), snapshot.dumps(big_t)
    # quadratic work would make each of the 8,192 CPUs ~128× dearer than each of 64
    assert _per_cpu(lambda: snapshot.loads(small), lambda: snapshot.loads(big)) < 8
    assert _per_cpu(lambda: snapshot.dumps(small_t), lambda: snapshot.dumps(big_t)) < 8
    assert len(big) < 200_000  # v1 wrote ~590 KB for this machine


def test_hwloc_import_is_linear() -> None:
    """Linear in the file: an hwloc export itself grows as PUs × mask width."""
    small = hwloc_xml(packages=2, numa=1, cores=16, pus=2)
    big = hwloc_xml(packages=16, numa=2, cores=128, pus=2)
    assert len(hwloc.parse(big, "big.xml").cpus) == 8192
    per_byte = (_best(lambda: hwloc.parse(big, "b.xml"), 1) / len(big)) / (
        _best(lambda: hwloc.parse(small, "s.xml"), 10) / len(small)
    )
    assert per_byte < 8
