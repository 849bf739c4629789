"""What a change costs a running host, computed before it is rolled out.

Each host file carries its activation (`hostc.artifact.Action`): the targets derive it
from when what the file holds takes effect (the settings table's `When`: boot, sysctl,
runtime, unit start, kubelet start).  A change is the set of host files whose bytes
differ between two builds (added, changed or removed), and its disruption follows
from their activations alone, by one rule that the generated apply scripts follow too:

- a file that takes effect only at boot (kernel arguments, modprobe options, the
  manager's or container runtime's CPUAffinity, a TuneD profile whose kernel arguments
  change) → **reboot**, and then nothing live, no restart: the reboot brings every new
  state;
- otherwise a workload's own drop-in (Action.RESTART), added or changed → **restart**
  exactly that unit (a drop-in the new build no longer makes restarts nothing: the unit
  keeps its placement until its next start, **later**);
- sysctl.d, the runtime oneshot (hostc-tuning), units (daemon-reload), limits for new
  sessions → **live**, applied in place;
- the kubelet's CPU/memory managers (what its checkpoints depend on) changed →
  **kubelet_reset**: the checkpoints are cleared at the next boot, before the kubelet
  starts, so the change waits for a reboot (drain first);
- what waits for an event of its own (a unit's next start, the next boot for a sysctl
  dropped from the build, the manager's defaults on a kubelet node, which is never
  re-executed live) → **later**.

A state is read from a build (plan.json data and its artifacts) or from the record a
`build --out` left (`hostc.delivery.owned`), so `hostc diff` and `hostc changed` agree.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from hostc.artifact import Action, Activation, Artifact, ArtifactKind
from hostc.delivery.owned import facts

#: the delivery's own machinery (hostc-apply runs on every delivery; the manifest it
#: reads changes with every file): no disruption of its own
_DELIVERY = ("/usr/local/sbin/hostc-apply", "/usr/local/sbin/hostc-revert", "/var/lib/hostc/")
_KUBELET_RESET = "/usr/local/sbin/hostc-kubelet-reset"
_NO_REEXEC = "the service manager's defaults at the next boot (no daemon-reexec on a kubelet node)"


@attrs.frozen
class HostFile:
    path: str  # where it is installed on the host
    sha256: str
    activation: tuple[Activation, ...]


@attrs.frozen
class HostState:
    """What one build puts on a host: its files, and the facts a change is judged by."""

    files: Mapping[str, HostFile]  # by host path
    #: the kubelet's unit, and its managers' configuration (None: no checkpoint of
    #: hostc's policy: no kubelet, or policy none without a Static memory manager)
    kubelet_unit: str | None = None
    managers: str | None = None
    sysctls: frozenset[str] = frozenset()
    cmdline: str | None = None  # the kernel arguments hostc adds (None: not known)


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

    def to_json(self) -> dict[str, Any]:
        return {
            "reboot": self.reboot,
            "restart": list(self.restart),
            "kubelet_reset": self.kubelet_reset,
            "live": list(self.live),
            "later": list(self.later),
            "reboot_for": list(self.reboot_for),
            "files": self.files,
        }

    def line(self) -> str:
        """One line: `applies live (sysctl); restarts serve-b.service; no reboot`."""
        if not self.files and not self.kubelet_reset:
            return "no change on the host"
        if self.reboot:
            parts = [
                f"reboots for {', '.join(self.reboot_for)}",
                "nothing applied live or restarted before it: the reboot applies it all",
            ]
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


def host_files(artifacts: Iterable[Artifact]) -> dict[str, HostFile]:
    """The host files among `artifacts`, once per path (a wrapper repeats the file
    targets' files)."""
    out: dict[str, HostFile] = {}
    for a in artifacts:
        if a.kind is ArtifactKind.FILE and a.path not in out:
            out[a.path] = HostFile(a.path, digest(a.data, a.mode), a.activation)
    return out


def recorded_files(doc: Mapping[str, Any]) -> dict[str, HostFile]:
    """The host files of a build record (`hostc.delivery.owned`'s `.hostc-build.json`)."""
    out: dict[str, HostFile] = {}
    for row in doc["files"]:
        if row["kind"] != ArtifactKind.FILE.value or row["host_path"] in out:
            continue
        acts = []
        for word in row["activation"]:
            action, _, unit = str(word).partition(" ")
            with contextlib.suppress(ValueError):
                acts.append(Activation(Action(action), unit or None))
        digest = f"{row['sha256']}:{row.get('mode', '0644')}"
        out[row["host_path"]] = HostFile(row["host_path"], digest, tuple(acts))
    return out


def digest(data: bytes, mode: int) -> str:
    """A file's bytes and mode, as one comparable word."""
    return f"{hashlib.sha256(data).hexdigest()}:{mode:04o}"


def state(plan_data: Mapping[str, Any], artifacts: Iterable[Artifact]) -> HostState:
    return from_facts(host_files(artifacts), facts(plan_data))


def from_facts(files: Mapping[str, HostFile], found: Mapping[str, Any]) -> HostState:
    unit, stamp = found.get("kubelet_unit"), found.get("kubelet_managers")
    line = found.get("cmdline")
    return HostState(
        dict(files),
        unit if isinstance(unit, str) else None,
        stamp if isinstance(stamp, str) else None,
        frozenset(str(s) for s in found.get("sysctls") or ()),
        line if isinstance(line, str) else None,
    )


def _label(path: str) -> str:
    """What a file that takes effect at boot carries, in a word."""
    if path.startswith("/etc/default/grub") or path.endswith("/hostc-kargs"):
        return "kernel arguments"
    if path.startswith("/etc/modprobe.d/"):
        return "module options"
    if path.startswith("/etc/systemd/system.conf.d/"):
        return "the service manager's CPU affinity"
    if path.startswith("/etc/tuned/"):
        return "the TuneD profile"
    if path.startswith("/etc/systemd/system/") and ".service.d/" in path:
        return f"{path.split('/')[4].removesuffix('.d')}'s CPU affinity"
    return path


def _effects(
    f: HostFile, added: bool | None, old: HostState, new: HostState, out: dict[str, set[str]]
) -> None:
    """`added`: True for a new file, None for one the new build no longer makes."""
    acts = f.activation
    kinds = {a.action for a in acts}
    # a TuneD profile carries the kernel arguments with its live settings: it needs a
    # reboot only when they change (`tuned-adm profile` applies the rest live)
    if Action.TUNED_PROFILE in kinds and old.cmdline is not None and old.cmdline == new.cmdline:
        kinds.discard(Action.REBOOT)
        acts = tuple(a for a in acts if a.action is not Action.REBOOT)
    if Action.REBOOT in kinds:
        out["reboot"].add(_label(f.path))
    for act in acts:
        a, unit = act.action, act.unit
        if a is Action.RESTART and unit and added is None:
            # hostc-apply removes the drop-in after the restarts and restarts nothing for
            # it: the unit keeps its running placement until it next starts
            out["later"].add(f"{unit} at its next start (hostc's drop-in removed)")
        elif a is Action.RESTART and unit:
            out["restart"].add(unit)
        elif a is Action.SYSCTL:
            out["live"].add("sysctl")
        elif (a is Action.START or (a is Action.ENABLE_NOW and added)) and unit:
            out["live"].add(unit)
        elif a is Action.ENABLE and unit and added:
            out["live"].add(f"enable {unit}")
        elif a is Action.DAEMON_RELOAD:
            out["live"].add("daemon-reload")
        elif a is Action.DAEMON_REEXEC and Action.REBOOT not in kinds:
            if new.kubelet_unit is not None:
                out["later"].add(_NO_REEXEC)
            else:
                out["live"].add("daemon-reexec")
        elif a is Action.NEW_SESSION:
            out["live"].add("limits (new sessions)")
        elif a is Action.NEXT_START and unit:
            out["later"].add(f"{unit} at its next start")
        elif a is Action.TUNED_PROFILE and unit:
            out["live"].add(f"TuneD profile {unit}")
        elif a is Action.RUN and unit == _KUBELET_RESET:
            if old.managers == new.managers and new.kubelet_unit is not None:
                out["later"].add(f"{new.kubelet_unit} at its next start (kubelet configuration)")
        elif a is Action.RUN and Action.REBOOT not in kinds:
            script = unit or f.path
            if not script.startswith(_DELIVERY) and script != _KUBELET_RESET:
                out["live"].add(f"runs {script}")


def compute(old: HostState, new: HostState) -> Disruption:
    """The disruption of going from `old` to `new` on a running host."""
    found: dict[str, set[str]] = {k: set() for k in ("reboot", "restart", "live", "later")}
    changed = 0
    for path in sorted(set(old.files) | set(new.files)):
        if path.startswith(_DELIVERY):
            continue
        was, now = old.files.get(path), new.files.get(path)
        if was is not None and now is not None and was.sha256 == now.sha256:
            continue
        changed += 1
        f = now if now is not None else was
        assert f is not None
        _effects(f, True if was is None else None if now is None else False, old, new, found)
    reset = old.managers != new.managers
    if reset:
        found["reboot"].add("the kubelet's managers")
    for key in sorted(old.sysctls - new.sysctls):
        found["later"].add(f"{key} keeps its running value until the next boot")
    if found["reboot"]:  # the reboot brings every new state: nothing before it
        return Disruption(tuple(sorted(found["reboot"])), (), reset, (), (), changed)
    return Disruption(
        reboot_for=(),
        restart=tuple(sorted(found["restart"])),
        kubelet_reset=reset,
        live=tuple(sorted(found["live"])),
        later=tuple(sorted(found["later"])),
        files=changed,
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
