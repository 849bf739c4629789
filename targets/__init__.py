"""The target registry: an explicit table, no discovery by file name, modules loaded on use.

A file target's module has `emit(plan, out)`; a wrapper target's module has
`emit(plan, files, out)` and composes the file targets' artifacts (it never
re-derives a file).  `out` is an `Emitter` the registry made for that target, so a
module never spells its own target name.  A module may also define
`applies(plan) -> str | None`: a reason it does not apply to this host (a GRUB
drop-in on a RHEL-family host), so `--target all` skips it and naming it
explicitly is an error.  Targets never import the spec or topology modules
(tests/test_code_quality.py enforces it).  `build` is the one dispatch: which
targets run, which artifacts a wrapper gets, and the one-artifact-per-path rule.
"""

from __future__ import annotations

import enum
import functools
import importlib
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

import attrs

from hostc.artifact import Artifact, ArtifactKind
from hostc.record import Record
from hostc.targets._emitter import Emitter as Emitter

if TYPE_CHECKING:
    from hostc.plan.model import Plan
    from hostc.targets import _anonymous


#: target modules already imported (import_module's own lookup costs more than a dict's)
_LOADED: dict[str, ModuleType] = {}


class TargetRole(enum.StrEnum):
    FILE = "file"  # pure function of the Plan; part of `--target all`
    WRAPPER = "wrapper"  # composes every applicable file target's artifacts


@attrs.frozen(repr=False, eq=False)
class Target(Record):
    name: str
    module: str  # under hostc.targets
    summary: str
    role: TargetRole = TargetRole.FILE
    #: a file target that names its host only in each artifact's header line: emitted
    #: once per class of hosts and re-headed per host (`hostc.targets._anonymous`; the
    #: proof: tests/unit/targets/test_shared_targets.py)
    shared: bool = False

    def load(self) -> ModuleType:
        mod = _LOADED.get(self.module)
        if mod is None:
            mod = _LOADED[self.module] = importlib.import_module(f"hostc.targets.{self.module}")
        return mod

    def applies(self, plan: Plan) -> str | None:
        fn = getattr(self.load(), "applies", None)
        return None if fn is None else cast("Callable[[Plan], str | None]", fn)(plan)

    def emit(self, plan: Plan, files: Sequence[Artifact] = ()) -> list[Artifact]:
        mod, out = self.load(), Emitter(self.name)
        if self.role is TargetRole.WRAPPER:
            cast("Callable[[Plan, Sequence[Artifact], Emitter], None]", mod.emit)(plan, files, out)
        else:
            cast("Callable[[Plan, Emitter], None]", mod.emit)(plan, out)
        return out.artifacts


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "cmdline",
            "cmdline",
            "the kernel arguments hostc adds, as one line (for grubby --args, PXE, review)",
            shared=True,
        ),
        Target(
            "grub",
            "grub",
            "/etc/default/grub.d drop-in appending to GRUB_CMDLINE_LINUX_DEFAULT (Debian family)",
            shared=True,
        ),
        Target(
            "grubby",
            "grubby",
            "/usr/local/sbin/hostc-kargs: grubby puts the arguments into BLS entries (RHEL family)",
            shared=True,
        ),
        Target("sysctl", "sysctl", "/etc/sysctl.d/90-hostc.conf", shared=True),
        Target(
            "limits",
            "limits",
            "limits.d for PAM sessions and system.conf.d for systemd services",
            shared=True,
        ),
        Target(
            "kubelet",
            "kubelet",
            "kubelet CPU/topology/memory managers: a KubeletConfiguration drop-in (kubeadm) "
            "or a config.yaml.d kubelet-arg drop-in (RKE2, k3s)",
            shared=True,
        ),
        Target(
            "systemd",
            "systemd",
            "workload drop-ins (CPUs, NUMA memory, NCCL), hostc-tuning.service, irqbalance "
            "drop-in, manager CPUAffinity, service presets",
            shared=True,
        ),
        Target(
            "tuned",
            "tuned",
            "/etc/tuned[/profiles]/hostc/tuned.conf (where the host's TuneD reads it): the "
            'Plan as a self-contained TuneD profile (only with [runtime] owner = "tuned"), '
            "and hostc-tuned-ready.service, which holds the runtimes, kubelets and workloads "
            "back until TuneD applied it",
        ),
        Target(
            "modprobe",
            "modprobe",
            "/etc/modprobe.d/90-hostc.conf: blacklists and options",
            shared=True,
        ),
        Target(
            "cloud-init",
            "cloud_init",
            "user-data: #cloud-config writing every host file, its apply steps, one reboot",
            TargetRole.WRAPPER,
        ),
        Target(
            "ignition",
            "ignition",
            "config.ign: Ignition 3.3.0 files, units and kernelArguments (CoreOS)",
            TargetRole.WRAPPER,
        ),
        Target(
            "rootfs",
            "rootfs",
            "every host file at its path, as a tree for image builders, plus apply.sh",
            TargetRole.WRAPPER,
        ),
        Target(
            "rootfs-tar",
            "rootfs_tar",
            "rootfs.tar: the same tree as one byte-reproducible tarball",
            TargetRole.WRAPPER,
        ),
        Target(
            "ansible",
            "ansible",
            "playbook.yml + vars-<host>.yml: push the host files with their modes, apply "
            "on change, reboot only for new kernel arguments, record a manifest",
            TargetRole.WRAPPER,
        ),
    )
}


