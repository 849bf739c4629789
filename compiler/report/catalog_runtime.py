"""The runtime settings' entries of the catalog: what hostc-tuning, modprobe.d and the
service presets carry, and where a host shows each."""

from __future__ import annotations

import re

from hostc.plan import Plan
from hostc.report.catalog import Carrier, Setting


def _has(*words: str) -> Carrier:
    return lambda _path, line: any(w in line for w in words)


def _word(word: str) -> Carrier:
    pattern = re.compile(rf"(?:^|\s){re.escape(word)}(?:\s|$)")
    return lambda _path, line: pattern.search(line) is not None


def _either(carriers: list[Carrier]) -> Carrier:
    return lambda path, line: any(c(path, line) for c in carriers)


def _cpu(plan: Plan) -> list[Setting]:
    """Governor, EPP and THP defrag: one sysfs file each (the policy files per CPU group)."""
    rt, out = plan.runtime, []
    cpufreq = "/sys/devices/system/cpu/cpufreq/policy*/"
    if rt.governor:
        out.append(
            Setting(
                "cpu_governor",
                rt.governor.name,
                rt.governor.reason,
                "runtime",
                _has("scaling_governor", "governor="),
                (cpufreq + "scaling_governor",),
            )
        )
    if rt.epp:
        out.append(
            Setting(
                "energy_performance_preference",
                rt.epp.value,
                rt.epp.reason,
                "runtime",
                _has("energy_performance_preference", "energy_perf_bias"),
                (cpufreq + "energy_performance_preference",),
            )
        )
    if rt.thp_defrag:
        out.append(
            Setting(
                "transparent_hugepage_defrag",
                rt.thp_defrag.mode,
                rt.thp_defrag.reason,
                "runtime",
                _has("transparent_hugepage/defrag", "transparent_hugepage.defrag="),
                ("/sys/kernel/mm/transparent_hugepage/defrag",),
            )
        )
    return out


def _irqs(plan: Plan) -> list[Setting]:
    irq = plan.runtime.irq
    return [
        Setting(
            f"irq.{d.device}",
            str(d.cpus),
            d.reason,
            "runtime",
            _has(d.pci),
            (
                f"/proc/irq/<n>/smp_affinity_list for each IRQ in "
                f"/sys/bus/pci/devices/{d.pci}/msi_irqs",
            ),
        )
        for d in (irq.devices if irq is not None else ())
    ]


def _modules_and_services(plan: Plan) -> list[Setting]:
    out = []
    for m in plan.runtime.modules:
        verbs = ("blacklist", "install", "options") if m.blacklist else ("options",)
        where = (
            f"/proc/modules (absent) and `modprobe --showconfig | grep {m.name}`"
            if m.blacklist
            else f"/sys/module/{m.name}/parameters/"
        )
        out.append(
            Setting(
                f"module.{m.name}",
                "blacklisted" if m.blacklist else m.options or "",
                m.reason,
                "boot",
                _either([_word(f"{v} {m.name}") for v in verbs]),
                (where,),
            )
        )
    for s in plan.runtime.services_off:
        out.append(
            Setting(
                s.unit,
                "disabled",
                s.reason,
                "runtime",
                _word(f"disable {s.unit}"),
                (f"systemctl is-enabled {s.unit}",),
            )
        )
    return out


def runtime(plan: Plan) -> list[Setting]:
    """The runtime settings, in `hostc plan`'s order."""
    return [*_cpu(plan), *_irqs(plan), *_modules_and_services(plan)]
