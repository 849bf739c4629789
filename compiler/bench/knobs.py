"""Which of a Plan's settings `hostc bench --ablate` may revert, and to what.

A setting is ablated only when three things hold:

1. Its change is live.  For a sysctl the delivery's one rule says so
   (`hostc.delivery.effects`: the `sysctl:KEY` entry's effects; a key read only when a
   socket is made or at `listen()` reaches running servers at their next start, so it
   is skipped).  For a settings-table row, its timing (`Setting.when`: runtime, as
   hostc-tuning writes it), or a boot argument the running kernel also takes live
   (`knowledge.kernel.APPLIED_LIVE`: THP's mode).  The kernel cpumasks are written by
   hostc-tuning at runtime; the per-CPU PM QoS latency is the runtime form of
   `max_cstate`.  Anything the Plan sets at boot, through a unit's restart or in
   several device files (IRQ placement, NIC queues, the IOMMU) is never touched.
2. Its previous value is known.  hostc keeps none: `hostc-revert` removes what hostc
   installed and the host gets its old values back at the next boot, so the value
   before hostc comes from a `--before` capture of the host taken before hostc was
   applied (`hostc probe --capture FILE --spec SPEC` stores exactly the files audit
   reads, these included) or from `--revert NAME=VALUE`.
3. It differs from the value in effect now.

Every read goes through the audit's observers, on the live root and on the capture
alike: a value is reverted to exactly what the same reader showed before.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

from hostc.audit.devices import CPU
from hostc.audit.host import HostReader
from hostc.audit.observe import TABLE, Expect, Look
from hostc.bench.state import host_at, host_tree, observe
from hostc.cpuset import CpuListError, CpuSet
from hostc.delivery.effects import Facts, Kind, entries
from hostc.diagnostics import HostcError, file_error
from hostc.knowledge.kernel import APPLIED_LIVE
from hostc.plan.model import Plan
from hostc.record import Record
from hostc.settings import table as t
from hostc.settings.model import Cmdline, Setting, SysctlKey
from hostc.vocab import When

#: the audit table's groups whose settings a running host holds in files
GROUPS = (
    "kernel-argument settings",
    "sysctls",
    "sysfs settings",
    "kernel cpumasks",
    "devices",
    "interrupts",
)
ROWS: dict[str, Setting[object]] = {s.name: s for s in t.SETTINGS}
CPUFREQ = t.CPUFREQ.split("policy*", 1)[0].rstrip("/")
#: the kinds of value no single live file holds, never reverted: (the name they are
#: reported under, why)
NOT_ONE_FILE = {
    Look.EACH_VALUE: ("device sysfs values", "a value in every file of a device glob"),
    Look.NIC_CHANNELS: ("NIC queues", "`ethtool -L` changes them and resets the link"),
    Look.IOMMU_MODE: ("IOMMU", "set by kernel arguments: a reboot"),
    Look.ACS_REDIRECT: ("IOMMU", "set by kernel arguments: a reboot"),
}
#: IRQ placement, reported once for the whole group
IRQS = (
    "IRQ placement",
    "every IRQ's affinity is a file of its own, managed IRQs refuse a new one and "
    "irqbalance's state is a unit's: not ablated",
)


@attrs.frozen(repr=False, eq=False)
class File(Record):
    """One file of a setting: the value in effect now and the one it is reverted to."""

    expect: Expect  # read through the audit's observer of this one file
    path: str
    now: str
    before: str


@attrs.frozen(repr=False, eq=False)
class Knob(Record):
    """A setting the ablation reverts: every file of it, and where the old value is from."""

    name: str
    reason: str
    files: tuple[File, ...]
    source: str

    @property
    def now(self) -> str:
        return ",".join(dict.fromkeys(f.now for f in self.files))

    @property
    def before(self) -> str:
        return ",".join(dict.fromkeys(f.before for f in self.files))


@attrs.frozen(repr=False, eq=False)
class Skip(Record):
    name: str
    why: str
    #: the host had the Plan's value before hostc: nothing to revert (listed together)
    same: bool = False


def name_of(e: Expect) -> str:
    """The name `--revert` and the report use: the sysctl's key, the table row's name."""
    if e.kind is Look.SYSCTL:
        return e.args[0]
    if e.kind is Look.PM_QOS:
        return t.MAX_CSTATE.name
    return e.setting


def _sysctl_not_live(key: str, value: str) -> str | None:
    """What the delivery's rule says a live change of `key` does not reach now."""
    entry = entries((), Facts(sysctls=((key, value),)))[f"sysctl:{key}"]
    late = [x for x in entry.change if x.kind is not Kind.LIVE]
    return late[0].text if late else None


def _row_not_live(row: Setting[object]) -> str | None:
    if row.when in (When.RUNTIME, When.SYSCTL):
        return None
    arg = next((o.arg for o in row.observe if isinstance(o, Cmdline)), None)
    if row.when is When.BOOT and arg is not None and arg in APPLIED_LIVE:
        return None  # the running kernel takes it live too (THP's mode)
    return "takes effect only at a reboot" if row.when is When.BOOT else "needs a restart"


