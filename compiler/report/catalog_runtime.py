"""The runtime settings' entries of the catalog: what hostc-tuning, modprobe.d and the
service presets carry, and where a host shows each."""

from __future__ import annotations

import re
from typing import Any

from hostc.knowledge import kernel as kf
from hostc.plan.model import Plan, When
from hostc.report.catalog import Carrier
from hostc.report.catalog import CatalogEntry as CatalogSetting
from hostc.settings import table as t
from hostc.settings.model import Per, Setting, Sysfs
from hostc.units import format_kib


def _has(*words: str) -> Carrier:
    return lambda _path, line: any(w in line for w in words)


def _word(word: str) -> Carrier:
    pattern = re.compile(rf"(?:^|\s){re.escape(word)}(?:\s|$)")
    return lambda _path, line: pattern.search(line) is not None


def _either(carriers: list[Carrier]) -> Carrier:
    return lambda path, line: any(c(path, line) for c in carriers)


#: The profile sets Intel's energy_perf_bias beside EPP (targets/tuned.py
#: energy_perf_bias): those lines carry EPP too.
_ALSO = {t.EPP: ("energy_perf_bias",)}


def carried_as(s: Setting[Any]) -> tuple[str, ...]:
    """The words that mark a sysfs row's lines, from the spellings its row declares: its
    file (hostc-tuning writes it, TuneD's `[sysfs]` names it; hostc-verify names a
    per-policy file by its last word) and TuneD's option for it."""
    f = s.sysfs
    assert f is not None, s.name
    words = [f.path]  # the whole path: `khugepaged/defrag` and THP's `defrag` share a word
    if f.per is Per.POLICY:
        words.append(f.path.rsplit("/", 1)[1])
    if s.tuned is not None:
        words.append(f"{s.tuned[1]}=")
    return (*words, *_ALSO.get(s, ()))


def _cpu(plan: Plan) -> list[CatalogSetting]:
    """The sysfs rows of the Plan (governor, EPP, THP defrag, …): one sysfs file each
    (the policy files per CPU group), where the settings table says a host shows them."""
    out = []
    for v in plan.runtime.tunables:
        s = v.setting
        where = tuple(o.path for o in s.observe if isinstance(o, Sysfs))
        has = _has(*carried_as(s))
        out.append(CatalogSetting(s.name, v.shown, v.reason, str(s.when), has, where))
    return out


def _device(pci: str, names: tuple[str, ...]) -> Carrier:
    """A device's lines: by its PCI address, and in a udev rule by its names too (the
    rule that re-runs hostc-tuning matches netdevs and RDMA devices by name)."""
    return lambda path, line: (
        pci in line or (path.startswith("/etc/udev/rules.d/") and any(n in line for n in names))
    )


def _irqs(plan: Plan) -> list[CatalogSetting]:
    irq = plan.runtime.irq
    names = {c.pci: tuple(n for n in (c.netdev, c.rdma) if n) for c in plan.runtime.nic_channels}
    return [
        CatalogSetting(
            f"irq.{d.device}",
            str(d.cpus),
            d.reason,
            "runtime",
            _device(d.pci, names.get(d.pci, ())),
            (
                f"/proc/irq/<n>/smp_affinity_list for each IRQ in "
                f"/sys/bus/pci/devices/{d.pci}/msi_irqs",
            ),
        )
        for d in (irq.devices if irq is not None else ())
    ]


