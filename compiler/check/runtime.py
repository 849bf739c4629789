"""Runtime tuning and GPU-local workloads (issue 10): names, owners, and the traps of
knobs.md as warnings (errors with `--strict`).  One function per rule."""

from __future__ import annotations

import re
from collections.abc import Iterator

import attrs

from hostc.cpuset import CpuSet
from hostc.diagnostics import Diagnostic, Named, at, error, label, warning
from hostc.knowledge import charsets, systemd
from hostc.knowledge import kernel as kernelfacts
from hostc.knowledge.gpu import PEERMEM_MODULE
from hostc.knowledge.kubelet import kubelet_unit
from hostc.knowledge.vendor import Vendor
from hostc.plan.model import IrqOwner, Module, Plan, RuntimeOwner
from hostc.provenance import PresetLayer, SpecKey
from hostc.record import Record
from hostc.resolve import Resolved
from hostc.settings import Family
from hostc.settings import table as t
from hostc.spec import text
from hostc.spec.model import HostSpec, Role
from hostc.vocab import PstateMode

#: modprobe.d(5) module names (`-` and `_` are the same to modprobe).
MODULE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: One `options` word: key or key=value, nothing a modprobe.d line would split or comment.
MODULE_OPTION = re.compile(r"^[A-Za-z0-9_.-]+(=[A-Za-z0-9_.,:/+@-]+)?$")
UNIT = charsets.UNIT  # at most 255 characters, checked beside it


def unit_problem(name: str, dropin: bool = False) -> str | None:
    """Why `name` is no systemd unit name, or (`dropin`: hostc writes `<name>.d/`) why
    its drop-in folder is no file name or would reach other units (hostc.knowledge.charsets)."""
    if len(name) > charsets.UNIT_NAME_MAX or UNIT.fullmatch(name) is None:
        return (
            f"{text.shown(name)} is not a systemd unit name (letters, digits, `:_.-`, one `@`, "
            f"a type suffix such as .service, at most {charsets.UNIT_NAME_MAX} characters)"
        )
    if dropin and len(name) + 2 > charsets.NAME_MAX:
        return (
            f"its drop-in folder {name[:20]}….d would be {len(name) + 2} characters, "
            f"past NAME_MAX ({charsets.NAME_MAX})"
        )
    if dropin and charsets.UNIT_DROPIN_SHARED.search(name):
        what = "instance" if "@." in name else "unit whose name starts with"
        stem = name.rsplit(".", 1)[0]
        return (
            f"systemd applies {name}.d/ to every {what} {stem}…: a drop-in for it would "
            "reach other units"
        )
    return None


def _kubelet_units(spec: HostSpec) -> set[str]:
    k = spec.kubelet
    return set() if k is None else {kubelet_unit(k.flavor, k.role)}