def not_live(group: str, e: Expect) -> tuple[str, str] | None:
    """(the name it is reported under, why) `e`'s setting cannot be reverted live, or
    None: it can."""
    if group == "interrupts":
        return IRQS
    if e.kind in NOT_ONE_FILE:
        return NOT_ONE_FILE[e.kind]
    why: str | None
    if e.kind is Look.SYSCTL:
        why = _sysctl_not_live(e.args[0], e.expected)
    elif group == "kernel cpumasks" or e.kind is Look.PM_QOS:
        why = None  # hostc-tuning writes them at runtime
    elif (row := ROWS.get(e.setting)) is None:
        why = "not a runtime setting hostc bench knows how to revert"
    else:
        why = _row_not_live(row)
    return None if why is None else (name_of(e), why)


def _one(e: Expect, path: str, what: str) -> Expect:
    return attrs.evolve(e, kind=Look.VALUE, setting=what, args=(path,), pending=None)


def files_of(e: Expect, host: HostReader) -> list[tuple[Expect, str]]:
    """Each file the setting is held in, with an expectation that reads just that file
    (read raw: a cpumask's hex, not the list the audit compares)."""
    if e.kind is Look.SYSCTL:
        return [(e, SysctlKey(e.args[0]).path)]
    if e.kind in (Look.SELECTED, Look.VALUE):
        return [(e, e.args[0])]
    if e.kind is Look.MASK:
        return [(_one(e, e.args[0], e.setting), e.args[0])]
    if e.kind is Look.PER_CPU:
        names = sorted(n for n in host.listdir(CPUFREQ) if n.startswith("policy"))
        paths = [f"{CPUFREQ}/{p}/{e.args[0]}" for p in names]
        return [(_one(e, p, f"{e.setting} {p.split('/')[-2]}"), p) for p in paths]
    if e.kind is Look.PM_QOS:
        try:
            cpus = CpuSet.parse(e.args[1])
        except (CpuListError, ValueError):
            return []
        paths = [f"{CPU}/cpu{c}/power/pm_qos_resume_latency_us" for c in cpus]
        return [(_one(e, p, f"PM QoS {p.split('/')[-3]}"), p) for p in paths]
    return []


def _expectations(plan: Plan) -> Iterator[tuple[str, Expect]]:
    for group, rows in TABLE:
        if group in GROUPS:
            for e in rows(plan):
                yield group, e


def knob_for(
    e: Expect,
    now: HostReader,
    before: HostReader | None,
    override: str | None,
    source: str,
) -> Knob | Skip:
    """The knob of a live setting, or why it is skipped."""
    name = name_of(e)
    files = [(x, p, v) for x, p in files_of(e, now) if (v := observe(now, x)) is not None]
    if not files:
        return Skip(name, "cannot be read on this host (not present here)")
    if override is not None:
        old = [override] * len(files)
        source = "--revert"
    elif before is None:
        return Skip(name, "no previous value known: hostc keeps none (pass --before or --revert)")
    else:
        found = [observe(before, x) for x, _, _ in files]
        if any(v is None for v in found):
            return Skip(name, f"the --before capture does not show it ({source})")
        old = [v for v in found if v is not None]
    out = tuple(File(x, p, v, o) for (x, p, v), o in zip(files, old, strict=True))
    if all(f.now == f.before for f in out):
        return Skip(name, "the host had the same value before hostc", same=True)
    return Knob(name, str(e.reason), out, source)


def ablation_plan(
    plan: Plan,
    now: HostReader,
    before: HostReader | None,
    overrides: Mapping[str, str],
    source: str = "",
) -> tuple[list[Knob], list[Skip]]:
    """The knobs to revert, one per live setting, and every other setting with why not."""
    knobs: list[Knob] = []
    skips: dict[str, Skip] = {}
    for group, e in _expectations(plan):
        skipped = not_live(group, e)
        if skipped is not None:
            skips.setdefault(skipped[0], Skip(*skipped))
            continue
        found = knob_for(e, now, before, overrides.get(name_of(e)), source)
        if isinstance(found, Knob):
            knobs.append(found)
        else:
            skips.setdefault(found.name, found)
    return knobs, list(skips.values())


def plan_at(
    plan: Plan, root: Path, before: Path | None, overrides: Mapping[str, str]
) -> tuple[list[Knob], list[Skip]]:
    """`ablation_plan` of the host under `root`, its old values from the `before` tree
    or capture archive (read while it is open) and `--revert NAME=VALUE`; a NAME no
    setting of the Plan has is refused."""
    now = HostReader(host_tree(root), live=False)
    if before is None:
        knobs, skips = ablation_plan(plan, now, None, overrides)
    else:
        with host_at(before) as old:
            knobs, skips = ablation_plan(plan, now, old, overrides, f"--before {before}")
    names = {name_of(e) for _, e in _expectations(plan)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise HostcError(
            [
                file_error(
                    "--revert",
                    f"no setting {unknown[0]!r} in the Plan",
                    hint="the Plan's settings: " + ", ".join(sorted(names)[:30]),
                )
            ]
        )
    return knobs, skips
