"""Host facts in the snapshot: CPU vendor and model, os-release, OS family, from every source."""

from __future__ import annotations

import io
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from hostc import api
from hostc.diagnostics import HostcError
from hostc.knowledge.vendor import cpu_vendor
from hostc.topology import snapshot
from hostc.topology.importers import hwloc, lscpu
from hostc.topology.model import OsRelease

from conftest import ROOT, shared
from sysfs_fixtures import build, two_socket_gpu_host


def os_family(release: OsRelease | None) -> str:
    return "unknown" if release is None else release.family


OS_RELEASE = """\
PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
"""

CPUINFO = """\
processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Platinum 8480C
flags\t\t: fpu vme de pse
bogomips\t: 4000.00

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480C
"""


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("GenuineIntel", "intel"),
        ("AuthenticAMD", "amd"),
        ("HygonGenuine", "hygon"),
        ("0x41", "arm"),
        ("0xc0", "ampere"),
        ("0x4e", "nvidia"),
        ("ARM", "arm"),
        ("CentaurHauls", "centaurhauls"),
        ("", None),
        (None, None),
    ],
)
def test_cpu_vendor_is_normalised(raw: str | None, want: str | None) -> None:
    assert cpu_vendor(raw) == want


@pytest.mark.parametrize(
    ("release", "family"),
    [
        (OsRelease("ubuntu", "22.04", ["debian"]), "debian"),
        (OsRelease("debian", "12"), "debian"),
        (OsRelease("pop", "22.04", ["ubuntu", "debian"]), "debian"),
        (OsRelease("rhel", "9.4", ["fedora"]), "rhel"),
        (OsRelease("rocky", "9.3", ["rhel", "centos", "fedora"]), "rhel"),
        (OsRelease("almalinux", "9.3"), "rhel"),
        (OsRelease("ol", "8.9"), "rhel"),
        (OsRelease("fedora", "40"), "rhel"),
        (OsRelease("fedora-coreos", "40", ["fedora"]), "coreos"),
        (OsRelease("rhcos", "4.16", ["rhel", "fedora"]), "coreos"),
        (OsRelease("flatcar", "3815", ["coreos"]), "coreos"),
        (OsRelease("sles", "15.5", ["suse"]), "suse"),
        (OsRelease("opensuse-leap", "15.5", ["suse", "opensuse"]), "suse"),
        (OsRelease("arch"), "unknown"),
        (None, "unknown"),
    ],
)
def test_os_family(release: OsRelease | None, family: str) -> None:
    assert os_family(release) == family


# Machines of the shared corpus whose vendor the README names.
VENDORS = {
    "AMD-19h-Zen4-2xEpyc-9654.xml": "amd",
    "AMD-17h-Zen-2xEpyc-7451.xml": "amd",
    "AMD-1Ah-Zen5StrixPoint-RyzenAI9HX370.xml": "amd",
    "eas-tioga.xml": "amd",
    "topo.jrc0323.xml": "amd",
    "chimera.xml": "amd",
    "16amd64-4distances.v1.xml": "amd",
    "Intel-RaptorLake-Corei7-1370P.xml": "intel",
    "g4dnmetal.xml": "intel",
    "nvidiaDGX2.xml": "intel",
    "memorysidecaches.xml": "intel",
    "topo.dp-intelmax01-flat.xml": "intel",
    "cts1-quartz-smt1.xml": "intel",
    "192em64t-12gr2n8c2t.xml": "intel",
    "nvidia-dgx-gb10.xml": "arm",
    "coral-lassen.xml": "ibm",
}


def test_shared_machines_import_with_their_vendor() -> None:
    folder = shared("topologies", "hwloc")
    got = {}
    for name in VENDORS:
        path = folder / name
        topo = hwloc.parse(api.read_source(path), str(path))
        got[name] = topo.cpu_vendor
        assert topo.cpu_model or topo.arch == "aarch64", name  # arm64 names no model
        # and the snapshot keeps it
        assert snapshot.loads(snapshot.dumps(topo)).cpu_vendor == topo.cpu_vendor
    assert got == VENDORS


def test_every_x86_file_of_the_corpus_has_intel_or_amd() -> None:
    folder = shared("topologies", "hwloc")
    for path in sorted(folder.glob("*.xml")):
        text = path.read_text()
        if "GenuineIntel" in text or "AuthenticAMD" in text:
            vendor = hwloc.parse(text, str(path)).cpu_vendor
            assert vendor == ("intel" if "GenuineIntel" in text else "amd"), path.name


