"""tuned: the hostc TuneD profile, the same Plan as a self-contained TuneD profile.

Written where the host's TuneD reads profiles (`plan.host.tuned_profile_dirs`, decided
in lower from the OS release): /etc/tuned/hostc/tuned.conf before TuneD 2.23,
/etc/tuned/profiles/hostc/tuned.conf from it, both where the release's TuneD is unknown.

Self-contained on purpose (targets.md §7, the host-time evaluation trap): no
include of cpu-partitioning or realtime, whose functions would run on the
machine loading the profile; every CPU list is literal, computed here once.

Ownership: the profile applies only when the spec gives TuneD the runtime
settings (`[runtime] owner = "tuned"`); then the systemd target leaves them out
(hostc.targets.systemd), so the two never set the same knob.  Interrupts owned
by hostc (per-device pinning) need hostc-tuning: check refuses that combination.
The boot arguments are `cmdline_hostc`, byte for byte `kernelargs.cmdline(plan)`.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from hostc.artifact import Action, Activation
from hostc.knowledge.kernel import APPLIED_LIVE, TUNED_SKIPPED_WITH_CMDLINE
from hostc.knowledge.vendor import Vendor
from hostc.plan.kernelargs import cmdline
from hostc.plan.model import BootCarrier, IrqOwner, Plan, Reason, RuntimeOwner, TunedFacts
from hostc.record import Record
from hostc.settings import table as t
from hostc.settings.model import Setting
from hostc.targets import tuned_order
from hostc.targets._emitter import Emitter
from hostc.targets._escape import UnsafeValue
from hostc.targets._render import header, render

PROFILE = "hostc"


def paths(plan: Plan) -> list[str]:
    return [f"{d}/{PROFILE}/tuned.conf" for d in plan.host.tuned_profile_dirs]


def force_latency(max_cstate: int, tuned: TunedFacts) -> str:
    """`cstate.id_no_zero:N|3`: PM QoS latency = the exit latency of cpuidle state N (C1
    for N = 1), so no deeper state is entered; `no_zero` keeps a zero latency from meaning
    polling; 3 µs when the states cannot be read.  TuneD holds /dev/cpu_dma_latency open
    while it runs.  A TuneD not known to read `id_no_zero` (2.18: older, or a release
    hostc does not know) gets `cstate.id` (2.13), which every release reads."""
    if max_cstate <= 0:
        return "0"
    if not tuned.cstate_id_no_zero:
        return f"cstate.id:{max_cstate}|3"
    return f"cstate.id_no_zero:{max_cstate}|3"


#: Why a kubelet node's profile has no `[scheduler] isolated_cores` (review N1).
KUBELET_NO_SCHEDULER = (
    "[scheduler] isolated_cores left out on this kubelet node: on every profile apply "
    "(boot, tuned restart, package upgrade) TuneD calls sched_setaffinity(housekeeping) on "
    "every process outside its blacklist, the container runtime and its shims included; on "
    "kernels >= 6.2 that replaces the all-CPUs affinity the runtime drop-in gives them "
    "(user_cpus_ptr), and with runc < 1.2.7/1.3.1 Burstable and BestEffort containers are "
    "confined to the housekeeping CPUs again (containerd #11345).  A blacklist of the "
    "runtime's cgroup would depend on the runtime, its unit and the cgroup driver, so hostc "
    "leaves the scheduler plugin out: [systemd] cpu_affinity, the runtime's AllowedCPUs= and "
    "the workqueue masks already keep the host's own threads off the isolated CPUs"
)


def scheduler_left_out(plan: Plan) -> str | None:
    """Why the profile has no `[scheduler]` (None: it has one)."""
    if plan.kubelet is not None:
        return KUBELET_NO_SCHEDULER
    if not plan.host.tuned.cgroup_ps_blacklist:
        return (
            "[scheduler] isolated_cores left out: its cgroup_ps_blacklist needs TuneD 2.17.0 "
            f"({tuned_known(plan)}), and without it TuneD would move the pinned servers onto "
            "the housekeeping CPUs; [systemd] cpu_affinity and the workqueue masks keep the "
            "rest off"
        )
    return None


def tuned_known(plan: Plan) -> str:
    os = plan.host.os
    known = plan.host.tuned.version
    if known:  # the release's oldest (hostc.knowledge.distro.TUNED): a floor
        return f"{os or 'this OS'} ships TuneD {'.'.join(map(str, known))} or newer"
    return f"hostc does not know the TuneD {os or 'this OS'} ships"


def cgroup_blacklist(plan: Plan) -> str:
    """`[scheduler] cgroup_ps_blacklist`: the workloads' cgroups, which TuneD would
    otherwise move onto housekeeping CPUs (plugin_scheduler.py _get_intersect_affinity: an
    affinity entirely on isolated CPUs intersects nothing).  Python regexes matched against
    /proc/PID/cgroup, `;`-separated; no `${` (TuneD would expand it as a variable).
    Kubelet nodes get no `[scheduler]` at all (`scheduler_left_out`)."""
    out = [rf"/{re.escape(w.unit)}(/|,|$)" for w in plan.workloads]
    for x in out:
        if ";" in x or "${" in x or "\n" in x:
            raise UnsafeValue(f"cgroup pattern {x[:80]!r} is not safe for TuneD")
    return ";".join(out)


#: A section name TuneD's profile parser takes as one header (configparser: up to `]`).
_SECTION = re.compile(r"net_[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}")
#: A name TuneD's `devices=` matches literally (DeviceMatcher: fnmatch rules split at
#: spaces and commas, `!` negates; none of `*?[!,` or a space may be in it).
_NETDEV = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}")
_PCI = re.compile(r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")


@attrs.frozen(repr=False, eq=False)
class NetSection(Record):
    """One NIC's `[net_<device>]` instance of TuneD's net plugin (`type=net`): its combined
    channels, and how TuneD finds its netdev(s)."""

    name: str
    reason: Reason
    option: str  # `devices` or `devices_udev_regex`
    match: str
    how: str  # why the match finds this NIC
    count: int


def net_sections(plan: Plan) -> list[NetSection]:
    """A `[net_<device>]` per NIC of the Plan (NTO: `[net] devices_udev_regex=…
    channels=combined N`), each with its own count: the NICs of a node get one channel
    per housekeeping CPU of that node.  By the snapshot's netdev name (`devices=`); a NIC
    the snapshot names no netdev for by its PCI function (`devices_udev_regex=` on the
    DEVPATH property the kernel gives every netdev: every netdev under that function,
    as hostc-tuning sets every netdev of it).  Empty where the host's TuneD does not read
    `[net] channels` (2.16): an older or unknown TuneD would log "Unknown option" and
    leave the queues, so the profile says so and check warns (check.tuned)."""
    if not plan.host.tuned.net_channels:
        return []
    out = []
    for c in plan.runtime.nic_channels:
        name = f"net_{c.device}"
        if not _SECTION.fullmatch(name):
            raise UnsafeValue(f"NIC name {c.device[:80]!r} is not safe in a TuneD section")
        if c.netdev is not None:
            if not _NETDEV.fullmatch(c.netdev):
                raise UnsafeValue(f"netdev {c.netdev[:80]!r} is not safe in TuneD's devices=")
            option, match = "devices", c.netdev
            how = f"TuneD finds {c.device} ({c.pci}) by its netdev name in the snapshot"
        else:
            if not _PCI.fullmatch(c.pci):
                raise UnsafeValue(f"PCI address {c.pci[:80]!r} is not safe in a TuneD regex")
            option = "devices_udev_regex"
            match = rf"^DEVPATH=/devices/.*/{re.escape(c.pci.lower())}/net/"
            how = (
                f"TuneD finds every netdev of {c.device}'s PCI function {c.pci} by the "
                "DEVPATH property the kernel gives each netdev (the snapshot names none)"
            )
        out.append(NetSection(name, c.reason, option, match, how, c.count))
    return out


#: TuneD's energy_perf_bias keywords for the EPP values that have one.  EPB is an
#: Intel register (MSR_IA32_ENERGY_PERF_BIAS); AMD has no such knob, so TuneD can only
#: log an error there, and the balance_* preferences have no EPB keyword.
_EPB = {"performance": "performance", "power": "powersave"}


def energy_perf_bias(plan: Plan) -> str | None:
    """EPB beside EPP, for older Intel CPUs whose HWP lacks EPP; None where it is not taken."""
    epp = plan.runtime.tunable(t.EPP)
    if epp is None or plan.host.cpu_vendor is not Vendor.INTEL:
        return None
    return _EPB.get(epp.value)


def spelled(plan: Plan, s: Setting[Any]) -> tuple[str, str]:
    """(section, option) of a sysfs row in this host's profile: TuneD's own option where
    its row names one (`Setting.tuned`), else `[sysfs]` under the row's file.  EPP's
    `[cpu]` option needs TuneD 2.20 (`plan.host.tuned.epp`); its `[cpu]` lines (with
    energy_perf_bias) are the template's."""
    f = s.sysfs
    assert f is not None, s.name  # a sysfs row names its file
    if s.tuned is None or (s is t.EPP and not plan.host.tuned.epp):
        return "sysfs", f.path
    return s.tuned


