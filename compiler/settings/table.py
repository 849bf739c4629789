"""The settings table: one row per setting hostc sets, in `hostc plan`'s order.

A sysctl the spec names that no row declares gets a row made on the spot
(`hostc.settings.sysctl`): any dotted name is a sysctl.
"""

from __future__ import annotations

from typing import Any

from hostc.settings.model import (
    Cmdline,
    Family,
    Merge,
    Per,
    ProcLimit,
    Setting,
    Sysfs,
    UnitProperty,
)
from hostc.settings.sysctl_rows import (
    AIO_MAX as AIO_MAX,
)
from hostc.settings.sysctl_rows import (
    ARP as ARP,
)
from hostc.settings.sysctl_rows import (
    INOTIFY_WATCHES as INOTIFY_WATCHES,
)
from hostc.settings.sysctl_rows import (
    KNOWN_SYSCTLS as KNOWN_SYSCTLS,
)
from hostc.settings.sysctl_rows import (
    MAX_MAP_COUNT as MAX_MAP_COUNT,
)
from hostc.settings.sysctl_rows import (
    NETDEV_BACKLOG as NETDEV_BACKLOG,
)
from hostc.settings.sysctl_rows import (
    NUMA_BALANCING as NUMA_BALANCING,
)
from hostc.settings.sysctl_rows import (
    OVERCOMMIT as OVERCOMMIT,
)
from hostc.settings.sysctl_rows import (
    RMEM_MAX as RMEM_MAX,
)
from hostc.settings.sysctl_rows import (
    SCHED_RT_RUNTIME as SCHED_RT_RUNTIME,
)
from hostc.settings.sysctl_rows import (
    SOMAXCONN as SOMAXCONN,
)
from hostc.settings.sysctl_rows import (
    SWAPPINESS as SWAPPINESS,
)
from hostc.settings.sysctl_rows import (
    TCP_RMEM as TCP_RMEM,
)
from hostc.settings.sysctl_rows import (
    TCP_WMEM as TCP_WMEM,
)
from hostc.settings.sysctl_rows import (
    WMEM_MAX as WMEM_MAX,
)
from hostc.vocab import (
    Epp,
    Governor,
    IommuMode,
    IrqOwner,
    PstateMode,
    RuntimeOwner,
    ThpDefrag,
    ThpMode,
    When,
)

CPUFREQ = "/sys/devices/system/cpu/cpufreq/policy*/"
INTEL_PSTATE_DIR = "/sys/devices/system/cpu/intel_pstate/"
THP_DIR = "/sys/kernel/mm/transparent_hugepage/"