def names_valid(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    for i, m in enumerate(spec.modules.blacklist):
        if MODULE.fullmatch(m) is None:
            yield error(at("modules", "blacklist", i), f"{text.shown(m)} is not a module name")
    modules: dict[str, str] = {}
    for m, opts in spec.modules.options.items():
        path = at("modules", "options", m)
        if MODULE.fullmatch(m) is None:
            yield error(path, f"{text.shown(m)} is not a module name")
        same = m.replace("-", "_")  # modprobe reads `-` and `_` in a name as one
        if same in modules:
            yield error(path, f"names the same module as modules.options.{modules[same]}")
        modules.setdefault(same, m)
        words = opts.split(" ")
        if not opts.strip() or any(MODULE_OPTION.fullmatch(w) is None for w in words):
            yield error(
                path,
                f"{text.shown(opts)} is not a list of key=value options separated by single spaces",
            )
    for i, first in _repeats([m.replace("-", "_") for m in spec.modules.blacklist]):
        yield error(
            at("modules", "blacklist", i), f"names the same module as modules.blacklist[{first}]"
        )


def _repeats(keys: list[str]) -> Iterator[tuple[int, int]]:
    """(index, index of its first occurrence) for every key seen before: one pass, so
    thousands of workloads or modules stay linear."""
    seen: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k in seen:
            yield i, seen[k]
        seen.setdefault(k, i)


_RESERVED_HINT = 'name the workload\'s own service (unit = "my-server.service")'


def _reserved_message(unit: str, is_unit: str, what: str) -> str:
    """Why no workload may be `unit`, which is `is_unit`: itself, or the template or unit
    whose drop-ins it shares (systemd reads them under every name a unit has)."""
    if is_unit != unit:
        how = "an instance of" if systemd.template_of(unit) == is_unit else "an alias of"
        unit = f"{unit}, {how} {is_unit} (systemd reads a unit's drop-ins under all its names),"
    return f"{unit} is {what}; hostc places no workload in it"


def units_valid(r: Resolved) -> Iterator[Diagnostic]:
    """Unit names, and no unit that is hostc's own or a workload's where it would collide."""
    spec = r.spec
    workload_units = {w.unit or f"{w.name}.service" for w in spec.workload}
    for i, u in enumerate(spec.services.disable):
        problem = unit_problem(u)
        if problem is None and (u in workload_units or u == "hostc-tuning.service"):
            problem = f"{u} is placed or started by hostc; disabling it would undo that"
        if problem is None and u in _kubelet_units(spec):
            problem = f"{u} runs the kubelet hostc configures"
        if problem is None and u == "irqbalance.service" and spec.irq.owner is IrqOwner.IRQBALANCE:
            problem = 'irq.owner = "irqbalance" keeps irqbalance as the owner of interrupts'
        if problem is not None:
            yield error(at("services", "disable", i), problem)
    for i, w in enumerate(spec.workload):
        unit = w.unit if w.unit is not None else f"{w.name}.service"
        path = spec.workload_at(i).key("unit" if w.unit else "name")
        problem = unit_problem(unit, dropin=True)
        if problem is None and not unit.endswith(".service"):
            problem = f"{text.shown(unit)} is not a .service: only services take CPUAffinity="
        if problem is not None:
            yield error(path, problem)
        elif (taken := systemd.reserved(unit)) is not None:
            yield error(path, _reserved_message(unit, *taken), hint=_RESERVED_HINT)
    units = [w.unit or f"{w.name}.service" for w in spec.workload]
    for i, first in _repeats(units):
        yield error(
            spec.workload_at(i).key("unit"),
            f"unit {units[i]} is placed by two workloads (also {spec.workload_at(first)})",
        )


def owners_agree(r: Resolved) -> Iterator[Diagnostic]:
    spec = r.spec
    if spec.irq.owner is IrqOwner.HOSTC and spec.runtime.owner is RuntimeOwner.TUNED:
        yield error(
            at("irq", "owner"),
            'irq.owner = "hostc" pins each device\'s interrupts with hostc-tuning.service, '
            'which runtime.owner = "tuned" turns off',
            hint='keep irq.owner = "irqbalance" (TuneD bans the isolated CPUs) or '
            'runtime.owner = "systemd"',
        )


def pstate_spelled(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    mode = spec.cpufreq.pstate
    if mode is None:
        return
    vendor = r.host.cpu_vendor
    if not r.host.arch.is_x86 or vendor not in (Vendor.INTEL, Vendor.AMD):
        yield warning(
            at("cpufreq", "pstate"),
            f"left out: the P-state mode is spelled intel_pstate= or amd_pstate=, and this "
            f"host is {topo.arch} with CPU vendor {topo.cpu_vendor or 'unknown'}",
        )
    elif vendor is Vendor.INTEL and mode == PstateMode.GUIDED:
        yield error(at("cpufreq", "pstate"), "intel_pstate has no guided mode (amd_pstate only)")
    elif vendor is Vendor.AMD:
        release = r.host.amd_pstate
        since = kernelfacts.AMD_PSTATE_SINCE.get(mode.value)
        if release is not None and since is not None and release < since:
            yield error(
                at("cpufreq", "pstate"),
                f"amd_pstate={mode.value} needs Linux ≥ {since[0]}.{since[1]}; kernel "
                f"{release[0]}.{release[1]} ignores it and keeps its default driver",
                hint="leave cpufreq.pstate out, or boot a newer kernel",
            )


def epp_taken(r: Resolved) -> Iterator[Diagnostic]:
    """An EPP the spec asks for where no driver has one (the preset leaves it out there)."""
    spec, topo = r.spec, r.topo
    if spec.cpufreq.energy_performance_preference is None:
        return
    vendor = r.host.cpu_vendor
    release = r.host.amd_pstate
    since = kernelfacts.AMD_PSTATE_SINCE["active"]
    if not r.host.arch.is_x86 or vendor not in (None, Vendor.INTEL, Vendor.AMD):
        where = f"{topo.arch} with CPU vendor {topo.cpu_vendor or 'unknown'}"
    elif vendor is Vendor.AMD and release is not None and release < since:
        where = f"AMD on Linux {release[0]}.{release[1]} (amd-pstate-epp arrived in 6.3)"
    else:
        return
    yield warning(
        at("cpufreq", "energy_performance_preference"),
        f"no P-state driver offers energy_performance_preference on {where}: hostc-tuning "
        "skips it and TuneD logs an error",
    )


# --- Plan rules: what hostc loads is never what the spec blocks -------------------------


@attrs.frozen(repr=False, eq=False)
class _Load(Record):
    """One module hostc itself loads: by whom, and what a blacklist entry does to it."""

    module: str
    by: str  # who asks for it, key or preset entry first
    blocked: str  # what a `blacklist` line alone does to this load
    hard_blocked: str  # what `install <module> /bin/false` does to it
    hint: str


def _loads(plan: Plan) -> Iterator[_Load]:
    """Every module hostc loads: modules-load.d (systemd-modules-load, which applies the
    blacklist: kmod's KMOD_PROBE_APPLY_BLACKLIST, journal "Module 'X' is deny-listed (by
    kmod)") and hostc-gpudirect.service's explicit `modprobe`, which a `blacklist` line
    does not stop and an `install X /bin/false` line fails (modprobe.d(5))."""
    skipped = (
        'systemd-modules-load skips a blacklisted module ("deny-listed (by kmod)"), so it '
        "is never loaded and hostc-verify.service, which expects it loaded, fails every boot"
    )
    for m in plan.modules_load:
        src = m.reason.source
        setting = next(
            (s.name for s in t.SETTINGS if s.family is Family.MODULE_LOAD and s.example == m.name),
            None,
        )
        by = f"the {src.layer} preset" if isinstance(src, PresetLayer) else str(src)
        by += f" ({setting})" if setting else ""
        off = f'preset.exclude = ["{setting}"]' if setting else "leave it out of the preset"
        yield _Load(
            m.name,
            f"{by} loads it at every boot (modules-load.d)",
            skipped,
            skipped,
            f"drop it from modules.blacklist, or keep hostc from loading it: {off}",
        )
    g = plan.runtime.gpudirect
    if g is not None and g.peermem:
        given = isinstance(g.reason.source, SpecKey)
        mode = f'modules.gpudirect = "{g.mode}"' + ("" if given else " (the default)")
        where = " where DMA-BUF is not usable" if g.mode == "auto" else ""
        yield _Load(
            PEERMEM_MODULE,
            f"{mode} loads it with hostc-gpudirect.service{where}",
            "an explicit modprobe ignores `blacklist`, so it is loaded all the same, where "
            "the blacklist tells hostc-verify.service to expect it absent",
            f"the modprobe runs `install {PEERMEM_MODULE} /bin/false` and "
            "hostc-gpudirect.service fails every boot",
            'drop it from modules.blacklist, or set modules.gpudirect = "dmabuf" (never '
            f"load {PEERMEM_MODULE})",
        )


def loaded_modules_not_blocked(plan: Plan) -> Iterator[Diagnostic]:
    """No module hostc loads is blacklisted: one error per blacklist entry, in the spec's
    order, naming what loads it.  Names compare as modprobe reads them (`-` is `_`)."""
    loads: dict[str, _Load] = {}
    for load in _loads(plan):
        loads.setdefault(load.module.replace("-", "_"), load)
    for m in sorted((m for m in plan.runtime.modules if m.blacklist), key=_spec_order):
        by = loads.get(m.name.replace("-", "_"))
        if by is None:
            continue
        src = m.reason.source
        how = "hard-blocked (modules.hard_block)" if m.hard else "blacklisted"
        yield error(
            at(*src.path) if isinstance(src, SpecKey) else label(str(src)),
            f"{m.name} is {how}, but {by.by}: {by.hard_blocked if m.hard else by.blocked}",
            hint=by.hint,
        )


def _spec_order(m: Module) -> int:
    """A blacklisted module's index in modules.blacklist (-1 where it came from elsewhere)."""
    src = m.reason.source
    last = src.path[-1] if isinstance(src, SpecKey) else None
    return last if isinstance(last, int) else -1


# --- Plan rules: the traps of knobs.md -----------------------------------------


def isolated_cpus_pinned(plan: Plan) -> Iterator[Diagnostic]:
    if not plan.workloads or not plan.partition.isolated:
        return
    used = plan.partition.isolated & plan.partition.isolated  # copy
    for w in plan.workloads:
        used = used - w.cpus
    if used:
        yield warning(
            at("cpu", "isolate"),
            f"isolated CPUs {used} run no workload: isolating without pinning is worse than "
            "not isolating",
            hint='isolate only the workloads\' nodes (isolate = "workload") or add a workload',
        )


def nohz_full_not_shared(plan: Plan) -> Iterator[Diagnostic]:
    """One warning per NUMA node whose isolated CPUs two or more workloads share, naming
    the first few of them: linear in the workloads, never one warning per pair."""
    nohz = plan.isolation_by("nohz_full")
    if nohz is None:
        return
    iso = nohz.cpus if nohz.cpus is not None else plan.partition.isolated
    users: dict[int, list[int]] = {}
    for i, w in enumerate(plan.workloads):
        for cpu in w.cpus & iso:
            users.setdefault(cpu, []).append(i)
    node_of = {cpu: n.id for n in plan.nodes for cpu in n.cpus}
    shared: dict[int | None, tuple[set[int], dict[int, None]]] = {}
    for cpu, ws in sorted(users.items()):
        if len(ws) > 1:
            cpus, seen = shared.setdefault(node_of.get(cpu), (set(), {}))
            cpus.add(cpu)
            seen.update(dict.fromkeys(ws))
    for node, (cpus, idx) in sorted(shared.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        names = [plan.workloads[i].name for i in idx]
        listed = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        first = next(iter(idx))
        yield warning(
            at("workload", Named(first, plan.workloads[first].name)),
            f"{len(names)} workloads ({listed}) share isolated CPUs {CpuSet(cpus)}"
            + ("" if node is None else f" on NUMA node {node}")
            + " under nohz_full: the tick stops only with one runnable thread per CPU",
            hint="drop share_cpus, or give each its own GPUs' node",
        )


def workload_one_node(plan: Plan) -> Iterator[Diagnostic]:
    for i, w in enumerate(plan.workloads):
        if len(w.nodes) > 1:
            yield warning(
                at("workload", Named(i, w.name), "gpus"),
                f"{w.name}'s GPUs span NUMA nodes {','.join(map(str, w.nodes))}: half its "
                "traffic crosses the socket link",
                hint="split it into one workload per node",
            )


def thp_not_always_for_inference(plan: Plan) -> Iterator[Diagnostic]:
    if plan.thp is not None and plan.thp.value == "always" and plan.host.role == Role.INFERENCE:
        yield warning(
            at("kernel", "transparent_hugepage"),
            "THP `always` on an inference host: 50-100 ms compaction stalls land in the tail "
            "latency",
            hint='use "madvise" (the preset)',
        )


def nohz_full_with_intel_pstate(plan: Plan) -> Iterator[Diagnostic]:
    """intel_pstate picks P-states from scheduler utilization callbacks that run from the
    tick; a nohz_full CPU has no tick while it runs one thread, so a dynamic governor can
    leave it slow.  `performance` pins the highest P-state and needs no callback.  Checked:
    nohz_full on, x86 CPU that is Intel (or unknown), governor not `performance`."""
    if plan.isolation_by("nohz_full") is None or not plan.host.x86:
        return
    if plan.host.cpu_vendor not in (Vendor.INTEL, None):
        return
    gov = plan.runtime.tunable(t.GOVERNOR)
    if gov is None or gov.value != "performance":
        yield warning(
            at("cpufreq", "governor"),
            "nohz_full with intel_pstate and governor "
            f"{gov.value if gov else '(unset)'}: intel_pstate updates P-states from the "
            "scheduler tick, which nohz_full stops on isolated CPUs",
            hint='set cpufreq.governor = "performance" (the inference/training preset)',
        )


def tuned_keeps_pinned_servers(plan: Plan) -> Iterator[Diagnostic]:
    """TuneD owns the runtime on an isolated host whose TuneD hostc cannot vouch for:
    the profile leaves `[scheduler] isolated_cores` out (without `cgroup_ps_blacklist`,
    TuneD ≥ 2.17, it would move the pinned servers onto housekeeping CPUs): say so."""
    if plan.runtime.owner is not RuntimeOwner.TUNED or not plan.partition.isolated:
        return
    if plan.kubelet is not None:  # no [scheduler] on kubelet nodes whatever the version
        return
    if plan.host.tuned.cgroup_ps_blacklist:
        return
    known = plan.host.tuned.version
    which = (
        f"{plan.host.os or 'this host'} ships TuneD {'.'.join(map(str, known))} or newer"
        if known
        else f"the TuneD of {plan.host.os or 'this host'} is not in hostc's table"
    )
    yield warning(
        at("runtime", "owner"),
        f"{which}: the profile "
        "leaves [scheduler] isolated_cores out (without cgroup_ps_blacklist, TuneD 2.17, "
        "TuneD would move the pinned servers onto the housekeeping CPUs)",
        hint='set host.os to a release hostc knows, or keep runtime.owner = "systemd"',
    )
