"""The Ansible playbook's three plays: what each host owes, then the hosts that only
apply live, then the hosts that reboot.  The play decides nothing about disruption
itself (issue 50, one truth for a change): the build's own `hostc-apply --disruption`,
run on each host against the manifest it holds, says what the change costs that host
(the same lines `hostc diff` prints), and its `summary` line sorts the host.

1. **hostc what each host owes** (targets/_ansible_owes.py): the check, the question,
   a group per summary: `hostc_owes_reboot`, `_restart`, `_live`, `_none`, `_unknown`
   (under `--check`) or `_nothing`.
2. **hostc live changes** (`hostc_owes_restart`, `_live`, `_none`, `_unknown`;
   `serial: hostc_serial_live`, default 25%): the pending mark, the files that differ,
   the apply steps (hostc-apply: restarts and live steps, as the disruption said), then
   where the summary was `restart` or `live` the verify gate: hostc-verify.service run
   again now, and a host whose verify fails fails.  A host whose summary is `none`
   gets its files (what takes effect later) and hostc-apply, and no gate.
3. **hostc reboots** (`hostc_owes_reboot`, `serial: hostc_serial_reboot`, default 1):
   the mark; a node drained first under `hostc_drain: true` (`kubectl drain NODE
   --timeout=hostc_drain_timeout`, default 600s, delegated to `hostc_drain_host`,
   default the controller; a `drain` line with `hostc_drain` unset fails the host: set
   it true to drain, false to reboot undrained); the files; the apply steps; the reboot;
   then the health gate: hostc-verify.service must come up `active` (waited for while
   it is activating or not yet started, up to `hostc_verify_timeout` seconds, default
   600; `failed` fails the host, its journal printed) and a drained node must be Ready
   (`kubectl wait --for=condition=Ready node/NODE --timeout=hostc_ready_timeout`) before
   the uncordon.

Both changing plays have `max_fail_percentage: 0`: a failed host (a drain past its
timeout, an apply step, a verify) ends the playbook before the next batch, and
ansible-playbook runs no later play.  The pending mark
(`/var/lib/hostc/ansible-pending`, written before the drain and the files, removed
last) holds the summary (`drain` for a reboot owing a drain): a host cut off mid-way
stays cordoned, and the next run, whatever hostc-apply then says (the manifest may
already be committed), drains, applies and reboots it again.  Over a local connection
the reboot is only scheduled (`shutdown -r +N`), so the uncordon comes before it and
no gate runs; under a `hostc_root` other than `/` nothing is applied, rebooted or
verified (the drain still runs where asked).
"""

from __future__ import annotations

from hostc.targets import _yaml, verify
from hostc.targets._ansible_owes import (
    GROUP,
    MANIFEST,
    NEWLINE,
    PENDING,
    PUSHED_MANIFEST,
    install,
    owes,
    remove,
)
from hostc.targets._ansible_sh import APPLY as APPLY_SH
from hostc.targets._ansible_sh import INSTALL

#: the reboot's message
REBOOT_WHY = "hostc: hostc-apply --disruption owes a reboot"
#: the reboot under `-c local`, a few minutes ahead so that the play ends first
LOCAL_REBOOT = ["shutdown", "-r", "+{{ hostc_reboot_minutes | default(1) | int }}", REBOOT_WHY]
#: the variables the playbook reads, each with its default (docs/targets.md lists them)
SERIAL = {
    "check": "{{ hostc_serial_check | default('100%') }}",
    "live": "{{ hostc_serial_live | default('25%') }}",
    "reboot": "{{ hostc_serial_reboot | default(1) }}",
}
DRAIN_TIMEOUT = "hostc_drain_timeout | default('600s')"
READY_TIMEOUT = "hostc_ready_timeout | default('600s')"
VERIFY_TIMEOUT = "hostc_verify_timeout | default(600) | int"
#: the host is the real one: hostc_root is `/` (a directory root is never applied)
ON_HOST = "hostc_prefix == ''"
LOCAL = "(ansible_connection | default('ssh')) == 'local'"
#: the build installs hostc-verify.service: the gate has a unit to read
VERIFIES = f"'{verify.UNIT_PATH}' in (hostc_files | map(attribute='path'))"


def _vars() -> dict[str, object]:
    """Each play's own variables: the settings' defaults, under other names (a play
    variable would override the same name set per host or group in the inventory)."""
    return {
        "hostc_prefix": "{{ hostc_root | default('/') | regex_replace('/+$', '') }}",
        "hostc_file_owner": "{{ hostc_owner | default('root') }}",
        "hostc_file_group": "{{ hostc_group | default('root') }}",
        "hostc_reboots": "{{ hostc_reboot | default(true) | bool }}",
        "hostc_install": _yaml.Block(INSTALL),
    }