NOFILE: Setting[int] = Setting(
    "nofile",
    Family.LIMIT,
    int,
    When.SERVICE,
    "open files (soft and hard) for sessions and services; layers may only raise it",
    "1048576",
    ("limits", "nofile"),
    Merge.RISE,
    (UnitProperty("DefaultLimitNOFILE"), ProcLimit("Max open files")),
)
MEMLOCK: Setting[int | str] = Setting(
    "memlock",
    Family.LIMIT,
    int,
    When.SERVICE,
    'locked memory in KiB, or "unlimited"; layers may only raise it',
    "unlimited",
    ("limits", "memlock"),
    Merge.RISE,
    (ProcLimit("Max locked memory"),),
)
DEFAULT_HUGEPAGESZ: Setting[int] = Setting(
    "default_hugepagesz",
    Family.DERIVED,
    int,
    When.BOOT,
    "the hugepage size (KiB in the Plan) hugetlbfs mounts and MAP_HUGETLB use unless "
    "told otherwise; from hugepages.default_size, else the pool's size",
    "1G",
    ("hugepages", "default_size"),
    observe=(Cmdline("default_hugepagesz"), Sysfs("/proc/meminfo (Hugepagesize)")),
)
THP: Setting[ThpMode] = Setting(
    "transparent_hugepage",
    Family.CMDLINE,
    ThpMode,
    When.BOOT,
    "transparent hugepages mode, on the kernel command line",
    "madvise",
    ("kernel", "transparent_hugepage"),
    observe=(Cmdline("transparent_hugepage"), Sysfs(THP_DIR + "enabled", choice=True)),
    tuned=("vm", "transparent_hugepages"),  # TuneD applies it at runtime too
)
MAX_CSTATE: Setting[int] = Setting(
    "max_cstate",
    Family.ONE,
    int,
    When.RUNTIME,
    "the deepest idle state CPUs may enter (1: C1); per CPU by PM QoS at runtime, or "
    "intel_idle/processor.max_cstate at boot (kernel.cstates_at)",
    "1",
    ("kernel", "limit_cstates"),
    observe=(Sysfs("/sys/devices/system/cpu/cpu*/power/pm_qos_resume_latency_us", Per.CPU),),
    from_spec=lambda on: 1 if on else None,
)
GOVERNOR: Setting[Governor] = Setting(
    "cpu_governor",
    Family.SYSFS,
    Governor,
    When.RUNTIME,
    "cpufreq scaling governor of every CPU",
    "performance",
    ("cpufreq", "governor"),
    observe=(Sysfs(CPUFREQ + "scaling_governor", Per.POLICY),),
    tuned=("cpu", "governor"),
)
EPP: Setting[Epp] = Setting(
    "energy_performance_preference",
    Family.SYSFS,
    Epp,
    When.RUNTIME,
    "the hardware P-state hint (HWP or CPPC EPP) of intel_pstate and amd-pstate-epp",
    "performance",
    ("cpufreq", "energy_performance_preference"),
    observe=(Sysfs(CPUFREQ + "energy_performance_preference", Per.POLICY),),
    tuned=("cpu", "energy_performance_preference"),  # TuneD 2.20 (TunedFacts.epp)
)
PSTATE: Setting[PstateMode] = Setting(
    "pstate",
    Family.ONE,
    PstateMode,
    When.BOOT,
    "P-state driver mode on the command line, spelled by CPU vendor (intel_pstate= or amd_pstate=)",
    "active",
    ("cpufreq", "pstate"),
    observe=(Cmdline("amd_pstate"), Cmdline("intel_pstate")),
)
MIN_PERF_PCT: Setting[int] = Setting(
    "min_perf_pct",
    Family.SYSFS,
    int,
    When.RUNTIME,
    "intel_pstate's frequency floor for every CPU, in percent of the highest turbo P-state "
    "(active and passive mode)",
    "100",
    ("cpufreq", "min_perf_pct"),
    observe=(Sysfs(INTEL_PSTATE_DIR + "min_perf_pct"),),
    tuned=("cpu", "min_perf_pct"),  # TuneD 2.3.0 (plugin_cpu.py, intel_pstate only)
)
THP_DEFRAG: Setting[ThpDefrag] = Setting(
    "transparent_hugepage_defrag",
    Family.SYSFS,
    ThpDefrag,
    When.RUNTIME,
    "when a THP allocation may stall on compaction",
    "defer+madvise",
    ("kernel", "transparent_hugepage_defrag"),
    observe=(Sysfs(THP_DIR + "defrag", choice=True),),
    tuned=("vm", "transparent_hugepage.defrag"),
)
IOMMU: Setting[IommuMode] = Setting(
    "iommu",
    Family.ONE,
    IommuMode,
    When.BOOT,
    "IOMMU pass-through (iommu=pt, iommu.passthrough=1 off x86); `on` also forces the "
    "Intel IOMMU on and turns PCIe ACS redirect off",
    "pt",
    ("kernel", "iommu"),
    observe=(Cmdline("iommu"),),
)
IRQ_OWNER: Setting[IrqOwner] = Setting(
    "irq_owner",
    Family.ONE,
    IrqOwner,
    When.RUNTIME,
    "who places interrupts on an isolating host: irqbalance (isolated CPUs banned) or hostc",
    "irqbalance",
    ("irq", "owner"),
    observe=(UnitProperty("ActiveState", "irqbalance.service"),),
)
RUNTIME_OWNER: Setting[RuntimeOwner] = Setting(
    "runtime_owner",
    Family.ONE,
    RuntimeOwner,
    When.RUNTIME,
    "who applies the runtime settings: hostc-tuning.service (systemd) or a TuneD profile",
    "systemd",
    ("runtime", "owner"),
    observe=(Sysfs("/etc/tuned/active_profile"),),
)


def _module(name: str, module: str) -> Setting[str]:
    return Setting(
        name,
        Family.MODULE_LOAD,
        str,
        When.BOOT,
        f"load the {module} module at every boot (modules-load.d)",
        module,
        observe=(Sysfs(f"/sys/module/{module.replace('-', '_')}"),),
    )


LOAD_IB_UMAD = _module("load_ib_umad", "ib_umad")

#: Every declared setting, in the order the merge and `hostc plan` list them.
SETTINGS: tuple[Setting[Any], ...] = (
    MAX_MAP_COUNT,
    SWAPPINESS,
    OVERCOMMIT,
    AIO_MAX,
    INOTIFY_WATCHES,
    NUMA_BALANCING,
    SCHED_RT_RUNTIME,
    RMEM_MAX,
    WMEM_MAX,
    TCP_RMEM,
    TCP_WMEM,
    NETDEV_BACKLOG,
    SOMAXCONN,
    *ARP.values(),
    NOFILE,
    MEMLOCK,
    DEFAULT_HUGEPAGESZ,
    THP,
    MAX_CSTATE,
    GOVERNOR,
    EPP,
    PSTATE,
    MIN_PERF_PCT,
    THP_DEFRAG,
    IOMMU,
    IRQ_OWNER,
    RUNTIME_OWNER,
    LOAD_IB_UMAD,
)

#: Runtime settings written to their sysfs file, held in `plan.runtime.tunables`.
SYSFS_ROWS = tuple(s for s in SETTINGS if s.family is Family.SYSFS)
#: Kernel arguments spelled from their row's `Cmdline`, held in `plan.cmdline_settings`.
CMDLINE_ROWS = tuple(s for s in SETTINGS if s.family is Family.CMDLINE)
#: sysctl key → where the kernel reads it when something starts (`Setting.read_at`)
SOCKET_TIME: dict[str, str] = {
    s.name: s.read_at for s in SETTINGS if s.family is Family.SYSCTL and s.read_at
}
