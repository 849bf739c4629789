"""hostc probe's engine: fake Linux roots in, Topology out; captures probe the same."""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import tarfile
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostc.api import capture
from hostc.diagnostics import HostcError
from hostc.topology import snapshot
from hostc.topology.importers import sysfs
from hostc.topology.importers.sysfs import probe
from hostc.topology.model import Gpu, LogicalCpu, Nic, NumaNode, Topology
from hostc.topology.validate import validate

from sysfs_fixtures import (
    GIB_KIB,
    SMI_TOPO_4GPU,
    FCpu,
    FHost,
    FNode,
    FPci,
    build,
    distances,
    smt_host,
    two_socket_gpu_host,
)

HP = {"2M": 1024, "1G": 4}


def nic(addr: str, node: int) -> FPci:
    return FPci(addr, 0x020000, 0x8086, 0x159B, node, net=(f"eth{addr[-3]}",))


def test_two_socket_gpu_host(tmp_path: Path) -> None:
    def cpu(i: int, core: int, package: int) -> LogicalCpu:
        return LogicalCpu(i, core=core, package=package, node=package, die=package)

    expected = Topology(
        arch="x86_64",
        cpus=[
            cpu(0, 0, 0),
            cpu(1, 1, 0),
            cpu(2, 2, 0),
            cpu(3, 3, 0),
            cpu(4, 4, 1),
            cpu(5, 5, 1),
            cpu(6, 6, 1),
            cpu(7, 7, 1),
            cpu(8, 0, 0),
            cpu(9, 1, 0),
            cpu(10, 2, 0),
            cpu(11, 3, 0),
            cpu(12, 4, 1),
            cpu(13, 5, 1),
            cpu(14, 6, 1),
            cpu(15, 7, 1),
        ],
        nodes=[NumaNode(0, 65536, [10, 21], HP), NumaNode(1, 65536, [21, 10], HP)],
        source="probe",
        kernel="6.8.0-45-generic",
        hugepage_sizes=["2M", "1G"],
        gpus=[
            Gpu("GPU0", "0000:17:00.0", 0, "NVIDIA", "10de:2330"),
            Gpu("GPU1", "0000:3d:00.0", 0, "NVIDIA", "10de:2330"),
            Gpu("GPU2", "0000:99:00.0", 1, "NVIDIA", "10de:2330"),
            Gpu("GPU3", "0000:b1:00.0", 1, "NVIDIA", "10de:2330"),
        ],
        nics=[
            Nic("mlx5_0", "0000:1a:00.0", 0, "ibp26s0", "mlx5_0", "Mellanox"),
            Nic("ens1f0", "0000:c1:00.0", 1, "ens1f0", None, "Intel"),
        ],
    )
    topo = probe(build(two_socket_gpu_host(), tmp_path))
    assert topo == expected
    assert validate(topo) == []
    assert str(topo.siblings(3)) == "3,11"


def test_offline_cpus(tmp_path: Path) -> None:
    topo = probe(build(smt_host(1, 4, 2, 1, offline={5, 6, 7}), tmp_path))
    by_id = {c.id: c for c in topo.cpus}
    assert [c.id for c in topo.cpus] == list(range(8))
    for i in (5, 6, 7):
        assert by_id[i] == LogicalCpu(i, online=False)
    assert by_id[1] == LogicalCpu(1, core=1, package=0, node=0, die=0)  # its sibling 5 is offline
    assert by_id[4] == LogicalCpu(4, core=0, package=0, node=0, die=0)
    assert str(topo.online) == "0-4"
    assert str(topo.node_cpus(0)) == "0-4"


def test_online_state_from_top_level_list(tmp_path: Path) -> None:
    """Without per-CPU online files the kernel's online list decides."""
    host = smt_host(1, 2, 1, 1, offline={1})
    host = replace(host, overrides={"sys/devices/system/cpu/cpu1/online": None})
    assert [c.online for c in probe(build(host, tmp_path)).cpus] == [True, False]


def test_cpuless_node(tmp_path: Path) -> None:
    base = smt_host(2, 2, 1, 2)
    table = distances(3)
    nodes = (
        *(replace(n, distances=table[n.id]) for n in base.nodes or ()),
        FNode(2, 256 * GIB_KIB, table[2]),
    )
    topo = probe(build(replace(base, nodes=nodes), tmp_path))
    assert topo.node_ids() == [0, 1, 2]
    assert topo.node(2) == NumaNode(2, 256 * 1024, [21, 21, 10], {"2M": 0, "1G": 0})
    assert not topo.node_cpus(2)
    assert str(topo.node_cpus(1)) == "2-3"


