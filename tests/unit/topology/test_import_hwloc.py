"""hwloc XML import: 27 real files against the counts in their README, two exact
hand-written topologies (v2 and v1), and inputs that must fail cleanly."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc.cpuset import CpuSet
from hostc.diagnostics import HostcError
from hostc.topology import snapshot
from hostc.topology.importers.hwloc import parse
from hostc.topology.model import Gpu, LogicalCpu, Nic, NumaNode, Topology
from hostc.topology.validate import validate

from conftest import shared


class Row(NamedTuple):
    """One row of shared/topologies/README.md, copied by hand."""

    packages: int
    numa_cpu: int
    numa_cpuless: int
    cores: int
    pus: int  # online PUs (present in the XML)
    offline: int  # in complete_cpuset but not in the topology
    smt: set[int]
    gpus: int
    nics: int


EXPECTED: dict[str, Row] = {
    "AMD-19h-Zen4-2xEpyc-9654.xml": Row(2, 2, 0, 192, 384, 0, {2}, 0, 0),
    "AMD-17h-Zen-2xEpyc-7451.xml": Row(2, 8, 0, 48, 96, 0, {2}, 0, 0),
    "Intel-RaptorLake-Corei7-1370P.xml": Row(1, 1, 0, 14, 20, 0, {1, 2}, 0, 0),
    "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml": Row(1, 1, 0, 12, 24, 0, {2}, 0, 0),
    "16em64t-4s2c2t-offlines.xml": Row(4, 1, 0, 6, 7, 9, {1, 2}, 0, 0),
    "40intel64-2g2n4c+pci.xml": Row(4, 4, 0, 40, 40, 0, {1}, 0, 5),
    "28intel64-2p2g7c-CoDgroups.v1.xml": Row(2, 4, 0, 28, 28, 0, {1}, 0, 2),
    "nvidiaDGX2.xml": Row(2, 2, 0, 4, 4, 0, {1}, 16, 0),
    "power8gpudistances.xml": Row(2, 2, 0, 8, 16, 0, {2}, 4, 0),
    "32em64t-2n8c2t-pci-normalio.xml": Row(2, 2, 0, 16, 32, 0, {2}, 4, 3),
    "memorysidecaches.xml": Row(2, 4, 0, 40, 80, 0, {2}, 0, 0),
    "nvidia-dgx-gb10.xml": Row(1, 1, 0, 20, 20, 0, {1}, 0, 0),
    "64intel64-3g2n+2n-irregulargroups+pci.xml": Row(8, 8, 0, 64, 64, 0, {1}, 2, 2),
    "192em64t-12gr2n8c2t.xml": Row(24, 24, 0, 192, 384, 0, {2}, 0, 7),
    "16amd64-4distances.v1.xml": Row(8, 8, 0, 16, 16, 0, {1}, 0, 0),
    "16intel64-manyVFs.xml": Row(2, 2, 0, 16, 16, 0, {1}, 0, 18),
    "coral-lassen.xml": Row(2, 2, 0, 40, 160, 16, {4}, 4, 6),
    "coral-lassen-hwloc1.xml": Row(2, 2, 4, 40, 160, 16, {4}, 4, 6),
    "coral-ea-hwloc1.xml": Row(2, 2, 0, 20, 160, 0, {8}, 4, 4),
    "eas-tioga.xml": Row(1, 4, 0, 64, 128, 0, {2}, 8, 5),
    "g4dnmetal.xml": Row(2, 2, 0, 48, 96, 0, {2}, 8, 2),
    "arm64-ulna-hwloc1.xml": Row(2, 2, 0, 64, 256, 0, {4}, 2, 4),
    "knl-snc4-flat-hwloc1.xml": Row(1, 4, 4, 68, 272, 0, {4}, 0, 4),
    "cts1-quartz-smt1.xml": Row(2, 2, 0, 36, 36, 36, {1}, 0, 5),
    "topo.jrc0323.xml": Row(2, 8, 0, 128, 256, 0, {2}, 4, 6),
    "topo.dp-intelmax01-flat.xml": Row(2, 8, 8, 64, 128, 0, {2}, 0, 3),
    "chimera.xml": Row(1, 4, 0, 32, 64, 0, {2}, 2, 3),
}

# Device NUMA nodes where the README names them one per device (None: the
# locality spans several nodes, so hostc does not pick one).
GPU_NODES: dict[str, Counter[int | None]] = {
    "nvidiaDGX2.xml": Counter({0: 8, 1: 8}),
    "power8gpudistances.xml": Counter({0: 2, 1: 2}),
    "32em64t-2n8c2t-pci-normalio.xml": Counter({0: 1, 1: 3}),
    "64intel64-3g2n+2n-irregulargroups+pci.xml": Counter({4: 1, 7: 1}),
    "coral-lassen.xml": Counter({0: 2, 8: 2}),
    "coral-lassen-hwloc1.xml": Counter({0: 2, 8: 2}),
    "coral-ea-hwloc1.xml": Counter({0: 2, 1: 2}),
    "eas-tioga.xml": Counter({0: 2, 1: 2, 2: 2, 3: 2}),
    "g4dnmetal.xml": Counter({0: 4, 1: 4}),
    "arm64-ulna-hwloc1.xml": Counter({0: 1, 1: 1}),
    "topo.jrc0323.xml": Counter({1: 1, 3: 1, 5: 1, 7: 1}),
    "chimera.xml": Counter({0: 1, 2: 1}),
}
NIC_NODES: dict[str, Counter[int | None]] = {
    "40intel64-2g2n4c+pci.xml": Counter({None: 5}),
    "28intel64-2p2g7c-CoDgroups.v1.xml": Counter({0: 2}),
    # The README puts mlx5_0 on node 0, but in the XML it sits under Package 1's
    # bridge 0000:80:03.0; its bus id 0000:04:00.0 is also used by a SATA
    # controller on node 0 (a hand-edited test file), which is what a lookup
    # by bus id finds.  The tree is what hostc reads: node 1.
    "32em64t-2n8c2t-pci-normalio.xml": Counter({1: 3}),
    "64intel64-3g2n+2n-irregulargroups+pci.xml": Counter({0: 2}),
    "coral-ea-hwloc1.xml": Counter({0: 1, 1: 3}),
    "g4dnmetal.xml": Counter({1: 2}),
    "arm64-ulna-hwloc1.xml": Counter({0: 3, 1: 1}),
    "knl-snc4-flat-hwloc1.xml": Counter({0: 4}),  # 0,4 in the README: 4 is CPU-less MCDRAM
    "topo.jrc0323.xml": Counter({1: 1, 3: 1, 5: 1, 7: 1, 4: 2}),
    "topo.dp-intelmax01-flat.xml": Counter({0: 2, 2: 1}),  # 0,8 and 2,10: 8+ are HBM
    "chimera.xml": Counter({0: 3}),
}
# Where the README gives only the set of nodes the NICs are on.
NIC_NODE_SETS: dict[str, set[int | None]] = {
    "192em64t-12gr2n8c2t.xml": {0, 4, 6},
    "16intel64-manyVFs.xml": {0, 1},
    "coral-lassen.xml": {0, 8},
    "coral-lassen-hwloc1.xml": {0, 8},
    "eas-tioga.xml": {0, 1, 2, 3},
    "cts1-quartz-smt1.xml": {0, 1},
}


def _samples() -> Path:
    return shared("topologies", "hwloc")


def _load(name: str) -> Topology:
    path = _samples() / name
    return parse(path.read_text(encoding="utf-8"), str(path))


def test_every_sample_has_an_expected_row() -> None:
    assert sorted(p.name for p in _samples().glob("*.xml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_file_matches_readme(name: str) -> None:
    topo = _load(name)
    row = EXPECTED[name]
    assert validate(topo) == []
    assert snapshot.loads(snapshot.dumps(topo)) == topo
    online = [c for c in topo.cpus if c.online]
    with_cpus = {c.node for c in online}
    assert len({c.package for c in online}) == row.packages
    assert len(topo.nodes) == row.numa_cpu + row.numa_cpuless
    assert len(with_cpus) == row.numa_cpu
    assert len(topo.cores()) == row.cores
    assert len(online) == row.pus
    assert len(topo.cpus) - len(online) == row.offline
    assert {len(t) for t in topo.cores().values()} == row.smt
    assert len(topo.gpus) == row.gpus
    assert len(topo.nics) == row.nics
    assert topo.source == "hwloc"
    assert [n.id for n in topo.nodes] == sorted(n.id for n in topo.nodes)
    assert [g.name for g in topo.gpus] == [f"GPU{i}" for i in range(len(topo.gpus))]
    if name in GPU_NODES:
        assert Counter(g.node for g in topo.gpus) == GPU_NODES[name]
    if name in NIC_NODES:
        assert Counter(n.node for n in topo.nics) == NIC_NODES[name]
    if name in NIC_NODE_SETS:
        assert {n.node for n in topo.nics} == NIC_NODE_SETS[name]
    for node in topo.nodes:
        if node.distances:
            assert node.distances[topo.nodes.index(node)] == min(node.distances) == 10


def test_offline_cpus_are_the_ones_the_readme_lists() -> None:
    topo = _load("16em64t-4s2c2t-offlines.xml")
    offline = [c.id for c in topo.cpus if not c.online]
    assert offline == [2, 5, 7, 8, 9, 10, 11, 13, 14]
    assert all(c.core is None and c.node is None for c in topo.cpus if not c.online)
    assert [c.id for c in _load("coral-lassen.xml").cpus if not c.online] == [
        *range(8),
        *range(88, 96),
    ]


def test_hybrid_kinds() -> None:
    raptor = Counter(c.kind for c in _load("Intel-RaptorLake-Corei7-1370P.xml").cpus)
    assert raptor == {"IntelCore": 12, "IntelAtom": 8}
    strix = Counter(c.kind for c in _load("AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml").cpus)
    assert strix == {"AMDPerformance": 8, "AMDEfficieny": 16}  # hwloc's spelling
    gb10 = {c.id: c.kind for c in _load("nvidia-dgx-gb10.xml").cpus}
    assert gb10[0] == "kind0" and gb10[5] == "kind1"  # LinuxCapacity 718 < 997
    assert {c.kind for c in _load("g4dnmetal.xml").cpus} == {None}  # one kind is no kind


def test_cpuless_memory_nodes() -> None:
    max_ = _load("topo.dp-intelmax01-flat.xml")
    hbm = [n for n in max_.nodes if n.id >= 8]
    assert [n.memory_mib for n in hbm] == [16384] * 8
    assert all(not max_.node_cpus(n.id) for n in hbm)
    assert all(max_.node_cpus(n) for n in range(8))
    knl = _load("knl-snc4-flat-hwloc1.xml")
    assert [knl.node(n).memory_mib for n in range(4, 8)] == [4096] * 4  # type: ignore[union-attr]
    lassen = _load("coral-lassen-hwloc1.xml")
    assert [n.id for n in lassen.nodes] == [0, 8, 252, 253, 254, 255]
    assert lassen.node(252) == NumaNode(
        id=252, memory_mib=16128, distances=[80, 80, 10, 80, 80, 80], hugepages={"2M": 0, "1G": 0}
    )


def test_memoryless_nodes_with_cpus_have_zero_memory() -> None:
    chimera = _load("chimera.xml")
    assert [n.memory_mib for n in chimera.nodes] == [64394, 0, 64460, 0]
    assert "memory" not in chimera.unknown
    assert "memory" in _load("AMD-17h-Zen-2xEpyc-7451.xml").unknown  # x86 backend: no sizes


def test_disallowed_cpus_and_spanning_locality_are_recorded() -> None:
    condor = _load("64intel64-3g2n+2n-irregulargroups+pci.xml")
    assert condor.disallowed_cpus == CpuSet.parse("16-63") and condor.unknown == ()
    assert all(c.online for c in condor.cpus)
    pci = _load("40intel64-2g2n4c+pci.xml")
    assert "locality:eth0 spans nodes 0,2" in pci.notes
    assert "locality:qib0 spans nodes 1,3" in pci.notes
    assert pci.nics[-1] == Nic(
        name="qib0", pci="0000:43:00.0", netdev="ib0", rdma="qib0", vendor="QLogic"
    )


def test_devices_names_and_models() -> None:
    jrc = _load("topo.jrc0323.xml")
    assert {n.name: n.node for n in jrc.nics if n.rdma} == {
        "mlx5_0": 3,
        "mlx5_1": 1,
        "mlx5_2": 7,
        "mlx5_3": 5,
    }
    assert [g.pci for g in jrc.gpus] == sorted(g.pci or "" for g in jrc.gpus)
    assert {g.vendor for g in jrc.gpus} == {"NVIDIA"}
    lassen = _load("coral-lassen.xml")
    assert lassen.gpus[0].model and "V100" in lassen.gpus[0].model
    assert lassen.arch == "ppc64le"
    assert lassen.kernel == "4.14.0-115.10.1.1chaos.ch6a.ppc64le"
    g4dn = _load("g4dnmetal.xml")
    assert [n.name for n in g4dn.nics] == ["rdmap197s0", "eth0"]  # EFA has no netdev
    vfs = _load("16intel64-manyVFs.xml")
    assert "0000:0b:00.1" in {n.name for n in vfs.nics}  # a VF with no OS device
    assert len({n.name for n in vfs.nics}) == 18
    tioga = _load("eas-tioga.xml")
    assert {g.vendor for g in tioga.gpus} == {"AMD"}


def test_arch_and_hugepages() -> None:
    assert _load("AMD-19h-Zen4-2xEpyc-9654.xml").arch == "x86_64"  # x86 backend
    assert _load("40intel64-2g2n4c+pci.xml").arch == "unknown"
    assert _load("arm64-ulna-hwloc1.xml").hugepage_sizes == ("2M", "512M")  # 64K base pages
    assert _load("coral-lassen-hwloc1.xml").hugepage_sizes == ("2M", "1G")
    ea = _load("coral-ea-hwloc1.xml")
    assert ea.hugepage_sizes == ("16M",)
    assert "hugepage-sizes:1M" in ea.notes  # real, but not a size hostc knows


def test_distances_follow_node_order() -> None:
    cod = _load("28intel64-2p2g7c-CoDgroups.v1.xml")
    assert [n.distances for n in cod.nodes] == [
        (10, 21, 31, 31),
        (21, 10, 31, 31),
        (31, 31, 10, 21),
        (31, 31, 21, 10),
    ]
    assert "distances" in _load("knl-snc4-flat-hwloc1.xml").unknown


V2 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" \
allowed_cpuset="0x0000000f" nodeset="0x00000001" complete_nodeset="0x00000001" \
allowed_nodeset="0x00000001" gp_index="1">
    <info name="Backend" value="Linux"/>
    <info name="OSRelease" value="6.8.0-45-generic"/>
    <info name="HostName" value="gpu01"/>
    <info name="Architecture" value="x86_64"/>
    <object type="Package" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" \
nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" \
nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="4294967296">
        <page_type size="4096" count="1048576"/>
        <page_type size="2097152" count="16"/>
        <page_type size="1073741824" count="0"/>
      </object>
      <object type="L3Cache" cpuset="0x0000000f" complete_cpuset="0x0000000f" gp_index="4" \
cache_size="33554432" depth="3" cache_linesize="64" cache_associativity="16" cache_type="0">
        <object type="Core" os_index="0" cpuset="0x00000005" gp_index="5">
          <object type="PU" os_index="0" cpuset="0x00000001" gp_index="6"/>
          <object type="PU" os_index="2" cpuset="0x00000004" gp_index="7"/>
        </object>
        <object type="Core" os_index="1" cpuset="0x0000000a" gp_index="8">
          <object type="PU" os_index="1" cpuset="0x00000002" gp_index="9"/>
          <object type="PU" os_index="3" cpuset="0x00000008" gp_index="10"/>
        </object>
      </object>
      <object type="Bridge" gp_index="11" bridge_type="0-1" depth="0" bridge_pci="0000:[00-02]">
        <object type="Bridge" gp_index="12" bridge_type="1-1" depth="1" \
bridge_pci="0000:[02-02]" pci_busid="0000:00:02.0" pci_type="0604 [8086:1901] [0000:0000] 07">
          <object type="PCIDev" gp_index="13" pci_busid="0000:02:00.0" \
pci_type="0207 [15b3:1021] [15b3:0023] 00" pci_link_speed="31.507692">
            <info name="PCIVendor" value="Mellanox Technologies"/>
            <object type="OSDev" gp_index="14" name="ibp2s0" osdev_type="2"/>
            <object type="OSDev" gp_index="15" name="mlx5_0" osdev_type="3"/>
          </object>
        </object>
        <object type="Bridge" gp_index="16" bridge_type="1-1" depth="1" \
bridge_pci="0000:[01-01]" pci_busid="0000:00:01.0" pci_type="0604 [8086:1901] [0000:0000] 07">
          <object type="PCIDev" gp_index="17" pci_busid="0000:01:00.0" \
pci_type="0302 [10de:2330] [10de:16c1] a1" pci_link_speed="31.507692">
            <info name="PCIVendor" value="NVIDIA Corporation"/>
            <info name="PCIDevice" value="GH100 [H100 SXM5 80GB]"/>
            <object type="OSDev" gp_index="18" name="nvml0" subtype="NVML" osdev_type="1">
              <info name="Backend" value="NVML"/>
              <info name="GPUModel" value="NVIDIA H100 80GB HBM3"/>
            </object>
          </object>
        </object>
        <object type="PCIDev" gp_index="19" pci_busid="0000:00:1f.0" \
pci_type="0300 [1a03:2000] [1a03:2000] 41"/>
      </object>
    </object>
  </object>
</topology>
"""