def _modules_and_services(plan: Plan) -> list[CatalogSetting]:
    out = []
    for m in plan.runtime.modules:
        verbs = ("blacklist", "install", "options") if m.blacklist else ("options",)
        where = (
            f"/proc/modules (absent) and `modprobe --showconfig | grep {m.name}`"
            if m.blacklist
            else f"/sys/module/{m.name}/parameters/"
        )
        out.append(
            CatalogSetting(
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
            CatalogSetting(
                s.unit,
                "disabled",
                s.reason,
                "runtime",
                _word(f"disable {s.unit}"),
                (f"systemctl is-enabled {s.unit}",),
            )
        )
    return out


def _loaded(module: str) -> Carrier:
    return lambda path, line: "/modules-load.d/" in path and line.strip() == module


def _never(_path: str, _line: str) -> bool:
    return False


def _rows(plan: Plan) -> list[CatalogSetting]:
    """The other rows `hostc plan` prints, each by the name it shows in brackets: the
    C-state limit, PCIe ACS, the kernel cpumasks and sysfs writes."""
    rt = plan.runtime
    out = []
    c = plan.cstates
    if c is not None and c.cpus is not None:
        out.append(
            CatalogSetting(
                t.MAX_CSTATE.name,
                f"{c.max_cstate} on CPUs {c.cpus}",
                c.reason,
                "runtime",
                _has("pm_qos_resume_latency_us", f"cpuidle/state{c.max_cstate}/"),
                tuple(o.path for o in t.MAX_CSTATE.observe if isinstance(o, Sysfs)),
            )
        )
    if rt.acs:
        out.append(
            CatalogSetting(
                "acs", "redirect off", rt.acs, "boot", _has("disable_acs_redir"), ACS_OBSERVE
            )
        )
    out += [
        CatalogSetting(
            f"cpumask.{m.name}",
            str(m.cpus),
            m.reason,
            str(m.when),
            _has(m.path),
            (m.path,),
        )
        for m in rt.cpumasks
    ]
    out += [
        CatalogSetting(w.glob, w.value, w.reason, str(w.when), _has(w.glob), (w.glob,))
        for w in rt.sysfs
    ]
    return out


def _owners_and_rest(plan: Plan) -> list[CatalogSetting]:
    """NIC channels, the IRQ and runtime owners, modules loaded at boot, and what is
    left out on purpose."""
    rt = plan.runtime
    out = [
        CatalogSetting(
            f"nic.{n.device}",
            f"combined channels {n.count}",
            n.reason,
            "runtime",
            _word(f"nic_channels {n.pci}"),
            (f"ethtool -l <netdev of {n.pci}>",),
        )
        for n in rt.nic_channels
    ]
    irq = rt.irq
    if irq is not None:
        out.append(
            CatalogSetting(
                t.IRQ_OWNER.name,
                f"{irq.owner}; banned {irq.banned}",
                irq.reason,
                "runtime",
                _has("IRQBALANCE_BANNED_CPU", "/proc/irq/default_smp_affinity"),
                ("systemctl is-active irqbalance.service", "/proc/irq/default_smp_affinity"),
            )
        )
    out.append(
        CatalogSetting(
            t.RUNTIME_OWNER.name,
            str(rt.owner),
            rt.owner_reason,
            "runtime",
            _never,
            tuple(o.path for o in t.RUNTIME_OWNER.observe if isinstance(o, Sysfs)),
        )
    )
    out += [
        CatalogSetting(
            m.name,
            "loaded at boot",
            m.reason,
            str(m.when),
            _loaded(m.name),
            (f"/sys/module/{m.name.replace('-', '_')}",),
        )
        for m in plan.modules_load
    ]
    out += [
        CatalogSetting(x.setting, "left out on purpose", x.reason, "never", _never, ())
        for x in plan.left_out
    ]
    return out


#: where a host shows PCIe ACS control (per bridge)
ACS_OBSERVE = ("lspci -vvv (ACSCtl of each bridge)",)


def _reserve(kib: int) -> Carrier:
    """hostc-hugepages' lines for pages of `kib` KiB: `reserve NODE KIB SIZE COUNT`."""
    line = re.compile(rf"^reserve [0-9]+ {kib} ")
    return lambda _path, text: line.search(text) is not None


def _hugepage_pools(plan: Plan) -> list[CatalogSetting]:
    """The runtime hugepage pools: hostc-hugepages' `reserve NODE KIB …` lines (the boot
    pools are kernel arguments)."""
    out = []
    for p in plan.hugepages:
        if p.when is not When.RUNTIME:
            continue
        out.append(
            CatalogSetting(
                f"hugepages {format_kib(p.size_kib)}",
                ", ".join(f"node{n} {c}" for n, c in p.per_node) or "none",
                p.reason,
                str(p.when),
                _reserve(p.size_kib),
                tuple(
                    kf.NODE_HUGEPAGES.format(node=n, kib=p.size_kib) + "/nr_hugepages"
                    for n, _ in p.per_node
                ),
            )
        )
    return out


def runtime(plan: Plan) -> list[CatalogSetting]:
    """The runtime settings, in `hostc plan`'s order."""
    return [
        *_cpu(plan),
        *_irqs(plan),
        *_modules_and_services(plan),
        *_rows(plan),
        *_owners_and_rest(plan),
        *_hugepage_pools(plan),
    ]
