"""The Ansible playbook's first play, **hostc what each host owes**, and what the plays
share.  For every host (`serial: hostc_serial_check`, default every host in one batch):
its variables; the check (`CHECK`: what differs, the pending mark of a run that did not
finish, and under a `hostc_root` other than `/` each folder on the way that is a
symbolic link, which the play refuses: a file written through it would land outside
the image); then, when anything is owed, this build's manifest placed as
`manifest.new` and the build's own `hostc-apply --disruption` asked (`DISRUPTION`: the
host may hold an older hostc-apply, or none).  Its lines are printed, the lines `hostc
diff` prints; its summary, raised to what a pending mark still owes, puts the host in
the group `hostc_owes_<summary>`: `reboot`, `restart`, `live`, `none` (files whose
change costs nothing now), `unknown` (under `--check`, which places nothing, so
hostc-apply is not asked) or `nothing`.  The play decides nothing itself (issue 50).

A host that fails here (unreachable, not built, a refused root, no summary) drops out
and the others go on: nothing of it was changed but `manifest.new`, which only
hostc-apply consumes.  The later plays are targets/_ansible_roll.py.
"""

from __future__ import annotations

from hostc.targets import _yaml
from hostc.targets._ansible_sh import CHECK, DISRUPTION
from hostc.targets.lifecycle import APPLY as HOSTC_APPLY
from hostc.targets.lifecycle import NEW_MANIFEST

#: where the lifecycle manifest for hostc-apply is kept between runs: the check compares
#: it with the build's; `manifest.new` itself is placed by the first play
PUSHED_MANIFEST = "/var/lib/hostc/manifest.ansible"
#: the record of what the play installed: [{path, sha256, mode}]
MANIFEST = "/var/lib/hostc/manifest.json"
#: written before a run drains or copies anything, removed last (the summary it owes)
PENDING = "/var/lib/hostc/ansible-pending"
#: the groups the first play puts each host in: `hostc_owes_` + the summary
GROUP = "hostc_owes_"
SUMMARIES = ("none", "live", "restart", "reboot")
#: a newline in a Jinja2 expression: Ansible passes a backslash escape ('\\n') through
#: as the two characters
NEWLINE = "('%c' | format(10))"
#: the install command's arguments after its name: root, owner, group
OWNED = ["{{ hostc_prefix }}", "{{ hostc_file_owner }}", "{{ hostc_file_group }}"]
#: what a pending mark owes, as a summary ('apply' from a hostc before issue 50; a word
#: hostc never wrote owes the most)
OWED = (
    "{'': 'none', 'none': 'none', 'apply': 'live', 'live': 'live', 'restart': 'restart', "
    "'reboot': 'reboot', 'drain': 'reboot'}.get(hostc_owed, 'reboot')"
)


def install(name: str, these: str) -> dict[str, object]:
    """One module for every file of `these` (a Jinja2 list of {path, mode, content}):
    one command module per host for any number of files (a copy task per file was ~45
    module runs, each a Python start on the host, on a first push).  Every write the
    play makes under hostc_prefix is one of these: `INSTALL`, the one writer's
    `hostc_put` (targets/templates/_safe_write.sh.j2), never a copy or file module."""
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
    }


def remove(name: str, path: str) -> dict[str, object]:
    """`path` under hostc_prefix removed by the install command (`absent - PATH`: its
    `hostc_remove`, which refuses a symbolic link among the folders on the way), changed
    only when there was something to remove."""
    task = install(name, "{{ [{'path': '" + path + "', 'mode': 'absent', 'content': '-'}] }}")
    task["register"] = "hostc_removed"
    task["changed_when"] = "hostc_removed.stdout != ''"
    return task


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


def _found() -> list[dict[str, object]]:
    """The host's variables, the check, the refusal of a linked root, what is owed."""
    lines = "hostc_sums.stdout_lines"
    mark = f"({lines} | select('match', 'pending:') | first | default('pending:'))[8:]"
    todo = f"{lines} | reject('match', '(pending|link):') | list"
    return [
        {
            # a task, not the play's vars_files: ansible-core evaluates vars_files once
            # without a host as well, and warns that it skipped the file for an
            # undefined inventory_hostname; an inventory host hostc did not build fails
            # here, naming its missing file (under vars_files it failed later, on an
            # undefined hostc_files).  The variables stay the host's for the later plays.
            "name": "hostc this host's files, as built",
            "ansible.builtin.include_vars": {
                "file": "{{ playbook_dir }}/vars-{{ inventory_hostname }}.yml"
            },
            "tags": ["always"],
        },
        {
            "name": "hostc files that differ from this build",
            "ansible.builtin.command": {"argv": _checked()},
            "vars": {"hostc_check": _yaml.Block(CHECK)},
            "register": "hostc_sums",
            "changed_when": False,
            "check_mode": False,  # it only reads
        },
        {  # hostc_root is an image: a file written through a link would land outside it
            "name": "hostc refuse a root whose folders are symbolic links",
            "ansible.builtin.fail": {
                "msg": "hostc: under hostc_root={{ hostc_prefix }} these folders are "
                "symbolic links, and a file would be written through them: "
                f"{{{{ {lines} | select('match', 'link:') | map('regex_replace', '^link:', '')"
                " | list | join(', ') }}",
            },
            "when": f"{lines} | select('match', 'link:') | list != []",
        },
        {
            "name": "hostc what this run owes",
            "ansible.builtin.set_fact": {
                "hostc_todo": "{{ " + todo + " }}",
                "hostc_owed": "{{ " + mark + " }}",
                # the installed-files record alone owes no apply
                "hostc_work": "{{ " + mark + " != '' or (" + todo + " | difference(['"
                f"{MANIFEST}'])) != [] }}}}",
            },
        },
        {  # on the controller: names every file this run installs; under --check, where
            # the install command does not run, it is what says the files would change
            "name": "hostc files to install",
            "ansible.builtin.debug": {"msg": "{{ hostc_todo }}"},
            "changed_when": "ansible_check_mode",
            "when": "hostc_todo != []",
        },
    ]