V2_EXPECTED = Topology(
    arch="x86_64",
    source="hwloc",
    kernel="6.8.0-45-generic",
    cpus=[
        LogicalCpu(id=0, core=0, package=0, node=0),
        LogicalCpu(id=1, core=1, package=0, node=0),
        LogicalCpu(id=2, core=0, package=0, node=0),
        LogicalCpu(id=3, core=1, package=0, node=0),
    ],
    nodes=[NumaNode(id=0, memory_mib=4096, hugepages={"2M": 16, "1G": 0})],
    hugepage_sizes=["2M", "1G"],
    gpus=[
        Gpu(
            name="GPU0", pci="0000:01:00.0", node=0, vendor="NVIDIA", model="NVIDIA H100 80GB HBM3"
        ),
    ],
    nics=[
        Nic(
            name="mlx5_0",
            pci="0000:02:00.0",
            node=0,
            netdev="ibp2s0",
            rdma="mlx5_0",
            vendor="Mellanox",
        ),
    ],
)


def test_hand_written_v2() -> None:
    topo = parse(V2, "v2.xml")
    assert topo == V2_EXPECTED
    assert topo.siblings(0) == topo.siblings(2)
    assert "gpu01" not in snapshot.dumps(topo)  # no host names in snapshots


def test_v2_hbm_beside_ddr_gets_no_cpus() -> None:
    hbm = V2.replace(
        '<object type="NUMANode" os_index="0"',
        '<object type="NUMANode" os_index="1" subtype="HBM" cpuset="0x0000000f" '
        'local_memory="17179869184"/>\n      <object type="NUMANode" os_index="0"',
    )
    topo = parse(hbm, "hbm.xml")
    assert [(n.id, n.memory_mib) for n in topo.nodes] == [(0, 4096), (1, 16384)]
    assert {c.node for c in topo.cpus} == {0}