class ArtifactCollision(AssertionError):
    """Two artifacts at one path: a bug in hostc (the checks should have refused the
    spec), so an internal error (exit 3), never a file silently overwritten."""


def one_artifact_per_path(
    arts: Iterable[Artifact], key: Callable[[Artifact], str] = lambda a: f"{a.target}/{a.relpath}"
) -> None:
    seen: set[str] = set()
    for a in arts:
        k = key(a)
        if k in seen:
            raise ArtifactCollision(f"two artifacts share the path {k}")
        seen.add(k)


def not_applying(plan: Plan, wanted: Sequence[str]) -> list[tuple[str, str]]:
    """(name, why) for each explicitly named target that does not apply to this host."""
    return [
        (n, why) for n in wanted if n != "all" and (why := TARGETS[n].applies(plan)) is not None
    ]


def host_files(plan: Plan) -> list[Artifact]:
    """Every applicable file target's host files, plus the lifecycle files every
    delivery carries (hostc-apply, hostc-revert and the manifest): a wrapper's input."""
    from hostc.targets import lifecycle

    every = [n for n, t in TARGETS.items() if t.role is TargetRole.FILE]
    files = [
        a
        for arts in _file_artifacts(plan, every, named=()).values()
        for a in arts
        if a.kind is ArtifactKind.FILE
    ]
    files += lifecycle.artifacts(plan, files)
    one_artifact_per_path(files, key=lambda a: a.path)
    return files


def _file_artifacts(
    plan: Plan, names: Sequence[str], named: Sequence[str]
) -> dict[str, list[Artifact]]:
    """The artifacts of the file targets `names` (registry order) that apply, and of those
    `named` explicitly (`not_applying` refused the others already): the shared ones from
    one memo lookup (`_shared`), the others emitted here."""
    shared = _shared(plan, tuple(n for n in names if TARGETS[n].shared))
    out: dict[str, list[Artifact]] = {}
    for n in names:
        t = TARGETS[n]
        why, arts = shared[n] if n in shared else (None if n in named else t.applies(plan), None)
        if why is None or n in named:
            out[n] = t.emit(plan) if arts is None or why is not None else arts
    return out


def _shared(plan: Plan, names: tuple[str, ...]) -> dict[str, tuple[str | None, list[Artifact]]]:
    """Per shared file target in `names` (`Target.shared`): why it does not apply to
    `plan`'s host (None: it does) and its artifacts for this host, from one memo lookup
    for all of them (`_emitted`), each re-headed with the host's own header line."""
    from hostc.targets import _anonymous as anon

    if not names:
        return {}
    own = anon.header_lines(plan.host.name, plan.host.role)
    out: dict[str, tuple[str | None, list[Artifact]]] = {}
    for name, (why, arts, splices) in zip(
        names, _emitted(anon.anonymous(plan), names), strict=True
    ):
        if why is not None:
            out[name] = (why, [])
        elif splices is None:  # a header line out of place: this host's emitted directly
            out[name] = (why, TARGETS[name].emit(plan))
        else:
            out[name] = (
                why,
                [anon.headed(a, sp, own) for a, sp in zip(arts, splices, strict=True)],
            )
    return out


@functools.lru_cache(maxsize=64)
def _emitted(anonymous: Plan, names: tuple[str, ...]) -> _anonymous.Emitted:
    """The targets' applicability, artifacts and header places (`_anonymous.splices`)
    for the anonymous Plan, remembered by its value (never by identity): a fleet's hosts
    of one class emit them, and find where their header goes, once."""
    from hostc.targets import _anonymous as anon

    lines = anon.header_lines("", anonymous.host.role)
    out = []
    for name in names:
        why = TARGETS[name].applies(anonymous)
        arts = tuple(TARGETS[name].emit(anonymous)) if why is None else ()
        out.append((why, arts, anon.splices(arts, lines)))
    return tuple(out)


def build(plan: Plan, wanted: Sequence[str]) -> list[Artifact]:
    """Artifacts of the named targets (known and applying), in registry order; `all` is
    every file target that applies.  Wrappers share one computation of the host files."""
    every = "all" in wanted
    emitted = _file_artifacts(
        plan,
        [n for n, t in TARGETS.items() if t.role is TargetRole.FILE and (every or n in wanted)],
        named=wanted,
    )
    files: list[Artifact] | None = None
    out: list[Artifact] = []
    for name, t in TARGETS.items():
        if name in wanted and t.role is TargetRole.WRAPPER:
            if files is None:
                files = host_files(plan)
            out += t.emit(plan, files)
        else:
            out += emitted.get(name, ())
    one_artifact_per_path(out)
    return out
