"""What the machine itself makes of the plan: a virtual machine, no cpufreq or cpuidle
driver, too few housekeeping CPUs, a GPU role with no GPU (first-day-3 F5).

The snapshot's `hypervisor`, `cpufreq_driver` and `cpuidle_driver` are optional: a
snapshot without them (written before them, or by an importer that cannot tell) gets
no warning.  The facts and their sources: `hostc.knowledge.machine`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from hostc.diagnostics import Diagnostic, at, warning
from hostc.knowledge.machine import CPUFREQ_SETTINGS, CPUIDLE_SETTINGS, MIN_HOUSEKEEPING_CPUS
from hostc.plan.model import Plan
from hostc.provenance import PresetLayer
from hostc.resolve import Resolved
from hostc.settings import BY_NAME
from hostc.spec.model import IsolateMode
from hostc.topology.model import NO_DRIVER
from hostc.vocab import Role


def _why_idle(r: Resolved) -> str | None:
    if r.topo.cpuidle_driver == NO_DRIVER:
        return "no cpuidle driver (the snapshot's cpuidle_driver is `none`)"
    return None


def _why_freq(r: Resolved) -> str | None:
    topo = r.topo
    vm = "a virtual machine (the hypervisor CPU flag)"
    if topo.cpufreq_driver == NO_DRIVER:
        none = "no cpufreq driver (the snapshot's cpufreq_driver is `none`)"
        return f"{vm} with {none}" if topo.hypervisor else none
    if topo.hypervisor and topo.cpufreq_driver is None:
        return f"{vm}: the host sets its CPUs' frequency"
    return None


def _set(plan: Plan, names: Iterable[str]) -> list[tuple[str, Any]]:
    """The settings of `names` the plan gives, each with its value (and reason)."""
    out = []
    for name in names:
        value = plan.held(BY_NAME[name])
        if value is not None:
            out.append((name, value))
    return out


def _advice(found: list[tuple[str, Any]]) -> str:
    """Exclude what a preset gave; a key the spec set itself is removed from the spec."""
    preset = [n for n, v in found if isinstance(v.reason.source, PresetLayer)]
    own = [f"{v.reason.source} ({n})" for n, v in found if n not in preset]
    parts = []
    if preset:
        parts.append("preset.exclude = [" + ", ".join(f'"{n}"' for n in preset) + "]")
    if own:
        parts.append("remove " + ", ".join(own) + " from the spec")
    return " and ".join(parts)


def drivers_present(r: Resolved, plan: Plan) -> Iterator[Diagnostic]:
    """Governor, EPP and P-state settings need a cpufreq driver; C-state limits a
    cpuidle driver.  On a VM or a host without them they do nothing."""
    for why, names in ((_why_freq(r), CPUFREQ_SETTINGS), (_why_idle(r), CPUIDLE_SETTINGS)):
        found = _set(plan, names) if why is not None else []
        if found:
            shown = ", ".join(n for n, _ in found)
            verb = "have" if len(found) > 1 else "has"
            yield warning(
                at("host", "topology"),
                f"{why}: {shown} {verb} no effect here",
                hint=f"leave {'them' if len(found) > 1 else 'it'} out: {_advice(found)}",
            )


def housekeeping_enough(r: Resolved) -> Iterator[Diagnostic]:
    """Isolation that leaves fewer than MIN_HOUSEKEEPING_CPUS for the whole OS."""
    spec = r.spec
    if spec.cpu.isolation is IsolateMode.NONE or not r.topo.online:
        return
    part = r.partition
    if not part.isolated or not part.housekeeping:
        return  # partition_sound says so
    n = len(part.housekeeping)
    if n >= MIN_HOUSEKEEPING_CPUS:
        return
    path = at(
        "cpu",
        "housekeeping"
        if spec.cpu.housekeeping is not None
        else "housekeeping_per_node"
        if spec.cpu.housekeeping_per_node is not None
        else "isolate",
    )
    yield warning(
        path,
        f"{n} housekeeping CPU ({part.housekeeping}) serves the whole host: every IRQ, "
        "kernel thread, the isolated CPUs' RCU callbacks and every system service run "
        f"there, and {len(part.isolated)} CPU(s) are isolated",
        hint=f"keep at least {MIN_HOUSEKEEPING_CPUS} CPUs for housekeeping "
        '(cpu.housekeeping_per_node), or cpu.isolate = "none" on a host this small',
    )


def gpu_role_has_gpus(r: Resolved) -> Iterator[Diagnostic]:
    """Roles inference and training tune for GPU servers; a snapshot without GPUs (that
    could have seen them) is a host where that tuning has nothing to serve."""
    role, topo = r.spec.host.role, r.topo
    if role is Role.GENERAL or topo.gpus or "devices" in topo.unknown:
        return
    yield warning(
        at("host", "role"),
        f"role {role} with no GPU in the snapshot: the {role} preset tunes the host for "
        "GPU servers",
        hint='role = "general" for a host without GPUs, or probe the host with its GPU '
        "driver loaded (`hostc probe` lists the GPUs it sees on PCI)",
    )