def thp_option(plan: Plan) -> tuple[str, str, Reason] | None:
    """(section, option, reason) of the THP mode in this host's profile (None: no mode).
    TuneD's own `[vm] transparent_hugepages` writes nothing while /proc/cmdline carries
    `transparent_hugepage=` (`knowledge.kernel.TUNED_SKIPPED_WITH_CMDLINE`), which every
    command line hostc makes does: a new mode would wait for a reboot.  So the profile
    writes `enabled` under `[sysfs]`, which the running kernel takes at once
    (`knowledge.kernel.APPLIED_LIVE`); the word still sets it at the boot's start."""
    thp = plan.thp
    if thp is None or t.THP.tuned is None:
        return None
    section, option = t.THP.tuned
    skipped = TUNED_SKIPPED_WITH_CMDLINE.get(f"{section}.{option}")
    if skipped is None:
        return section, option, thp.reason
    why = (
        f"{thp.reason.why}; by [sysfs], as [{section}] {option} writes nothing while the "
        f"command line carries {skipped}, which hostc's does: the running kernel takes a "
        "new mode now, the command line from the next boot's start"
    )
    return "sysfs", APPLIED_LIVE["transparent_hugepage"], Reason(thp.reason.source, why)


def options(plan: Plan, section: str) -> list[tuple[Reason, str, str]]:
    """(reason, option, value) of the table settings the profile sets in `section`, in
    the table's order (EPP's `[cpu]` option is the template's)."""
    out = []
    thp = thp_option(plan)
    if thp is not None and plan.thp is not None and section == thp[0]:
        out.append((thp[2], thp[1], plan.thp.shown))
    for v in plan.runtime.tunables:
        where, option = spelled(plan, v.setting)
        if where == section and not (where == "cpu" and v.setting is t.EPP):
            out.append((v.reason, option, v.shown))
    return out


