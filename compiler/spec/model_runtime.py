"""The runtime tables of node.toml (`[cpufreq]`, `[irq]`, `[modules]`, `[services]`,
`[runtime]`, `[nccl]`), as attrs classes whose names
are the TOML keys (see `hostc.spec.model`)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from hostc.fielddoc import doc
from hostc.record import FrozenMap, Record
from hostc.spec.text import IfName
from hostc.vocab import (
    Epp,
    Governor,
    GpuDirect,
    IrqOwner,
    NicChannelChoice,
    PstateMode,
    RuntimeOwner,
)


@attrs.frozen(repr=False, eq=False)
class Cpufreq(Record):
    governor: Governor | None = attrs.field(
        default=None,
        metadata=doc(
            "scaling governor (preset: performance for inference and training)", "performance"
        ),
    )
    energy_performance_preference: Epp | None = attrs.field(
        default=None,
        metadata=doc("EPP hint (preset: performance for inference and training)", "performance"),
    )
    pstate: PstateMode | None = attrs.field(
        default=None,
        metadata=doc(
            "P-state driver mode on the command line, spelled by CPU vendor "
            "(preset: amd_pstate=active on AMD with Linux >= 6.3)",
            "active",
        ),
    )
    min_perf_pct: int | None = attrs.field(
        default=None,
        metadata=doc(
            "frequency floor of intel_pstate (active or passive mode), in percent of the "
            "highest turbo P-state: /sys/devices/system/cpu/intel_pstate/min_perf_pct, as "
            "TuneD's latency-performance sets it (100: no CPU is asked to clock down; costs "
            "power and heat)",
            100,
        ),
    )


@attrs.frozen(repr=False, eq=False)
class Irq(Record):
    owner: IrqOwner | None = attrs.field(
        default=None,
        metadata=doc(
            "who places interrupts on an isolated host: `irqbalance` (kept, isolated CPUs "
            "banned; the default) or `hostc` (irqbalance off, each NIC's and GPU's IRQs on "
            "housekeeping CPUs of its own NUMA node)",
            "irqbalance",
        ),
    )
    nic_channels: NicChannelChoice | None = attrs.field(
        default=None,
        metadata=doc(
            "each NIC's combined queues on an isolating host: `housekeeping` (the default: "
            "one per housekeeping CPU of its node, where its interrupts go; kernel TCP/IP "
            "over the NIC, such as NFS or S3 model loading, is then capped at those CPUs) "
            "or `keep` (the driver's count: more kernel-network throughput, more interrupt "
            "vectors on the housekeeping CPUs); RDMA and GPUDirect traffic use neither",
            "keep",
        ),
    )
    nic_devices: tuple[str, ...] = attrs.field(
        default=(),
        metadata=doc(
            "the NICs whose queues `nic_channels` sets (default: every NIC): shell globs "
            "matched against a NIC's netdev, RDMA device or snapshot name, `vendor=GLOB` "
            "(the snapshot's vendor, e.g. Mellanox or 0x8086) or `pci=GLOB` (its PCI "
            "address); a leading `!` excludes what it matches; each entry must match a NIC "
            "of the snapshot",
            ["ens7f*", "!ens7f1"],
        ),
    )


@attrs.frozen(repr=False, eq=False)
class Modules(Record):
    blacklist: tuple[str, ...] = attrs.field(
        default=(), metadata=doc("modules to blacklist", ["bluetooth", "btusb"])
    )
    hard_block: bool = attrs.field(
        default=False,
        metadata=doc("also `install <module> /bin/false`: explicit loads fail too", False),
    )
    options: Mapping[str, str] = attrs.field(
        factory=FrozenMap, metadata=doc("module options", {"nvidia": "NVreg_EnableGpuFirmware=0"})
    )
    gpudirect: GpuDirect | None = attrs.field(
        default=None,
        metadata=doc(
            "GPUDirect RDMA path on hosts with NVIDIA GPUs and RDMA NICs: `dmabuf` (never "
            "load nvidia-peermem), `peermem` (load it after openibd and the driver), `auto` "
            "(the default: load it only where DMA-BUF is not usable: proprietary driver or "
            "Linux < 5.12)",
            "auto",
        ),
    )


@attrs.frozen(repr=False, eq=False)
class Services(Record):
    disable: tuple[str, ...] = attrs.field(
        default=(),
        metadata=doc("systemd units to disable and stop", ["cups.service", "avahi-daemon.service"]),
    )


@attrs.frozen(repr=False, eq=False)
class Runtime(Record):
    owner: RuntimeOwner | None = attrs.field(
        default=None,
        metadata=doc(
            "who applies governor, EPP, THP defrag, IRQ and workqueue masks: `systemd` "
            "(hostc-tuning.service; default) or `tuned` (the hostc TuneD profile)",
            "systemd",
        ),
    )


@attrs.frozen(repr=False, eq=False)
class Nccl(Record):
    """NCCL's bootstrap needs an interface with an IP address; the RDMA NICs' netdevs
    often have none ("Bootstrap : no socket interface found"), so hostc never guesses
    it from the topology: it sets NCCL_SOCKET_IFNAME only when named here."""

    socket_ifname: IfName | None = attrs.field(
        default=None,
        metadata=doc(
            "interface NCCL bootstraps over (the management network, one with an IP "
            "address): NCCL_SOCKET_IFNAME==<name> in every workload; unset, NCCL picks one",
            "eth0",
        ),
    )
