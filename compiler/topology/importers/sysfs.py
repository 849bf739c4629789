"""Read Linux's own description of the machine (sysfs, procfs) into a Topology.

Everything is read relative to a root so that the live host, a capture archive
and a test fixture go through the same code.  Every missing-but-required,
unreadable or malformed file becomes a diagnostic naming that file: a probe that
dies with a traceback on one odd sysfs file is useless on exactly the machines
someone is trying to debug.  Only facts that stay put across reboots of the same
hardware are recorded, so two probes of one host give the same snapshot.

The readers live by what they read: sysfs_reader (the lenient file reader),
sysfs_cpus, sysfs_memory (NUMA nodes, hugepages), sysfs_pci (GPUs, NICs) and
sysfs_os (os-release, kernel config); this module puts their answers together
and adds nvidia-smi's view of the GPUs.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from pathlib import Path

import attrs

from hostc.diagnostics import HostcError, file_error, with_file
from hostc.topology.importers import nvidia_smi
from hostc.topology.importers.archive import extracted
from hostc.topology.importers.sysfs_cpus import (
    CPU_DIR,
    cpu_identity,
    drivers,
    hypervisor_flag,
    read_cpus,
)
from hostc.topology.importers.sysfs_memory import HUGEPAGE_DIR, NODE_DIR, hugepage_dirs, read_nodes
from hostc.topology.importers.sysfs_os import kernel_config, os_release
from hostc.topology.importers.sysfs_pci import read_devices
from hostc.topology.importers.sysfs_reader import FILE_LIMIT, Reader
from hostc.topology.model import Topology
from hostc.topology.validate import validate
from hostc.units import format_kib

SMI_FILE = "hostc/nvidia-smi-topo.txt"
SMI_TIMEOUT_S = 20.0


def _strip(text: str | None) -> str | None:
    return None if text is None else text.strip() or None


def collect(r: Reader, *, live: bool) -> tuple[Topology, str | None]:
    """The unvalidated Topology and any stored nvidia-smi text; problems go to `r.errors`.

    Shared by probe and capture, so the capture holds what this function reads.
    """
    cpus, unknown = read_cpus(r)
    nodes, cpus, more = read_nodes(r, cpus)
    unknown += more
    sizes = [format_kib(k) for k in hugepage_dirs(r, HUGEPAGE_DIR)]
    gpus, nics = read_devices(r, nodes[0].id if len(nodes) == 1 else None)
    kernel = _strip(r.text("proc/sys/kernel/osrelease"))
    arch = _strip(r.text("proc/sys/kernel/arch"))
    if live:
        kernel = kernel or platform.release() or None
        arch = arch or platform.machine() or None
    vendor, model = cpu_identity(r, arch)
    cpufreq, cpuidle = drivers(r, live=live)
    topo = Topology(
        arch=arch or "unknown",
        cpus=tuple(cpus),
        nodes=tuple(nodes),
        source="probe",
        kernel=kernel,
        hugepage_sizes=tuple(sizes),
        gpus=tuple(gpus),
        nics=tuple(nics),
        unknown=tuple(unknown),
        cpu_vendor=vendor,
        cpu_model=model,
        os=os_release(r),
        kernel_config=kernel_config(r, kernel),
        hypervisor=hypervisor_flag(r),
        cpufreq_driver=cpufreq,
        cpuidle_driver=cpuidle,
    )
    return topo, r.text(SMI_FILE, limit=FILE_LIMIT)


def run_nvidia_smi() -> tuple[str | None, str | None]:
    """(output, note) of `nvidia-smi topo -m`; a wedged driver must not stop a CPU probe."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None, None
    try:
        done = subprocess.run(
            [exe, "topo", "-m"],
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=SMI_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"nvidia-smi: timed out after {SMI_TIMEOUT_S:g} s"
    except OSError as e:
        return None, f"nvidia-smi: {e.strerror or e}"
    if done.returncode != 0:
        why = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return None, f"nvidia-smi: exit status {done.returncode}" + (f": {why[0]}" if why else "")
    return done.stdout, None


def _is_live(root: Path) -> bool:
    try:
        return root.resolve() == Path("/")
    except OSError:
        return False


def _probe_tree(r: Reader, *, live: bool, smi_text: str | None, run_smi: bool) -> Topology:
    topo, stored = collect(r, live=live)
    if r.errors:
        raise HostcError(r.errors)
    notes: list[str] = []
    text = smi_text if smi_text is not None else stored
    if text is None and live and run_smi:
        text, note = run_nvidia_smi()
        notes += [note] if note else []
    if text is not None:
        topo = nvidia_smi.merge(topo, nvidia_smi.parse(text, "nvidia-smi topo -m"))
    topo = attrs.evolve(topo, source="probe", notes=(*topo.notes, *notes))
    problems = validate(topo)
    if problems:
        raise HostcError(with_file(problems, r.where(NODE_DIR if r.is_dir(NODE_DIR) else CPU_DIR)))
    return topo


def probe(
    root: Path = Path("/"), *, nvidia_smi_topo: str | None = None, run_nvidia_smi: bool = True
) -> Topology:
    """Probe the host under `root` (a directory, or a `.tar.gz` made by capture)."""
    if root.is_file():
        with extracted(root) as tree:
            r = Reader(tree, display=str(root))
            return _probe_tree(r, live=False, smi_text=nvidia_smi_topo, run_smi=False)
    if not root.is_dir():
        raise HostcError([file_error(str(root), "no such directory or capture archive")])
    return _probe_tree(
        Reader(root), live=_is_live(root), smi_text=nvidia_smi_topo, run_smi=run_nvidia_smi
    )