@pytest.mark.parametrize(
    ("nodes", "want"),
    [(2, None), (1, 0)],
    ids=["two-nodes-unknown", "one-node-is-node-0"],
)
def test_device_without_numa_node(tmp_path: Path, nodes: int, want: int | None) -> None:
    host = replace(smt_host(nodes, 2, 1, nodes), pci=(nic("0000:5e:00.0", -1),))
    assert probe(build(host, tmp_path)).nics[0].node == want


def test_no_numa_sysfs_is_one_node(tmp_path: Path) -> None:
    """Non-NUMA kernels and containers: one node, memory from /proc/meminfo."""
    host = replace(
        smt_host(1, 2, 2, 1), nodes=None, meminfo_kib=8 * GIB_KIB, pci=(nic("0000:5e:00.0", -1),)
    )
    topo = probe(build(host, tmp_path))
    assert topo.nodes == (NumaNode(0, 8192, (10,), {"2M": 0, "1G": 0}),)
    assert {c.node for c in topo.cpus} == {0}
    assert topo.nics[0].node == 0
    assert topo.unknown == ()


def test_missing_memory_is_unknown(tmp_path: Path) -> None:
    host = replace(smt_host(1, 1, 1, 1), nodes=None, overrides={"proc/meminfo": None})
    topo = probe(build(host, tmp_path))
    assert topo.nodes[0].memory_mib is None
    assert topo.unknown == ("memory",)


def test_intel_hybrid_kinds(tmp_path: Path) -> None:
    host = replace(smt_host(1, 4, 1, 1), hybrid={"cpu_core": "0-1", "cpu_atom": "2-3"})
    kinds = [c.kind for c in probe(build(host, tmp_path)).cpus]
    assert kinds == ["IntelCore", "IntelCore", "IntelAtom", "IntelAtom"]


def test_arm64_capacity_kinds_and_unknown_ids(tmp_path: Path) -> None:
    cpus = tuple(
        FCpu(i, i, -1, die=None, cluster=i // 2, capacity=(512 if i < 2 else 1024))
        for i in range(4)
    )
    host = FHost(
        cpus,
        (FNode(0, 8 * GIB_KIB, (10,)),),
        arch="aarch64",
        hugepage_sizes_kib=(64, 2048, 32768, GIB_KIB),
    )
    topo = probe(build(host, tmp_path))
    assert topo.cpus[0] == LogicalCpu(0, core=0, node=0, cluster=0, kind="capacity-512")
    assert topo.cpus[3] == LogicalCpu(3, core=3, node=0, cluster=1, kind="capacity-1024")
    assert topo.arch == "aarch64"
    assert topo.hugepage_sizes == ("64K", "2M", "32M", "1G")


def test_uniform_capacity_means_no_kinds(tmp_path: Path) -> None:
    cpus = tuple(FCpu(i, i, capacity=1024) for i in range(2))
    topo = probe(build(FHost(cpus, (FNode(0, GIB_KIB, (10,)),), arch=None), tmp_path))
    assert [c.kind for c in topo.cpus] == [None, None]
    assert topo.arch == "unknown"  # not the live host: never fall back to this machine's


def test_core_from_core_id_without_sibling_lists(tmp_path: Path) -> None:
    host = smt_host(1, 2, 2, 1)
    gone: dict[str, str | None] = {}
    for i in range(4):
        t = f"sys/devices/system/cpu/cpu{i}/topology"
        gone |= {f"{t}/thread_siblings_list": None, f"{t}/core_cpus_list": None}
    topo = probe(build(replace(host, overrides=gone), tmp_path))
    assert [c.core for c in topo.cpus] == [0, 1, 0, 1]
    assert topo.unknown == ()


def test_snapshot_round_trip(tmp_path: Path) -> None:
    topo = probe(build(two_socket_gpu_host(), tmp_path))
    assert snapshot.loads(snapshot.dumps(topo)) == topo


def test_capture_round_trip(tmp_path: Path) -> None:
    root = build(two_socket_gpu_host(), tmp_path / "root")
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    names = capture(first, root)
    assert capture(second, root) == names
    assert first.read_bytes() == second.read_bytes()
    assert probe(first) == probe(root)
    assert "sys/bus/pci/devices/0000:17:00.0/class" in names
    assert "sys/bus/pci/devices/0000:1a:00.0/infiniband/mlx5_0" in names
    assert not any("MemFree" in n or n.endswith("/irq") for n in names)
    with tarfile.open(first) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == sorted(m.name for m in members)
        assert all(m.isfile() or m.isdir() for m in members)
        assert {(m.mtime, m.uid, m.gid) for m in members} == {(0, 0, 0)}
        assert {m.mode for m in members if m.isfile()} == {0o644}
        meminfo = tar.extractfile("sys/devices/system/node/node0/meminfo")
        assert meminfo is not None
        assert meminfo.read() == b"Node 0 MemTotal:       67108864 kB\n"
    assert first.read_bytes()[4:8] == b"\0\0\0\0"  # gzip mtime


def test_capture_keeps_garbage_for_reproduction(tmp_path: Path) -> None:
    bad = {"sys/devices/system/cpu/cpu1/topology/core_id": "banana\n"}
    root = build(replace(smt_host(1, 2, 1, 1), overrides=bad), tmp_path / "root")
    capture(tmp_path / "c.tar.gz", root)
    with pytest.raises(HostcError, match="banana"):
        probe(tmp_path / "c.tar.gz")


def test_live_probe() -> None:
    topo = probe(Path("/"), run_nvidia_smi=False)
    assert validate(topo) == []
    assert len(topo.online) >= 1
    assert len(topo.nodes) >= 1
    assert topo.source == "probe"
    assert snapshot.loads(snapshot.dumps(topo)) == topo
    assert probe(Path("/"), run_nvidia_smi=False) == topo


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="capture would add GPU links")
def test_live_capture_round_trip(tmp_path: Path) -> None:
    capture(tmp_path / "live.tar.gz")
    assert probe(tmp_path / "live.tar.gz") == probe(Path("/"), run_nvidia_smi=False)