V1 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc.dtd">
<topology>
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000001f" \
online_cpuset="0x0000000f" allowed_cpuset="0x0000000f" nodeset="0x00000007">
    <page_type size="4096" count="0"/>
    <page_type size="2097152" count="0"/>
    <info name="Backend" value="Linux"/>
    <info name="Architecture" value="aarch64"/>
    <distances nbobjs="3" relative_depth="2" latency_base="10.000000">
      <latency value="1.000000"/>
      <latency value="2.000000"/>
      <latency value="3.000000"/>
      <latency value="2.100000"/>
      <latency value="1.000000"/>
      <latency value="3.000000"/>
      <latency value="3.000000"/>
      <latency value="3.000000"/>
      <latency value="1.000000"/>
    </distances>
    <object type="Socket" os_index="0" cpuset="0x0000000f" online_cpuset="0x0000000f">
      <object type="NUMANode" os_index="1" cpuset="0x00000003" local_memory="2147483648">
        <page_type size="4096" count="524288"/>
        <page_type size="2097152" count="8"/>
        <object type="Cache" cpuset="0x00000003" cache_size="1048576" depth="2">
          <object type="Core" os_index="0" cpuset="0x00000003">
            <object type="PU" os_index="0" cpuset="0x00000001"/>
            <object type="PU" os_index="1" cpuset="0x00000002"/>
          </object>
        </object>
      </object>
      <object type="NUMANode" os_index="0" cpuset="0x0000000c" local_memory="1073741824">
        <page_type size="4096" count="262144"/>
        <page_type size="2097152" count="0"/>
        <object type="Core" os_index="1" cpuset="0x0000000c">
          <object type="PU" os_index="2" cpuset="0x00000004"/>
          <object type="PU" os_index="3" cpuset="0x00000008"/>
        </object>
      </object>
    </object>
    <object type="NUMANode" os_index="2" cpuset="0x0" local_memory="17179869184"/>
  </object>
