"""Role presets as data: entries with conditions, one layered merge for every kind of setting.

An entry names a setting (the name `hostc plan` shows and `preset.exclude` and
the spec's overrides use), a value, a one-line reason, the layer it belongs
to and the conditions under which it applies (arch, CPU vendor, role, pinned
workloads, kernel range).  Layers apply in order (base, the role, the role
with pinned workloads), then `preset.exclude`, then the spec; each value
remembers the layer that set it, which is what `hostc plan` and the
artifacts' comments show.  TuneD's mutating merge forgets this; here the merge
is a pure function, and no kind of setting is special-cased.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping

import attrs

from hostc.knowledge.arch import X86_FAMILY
from hostc.plan import LeftOut, Reason


class Kind(enum.StrEnum):
    """Which typed Plan entry a setting becomes."""

    SYSCTL = "sysctl"
    LIMIT = "limit"
    THP = "thp"
    CSTATE = "cstate"
    GOVERNOR = "governor"
    EPP = "epp"
    PSTATE = "pstate"
    THP_DEFRAG = "thp_defrag"
    IOMMU = "iommu"
    IRQ_OWNER = "irq_owner"
    RUNTIME_OWNER = "runtime_owner"
    MODULE_LOAD = "module_load"  # a module systemd-modules-load loads at every boot


#: Settings that are not sysctls, by name.  Any dotted name is a sysctl.
NAMED: Mapping[str, Kind] = {
    "nofile": Kind.LIMIT,
    "memlock": Kind.LIMIT,
    "transparent_hugepage": Kind.THP,
    "max_cstate": Kind.CSTATE,
    "cpu_governor": Kind.GOVERNOR,
    "energy_performance_preference": Kind.EPP,
    "pstate": Kind.PSTATE,
    "transparent_hugepage_defrag": Kind.THP_DEFRAG,
    "iommu": Kind.IOMMU,
    "irq_owner": Kind.IRQ_OWNER,
    "runtime_owner": Kind.RUNTIME_OWNER,
    "load_nvidia_peermem": Kind.MODULE_LOAD,
    "load_ib_umad": Kind.MODULE_LOAD,
}


def kind_of(name: str) -> Kind:
    return NAMED.get(name, Kind.SYSCTL)


@attrs.frozen
class Context:
    """What presets may depend on: facts about the host and the spec."""

    role: str
    arch: str
    cpu_vendor: str | None
    kernel: tuple[int, int] | None
    pinned: bool  # workloads are bound to their NUMA nodes
    multi_node: bool = True  # more than one NUMA node (False: a single-node host)
    rdma: bool = False  # a workload is handed RDMA NICs (GPUDirect RDMA)
    #: (feature, upstream release its kernel has) where the distribution backports it
    features: tuple[tuple[str, tuple[int, int]], ...] = ()
    gpu_vendors: tuple[str, ...] = ()  # lower-case vendors of the snapshot's GPUs
    rdma_nics: int = 0  # NICs with an RDMA device


X86 = tuple(X86_FAMILY)


@attrs.frozen
class Cond:
    """Empty tuples mean any.  Kernel bounds: `kernel_min <= release < kernel_below`;
    an unknown kernel release satisfies no bound (a preset must not guess)."""

    arch: tuple[str, ...] = ()
    vendor: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    pinned: bool | None = None
    rdma: bool | None = None
    #: judge the kernel bounds by this feature's backported release (osfacts.KERNEL_BACKPORTS)
    feature: str | None = None
    kernel_min: tuple[int, int] | None = None
    kernel_below: tuple[int, int] | None = None
    multi_node: bool | None = None
    gpu_vendor: tuple[str, ...] = ()  # some GPU of one of these vendors
    min_rdma_nics: int = 0

    def holds(self, ctx: Context) -> bool:
        if self.gpu_vendor and not set(self.gpu_vendor) & set(ctx.gpu_vendors):
            return False
        if ctx.rdma_nics < self.min_rdma_nics:
            return False
        if self.arch and ctx.arch not in self.arch:
            return False
        if self.vendor and ctx.cpu_vendor not in self.vendor:
            return False
        if self.roles and ctx.role not in self.roles:
            return False
        if self.pinned is not None and ctx.pinned != self.pinned:
            return False
        if self.multi_node is not None and ctx.multi_node != self.multi_node:
            return False
        if self.rdma is not None and ctx.rdma != self.rdma:
            return False
        if self.kernel_min is not None or self.kernel_below is not None:
            kernel = dict(ctx.features).get(self.feature or "", ctx.kernel)
            if kernel is None:
                return False
            if self.kernel_min is not None and kernel < self.kernel_min:
                return False
            if self.kernel_below is not None and kernel >= self.kernel_below:
                return False
        return True


@attrs.frozen
class Entry:
    layer: str  # base | inference | training | inference+pinned …
    setting: str
    value: str
    why: str
    cond: Cond = Cond()


def _e(layer: str, setting: str, value: object, why: str, **cond: object) -> Entry:
    roles = () if layer == "base" else (layer.split("+")[0],)
    pinned = True if layer.endswith("+pinned") else None
    return Entry(layer, setting, str(value), why, Cond(roles=roles, pinned=pinned, **cond))  # type: ignore[arg-type]


_CSTATE_WHY = "shallow C-states cut wake-up latency on the hot path (costs idle power)"
_INOTIFY_WHY = (
    "model caches and dataloaders watch many files; the default (8192 before Linux 5.11) "
    "runs out; from 5.11 the default scales with RAM and is left alone"
)

ENTRIES: tuple[Entry, ...] = (
    _e(
        "base",
        "vm.max_map_count",
        1048576,
        "default 65530 makes loaders of many mmapped weight shards fail with ENOMEM",
    ),
    _e(
        "base",
        "vm.swappiness",
        1,
        "a swapped-out page is a millisecond fault on the hot path; 1 keeps swap as a last resort",
    ),
    _e("base", "nofile", 1048576, "the 1024 default gives EMFILE and silently stuck servers"),
    _e(
        "base",
        "memlock",
        "unlimited",
        "pinned (page-locked) host buffers for GPU DMA need unlimited memlock",
    ),
    _e(
        "base",
        "transparent_hugepage",
        "madvise",
        "THP only where asked: `always` causes 50-100 ms compaction stalls",
    ),
    *(
        _e(
            role,
            "vm.overcommit_memory",
            1,
            "the heuristic mode (0) refuses any single allocation larger than RAM plus swap; "
            "anonymous and private writable memory (host copies of weights, forked loader "
            "workers) counts, read-only or shared file mappings of weights do not; "
            "1 never refuses",
        )
        for role in ("inference", "training")
    ),
    *(
        _e(
            role,
            "fs.aio-max-nr",
            1048576,
            "weight loaders with many shards exhaust the 65536 default",
        )
        for role in ("inference", "training")
    ),
    *(
        _e(role, "fs.inotify.max_user_watches", 524288, _INOTIFY_WHY, kernel_below=(5, 11))
        for role in ("inference", "training")
    ),
    _e("inference", "max_cstate", 1, _CSTATE_WHY, arch=X86),
    _e(
        "inference",
        "kernel.numa_balancing",
        1,
        "no workload is pinned with membind, so automatic NUMA balancing keeps pages local",
        multi_node=True,
    ),
    _e(
        "inference",
        "net.core.rmem_max",
        268435456,
        "256 MiB socket buffers for streaming weights and KV",
    ),
    _e(
        "inference",
        "net.core.wmem_max",
        268435456,
        "256 MiB socket buffers for streaming weights and KV",
    ),
    _e(
        "inference",
        "net.ipv4.tcp_rmem",
        "4096 131072 268435456",
        "TCP autotuning may grow to 256 MiB; the initial 131072 is the kernel's own "
        "default since 4.20 (the guide's 87380 would lower it)",
    ),
    _e(
        "inference",
        "net.ipv4.tcp_wmem",
        "4096 65536 268435456",
        "TCP autotuning may grow to 256 MiB",
    ),
    _e(
        "inference",
        "net.core.netdev_max_backlog",
        250000,
        "busy frontends drop packets at the default",
    ),
    _e("inference", "net.core.somaxconn", 65535, "request bursts overflow the accept queue"),
    _e(
        "training",
        "kernel.numa_balancing",
        0,
        "migrating pages mid-epoch is churn, not locality",
        multi_node=True,
    ),
    _e(
        "training",
        "net.core.rmem_max",
        536870912,
        "512 MiB socket buffers for checkpoint and data streams",
    ),
    _e(
        "training",
        "net.core.wmem_max",
        536870912,
        "512 MiB socket buffers for checkpoint and data streams",
    ),
    _e(
        "training",
        "net.ipv4.tcp_rmem",
        "4096 131072 536870912",
        "TCP autotuning may grow to 512 MiB",
    ),
    _e(
        "training",
        "net.ipv4.tcp_wmem",
        "4096 131072 536870912",
        "TCP autotuning may grow to 512 MiB",
    ),
    _e(
        "inference+pinned",
        "kernel.numa_balancing",
        0,
        "workloads are bound to their NUMA nodes with membind, so page migration "
        "would only add jitter",
        multi_node=True,
    ),
    # Runtime tuning (issue 10).
    _e(
        "inference",
        "cpu_governor",
        "performance",
        "5-15 % on time to first token for servers idle between requests; "
        "GPU feeding threads never wait for a clock ramp",
    ),
    _e(
        "training",
        "cpu_governor",
        "performance",
        "the threads that launch kernels and feed the GPUs between steps never wait for "
        "a clock ramp; the dataloaders keep every core at top speed",
    ),
    # EPP exists only where the P-state driver runs the hardware: intel_pstate with HWP,
    # amd-pstate-epp (amd_pstate=active, Linux 6.3, set below).  acpi-cpufreq (AMD before
    # 6.3) and arm64's cppc_cpufreq have no energy_performance_preference file.
    *(
        _e(
            role,
            "energy_performance_preference",
            "performance",
            "the hardware P-state hint (HWP EPP) biased to speed, as the governor",
            arch=X86,
            vendor=("intel",),
        )
        for role in ("inference", "training")
    ),
    *(
        _e(
            role,
            "energy_performance_preference",
            "performance",
            "the hardware P-state hint (CPPC EPP of amd-pstate-epp) biased to speed, as "
            "the governor",
            arch=X86,
            vendor=("amd",),
            kernel_min=(6, 3),
            feature="amd_pstate",
        )
        for role in ("inference", "training")
    ),
    *(
        _e(
            role,
            "pstate",
            "active",
            "amd_pstate=active (amd-pstate-epp, Linux 6.3, commit ffa5096a7c33; RHEL from 9.3) "
            "is the mode with EPP; before 6.5 the kernel does not pick amd-pstate by itself",
            arch=X86,
            vendor=("amd",),
            kernel_min=(6, 3),
            feature="amd_pstate",
        )
        for role in ("inference", "training")
    ),
    _e(
        "base",
        "transparent_hugepage_defrag",
        "defer+madvise",
        "direct compaction only for madvised regions (the servers that asked); with "
        "THP madvise nothing else gets huge pages, so nothing else stalls on compaction",
    ),
    _e(
        "base",
        "iommu",
        "pt",
        "a workload gets RDMA NICs: GPUDirect RDMA needs the IOMMU off or in pass-through "
        "(CUDA GPUDirect RDMA guide, Supported Systems); iommu=pt makes DMA untranslated "
        "where an IOMMU is on (AMD's is on by default) and does not force one on",
        arch=X86,
        rdma=True,
    ),
    _e(
        "base",
        "irq_owner",
        "irqbalance",
        "irqbalance keeps balancing housekeeping CPUs, with the isolated CPUs banned: "
        "one owner, no manual pinning to fight it",
    ),
    _e(
        "base",
        "runtime_owner",
        "systemd",
        "hostc's oneshot hostc-tuning.service applies the runtime settings (no TuneD needed)",
    ),
    # GPU + RDMA hosts: NVIDIA's nvidia-base TuneD profile (skyhook-packages
    # nvidia-tuned/profiles/common/nvidia-base) and the CUDA GPUDirect RDMA guide.
    _e(
        "base",
        "load_nvidia_peermem",
        "nvidia-peermem",
        "GPUDirect RDMA: the NICs read and write GPU memory only through this module "
        "(CUDA GPUDirect RDMA guide, nvidia-peermem); nothing loads it by itself",
        gpu_vendor=("nvidia",),
        min_rdma_nics=1,
    ),
    _e(
        "base",
        "load_ib_umad",
        "ib_umad",
        "user-space MAD access (/dev/infiniband/umad*) for ibstat, ibnetdiscover and a "
        "subnet manager; NVIDIA's nvidia-base profile loads it on GPU+RDMA hosts",
        gpu_vendor=("nvidia",),
        min_rdma_nics=1,
    ),
    *(
        _e(
            "base",
            f"net.ipv4.conf.{scope}.{key}",
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


def _out(setting: str, why: str) -> LeftOut:
    return LeftOut(setting, Reason("preset:base", why))


#: Jitter settings of low-latency profiles (OpenShift's performance profile, TuneD's
#: realtime profiles).  The seeds warn against copying trading-desk tuning by habit:
#: each trades safety or observability for microseconds a GPU server does not need.
LEFT_OUT: tuple[LeftOut, ...] = (
    _out(
        "kernel.nmi_watchdog",
        "0 removes the hard-lockup detector; its NMI costs microseconds per second, and a "
        "hung GPU host without it reboots nobody (read-only in many VMs)",
    ),
    _out(
        "vm.stat_interval",
        "raising it delays vmstat refresh on every CPU; where nohz_full is on (busy-polling "
        "workloads' CPUs) the kernel already defers it",
    ),
    _out(
        "kernel.timer_migration",
        "the kernel's default (1) already moves timers off idle CPUs, isolated ones included",
    ),
    _out(
        "skew_tick",
        "offsets ticks for timer-lock contention at some power cost; no gain measured for GPU "
        "serving (opt in with kernel.skew_tick = true)",
    ),
    _out(
        "nosoftlockup",
        "hides soft lockups instead of fixing them; a GPU host should report them",
    ),
    _out(
        "tsc",
        "tsc=reliable turns off the clocksource watchdog: unsafe where the TSC is not "
        "synchronized across sockets",
    ),
)

#: Layer order: a later layer overrides an earlier one.
LAYERS = ("base", "inference", "training", "general", "inference+pinned", "training+pinned")


@attrs.frozen
class Override:
    """A value the spec sets (value None: the spec turns the preset's setting off)."""

    setting: str
    value: str | None
    source: str  # the spec key path


@attrs.frozen
class Resolved:
    setting: str
    value: str
    reason: Reason
    #: what the setting is, from its name (computed once: every stage sorts by it)
    kind: Kind = attrs.field(init=False, eq=False, repr=False)

    @kind.default
    def _kind(self) -> Kind:
        return kind_of(self.setting)


def _by_layer() -> tuple[tuple[str, tuple[Entry, ...]], ...]:
    return tuple((layer, tuple(e for e in ENTRIES if e.layer == layer)) for layer in LAYERS)


def merge(
    ctx: Context, overrides: Iterable[Override] = (), exclude: Iterable[str] = ()
) -> list[Resolved]:
    """Layered merge of every kind at once.

    Order: preset order, then settings only the spec sets.  Each value keeps the
    layer that set it last.
    """
    out = dict(_presets_for(ctx))
    for name in exclude:
        out.pop(name, None)
    for o in overrides:
        prev = out.pop(o.setting, None) if o.value is None else out.get(o.setting)
        if o.value is None:
            continue
        why = f"set by the spec (preset had {prev.value})" if prev else "set by the spec"
        out[o.setting] = Resolved(o.setting, o.value, Reason(o.source, why))
    return list(out.values())


_BY_LAYER = _by_layer()


@functools.lru_cache(maxsize=64)
def _presets_for(ctx: Context) -> tuple[tuple[str, Resolved], ...]:
    """What the preset layers set for one context: a pure function of the (constant)
    table and the context's facts, so each context's answer is worked out once."""
    out: dict[str, Resolved] = {}
    for layer, entries in _BY_LAYER:
        for e in entries:
            if e.cond.holds(ctx):
                out[e.setting] = Resolved(e.setting, e.value, Reason(f"preset:{layer}", e.why))
    return tuple(out.items())


def preset_settings() -> set[str]:
    return {e.setting for e in ENTRIES}


def quoted(key: str) -> str:
    """A TOML key as written in a path: dotted sysctl names are quoted."""
    return f'"{key}"' if "." in key else key
