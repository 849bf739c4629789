"""NVIDIA GPU daemons: what a CUDA workload waits for on an NVSwitch host.

- On an NVSwitch system (DGX/HGX A100, H100, H200, B200: the 8-GPU baseboards) the GPUs
  are wired to the NVSwitches, not to each other; Fabric Manager (nvidia-fabricmanager.
  service) trains the NVLinks and programs the switches at boot.  NVIDIA Fabric Manager
  User Guide (§ "NVSwitch-based systems", "GPU initialization"): an application that
  starts before Fabric Manager has initialised the system fails CUDA initialisation with
  cudaErrorSystemNotReady (802: "the system is not yet ready to start any CUDA work …
  verify … all required driver daemons are actively running", CUDA Runtime API, Data
  types, cudaError).
- `nvidia-smi topo -m` shows the NVSwitch only through the GPU pairs: each pair of GPUs
  behind the switches reports every link the GPU has (`NV18` on H100/H200, `NV12` on
  A100, `NV6` on V100 DGX-2), so a GPU's NV# counts add up past the links one GPU has.
  Boards with direct NVLinks split the GPU's links among its peers (HGX 4-GPU: `NV6` to
  each of three peers on H100), whose sum never exceeds them.
- systemd.unit(5), `After=`: an ordering dependency is "independent of and orthogonal to
  the requirement dependencies"; it orders two units only when both are started, so a
  host without one of the daemons is neither delayed nor failed (no `Wants=`).
"""

from __future__ import annotations

from hostc.knowledge.table import Table

_H100 = (
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper: 18 fourth-generation NVLink links "
    "per GPU; Blackwell (B200) keeps 18 fifth-generation links"
)

#: The most NVLink links one GPU has (any generation hostc knows): a GPU whose NV# counts
#: to its peers add up past it reaches them through NVSwitches.
MAX_NVLINKS_PER_GPU = 18
NVLINK_SOURCE = _H100

_FM_GUIDE = (
    "NVIDIA Fabric Manager User Guide (NVSwitch-based systems: CUDA initialisation fails "
    "with cudaErrorSystemNotReady until Fabric Manager has initialised the fabric)"
)
_PERSISTENCED = (
    "NVIDIA Driver Persistence (nvidia-persistenced keeps the GPUs initialised; Fabric "
    "Manager User Guide: the GPUs are registered with the fabric while the driver is loaded)"
)

#: The module hostc-gpudirect.service loads (`modprobe nvidia-peermem`) where the GPUDirect
#: RDMA mode asks for it: NVIDIA's peer-memory client for the RDMA stack (CUDA GPUDirect
#: RDMA guide, "Using nvidia-peermem"; targets/templates/hostc-gpudirect.sh.j2).
PEERMEM_MODULE = "nvidia-peermem"

#: The units a CUDA workload starts after on an NVSwitch host (only ordered: After=).
NVSWITCH_DAEMONS: Table[str, str] = Table(
    {
        "nvidia-fabricmanager.service": ("has trained the NVLink fabric", _FM_GUIDE),
        "nvidia-persistenced.service": (
            "keeps the GPUs initialised between CUDA clients",
            _PERSISTENCED,
        ),
    }
)


def nvswitch(nv_counts: dict[str, dict[str, int]]) -> bool:
    """Whether a GPU reaches its peers through NVSwitches: `nv_counts[gpu][peer]` is the
    NV# of the pair; more links in total than one GPU has means shared switch links."""
    return any(
        len(peers) > 1 and sum(peers.values()) > MAX_NVLINKS_PER_GPU for peers in nv_counts.values()
    )
