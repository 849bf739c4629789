"""What interrupts a CPU, as the kernel's own counters name it: the facts `hostc measure`
reads /proc by and judges a count with (hostc.measure).

Each row says where the kernel prints or decides it, so a reviewer can check the
label a parser matches, or the allowance a count is judged against, without this repo.
"""

from __future__ import annotations

import enum

from hostc.knowledge.table import Table


class NoiseKind(enum.StrEnum):
    """The source of an interruption, as `hostc measure` groups them."""

    DEVICE = "irq"  # one device interrupt line (a numbered row of /proc/interrupts)
    TICK = "tick"  # the CPU's local timer: the scheduling-clock tick
    RESCHED = "resched"  # rescheduling IPI
    CALL = "call"  # function-call IPI
    TLB = "tlb"  # TLB shootdown IPI
    IRQ_WORK = "irq-work"  # irq_work IPI
    NMI = "nmi"  # non-maskable interrupts
    ARCH = "arch"  # any other architecture row, named by the file's own label
    SOFTIRQ = "softirq"  # one softirq vector of /proc/softirqs
    TASK = "task"  # another task switched in on the CPU
    NUMA = "numa"  # NUMA balancing's page-table scans (/proc/vmstat, host-wide)


_X86 = 'arch/x86/kernel/irq.c arch_show_interrupts: seq_printf(p, "%*s: ", prec, "{}") … "  {}\\n"'
_ARM = "arch/arm64/kernel/smp.c ipi_types[{}] (printed by show_ipi_list after the IPIn: row)"

#: The label an architecture row of /proc/interrupts ends with (lowercased) → its kind.
#: x86 prints a three-letter key and this label; arm64 and riscv print `IPIn:` and the
#: same words for their IPIs.  A label not listed is an ARCH row named by its label.
ARCH_LABELS: Table[str, NoiseKind] = Table(
    {
        "local timer interrupts": (NoiseKind.TICK, _X86.format("LOC", "Local timer interrupts")),
        "timer broadcast interrupts": (
            NoiseKind.TICK,
            _ARM.format("IPI_TIMER") + ": the tick, sent by another CPU while this one's "
            "timer is stopped in a deep idle state",
        ),
        "rescheduling interrupts": (
            NoiseKind.RESCHED,
            _X86.format("RES", "Rescheduling interrupts") + "; " + _ARM.format("IPI_RESCHEDULE"),
        ),
        "function call interrupts": (
            NoiseKind.CALL,
            _X86.format("CAL", "Function call interrupts") + "; " + _ARM.format("IPI_CALL_FUNC"),
        ),
        "tlb shootdowns": (NoiseKind.TLB, _X86.format("TLB", "TLB shootdowns")),
        "irq work interrupts": (
            NoiseKind.IRQ_WORK,
            _X86.format("IWI", "IRQ work interrupts") + "; " + _ARM.format("IPI_IRQ_WORK"),
        ),
        "non-maskable interrupts": (NoiseKind.NMI, _X86.format("NMI", "Non-maskable interrupts")),
    }
)

#: x86 rows by their key, for kernels that print no label after the counts (the
#: SMP example of Documentation/filesystems/proc.rst: `NMI:`, `LOC:` and `ERR:` bare).
X86_KEYS: Table[str, str] = Table(
    {
        "NMI": ("Non-maskable interrupts", _X86.format("NMI", "Non-maskable interrupts")),
        "LOC": ("Local timer interrupts", _X86.format("LOC", "Local timer interrupts")),
        "RES": ("Rescheduling interrupts", _X86.format("RES", "Rescheduling interrupts")),
        "CAL": ("Function call interrupts", _X86.format("CAL", "Function call interrupts")),
        "TLB": ("TLB shootdowns", _X86.format("TLB", "TLB shootdowns")),
        "IWI": ("IRQ work interrupts", _X86.format("IWI", "IRQ work interrupts")),
        "ERR": (
            "APIC errors",
            'arch/x86/kernel/irq.c: seq_printf(p, "%*s: %10u\\n", prec, "ERR", …)',
        ),
        "MIS": ("mis-routed IO-APIC interrupts", 'arch/x86/kernel/irq.c ("MIS", X86_IO_APIC)'),
    }
)

