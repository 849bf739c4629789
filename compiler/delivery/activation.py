"""Apply steps: how a set of artifacts takes effect on a host of a given OS family.

Artifacts say *what* must happen (`Action`); this module says how each OS
family does it, in one order that is safe to run twice.  Wrapper targets
(cloud-init runcmd, the Packer example, the JSON manifest) and provisioning
systems take their steps from here, never from template comments.
Commands are argv lists: no shell ever sees a value from the input.

Each step says whether it is *live*: it only makes the running system take a file
now (reload sysctls, re-execute the manager, restart a service).  On a first boot
that reboots anyway (cloud-init's power_state) the live steps are left out: the
files are written, the boot configuration rebuilt, units enabled, and the next
boot applies the rest.  A step that needs a package a base image may lack names it,
so the wrappers can install it (cloud-init `packages`) or refuse (apply.sh).

A delivery that carries hostc-apply (`Action.COMMIT`: every delivery does) runs each
step that only reloads or restarts something through it: `hostc-apply --changed
FILE… -- COMMAND` runs COMMAND only when one of the files that call for it differs from
the build applied before (the manifests), so a re-run that changed one sysctl runs
`sysctl --system` and nothing else; a live step (`--restart`: a reload, a restart, a
sysctl load) is also skipped while the change's disruption owes a reboot (the reboot
brings the new state, so a restart before it is a second outage), so that the host does
exactly what `hostc diff` said: nothing live before a reboot.
hostc-apply itself runs last and records the build as applied: a run cut off before it
leaves the old manifest, and the next run does the same steps again.  `systemctl
enable` is given `--no-reload`: each plain enable reloads the manager
(src/systemctl/systemctl-enable.c), and a reload can take running containers' GPUs away
(NVIDIA/nvidia-docker #1730); the guarded `daemon-reload` before it loaded the units.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from hostc.artifact import Action, Artifact, ArtifactKind
from hostc.plan.model import OsFamily
from hostc.record import Record


@attrs.frozen(repr=False, eq=False)
class Step(Record):
    argv: tuple[str, ...]
    why: str
    #: only makes the running system take the change now; a reboot does it too
    live: bool = False
    #: the package that provides argv[0] where a base image may not have it
    package: str | None = None
    #: run through hostc-apply: `hostc-apply --changed FILE… --` (see the module)
    guard: tuple[str, ...] = ()

    @property
    def command(self) -> tuple[str, ...]:
        """What a delivery runs: argv, behind its guard."""
        return (*self.guard, *self.argv)


#: Steps that only reload or restart something: run when one of their files changed.
GUARDED = frozenset(
    {
        Action.DAEMON_RELOAD,
        Action.SYSCTL,
        Action.START,
        Action.RESTART,
        Action.INITRAMFS,
        Action.TUNED_PROFILE,
        Action.BOOTLOADER,
    }
)


#: The order steps run in: state removed before services start, units reloaded
#: before they are enabled, the boot configuration last (a reboot follows it).
ORDER = (
    Action.PYTHON_MODULE,
    Action.REMOVE,
    Action.DAEMON_RELOAD,
    Action.SYSCTL,
    Action.RUN,
    Action.ENABLE,
    Action.ENABLE_NOW,
    Action.START,
    Action.RESTART,
    Action.INITRAMFS,
    Action.TUNED_PROFILE,
    Action.BOOTLOADER,
    Action.COMMIT,
)


#: The package providing a unit or command that hostc's steps need (TuneD is not in
#: Ubuntu's or Debian's cloud images).
_PACKAGE = {"tuned.service": "tuned", "tuned-adm": "tuned"}


def _service_step(action: Action, unit: str) -> Step | None:
    pkg = _PACKAGE.get(unit)
    if action is Action.ENABLE:
        why = f"start {unit} at every boot"
        return Step(("systemctl", "enable", "--no-reload", unit), why)
    if action is Action.ENABLE_NOW:
        why = f"{unit} runs now and at every boot"
        return Step(("systemctl", "enable", "--now", "--no-reload", unit), why, package=pkg)
    if action is Action.START:
        return Step(("systemctl", "restart", unit), f"apply {unit} now", live=True)
    if action is Action.RESTART:
        why = f"a running {unit} rereads its config"
        return Step(("systemctl", "try-restart", unit), why, live=True)
    return None


def _step(action: Action, unit: str | None, art: Artifact, family: OsFamily) -> Step | None:
    if action is Action.SYSCTL:
        why = "load sysctl.d now (systemd-sysctl ran before)"
        return Step(("sysctl", "--system"), why, live=True)
    if action is Action.DAEMON_RELOAD:
        return Step(("systemctl", "daemon-reload"), "systemd rereads units and drop-ins")
    if action in (Action.ENABLE, Action.ENABLE_NOW, Action.START, Action.RESTART) and unit:
        return _service_step(action, unit)
    if action is Action.RUN:
        script = unit or art.path
        return Step((script,), f"{script} applies what it carries")
    if action is Action.REMOVE and unit:
        return Step(("rm", "-f", "--", unit), f"stale state in {unit} would be restored")
    if action is Action.INITRAMFS:
        argv = family.initramfs_argv
        return None if argv is None else Step(argv, "modules loaded from the initramfs")
    if action is Action.PYTHON_MODULE and unit:
        module, pkg = unit.split()
        why = f"TuneD imports the {module} Python module ({pkg})"
        return Step(("python3", "-c", f"import {module}"), why, package=pkg)
    if action is Action.TUNED_PROFILE and unit:
        why = f"TuneD applies profile {unit}"
        return Step(("tuned-adm", "profile", unit), why, package=_PACKAGE["tuned-adm"])
    if action is Action.BOOTLOADER:
        argv = family.bootloader_argv
        return None if argv is None else Step(argv, "regenerate the boot configuration")
    if action is Action.COMMIT and unit:
        why = f"{unit}: removes what only the previous build installed, records this build"
        return Step((unit,), why)
    return None


def _guarded(step: Step, action: Action, commit: str | None, inputs: list[str]) -> Step:
    """`step` run by hostc-apply only when one of `inputs` changed (see the module)."""
    if commit is None or action not in GUARDED:
        return step
    # a live step (it only makes the running host take the change now) waits while the
    # disruption owes a reboot: the reboot applies it, and nothing runs live before it
    mode = "--restart" if step.live else "--changed"
    return attrs.evolve(step, guard=(commit, mode, *inputs, "--"))


def steps(artifacts: Iterable[Artifact], family: OsFamily, *, live: bool = True) -> list[Step]:
    """Every step the host files need, once each, in ORDER; without the live ones when
    `live` is False (a reboot follows and applies them).  With hostc-apply among the
    artifacts, the reloads and restarts run through it (see the module)."""
    found: dict[Action, dict[Step, list[str]]] = {a: {} for a in ORDER}
    commit: str | None = None
    for art in artifacts:
        if art.kind is not ArtifactKind.FILE:
            continue
        for act in art.activation:
            if act.action not in found:
                continue
            if act.action is Action.COMMIT:
                commit = act.unit
            step = _step(act.action, act.unit, art, family)
            if step is None or (step.live and not live):
                continue
            paths = found[act.action].setdefault(step, [])
            if art.path not in paths:
                paths.append(art.path)
    return [_guarded(s, a, commit, paths) for a in ORDER for s, paths in found[a].items()]


def packages(run: Iterable[Step]) -> list[str]:
    """The packages the steps need, sorted, once each."""
    return sorted({s.package for s in run if s.package is not None})


def needs_reboot(artifacts: Iterable[Artifact]) -> bool:
    return any(
        act.action is Action.REBOOT
        for a in artifacts
        if a.kind is ArtifactKind.FILE
        for act in a.activation
    )
