"""Booted-VM test: the Ansible target run for real on Debian 12, twice, then `hostc audit`.

One VM in the session's VM lane (tests/helpers/vmlane.py), started first: it is the
longest.  A small guest (one NUMA node, 2 CPUs: tests/vm/topology-small.toml), two boots
driven by tests/vm/ansible: ansible-core from this venv unpacked into the guest at
/opt/ansible-lib (no network), `--target ansible` of tests/vm/small.toml run on the host
itself (`-i vmtest, -c local`).  (1) the first run asks the build's `hostc-apply
--disruption` (a first delivery: `summary reboot`, the kernel arguments), so the host
goes to the reboot play, which installs (changed > 0), runs the apply steps and
schedules the reboot; (2) on the command line update-grub wrote, the second run changes
nothing (hostc-apply is not even asked) and `hostc audit` exits 0.

Without root, QEMU, vm-boot or its image (or ansible-core) it skips locally and fails
under CI=true.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_vm import SMALL_NOHZ as NOHZ
from test_vm import _not_applied, _read, vm_lane, vm_result

from conftest import ROOT

pytestmark = pytest.mark.vm
__all__ = ["vm_lane"]  # the fixture, used by name


@pytest.fixture(scope="module")
def ansible_vm(vm_lane: Path) -> tuple[dict[str, Any], Path]:
    return vm_result(vm_lane, "ansible")


def test_vm_ansible_spec_isolates_what_the_checks_expect() -> None:
    """NOHZ follows tests/vm/small.toml (a change there must change it)."""
    from hostc import api
    from hostc.plan.kernelargs import cmdline

    plan, _ = api.compile_file(ROOT / "tests" / "vm" / "small.toml")
    assert NOHZ in cmdline(plan).split()


def _recap(log: str) -> dict[str, int]:
    m = re.search(r"^vmtest\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)",
                  log, re.M)  # fmt: skip
    assert m, log[-3000:]
    return dict(zip(("ok", "changed", "unreachable", "failed"), map(int, m.groups()), strict=True))


def _ended(log: str, task: str) -> str | None:
    """How `task` ended on vmtest (ok, changed, skipping, fatal), None if it never ran
    (its play matched no host)."""
    m = re.search(rf"^TASK \[{re.escape(task)}\] \**\n(\w+):", log, re.M)
    return m.group(1) if m else None


def test_vm_ansible_first_run_installs_applies_and_reboots_the_host(
    ansible_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, results = ansible_vm
    log = _read(results, "play1.log")
    assert _read(results, "play1.rc").strip() == "0", log[-3000:]
    # the play itself scheduled the reboot (logind's record of `shutdown -r +N`)
    assert "MODE=reboot" in _read(results, "scheduled").split(), _read(results, "scheduled")
    recap = _recap(log)
    assert recap["changed"] > 0 and recap["failed"] == 0, recap
    # the decision is hostc-apply --disruption's, printed by the play (issue 50)
    assert "summary reboot" in log and "reboot kernel arguments" in log, log[-3000:]
    assert _ended(log, "hostc apply") == "changed"
    assert _ended(log, "hostc reboot of this host once the play has ended") == "changed"
    assert summary["boots"][0]["end"] == "guest-reboot", summary["boots"][0]  # the handler's
    assert NOHZ not in _read(results, "cmdline-1").split()
    assert NOHZ in _read(results, "cmdline-2").split()  # update-grub's


def test_vm_ansible_second_run_changes_nothing_and_audit_exits_0(
    ansible_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, results = ansible_vm
    log = _read(results, "play2.log")
    assert _read(results, "play2.rc").strip() == "0", log[-3000:]
    assert _recap(log)["changed"] == 0, log[-3000:]
    for task in ("hostc ask hostc-apply what this change costs", "hostc apply"):
        assert _ended(log, task) in ("skipping", None), task
    assert _not_applied(results, "audit.json") == [], _read(results, "audit.err")
    assert _read(results, "audit.rc").strip() == "0"
    assert summary["boots"][1]["param_warnings"] == []