#: Device interrupt lines that are the CPU's own tick (a per-CPU interrupt), by action name.
TICK_ACTIONS: Table[str, str] = Table(
    {
        "arch_timer": (
            "the Arm generic timer, each CPU's tick on arm64",
            "drivers/clocksource/arm_arch_timer.c arch_timer_register: "
            'request_percpu_irq(ppi, …, "arch_timer", …)',
        ),
    }
)

#: The softirq vectors /proc/softirqs lists, in the kernel's order, with what raises them.
SOFTIRQS: Table[str, str] = Table(
    {
        name: (meaning, "kernel/softirq.c softirq_to_name[] (include/linux/interrupt.h enum)")
        for name, meaning in (
            ("HI", "high-priority tasklets"),
            ("TIMER", "timer-wheel timers expiring, raised by the tick"),
            ("NET_TX", "network transmit completion"),
            ("NET_RX", "network receive processing (after a NIC interrupt, or busy polling)"),
            ("BLOCK", "block I/O completion"),
            ("IRQ_POLL", "polled interrupt handlers (irq_poll)"),
            ("TASKLET", "tasklets, mostly queued by device interrupts"),
            ("SCHED", "scheduler load balancing, raised by the tick"),
            ("HRTIMER", "high-resolution timers run in softirq context"),
            ("RCU", "RCU core processing, raised from the tick (rcu_sched_clock_irq)"),
        )
    }
)

#: Softirqs raised by the CPU's own tick: judged with the tick's count and cause.
TICK_SOFTIRQS: Table[str, bool] = Table.members(
    ("TIMER", "SCHED", "RCU"),
    "kernel/time/timer.c run_local_timers raises TIMER_SOFTIRQ; kernel/sched/fair.c "
    "trigger_load_balance raises SCHED_SOFTIRQ; kernel/rcu/tree.c "
    "rcu_sched_clock_irq → invoke_rcu_core raises RCU_SOFTIRQ: all from the scheduling-clock tick",
)

