"""Booted-VM tests: hostc's output on Debian 12's real kernel, systemd and cloud-init.

Two VMs (QEMU via ../shared/tools/vm-boot, 2 NUMA nodes x 4 CPUs, SMT 2), each boot
reused for every check that does not disturb the next:

- lifecycle VM, 5 boots driven by tests/vm/steps: (1) `hostc probe`, the pristine
  guest recorded, the v1 rootfs tree + apply.sh (the image-builder path); (2) v1 in
  effect: audit, verifier, dmesg, the workload's running process; v2 applied over
  v1; (3) v2 in effect: audit, no v1-only file, `sysctl -w` drift; a tampering
  sysctl.d file; (4) the verifier failed; hostc-revert; (5) the guest as before hostc.
- cloud-init VM, 2 boots: the spec for the topology `hostc probe` found in the
  lifecycle VM, delivered as user-data to the guest's real cloud-init; update-grub
  writes the second boot's command line; `hostc audit` in the guest.

`-m "not vm"` leaves them out.  Without root, QEMU, vm-boot or its image they skip
(locally) or fail (CI=true).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import IN_CI, ROOT

pytestmark = pytest.mark.vm

HERE = ROOT / "tests" / "vm"
VM_BOOT = ROOT.parent / "shared" / "tools" / "vm-boot"
CACHE = Path(os.environ.get("HOSTC_VM_CACHE", "/var/tmp/hostc-vm"))
SHAPE = ["--numa", "4,4", "--smt", "2", "--mem-per-node", "4608"]
#: Per boot.  A boot takes 1-3 minutes under TCG on 2 idle cores (cloud-init adds 1-2),
#: several times that on a loaded machine: the limit only stops a hung VM.
BOOT_TIMEOUT = int(os.environ.get("HOSTC_VM_BOOT_TIMEOUT", "900"))


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "vm-boot needs root"
    if not VM_BOOT.is_file():
        return f"{VM_BOOT} is missing"
    for tool in ("qemu-system-x86_64", "qemu-img"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not (CACHE / "base.img").is_file():
        return f"no VM image in {CACHE}: run `{VM_BOOT} image`"
    return None


@pytest.fixture(scope="session")
def vm_ready() -> None:
    why = _unavailable()
    if why is not None:
        if IN_CI:
            pytest.fail(f"booted-VM tests cannot run: {why}")
        pytest.skip(why)


@pytest.fixture(scope="session")
def vm_work(vm_ready: None) -> Iterator[Path]:
    """A work directory of its own: pytest prunes its old temporary directories when
    another session starts, which must not happen under a VM that runs for minutes."""
    path = Path(tempfile.mkdtemp(prefix="hostc-vmtest-", dir="/var/tmp"))
    yield path
    if not os.environ.get("HOSTC_VM_KEEP"):  # HOSTC_VM_KEEP=1 keeps it for inspection
        shutil.rmtree(path, ignore_errors=True)


def _run(argv: list[str | Path], timeout: int) -> None:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{argv[:3]} exited {done.returncode}:\n{done.stderr[-3000:]}"


def _hostc(*args: str | Path) -> None:
    _run([sys.executable, "-m", "hostc", *args], 120)


@pytest.fixture(scope="session")
def guest_hostc(vm_work: Path) -> Path:
    """hostc and its dependencies from a wheel of this tree, unpacked for the guest's
    Python 3.11 (no pip run under emulation), byte-compiled once here."""
    work = vm_work / "wheel"
    _run([sys.executable, "-m", "pip", "wheel", "-q", ROOT, "-w", work / "wheels"], 600)
    lib = work / "lib"
    _run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--find-links",
         work / "wheels", "--target", lib, "hostc"],
        600,
    )  # fmt: skip
    _run(
        [sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", lib],
        300,
    )
    return lib


def _guest_tree(dest: Path, lib: Path, *, driver: bool) -> Path:
    shutil.copytree(HERE / "guest", dest)
    wants = dest / "etc/systemd/system/multi-user.target.wants"
    wants.mkdir(parents=True)
    units = ["demo.service"] + (["vmtest-step.service"] if driver else [])
    if not driver:
        (dest / "etc/systemd/system/vmtest-step.service").unlink()
        (dest / "usr/local/sbin/vmtest-step").unlink()
    for unit in units:
        (wants / unit).symlink_to(f"/etc/systemd/system/{unit}")
    shutil.copytree(lib, dest / "opt/hostc-lib")
    return dest


def _spec(dest: Path, spec: Path, topology: Path) -> Path:
    dest.mkdir(parents=True)
    shutil.copy(spec, dest / "node.toml")
    shutil.copy(topology, dest / "topology.toml")
    return dest / "node.toml"


def _vm(out: Path, *args: str | Path, timeout: int) -> dict[str, Any]:
    subprocess.run(
        [str(VM_BOOT), "run", str(out), *SHAPE, *map(str, args)],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    summary = out / "summary.json"
    assert summary.is_file(), f"vm-boot left no summary in {out}"
    doc: dict[str, Any] = json.loads(summary.read_text())
    return doc


@pytest.fixture(scope="session")
def lifecycle_vm(guest_hostc: Path, vm_work: Path) -> tuple[dict[str, Any], Path]:
    work = vm_work / "lifecycle"
    tree = _guest_tree(work / "rootfs", guest_hostc, driver=True)
    vmtest = tree / "root/vmtest"
    shutil.copytree(HERE / "steps", vmtest / "steps")
    for version in ("v1", "v2"):
        spec = _spec(vmtest / version, HERE / f"{version}.toml", HERE / "topology.toml")
        _hostc("build", spec, "--target", "rootfs", "--out", vmtest / version, "-q")
    out = work / "out"
    limit = str(BOOT_TIMEOUT)
    summary = _vm(out, "--rootfs", tree, "--boots", "5", "--timeout", limit, "--run", "true",
                  "--collect", "/root/results", timeout=5 * BOOT_TIMEOUT + 300)  # fmt: skip
    return summary, out / "boot5/collect/root/results"


def _read(results: Path, name: str) -> str:
    path = results / name
    assert path.is_file(), f"the guest wrote no {name}: {sorted(p.name for p in results.glob('*'))}"
    return path.read_text()


def _not_applied(results: Path, name: str) -> list[dict[str, Any]]:
    doc = json.loads(_read(results, name))
    return [f for f in doc["findings"] if f["status"] not in ("applied", "not-observable")]


def test_vm_kernel_accepts_every_argument(lifecycle_vm: tuple[dict[str, Any], Path]) -> None:
    summary, results = lifecycle_vm
    boot2 = summary["boots"][1]
    assert "nohz_full=2-3,6-7" in boot2["cmdline"].split()
    assert boot2["param_warnings"] == []
    dmesg = _read(results, "dmesg-v1")
    assert "Unknown kernel command line parameters" not in dmesg
    assert "malformed" not in dmesg


def test_vm_rootfs_tree_and_apply_sh_audit_clean_after_a_boot(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    assert _read(results, "apply-v1.rc").strip() == "0", _read(results, "apply-v1.log")
    assert _not_applied(results, "audit-v1.json") == []
    assert _read(results, "audit-v1.rc").strip() == "0"


def test_vm_per_node_hugepages_and_isolation_are_the_plans(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, _ = lifecycle_vm
    v1, v2 = summary["boots"][1], summary["boots"][2]
    assert v1["nohz_full"].strip() == "2-3,6-7"
    assert [v1["nodes"][n]["hugepages"]["2048kB"] for n in ("0", "1")] == [16, 8]
    assert [v2["nodes"][n]["hugepages"]["2048kB"] for n in ("0", "1")] == [8, 16]


def test_vm_workload_process_runs_on_its_cpus_and_numa_node(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    status = _read(results, "demo-v1")
    assert "Cpus_allowed_list:\t6-7" in status  # NUMAPolicy=bind is no cpuset: Mems_allowed stays
    assert "bind:1" in _read(results, "demo-numa-v1")


def test_vm_boot_verifier_passes_when_the_plan_took_effect(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    assert _read(results, "verify-v1").strip() == "active", _read(results, "verify-v1.log")


def test_vm_update_leaves_no_file_of_the_old_build_and_audits_clean(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    assert _read(results, "apply-v2.rc").strip() == "0", _read(results, "apply-v2.log")
    assert _read(results, "v1-left") == ""
    assert _not_applied(results, "audit-v2.json") == []
    assert _read(results, "audit-v2.rc").strip() == "0"
    assert _read(results, "irqbalance-v2").strip() == "active"  # the IRQ owner switched back


def test_vm_audit_names_a_sysctl_changed_at_runtime(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    assert _read(results, "audit-drift.rc").strip() == "1"
    report = _read(results, "audit-drift.txt")
    assert any(
        line.startswith("differs") and "sysctl vm.swappiness" in line
        for line in report.splitlines()
    ), report


def test_vm_boot_verifier_fails_visibly_after_a_tampered_boot(
    lifecycle_vm: tuple[dict[str, Any], Path],
) -> None:
    _, results = lifecycle_vm
    assert _read(results, "verify-tampered").strip() == "failed"
    assert "hostc-verify.service" in _read(results, "failed-tampered")
    assert "DRIFT sysctl vm.swappiness: expected 7, found 60" in _read(
        results, "verify-tampered.log"
    )


def test_vm_revert_gives_back_the_host_as_it_was(lifecycle_vm: tuple[dict[str, Any], Path]) -> None:
    _, results = lifecycle_vm
    assert _read(results, "revert.rc").strip() == "0", _read(results, "revert.log")
    assert _read(results, "final.sha") == _read(results, "pristine.sha")
    assert _read(results, "final-grub") == _read(results, "pristine-grub")
    assert _read(results, "final-cmdline") == _read(results, "pristine-cmdline")


@pytest.fixture(scope="session")
def cloud_init_vm(
    lifecycle_vm: tuple[dict[str, Any], Path],
    guest_hostc: Path,
    vm_work: Path,
) -> tuple[dict[str, Any], Path]:
    """The user's path: the topology `hostc probe` wrote inside a guest, a spec for it,
    --target cloud-init, and a fresh guest whose cloud-init applies it."""
    _, results = lifecycle_vm
    assert _read(results, "probe.rc").strip() == "0"
    work = vm_work / "cloud-init"
    tree = _guest_tree(work / "rootfs", guest_hostc, driver=False)
    spec = _spec(tree / "root/spec", HERE / "v1.toml", results / "topology.toml")
    _hostc("build", spec, "--target", "cloud-init", "--out", work / "build", "-q")
    out = work / "out"
    c = "$VMBOOT_COLLECT"
    audit = f"hostc audit /root/spec/node.toml --json >{c}/audit.json; echo $? >{c}/audit.rc"
    drift = (
        "sysctl -w vm.swappiness=60 >/dev/null; "
        f"hostc audit /root/spec/node.toml >{c}/drift.txt; echo $? >{c}/drift.rc"
    )
    summary = _vm(out, "--rootfs", tree, "--user-data", work / "build/cloud-init/user-data",
                  "--boots", "2", "--timeout", str(BOOT_TIMEOUT), "--run", audit, "--run", drift,
                  timeout=2 * BOOT_TIMEOUT + 300)  # fmt: skip
    return summary, out / "boot2/collect"


def test_vm_probe_spec_cloud_init_reboot_then_audit_exits_0(
    cloud_init_vm: tuple[dict[str, Any], Path],
) -> None:
    summary, collect = cloud_init_vm
    assert summary["boots"][0]["end"] == "guest-reboot"  # cloud-init's power_state
    assert "nohz_full=2-3,6-7" in summary["boots"][1]["cmdline"].split()
    assert _not_applied(collect, "audit.json") == []
    assert _read(collect, "audit.rc").strip() == "0"
    assert _read(collect, "drift.rc").strip() == "1"