def test_lscpu_summary_gives_vendor_model_and_arch() -> None:
    text = (
        "Architecture:            x86_64\n"
        "  CPU op-mode(s):        32-bit, 64-bit\n"
        "Vendor ID:               AuthenticAMD\n"
        "  Model name:            AMD EPYC 9554 64-Core Processor\n"
        "\n"
        "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n"
    )
    topo = lscpu.parse(text, "lscpu.txt")
    assert (topo.arch, topo.cpu_vendor, topo.cpu_model) == (
        "x86_64",
        "amd",
        "AMD EPYC 9554 64-Core Processor",
    )
    # lscpu -p alone has no vendor, and that is fine
    plain = lscpu.parse("# CPU,Core,Socket,Node\n0,0,0,0\n", "p.txt")
    assert plain.cpu_vendor is None and plain.arch == "unknown"


def _host(tmp_path: Path, files: dict[str, str | None] | None = None) -> Path:
    host = two_socket_gpu_host()
    return build(replace(host, overrides={**host.overrides, **(files or {})}), tmp_path / "root")


def test_probe_reads_os_release_and_cpuinfo(tmp_path: Path) -> None:
    root = _host(tmp_path, {"etc/os-release": OS_RELEASE, "proc/cpuinfo": CPUINFO})
    topo = api.probe(root)
    assert topo.os == OsRelease("ubuntu", "22.04", ["debian"])
    assert (topo.cpu_vendor, topo.cpu_model) == ("intel", "Intel(R) Xeon(R) Platinum 8480C")
    assert os_family(topo.os) == "debian"
    # the capture holds what probe needs, and only that part of the files
    archive = tmp_path / "cap.tar.gz"
    names = api.capture(archive, root)
    assert "etc/os-release" in names and "proc/cpuinfo" in names
    with tarfile.open(archive) as tar:
        cpuinfo = tar.extractfile("proc/cpuinfo").read().decode()  # type: ignore[union-attr]
        osr = tar.extractfile("etc/os-release").read().decode()  # type: ignore[union-attr]
    # of the flags only whether `hypervisor` is among them (here: not)
    flags = [ln for ln in cpuinfo.splitlines() if ln.startswith("flags")]
    assert flags == ["flags\t\t:"] and cpuinfo.count("vendor_id") == 1
    assert "HOME_URL" not in osr and "ID=ubuntu" in osr
    again = api.probe(archive)
    assert again == topo


def test_os_release_falls_back_to_usr_lib(tmp_path: Path) -> None:
    root = _host(tmp_path)
    (root / "usr/lib").mkdir(parents=True)
    (root / "usr/lib/os-release").write_text('ID="rhel"\nVERSION_ID="9.4"\nID_LIKE="fedora"\n')
    topo = api.probe(root)
    assert topo.os == OsRelease("rhel", "9.4", ["fedora"]) and os_family(topo.os) == "rhel"


@pytest.mark.parametrize("bad", ["ID=Ubuntu\n", 'ID="ubu ntu"\n', "ID=ubuntu;rm\n", "NAME=x\n"])
def test_bad_os_release_is_an_error_naming_the_file(tmp_path: Path, bad: str) -> None:
    root = _host(tmp_path)
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc/os-release").write_text(bad)
    with pytest.raises(HostcError) as e:
        api.probe(root)
    assert any(str(d.file).endswith("etc/os-release") for d in e.value.diagnostics), e.value


def test_snapshot_os_ids_are_validated() -> None:
    import attrs

    from topogen import machine

    topo = attrs.evolve(machine(packages=1, cores_per_node=2, smt=1), os=OsRelease("Ubuntu"))
    with pytest.raises(HostcError) as e:
        snapshot.loads(snapshot.dumps(topo), "s.toml")
    assert [str(d.path) for d in e.value.diagnostics] == ["os.id"]


def test_arm_cpuinfo_implementer(tmp_path: Path) -> None:
    root = _host(tmp_path, {"proc/cpuinfo": "processor\t: 0\nCPU implementer\t: 0x41\n"})
    assert api.probe(root).cpu_vendor == "arm"


def test_examples_carry_vendor_and_os() -> None:
    root = ROOT / "examples"
    got = {
        p.parent.name: (t.cpu_vendor, os_family(t.os), t.os.version_id if t.os else None)
        for p in root.glob("*/topology.toml")
        if (t := snapshot.read(p))
    }
    assert got["h100-4gpu-inference"] == ("intel", "debian", "22.04")
    assert got["dgx-h100-inference"] == ("intel", "debian", "22.04")
    assert got["epyc-1s-training"] == ("amd", "debian", "22.04")


def test_capture_archive_reads_back_same_bytes(tmp_path: Path) -> None:
    root = _host(tmp_path, {"proc/cpuinfo": CPUINFO})
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    api.capture(a, root)
    api.capture(b, root)
    assert a.read_bytes() == b.read_bytes()
    with tarfile.open(fileobj=io.BytesIO(a.read_bytes())) as tar:
        assert all(m.isfile() or m.isdir() for m in tar.getmembers())
