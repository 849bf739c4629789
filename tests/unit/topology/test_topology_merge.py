"""`hostc import KIND FILE --base SNAPSHOT`: one complete snapshot from partial sources."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hostc import api
from hostc.diagnostics import HostcError
from hostc.topology import snapshot

from conftest import shared
from sysfs_fixtures import SMI_TOPO_4GPU

# The machine of SMI_TOPO_4GPU: 2 sockets × 4 cores × SMT2, CPU n and n+8 siblings.
LSCPU = "# CPU,Core,Socket,Node\n" + "".join(
    f"{c},{c % 8},{(c % 8) // 4},{(c % 8) // 4}\n" for c in range(16)
)
NUMACTL = """\
available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3 8 9 10 11
node 0 size: 64000 MB
node 0 free: 60000 MB
node 1 cpus: 4 5 6 7 12 13 14 15
node 1 size: 64500 MB
node 1 free: 60000 MB
node distances:
node   0   1
  0:  10  21
  1:  21  10
"""


def _hostc(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hostc", *map(str, args)], capture_output=True, text=True, cwd=cwd
    )


def test_three_imports_make_one_complete_snapshot(tmp_path: Path) -> None:
    (tmp_path / "lscpu.txt").write_text(LSCPU)
    (tmp_path / "numa.txt").write_text(NUMACTL)
    (tmp_path / "topo.txt").write_text(SMI_TOPO_4GPU)
    steps = [
        ("import", "lscpu", "lscpu.txt", "-o", "s.toml"),
        ("import", "numactl", "numa.txt", "--base", "s.toml", "-o", "s2.toml"),
        ("import", "nvidia-smi", "topo.txt", "--base", "s2.toml", "-o", "full.toml"),
    ]
    for step in steps:
        r = _hostc(*step, "--arch", "x86_64", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    full = snapshot.read(tmp_path / "full.toml")
    assert full.cores()[0] == full.siblings(8)  # SMT from lscpu
    assert [n.memory_mib for n in full.nodes] == [64000, 64500]  # memory from numactl
    assert full.nodes[1].distances == (21, 10)
    assert [g.node for g in full.gpus] == [0, 0, 1, 1]  # GPUs from nvidia-smi
    assert {n.rdma for n in full.nics} == {"mlx5_0", "ens1f0"}
    assert full.unknown == () and full.arch == "x86_64"
    assert full.source == "lscpu+numactl+nvidia-smi"


def test_order_does_not_matter_for_the_facts() -> None:
    a = api.import_source("lscpu", LSCPU, file="l.txt")
    b = api.import_source("numactl", NUMACTL, file="n.txt")
    ab = api.import_source("numactl", NUMACTL, file="n.txt", base=a)
    ba = api.import_source("lscpu", LSCPU, file="l.txt", base=b)
    assert ab.cpus == ba.cpus and ab.nodes == ba.nodes and ab.unknown == ba.unknown


def test_conflicting_facts_name_both_files() -> None:
    base = api.import_source("lscpu", LSCPU, file="lscpu.txt")
    moved = NUMACTL.replace("node 0 cpus: 0 1 2 3 8", "node 0 cpus: 0 1 2 8").replace(
        "node 1 cpus: 4", "node 1 cpus: 3 4"
    )
    with pytest.raises(HostcError) as e:
        api.import_source("numactl", moved, file="numa.txt", base=base, base_file="s.toml")
    text = str(e.value)
    assert "CPU 3 node: s.toml says 0, numa.txt says 1" in text


def test_arch_conflict_and_fill(tmp_path: Path) -> None:
    base = api.import_source("lscpu", LSCPU, file="l.txt", arch="aarch64")
    assert base.arch == "aarch64"
    with pytest.raises(HostcError, match="aarch64"):
        api.import_source("numactl", NUMACTL, file="n.txt", base=base, arch="x86_64")
    with pytest.raises(HostcError, match="machine name"):
        api.import_source("lscpu", LSCPU, file="l.txt", arch="x86 64")


def test_hwloc_takes_arch_and_base(tmp_path: Path) -> None:
    folder = shared("topologies", "hwloc")
    path = folder / "40intel64-2g2n4c+pci.xml"  # no Architecture info
    text = api.read_source(path)
    assert api.import_source("hwloc", text, file=str(path)).arch == "unknown"
    topo = api.import_source("hwloc", text, file=str(path), arch="x86_64")
    assert topo.arch == "x86_64"
    other = folder / "g4dnmetal.xml"  # says x86_64 itself
    with pytest.raises(HostcError, match="drop --arch"):
        api.import_source("hwloc", api.read_source(other), file="g.xml", arch="aarch64")
    r = _hostc("import", "hwloc", path, "--arch", "x86_64", cwd=Path.cwd())
    assert r.returncode == 0 and 'arch = "x86_64"' in r.stdout, r.stderr


def test_shared_machine_from_three_tools(tmp_path: Path) -> None:
    """The ASUS ESC8000A-E12 of the corpus: lscpu -e, numactl and nvidia-smi of one host."""
    root = shared("topologies")
    files = [
        ("lscpu", root / "lscpu/asus-esc8000a-e12-2s-epyc-64cpu-smt-off-lscpu-e.txt"),
        ("numactl", root / "numactl/asus-esc8000a-e12-2s-epyc-2node-numactl-hardware.txt"),
        ("nvidia-smi", root / "nvidia-smi/asus-esc8000a-e12-4gpu-rtx6000ada-4nic.txt"),
    ]
    topo = None
    for kind, path in files:
        topo = api.import_source(kind, api.read_source(path), file=str(path), base=topo)
    assert topo is not None
    assert len(topo.cpus) == 64 and all(c.core is not None for c in topo.cpus)
    assert all(n.memory_mib and n.distances for n in topo.nodes)
    assert [g.node for g in topo.gpus] == [0, 0, 1, 1] and len(topo.nics) == 4
    assert topo.unknown == ()
    assert snapshot.loads(api.dumps_snapshot(topo)) == topo


def test_an_import_onto_a_probed_snapshot_keeps_the_machine_facts() -> None:
    """The hypervisor flag and the drivers `hostc probe` records survive an import onto
    the snapshot, and two sides that disagree on them are a conflict (first-day-3 F5)."""
    import attrs

    base = attrs.evolve(
        api.import_source("lscpu", LSCPU, file="l.txt"),
        hypervisor=True,
        cpufreq_driver="none",
        cpuidle_driver="haltpoll",
    )
    merged = api.import_source("numactl", NUMACTL, file="n.txt", base=base)
    assert (merged.hypervisor, merged.cpufreq_driver, merged.cpuidle_driver) == (
        True,
        "none",
        "haltpoll",
    )
    other = attrs.evolve(base, cpufreq_driver="acpi-cpufreq")
    from hostc.topology.merge import merge

    with pytest.raises(HostcError) as e:
        merge(base, other, base_file="a.toml", new_file="b.toml")
    assert "cpufreq driver: a.toml says none, b.toml says acpi-cpufreq" in str(e.value)
