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

from hostc import charsets
from hostc.artifact import Action, Activation, Artifact, file
from hostc.plan import IrqOwner, Limit, Plan, ServiceOff, Workload
from hostc.targets import verify
from hostc.targets._escape import UnsafeValue
from hostc.targets._render import render
from hostc.targets.limits import systemd_value

SCRIPT = "/usr/local/sbin/hostc-tuning"
UNIT = "hostc-tuning.service"
UNIT_PATH = f"/etc/systemd/system/{UNIT}"
IRQBALANCE_DROPIN = "/etc/systemd/system/irqbalance.service.d/90-hostc.conf"
MANAGER_PATH = "/etc/systemd/system.conf.d/90-hostc-cpuaffinity.conf"
PRESET_PATH = "/etc/systemd/system-preset/90-hostc.preset"


def dropin_path(unit: str) -> str:
    """check refuses bad unit names; the path refuses them again (one missed check must
    not let a name climb out of /etc/systemd/system)."""
    if not (charsets.UNIT.fullmatch(unit) and unit.endswith(".service")):
        raise UnsafeValue(f"unit name {unit[:80]!r} is not safe in a path")
    return f"/etc/systemd/system/{unit}.d/90-hostc.conf"


def env_assignment(name: str, value: str) -> str:
    """One `Environment=` word: double-quoted, `\\` and `"` escaped, `%` doubled (specifiers)."""
    inner = f"{name}={value}".replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{inner}"'


#: systemd.exec(5) per-service names of the Plan's limits.
_SERVICE_KEY = {"nofile": "LimitNOFILE", "memlock": "LimitMEMLOCK"}


def _limit_rows(plan: Plan) -> list[tuple[Limit, str, str]]:
    """The limits for one workload's service: the same spelling as the manager's
    defaults, except that the server gets the high soft nofile limit too."""
    return [
        (lim, _SERVICE_KEY[lim.item], systemd_value(lim, nofile_soft=None))
        for lim in plan.limits
        if lim.item in _SERVICE_KEY
    ]


def services(plan: Plan) -> list[ServiceOff]:
    return list(plan.runtime.services_off)


def _owned(plan: Plan) -> bool:
    return plan.runtime.hostc_owned


def tuning_parts(plan: Plan) -> list[str]:
    """What hostc-tuning.service applies on this host (empty: no unit, no script)."""
    rt = plan.runtime
    parts = []
    if _owned(plan):
        if rt.governor:
            parts.append("governor")
        if rt.epp:
            parts.append("EPP")
        if rt.thp_defrag:
            parts.append("THP defrag")
        if rt.cpumasks:
            parts.append("workqueue masks")
        if rt.irq is not None and rt.irq.owner is IrqOwner.HOSTC:
            parts.append("IRQ affinity")
    if services(plan):
        parts.append("services")
    return parts


def applies(plan: Plan) -> str | None:
    if plan.workloads or tuning_parts(plan) or verify.checks(plan):
        return None
    return "no workload to place and no runtime setting for hostc to apply"


def _workload(
    plan: Plan, w: Workload, tuning: bool, limits: list[tuple[Limit, str, str]]
) -> Artifact:
    text = render(
        "workload-dropin.conf.j2",
        plan=plan,
        w=w,
        nodes=",".join(map(str, w.nodes)),
        env=[env_assignment(k, v) for k, v in w.env],
        limits=limits,
        tuning=tuning,
    )
    return file(
        "systemd",
        dropin_path(w.unit),
        text,
        Activation(Action.DAEMON_RELOAD),
        Activation(Action.RESTART, w.unit),
    )


def emit(plan: Plan) -> list[Artifact]:
    out: list[Artifact] = []
    parts = tuning_parts(plan)
    irq = plan.runtime.irq
    hostc_irq = irq if irq is not None and irq.owner is IrqOwner.HOSTC and _owned(plan) else None
    if parts:
        before = " ".join(w.unit for w in plan.workloads)
        out.append(
            file(
                "systemd",
                UNIT_PATH,
                render(
                    "hostc-tuning.service.j2",
                    plan=plan,
                    what=", ".join(parts),
                    before=before,
                    script=SCRIPT,
                    conflicts=hostc_irq is not None,
                ),
                Activation(Action.DAEMON_RELOAD),
                Activation(Action.ENABLE, UNIT),
                Activation(Action.START, UNIT),
            )
        )
        out.append(
            file(
                "systemd",
                SCRIPT,
                render(
                    "hostc-tuning.sh.j2",
                    plan=plan,
                    owned=_owned(plan),
                    irq=hostc_irq,
                    services=services(plan),
                ),
                Activation(Action.START, UNIT),
                mode=0o755,
            )
        )
    limits = _limit_rows(plan)
    for w in plan.workloads:
        out.append(_workload(plan, w, bool(parts), limits))
    if irq is not None and irq.owner is IrqOwner.IRQBALANCE and _owned(plan):
        out.append(
            file(
                "systemd",
                IRQBALANCE_DROPIN,
                render("irqbalance-dropin.conf.j2", plan=plan, irq=irq),
                Activation(Action.DAEMON_RELOAD),
                Activation(Action.RESTART, "irqbalance.service"),
            )
        )
    if plan.partition.isolated and _owned(plan):
        out.append(
            file(
                "systemd",
                MANAGER_PATH,
                render("manager-cpuaffinity.conf.j2", plan=plan),
                Activation(Action.DAEMON_REEXEC),
                Activation(Action.REBOOT),
            )
        )
    if services(plan):
        out.append(
            file(
                "systemd",
                PRESET_PATH,
                render("services.preset.j2", plan=plan, services=services(plan)),
                Activation(Action.DAEMON_RELOAD),
                Activation(Action.START, UNIT),
            )
        )
    out += verify.emit(plan)
    return out
