"""Booted-VM test: TuneD as the runtime owner on Debian 12.

One VM (vm-boot, 2 NUMA nodes x 4 CPUs, SMT 2; Debian 12's kernel 6.1, systemd 252,
TuneD 2.20 installed but disabled), 2 boots driven by tests/vm/steps-tuned:
(1) the rootfs tree of tests/vm/tuned.toml (`[runtime] owner = "tuned"`) and its
apply.sh, which enables and starts tuned.service, selects the `hostc` profile and runs
update-grub; a reboot.  (2) The kernel arguments from the GRUB drop-in, TuneD started
by systemd with the profile, then the checks.

Proves: Debian 12's TuneD 2.20 lists and applies the profile where hostc writes it
(/etc/tuned/hostc/tuned.conf); every plugin it names loads (none is silently left
out); `tuned-adm verify --ignore-missing` passes, i.e. every value TuneD set is still
in effect, and plain `tuned-adm verify` fails only on the IRQs whose affinity the
kernel refuses to change (managed per-queue IRQs of the isolated CPUs); TuneD's
[systemd] cpu_affinity moved PID 1 after the reboot; the boot verifier, ordered after
tuned.service (which systemd sees started only once TuneD applied the profile), finds
no drift; and the guest's `hostc audit` exits 0.

`-m "not vm"` leaves it out; without root, QEMU, vm-boot or its image it skips
(locally) or fails (CI=true), through test_vm's fixtures.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_vm import (  # noqa: F401 (the fixtures are used by name)
    BOOT_TIMEOUT,
    HERE,
    _guest_tree,
    _hostc,
    _not_applied,
    _read,
    _spec,
    _vm,
    guest_hostc,
    vm_ready,
    vm_work,
)

from conftest import IN_CI

pytestmark = pytest.mark.vm

#: Debian 12's TuneD imports the `perf` Python module in its [scheduler] and
#: [irqbalance] plugins, but the tuned package does not depend on the package that
#: ships it (linux-perf); without it both plugins fail to load, TuneD logs it, and
#: `tuned-adm verify` still succeeds.  The image has no linux-perf and the guest no
#: network: the module comes from this Debian 12 machine's linux-perf.
PERF = Path("/usr/lib/python3/dist-packages/perf.cpython-311-x86_64-linux-gnu.so")


@pytest.fixture(scope="module")
def tuned_vm(guest_hostc: Path, vm_work: Path) -> tuple[dict[str, Any], Path]:  # noqa: F811
    if not PERF.is_file():
        why = f"no {PERF}: install linux-perf (Debian 12) for the guest's TuneD"
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)
    work = vm_work / "tuned"
    tree = _guest_tree(work / "rootfs", guest_hostc, driver=True)
    (tree / PERF.parent.relative_to("/")).mkdir(parents=True, exist_ok=True)
    shutil.copy(PERF, tree / PERF.relative_to("/"))
    vmtest = tree / "root/vmtest"
    shutil.copytree(HERE / "steps-tuned", vmtest / "steps")
    spec = _spec(vmtest / "tuned", HERE / "tuned.toml", HERE / "topology.toml")
    _hostc("build", spec, "--target", "rootfs", "--out", vmtest / "tuned", "-q")
    out = work / "out"
    summary = _vm(out, "--rootfs", tree, "--boots", "2", "--timeout", str(BOOT_TIMEOUT),
                  "--run", "true", "--collect", "/root/results",
                  timeout=2 * BOOT_TIMEOUT + 300)  # fmt: skip
    return summary, out / "boot2/collect/root/results"


def test_vm_tuned_owner_apply_reboot_tuned_verify_and_audit_exit_0(
    tuned_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, results = tuned_vm
    assert summary["boots"][0]["end"] == "guest-reboot"
    boot2 = summary["boots"][1]
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
