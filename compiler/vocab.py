"""hostc's closed vocabularies: one enum per set of words a spec or a Plan may hold.

The spec model and the Plan both import these, and neither imports the other for a
word: `ThpMode.MADVISE` in a spec and in a Plan is the same value, and a target indexing a
table by `LimitItem` cannot miss a key that the set does not have.  Enums that carry
knowledge (an architecture's command-line size, an OS family's boot carrier) live in
`hostc.knowledge` beside their tables, which import this module, never the reverse.
StrEnum values are the words themselves, so plan.json and every artifact spell them as
before.
"""

from __future__ import annotations

import enum


class Role(enum.StrEnum):
    """The role preset a host gets."""

    INFERENCE = "inference"
    TRAINING = "training"
    GENERAL = "general"


class Mechanism(enum.StrEnum):
    """A kernel mechanism that isolates CPUs (kernel-parameters.txt)."""

    ISOLCPUS = "isolcpus"
    NOHZ_FULL = "nohz_full"
    RCU_NOCBS = "rcu_nocbs"
    IRQAFFINITY = "irqaffinity"


class IsolcpusFlag(enum.StrEnum):
    DOMAIN = "domain"
    MANAGED_IRQ = "managed_irq"
    NOHZ = "nohz"


class ThpMode(enum.StrEnum):
    """/sys/kernel/mm/transparent_hugepage/enabled, `transparent_hugepage=`."""

    ALWAYS = "always"
    MADVISE = "madvise"
    NEVER = "never"


class ThpDefrag(enum.StrEnum):
    """/sys/kernel/mm/transparent_hugepage/defrag."""

    ALWAYS = "always"
    DEFER = "defer"
    DEFER_MADVISE = "defer+madvise"
    MADVISE = "madvise"
    NEVER = "never"


class Governor(enum.StrEnum):
    """cpufreq scaling governors."""

    PERFORMANCE = "performance"
    POWERSAVE = "powersave"
    SCHEDUTIL = "schedutil"
    ONDEMAND = "ondemand"
    CONSERVATIVE = "conservative"


class Epp(enum.StrEnum):
    """energy_performance_available_preferences (intel_pstate and amd-pstate-epp)."""

    DEFAULT = "default"
    PERFORMANCE = "performance"
    BALANCE_PERFORMANCE = "balance_performance"
    BALANCE_POWER = "balance_power"
    POWER = "power"


class PstateMode(enum.StrEnum):
    """`intel_pstate=` / `amd_pstate=` modes (guided: amd_pstate only)."""

    ACTIVE = "active"
    PASSIVE = "passive"
    GUIDED = "guided"
    DISABLE = "disable"


class PstateDriverName(enum.StrEnum):
    """The P-state driver whose command-line parameter carries the mode, by CPU vendor."""

    INTEL_PSTATE = "intel_pstate"
    AMD_PSTATE = "amd_pstate"


class IommuMode(enum.StrEnum):
    PT = "pt"
    ON = "on"


class NicChannelChoice(enum.StrEnum):
    """A GPU-adjacent NIC's combined queues on an isolating host: down to the housekeeping
    CPUs of its node (where its interrupts go), or the driver's count kept."""

    HOUSEKEEPING = "housekeeping"
    KEEP = "keep"


class GpuDirect(enum.StrEnum):
    """How NICs reach GPU memory (GPUDirect RDMA): DMA-BUF (open kernel modules, Linux >=
    5.12; NVIDIA's recommendation), the legacy nvidia-peermem module, or DMA-BUF where the
    host can use it and nvidia-peermem otherwise (`auto`)."""

    AUTO = "auto"
    DMABUF = "dmabuf"
    PEERMEM = "peermem"


class CStatesAt(enum.StrEnum):
    RUNTIME = "runtime"
    BOOT = "boot"


class LimitItem(enum.StrEnum):
    """The resource limits hostc sets (limits.conf(5) items, systemd Limit*=)."""

    NOFILE = "nofile"
    MEMLOCK = "memlock"


class RuntimeOwner(enum.StrEnum):
    """Who applies the runtime settings on the host: hostc's own systemd units, or TuneD.

    Exactly one: the systemd target leaves out every runtime setting when TuneD owns
    them, and the tuned target applies only when TuneD owns them.
    """

    SYSTEMD = "systemd"
    TUNED = "tuned"


class IrqOwner(enum.StrEnum):
    """Who places interrupts: irqbalance (with the isolated CPUs banned), or hostc."""

    IRQBALANCE = "irqbalance"
    HOSTC = "hostc"


class DeviceKind(enum.StrEnum):
    """A device whose interrupts hostc pins."""

    NIC = "nic"
    GPU = "gpu"


class IrqbalanceVariable(enum.StrEnum):
    """How irqbalance's environment file bans CPUs: a cpulist (irqbalance ≥ 1.8.0) or
    the hex mask every version reads."""

    CPULIST = "IRQBALANCE_BANNED_CPULIST"
    MASK = "IRQBALANCE_BANNED_CPUS"


class CpuMaskName(enum.StrEnum):
    """The kernel cpumask files hostc writes."""

    WORKQUEUE = "workqueue"
    WRITEBACK = "writeback"


class CpuManagerPolicy(enum.StrEnum):
    STATIC = "static"
    NONE = "none"


class TopologyPolicy(enum.StrEnum):
    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


class TopologyScope(enum.StrEnum):
    CONTAINER = "container"
    POD = "pod"


class MemoryManagerPolicy(enum.StrEnum):
    STATIC = "Static"
    NONE = "None"


class Flavor(enum.StrEnum):
    KUBEADM = "kubeadm"  # the distro's kubelet.service, KubeletConfiguration files
    RKE2 = "rke2"  # /etc/rancher/rke2/config.yaml.d, kubelet-arg flags
    K3S = "k3s"  # /etc/rancher/k3s/config.yaml.d, kubelet-arg flags


class ContainerRuntime(enum.StrEnum):
    """The CRI runtime a kubelet node runs (the unit that starts containers)."""

    CONTAINERD = "containerd"
    CRIO = "crio"


class NodeRole(enum.StrEnum):
    SERVER = "server"
    AGENT = "agent"


class When(enum.StrEnum):
    """When a setting takes effect on the host."""

    BOOT = "boot"  # kernel command line: a reboot
    SYSCTL = "sysctl"  # sysctl.d, applied by systemd-sysctl at boot or `sysctl --system`
    RUNTIME = "runtime"  # sysfs, IRQ masks, services: a oneshot unit at boot
    SERVICE = "service"  # per systemd service (limits, placement): on (re)start
    SESSION = "session"  # pam_limits: sessions opened afterwards
