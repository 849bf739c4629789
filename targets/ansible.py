"""Ansible: a playbook and this host's variables, to push hostc's files to running hosts.

`playbook.yml` is the same for every host; `vars-<host>.yml` beside it (read by the
play's first task, `include_vars`, for the inventory host of that name) carries one
host's files (path, mode, sha256, content in base64: no Jinja2 delimiter can appear in
it, so Ansible never templates a file's text), its apply steps as
argv lists (`hostc.delivery.activation`, never a shell), and the manifest of what was
installed.  The files that differ are installed by one command per run (`INSTALL`, a
fixed script reading `MODE BASE64 PATH` lines on its standard input; two when kernel
command line files differ too), not one module per file: a first push to a host runs a
handful of modules instead of ~60 (idempotent: a second run changes nothing); the apply
steps run as a handler only when a file changed.  `hostc-apply` consumes the
lifecycle's `manifest.new` (it becomes the current manifest), so that file is not
pushed as is: its content is kept at `manifest.ansible`, which nothing consumes, and
a handler stages it as `manifest.new` just before the apply steps, only when
something changed (pushing `manifest.new` itself would recreate it on every run and
re-apply forever: found by running the playbook twice in a booted VM).  A reboot runs
only when a file that carries kernel arguments changed:
`ansible.builtin.reboot` over a remote connection; over `-c local` (the host runs
its own playbook, which the reboot module refuses) `shutdown -r +1`, so the play
ends before the host goes down; `hostc_reboot: false` only reports that one is
needed.  `hostc_root` (default `/`) prefixes every path: a run
against a directory installs the files there and skips the steps and the reboot.
These settings (and `hostc_owner`, `hostc_group`) may be set per host or group in the
inventory: the play's own variables only derive from them.  The apply steps run
through hostc-apply (`hostc.delivery.activation`): each reload or restart only when its files
changed (the manifests, and the files this run rewrote, `HOSTC_CHANGED`), a workload
restart not at all when a reboot follows.  The rollout (one host at a time, drain and
uncordon) is `targets/_ansible_roll.py`.

Before anything else, one command (`CHECK`, a fixed script whose data are its
arguments) names every file the host does not hold as built: missing, a symbolic link,
other bytes, another mode or owner.  Only those are copied, so a run over a host that
is already current runs that one module and skips every copy (a fleet's routine push is
one module per host, not one per file).  A run cut off after copying files and before
its handlers finished (a lost connection, Ctrl-C, a failing apply step) would leave a
host with new files that were never applied, and the next run would see nothing to
change.  So when any file differs, `/var/lib/hostc/ansible-pending` is written before
copying, holding `reboot` when a kernel-argument file is among them, `restart` when a
workload's drop-in is (both drain the node under `hostc_drain`), else `apply`.  The
last handler removes it once the steps have run (and the reboot has been made or
scheduled); the check reports it, and a run that finds it re-runs the apply handlers,
and the reboot when it says `reboot`.
Built as data and serialized by PyYAML; every host's files are checked to parse back.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence

from hostc.artifact import Action, Artifact, ArtifactKind
from hostc.delivery.activation import steps
from hostc.plan.model import Plan
from hostc.targets import _yaml
from hostc.targets._ansible_roll import (
    APPLY,
    PENDING,
    PUSHED_MANIFEST,
    ROLLOUT,
    after_handlers,
    drain,
    handlers,
)
from hostc.targets._ansible_sh import APPLY as APPLY_SH
from hostc.targets._ansible_sh import CHECK, INSTALL
from hostc.targets._emitter import Emitter
from hostc.targets.lifecycle import NEW_MANIFEST

PLAYBOOK = "playbook.yml"
MANIFEST = "/var/lib/hostc/manifest.json"
__all__ = [
    "APPLY",
    "APPLY_SH",
    "CHECK",
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


#: a newline in a Jinja2 expression: Ansible passes a backslash escape ('\\n') through
#: as the two characters
NEWLINE = "('%c' | format(10))"
#: the install command's arguments after its name: root, owner, group
OWNED = ["{{ hostc_prefix }}", "{{ hostc_file_owner }}", "{{ hostc_file_group }}"]


def _install(name: str, these: str, notify: list[str]) -> dict[str, object]:
    """One module for every file of `these` (a Jinja2 list of {path, mode, content}):
    one command module per host for any number of files (a copy task per file was ~45
    module runs, each a Python start on the host, on a first push)."""
    line = "map(attribute='{}')".format
    return {
        "name": name,
        "ansible.builtin.command": {
            "argv": ["sh", "-c", "{{ hostc_install }}", "hostc-install", *OWNED],
            "stdin": "{{ hostc_these | "
            + line("mode")
            + " | zip(hostc_these | "
            + line("content")
            + ", hostc_these | "
            + line("path")
            + ") | map('join', ' ') | join("
            + NEWLINE
            + ") }}",
        },
        "vars": {"hostc_these": these},
        "changed_when": True,
        "when": "hostc_these != []",
        **({"notify": notify} if notify else {}),
    }


def _todo(selector: str) -> str:
    return "hostc_files | " + selector + "('boot') | selectattr('path', 'in', hostc_todo) | list"


def _checked() -> str:
    """The check's arguments: each file's path, sha256 and mode, then the manifests'."""
    column = "hostc_files | map(attribute='{}')".format
    files = f"{column('path')} | zip({column('sha256')}, {column('mode')}) | flatten"
    manifests = (
        f"['{PUSHED_MANIFEST}', hostc_apply_manifest_sha256, '0644', "
        f"'{MANIFEST}', hostc_manifest_sha256, '0644']"
    )
    return (
        "{{ ['sh', '-c', hostc_check, 'hostc-check', hostc_prefix, hostc_file_owner, "
        "hostc_file_group, '" + PENDING + "'] + (" + files + ") + " + manifests + " }}"
    )


