"""systemd: workload placement drop-ins, hostc-tuning.service + its script, the
irqbalance drop-in, the manager's CPUAffinity and a preset disabling services.

Ownership (one owner per setting, the rule `--target all` follows):
- `plan.runtime.owner == systemd` (the default): this target applies the runtime
  settings (governor, EPP, THP defrag, workqueue/writeback masks, interrupts,
  manager CPUAffinity); the tuned target does not apply.
- `plan.runtime.owner == tuned`: the hostc TuneD profile applies exactly those;
  this target keeps only what TuneD has no plugin for: the workloads' drop-ins
  and the services to disable.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from hostc.artifact import Action, Activation
from hostc.knowledge import charsets
from hostc.knowledge import cpus as cpufacts
from hostc.knowledge.kernel import APPLIED_LIVE
from hostc.knowledge.runtime import KUBE_UNITS, TUNING_UNIT, WORKLOAD_SLICE
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import CStateLimit, IrqOwner, Placement, Plan, Reason, ServiceOff, SysfsWrite
from hostc.record import Record
from hostc.settings import table as t
from hostc.settings.model import Per, Setting
from hostc.targets import hugepages, verify
from hostc.targets._emitter import Emitter
from hostc.targets._escape import UnsafeValue, word
from hostc.targets._render import Row, config, header, script
from hostc.targets._slices import emit_slices, pid1_repin, slice_rows, workload_slice
from hostc.targets._systemd_syntax import SERVICE_KEY, env_assignment, limit_value
from hostc.targets.limits import manager_reread
from hostc.vocab import DeviceKind

SCRIPT = "/usr/local/sbin/hostc-tuning"
UNIT = TUNING_UNIT
UNIT_PATH = f"/etc/systemd/system/{UNIT}"
IRQBALANCE_DROPIN = "/etc/systemd/system/irqbalance.service.d/90-hostc.conf"
MANAGER_PATH = "/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf"
PRESET_PATH = "/etc/systemd/system-preset/90-hostc.preset"
UDEV_RULES = "/etc/udev/rules.d/90-hostc-tuning.rules"

#: Units that create or reload the devices whose interrupts and queues hostc-tuning
#: sets: MLNX_OFED's openibd reloads the mlx5 stack at boot, nvidia-persistenced holds
#: the GPUs initialised.  `After=` alone: a unit a host does not have orders nothing and
#: fails nothing (no Wants=).
DRIVER_UNITS = ("openibd.service", "nvidia-persistenced.service", "systemd-udev-settle.service")

#: A sysfs glob hostc-tuning expands: path characters and `*` only (it stays unquoted).
_GLOB = re.compile(r"/[A-Za-z0-9/_.*-]+")
#: A PCI address as udev's KERNELS== matches it.
_PCI = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
#: a netdev or RDMA device name a udev match may carry: no glob, quote or separator
_DEVNAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: seconds a NIC event waits before hostc-tuning re-runs: the events of one driver
#: reload or firmware reset (every port, net and infiniband) give one run (hostc's choice)
UDEV_DEBOUNCE_S = 5


def dropin_path(unit: str) -> str:
    """check refuses bad unit names; the path refuses them again (one missed check must
    not let a name climb out of /etc/systemd/system)."""
    if not (charsets.UNIT.fullmatch(unit) and unit.endswith(".service")):
        raise UnsafeValue(f"unit name {unit[:80]!r} is not safe in a path")
    return f"/etc/systemd/system/{unit}.d/90-hostc.conf"


def _limit_rows(plan: Plan) -> list[Row]:
    """The limits for one workload's service: the same spelling as the manager's
    defaults, except that the server gets the high soft nofile limit too."""
    return [
        Row(lim.reason, f"{SERVICE_KEY[lim.item]}={limit_value(lim, nofile_soft=None)}")
        for lim in plan.limits
        if lim.item in SERVICE_KEY
    ]


def services(plan: Plan) -> list[ServiceOff]:
    return list(plan.runtime.services_off)


def _owned(plan: Plan) -> bool:
    return plan.runtime.hostc_owned


def runtime_cstates(plan: Plan) -> CStateLimit | None:
    """The per-CPU runtime C-state limit hostc-tuning applies (None: boot caps or TuneD)."""
    c = plan.cstates
    return c if c is not None and c.cpus is not None and _owned(plan) else None


def sysfs_globs(plan: Plan) -> list[tuple[SysfsWrite, str]]:
    out = []
    for w in plan.runtime.sysfs if _owned(plan) else ():
        if not _GLOB.fullmatch(w.glob):
            raise UnsafeValue(f"sysfs path {w.glob[:80]!r} is not safe unquoted")
        out.append((w, w.glob))
    return out


def conflicts(plan: Plan) -> list[str]:
    """Units hostc-tuning.service stops before it runs (and orders itself after)."""
    if not tuning_parts(plan):
        return []
    return [s.unit for s in plan.runtime.services_off if s.conflicts]


def udev_rules(plan: Plan) -> str | None:
    """Re-run hostc-tuning when a NIC of the Plan (re)appears: a driver (re)load
    recreates its interrupts spread over every CPU and its queues at full count.  The
    PF netdevs by name and the RDMA devices by kernel name, from the snapshot: `KERNELS`
    matches any ancestor, so a pkey child, VF or representor netdev a pod creates under
    the PF would re-run it too (review K3); a NIC the snapshot names neither way falls
    back to its PCI function."""
    rt = plan.runtime
    hostc_irq = rt.irq is not None and rt.irq.owner is IrqOwner.HOSTC
    if not _owned(plan) or not (hostc_irq or rt.nic_channels):
        return None
    pcis = {c.pci for c in rt.nic_channels}
    if rt.irq is not None and hostc_irq:
        pcis |= {d.pci for d in rt.irq.devices if d.kind is DeviceKind.NIC}
    if not pcis:
        return None
    devices = rt.irq.devices if rt.irq is not None and hostc_irq else ()
    # PCI function → (netdev, RDMA device): the channel rows and the pinned NICs
    pairs = [(c.pci, c.netdev, c.rdma) for c in rt.nic_channels]
    pairs += [(d.pci, d.netdev, d.rdma) for d in devices]
    named = {pci: (netdev, rdma) for pci, netdev, rdma in pairs if netdev or rdma}
    for p in sorted(pcis):
        if not _PCI.fullmatch(p):
            raise UnsafeValue(f"PCI address {p[:80]!r} is not safe in a udev rule")
    netdevs = sorted({n for n, _ in named.values() if n})
    rdmas = sorted({r for _, r in named.values() if r})
    for name in (*netdevs, *rdmas):
        if not _DEVNAME.fullmatch(name):
            raise UnsafeValue(f"device name {name[:80]!r} is not safe in a udev rule")
    return config(
        header(plan),
        "hostc-tuning.rules.j2",
        netdevs="|".join(netdevs),
        rdmas="|".join(rdmas),
        pcis="|".join(p for p in sorted(pcis) if p not in named),
        unit=UNIT,
        debounce=UDEV_DEBOUNCE_S,
    )


#: hostc-tuning writes every sysfs row of the Plan (`plan.runtime.tunables`) into its
#: row's file; these rows go before the C-state block (the CPU frequency policy), the
#: others after it.  The unit's description names each row by its setting name, or by
#: the shorter word here.
_BEFORE_CSTATES = (t.GOVERNOR, t.EPP, t.MIN_PERF_PCT)
SHORT_NAME: dict[Setting[Any], str] = {
    t.GOVERNOR: "governor",
    t.EPP: "EPP",
    t.MIN_PERF_PCT: "frequency floor",
    t.THP_DEFRAG: "THP defrag",
}


@attrs.frozen(repr=False, eq=False)
class Write(Record):
    """One table setting as hostc-tuning writes it: the value into its sysfs file(s)."""

    reason: Reason
    value: str
    path: str
    each: bool  # a glob: one file per policy, CPU or node


def thp_write(plan: Plan) -> Write | None:
    """The THP mode written to the running kernel too (None: no mode, or TuneD owns the
    runtime settings): `enabled` takes it at once, `transparent_hugepage=` sets it only
    from the next boot's start (`knowledge.kernel.APPLIED_LIVE`), so a new mode needs no
    reboot."""
    thp = plan.thp
    if thp is None or not _owned(plan):
        return None
    path = APPLIED_LIVE["transparent_hugepage"]
    why = (
        f"{thp.reason.why}; written here as well, so the running kernel takes a new mode "
        "now (transparent_hugepage= on the command line sets it from the next boot's start)"
    )
    return Write(Reason(thp.reason.source, why), thp.shown, path, each=False)


def writes(plan: Plan, before_cstates: bool) -> list[Write]:
    """The table settings hostc-tuning writes, in the script's order (the THP mode
    before its defrag policy)."""
    thp = None if before_cstates else thp_write(plan)
    out = [thp] if thp is not None else []
    for v in plan.runtime.tunables if _owned(plan) else ():
        s, f = v.setting, v.setting.sysfs
        if f is not None and (s in _BEFORE_CSTATES) == before_cstates:
            if not _GLOB.fullmatch(f.path):
                raise UnsafeValue(f"sysfs path {f.path[:80]!r} is not safe unquoted")
            out.append(Write(v.reason, v.shown, f.path, f.per is not Per.ONE))
    return out


def tuning_parts(plan: Plan) -> list[str]:
    """What hostc-tuning.service applies on this host (empty: no unit, no script)."""
    rt = plan.runtime
    parts = []
    if _owned(plan):
        parts += ["THP mode"] if thp_write(plan) is not None else []
        parts += [SHORT_NAME.get(v.setting, v.name) for v in rt.tunables]
        if rt.cpumasks:
            parts.append("workqueue masks")
        if rt.irq is not None and rt.irq.owner is IrqOwner.HOSTC:
            parts.append("IRQ affinity")
        if runtime_cstates(plan):
            parts.append("C-states")
        if any(cpufacts.is_online_write(w.name) for w in rt.sysfs):
            parts.append("offline CPUs")
        if any(w.name == "mce_check_interval" for w in rt.sysfs):
            parts.append("MCE polling")
        if rt.nic_channels:
            parts.append("NIC channels")
        if pid1_repin(plan) is not None:
            parts.append("PID 1 CPUs")
    if services(plan):
        parts.append("services")
    return parts


def applies(plan: Plan) -> str | None:
    if plan.workloads or tuning_parts(plan) or verify.any_checks(plan):
        return None
    return "no workload to place and no runtime setting for hostc to apply"


def _env_reason(w: Placement, name: str) -> Reason | None:
    """NCCL_SOCKET_IFNAME comes from the spec; the rest from the NICs the topology gave."""
    if name == "NCCL_SOCKET_IFNAME" and w.socket_reason is not None:
        return w.socket_reason
    return w.nics_reason


def _workload(
    plan: Plan, w: Placement, tuning: bool, limits: tuple[Row, ...], out: Emitter
) -> None:
    text = config(
        header(plan),
        "workload-dropin.conf.j2",
        w=w,
        nodes=",".join(map(str, w.nodes)),
        env=tuple(Row(_env_reason(w, k), env_assignment(k, v)) for k, v in w.env),
        limits=limits,
        tuning=tuning,
        contain=not plan.host.cpuset_ignored,
        slice=WORKLOAD_SLICE if workload_slice(plan) is not None else None,
    )
    out.file(
        dropin_path(w.unit),
        text,
        Activation(Action.DAEMON_RELOAD),
        Activation(Action.RESTART, w.unit),
    )


def _tuning(plan: Plan, parts: list[str], out: Emitter) -> None:
    """hostc-tuning.service, its script, and the udev rule that re-runs it."""
    irq = plan.runtime.irq
    hostc_irq = irq if irq is not None and irq.owner is IrqOwner.HOSTC and _owned(plan) else None
    channels = plan.runtime.nic_channels if _owned(plan) else ()
    unit = config(
        header(plan),
        "hostc-tuning.service.j2",
        what=", ".join(parts),
        before=" ".join([*KUBE_UNITS, *(w.unit for w in plan.workloads)]),
        script=SCRIPT,
        conflicts=tuple(conflicts(plan)),
        drivers=" ".join(DRIVER_UNITS) if hostc_irq is not None or channels else "",
    )
    text = script(
        header(plan),
        "hostc-tuning.sh.j2",
        cpumasks=plan.runtime.cpumasks,
        owned=_owned(plan),
        irq=hostc_irq,
        isolcpus=next((str(a) for a in kernel_args(plan) if a.key == "isolcpus"), None),
        services=tuple(services(plan)),
        conflicts=tuple(conflicts(plan)),
        cstates=runtime_cstates(plan),
        writes=(*writes(plan, before_cstates=True), None, *writes(plan, before_cstates=False)),
        offline=tuple((w, g) for w, g in sysfs_globs(plan) if cpufacts.is_online_write(w.name)),
        sysfs=tuple((w, g) for w, g in sysfs_globs(plan) if not cpufacts.is_online_write(w.name)),
        channels=channels,
        repin=pid1_repin(plan),
    )
    out.unit(UNIT_PATH, unit, UNIT, start=True)
    out.file(SCRIPT, text, Activation(Action.START, UNIT), mode=0o755)
    rules = udev_rules(plan)
    if rules is not None:
        out.file(UDEV_RULES, rules, Activation(Action.START, UNIT))


def irqbalance_owns(plan: Plan) -> tuple[Activation, ...]:
    """irqbalance enabled and (re)started, whatever a build with another owner left:
    a disabled irqbalance stays stopped under `try-restart`, and then nobody places
    interrupts.  A preset file that build installed (`disable irqbalance.service`) goes
    too, unless this build writes its own over it."""
    out = [
        Activation(Action.DAEMON_RELOAD),
        Activation(Action.ENABLE, "irqbalance.service"),
        Activation(Action.START, "irqbalance.service"),
    ]
    if not services(plan):
        out.insert(0, Activation(Action.REMOVE, PRESET_PATH))
    return tuple(out)


def emit(plan: Plan, out: Emitter) -> None:
    parts = tuning_parts(plan)
    irq = plan.runtime.irq
    host = header(plan)
    if parts:
        _tuning(plan, parts, out)
    limits = tuple(_limit_rows(plan))
    for w in plan.workloads:
        _workload(plan, w, bool(parts), limits, out)
    emit_slices(plan, out, UNIT)
    if irq is not None and irq.owner is IrqOwner.IRQBALANCE and _owned(plan):
        text = config(host, "irqbalance-dropin.conf.j2", irq=irq)
        out.file(IRQBALANCE_DROPIN, text, *irqbalance_owns(plan))
    if plan.partition.isolated and _owned(plan):
        p = plan.partition
        row = Row(p.housekeeping_reason, str(p.housekeeping))
        out.file(
            MANAGER_PATH,
            config(
                host,
                "manager-cpuaffinity.conf.j2",
                row=row,
                slices=tuple(name for name, _ in slice_rows(plan)),
                keeps=not plan.host.cpuset_resets_affinity,
                unit=UNIT,
            ),
            manager_reread(plan),
            Activation(Action.REBOOT),
        )
    if services(plan):
        rows = tuple(Row(s.reason, word(s.unit)) for s in services(plan))
        out.file(
            PRESET_PATH,
            config(host, "services.preset.j2", rows=rows),
            Activation(Action.DAEMON_RELOAD),
            Activation(Action.START, UNIT),
        )
    hugepages.emit(plan, out)
    verify.emit(plan, out)