def _play(
    name: str, hosts: str, serial: str, tasks: list[dict[str, object]], *, changes: bool = True
) -> dict[str, object]:
    """A play; one that `changes` hosts stops the playbook at its first failed host."""
    return {
        "name": name,
        "hosts": hosts,
        "serial": serial,
        **({"max_fail_percentage": 0} if changes else {}),
        "become": "{{ hostc_become | default(true) | bool }}",
        "gather_facts": False,
        "vars": _vars(),
        "tasks": tasks,
    }


def _pending() -> dict[str, object]:
    """The mark for this run, written before any drain or file: the summary it owes."""
    return install(  # through the install command: it makes /var/lib/hostc on a new host
        "hostc mark this run pending until it has finished",
        "{{ [{'path': '"
        + PENDING
        + "', 'mode': '0644', 'content': (('drain' if hostc_drain_owed else hostc_summary) ~ "
        + NEWLINE
        + ") | b64encode}] if hostc_work else [] }}",
    )


def _files() -> list[dict[str, object]]:
    """The files that differ (one command), and the record of what is installed."""
    return [
        install(
            "hostc files",
            "{{ (hostc_files | selectattr('path', 'in', hostc_todo) | list) + ([{'path': '"
            + PUSHED_MANIFEST
            + "', 'mode': '0644', 'content': hostc_apply_manifest}] if '"
            + PUSHED_MANIFEST
            + "' in hostc_todo else []) }}",
        ),
        install(
            "hostc manifest of what is installed",
            "{{ [{'path': '"
            + MANIFEST
            + "', 'mode': '0644', 'content': hostc_manifest}] if '"
            + MANIFEST
            + "' in hostc_todo else [] }}",
        ),
    ]


def _finished() -> dict[str, object]:
    """The pending mark removed, through the install command's `hostc_remove`."""
    task = remove("hostc this run finished", PENDING)
    task["when"] = "hostc_work"
    return task


def _apply() -> list[dict[str, object]]:
    """The apply steps in one module (hostc-apply's reloads and restarts, then hostc-apply
    itself, which commits the manifest), and what they printed."""
    return [
        {
            "name": "hostc apply",
            "ansible.builtin.command": {
                "argv": "{{ ['sh', '-c', hostc_apply_sh, 'hostc-apply-steps'] + hostc_steps }}"
            },
            "vars": {"hostc_apply_sh": _yaml.Block(APPLY_SH)},
            # the files this run rewrote: hostc-apply runs their steps even where the
            # manifest did not change (a file put back as built)
            "environment": {"HOSTC_CHANGED": "{{ hostc_todo | join(' ') }}"},
            "register": "hostc_applied",
            "changed_when": True,
            "when": [ON_HOST, "hostc_work"],
        },
        {
            "name": "hostc what hostc-apply did",
            "ansible.builtin.debug": {"msg": "{{ hostc_applied.stdout_lines }}"},
            "when": "hostc_applied is not skipped",
        },
    ]


def _kubectl(verb: str, *args: str) -> str:
    return (
        "{{ [hostc_kubectl | default('kubectl'), '"
        + verb
        + "', hostc_node | default(inventory_hostname)]"
        + "".join(f" + {a}" for a in args)
        + " }}"
    )


def _on_controller(name: str, argv: str) -> dict[str, object]:
    return {
        "name": name,
        "ansible.builtin.command": {"argv": argv},
        "delegate_to": "{{ hostc_drain_host | default('localhost') }}",
        "become": False,
        "changed_when": True,
    }


def _drain() -> list[dict[str, object]]:
    """Before any file is copied: a drain owed without `hostc_drain` set fails the host;
    under `hostc_drain: true` the node is drained, with a timeout (a PodDisruptionBudget
    must not hold a serial push forever)."""
    task = _on_controller(
        "hostc drain this node before it reboots",
        _kubectl(
            "drain",
            f"['--timeout=' ~ ({DRAIN_TIMEOUT})]",
            "(hostc_drain_args | default(['--ignore-daemonsets', '--delete-emptydir-data']))",
        ),
    )
    task["register"] = "hostc_drained"
    task["when"] = "hostc_drain | default(false) | bool"
    return [
        {
            "name": "hostc a drain is owed and hostc_drain is not set",
            "ansible.builtin.fail": {
                "msg": "hostc: this change owes a drain before the reboot "
                "({{ hostc_disruption.stdout_lines | default([]) | select('match', 'drain ')"
                " | list | join('; ') or hostc_owed }}): set hostc_drain=true (and "
                "hostc_kubectl, hostc_drain_host, hostc_node as needed) to drain the node, "
                "or hostc_drain=false to reboot it undrained"
            },
            "when": ["hostc_drain_owed", "hostc_drain is not defined"],
        },
        _pending(),
        task,
    ]


