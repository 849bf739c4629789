"""Ansible: a playbook and this host's variables, to push hostc's files to running hosts.

`playbook.yml` is the same for every host; `vars-<host>.yml` beside it (read by the
first play's first task, `include_vars`, for the inventory host of that name) carries
one host's files (path, mode, sha256, content in base64: no Jinja2 delimiter can appear
in it, so Ansible never templates a file's text), its apply steps as argv lists
(`hostc.delivery.activation`, never a shell), and the manifest of what was installed.
The files that differ are installed by one command per run (`INSTALL`, a fixed script
reading `MODE BASE64 PATH` lines on its standard input, whose body is the one writer,
`hostc_put`: no copy or file module writes under `hostc_root`), not one module per file: a
first push to a host runs a handful of modules instead of ~60 (idempotent: a second
run changes nothing).  `hostc-apply` consumes the lifecycle's `manifest.new` (it
becomes the current manifest), so that file is not pushed as is: its content is kept
at `manifest.ansible`, which nothing consumes, and the first play places it as
`manifest.new` only when something is owed (placing it on every run would re-apply
forever: found by running the playbook twice in a booted VM).

The play decides nothing about disruption (issue 50): the build's `hostc-apply
--disruption` says what the change costs each host, the lines `hostc diff` prints, and
the host is drained, rebooted, or applied live in batches by that alone
(three plays: the first, which asks, in `targets/_ansible_owes.py`, the two that
change hosts, their gates and the pending mark that resumes a run cut off in
`targets/_ansible_roll.py`).  A reboot is `ansible.builtin.reboot` over a remote
connection; over `-c local` (the host runs its own playbook, which the reboot module
refuses) `shutdown -r +1`, so the play ends before the host goes down;
`hostc_reboot: false` only reports that one is needed.  `hostc_root` (default `/`)
prefixes every path: a run against a directory installs the files there and skips the
steps, the reboot and the gates, and refuses a root whose folders on the way are
symbolic links.  These settings (and `hostc_owner`, `hostc_group`) may be set per host
or group in the inventory: the play's own variables only derive from them; docs/targets.md
lists every variable.

Before anything else, one command (`CHECK`, a fixed script whose data are its
arguments) names every file the host does not hold as built: missing, a symbolic link,
other bytes, another mode or owner.  Only those are copied, so a run over a host that
is already current runs that one module and skips every copy (a fleet's routine push is
one module per host, not one per file).
Built as data and serialized by PyYAML; every host's files are checked to parse back.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence

from hostc.artifact import Artifact, ArtifactKind
from hostc.delivery.activation import steps
from hostc.plan.model import Plan
from hostc.targets import _yaml
from hostc.targets._ansible_owes import MANIFEST, PENDING, PUSHED_MANIFEST
from hostc.targets._ansible_roll import plays
from hostc.targets._ansible_sh import APPLY as APPLY_SH
from hostc.targets._ansible_sh import CHECK, DISRUPTION, INSTALL
from hostc.targets._emitter import Emitter
from hostc.targets.lifecycle import NEW_MANIFEST

PLAYBOOK = "playbook.yml"
__all__ = [
    "APPLY_SH",
    "CHECK",
    "DISRUPTION",
    "INSTALL",
    "MANIFEST",
    "PENDING",
    "PUSHED_MANIFEST",
    "emit",
    "host_vars",
    "playbook",
]
HEADER = "# hostc: generated; do not edit (rebuild from the spec instead)\n"


def _dump(doc: object) -> str:
    return _yaml.dump(doc, default_flow_style=False, width=1 << 16, indent=2)


def playbook() -> str:
    """The one playbook: hosts' differences are all in their variables."""
    return HEADER + _dump(plays())


def manifest(files: Sequence[Artifact]) -> str:
    """What is installed: [{path, sha256, mode}], sorted by path."""
    rows = [
        {"path": a.path, "sha256": hashlib.sha256(a.data).hexdigest(), "mode": f"{a.mode:04o}"}
        for a in sorted(files, key=lambda a: a.path)
    ]
    return json.dumps(rows, indent=2) + "\n"


def host_vars(plan: Plan, files: Sequence[Artifact]) -> str:
    carried = [a for a in files if a.kind is ArtifactKind.FILE]
    pushed = [a for a in carried if a.path != NEW_MANIFEST]
    staged = next((a.data for a in carried if a.path == NEW_MANIFEST), b"")
    installed = manifest(carried).encode()
    doc = {
        "hostc_files": [
            {
                "path": a.path,
                "mode": f"{a.mode:04o}",
                "sha256": hashlib.sha256(a.data).hexdigest(),
                "content": base64.b64encode(a.data).decode("ascii"),
            }
            for a in pushed
        ],
        "hostc_apply_manifest": base64.b64encode(staged).decode("ascii"),
        "hostc_apply_manifest_sha256": hashlib.sha256(staged).hexdigest(),
        # the apply steps, flat: why, word count, the words (the APPLY script's arguments)
        "hostc_steps": [
            word
            for s in steps(carried, plan.host.os_family)
            for word in (s.why, str(len(s.command)), *s.command)
        ],
        "hostc_manifest": base64.b64encode(installed).decode("ascii"),
        "hostc_manifest_sha256": hashlib.sha256(installed).hexdigest(),
    }
    _refuse_templates(doc)
    text = HEADER + f"# host {plan.host.name}\n" + _dump(doc)
    back = _yaml.load(text)
    got = [
        (f["path"], int(f["mode"], 8), base64.b64decode(f["content"])) for f in back["hostc_files"]
    ]
    if got != [(a.path, a.mode, a.data) for a in pushed]:
        raise RuntimeError("ansible: host variables do not parse back to the artifacts")
    return text


#: what starts a Jinja2 expression, statement or comment: Ansible templates every string
#: of a vars file when it is used, with the controller's and the host's powers
JINJA_OPENERS = ("{{", "{%", "{#")


def _refuse_templates(value: object) -> None:
    """No string hostc writes may be read as a template.  Names reaching here are typed
    (paths, units, modes, digests) and cannot hold braces, so one that does is a bug in
    hostc, raised as an internal error rather than handed to ansible-playbook."""
    if isinstance(value, str):
        if any(o in value for o in JINJA_OPENERS):
            raise RuntimeError(f"ansible: {value[:80]!r} would be templated by Ansible")
    elif isinstance(value, dict):
        for v in value.values():
            _refuse_templates(v)
    elif isinstance(value, list):
        for v in value:
            _refuse_templates(v)


def emit(plan: Plan, files: Sequence[Artifact], out: Emitter) -> None:
    out.deliverable(PLAYBOOK, playbook())
    out.deliverable(f"vars-{plan.host.name}.yml", host_vars(plan, files))
