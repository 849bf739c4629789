"""The boot-time verifier: hostc-verify.service runs a POSIX sh script, rendered with the
Plan's expected values, that logs every drift to the journal and fails the unit (so it
shows in `systemctl --failed`) when the host is not what the Plan says.

It needs no hostc on the host.  Its checks are the audit table's own expectations
(`hostc.audit.observe`), so `hostc audit` and the verifier never disagree on what
the Plan means; the kinds sh cannot judge without racing other units or doing CPU
set arithmetic (a workload's running process, per-IRQ masks, units hostc stops
asynchronously) are left to `hostc audit` and listed in the script's header.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import attrs

from hostc.artifact import Action, Activation
from hostc.audit.observe import Expect, Look, each_expectation, expectations, pod_unit_names
from hostc.cpuset import CpuSet
from hostc.knowledge import charsets
from hostc.plan.model import Plan
from hostc.record import Record
from hostc.targets._emitter import Emitter
from hostc.targets._escape import UnsafeValue, comment, shell
from hostc.targets._render import config, headed, header, render

SCRIPT = "/usr/local/sbin/hostc-verify"
UNIT = "hostc-verify.service"
UNIT_PATH = f"/etc/systemd/system/{UNIT}"

#: Audit kinds the script checks, and the sh function that does.
CHECKS = {
    "cmdline": "check_cmdline",
    "cmdline-word": "check_cmdline_word",
    "value": "check_file",
    "first-word": "check_first_word",
    "module-param": "check_file",
    "cpulist": "check_file",
    "mask": "check_mask",
    "selected": "check_selected",
    "sysctl": "check_sysctl",
    "manager": "check_manager",
    "pid-cpus": "check_status",
    "service-cpus": "check_unit_cpus",
    "per-cpu": "check_per_cpu",
    "module-absent": "check_module_absent",
    "gpudirect": "check_gpudirect",
    "pm-qos": "check_pm_qos",
    "each-value": "check_each",
    "nic-channels": "check_channels",
    "iommu-mode": "check_iommu",
    "acs-redirect": "check_acs",
    "started-before": "check_started_before",
}


@attrs.frozen(repr=False, eq=False)
class Check(Record):
    function: str
    setting: str
    expected: str
    args: tuple[str, ...]
    reason: str

    @property
    def line(self) -> str:
        """The script's call: the function, then every word quoted for sh (`shell`
        refuses control characters, and finalize checks the line again)."""
        return " ".join([self.function, *map(shell, (self.setting, self.expected, *self.args))])


def _check(e: Expect) -> Check:
    expected = e.expected
    if e.kind == "mask":  # the kernel's hex mask, compared without commas and leading zeros
        expected = CpuSet.parse(e.expected).mask().replace(",", "").lstrip("0") or "0"
    args = e.args
    if e.kind == "pm-qos":  # sh walks the CPUs one by one
        args = (e.args[0], CpuSet.parse(e.args[1]).expanded(" "))
    return Check(CHECKS[e.kind], e.setting, expected, args, str(e.reason))


def _checked(e: Expect) -> bool:
    """Whether the script checks `e` (else it is left to `hostc audit`)."""
    return e.kind in CHECKS


def _split(found: Sequence[Expect]) -> tuple[list[Check], list[str]]:
    """The checks the script runs, and the settings it leaves to `hostc audit`."""
    return [_check(e) for e in found if _checked(e)], _skipped(found)


def _skipped(found: Sequence[Expect]) -> list[str]:
    """The settings the script leaves to `hostc audit`, once each, sorted."""
    return sorted({e.setting for e in found if not _checked(e)})


def checks(plan: Plan) -> list[Check]:
    return _split(expectations(plan))[0]


def any_checks(plan: Plan) -> bool:
    """Whether `checks` is not empty, from the audit table's rows up to the first check
    (`systemd.applies` asks it of every host without a workload or runtime setting)."""
    return any(_checked(e) for e in each_expectation(plan))


def left_to_audit(plan: Plan) -> list[str]:
    return _split(expectations(plan))[1]


def pod_units(plan: Plan) -> list[str]:
    """Every unit that starts pods or containers (the container runtimes and kubelets of
    every flavour, `KUBE_UNITS`: an absent unit orders nothing) and the workloads' units,
    once each, their names checked: hostc's early units order themselves Before= them
    (hostc-hugepages), the verifier After= them."""
    units = pod_unit_names(plan)
    for unit in units:
        if not charsets.UNIT.fullmatch(unit):
            raise UnsafeValue(f"unit name {unit[:80]!r} is not safe in a unit file")
    return units


def after(plan: Plan) -> list[str]:
    """The units the verifier runs after, besides hostc's own: `pod_units`, the units that
    turn the cgroup cpuset controller on or start containers, so that the CPUs it reads
    are the ones they leave (review-outputs-4 G2: PID 1's CPUs were read in a race with
    rke2-agent)."""
    return pod_units(plan)


def emit(plan: Plan, out: Emitter) -> None:
    """The unit and its script, into the systemd target's artifacts."""
    body = _script_body(plan)
    if body is None:
        return
    host = header(plan)
    out.file(
        UNIT_PATH,
        config(host, "hostc-verify.service.j2", script=SCRIPT, after=" ".join(after(plan))),
        Activation(Action.DAEMON_RELOAD),
        Activation(Action.ENABLE, UNIT),
    )
    text = headed(host, body, shebang=True)
    out.file(SCRIPT, text, Activation(Action.ENABLE, UNIT), mode=0o755)


def _script_body(plan: Plan) -> str | None:
    """The script below its shebang and header (None: it would check nothing), from one
    walk of the audit table.  Not remembered here: its one caller, the systemd target,
    is emitted once per anonymous Plan already (`Target.shared`), and its rows are
    remembered one by one (`_row`), which a class of its own shares with the others."""
    found = expectations(plan)
    rows = tuple(_row(e) for e in found if _checked(e))
    if not rows:
        return None
    maps = any(e.kind is Look.HUGEPAGE_MAP for e in found)
    return render("hostc-verify.sh.j2", checks=rows, skipped=_skipped(found), maps=maps)


@functools.lru_cache(maxsize=4096)
def _row(e: Expect) -> tuple[str, str]:
    """One check as the script prints it, its reason as a comment and its call, escaped
    here once per distinct expectation: a fleet's classes that differ in one value (a
    host's own sysctl) share the others' rows, so a class of its own quotes only that."""
    c = _check(e)
    return comment(c.reason), c.line
