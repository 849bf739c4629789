"""The preset tables: typed entries against the settings table (`hostc.settings`);
what the layers leave out on purpose is `hostc.spec.preset_left_out` (re-exported).

An entry names its setting by its row (`t.GOVERNOR`), holds a value of the row's
type, a one-line reason, its layer and the conditions under which it applies.
"""

from __future__ import annotations

from typing import Any, TypeVar

from hostc.knowledge.arch import X86_FAMILY
from hostc.knowledge.vendor import Vendor
from hostc.provenance import Layer
from hostc.settings import table as t
from hostc.settings.model import Setting
from hostc.spec.model_kubelet import Kubelet
from hostc.spec.preset_left_out import LEFT_OUT as LEFT_OUT
from hostc.spec.preset_left_out import REALTIME_LEFT_OUT as REALTIME_LEFT_OUT
from hostc.spec.presets_model import Cond, Entry
from hostc.vocab import (
    Epp,
    Governor,
    IommuMode,
    IrqOwner,
    MemoryManagerPolicy,
    PstateMode,
    RuntimeOwner,
    ThpDefrag,
    ThpMode,
    TopologyPolicy,
)

T = TypeVar("T")
X86 = tuple(X86_FAMILY)


def _e(layer: Layer, setting: Setting[T], value: T, why: str, **cond: Any) -> Entry[T]:
    c = Cond(roles=_roles(layer), pinned=layer.pinned, realtime=layer.realtime, **cond)
    return Entry(layer, setting, value, why, c)


def _roles(layer: Layer) -> tuple[str, ...]:
    return () if layer.role is None else (layer.role,)


#: kernel.rst (numa_balancing): "If the target workload is already bound to NUMA nodes
#: then this feature should be disabled."
_PODS_BOUND_WHY = (
    "the kubelet's Static memory manager under a restricted or single-numa-node topology "
    "policy binds each Guaranteed pod's memory to its NUMA node(s) (cpuset.mems), and "
    "the kernel says to disable NUMA balancing where the workload is already bound "
    "(Documentation/admin-guide/sysctl/kernel.rst): its page scans and hinting faults "
    "would only add jitter; cost: Burstable and BestEffort pods and host daemons no "
    "longer have their pages moved toward the CPUs they run on"
)


#: sched-rt-group.rst, 2.2: the defaults "were chosen so that a run-away real-time tasks
#: will not lock up the machine but leave a little time to recover it".
_RT_THROTTLE_WHY = (
    "real-time threads on the isolated CPUs run as long as they need (TuneD's realtime "
    "profile sets -1 too): by default the "
    "kernel lets a CPU's real-time tasks use 950000 of every 1000000 us and then throttles "
    "them for the rest of the second, a stall of up to 50 ms; -1 removes the limit "
    "(Documentation/scheduler/sched-rt-group.rst); cost: the limit is what keeps a "
    "runaway real-time thread from locking a CPU up, kernel threads bound there (per-CPU "
    "kworkers) included, and work the whole system waits on can then hang"
)


def binds_pods(k: Kubelet | None) -> bool:
    """Whether the kubelet binds Guaranteed pods' memory to their NUMA nodes: a Static
    memory manager whose topology policy admits a pod only on its preferred nodes
    (restricted, single-numa-node).  Under best-effort or none a pod's memory may span
    every node, so the node keeps NUMA balancing for it (the preset says so)."""
    return (
        k is not None
        and k.memory_manager_policy is MemoryManagerPolicy.STATIC
        and k.topology_manager_policy
        in (TopologyPolicy.RESTRICTED, TopologyPolicy.SINGLE_NUMA_NODE)
    )


_CSTATE_WHY = "shallow C-states cut wake-up latency on the hot path (costs idle power)"
_INOTIFY_WHY = (
    "model caches and dataloaders watch many files; the default (8192 before Linux 5.11) "
    "runs out; from 5.11 the default scales with RAM and is left alone"
)

