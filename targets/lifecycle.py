"""Lifecycle: what a delivery installed, how the next one replaces it, and the way back.

Every delivery (rootfs apply.sh, cloud-init, Ignition) carries three more files:

- `/var/lib/hostc/manifest.new`: this build's manifest, plain lines a POSIX sh reads
  (`file SHA256 PATH`, `stopped UNIT`, `kubelet UNIT`, `checkpoint PATH`, from Ignition,
  which installs it as the current manifest, `karg ARG`, and the build's disruption
  entries, `entry KEY DIGEST` and `effect KEY CASE KIND TEXT`, written by
  `hostc.delivery.effects`, the one rule of what a change costs);
- `/usr/local/sbin/hostc-apply`: compares it with the manifest of the build installed
  before (`/var/lib/hostc/manifest`), removes what only the old build installed
  (stale drop-ins, presets, units; a stale GRUB drop-in regenerates grub.cfg),
  restores the distribution's state (`systemctl preset`) of units the old build
  stopped and the new one does not, prints the change's disruption (the union of the
  effects of the entries whose digest differs between the two manifests: the same
  function `hostc diff` applies, done mechanically; `hostc-apply --disruption` prints it
  alone), and makes the new manifest the current one.  It is the deliveries' last
  step, and it runs their reloads and restarts (`hostc-apply --changed FILE… --
  COMMAND`, `--restart`), each only when one of its files differs between the two
  manifests or was rewritten by the delivery (`HOSTC_CHANGED`), a restart not at all
  while the disruption owes a reboot (`hostc.delivery.activation`);
- `/usr/local/sbin/hostc-revert`: undoes everything the current manifest lists: the
  files, the kernel arguments through the same carrier (the GRUB drop-in removed and
  update-grub, grubby --remove-args of the grubby state, or `rpm-ostree kargs
  --delete-if-present` of the `karg` lines Ignition's kernelArguments set: Fedora CoreOS's
  "Modifying Kernel Arguments" page names `rpm-ostree kargs` for running systems, its
  `--delete-if-present` removes an argument only where present, RHEL image-mode docs
  "Editing kernel arguments in bootc systems"), the units it stopped,
  and the kubelet checkpoints when hostc's policy made them (the kubelet refuses to
  start on a checkpoint of another policy).  A reboot then boots the host as it was.

The apply logic exists once, as this sh script; the wrappers only run it (its
Action.RUN step), so apply.sh, cloud-init's runcmd and the manifest agree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from hostc.artifact import Action, Activation, Artifact, ArtifactKind
from hostc.delivery.effects import artifact_entries, effect_lines, plan_facts, stopped_units
from hostc.knowledge.kubelet import CPU_STATE, MEMORY_STATE
from hostc.plan.kubelet import checkpointed
from hostc.plan.model import Plan
from hostc.targets import grubby
from hostc.targets._emitter import Emitter
from hostc.targets._escape import UnsafeValue, oneline
from hostc.targets._render import header, render

MANIFEST = "/var/lib/hostc/manifest"
NEW_MANIFEST = f"{MANIFEST}.new"
APPLY = "/usr/local/sbin/hostc-apply"
REVERT = "/usr/local/sbin/hostc-revert"
#: files installed for the next boot rather than now (hostc-kubelet-reset), by path
STAGED = "/var/lib/hostc/staged"
#: the copies of those files the running system was last made to match
ACTIVE = "/var/lib/hostc/active"
TARGET = "lifecycle"


def _line(*words: str, text: str | None = None) -> str:
    """One manifest line; a word sh would split (or a newline) is refused, never written.
    `text`: the line's free rest (an effect's words), one line of printable text."""
    for w in words:
        if not w or any(c.isspace() for c in w) or any(ord(c) < 0x20 for c in w):
            raise UnsafeValue(f"{w[:80]!r} cannot be a manifest word")
    if text is not None:
        if not text.strip() or any(ord(c) < 0x20 or c == "\x7f" for c in text):
            raise UnsafeValue(f"{text[:80]!r} cannot be a manifest line's text")
        return " ".join((*words, text)) + "\n"
    return " ".join(words) + "\n"


def manifest_text(plan: Plan, files: Sequence[Artifact], kargs: Sequence[str] = ()) -> str:
    """The manifest of a delivery of `files`.  `kargs`: kernel arguments the delivery set
    with no file of hostc's to carry them (Ignition's kernelArguments), listed so that
    hostc-revert can take them out (`rpm-ostree kargs --delete-if-present`)."""
    by_path = sorted(files, key=lambda a: a.path)
    lines = [_line("file", hashlib.sha256(a.data).hexdigest(), a.path) for a in by_path]
    lines += [_line("karg", a) for a in kargs]
    lines += [_line("stopped", u) for u in stopped_units(plan)]
    # what each entry costs a running host when added, changed or removed: hostc-apply
    # judges a change by these lines alone (hostc.delivery.effects, the one rule)
    for row in effect_lines(artifact_entries(by_path, plan_facts(plan))):
        lines.append(_line(*row[:4], text=row[4]) if row[0] == "effect" else _line(*row))
    k = plan.kubelet
    if k is not None and checkpointed(k):
        lines.append(_line("kubelet", k.unit))
        lines += [_line("checkpoint", p) for p in (CPU_STATE, MEMORY_STATE)]
    head = f"# hostc manifest for {oneline(plan.host.name)}: read by {APPLY} and {REVERT}\n"
    return head + "".join(lines)


def artifacts(plan: Plan, files: Sequence[Artifact]) -> list[Artifact]:
    """The lifecycle files for a delivery carrying `files` (the file targets' artifacts)."""
    carried = [a for a in files if a.kind is ArtifactKind.FILE]
    context = {
        "host": header(plan),
        "manifest": MANIFEST,
        "kargs_script": grubby.PATH,
        "kargs_state": grubby.STATE,
        "staged": STAGED,
        "active": ACTIVE,
    }
    # All three take effect by the one hostc-apply step, the deliveries' last; hostc-revert
    # is only ever run by an operator, never by a delivery.
    applied = Activation(Action.COMMIT, APPLY)
    out = Emitter(TARGET)
    out.file(APPLY, render("hostc-apply.sh.j2", **context), applied, mode=0o755)
    out.file(REVERT, render("hostc-revert.sh.j2", **context), applied, mode=0o755)
    out.file(NEW_MANIFEST, manifest_text(plan, [*carried, *out.artifacts]), applied)
    return out.artifacts