def _asked() -> list[dict[str, object]]:
    """The manifest placed, hostc-apply asked."""
    return [
        install(
            "hostc place this build's manifest for hostc-apply",
            "{{ [{'path': '"
            + NEW_MANIFEST
            + "', 'mode': '0644', 'content': hostc_apply_manifest}] if hostc_work else [] }}",
        ),
        {  # the build's hostc-apply (the host may hold an older one): it reads both
            # manifests and the files this run rewrites, and only prints
            "name": "hostc ask hostc-apply what this change costs",
            "ansible.builtin.command": {
                "argv": "{{ ['sh', '-c', hostc_disruption_sh, 'hostc-disruption', "
                f"(hostc_files | selectattr('path', 'equalto', '{HOSTC_APPLY}') "
                "| map(attribute='content') | first), '--disruption'] }}"
            },
            "vars": {"hostc_disruption_sh": _yaml.Block(DISRUPTION)},
            "environment": {
                "HOSTC_ROOT": "{{ hostc_prefix }}",
                "HOSTC_CHANGED": "{{ hostc_todo | join(' ') }}",
            },
            "register": "hostc_disruption",
            "changed_when": False,
            "when": ["hostc_work", "not ansible_check_mode"],
        },
    ]


def _sorted() -> list[dict[str, object]]:
    """What hostc-apply said, raised to what the mark owes; its lines; the host's group."""
    said = "hostc_disruption.stdout_lines | default([])"
    summary = f"({said} | select('match', 'summary ') | list | last | default('summary ?'))[8:]"
    rank = "{'none': 0, 'live': 1, 'restart': 2, 'reboot': 3}"
    return [
        {
            "name": "hostc what hostc-apply said",
            "ansible.builtin.set_fact": {
                "hostc_summary": "{{ 'nothing' if not hostc_work and hostc_todo == [] else "
                "'unknown' if ansible_check_mode and hostc_work else "
                f"'' if hostc_said not in {rank} else "
                f"{list(SUMMARIES)!r}[[{rank}[hostc_said], {rank}[{OWED}]] | max] }}}}",
                "hostc_drain_owed": "{{ hostc_owed == 'drain' or "
                f"({said} | select('match', 'drain( |$)') | list != []) }}}}",
                # the inventory's order, kept before group_by: a host joining a group
                # leaves `ungrouped`, and groups['all'] then lists the groups' members in
                # the order their results came back (the later plays' order is this one)
                "hostc_order": "{{ ansible_play_hosts_all }}",
            },
            "vars": {"hostc_said": "{{ " + summary + " if hostc_work else 'none' }}"},
        },
        {
            "name": "hostc hostc-apply --disruption gave no summary",
            "ansible.builtin.fail": {
                "msg": "hostc: hostc-apply --disruption ended without a summary line: "
                "{{ hostc_disruption.stdout_lines }}"
            },
            "when": "hostc_summary == ''",
        },
        {  # the disruption hostc computed, as `hostc diff` printed it
            "name": "hostc what this change costs",
            "ansible.builtin.debug": {
                "msg": f"{{{{ {said} + (['an earlier run did not finish: {PENDING} owes '"
                " ~ hostc_owed] if hostc_owed != '' else []) + (['--check places no "
                "manifest.new, so hostc-apply is not asked: hostc diff gives the disruption']"
                " if ansible_check_mode else []) }}",
            },
            "when": "hostc_work",
        },
        {
            "name": "hostc group this host by what it owes",
            "ansible.builtin.group_by": {"key": GROUP + "{{ hostc_summary }}"},
            "changed_when": False,
        },
    ]


def owes() -> list[dict[str, object]]:
    """The first play's tasks: what differs, what hostc-apply says it costs, the group."""
    return [*_found(), *_asked(), *_sorted()]