def _fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    exe = tmp_path / "bin" / "nvidia-smi"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n" + script + "\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}")


def test_nvidia_smi_failure_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_smi(tmp_path, monkeypatch, "echo 'NVIDIA-SMI has failed' >&2; exit 9")
    topo = probe(Path("/"))
    assert "nvidia-smi: exit status 9: NVIDIA-SMI has failed" in topo.notes
    assert probe(Path("/"), run_nvidia_smi=False).notes == tuple(
        u for u in topo.notes if not u.startswith("nvidia-smi")
    )


def test_nvidia_smi_timeout_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_smi(tmp_path, monkeypatch, "exec sleep 10")
    monkeypatch.setattr(sysfs, "SMI_TIMEOUT_S", 0.2)
    assert "nvidia-smi: timed out after 0.2 s" in probe(Path("/")).notes


@pytest.mark.skipif(
    importlib.util.find_spec("hostc.topology.importers.nvidia_smi") is None,
    reason="the nvidia-smi importer is not in this tree",
)
def test_nvidia_smi_merge(tmp_path: Path) -> None:
    plain = build(two_socket_gpu_host(), tmp_path / "plain")
    given_text = probe(plain, nvidia_smi_topo=SMI_TOPO_4GPU)
    stored = build(replace(two_socket_gpu_host(), smi_text=SMI_TOPO_4GPU), tmp_path / "stored")
    assert probe(stored) == given_text
    assert given_text.links
    assert [g.name for g in given_text.gpus] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert given_text.source == "probe"
    assert validate(given_text) == []
    names = capture(tmp_path / "c.tar.gz", stored)
    assert "hostc/nvidia-smi-topo.txt" in names
    assert probe(tmp_path / "c.tar.gz") == given_text


def _tar_with(path: Path, name: str, kind: bytes = tarfile.REGTYPE) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(name)
        info.type = kind
        if kind == tarfile.SYMTYPE:
            info.linkname = "/etc/passwd"
        tar.addfile(info, io.BytesIO(b""))
    return path


CPU = "sys/devices/system/cpu"
BAD_FILES = {
    "garbage-cpulist": ({"sys/devices/system/node/node0/cpulist": "0-x\n"}, "node0/cpulist"),
    "garbage-online-list": ({f"{CPU}/online": "all\n"}, f"{CPU}/online"),
    "non-numeric-core-id": ({f"{CPU}/cpu1/topology/core_id": "one\n"}, "core_id"),
    "online-flag-2": ({f"{CPU}/cpu1/online": "2\n"}, "cpu1/online"),
    "short-distances": ({"sys/devices/system/node/node0/distance": "10\n"}, "distance"),
    "meminfo-without-total": ({"sys/devices/system/node/node1/meminfo": "hi\n"}, "meminfo"),
    "hex-class": ({"sys/devices/pci0000:5e/0000:5e:00.0/class": "net\n"}, "class"),
    "cpu-in-two-nodes": ({"sys/devices/system/node/node1/cpulist": "0-1\n"}, "node1/cpulist"),
}


@pytest.mark.parametrize(("overrides", "where"), BAD_FILES.values(), ids=BAD_FILES.keys())
def test_garbage_files(tmp_path: Path, overrides: dict[str, str | None], where: str) -> None:
    host = replace(smt_host(2, 1, 1, 2), pci=(nic("0000:5e:00.0", 0),), overrides=overrides)
    with pytest.raises(HostcError) as info:
        probe(build(host, tmp_path))
    assert [d.file for d in info.value.diagnostics if d.file and where in d.file], info.value