def _differences() -> list[dict[str, object]]:
    """One command says what differs; from it, the paths to copy (`hostc_todo`), the work
    an earlier run still owes (`hostc_owed`) and what this run changes (`hostc_stale`),
    each '', 'apply' or 'reboot'.  Nothing else reads the host: a run that finds it as
    built copies nothing and runs one module."""
    todo = "hostc_files | selectattr('path', 'in', hostc_todo)"
    return [
        {
            "name": "hostc files that differ from this build",
            "ansible.builtin.command": {"argv": _checked()},
            "vars": {"hostc_check": _yaml.Block(CHECK)},
            "register": "hostc_sums",
            "changed_when": False,
            "check_mode": False,  # it only reads
        },
        {
            "name": "hostc what this run owes",
            "ansible.builtin.set_fact": {
                "hostc_todo": "{{ hostc_sums.stdout_lines | reject('match', 'pending:') | list }}",
                "hostc_owed": "{{ 'reboot' if 'pending:reboot' in hostc_sums.stdout_lines"
                " else 'restart' if 'pending:restart' in hostc_sums.stdout_lines"
                " else 'apply' if 'pending:apply' in hostc_sums.stdout_lines else '' }}",
            },
        },
        {
            "name": "hostc what this run changes",
            "ansible.builtin.set_fact": {
                "hostc_stale": "{{ 'reboot' if "
                + todo
                + " | selectattr('boot') | list else 'restart' if "
                + todo
                + " | selectattr('restart') | list else 'apply' if hostc_todo | difference(['"
                + MANIFEST
                + "']) else '' }}",  # the installed-files record notifies no apply
            },
        },
    ]


