"""The Ansible play's rollout: hosts one batch at a time, a drain before a disruption,
the handlers that apply and reboot, and the uncordon after them.

`serial: "{{ hostc_serial | default(1) }}"` pushes one host at a time (Ansible's default
is every host at once, five forks at a time: a kernel-argument change rebooted the whole
inventory), and `max_fail_percentage: 0` stops the rollout at the first host that fails,
before the next batch is touched (review N2; MCO's one-node-at-a-time pools, Skyhook's
coordinated interrupts).  With `hostc_drain: true`, a host whose push restarts a
workload or reboots it is drained first (`kubectl drain NODE`, delegated to
`hostc_drain_host`, default `localhost`, the controller, whose kubeconfig it uses; the
node name is `hostc_node`, default the inventory name; `hostc_kubectl` and
`hostc_drain_args` change the command) and uncordoned once its handlers ran.  A push
that only applies live (a sysctl) or changes nothing drains nothing: the tasks are
skipped, no module runs.  A host whose handlers fail stays cordoned and stops the
rollout.  Over a local connection the reboot is only scheduled (`shutdown -r +1`), so
the uncordon comes before it.
"""

from __future__ import annotations

from hostc.targets import _yaml
from hostc.targets._ansible_sh import APPLY as APPLY_SH
from hostc.targets.lifecycle import NEW_MANIFEST

#: where the lifecycle manifest for hostc-apply is kept between runs (targets/ansible.py)
PUSHED_MANIFEST = "/var/lib/hostc/manifest.ansible"
APPLY = ["hostc stage the manifest for hostc-apply", "hostc apply"]
#: written before a run copies anything, removed by its last handler (targets/ansible.py)
PENDING = "/var/lib/hostc/ansible-pending"
REBOOT_WHY = "hostc: the kernel command line changed"
#: the reboot under `-c local`, a few minutes ahead so that the play ends first
LOCAL_REBOOT = ["shutdown", "-r", "+{{ hostc_reboot_minutes | default(1) | int }}", REBOOT_WHY]

#: the play's keywords: one batch at a time, none after a failure
ROLLOUT = {"serial": "{{ hostc_serial | default(1) }}", "max_fail_percentage": 0}

#: the work a run changes or owes (`hostc_stale`, `hostc_owed`) takes this node out of
#: service: a workload restart or a reboot
DISRUPTS = "'reboot' in [hostc_owed, hostc_stale] or 'restart' in [hostc_owed, hostc_stale]"


def _kubectl(verb: str, *args: str) -> list[str] | str:
    return (
        "{{ [hostc_kubectl | default('kubectl'), '"
        + verb
        + "', hostc_node | default(inventory_hostname)]"
        + "".join(f" + {a}" for a in args)
        + " }}"
    )


def _on_controller(name: str, verb: str, *args: str) -> dict[str, object]:
    return {
        "name": name,
        "ansible.builtin.command": {"argv": _kubectl(verb, *args)},
        "delegate_to": "{{ hostc_drain_host | default('localhost') }}",
        "become": False,
        "changed_when": True,
    }


def drain() -> list[dict[str, object]]:
    """Before any file is copied: the node drained when this run disrupts it."""
    task = _on_controller(
        "hostc drain this node before its workloads restart or it reboots",
        "drain",
        "(hostc_drain_args | default(['--ignore-daemonsets', '--delete-emptydir-data']))",
    )
    task["register"] = "hostc_drained"
    task["when"] = ["hostc_drain | default(false) | bool", DISRUPTS]
    return [task]


def after_handlers() -> list[dict[str, object]]:
    """The handlers run here, not at the end of the batch; then the node is uncordoned."""
    uncordon = _on_controller("hostc uncordon this node", "uncordon")
    uncordon["when"] = "hostc_drained is defined and hostc_drained is changed"
    return [
        {
            "name": "hostc apply and reboot now, before the uncordon",
            "ansible.builtin.meta": "flush_handlers",
        },
        uncordon,
    ]


def handlers() -> list[dict[str, object]]:
    """The apply steps, then a reboot over the connection the play runs on."""
    on_host = "hostc_prefix == ''"
    conn = "ansible_connection | default('ssh')"
    return [
        {  # before the steps: hostc-apply reads manifest.new and makes it the current one
            "name": APPLY[0],
            "ansible.builtin.copy": {
                "remote_src": True,
                "src": "{{ hostc_prefix }}" + PUSHED_MANIFEST,
                "dest": "{{ hostc_prefix }}" + NEW_MANIFEST,
                "mode": "0644",
                "owner": "{{ hostc_file_owner }}",
                "group": "{{ hostc_file_group }}",
            },
            # `--check` copied nothing, so there is no source on a new host (the copy
            # failed there); the steps after it are commands, which check mode skips
            "when": "not ansible_check_mode",
        },
        {  # every step in one module; its output names each step as it runs
            "name": "hostc apply",
            "ansible.builtin.command": {
                "argv": "{{ ['sh', '-c', hostc_apply_sh, 'hostc-apply-steps'] + hostc_steps }}"
            },
            "vars": {"hostc_apply_sh": _yaml.Block(APPLY_SH)},
            # the files this run rewrote: hostc-apply runs their steps even where the
            # manifest did not change (a file put back as built)
            "environment": {"HOSTC_CHANGED": "{{ hostc_todo | default([]) | join(' ') }}"},
            "changed_when": True,
            "when": on_host,
        },
        {
            "name": "hostc reboot",
            "ansible.builtin.reboot": {"msg": REBOOT_WHY, "reboot_timeout": 1800},
            "when": [on_host, "hostc_reboots | bool", f"{conn} != 'local'"],
        },
        {  # the reboot module refuses a local connection (it would reboot the controller);
            # the delay lets the play end first (-e hostc_reboot_minutes=N on a slow host)
            "name": "hostc reboot of this host once the play has ended",
            "listen": "hostc reboot",
            "ansible.builtin.command": {"argv": LOCAL_REBOOT},
            "changed_when": True,
            "when": [on_host, "hostc_reboots | bool", f"{conn} == 'local'"],
        },
        {
            "name": "hostc reboot needed",
            "listen": "hostc reboot",
            "ansible.builtin.debug": {"msg": f"{REBOOT_WHY}: reboot for it to take effect"},
            "when": [on_host, "not (hostc_reboots | bool)"],
        },
        {  # last: handlers run in this order, whatever order they were notified in
            "name": "hostc this run finished",
            "listen": "hostc apply",
            "ansible.builtin.file": {"path": "{{ hostc_prefix }}" + PENDING, "state": "absent"},
        },
    ]