#: Softirqs that follow device interrupts (their work is queued by an interrupt handler).
DEVICE_SOFTIRQS: Table[str, bool] = Table.members(
    ("HI", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET"),
    "include/linux/interrupt.h: tasklets, NAPI (net/core/dev.c napi_schedule) and block "
    "completions (block/blk-mq.c) are raised by device interrupt handlers or by the CPU's own I/O",
)

#: Ticks an adaptive-ticks (nohz_full) CPU still takes per second while it runs a task.
RESIDUAL_TICK_HZ = 1
RESIDUAL_TICK_SOURCE = (
    "Documentation/timers/no_hz.rst, Known Issues: 'Some process-handling operations "
    "still require the occasional scheduling-clock tick. … They are currently "
    "accommodated by scheduling-clock tick every second or so.'"
)
#: Ticks allowed on top of one per second: the ticks of entering and leaving adaptive-tick
#: mode around one wake-up at each end of the window (hostc's allowance, not the kernel's).
RESIDUAL_TICK_SLACK = 2

#: /proc/PID/stat's flags field: a kernel thread (include/linux/sched.h PF_KTHREAD).
PF_KTHREAD = 0x00200000

#: Per-CPU kernel threads (`name/CPU`, kworker `N:M`), by name prefix: what each does on
#: the CPU it is bound to.  Each runs there by the kernel's design.
PER_CPU_KTHREADS: Table[str, str] = Table(
    {
        "ksoftirqd/": (
            "softirqs deferred to this CPU's thread (counted again in the softirq rows)",
            "kernel/softirq.c softirq_threads: ksoftirqd/%u, one per CPU",
        ),
        "migration/": (
            "this CPU's stopper thread: task migration off or onto it, stop_machine",
            "kernel/stop_machine.c cpu_stop_threads: migration/%u",
        ),
        "cpuhp/": ("the CPU hotplug thread", "kernel/cpu.c cpuhp_threads: cpuhp/%u"),
        "kworker/": (
            "per-CPU work queued on this CPU (vmstat_update, LRU drains, …)",
            "kernel/workqueue.c create_worker: kworker/%d:%d%s for a CPU's pool, "
            "Documentation/core-api/workqueue.rst",
        ),
        "rcuc/": (
            "RCU callbacks invoked on this CPU's own thread (RCU_BOOST, PREEMPT_RT)",
            "kernel/rcu/tree.c rcu_cpu_thread_spec: rcuc/%u",
        ),
        "ktimers/": (
            "timer softirqs on PREEMPT_RT's per-CPU timer thread",
            "kernel/softirq.c timer_threads: ktimers/%u (PREEMPT_RT)",
        ),
    }
)

#: Unbound kernel threads start on nohz_full='s housekeeping CPUs and stay there unless
#: they set an affinity of their own (the per-node ones below do).
KTHREAD_HOUSEKEEPING = (
    "kernel/sched/isolation.c housekeeping_nohz_full_setup: nohz_full= sets HK_FLAG_KTHREAD "
    "(with TICK, WQ, TIMER, RCU, MISC); kernel/kthread.c kthread(): "
    "set_cpus_allowed_ptr(current, housekeeping_cpumask(HK_TYPE_KTHREAD))"
)

#: Kernel threads of one NUMA node: their affinity is the node's CPUs, isolated ones too,
#: and nothing the kernel command line sets moves them.
NODE_KTHREADS: Table[str, str] = Table(
    {
        "kcompactd": (
            "proactive compaction of its node's memory (wakes every 500 ms); "
            "vm.compaction_proactiveness = 0 stops the proactive part",
            "mm/compaction.c kcompactd: set_cpus_allowed_ptr(tsk, "
            "cpumask_of_node(pgdat->node_id)); "
            "Documentation/admin-guide/sysctl/vm.rst compaction_proactiveness",
        ),
        "kswapd": (
            "page reclaim of its node's memory",
            "mm/vmscan.c kswapd: set_cpus_allowed_ptr(tsk, cpumask_of_node(pgdat->node_id))",
        ),
    }
)

#: The RCU callback-offload threads of CPU N: they exist only where N's callbacks are
#: offloaded (rcu_nocbs), and the scheduler places them unless someone pins them.
RCU_OFFLOAD_THREADS = r"rcuo[gps]/(\d+)"
RCU_OFFLOAD_SOURCE = (
    "kernel/rcu/tree_nocb.h rcu_spawn_cpu_nocb_kthread: rcuo%c/%d; Documentation/timers/"
    "no_hz.rst: 'it is up to userspace to pin the \"rcuo\" kthreads to specific CPUs'"
)

#: /proc/schedstat versions whose `cpuN` line ends with rq_sched_info.pcount (the switch-ins
#: of tasks other than idle, counted whether or not kernel.sched_schedstats is on).
SCHEDSTAT_PCOUNT: Table[int, int] = Table(
    {
        v: (
            9,
            "kernel/sched/stats.c show_schedstat: 'cpu%d %u 0 %u %u %u %u %llu %llu %lu' "
            "ending in rq->rq_sched_info.pcount; kernel/sched/stats.h rq_sched_info_arrive "
            "increments it under CONFIG_SCHEDSTATS alone (no schedstat_enabled())",
        )
        for v in (15, 16, 17)
    }
)

#: /proc/vmstat counters of automatic NUMA balancing (the seeds: "if the jitter correlates
#: with numa_pte_updates, try kernel.numa_balancing=0").
NUMA_COUNTERS: Table[str, str] = Table(
    {
        "numa_pte_updates": (
            "page-table entries NUMA balancing marked to take a hinting fault",
            "mm/vmstat.c vmstat_text NUMA_PTE_UPDATES; Documentation/admin-guide/sysctl/"
            "kernel.rst numa_balancing",
        ),
        "numa_hint_faults": (
            "NUMA hinting faults taken (each interrupts the task that touches the page)",
            "mm/vmstat.c vmstat_text NUMA_HINT_FAULTS",
        ),
    }
)
