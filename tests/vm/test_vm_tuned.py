"""Booted-VM test: TuneD as the runtime owner on Debian 12.

The lifecycle VM's tail (tests/vm/test_vm.py; Debian 12's kernel 6.1, systemd 252,
TuneD 2.20 installed but disabled), its last 2 boots: (5) on the guest hostc-revert
gave back, the rootfs tree of tests/vm/tuned.toml (`[runtime] owner = "tuned"`) and its
apply.sh, which enables and starts tuned.service, selects the `hostc` profile and runs
update-grub; a reboot.  (6) The kernel arguments from the GRUB drop-in, TuneD started by
systemd with the profile, then the checks (results under tuned/).

Proves: Debian 12's TuneD 2.20 lists and applies the profile where hostc writes it
(/etc/tuned/hostc/tuned.conf); every plugin it names loads (none is silently left
out); `tuned-adm verify --ignore-missing` passes, i.e. every value TuneD set is still
in effect, and plain `tuned-adm verify` fails only on the IRQs whose affinity the
kernel refuses to change (managed per-queue IRQs of the isolated CPUs); TuneD's
[systemd] cpu_affinity moved PID 1 after the reboot; the boot verifier, ordered after
tuned.service (which systemd sees started only once TuneD applied the profile), finds
no drift; and the guest's `hostc audit` exits 0.

`-m "not vm"` leaves it out; without root, QEMU, vm-boot or its image (or linux-perf's
Python module, which the guest's TuneD needs) it skips (locally) or fails (CI=true).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_vm import _not_applied, _read, lifecycle_vm, vm_lane

pytestmark = pytest.mark.vm
__all__ = ["lifecycle_vm", "vm_lane"]  # the fixtures, used by name


def test_vm_tuned_owner_apply_reboot_tuned_verify_and_audit_exit_0(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, results = lifecycle_vm
    results = results / "tuned"
    assert summary["boots"][4]["end"] == "guest-reboot"
    boot2 = summary["boots"][5]
    # the GRUB drop-in carries the kernel arguments with a TuneD owner too
    assert "nohz_full=2-3,6-7" in boot2["cmdline"].split()
    assert boot2["param_warnings"] == []
    assert _read(results, "tuned-enabled-before").strip() == "disabled"
    assert _read(results, "apply.rc").strip() == "0", _read(results, "apply.log")
    # where Debian 12's TuneD 2.20 reads an administrator's profile, and it lists it
    assert "/etc/tuned/hostc/tuned.conf" in _read(results, "profile-ls")
    assert any(line.split()[:2] == ["-", "hostc"] for line in _read(results, "list").splitlines())
    # apply.sh left TuneD enabled, and systemd started it at the second boot
    assert _read(results, "tuned-enabled").strip() == "enabled"
    assert _read(results, "tuned-active").strip() == "active"
    assert _read(results, "active").strip() == "Current active profile: hostc"
    # every plugin the profile names loaded (a failed one is left out of verify)
    log = _read(results, "tuned.log")
    assert "failed to initialize plugin" not in log
    # TuneD's own check of every value it set.  Plain `tuned-adm verify` fails on the
    # managed (per-queue virtio) IRQs of the isolated CPUs, whose affinity the kernel
    # refuses to change (EIO; TuneD records them as unchangeable): every failure is such
    # an IRQ, and with --ignore-missing, which skips them, the profile verifies.
    failed = re.findall(r"verify: failed: '([^']*)'", log)
    unchangeable = re.findall(r"IRQ (\d+) does not support changing", _read(results, "tuned-i.log"))
    assert {f for f in failed if not f.startswith("SMP affinity of IRQ ")} == set()
    assert {f.split()[-1] for f in failed} <= set(unchangeable)
    verify_i = _read(results, "tuned-verify-i") + _read(results, "tuned-i.log")
    assert _read(results, "tuned-verify-i.rc").strip() == "0", verify_i
    assert _read(results, "pid1-cpus").strip() == "Cpus_allowed_list:\t0-1,4-5"  # [systemd]
    # the boot verifier, after tuned.service, found what the Plan says
    assert _read(results, "verify").strip() == "active", _read(results, "verify.log")
    assert _not_applied(results, "audit.json") == [], _read(results, "audit.txt")
    assert _read(results, "audit.rc").strip() == "0", _read(results, "audit.txt")
