"""The settings table: one row per setting hostc sets, in `hostc plan`'s order.

A sysctl the spec names that no row declares gets a row made on the spot
(`hostc.settings.sysctl`): any dotted name is a sysctl.
"""

from __future__ import annotations

from typing import Any

from hostc.knowledge.kernel import NR_OPEN_DEFAULT
from hostc.settings.model import (
    ANY,
    Cmdline,
    Family,
    Merge,
    Per,
    ProcLimit,
    Setting,
    Sysfs,
    UnitProperty,
    sysctl_setting,
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
THP_DIR = "/sys/kernel/mm/transparent_hugepage/"

# Sysctls the presets set (the spec may set any other: `sysctl."<key>"`), each with
# what the kernel says about it: its default per release and where that is written.
MAX_MAP_COUNT = sysctl_setting(
    "vm.max_map_count",
    "memory map areas a process may have",
    "1048576",
    kernel_defaults=((ANY, (65530,)),),
    limit=True,
    source="Documentation/admin-guide/sysctl/vm.rst: DEFAULT_MAX_MAP_COUNT 65530",
)
SWAPPINESS = sysctl_setting(
    "vm.swappiness",
    "how eagerly the kernel swaps anonymous memory",
    "1",
    kernel_defaults=((ANY, (60,)),),
    source="Documentation/admin-guide/sysctl/vm.rst: default 60",
)
OVERCOMMIT = sysctl_setting(
    "vm.overcommit_memory",
    "0 heuristic, 1 always allow, 2 strict accounting",
    "1",
    kernel_defaults=((ANY, (0,)),),
    source="Documentation/mm/overcommit-accounting.rst: 0 heuristic (default)",
)
AIO_MAX = sysctl_setting(
    "fs.aio-max-nr",
    "system-wide limit of async I/O requests",
    "1048576",
    kernel_defaults=((ANY, (65536,)),),
    limit=True,
    source="Documentation/admin-guide/sysctl/fs.rst: aio-max-nr default 65536",
)
INOTIFY_WATCHES = sysctl_setting(
    "fs.inotify.max_user_watches",
    "inotify watches per user",
    "524288",
    # Since Linux 5.11 the default scales with RAM (1 % of it, in watches), capped at
    # 1048576, which hosts with more than about 128 GiB reach.
    kernel_defaults=((ANY, (8192,)), ((5, 11), (1048576,))),
    limit=True,
    source="fs/notify/inotify/inotify_user.c (RAM-scaled default since Linux 5.11)",
)
NUMA_BALANCING = sysctl_setting(
    "kernel.numa_balancing",
    "automatic NUMA page migration (1 on, 0 off)",
    "0",
    added=(3, 8),
    source="Documentation/admin-guide/sysctl/kernel.rst (NUMA balancing, Linux 3.8)",
)
RMEM_MAX = sysctl_setting(
    "net.core.rmem_max",
    "largest socket receive buffer a program may ask for; layers take the largest",
    "268435456",
    merge=Merge.MAX,
    kernel_defaults=((ANY, (212992,)),),
    limit=True,
    source="net/core/sock.c: SK_RMEM_MAX (212992 on 64-bit); read by sk_setsockopt",
    read_at="read at setsockopt(SO_RCVBUF)",
)
WMEM_MAX = sysctl_setting(
    "net.core.wmem_max",
    "largest socket send buffer a program may ask for; layers take the largest",
    "268435456",
    merge=Merge.MAX,
    kernel_defaults=((ANY, (212992,)),),
    limit=True,
    source="net/core/sock.c: SK_WMEM_MAX (212992 on 64-bit); read by sk_setsockopt",
    read_at="read at setsockopt(SO_SNDBUF)",
)
TCP_RMEM = sysctl_setting(
    "net.ipv4.tcp_rmem",
    "TCP receive buffer: min, initial, max bytes",
    "4096 131072 268435456",
    str,
    # Linux 4.20 raised the initial receive buffer from 87380 to 131072 bytes ("tcp: up
    # initial rmem to 128KB"); the maximum scales with memory.
    kernel_defaults=((ANY, (4096, 87380, 6291456)), ((4, 20), (4096, 131072, 6291456))),
    limit=True,
    source="Documentation/networking/ip-sysctl.rst tcp_rmem: default 131072 bytes; "
    "net/ipv4/tcp.c tcp_init_sock reads the initial buffer",
    read_at="the initial buffer is read when a socket is made",
)
TCP_WMEM = sysctl_setting(
    "net.ipv4.tcp_wmem",
    "TCP send buffer: min, initial, max bytes",
    "4096 65536 268435456",
    str,
    kernel_defaults=((ANY, (4096, 16384, 4194304)),),
    limit=True,
    source="Documentation/networking/ip-sysctl.rst tcp_wmem; net/ipv4/tcp.c tcp_init_sock "
    "reads the initial buffer",
    read_at="the initial buffer is read when a socket is made",
)
NETDEV_BACKLOG = sysctl_setting(
    "net.core.netdev_max_backlog",
    "packets queued per CPU before the stack drops",
    "250000",
    kernel_defaults=((ANY, (1000,)),),
    limit=True,
    source="Documentation/admin-guide/sysctl/net.rst: netdev_max_backlog 1000",
)
SOMAXCONN = sysctl_setting(
    "net.core.somaxconn",
    "listen() backlog ceiling",
    "65535",
    kernel_defaults=((ANY, (128,)), ((5, 4), (4096,))),
    limit=True,
    source="Documentation/networking/ip-sysctl.rst somaxconn; 4096 since Linux 5.4; "
    "net/socket.c __sys_listen reads it",
    read_at="read at listen(), which caps the backlog then",
)
# The max of `all` and the interface's value applies (ip-sysctl.rst), so a preset writes
# `all` and `default`; 0 is each one's default.
ARP = {
    (scope, k): sysctl_setting(
        f"net.ipv4.conf.{scope}.{k}",
        why,
        example,
        kernel_defaults=((ANY, (0,)),),
        source=f"Documentation/networking/ip-sysctl.rst {k}: 0 (default)",
    )
    for scope in ("all", "default")
    for k, why, example in (
        ("arp_announce", "which local address ARP requests name (2: the outgoing NIC's)", "2"),
        ("arp_ignore", "which ARP requests a NIC answers (1: for its own address only)", "1"),
    )
}

#: Sysctls no preset sets whose kernel facts hostc knows: lower raises fs.nr_open for a
#: high nofile; check warns on the others where the spec names them on a kernel that
#: no longer has them (`sysctl --system` then logs "cannot stat" for each).
KNOWN_SYSCTLS: tuple[Setting[Any], ...] = (
    sysctl_setting(
        "fs.nr_open",
        "the most file descriptors a process may have (the ceiling of nofile)",
        "1048576",
        kernel_defaults=((ANY, (NR_OPEN_DEFAULT,)),),
        limit=True,
        source="Documentation/admin-guide/sysctl/fs.rst: nr_open defaults to 1024*1024",
    ),
    # Moved from /proc/sys to debugfs (/sys/kernel/debug/sched/) in Linux 5.13.
    *(
        sysctl_setting(
            f"kernel.{name}",
            "a CFS scheduler tunable",
            removed=(5, 13),
            source="Linux 5.13 moved the CFS tunables to debugfs (sched/debug)",
        )
        for name in (
            "sched_min_granularity_ns",
            "sched_latency_ns",
            "sched_wakeup_granularity_ns",
            "sched_migration_cost_ns",
            "sched_nr_migrate",
            "sched_tunable_scaling",
        )
    ),
    sysctl_setting(
        "net.ipv4.tcp_tw_recycle",
        "recycle TIME-WAIT sockets fast",
        removed=(4, 12),
        source="Linux 4.12 removed tcp_tw_recycle (broken behind NAT)",
    ),
)

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
    Family.ONE,
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
    THP_DEFRAG,
    IOMMU,
    IRQ_OWNER,
    RUNTIME_OWNER,
    LOAD_IB_UMAD,
)

#: Runtime settings written to their sysfs file, held in `plan.runtime.tunables`.
SYSFS_ROWS = tuple(s for s in SETTINGS if s.family is Family.SYSFS)
#: sysctl key → where the kernel reads it when something starts (`Setting.read_at`)
SOCKET_TIME: dict[str, str] = {
    s.name: s.read_at for s in SETTINGS if s.family is Family.SYSCTL and s.read_at
}
