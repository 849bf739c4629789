"""What a virtual machine, a missing cpufreq or cpuidle driver, or a tiny host makes of
the settings hostc gives (`hostc check`/`plan` warn; `hostc init` leaves them out).

- cpufreq: the governor, EPP and P-state mode act through a cpufreq driver.  The
  policies (cpuN/cpufreq, cpufreq/policyN) are made when a driver registers
  (drivers/cpufreq/cpufreq.c: cpufreq_register_driver → cpufreq_online); only the
  empty cpu/cpufreq directory exists without one (cpufreq_core_init), so there is
  nothing to write, and `intel_pstate=`/`amd_pstate=` pick a driver that is not loaded.
- cpuidle: C-state limits (PM QoS resume latency, intel_idle/processor.max_cstate) are
  read by a cpuidle driver and its governor; with none (cpu/cpuidle/current_driver
  says `none`) the idle loop calls the architecture's default idle
  (kernel/sched/idle.c: cpuidle_idle_call → default_idle_call), which reads neither.
- a guest (the x86 `hypervisor` CPU flag, CPUID leaf 1 ECX bit 31): its vCPUs are
  threads the host schedules; their frequency and deep idle states are the host's.
"""

from __future__ import annotations

from hostc.knowledge.table import Table

#: the settings that need a cpufreq driver (scaling_governor, EPP, the P-state mode)
CPUFREQ_SETTINGS: Table[str, bool] = Table.members(
    ("cpu_governor", "energy_performance_preference", "pstate"),
    "drivers/cpufreq/cpufreq.c: the policies (scaling_governor, "
    "energy_performance_preference) exist once a driver registers; "
    "Documentation/admin-guide/pm/intel_pstate.rst, amd-pstate.rst: the P-state argument "
    "picks that driver's mode",
)
#: the setting that needs a cpuidle driver (PM QoS at runtime, max_cstate at boot)
CPUIDLE_SETTINGS: Table[str, bool] = Table.members(
    ("max_cstate",),
    "kernel/sched/idle.c: cpuidle_idle_call falls back to default_idle_call without a "
    "cpuidle driver; PM QoS resume latency and max_cstate are read by the driver and "
    "its governor",
)
#: fewer housekeeping CPUs than this and `check` warns: housekeeping runs every IRQ
#: kept off the isolated CPUs, every unbound kernel thread and workqueue, the isolated
#: CPUs' RCU callbacks (rcu_nocbs offloads them here) and every system service; on one
#: CPU any of them stalls all the others, where two let one run while another blocks
MIN_HOUSEKEEPING_CPUS = 2
