"""rootfs: every host file at its absolute path, as a tree for image builders, plus `apply.sh`.

`--out DIR` writes the tree to `DIR/rootfs/` (Packer's `file` provisioner,
mkosi's ExtraTrees, a Dockerfile COPY).  `apply.sh`, next to the tree, installs
each file with its mode as root:root (an uploaded tree belongs to the upload
user, so `cp -a` would keep the wrong owner) and runs the apply steps of
`hostc.delivery.activation` for the host's OS family, so no pipeline hard-codes them.
With DESTDIR set (an image built offline: mkosi, debootstrap, Packer's chroot builder,
the unpacked `rootfs.tar`) it installs under DESTDIR and enables there the units the
steps enable (`enabled_units`), with `systemctl --root=DESTDIR enable`: the links the
units' [Install] sections name, exactly what `systemctl enable` makes on a running host,
no manager asked; the running host's other steps are not run.
"""

from __future__ import annotations

from collections.abc import Sequence

from hostc.artifact import Action, Artifact, ArtifactKind
from hostc.delivery.activation import Step, needs_reboot, steps
from hostc.plan.model import Plan
from hostc.targets import lifecycle
from hostc.targets._emitter import Emitter
from hostc.targets._render import header, render

APPLY = "apply.sh"


def required(run: Sequence[Step]) -> list[tuple[tuple[str, ...], str, str]]:
    """(check, what, how to install it) for each step whose command (or Python module) a
    base image may lack: apply.sh refuses before it installs anything rather than fail
    halfway through."""
    out: list[tuple[tuple[str, ...], str, str]] = []
    for s in run:
        if s.package is None or s.argv[0] == "systemctl":
            continue
        if s.argv[:2] == ("python3", "-c"):  # Action.PYTHON_MODULE: `import MODULE`
            # a Debian package (osfacts.TUNED_PERF_PACKAGE): no dnf name to give
            how = f"the {s.package} package first (apt-get install {s.package})"
            row = (s.argv, f"the {s.argv[2].split()[-1]} Python module", how)
        else:
            pkg = s.package
            how = f"the {pkg} package first (apt-get install {pkg}, dnf install {pkg})"
            row = (("command", "-v", s.argv[0]), s.argv[0], how)
        if row not in out:
            out.append(row)
    return out


def enabled_units(files: Sequence[Artifact]) -> list[str]:
    """The units the files ask to be enabled (Action.ENABLE, ENABLE_NOW), sorted: what a
    running host's `systemctl enable` steps enable, an image's `systemctl --root` and
    Ignition's `enabled: true`."""
    return sorted(
        {
            x.unit
            for a in files
            if a.kind is ArtifactKind.FILE
            for x in a.activation
            if x.action in (Action.ENABLE, Action.ENABLE_NOW) and x.unit
        }
    )


def image_owes(run: Sequence[Step]) -> list[Step]:
    """The steps an image built under DESTDIR still owes, to be run inside it (its chroot):
    not the live ones (no running host), not systemctl's (the units are enabled under
    DESTDIR, and no manager runs to reload), not hostc-apply's record (Action.COMMIT:
    the unguarded last step).  What is left makes the boot configuration take the files:
    update-grub, grubby's script, the initramfs, a TuneD profile."""
    skip = ("systemctl", "rm", lifecycle.APPLY)
    return [s for s in run if not s.live and s.argv[0] not in skip]


def apply_script(plan: Plan, files: Sequence[Artifact]) -> str:
    carried = [a for a in files if a.kind is ArtifactKind.FILE]
    run = steps(carried, plan.host.os_family)
    return render(
        "apply.sh.j2",
        host=header(plan),
        os_family=plan.host.os_family,
        files=carried,
        steps=run,
        required=required(run),
        reboot=needs_reboot(carried),
        enabled=enabled_units(carried),
        owed=image_owes(run),
    )


def emit(plan: Plan, files: Sequence[Artifact], out: Emitter) -> None:
    out.carry(files)
    out.deliverable(APPLY, apply_script(plan, files), mode=0o755)
