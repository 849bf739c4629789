"""Text importers (lscpu, numactl, nvidia-smi) against real captures and broken input.

The expected numbers were written by hand from each folder's sources.md and
the files themselves, not produced by the importers, so a parser bug cannot
bless itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc.diagnostics import HostcError
from hostc.topology import snapshot
from hostc.topology.importers import lscpu, numactl, nvidia_smi
from hostc.topology.model import Gpu, LogicalCpu, Nic, NumaNode, Topology
from hostc.topology.validate import validate

from conftest import SHARED_TOPOLOGIES, shared

SAMPLES = SHARED_TOPOLOGIES


def sample(kind: str, name: str) -> tuple[str, str]:
    path = shared("topologies", kind, name)
    return path.read_text(encoding="utf-8"), str(path)


def roundtrip(topo: Topology) -> None:
    assert [d.render() for d in validate(topo)] == []
    assert snapshot.loads(snapshot.dumps(topo)) == topo


# --- lscpu ----------------------------------------------------------------------------------
class LscpuCase(NamedTuple):
    cpus: int
    online: int
    nodes: list[int]
    cpuless: int
    sockets: int
    cores: int
    siblings: dict[int, str]  # cpu → its SMT siblings (cpulist)


LSCPU = {
    "asus-esc8000a-e12-2s-epyc-64cpu-smt-off-lscpu-e.txt": LscpuCase(
        64, 64, [0, 1], 0, sockets=2, cores=64, siblings={0: "0", 63: "63"}
    ),
    "puget-wrx90-threadripper-pro-1s-24cpu-lscpu-e.txt": LscpuCase(
        24, 24, [0], 0, sockets=1, cores=24, siblings={5: "5"}
    ),
    "util-linux-x86_64-epyc_7451-2s-8numa-lscpu-p.txt": LscpuCase(
        96, 96, list(range(8)), 0, sockets=2, cores=48, siblings={0: "0,48", 47: "47,95"}
    ),
    "util-linux-x86_64-64cpu-4s-xeon-x7550-numa-0-2-3-lscpu-p.txt": LscpuCase(
        64, 64, [0, 2, 3], 0, sockets=4, cores=32, siblings={0: "0,32", 33: "1,33"}
    ),
    "util-linux-ppc64-POWER7-64cpu-smt4-cpuless-node1-lscpu-p.txt": LscpuCase(
        64, 64, [0], 0, sockets=16, cores=16, siblings={0: "0-3", 62: "60-63"}
    ),
}


def test_every_sample_has_expectations() -> None:
    for kind, table in (("lscpu", LSCPU), ("numactl", NUMACTL), ("nvidia-smi", SMI)):
        sample(kind, "sources.md")
        assert sorted(p.name for p in (SAMPLES / kind).glob("*.txt")) == sorted(table), kind


@pytest.mark.parametrize("name", sorted(LSCPU))
def test_lscpu_samples(name: str) -> None:
    text, file = sample("lscpu", name)
    cpus, online, nodes, cpuless, sockets, cores, siblings = LSCPU[name]
    topo = lscpu.parse(text, file)
    roundtrip(topo)
    assert len(topo.cpus) == cpus
    assert len(topo.online) == online
    assert topo.node_ids() == nodes
    assert sum(1 for n in nodes if not topo.node_cpus(n)) == cpuless
    assert len({c.package for c in topo.cpus}) == sockets
    assert len(topo.cores()) == cores
    for cpu, sib in siblings.items():
        assert str(topo.siblings(cpu)) == sib
    assert topo.source == "lscpu"
    assert {"memory", "devices"} <= set(topo.unknown)
    assert "numa" not in topo.unknown


def test_lscpu_node_layouts() -> None:
    xeon = "util-linux-x86_64-64cpu-4s-xeon-x7550-numa-0-2-3-lscpu-p.txt"
    topo = lscpu.parse(*sample("lscpu", xeon))
    # node 0 spans sockets 0 and 2; CPUs go round-robin across sockets
    assert str(topo.node_cpus(0)) == ",".join(f"{i},{i + 2}" for i in range(0, 64, 4))
    assert {c.package for c in topo.cpus if c.node == 0} == {0, 2}
    epyc = lscpu.parse(*sample("lscpu", "util-linux-x86_64-epyc_7451-2s-8numa-lscpu-p.txt"))
    assert str(epyc.node_cpus(5)) == "30-35,78-83"
    asus = lscpu.parse(*sample("lscpu", "asus-esc8000a-e12-2s-epyc-64cpu-smt-off-lscpu-e.txt"))
    assert str(asus.node_cpus(1)) == "32-63"


def test_lscpu_e_offline_and_empty_node() -> None:
    text = (
        "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE    MAXMHZ   MINMHZ\n"
        "  0    0      0    0 0:0:0:0          yes 4800.0000 800.0000\n"
        "  1    0      0    0 0:0:0:0          yes 4800.0000 800.0000\n"
        "  2    0      0    1 1:1:1:0          yes 4800.0000 800.0000\n"
        "  3    -      -    - -                 no -         -\n"
    )
    topo = lscpu.parse(text, "e.txt")
    assert str(topo.online) == "0-2"
    assert topo.cpus[3] == LogicalCpu(id=3, online=False, core=None, package=None, node=None)
    assert str(topo.siblings(1)) == "0-1"
    # s390 z/VM: empty Node column and `-` sockets (util-linux tests/expected/lscpu-s390-zvm)
    zvm = lscpu.parse("# CPU,Core,Socket,Node\n0,0,0,\n1,1,1,\n2,2,2,\n3,3,3,\n", "zvm.txt")
    assert zvm.node_ids() == [0] and "numa" in zvm.unknown
    assert len(zvm.cores()) == 4


@st.composite
def machines(draw: st.DrawFn) -> tuple[list[tuple[int, int, int, int]], bool]:
    """(cpu, core, socket, node) rows of a plausible machine, and whether core ids restart."""
    sockets = draw(st.integers(1, 4))
    nodes_per = draw(st.integers(1, 2))
    cores_per_node = draw(st.integers(1, 4))
    threads = draw(st.integers(1, 4))
    per_socket_ids = draw(st.booleans())
    siblings_far = draw(st.booleans())  # Linux x86 puts SMT siblings at +ncores
    node_step = draw(st.sampled_from([1, 2, 8]))  # sparse node ids (POWER: 0, 8)
    ncores = sockets * nodes_per * cores_per_node
    rows = []
    g = 0
    for s in range(sockets):
        for n in range(nodes_per):
            for k in range(cores_per_node):
                core = k + n * cores_per_node if per_socket_ids else g
                for t in range(threads):
                    cpu = t * ncores + g if siblings_far else g * threads + t
                    rows.append((cpu, core, s, (s * nodes_per + n) * node_step))
                g += 1
    return draw(st.permutations(rows)), per_socket_ids


@given(machines())
@settings(max_examples=150, deadline=None)
def test_lscpu_p_property(machine: tuple[list[tuple[int, int, int, int]], bool]) -> None:
    rows, _ = machine
    text = "# The following is the parsable format\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n"
    text += "".join(f"{c},{k},{s},{n},,{k},{k},{k},{s}\n" for c, k, s, n in rows)
    topo = lscpu.parse(text, "gen.txt")
    lowest: dict[tuple[int, int], int] = {}
    for c, k, s, _ in rows:
        lowest[(s, k)] = min(lowest.get((s, k), c), c)
    got = {c.id: (c.core, c.package, c.node) for c in topo.cpus}
    assert got == {c: (lowest[(s, k)], s, n) for c, k, s, n in rows}
    assert validate(topo) == []


# --- numactl --------------------------------------------------------------------------------
class NumaCase(NamedTuple):
    nodes: dict[int, tuple[int, int]]  # node → (CPU count, memory MiB)
    distances0: list[int]  # node 0's row
    cpulist: tuple[int, str]  # one node's CPUs


GPU_MEM = (0, 32256)  # the AC922's CPU-less V100 memory nodes
NUMACTL = {
    "asus-esc8000a-e12-2s-epyc-2node-numactl-hardware.txt": NumaCase(
        {0: (32, 193129), 1: (32, 193477)}, [10, 32], (1, "32-63")
    ),
    "delos-2s-xeon-4xv100-2node-numactl-H.txt": NumaCase(
        {0: (40, 772696), 1: (40, 774135)}, [10, 21], (0, "0-19,40-59")
    ),
    "puget-wrx90-threadripper-pro-1node-numactl-hardware.txt": NumaCase(
        {0: (24, 128295)}, [10], (0, "0-23")
    ),
    "ibm-ac922-power9-6node-gpu-memory-nodes-numactl-H.txt": NumaCase(
        {0: (64, 257716), 8: (64, 261728)} | dict.fromkeys(range(252, 256), GPU_MEM),
        [10, 40, 80, 80, 80, 80],
        (8, "64-127"),
    ),
}


@pytest.mark.parametrize("name", sorted(NUMACTL))
def test_numactl_samples(name: str) -> None:
    text, file = sample("numactl", name)
    per_node, dist0, (node, cpulist) = NUMACTL[name]
    topo = numactl.parse(text, file)
    roundtrip(topo)
    assert topo.node_ids() == sorted(per_node)
    for n, (count, mib) in per_node.items():
        assert len(topo.node_cpus(n)) == count
        node_n = topo.node(n)
        assert node_n is not None and node_n.memory_mib == mib
    assert topo.nodes[0].distances == tuple(dist0)
    assert str(topo.node_cpus(node)) == cpulist
    assert all(c.core is None and c.package is None for c in topo.cpus)
    assert {"smt", "packages", "devices"} <= set(topo.unknown)
    assert topo.source == "numactl"


def test_numactl_distances_follow_sorted_nodes() -> None:
    text = (
        "available: 2 nodes (0-1)\nnode 1 cpus: 2 3\nnode 1 size: 100 MB\nnode 0 cpus: 0 1\n"
        "node 0 size: 200 MB\nnode distances:\nnode   1   0\n  1:  10  20\n  0:  20  10\n"
    )
    topo = numactl.parse(text, "rev.txt")
    assert [n.distances for n in topo.nodes] == [(10, 20), (20, 10)]
    assert [n.memory_mib for n in topo.nodes] == [200, 100]


# --- nvidia-smi -----------------------------------------------------------------------------
class SmiCase(NamedTuple):
    gpus: int
    nics: int
    numa: Sequence[int | None]  # NUMA Affinity per GPU
    aff0: str  # GPU0's CPU Affinity
    kinds: dict[tuple[str, str], str]  # a few link cells
    rdma0: str | None  # NIC0's RDMA device


NV = ("GPU0", "GPU1")
SMI = {
    "a10-4gpu-pcie-sys-2nic.txt": SmiCase(
        4, 2, [0] * 4, "0-127", {NV: "SYS", ("NIC0", "NIC1"): "PIX"}, "mlx5_0"
    ),
    "a100-8gpu-nv12-17nic-bond-single-numa.txt": SmiCase(
        8, 17, [0] * 8, "0-103", {NV: "NV12", ("GPU0", "NIC0"): "PXB"}, "mlx5_2"
    ),
    "asus-esc8000a-e12-4gpu-rtx6000ada-4nic.txt": SmiCase(
        4, 4, [0, 0, 1, 1], "0-31", {NV: "NODE", ("GPU0", "GPU2"): "SYS"}, "mlx5_0"
    ),
    "delos-4gpu-v100-nv2-nv1-hybrid-2numa.txt": SmiCase(
        4, 0, [0, 0, 1, 1], "0-19,40-59", {NV: "NV2", ("GPU1", "GPU3"): "NV1"}, None
    ),
    "gtx1080ti-2gpu-numa-affinity-na.txt": SmiCase(2, 0, [None, None], "0-11", {NV: "PHB"}, None),
    "h20-8gpu-nv18-2nic-genoa-384cpu.txt": SmiCase(
        8, 2, [0] * 4 + [1] * 4, "0-95,192-287", {NV: "NV18", ("GPU6", "NIC0"): "PHB"}, None
    ),
    "hgx-a800-8gpu-nv8-4nic.txt": SmiCase(
        8, 4, [0] * 4 + [1] * 4, "0-31,64-95", {NV: "NV8", ("NIC3", "GPU7"): "PIX"}, "mlx5_0"
    ),
    "hgx-h100-8gpu-nv18-2numa-nolegend.txt": SmiCase(
        8, 0, [0] * 4 + [1] * 4, "0-51,104-155", {("GPU7", "GPU0"): "NV18"}, None
    ),
    "ibm-ac922-power9-4gpu-v100-6nic-mlx5-columns-numa0-numa8.txt": SmiCase(
        4, 6, [0, 0, 8, 8], "0-63", {NV: "NV3", ("mlx5_4", "mlx5_5"): "PIX"}, "mlx5_0"
    ),
    "traverse-power9-4gpu-v100-mlx5-columns-numa0-numa8.txt": SmiCase(
        4, 4, [0, 0, 8, 8], "0-63", {NV: "NV3", ("mlx5_3", "GPU3"): "NODE"}, "mlx5_0"
    ),
}


@pytest.mark.parametrize("name", sorted(SMI))
def test_nvidia_smi_samples(name: str) -> None:
    text, file = sample("nvidia-smi", name)
    gpus, nics, numa, aff0, kinds, rdma0 = SMI[name]
    smi = nvidia_smi.parse(text, file)
    assert len(smi.gpus) == gpus and len(smi.nics) == nics
    assert [g.node for g in smi.gpus] == list(numa)
    assert smi.gpus[0].cpus == aff0
    devices = gpus + nics
    assert len(smi.links) == devices * (devices - 1)
    got = {(k.a, k.b): k.kind for k in smi.links}
    for pair, kind in kinds.items():
        assert got[pair] == kind
    if nics:
        assert smi.nics[0].rdma == rdma0
    topo = nvidia_smi.merge(None, smi)
    roundtrip(topo)
    assert topo.source == "nvidia-smi"
    assert {"smt", "packages", "memory", "cpus-outside-gpu-affinity"} <= set(topo.unknown)
    assert all(g.node is not None for g in topo.gpus)


def test_nvidia_smi_old_layout_names_nics_by_rdma() -> None:
    old = "traverse-power9-4gpu-v100-mlx5-columns-numa0-numa8.txt"
    smi = nvidia_smi.parse(*sample("nvidia-smi", old))
    assert [n.name for n in smi.nics] == [f"mlx5_{i}" for i in range(4)]
    assert all(n.rdma == n.name for n in smi.nics)


MACHINES = [
    (
        "asus-esc8000a-e12-2s-epyc-2node-numactl-hardware.txt",
        "asus-esc8000a-e12-4gpu-rtx6000ada-4nic.txt",
        [0, 0, 1, 1],
        [0, 0, 1, 1],
    ),
    (
        "ibm-ac922-power9-6node-gpu-memory-nodes-numactl-H.txt",
        "ibm-ac922-power9-4gpu-v100-6nic-mlx5-columns-numa0-numa8.txt",
        [0, 0, 8, 8],
        [0, 0, 8, 8, 8, 8],
    ),
]


@pytest.mark.parametrize(("numa_name", "smi_name", "gpu_nodes", "nic_nodes"), MACHINES)
def test_merge_onto_numactl_of_same_machine(
    numa_name: str, smi_name: str, gpu_nodes: list[int], nic_nodes: list[int]
) -> None:
    base = numactl.parse(*sample("numactl", numa_name))
    topo = nvidia_smi.merge(base, nvidia_smi.parse(*sample("nvidia-smi", smi_name)))
    roundtrip(topo)
    assert [g.node for g in topo.gpus] == gpu_nodes
    assert [n.node for n in topo.nics] == nic_nodes
    assert topo.cpus == base.cpus and topo.nodes == base.nodes
    assert topo.source == "numactl+nvidia-smi"
    assert "devices" not in topo.unknown


def test_merge_onto_lscpu_of_same_machine() -> None:
    base = lscpu.parse(*sample("lscpu", "asus-esc8000a-e12-2s-epyc-64cpu-smt-off-lscpu-e.txt"))
    smi = nvidia_smi.parse(*sample("nvidia-smi", MACHINES[0][1]))
    topo = nvidia_smi.merge(base, smi)
    roundtrip(topo)
    assert [g.node for g in topo.gpus] == [0, 0, 1, 1]
    assert topo.source == "lscpu+nvidia-smi" and "devices" not in topo.unknown


def base2() -> Topology:
    return Topology(
        arch="x86_64",
        cpus=[LogicalCpu(id=i, core=i, package=i // 32, node=i // 32) for i in range(64)],
        nodes=[NumaNode(id=0), NumaNode(id=1)],
        source="hwloc",
        gpus=[Gpu(name="GPU0", pci="0000:17:00.0", model="RTX 6000 Ada")],
        nics=[Nic(name="ens1f0np0", pci="0000:18:00.0", rdma="mlx5_0", netdev="ens1f0np0")],
    )


def test_merge_keeps_base_devices_and_renames_links() -> None:
    smi = nvidia_smi.parse(*sample("nvidia-smi", "asus-esc8000a-e12-4gpu-rtx6000ada-4nic.txt"))
    topo = nvidia_smi.merge(base2(), smi)
    roundtrip(topo)
    g = topo.gpus[0]
    assert (g.pci, g.model, g.node, g.cpus) == ("0000:17:00.0", "RTX 6000 Ada", 0, "0-31")
    assert [g.name for g in topo.gpus] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    n = topo.nics[0]
    assert (n.name, n.pci, n.netdev, n.node) == ("ens1f0np0", "0000:18:00.0", "ens1f0np0", 0)
    assert [n.name for n in topo.nics] == ["ens1f0np0", "NIC1", "NIC2", "NIC3"]
    kinds = {(k.a, k.b): k.kind for k in topo.links}
    assert kinds[("GPU0", "ens1f0np0")] == "NODE" and ("GPU0", "NIC0") not in kinds
    assert topo.source == "hwloc+nvidia-smi"


def test_merge_places_na_gpus_by_cpu_affinity() -> None:
    smi = nvidia_smi.parse(*sample("nvidia-smi", "gtx1080ti-2gpu-numa-affinity-na.txt"))
    topo = nvidia_smi.merge(base2(), smi)
    assert [g.node for g in topo.gpus] == [0, 0]


def test_merge_refuses_another_machine() -> None:
    base = numactl.parse(*sample("numactl", MACHINES[0][0]))
    smi_text, smi_file = sample("nvidia-smi", MACHINES[1][1])
    with pytest.raises(HostcError) as e:
        nvidia_smi.merge(base, nvidia_smi.parse(smi_text, smi_file))
    assert smi_file in str(e.value) and "same machine" in str(e.value)


# --- bad input ------------------------------------------------------------------------------
GARBAGE = bytes(range(256)).decode("latin-1") * 4
E_HEAD = "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE\n"
SMI_HEAD = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
NUMA_OK = "available: 2 nodes (0-1)\nnode 0 cpus: 0 1\nnode 0 size: 10 MB\n"

BAD = [
    ("lscpu", "", "empty"),
    ("lscpu", GARBAGE, "binary"),
    ("lscpu", "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n", "not followed"),
    ("lscpu", "# CPU,Core,Socket,Node,,L1d,L1i\n0,0,0,0,,0,0\n1,0,0\n", "3 fields"),
    ("lscpu", "# Core,Socket,Node\n0,0,0\n", "no CPU column"),
    ("lscpu", E_HEAD + "  0    0      0    0 0:0:0:0          yes\n  1    0\n", "no CORE"),
    ("lscpu", E_HEAD + "  0    0      0    0 0:0:0:0        maybe\n", "neither yes nor no"),
    ("lscpu", "hello world\n", "neither `lscpu -p`"),
    ("lscpu", "# CPU,Core,Socket,Node\n0,0,0,0\n0,1,0,0\n", "listed twice"),
    ("numactl", "", "empty"),
    ("numactl", GARBAGE, "binary"),
    ("numactl", "just some words\n", "not `numactl --hardware` output"),
    ("numactl", NUMA_OK, "node 1 has no `cpus:`"),
    (
        "numactl",
        NUMA_OK + "node 1 cpus: 2 3\nnode 1 size: 10 MB\nnode distances:\n"
        "node   0   1\n  0:  10  21\n",
        "no row for node(s) 1",
    ),
    ("numactl", "No NUMA available on this system\n", "no NUMA support"),
    ("numactl", "node 0 cpus: 0 1\n", "before the `available"),
    ("nvidia-smi", "", "empty"),
    ("nvidia-smi", GARBAGE, "binary"),
    ("nvidia-smi", SMI_HEAD, "no matrix row for GPU0, GPU1"),
    ("nvidia-smi", SMI_HEAD + "GPU0\t X \tNV2\t0-19\t0\nGPU1\tNV2\t X \t20-39\n", "cut"),
    ("nvidia-smi", SMI_HEAD + "GPU0\t X \tNV2\t0-19\t0\n\nLegend:\n", "no matrix row for GPU1"),
    ("nvidia-smi", "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n", "no `CPU Affinity`"),
    ("nvidia-smi", SMI_HEAD + "GPU0\t X \tNV2\tzero\t0\nGPU1\tNV2\t X \t0\t0\n", "cpulist"),
    ("nvidia-smi", "Failed to initialize NVML: Driver/library version mismatch\n", "no GPU0"),
]


@pytest.mark.parametrize(("kind", "text", "needle"), BAD)
def test_bad_input(kind: str, text: str, needle: str) -> None:
    file = f"bad-{kind}.txt"
    with pytest.raises(HostcError) as e:
        if kind == "lscpu":
            lscpu.parse(text, file)
        elif kind == "numactl":
            numactl.parse(text, file)
        else:
            nvidia_smi.parse(text, file)
    rendered = str(e.value)
    assert file in rendered and needle in rendered
    assert all(d.file == file for d in e.value.diagnostics)


def test_nvidia_smi_alone_needs_some_affinity() -> None:
    text = SMI_HEAD + "GPU0\t X \tPHB\tN/A\tN/A\nGPU1\tPHB\t X \tN/A\tN/A\n"
    smi = nvidia_smi.parse(text, "na.txt")
    with pytest.raises(HostcError) as e:
        nvidia_smi.merge(None, smi)
    assert "na.txt" in str(e.value) and "--base" in str(e.value)


def test_cut_lscpu_sample_reports_line() -> None:
    text, file = sample("lscpu", "util-linux-x86_64-epyc_7451-2s-8numa-lscpu-p.txt")
    lines = text.splitlines()
    cut = "\n".join([*lines[:20], lines[20][:5]])
    with pytest.raises(HostcError) as e:
        lscpu.parse(cut, file)
    assert e.value.diagnostics[0].line == 21


def _smi_alone(text: str, file: str) -> Topology:
    return nvidia_smi.merge(None, nvidia_smi.parse(text, file))


PARSERS = {"lscpu": lscpu.parse, "numactl": numactl.parse, "nvidia-smi": _smi_alone}


@pytest.mark.parametrize("kind", sorted(PARSERS))
@given(pick=st.integers(0, 99), cut=st.floats(0, 1), junk=st.text(max_size=6))
@settings(max_examples=80, deadline=None)
def test_damaged_samples_fail_cleanly(kind: str, pick: int, cut: float, junk: str) -> None:
    """Whatever a paste loses or gains, the answer is a result or a HostcError, never a crash."""
    sample(kind, "sources.md")
    files = sorted((SAMPLES / kind).glob("*.txt"))
    text = files[pick % len(files)].read_text(encoding="utf-8")
    at = int(len(text) * cut)
    for damaged in (text[:at], text[:at] + junk + text[at:]):
        try:
            topo = PARSERS[kind](damaged, "damaged.txt")
        except HostcError as e:
            assert "damaged.txt" in str(e)
        else:
            assert validate(topo) == []
