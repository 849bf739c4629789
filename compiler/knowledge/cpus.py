"""CPU facts hostc relies on for the frequency floor, offline CPUs and RCU's offload
kthreads, each with the primary source it comes from (the kernel's documentation or
code, named in place)."""

from __future__ import annotations

from hostc.knowledge.table import Table

#: The scaling drivers that expose intel_pstate's global `min_perf_pct`: intel_pstate
#: registers as `intel_pstate` in active mode and `intel_cpufreq` in passive mode
#: (Documentation/admin-guide/pm/intel_pstate.rst, "Interpretation of Policy Attributes":
#: the scaling_driver attribute "is either intel_pstate (in the active mode) or
#: intel_cpufreq (in the passive mode)"), and the global limits apply "regardless of the
#: current operation mode of the driver" ("Coordination of P-State Limits").
_PSTATE_RST = "Documentation/admin-guide/pm/intel_pstate.rst, Interpretation of Policy Attributes"
INTEL_PSTATE_DRIVERS: Table[str, str] = Table(
    {
        "intel_pstate": ("active mode", _PSTATE_RST),
        "intel_cpufreq": ("passive mode", _PSTATE_RST),
    }
)

#: What `min_perf_pct` does and costs (intel_pstate.rst, Global Attributes: "Minimum
#: P-state the driver is allowed to set in percent of the maximum supported performance
#: level (the highest supported turbo P-state)"; drivers/cpufreq/intel_pstate.c
#: store_min_perf_pct clamps it to max_perf_pct, and no_turbo lowers it to the highest
#: non-turbo P-state).
MIN_PERF_PCT_WHY = (
    "intel_pstate asks no CPU for a P-state below {pct} % of the highest turbo P-state, "
    "so a thread waking on an idle core does not wait for its clock to ramp up "
    "(Documentation/admin-guide/pm/intel_pstate.rst, min_perf_pct; TuneD's "
    "latency-performance sets 100); cost: the power and heat of cores that never clock "
    "down while they run"
)

#: The argument that hides `min_perf_pct` (intel_pstate.rst: "This attribute will not be
#: exposed if the intel_pstate=per_cpu_perf_limits argument is present").
PER_CPU_PERF_LIMITS = "intel_pstate=per_cpu_perf_limits"

#: A CPU taken offline: Documentation/core-api/cpu_hotplug.rst ("echo 0 >
#: /sys/devices/system/cpu/cpuX/online"; the file is absent where the CPU cannot be
#: offlined), Documentation/admin-guide/kernel-per-CPU-kthreads.rst
#: ("/sys/devices/system/cpu/cpuN/online: ... writing 0 to offline").
ONLINE_FILE = "/sys/devices/system/cpu/cpu{}/online"
#: how the Plan names the write of one CPU's online file (`runtime.sysfs`)
ONLINE_WRITE = "cpu{}_online"


def is_online_write(name: str) -> bool:
    """Whether a runtime sysfs write of the Plan takes a CPU offline (`ONLINE_WRITE`)."""
    return name.startswith("cpu") and name.endswith("_online") and name[3:-7].isdigit()


#: Why the boot CPU stays online: cpu_hotplug.rst says some architectures cannot
#: offline CPU 0 (no `online` file: x86 removed its CPU0 hotplug option in Linux 6.5,
#: commits 5475abbde77f "x86/smpboot: Remove the CPU0 hotplug kludge" and e59e74dc48a3
#: "x86/topology: Remove CPU0 hotplug option"), and with nohz_full the timekeeping CPU
#: refuses to go (kernel/time/tick-sched.c tick_nohz_cpu_down: -EBUSY for
#: tick_do_timer_cpu).
BOOT_CPU_STAYS = (
    "the boot CPU stays online: many kernels offer it no online file "
    "(Documentation/core-api/cpu_hotplug.rst), and it keeps the timekeeping duty for "
    "nohz_full CPUs (tick_nohz_cpu_down refuses)"
)

#: Why offline CPUs go by whole cores: an offline SMT thread frees no core (its sibling
#: keeps it busy), and the kubelet's CPU manager counts threads per core as CPUs / cores
#: (pkg/kubelet/cm/cpumanager/topology CPUsPerCore), which cores of unequal size throw
#: off for full-pcpus-only; SMT off on every core is the kernel's own `nosmt`
#: (kernel-parameters.txt).
WHOLE_CORES_WHY = (
    "a core with one thread offline keeps running its others, so nothing is freed, and "
    "the kubelet's CPU manager counts threads per core as CPUs / cores, which uneven "
    "cores throw off"
)

#: The kthreads that run an offloaded CPU's RCU callbacks (rcuop/N, rcuos/N) and their
#: grace periods (rcuog/N): "Use affinity, cgroups, or other mechanism to force these
#: kthreads to execute on some other CPU" (Documentation/admin-guide/
#: kernel-per-CPU-kthreads.rst, "rcuop/%d, rcuos/%d, and rcuog/%d").  Without nohz_full
#: kthreadd hands them every CPU (housekeeping_cpumask(HK_TYPE_KTHREAD) is all CPUs).
_KTHREADS_RST = (
    "Documentation/admin-guide/kernel-per-CPU-kthreads.rst, rcuop/%d, rcuos/%d, and rcuog/%d"
)
RCU_OFFLOAD_KTHREADS: Table[str, str] = Table(
    {
        "rcuop/": ("callbacks of a CPU (preemptible RCU)", _KTHREADS_RST),
        "rcuos/": ("callbacks of a CPU (RCU-sched)", _KTHREADS_RST),
        "rcuog/": ("grace periods of a group of CPUs", _KTHREADS_RST),
    }
)