def _pending() -> list[dict[str, object]]:
    """The mark for this run, written before any file is copied; the handlers an
    unfinished run still owes."""
    return [
        _install(  # through the install command: it makes /var/lib/hostc on a new host
            "hostc mark this run pending until its handlers finish",
            "{{ [{'path': '"
            + PENDING
            + "', 'mode': '0644', 'content': (('reboot' if 'reboot' in [hostc_owed, "
            "hostc_stale] else 'restart' if 'restart' in [hostc_owed, hostc_stale] else "
            "'apply') ~ " + NEWLINE + ") | b64encode}] if hostc_owed != '' or "
            "hostc_stale != '' else [] }}",
            [],
        ),
        {
            "name": "hostc resume the apply an earlier run did not finish",
            "ansible.builtin.debug": {
                "msg": "hostc: " + PENDING + " says an earlier run did not finish"
            },
            "changed_when": True,
            "notify": APPLY,
            "when": "hostc_owed in ['apply', 'restart']",
        },
        {
            "name": "hostc resume the apply and reboot an earlier run did not finish",
            "ansible.builtin.debug": {
                "msg": "hostc: " + PENDING + " says an earlier run did not finish"
            },
            "changed_when": True,
            "notify": [*APPLY, "hostc reboot"],
            "when": "hostc_owed == 'reboot'",
        },
    ]


def _tasks() -> list[dict[str, object]]:
    """What differs, the folders, the pending mark, the files that differ (kernel command
    line files notify the reboot too), the manifests."""
    return [
        {
            # a task, not the play's vars_files: ansible-core evaluates vars_files once
            # without a host as well, and warns that it skipped the file for an
            # undefined inventory_hostname; an inventory host hostc did not build fails
            # here, naming its missing file (under vars_files it failed later, on an
            # undefined hostc_files)
            "name": "hostc this host's files, as built",
            "ansible.builtin.include_vars": {
                "file": "{{ playbook_dir }}/vars-{{ inventory_hostname }}.yml"
            },
            "tags": ["always"],
        },
        *_differences(),
        *_pending(),
        *drain(),
        {  # on the controller: names every file this run installs (also under --check)
            "name": "hostc files to install",
            "ansible.builtin.debug": {"msg": "{{ hostc_todo }}"},
            "when": "hostc_todo != []",
        },
        _install(
            "hostc files",
            "{{ ("
            + _todo("rejectattr")
            + ") + ([{'path': '"
            + PUSHED_MANIFEST
            + "', 'mode': '0644', 'content': hostc_apply_manifest}] if '"
            + PUSHED_MANIFEST
            + "' in hostc_todo else []) }}",
            APPLY,
        ),
        _install(
            "hostc kernel command line files",
            "{{ " + _todo("selectattr") + " }}",
            [*APPLY, "hostc reboot"],
        ),
        {
            "name": "hostc manifest of what is installed",
            "ansible.builtin.copy": {
                "dest": "{{ hostc_prefix }}" + MANIFEST,
                "content": "{{ hostc_manifest | b64decode }}",
                "mode": "0644",
                "owner": "{{ hostc_file_owner }}",
                "group": "{{ hostc_file_group }}",
            },
            "when": f"'{MANIFEST}' in hostc_todo",
        },
    ]


def playbook() -> str:
    """The one playbook: hosts' differences are all in their variables."""
    play = {
        "name": "hostc host tuning",
        "hosts": "{{ hostc_hosts | default('all') }}",
        **ROLLOUT,
        "become": "{{ hostc_become | default(true) | bool }}",
        "gather_facts": False,
        "vars": {
            # the settings' defaults, under other names: a play variable would override
            # the same name set per host or group in the inventory
            "hostc_prefix": "{{ hostc_root | default('/') | regex_replace('/+$', '') }}",
            "hostc_file_owner": "{{ hostc_owner | default('root') }}",
            "hostc_file_group": "{{ hostc_group | default('root') }}",
            "hostc_reboots": "{{ hostc_reboot | default(true) | bool }}",
            "hostc_install": _yaml.Block(INSTALL),
        },
        "tasks": [*_tasks(), *after_handlers()],
        "handlers": handlers(),
    }
    return HEADER + _dump([play])


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
                "boot": any(x.action is Action.REBOOT for x in a.activation),
                "restart": any(x.action is Action.RESTART for x in a.activation),
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
