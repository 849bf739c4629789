"""The synthetic machines behind examples/<name>/topology.toml (`python -m pytest --regen`
writes them; the snapshots are deterministic)."""

from __future__ import annotations

import attrs

from hostc.topology.model import Link, OsRelease

from topogen import machine

# DGX OS 6 is Ubuntu 22.04 underneath, and says so in its os-release.
UBUNTU_2204 = OsRelease(id="ubuntu", version_id="22.04", id_like=["debian"])
RHEL_94 = OsRelease(id="rhel", version_id="9.4", id_like=["fedora"])

EXAMPLES = {
    # 2 sockets, GPU0/1 on node 0 (0-31,64-95), GPU2/3 on node 1 (32-63,96-127)
    "h100-4gpu-inference": machine(
        packages=2,
        cores_per_node=32,
        smt=2,
        memory_mib=524288,
        gpus_per_node=2,
        nics_per_node=1,
        gpu_model="NVIDIA H100 80GB HBM3",
        cpu_vendor="intel",
        cpu_model="Intel(R) Xeon(R) Platinum 8462Y+",
        os=UBUNTU_2204,
    ),
    # DGX-H100-like: 2 × 56-core SMT2, 8 GPUs and 8 compute NICs, 2 TiB, DGX OS 6 (5.15)
    "dgx-h100-inference": machine(
        packages=2,
        cores_per_node=56,
        smt=2,
        memory_mib=1048576,
        gpus_per_node=4,
        nics_per_node=4,
        kernel="5.15.0-1053-nvidia",
        gpu_model="NVIDIA H100 80GB HBM3",
        cpu_vendor="intel",
        cpu_model="Intel(R) Xeon(R) Platinum 8480C",
        os=UBUNTU_2204,
    ),
    # single-socket 64-core training box, 4 GPUs, 512 GiB
    "epyc-1s-training": machine(
        packages=1,
        cores_per_node=64,
        smt=2,
        memory_mib=524288,
        gpus_per_node=4,
        nics_per_node=2,
        kernel="6.8.0-49-generic",
        gpu_model="NVIDIA H100 PCIe",
        cpu_vendor="amd",
        cpu_model="AMD EPYC 9554 64-Core Processor",
        os=UBUNTU_2204,
    ),
    # 2 × 64-core EPYC (Genoa) inference node on RHEL 9.4 (kernel 5.14): grubby, not
    # GRUB drop-ins; acpi_idle's C-state limit only (intel_idle is inert on AMD)
    "epyc-rhel9-inference": machine(
        packages=2,
        cores_per_node=64,
        smt=2,
        memory_mib=786432,
        gpus_per_node=4,
        nics_per_node=2,
        kernel="5.14.0-427.13.1.el9_4.x86_64",
        gpu_model="NVIDIA H100 NVL",
        cpu_vendor="amd",
        cpu_model="AMD EPYC 9534 64-Core Processor",
        os=RHEL_94,
    ),
}


def _dgx_links() -> list[Link]:
    """DGX H100: every GPU shares a PCIe switch with one ConnectX-7 (PIX); GPUs talk over
    NVLink (NV18); the rest of the matrix (NODE/SYS) does not change NIC choice."""
    links = [Link(f"GPU{i}", f"mlx5_{i}", "PIX") for i in range(8)]
    links += [Link(f"GPU{i}", f"GPU{j}", "NV18") for i in range(8) for j in range(i + 1, 8)]
    return links


EXAMPLES["dgx-h100-inference"] = attrs.evolve(EXAMPLES["dgx-h100-inference"], links=_dgx_links())