def _reboot() -> list[dict[str, object]]:
    """The reboot, over the connection the play runs on."""
    return [
        {
            "name": "hostc reboot",
            "ansible.builtin.reboot": {"msg": REBOOT_WHY, "reboot_timeout": 1800},
            "register": "hostc_rebooted",
            "when": [ON_HOST, "hostc_reboots | bool", f"not ({LOCAL})"],
        },
        {  # the reboot module refuses a local connection (it would reboot the controller);
            # the delay lets the play end first (-e hostc_reboot_minutes=N on a slow host)
            "name": "hostc reboot of this host once the play has ended",
            "ansible.builtin.command": {"argv": LOCAL_REBOOT},
            "changed_when": True,
            "when": [ON_HOST, "hostc_reboots | bool", LOCAL],
        },
        {
            "name": "hostc reboot needed",
            "ansible.builtin.debug": {"msg": f"{REBOOT_WHY}: reboot for it to take effect"},
            "when": [ON_HOST, "not (hostc_reboots | bool)"],
        },
    ]


def _verified(wait: bool, when: list[str]) -> list[dict[str, object]]:
    """The verify gate: hostc-verify.service `active`, else the host fails with the unit's
    journal.  After a reboot (`wait`) the unit may still be activating, or not yet
    started: it is asked again every 5 s up to hostc_verify_timeout."""
    state: dict[str, object] = {
        "name": "hostc hostc-verify.service is active",
        "ansible.builtin.command": {"argv": ["systemctl", "is-active", verify.UNIT]},
        "register": "hostc_verify",
        "changed_when": False,
        "failed_when": "hostc_verify.stdout not in ['active', 'failed']",
        "when": when,
    }
    if wait:
        state["until"] = "hostc_verify.stdout in ['active', 'failed']"
        state["retries"] = "{{ [(" + VERIFY_TIMEOUT + ") // 5, 1] | max }}"
        state["delay"] = 5
    return [
        state,
        {
            "name": "hostc hostc-verify.service found drift",
            "ansible.builtin.command": {
                "argv": ["journalctl", "-u", verify.UNIT, "-n", "100", "--no-pager", "-o", "cat"]
            },
            "changed_when": False,
            "failed_when": True,
            "when": "hostc_verify is not skipped and hostc_verify.stdout == 'failed'",
        },
    ]


def _live() -> list[dict[str, object]]:
    """Hosts that apply live or restart: the mark, the files, the apply steps, and the
    verify run again now (its boot result is the old state's)."""
    gate = [ON_HOST, "hostc_summary in ['restart', 'live']", VERIFIES, "not ansible_check_mode"]
    return [
        _pending(),
        *_files(),
        *_apply(),
        {
            "name": "hostc run hostc-verify.service again",
            "ansible.builtin.command": {"argv": ["systemctl", "restart", verify.UNIT]},
            "register": "hostc_verify_run",
            "changed_when": False,
            "failed_when": False,  # the next task reads what it found
            "when": gate,
        },
        *_verified(False, ["hostc_verify_run is not skipped"]),
        _finished(),
    ]


def _reboots() -> list[dict[str, object]]:
    """Hosts that reboot: drain, files, apply, reboot, the gate, Ready, uncordon."""
    ready = _on_controller(
        "hostc this node is Ready again",
        "{{ [hostc_kubectl | default('kubectl'), 'wait', '--for=condition=Ready', "
        "'node/' ~ (hostc_node | default(inventory_hostname)), "
        f"'--timeout=' ~ ({READY_TIMEOUT})] }}}}",
    )
    ready["changed_when"] = False
    ready["when"] = "hostc_drained is not skipped"
    uncordon = _on_controller("hostc uncordon this node", _kubectl("uncordon"))
    uncordon["when"] = "hostc_drained is not skipped"
    return [
        *_drain(),
        *_files(),
        *_apply(),
        *_reboot(),
        *_verified(True, ["hostc_rebooted is not skipped", VERIFIES]),
        ready,
        uncordon,
        _finished(),  # last: a host cut off before it stays cordoned and owes the reboot
    ]


def _group(*summaries: str) -> str:
    """The hosts the first play put in these groups, in inventory order: the order the
    first play kept (`hostc_order`, any member's), since groups['all'] follows the order
    group_by's results came back in (a group no host joined is an empty list, no pattern
    ansible-playbook warns about)."""
    joined = "(" + " + ".join(f"(groups['{GROUP}{s}'] | default([]))" for s in summaries) + ")"
    order = f"({joined} | map('extract', hostvars, 'hostc_order') | first | default([]))"
    return "{{ " + order + " | select('in', " + joined + ") | list }}"


def plays() -> list[dict[str, object]]:
    """The playbook: every host checked and sorted, then the live hosts, then the reboots."""
    return [
        _play(
            "hostc what each host owes",
            "{{ hostc_hosts | default('all') }}",
            SERIAL["check"],
            owes(),
            changes=False,
        ),
        _play(
            "hostc live changes",
            _group("restart", "live", "none", "unknown"),
            SERIAL["live"],
            _live(),
        ),
        _play("hostc reboots", _group("reboot"), SERIAL["reboot"], _reboots()),
    ]