ENTRIES: tuple[Entry[Any], ...] = (
    _e(
        Layer.BASE,
        t.MAX_MAP_COUNT,
        1048576,
        "default 65530 makes loaders of many mmapped weight shards fail with ENOMEM",
    ),
    _e(
        Layer.BASE,
        t.SWAPPINESS,
        1,
        "a swapped-out page is a millisecond fault on the hot path; 1 keeps swap as a last resort",
    ),
    _e(Layer.BASE, t.NOFILE, 1048576, "the 1024 default gives EMFILE and silently stuck servers"),
    _e(
        Layer.BASE,
        t.MEMLOCK,
        "unlimited",
        "pinned (page-locked) host buffers for GPU DMA need unlimited memlock",
    ),
    _e(
        Layer.BASE,
        t.THP,
        ThpMode.MADVISE,
        "THP only where asked: `always` causes 50-100 ms compaction stalls",
    ),
    *(
        _e(
            role,
            t.OVERCOMMIT,
            1,
            "the heuristic mode (0) refuses any single allocation larger than RAM plus swap; "
            "anonymous and private writable memory (host copies of weights, forked loader "
            "workers) counts, read-only or shared file mappings of weights do not; "
            "1 never refuses",
        )
        for role in (Layer.INFERENCE, Layer.TRAINING)
    ),
    *(
        _e(
            role,
            t.AIO_MAX,
            1048576,
            "weight loaders with many shards exhaust the 65536 default",
        )
        for role in (Layer.INFERENCE, Layer.TRAINING)
    ),
    *(
        _e(role, t.INOTIFY_WATCHES, 524288, _INOTIFY_WHY, kernel_below=(5, 11))
        for role in (Layer.INFERENCE, Layer.TRAINING)
    ),
    _e(Layer.INFERENCE, t.MAX_CSTATE, 1, _CSTATE_WHY, arch=X86),
    _e(
        Layer.INFERENCE,
        t.NUMA_BALANCING,
        1,
        "hostc pins no systemd workload's memory here and no kubelet Static memory "
        "manager under a restricted or single-numa-node topology policy confines pods to "
        "their preferred nodes, so a server's memory may lie on any node: automatic NUMA "
        "balancing moves its pages toward the CPUs it runs on",
        multi_node=True,
        pods_bound=False,
    ),
    _e(
        Layer.INFERENCE,
        t.NUMA_BALANCING,
        0,
        _PODS_BOUND_WHY,
        multi_node=True,
        pods_bound=True,
    ),
    _e(
        Layer.INFERENCE,
        t.RMEM_MAX,
        268435456,
        "256 MiB socket buffers for streaming weights and KV",
    ),
    _e(
        Layer.INFERENCE,
        t.WMEM_MAX,
        268435456,
        "256 MiB socket buffers for streaming weights and KV",
    ),
    _e(
        Layer.INFERENCE,
        t.TCP_RMEM,
        "4096 131072 268435456",
        "TCP autotuning may grow to 256 MiB; the initial 131072 is the kernel's own "
        "default since 4.20 (the guide's 87380 would lower it)",
    ),
    _e(
        Layer.INFERENCE,
        t.TCP_WMEM,
        "4096 65536 268435456",
        "TCP autotuning may grow to 256 MiB",
    ),
    _e(
        Layer.INFERENCE,
        t.NETDEV_BACKLOG,
        250000,
        "busy frontends drop packets at the default",
    ),
    _e(Layer.INFERENCE, t.SOMAXCONN, 65535, "request bursts overflow the accept queue"),
    _e(
        Layer.TRAINING,
        t.NUMA_BALANCING,
        0,
        "migrating pages mid-epoch is churn, not locality",
        multi_node=True,
    ),
    _e(
        Layer.TRAINING,
        t.RMEM_MAX,
        536870912,
        "512 MiB socket buffers for checkpoint and data streams",
    ),
    _e(
        Layer.TRAINING,
        t.WMEM_MAX,
        536870912,
        "512 MiB socket buffers for checkpoint and data streams",
    ),
    _e(
        Layer.TRAINING,
        t.TCP_RMEM,
        "4096 131072 536870912",
        "TCP autotuning may grow to 512 MiB",
    ),
    _e(
        Layer.TRAINING,
        t.TCP_WMEM,
        "4096 131072 536870912",
        "TCP autotuning may grow to 512 MiB",
    ),
    _e(
        Layer.INFERENCE_PINNED,
        t.NUMA_BALANCING,
        0,
        "workloads are bound to their NUMA nodes with membind, so page migration "
        "would only add jitter",
        multi_node=True,
    ),
    # Real-time threads on isolated CPUs (issue 52, opt-in: cpu.realtime).
    _e(Layer.REALTIME, t.SCHED_RT_RUNTIME, -1, _RT_THROTTLE_WHY),
    # Runtime tuning (issue 10).
    _e(
        Layer.INFERENCE,
        t.GOVERNOR,
        Governor.PERFORMANCE,
        "5-15 % on time to first token for servers idle between requests; "
        "GPU feeding threads never wait for a clock ramp",
    ),
    _e(
        Layer.TRAINING,
        t.GOVERNOR,
        Governor.PERFORMANCE,
        "the threads that launch kernels and feed the GPUs between steps never wait for "
        "a clock ramp; the dataloaders keep every core at top speed",
    ),
    # EPP exists only where the P-state driver runs the hardware: intel_pstate with HWP,
    # amd-pstate-epp (amd_pstate=active, Linux 6.3, set below).  acpi-cpufreq (AMD before
    # 6.3) and arm64's cppc_cpufreq have no energy_performance_preference file.
    *(
        _e(
            role,
            t.EPP,
            Epp.PERFORMANCE,
            "the hardware P-state hint (HWP EPP) biased to speed, as the governor",
            arch=X86,
            vendor=(Vendor.INTEL,),
        )
        for role in (Layer.INFERENCE, Layer.TRAINING)
    ),
    *(
        _e(
            role,
            t.EPP,
            Epp.PERFORMANCE,
            "the hardware P-state hint (CPPC EPP of amd-pstate-epp) biased to speed, as "
            "the governor",
            arch=X86,
            vendor=(Vendor.AMD,),
            kernel_min=(6, 3),
            feature="amd_pstate",
        )
        for role in (Layer.INFERENCE, Layer.TRAINING)
    ),
    *(
        _e(
            role,
            t.PSTATE,
            PstateMode.ACTIVE,
            "amd_pstate=active (amd-pstate-epp, Linux 6.3, commit ffa5096a7c33; RHEL from 9.3) "
            "is the mode with EPP; before 6.5 the kernel does not pick amd-pstate by itself",
            arch=X86,
            vendor=(Vendor.AMD,),
            kernel_min=(6, 3),
            feature="amd_pstate",
        )
        for role in (Layer.INFERENCE, Layer.TRAINING)
    ),
    _e(
        Layer.BASE,
        t.THP_DEFRAG,
        ThpDefrag.DEFER_MADVISE,
        "direct compaction only for madvised regions (the servers that asked); with "
        "THP madvise nothing else gets huge pages, so nothing else stalls on compaction",
    ),
    _e(
        Layer.BASE,
        t.IOMMU,
        IommuMode.PT,
        "GPUs and RDMA NICs on one host: GPUDirect RDMA needs the IOMMU off or in "
        "pass-through (CUDA GPUDirect RDMA guide, Supported Systems); iommu=pt makes DMA "
        "untranslated where an IOMMU is on (AMD's is on by default) and does not force one on",
        arch=X86,
        min_gpus=1,
        min_rdma_nics=1,
    ),
    _e(
        Layer.BASE,
        t.IRQ_OWNER,
        IrqOwner.IRQBALANCE,
        "irqbalance keeps balancing housekeeping CPUs, with the isolated CPUs banned: "
        "one owner, no manual pinning to fight it",
    ),
    _e(
        Layer.BASE,
        t.RUNTIME_OWNER,
        RuntimeOwner.SYSTEMD,
        "hostc's oneshot hostc-tuning.service applies the runtime settings (no TuneD needed)",
    ),
    # GPU + RDMA hosts: NVIDIA's nvidia-base TuneD profile (skyhook-packages
    # nvidia-tuned/profiles/common/nvidia-base) and the CUDA GPUDirect RDMA guide.
    _e(
        Layer.BASE,
        t.LOAD_IB_UMAD,
        "ib_umad",
        "user-space MAD access (/dev/infiniband/umad*) for ibstat, ibnetdiscover and a "
        "subnet manager; NVIDIA's nvidia-base profile loads it on GPU+RDMA hosts",
        gpu_vendor=("nvidia",),
        min_rdma_nics=1,
    ),
    *(
        _e(
            Layer.BASE,
            t.ARP[scope, key],
            value,
            why,
            gpu_vendor=("nvidia",),
            min_rdma_nics=2,
        )
        for scope in ("all", "default")
        for key, value, why in (
            (
                "arp_announce",
                2,
                "several RDMA NICs on one subnet: ARP requests name the address of the "
                "NIC they leave by (default 0: any local address), as nvidia-base sets",
            ),
            (
                "arp_ignore",
                1,
                "several RDMA NICs on one subnet: a NIC answers ARP only for its own "
                "address (default 0: every NIC answers for all), as nvidia-base sets",
            ),
        )
    ),
)