def test_bad_roots(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    cases = [
        tmp_path / "empty",
        tmp_path / "missing",
        _tar_with(tmp_path / "evil.tar.gz", "../evil"),
        _tar_with(tmp_path / "abs.tar.gz", "/etc/evil"),
        _tar_with(tmp_path / "link.tar.gz", "sys", tarfile.SYMTYPE),
    ]
    (tmp_path / "notatar.tar.gz").write_bytes(b"\x1f\x8bgarbage")
    cases.append(tmp_path / "notatar.tar.gz")
    for root in cases:
        with pytest.raises(HostcError) as info:
            probe(root)
        assert info.value.diagnostics[0].file is not None
    assert not (tmp_path.parent / "evil").exists()


def test_unreadable_and_binary_files(tmp_path: Path) -> None:
    root = build(smt_host(1, 2, 1, 1), tmp_path)
    (root / f"{CPU}/cpu1/topology/physical_package_id").write_bytes(b"\xff\xfe\n")
    (root / f"{CPU}/cpu0/topology/core_id").unlink()
    (root / f"{CPU}/cpu0/topology/core_id").mkdir()  # reading a directory: EISDIR
    with pytest.raises(HostcError) as info:
        probe(root)
    files = sorted(d.file or "" for d in info.value.diagnostics)
    assert [f.rsplit("/", 1)[-1] for f in files] == ["core_id", "physical_package_id"]


def test_probe_never_records_the_kernel_command_line(tmp_path: Path) -> None:
    """first-day-4 I2: the snapshot kept the whole /proc/cmdline (565 characters, the VM
    agent's flags among them), and a fleet repository commits snapshots; a command line
    can carry a URL with credentials."""
    root = build(smt_host(1, 2, 1, 1), tmp_path)
    secret = "ds=nocloud-net;s=https://user:secret@seed.example/ root=/dev/sda1"
    (root / "proc/cmdline").write_text(secret + "\n")
    topo = probe(root)
    assert topo.cmdline is None
    assert "secret" not in snapshot.dumps(topo)


@settings(max_examples=40, deadline=None)
@given(
    packages=st.integers(1, 2),
    nodes=st.integers(1, 2),
    cores=st.integers(1, 4),
    smt=st.integers(1, 2),
    offline=st.sets(st.integers(1, 15), max_size=6),
)
def test_property_cpu_mapping(
    packages: int, nodes: int, cores: int, smt: int, offline: set[int]
) -> None:
    host = smt_host(packages, cores, smt, nodes, offline)
    want: dict[int, tuple[int | None, int | None, int | None]] = {}
    for c in host.cpus:
        if c.online:
            core = min(
                s.id
                for s in host.cpus
                if s.online and (s.package, s.core_id) == (c.package, c.core_id)
            )
            want[c.id] = (core, c.package, c.node)
        else:
            want[c.id] = (None, None, None)
    with tempfile.TemporaryDirectory() as tmp:
        topo = probe(build(host, Path(tmp)))
    assert {c.id: (c.core, c.package, c.node) for c in topo.cpus} == want
    assert topo.node_ids() == list(range(nodes))


def test_kernel_build_options_are_read_from_boot_config(tmp_path: Path) -> None:
    """Only the options hostc consults are kept; `is not set` reads as n."""
    root = build(smt_host(1, 2, 2, 1), tmp_path)
    config = root / "boot/config-6.8.0-45-generic"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "CONFIG_SMP=y\nCONFIG_NO_HZ_FULL=y\n# CONFIG_RCU_NOCB_CPU is not set\n"
        'CONFIG_CPU_ISOLATION=y\nCONFIG_SECRET_THING="x"\n'
    )
    topo = probe(root)
    assert topo.kernel_config == {
        "CONFIG_NO_HZ_FULL": "y",
        "CONFIG_RCU_NOCB_CPU": "n",
        "CONFIG_CPU_ISOLATION": "y",
    }
    back = snapshot.loads(snapshot.dumps(topo), "s.toml")
    assert back.kernel_config == topo.kernel_config
    # a capture carries the options (and only them) to the machine that compiles
    archive = tmp_path / "c.tar.gz"
    assert "boot/config-6.8.0-45-generic" in capture(archive, root)
    assert probe(archive).kernel_config == topo.kernel_config
    with tarfile.open(archive) as tar:
        member = tar.extractfile("boot/config-6.8.0-45-generic")
        assert member is not None
        assert b"SECRET" not in member.read()


def test_no_boot_config_means_unknown_options(tmp_path: Path) -> None:
    assert probe(build(smt_host(1, 2, 2, 1), tmp_path)).kernel_config == {}
