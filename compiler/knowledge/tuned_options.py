"""What each TuneD release reads: the first release that reads each option hostc writes.

The releases each distribution ships are `hostc.knowledge.distro.TUNED`; a host's TuneD
reads an option when its release is at least the option's row here
(`hostc.knowledge.distro.tuned_reads`, resolved once in lower as `HostFacts.tuned`).
"""

from __future__ import annotations

from hostc.knowledge.table import Table

#: The first TuneD release that reads each option hostc writes (`git log -S` and
#: `git describe --contains` in redhat-performance/tuned).  An older TuneD logs
#: "Unknown option" (plugins/base.py) and ignores it.
TUNED_OPTION_SINCE: Table[str, tuple[int, int, int]] = Table(
    {
        "cpu.energy_performance_preference": (
            (2, 20, 0),
            "[cpu] energy_performance_preference: commit 944e922 (2022-11-14), v2.20.0",
        ),
        "cpu.force_latency.cstate.id_no_zero": (
            (2, 18, 0),
            "[cpu] force_latency=cstate.id_no_zero:N: commit fc0dbea (2022-02-01, PR #404 "
            '"Expanding cpu plugin force_latency option syntax"), v2.18.0',
        ),
        "scheduler.cgroup_ps_blacklist": (
            (2, 17, 0),
            "[scheduler] cgroup_ps_blacklist: commit 438ff4f (2021-07-15), v2.17.0",
        ),
        "scheduler.runtime": (
            (2, 5, 0),
            "[scheduler] runtime=0 (no perf-driven runtime tuning): commit ff3f8ae (2015), v2.5.0",
        ),
        "net.channels": ((2, 16, 0), "[net] channels: commit 0ab1f8c (2021-01-22), v2.16.0"),
        "net.dynamic": (
            (2, 9, 0),
            "[net] dynamic (per-instance dynamic tuning off): commit 7e7b1ee (2017-09-25), v2.9.0",
        ),
        "unit.devices_udev_regex": (
            (2, 8, 0),
            "devices_udev_regex (udev-property device matching): commit f14ae65 (2017-02-28), "
            "v2.8.0",
        ),
        "unit.type": (
            (2, 1, 0),
            "type= (a section other than its plugin's name, profiles/unit.py): commit 69679ea "
            "(2012-10-26), v2.1.0",
        ),
        "irqbalance.banned_cpus": (
            (2, 14, 0),
            "[irqbalance] banned_cpus (plugin_irqbalance.py added): commit 3c7b419, v2.14.0",
        ),
        "systemd.cpu_affinity": (
            (2, 8, 0),
            "[systemd] cpu_affinity (plugin_systemd.py added): commit bfc6214, v2.8.0",
        ),
        "vm.transparent_hugepage.defrag": (
            (2, 11, 0),
            "[vm] transparent_hugepage.defrag: commit 26db89d, v2.11.0",
        ),
        "cpu.energy_perf_bias": ((2, 3, 0), "[cpu] energy_perf_bias: commit 59e259a, v2.3.0"),
        "cpu.min_perf_pct": (
            (2, 3, 0),
            "[cpu] min_perf_pct (written only where /sys/devices/system/cpu/intel_pstate "
            'exists): commit 94e383a (2013-11-05, "plugin_cpu: added support for '
            'intel_pstate"), v2.3.0',
        ),
        "bootloader.cmdline_suffix": (
            (2, 5, 0),
            "[bootloader] cmdline_<suffix>: commit 6c51fc8, v2.5.0",
        ),
    }
)
