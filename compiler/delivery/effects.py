"""What each part of a build costs a running host when it is added, changed or removed:
the one rule of a change's disruption, computed here and carried everywhere else as data.

A build is a set of *entries*, each a key with a digest and its effects for each case:

- every host file (key: its path; digest: its bytes and mode), from its activation
  (`hostc.artifact.Action`, which the targets derive from the settings table's timing);
- facts of the Plan that no single file carries: the kernel arguments hostc adds
  (`cmdline`: a TuneD profile applies its live settings with `tuned-adm profile`, its
  kernel arguments only at a reboot), the kubelet managers' configuration
  (`kubelet-managers`: its checkpoints are cleared at the next boot, so the node is
  drained and rebooted), each sysctl key with its value (`sysctl:KEY`: a key the build
  drops keeps its running value until the next boot; a key read when a socket is made
  or at `listen()` reaches running servers only at their next start), and each unit the
  build stops (`stopped:UNIT`).

A change is the set of entries whose digest differs between two builds; its disruption
is the union of their effects (`compute`), where a reboot owed brings every new state,
so nothing is applied live or restarted before it.  `hostc diff` and `hostc changed`
compute it from two builds (`hostc.delivery.disruption`); every delivery writes the new
build's entries into the manifest (`effect_lines`), and `hostc-apply` on the host does
the same union over the two manifests, mechanically, and carries out exactly that
(`hostc-apply --disruption` prints it); the Ansible play acts on what it prints.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from hostc.artifact import Action, Activation, Artifact, ArtifactKind
from hostc.knowledge.kernel import APPLIED_LIVE
from hostc.plan.kernelargs import applied_live, boot_only
from hostc.plan.kubelet import checkpointed, managers_stamp
from hostc.plan.model import IrqOwner, Plan
from hostc.settings.table import SOCKET_TIME

#: the delivery's own machinery (hostc-apply runs on every delivery; the manifest it
#: reads changes with every file): no disruption of its own
DELIVERY = (
    "/usr/local/sbin/hostc-apply",
    "/usr/local/sbin/hostc-revert",
    "/var/lib/hostc/manifest",
)
KUBELET_RESET = "/usr/local/sbin/hostc-kubelet-reset"
#: the oneshot that reserves runtime hugepage pools per NUMA node (`hostc.targets.hugepages`)
HUGEPAGES_UNIT = "hostc-hugepages.service"
#: What running it again does to a live host, by the kernel's rules for a node's
#: nr_hugepages (admin-guide/mm/hugetlbpage.rst): a count grows "if sufficient resources
#: exist", and on a running host memory may be too fragmented for it (a 1G page needs a
#: free 1 GiB range); a count shrinks by the free pages, and pages in use become surplus,
#: freed as their users free them.  So the change is live, and may fall short.
HUGEPAGES_LIVE = (
    f"{HUGEPAGES_UNIT} (pools set now where memory allows: a grown pool can fall short "
    "on fragmented memory, and the unit then fails naming the node, size and count, the "
    "next boot's run getting the rest; a shrunk pool frees its free pages now and pages "
    "in use as they are freed)"
)
#: What removing it does: no unit frees what it reserved, so the pages stay until a boot.
HUGEPAGES_KEPT = f"the pages {HUGEPAGES_UNIT} reserved stay reserved until the next boot"


class Kind(enum.StrEnum):
    REBOOT = "reboot"  # owed: nothing live before it
    DRAIN = "drain"  # the node is drained before the reboot (kubelet managers)
    RESTART = "restart"  # a unit restarted (try-restart)
    LIVE = "live"  # applied in place now
    LATER = "later"  # takes effect at an event of its own (a unit's next start, a boot)
    #: applied now even while a reboot is owed, because the reboot's change goes through
    #: it: `tuned-adm profile` is how TuneD writes its kernel arguments to the boot
    #: loader (its bootloader plugin); reported as live either way
    PREPARE = "prepare"


@attrs.frozen
class Effect:
    kind: Kind
    text: str

    def __str__(self) -> str:
        return f"{self.kind.value} {self.text}"


Effects = tuple[Effect, ...]


@attrs.frozen
class CostEntry:
    key: str  # a host path, or `cmdline`, `kubelet-managers`, `sysctl:KEY`, `stopped:UNIT`
    digest: str
    add: Effects = ()
    change: Effects = ()
    remove: Effects = ()

    @property
    def is_file(self) -> bool:
        return self.key.startswith("/")


@attrs.frozen
class Facts:
    """What a build's disruption depends on beyond its files (kept in the build record)."""

    kubelet_unit: str | None = None
    #: the kubelet managers' configuration its checkpoints depend on (None: no checkpoint
    #: of hostc's policy)
    managers: str | None = None
    sysctls: tuple[tuple[str, str], ...] = ()  # key, value
    #: the kernel arguments hostc adds that only a reboot brings (None: not known)
    cmdline: str | None = None
    #: those the running kernel takes live too (`knowledge.kernel.APPLIED_LIVE`)
    cmdline_live: str | None = None
    stopped: tuple[str, ...] = ()  # units the build stops
    servers: tuple[str, ...] = ()  # the workloads' units

    def to_json(self) -> dict[str, Any]:
        return {
            "kubelet_unit": self.kubelet_unit,
            "kubelet_managers": self.managers,
            "sysctl_values": [list(kv) for kv in self.sysctls],
            "cmdline_boot": self.cmdline,
            "cmdline_live": self.cmdline_live,
            "stopped": list(self.stopped),
            "servers": list(self.servers),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Facts:
        """A record's facts; a field of another type reads as unknown, never an error
        (an older record: `sysctls` held the keys alone)."""

        def text(v: object) -> str | None:
            return v if isinstance(v, str) else None

        def words(v: object) -> tuple[str, ...]:
            return tuple(x for x in v if isinstance(x, str)) if isinstance(v, list) else ()

        values = doc.get("sysctl_values")
        if isinstance(values, list):
            pairs = tuple(
                (k, v)
                for row in values
                if isinstance(row, list) and len(row) == 2
                for k, v in [row]
                if isinstance(k, str) and isinstance(v, str)
            )
        else:  # keys only: a changed value reads as unchanged, a dropped key still shows
            pairs = tuple((k, "") for k in words(doc.get("sysctls")))
        boot, live = text(doc.get("cmdline_boot")), text(doc.get("cmdline_live"))
        full = text(doc.get("cmdline"))  # a record before the split: split it here
        if boot is None and full is not None:
            args = full.split()
            boot = " ".join(a for a in args if a.split("=")[0] not in APPLIED_LIVE)
            live = " ".join(a for a in args if a.split("=")[0] in APPLIED_LIVE)
        return cls(
            text(doc.get("kubelet_unit")),
            text(doc.get("kubelet_managers")),
            pairs,
            boot,
            live,
            words(doc.get("stopped")),
            words(doc.get("servers")),
        )


def stopped_units(plan: Plan) -> tuple[str, ...]:
    """Units the build stops: the services it disables, irqbalance when hostc owns IRQs."""
    units = [s.unit for s in plan.runtime.services_off]
    irq = plan.runtime.irq
    if irq is not None and irq.owner is IrqOwner.HOSTC and plan.runtime.hostc_owned:
        units.append("irqbalance.service")
    return tuple(sorted(set(units)))


def plan_facts(plan: Plan) -> Facts:
    k = plan.kubelet
    return Facts(
        kubelet_unit=k.unit if k is not None else None,
        managers=managers_stamp(k) if k is not None and checkpointed(k) else None,
        sysctls=tuple(sorted((s.key, str(s.value)) for s in plan.sysctls)),
        cmdline=boot_only(plan),
        cmdline_live=" ".join(str(a) for a in applied_live(plan)),
        stopped=stopped_units(plan),
        servers=tuple(sorted({w.unit for w in plan.workloads if w.unit})),
    )


def digest(data: bytes, mode: int) -> str:
    """A file's bytes and mode, as one comparable word."""
    return f"{hashlib.sha256(data).hexdigest()}:{mode:04o}"


def label(path: str) -> str:
    """What a file that takes effect at boot carries, in a word."""
    if path.startswith("/etc/default/grub") or path.endswith("/hostc-kargs"):
        return "kernel arguments"
    if path.startswith("/etc/modprobe.d/"):
        return "module options"
    if path.startswith("/etc/systemd/system.conf.d/"):
        return "the service manager's CPU affinity"
    if path.startswith("/etc/tuned/"):
        return "the TuneD profile's kernel arguments"
    if path.startswith("/etc/systemd/system/") and ".service.d/" in path:
        return f"{path.split('/')[4].removesuffix('.d')}'s CPU affinity"
    if path.startswith("/etc/systemd/system/") and ".slice.d/" in path:
        return f"{path.split('/')[4].removesuffix('.d')}'s CPUs"
    return path


def carries_kargs(path: str, acts: tuple[Activation, ...]) -> bool:
    """Whether the file carries hostc's kernel arguments."""
    tuned = any(a.action is Action.TUNED_PROFILE for a in acts)
    return tuned or label(path) == "kernel arguments"


def _file_effects(
    path: str, acts: tuple[Activation, ...], facts: Facts, case: str
) -> tuple[Effect, ...]:
    """`case`: add, change or remove."""
    kinds = {a.action for a in acts}
    # a file that carries the kernel arguments (GRUB's drop-in, grubby's script, a TuneD
    # profile with its live settings): the `cmdline` entry owes the reboot when the
    # arguments only a reboot brings change, and a change in those the running kernel
    # takes live (THP's mode) owes none
    if carries_kargs(path, acts) and facts.cmdline is not None:
        kinds.discard(Action.REBOOT)
        acts = tuple(a for a in acts if a.action is not Action.REBOOT)
    out: list[Effect] = []
    if Action.REBOOT in kinds:
        out.append(Effect(Kind.REBOOT, label(path)))
    if case == "remove":
        return tuple(out + _removed(path, acts))
    for act in acts:
        a, unit = act.action, act.unit
        if a is Action.RESTART and unit:
            out.append(Effect(Kind.RESTART, unit))
        elif a is Action.SYSCTL:
            out.append(Effect(Kind.LIVE, "sysctl"))
        elif (a is Action.START or (a is Action.ENABLE_NOW and case == "add")) and unit:
            out.append(Effect(Kind.LIVE, HUGEPAGES_LIVE if unit == HUGEPAGES_UNIT else unit))
        elif a is Action.ENABLE and unit and case == "add":
            out.append(Effect(Kind.LIVE, f"enable {unit}"))
        elif a is Action.DAEMON_RELOAD:
            out.append(Effect(Kind.LIVE, "daemon-reload"))
        elif a is Action.NEW_SESSION:
            out.append(Effect(Kind.LIVE, "limits (new sessions)"))
        elif a is Action.NEXT_START and unit:
            out.append(Effect(Kind.LATER, f"{unit} at its next start"))
        elif a is Action.NEXT_BOOT and unit:
            out.append(Effect(Kind.LATER, f"{unit} at the next boot"))
        elif a is Action.TUNED_PROFILE and unit:
            out.append(Effect(Kind.PREPARE, f"TuneD profile {unit}"))
        elif a is Action.RUN and unit == KUBELET_RESET:
            if facts.kubelet_unit is not None:
                what = f"{facts.kubelet_unit} at its next start (kubelet configuration)"
                out.append(Effect(Kind.LATER, what))
        elif a is Action.RUN and Action.REBOOT not in kinds:
            script = unit or path
            if not script.startswith(DELIVERY) and script != KUBELET_RESET:
                out.append(Effect(Kind.LIVE, f"runs {script}"))
    return tuple(dict.fromkeys(out))


def _removed(path: str, acts: tuple[Activation, ...]) -> list[Effect]:
    """A file the new build no longer makes: hostc-apply removes it, reloads the manager
    for a unit file, stops and disables a unit hostc installed, and runs nothing else
    (a dropped sysctl keeps its value: its `sysctl:KEY` entry says so)."""
    out: list[Effect] = []
    name = path.rsplit("/", 1)[-1]
    unit_file = path.startswith("/etc/systemd/system/") and path.count("/") == 4
    if unit_file and name.endswith((".service", ".timer")):
        out.append(Effect(Kind.LIVE, f"stops {name}"))
    if unit_file and name == HUGEPAGES_UNIT:
        out.append(Effect(Kind.LATER, HUGEPAGES_KEPT))
    for act in acts:
        if act.action is Action.RESTART and act.unit:
            # the unit keeps its running placement until it next starts
            what = f"{act.unit} at its next start (hostc's drop-in removed)"
            out.append(Effect(Kind.LATER, what))
        elif act.action is Action.DAEMON_RELOAD:
            out.append(Effect(Kind.LIVE, "daemon-reload"))
        elif act.action in (Action.NEXT_START, Action.NEXT_BOOT) and act.unit:
            when = "its next start" if act.action is Action.NEXT_START else "the next boot"
            out.append(Effect(Kind.LATER, f"{act.unit} at {when}"))
    return out


def file_entry(path: str, sha: str, acts: tuple[Activation, ...], facts: Facts) -> CostEntry:
    return CostEntry(
        path,
        sha,
        _file_effects(path, acts, facts, "add"),
        _file_effects(path, acts, facts, "change"),
        _file_effects(path, acts, facts, "remove"),
    )


def _fact_entries(facts: Facts, carried: bool) -> list[CostEntry]:
    out: list[CostEntry] = []
    if facts.cmdline is not None and carried:
        # the kernel arguments a file of the build carries (`carries_kargs`)
        boot = (Effect(Kind.REBOOT, "kernel arguments"),)
        out.append(CostEntry("cmdline", _hash(facts.cmdline), boot, boot, boot))
    if facts.cmdline_live and carried:
        words = " ".join(a.split("=")[0] + "=" for a in facts.cmdline_live.split())
        taken: Effects = (Effect(Kind.LATER, f"{words} at the next boot (taken live now)"),)
        out.append(CostEntry("cmdline-live", _hash(facts.cmdline_live), taken, taken, taken))
    if facts.managers is not None:
        reset = (
            Effect(Kind.REBOOT, "the kubelet's managers"),
            Effect(Kind.DRAIN, "the kubelet's managers (checkpoints cleared at boot)"),
        )
        out.append(CostEntry("kubelet-managers", _hash(facts.managers), reset, reset, reset))
    servers = ", ".join(facts.servers) or "running servers"
    for key, value in facts.sysctls:
        why = SOCKET_TIME.get(key)
        kept = f"{servers} keep the previous {key} until their next start ({why})"
        later: Effects = (Effect(Kind.LATER, kept),) if why else ()
        gone = (Effect(Kind.LATER, f"{key} keeps its running value until the next boot"),)
        out.append(CostEntry(f"sysctl:{key}", _hash(value), later, later, gone))
    for unit in facts.stopped:
        stop = (Effect(Kind.LIVE, f"stops {unit}"),)
        back = (Effect(Kind.LIVE, f"gives {unit} back its distribution state"),)
        out.append(CostEntry(f"stopped:{unit}", "-", stop, (), back))
    return out


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entries(
    files: Iterable[tuple[str, str, tuple[Activation, ...]]], facts: Facts
) -> dict[str, CostEntry]:
    """A build's entries by key: its host files (path, digest, activation), once per
    path, and its facts."""
    out: dict[str, CostEntry] = {}
    carried = False
    for path, sha, acts in files:
        carried = carried or carries_kargs(path, acts)
        if path not in out:
            out[path] = file_entry(path, sha, acts, facts)
    for e in _fact_entries(facts, carried):
        out[e.key] = e
    return out


def artifact_entries(artifacts: Iterable[Artifact], facts: Facts) -> dict[str, CostEntry]:
    rows = (
        (a.path, digest(a.data, a.mode), a.activation)
        for a in artifacts
        if a.kind is ArtifactKind.FILE
    )
    return entries(rows, facts)


def changed_effects(
    old: Mapping[str, CostEntry], new: Mapping[str, CostEntry]
) -> tuple[list[Effect], int]:
    """Every effect of going from `old` to `new`, and how many host files change (the
    delivery's own machinery counts for neither)."""
    found: list[Effect] = []
    files = 0
    for key in sorted(set(old) | set(new)):
        if key.startswith(DELIVERY):
            continue
        was, now = old.get(key), new.get(key)
        if was is not None and now is not None and was.digest == now.digest:
            continue
        entry = now if now is not None else was
        assert entry is not None
        files += entry.is_file
        found += now.add if was is None and now is not None else ()
        found += now.change if was is not None and now is not None else ()
        found += was.remove if now is None and was is not None else ()
    return found, files


def effect_lines(table: Mapping[str, CostEntry]) -> list[tuple[str, ...]]:
    """The manifest's lines for `table`: `entry KEY DIGEST`, then `effect KEY CASES KIND
    TEXT` per effect, CASES the letters of the cases it applies in (`a`dded, `c`hanged,
    `r`emoved) and TEXT the rest of the line; hostc-apply judges a change by these
    lines alone."""
    rows: list[tuple[str, ...]] = []
    for key in sorted(table):
        if key.startswith(DELIVERY):
            continue
        e = table[key]
        rows.append(("entry", key, e.digest))
        cases: dict[Effect, str] = {}
        for letter, effects in (("a", e.add), ("c", e.change), ("r", e.remove)):
            for x in effects:
                cases[x] = cases.get(x, "") + letter
        rows += [("effect", key, c, x.kind.value, x.text) for x, c in cases.items()]
    return rows