def applies(plan: Plan) -> str | None:
    if plan.runtime.owner is RuntimeOwner.TUNED:
        return None
    return (
        f"runtime.owner is {plan.runtime.owner}: hostc-tuning.service applies the runtime "
        'settings (set [runtime] owner = "tuned" to hand them to TuneD)'
    )


def emit(plan: Plan, out: Emitter) -> None:
    irq = plan.runtime.irq
    tuned = plan.host.tuned
    text = render(
        "tuned.conf.j2",
        host=header(plan),
        plan=plan,
        rt=plan.runtime,
        cpu=options(plan, "cpu"),
        vm=options(plan, "vm"),
        sysfs=options(plan, "sysfs"),
        cmdline=cmdline(plan) if plan.boot.carrier is BootCarrier.TUNED else "",
        force_latency=force_latency(plan.cstates.max_cstate, tuned) if plan.cstates else None,
        epb=energy_perf_bias(plan),
        epp=plan.runtime.tunable(t.EPP),
        banned=irq.banned if irq is not None and irq.owner is IrqOwner.IRQBALANCE else None,
        tuned=tuned_known(plan),
        epp_option=tuned.epp,
        no_scheduler=scheduler_left_out(plan),
        blacklist=cgroup_blacklist(plan),
        nets=net_sections(plan),
    )
    perf = tuned.perf_package
    needs = (
        [Activation(Action.PYTHON_MODULE, f"perf {perf}")]
        if perf is not None and re.search(r"^\[(scheduler|irqbalance)\]$", text, re.M)
        else []
    )
    for path in paths(plan):
        out.file(
            path,
            text,
            *needs,
            Activation(Action.ENABLE_NOW, "tuned.service"),
            Activation(Action.TUNED_PROFILE, PROFILE),
            Activation(Action.REBOOT),
        )
    tuned_order.emit(plan, out, PROFILE)
