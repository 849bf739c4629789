"""What the preset layers leave out on purpose, each with why: the low-latency habits no
role gets, and what the opt-in realtime layer (`cpu.realtime`) does not set beside RT
throttling.  `hostc plan` lists them; `hostc explain` names their layer."""

from __future__ import annotations

from hostc.provenance import Layer, LeftOut, PresetLayer, Reason


def _out(setting: str, why: str, layer: Layer = Layer.BASE) -> LeftOut:
    return LeftOut(setting, Reason(PresetLayer(layer), why))


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


#: What real-time profiles (TuneD's realtime, NTO's realTime hint) set beside the
#: throttling that the realtime layer leaves out, each with why (`cpu.realtime` only).
REALTIME_LEFT_OUT: tuple[LeftOut, ...] = (
    _out(
        "rcutree.kthread_prio",
        "the SCHED_FIFO priority of RCU's kthreads (rcuc, rcub, the grace-period kthreads "
        "and, with RCU_NOCB_CPU, the offload kthreads; kernel-parameters.txt) must sit "
        "above the real-time threads that could starve them and below those that must not "
        "be preempted: it depends on the application's priorities, which hostc does not "
        "know (kernel.extra_args sets it; NTO uses 11)",
        Layer.REALTIME,
    ),
    _out(
        "stalld",
        "hostc enables no service: where the distribution ships stalld, enable it beside "
        "this layer; it gives a task a real-time thread starves a short SCHED_DEADLINE "
        "slice, which sched_rt_runtime_us = -1 no longer does, and each slice is jitter "
        "for the real-time thread",
        Layer.REALTIME,
    ),
    _out(
        "kernel.hung_task_timeout_secs",
        "a task blocked for 120 s behind a real-time thread is what the hung-task detector "
        "should report on this host; TuneD's network-latency profile (which its realtime "
        "profile includes) and NTO raise the timeout to 600 s",
        Layer.REALTIME,
    ),
)
