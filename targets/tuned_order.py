"""tuned_order: TuneD's profile applied before the container runtimes, the kubelet and
the workloads start, where TuneD owns the runtime settings (issue 52, F3).

hostc-tuning.service is `Before=` every unit that starts pods or a workload
(`hostc.knowledge.runtime.KUBE_UNITS` and the workloads' units); with `[runtime] owner =
"tuned"` the same settings come from TuneD, and tuned.service (upstream: After=
systemd-sysctl network dbus polkit, no Before=) orders nothing, so a pod restarted at
boot could start before the profile's `[sysfs]`, `[cpu]` and `[irqbalance]` apply.

`hostc-tuned-ready.service` closes that: a oneshot `After=tuned.service` and `Before=`
those units (and hostc-verify.service), whose script returns once TuneD answers on D-Bus
with the hostc profile active.  tuned.service is `Type=dbus`: systemd sees it started
when TuneD takes the name com.redhat.tuned, which TuneD does (from 2.10, daemon.py
`_thread_code`: `start_tuning()`, "static tuning from profile … applied", then
`exports.start()`) only after the static tuning is applied, or at once when no profile
could be loaded (controller.py `run`: `exports.start()` when `start()` failed).  So the
script tells the two apart: the D-Bus method `active_profile` names the profile the daemon
runs ("" when none loaded).  A bounded wait, then a failure the journal and `systemctl
--failed` show; the units it orders still start (ordering, not a dependency: a node whose
TuneD failed keeps its pods).  It orders only: delivered, it is enabled and takes effect
at the next boot (a daemon-reload, nothing restarted).  NTO runs TuneD once to completion
before the kubelet for the same reason (ocp-tuned-one-shot.service).
"""

from __future__ import annotations

from hostc.artifact import Action, Activation
from hostc.knowledge.runtime import TUNED_READY_UNIT
from hostc.plan.model import Plan
from hostc.targets import verify
from hostc.targets._emitter import Emitter
from hostc.targets._render import config, header, script

UNIT = TUNED_READY_UNIT
UNIT_PATH = f"/etc/systemd/system/{UNIT}"
SCRIPT = "/usr/local/sbin/hostc-tuned-ready"
#: seconds the script waits, after tuned.service's own start ended, for TuneD to answer
#: with the profile (hostc's choice: tuned.service's start is bounded by systemd's
#: DefaultTimeoutStartSec already; this covers a profile switch in flight)
WAIT_S = 30
#: the unit's TimeoutStartSec: the wait plus one D-Bus call's own timeout and a margin
TIMEOUT_S = WAIT_S + 15


def before(plan: Plan) -> list[str]:
    """The units held back until TuneD applied the profile: every container runtime and
    kubelet flavour and the workloads (`verify.pod_units`, each checked as a unit name),
    then the boot verifier."""
    return [*verify.pod_units(plan), verify.UNIT]


def emit(plan: Plan, out: Emitter, profile: str) -> None:
    """The unit and its script, into the tuned target's artifacts (so every delivery that
    carries the profile carries them: rootfs, cloud-init, Ignition, Ansible)."""
    host = header(plan)
    unit = config(
        host,
        "hostc-tuned-ready.service.j2",
        script=SCRIPT,
        before=" ".join(before(plan)),
        timeout=TIMEOUT_S,
    )
    text = script(host, "hostc-tuned-ready.sh.j2", profile=profile, wait=WAIT_S)
    out.unit(UNIT_PATH, unit, UNIT)
    out.file(SCRIPT, text, Activation(Action.ENABLE, UNIT), mode=0o755)
