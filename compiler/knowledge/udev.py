"""How a udev rule hands work to systemd without losing an event (hostc's NIC rule).

hostc-tuning must run again when a NIC of the Plan (re)appears, and once for the burst
of events one driver reload makes (`targets/templates/hostc-tuning.rules.j2`).  udev
may not run it itself: a RUN+= program is for "very short-running foreground tasks",
and "the forked processes, detached or not, will be unconditionally killed after the
event handling has finished" (udev(7), RUN).  So the rule asks systemd for a transient
timer of a fixed name (`systemd-run --on-active=N --unit=NAME`), which debounces the
burst: while that timer (and the service it starts) exists, a second `systemd-run` of
the same name fails, and its event is served by the run already queued.  Each word of
the rule, and what it does to that window:
"""

from __future__ import annotations

from hostc.knowledge.table import Table

#: Each word of the rule's RUN+= command → what it does (the rule's behaviour is the
#: sum of these rows; tests/unit/plan/test_runtime_owners.py reads the rule by them).
DEBOUNCE: Table[str, str] = Table(
    {
        "systemd-run --no-block": (
            "udev's worker returns as soon as the transient units are queued",
            "systemd-run(1) --no-block: 'Do not synchronously wait for the requested "
            "operation to finish. If this is not specified, the job will be verified, "
            "enqueued and systemd-run will wait until the unit's start-up is completed. By "
            "passing this argument, it is only verified and enqueued.'",
        ),
        "--on-active": (
            "a transient timer NAME.timer and service NAME.service; the service runs the "
            "command when the timer elapses",
            "systemd-run(1): 'If a command is run with timer options such as "
            "--on-calendar= (see below), a transient timer unit is created alongside the "
            "service unit for the specified command. Only the transient timer unit is started "
            "immediately, the transient service unit will be started when the transient timer "
            "elapses'",
        ),
        "RemainAfterElapse=no": (
            "the timer is unloaded, and its name free again, once its service has "
            "finished, not when it elapses: the name is held for as long as the command runs",
            "systemd src/run/run.c transient_timer_set_properties: 'Automatically clean up "
            'our transient timers\': RemainAfterElapse "b" false; systemd.timer(5) '
            "RemainAfterElapse=: 'If false, an elapsed timer unit that cannot elapse anymore "
            "is unloaded once its associated unit deactivated again'",
        ),
        "--collect": (
            "the transient service is unloaded when it ends, even when it failed "
            "(CollectMode=inactive-or-failed), so a failed run does not hold the name",
            "systemd-run(1) --collect: 'Unload the transient unit after it completed, even if "
            "it failed'",
        ),
        "systemctl --no-block": (
            "the inner restart is only queued, so the transient service ends as soon as the "
            "timer fires: a device that appears while hostc-tuning runs finds the name free, "
            "starts a new timer and gets a run after this one.  A blocking `systemctl "
            "restart` would hold the name until hostc-tuning finished, and such a device's "
            "systemd-run would fail ('failed with exit code 1') and be lost",
            "systemctl(1) --no-block: 'If this is not specified, the job will be verified, "
            "enqueued and systemctl will wait until the unit's start-up is completed. By "
            "passing this argument, it is only verified and enqueued'; review-outputs-4 R2 "
            "(a booted Debian 12, systemd 252: the blocking form lost a netdev added 3.4 s "
            "into the run; with --no-block a second run saw it)",
        ),
    }
)
