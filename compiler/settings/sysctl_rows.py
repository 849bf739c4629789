"""The sysctl rows of the settings table (`hostc.settings.table` lists them in order):
the sysctls the presets set, each with what the kernel says about it, and the ones no
preset sets whose kernel facts hostc knows.  Kept apart from the other families because
they are a third of the table and read only the kernel's facts.
"""

from __future__ import annotations

from typing import Any

from hostc.knowledge.kernel import NR_OPEN_DEFAULT
from hostc.settings.model import ANY, Merge, Setting, sysctl_setting

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
SCHED_RT_RUNTIME = sysctl_setting(
    "kernel.sched_rt_runtime_us",
    "microseconds of each sched_rt_period_us that real-time tasks may use (-1: no limit)",
    "-1",
    kernel_defaults=((ANY, (950000,)),),
    source="Documentation/scheduler/sched-rt-group.rst: sched_rt_runtime_us defaults to "
    "950000 of a 1000000 us period, 0.05 s of each second left to non-RT tasks; -1 "
    "removes the limit",
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
