"""Booted-VM test: the Ansible target run for real on Debian 12, twice, then `hostc audit`.

One VM (vm-boot, the shape of tests/test_vm.py), two boots driven by tests/vm/ansible:
ansible-core from this venv unpacked into the guest at /opt/ansible-lib (no network),
`--target ansible` of tests/vm/v1.toml run on the host itself (`-i vmtest, -c local`).
(1) the first run installs (changed > 0), runs the apply handler and, the kernel
arguments having changed, reboots the host through the reboot handler; (2) on the
command line update-grub wrote, the second run changes nothing and `hostc audit` exits 0.

Without root, QEMU, vm-boot or its image (or ansible-core) it skips locally and fails
under CI=true.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from test_vm import (
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
__all__ = ["guest_hostc", "vm_ready", "vm_work"]  # the fixtures, used by name

#: Per boot: the first run executes ~60 Ansible modules, each a Python start in a guest
#: that QEMU emulates without KVM (26 minutes measured on two shared, busy cores)
ANSIBLE_BOOT_TIMEOUT = max(BOOT_TIMEOUT, 2400)

#: ansible-core and the distributions its controller imports, as this venv holds them
#: (CPython 3.11, x86_64 glibc: the guest's python3.11 loads the same compiled modules)
ANSIBLE_DISTS = ("ansible-core", "jinja2", "MarkupSafe", "PyYAML", "cryptography", "cffi",
                 "pycparser", "packaging", "resolvelib")  # fmt: skip


def _ansible_lib(dest: Path) -> None:
    """Every file of those distributions (their metadata too: ansible reads versions)."""
    try:
        dists = [metadata.distribution(name) for name in ANSIBLE_DISTS]
    except metadata.PackageNotFoundError as e:
        if IN_CI:
            pytest.fail(f"{e} is not installed; .ci/run must install ansible-core")
        pytest.skip(f"{e} not installed")
    for dist in dists:
        for file in dist.files or []:
            if file.parts[0] in ("..", "ansible_test") or "__pycache__" in file.parts:
                continue  # scripts in bin/, ansible-test; byte code is compiled below
            target = dest / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(str(dist.locate_file(file))), target)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", dest],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def ansible_vm(guest_hostc: Path, vm_work: Path) -> tuple[dict[str, Any], Path]:
    work = vm_work / "ansible"
    tree = _guest_tree(work / "rootfs", guest_hostc, driver=True)
    vmtest = tree / "root/vmtest"
    shutil.copytree(HERE / "ansible", vmtest / "steps")
    spec = _spec(vmtest / "spec", HERE / "v1.toml", HERE / "topology.toml")
    _hostc("build", spec, "--target", "ansible", "--out", vmtest / "build", "-q")
    _ansible_lib(tree / "opt/ansible-lib")
    out = work / "out"
    summary = _vm(out, "--rootfs", tree, "--boots", "2", "--timeout", str(ANSIBLE_BOOT_TIMEOUT),
                  "--run", "true", "--collect", "/root/results",
                  timeout=2 * ANSIBLE_BOOT_TIMEOUT + 300)  # fmt: skip
    return summary, out / "boot2/collect/root/results"


def _recap(log: str) -> dict[str, int]:
    m = re.search(r"^vmtest\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)",
                  log, re.M)  # fmt: skip
    assert m, log[-3000:]
    return dict(zip(("ok", "changed", "unreachable", "failed"), map(int, m.groups()), strict=True))


def test_vm_ansible_first_run_installs_applies_and_reboots_the_host(
    ansible_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, results = ansible_vm
    log = _read(results, "play1.log")
    assert _read(results, "play1.rc").strip() == "0", log[-3000:]
    recap = _recap(log)
    assert recap["changed"] > 0 and recap["failed"] == 0, recap
    assert "RUNNING HANDLER [hostc apply]" in log
    assert "RUNNING HANDLER [hostc reboot of this host in a minute]" in log
    assert summary["boots"][0]["end"] == "guest-reboot", summary["boots"][0]  # the handler's
    assert "nohz_full=2-3,6-7" not in _read(results, "cmdline-1").split()
    assert "nohz_full=2-3,6-7" in _read(results, "cmdline-2").split()  # update-grub's


def test_vm_ansible_second_run_changes_nothing_and_audit_exits_0(
    ansible_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, results = ansible_vm
    log = _read(results, "play2.log")
    assert _read(results, "play2.rc").strip() == "0", log[-3000:]
    assert _recap(log)["changed"] == 0, log[-3000:]
    assert "RUNNING HANDLER" not in log
    assert _not_applied(results, "audit.json") == [], _read(results, "audit.err")
    assert _read(results, "audit.rc").strip() == "0"
    assert summary["boots"][1]["param_warnings"] == []