</topology>
"""


def test_hand_written_v1() -> None:
    # The matrix is in v1's logical order (nodes 1, 0, 2) and not symmetric, so
    # a wrong reordering shows.
    assert parse(V1, "v1.xml") == Topology(
        arch="aarch64",
        source="hwloc",
        cpus=[
            LogicalCpu(id=0, core=0, package=0, node=1),
            LogicalCpu(id=1, core=0, package=0, node=1),
            LogicalCpu(id=2, core=2, package=0, node=0),
            LogicalCpu(id=3, core=2, package=0, node=0),
            LogicalCpu(id=4, online=False),
        ],
        nodes=[
            NumaNode(id=0, memory_mib=1024, distances=[10, 21, 30], hugepages={"2M": 0}),
            NumaNode(id=1, memory_mib=2048, distances=[20, 10, 30], hugepages={"2M": 8}),
            NumaNode(id=2, memory_mib=16384, distances=[30, 30, 10]),
        ],
        hugepage_sizes=["2M"],
        unknown=["devices"],
    )


def _error(text: str, file: str = "bad.xml") -> HostcError:
    with pytest.raises(HostcError) as info:
        parse(text, file)
    assert file in str(info.value)
    return info.value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        (V2[: len(V2) // 2], "not well-formed"),
        (bytes(range(256)).decode("latin-1"), "not XML"),
        ("\x00\x01ELF\x02", "not XML"),
        ("<foo/>", "<foo>"),
        ('<topology version="3.0"/>', "version 3.0"),
        ("<topology/>", "no objects"),
        ('<topology version="2.0"><object type="Machine" os_index="0"/></topology>', "no PU"),
        (V2.replace('os_index="3" cpuset', 'os_index="2" cpuset'), "CPU 2 is listed twice"),
        (V2.replace('os_index="1" cpuset="0x00000002"', 'cpuset="0x00000002"'), "os_index"),
        (V1.replace('value="2.100000"', 'value="x"'), "not a number"),
        (V1.replace('<latency value="1.000000"/>\n    </distances>', "</distances>"), "8 finite"),
    ],
)
def test_bad_input_is_one_clear_error(text: str, words: str) -> None:
    assert words in str(_error(text))


def test_errors_carry_line_numbers() -> None:
    assert _error(V2[:600]).diagnostics[0].line == V2[:600].count("\n") + 1
    bad = V2.replace('cpuset="0x00000005"', 'cpuset="0xzz"')
    line = bad[: bad.index("0xzz")].count("\n") + 1
    assert _error(bad).diagnostics[0].line == line


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(V2)), st.text(max_size=3))
def test_damaged_files_never_raise_anything_else(cut: int, junk: str) -> None:
    for text in (V2[:cut], V2[:cut] + junk + V2[cut + len(junk) :], V1[: cut % len(V1)]):
        try:
            topo = parse(text, "fuzz.xml")
        except HostcError:
            continue
        assert validate(topo) == []
