"""What a change costs a running host, computed before it is rolled out.

The rule is `hostc.delivery.effects`: each entry of a build (a host file, the kernel
arguments a TuneD profile carries, the kubelet managers, each sysctl, each unit stopped)
with its effects when added, changed or removed.  A change is the set of entries whose
digest differs between two builds; its disruption is the union of their effects, where
a reboot owed brings every new state, so nothing is applied live or restarted before it.
A state is read from a build (its Plan and artifacts) or from the record a `build --out`
left (`hostc.delivery.owned`), so `hostc diff` and `hostc changed` agree; every delivery
carries the same entries in its manifest, and hostc-apply applies the same union there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from hostc.artifact import Action, Activation, Artifact
from hostc.delivery.effects import (
    CostEntry,
    Facts,
    Kind,
    artifact_entries,
    changed_effects,
    entries,
    plan_facts,
)
from hostc.plan.model import Plan


@attrs.frozen
class HostState:
    """What one build puts on a host, as entries (`hostc.delivery.effects`)."""

    entries: Mapping[str, CostEntry]


@attrs.frozen
class Disruption:
    reboot_for: tuple[str, ...]  # why a reboot is owed ('' → none)
    restart: tuple[str, ...]
    kubelet_reset: bool
    live: tuple[str, ...]
    later: tuple[str, ...]
    files: int  # host files that change

    @property
    def reboot(self) -> bool:
        return bool(self.reboot_for)

    @property
    def summary(self) -> str:
        """One word, as hostc-apply --disruption's last line: reboot, restart, live, none."""
        if self.reboot or self.kubelet_reset:
            return "reboot"
        return "restart" if self.restart else "live" if self.live else "none"

    def to_json(self) -> dict[str, Any]:
        return {
            "reboot": self.reboot,
            "restart": list(self.restart),
            "kubelet_reset": self.kubelet_reset,
            "live": list(self.live),
            "later": list(self.later),
            "reboot_for": list(self.reboot_for),
            "files": self.files,
            "summary": self.summary,
        }

    def line(self) -> str:
        """One line: `applies live (sysctl); restarts serve-b.service; no reboot`."""
        if not self.files and not self.kubelet_reset and not (self.live or self.later):
            return "no change on the host"
        if self.reboot:
            before = (
                f"applies only {', '.join(self.live)} before it (the reboot's change goes "
                "through it), restarts nothing"
                if self.live
                else "nothing applied live or restarted before it: the reboot applies it all"
            )
            parts = [f"reboots for {', '.join(self.reboot_for)}", before]
        else:
            parts = [f"applies live ({', '.join(self.live)})"] if self.live else []
            parts.append(
                f"restarts {', '.join(self.restart)}" if self.restart else "restarts nothing"
            )
            parts.append("no reboot")
        if self.kubelet_reset:
            parts.append("kubelet reset at next boot: drain first")
        if self.later:
            parts.append(f"later: {'; '.join(self.later)}")
        return "; ".join(parts)


def state(plan: Plan, artifacts: Iterable[Artifact]) -> HostState:
    """A build's state: its host files and its Plan's facts."""
    return HostState(artifact_entries(artifacts, plan_facts(plan)))


def recorded(doc: Mapping[str, Any]) -> HostState:
    """The state a build record (`hostc.delivery.owned`'s `.hostc-build.json`) keeps:
    its host files with their activation, and its facts."""
    rows: list[tuple[str, str, tuple[Activation, ...]]] = []
    for row in doc["files"]:
        if row["kind"] != "file":
            continue
        acts = []
        for word in row["activation"]:
            action, _, unit = str(word).partition(" ")
            with contextlib.suppress(ValueError):
                acts.append(Activation(Action(action), unit or None))
        rows.append((row["host_path"], f"{row['sha256']}:{row.get('mode', '0644')}", tuple(acts)))
    facts = doc.get("facts", {})
    return HostState(entries(rows, Facts.from_json(facts if isinstance(facts, dict) else {})))


def compute(old: HostState, new: HostState) -> Disruption:
    """The disruption of going from `old` to `new` on a running host."""
    effects, files = changed_effects(old.entries, new.entries)
    found: dict[Kind, set[str]] = {k: set() for k in Kind}
    for e in effects:
        found[e.kind].add(e.text)
    reset = bool(found[Kind.DRAIN])
    prepare = found[Kind.PREPARE]
    if found[Kind.REBOOT]:  # the reboot brings every new state: nothing before it but
        # what carries the reboot's own change (Kind.PREPARE)
        reboot = tuple(sorted(found[Kind.REBOOT]))
        return Disruption(reboot, (), reset, tuple(sorted(prepare)), (), files)
    return Disruption(
        reboot_for=(),
        restart=tuple(sorted(found[Kind.RESTART])),
        kubelet_reset=reset,
        live=tuple(sorted(found[Kind.LIVE] | prepare)),
        later=tuple(sorted(found[Kind.LATER])),
        files=files,
    )


def fleet_line(rows: Mapping[str, Disruption]) -> str:
    """Summed over hosts: `12 hosts reboot, 3 restart serve-a.service, 5 live only`."""
    n = len(rows)
    reboot = sum(1 for d in rows.values() if d.reboot)
    units: dict[str, int] = {}
    for d in rows.values():
        for u in d.restart:
            units[u] = units.get(u, 0) + 1
    reset = sum(1 for d in rows.values() if d.kubelet_reset)
    live = sum(1 for d in rows.values() if not d.reboot and not d.restart and d.files)
    same = sum(1 for d in rows.values() if not d.files and not d.kubelet_reset)

    def hosts(k: int) -> str:
        return f"{k} host{'s' if k != 1 else ''}"

    parts = [f"{hosts(reboot)} reboot"] if reboot else []
    parts += [f"{k} restart {u}" for u, k in sorted(units.items())]
    parts += [f"{hosts(reset)} kubelet reset at next boot (drain first)"] if reset else []
    parts += [f"{hosts(live)} live only"] if live else []
    parts += [f"{hosts(same)} unchanged"] if same else []
    return f"{hosts(n)}: " + ", ".join(parts) if parts else f"{hosts(n)}: nothing"
