"""The booted VMs of tests/vm, each as a function that builds its guest's files, boots it
with ../shared/tools/vm-boot and returns vm-boot's summary and the folder of what the
guest wrote.  tests/helpers/vmlane.py runs them, all at once, beside the rest of the
suite:

- `lifecycle` (2 NUMA nodes x 4 CPUs, SMT 2; 6 boots: probe, v1, v2, drift, tampered,
  revert, then the TuneD owner);
- `cloud-init` (the small guest: one node, 2 CPUs; 2 boots);
- `ansible` (the small guest; 2 boots: the play's first run, then its second and audit).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "vm"
VM_BOOT = ROOT.parent / "shared" / "tools" / "vm-boot"
CACHE = Path(os.environ.get("HOSTC_VM_CACHE", "/var/tmp/hostc-vm"))
#: the lifecycle and cloud-init guests: 2 NUMA nodes x 4 CPUs, SMT 2, hugepages per node
SHAPE = ["--numa", "4,4", "--smt", "2", "--mem-per-node", "4608,5632"]
#: the Ansible and cloud-init guests: their checks (a delivery applied, a reboot through
#: update-grub, idempotency, audit) need no second node and no hugepages, which the
#: lifecycle VM shows; 2 vCPUs boot in about half the time of 8 under TCG.  Single-
#: threaded TCG keeps each on one host core.
SMALL_SHAPE = ["--numa", "2", "--smt", "1", "--mem-per-node", "3072", "--tcg-threads", "single"]
#: Per boot.  A boot takes 1-3 minutes under TCG on an idle core (cloud-init adds 1-2),
#: several times that while three VMs and the tests share two cores (the lifecycle VM's
#: first boot, probe and apply took 13 min there): the limit only stops a hung VM.
BOOT_TIMEOUT = int(os.environ.get("HOSTC_VM_BOOT_TIMEOUT", "1800"))
#: Per boot of the Ansible VM: its first run executes ~60 modules under emulation
ANSIBLE_BOOT_TIMEOUT = max(BOOT_TIMEOUT, 2400)
#: the harness's kernel argument on every boot (tests/vm/guest/etc/default/grub.d/
#: 00-vmtest.cfg says why): vm-boot's --cmdline gives it to boot 1, that file to the
#: command lines update-grub writes.  Tests leave it out where they compare command lines
#: with hostc's.
HARNESS_CMDLINE = "no_timer_check"
#: boots per VM (the wait's bound: each boot's limit plus set-up)
BOOTS = {"ansible": 2, "lifecycle": 6, "cloud-init": 2}
#: the lifecycle VM's builds, in the order its steps apply them: v1, then in the same boot
#: a sysctl-only update (live), one workload moved (restarts it alone) and v2 (a kernel
#: argument: one reboot, no restart before it); the TuneD owner after the revert
LIFECYCLE_SPECS = ("v1", "v1-sysctl", "v1-place", "v2", "tuned")
#: The lifecycle guest has no GPU and no RDMA NIC, so v1 loads no module; the one module
#: hostc loads through modules-load.d (ib_umad, on hosts with NVIDIA GPUs and RDMA NICs)
#: is in Debian's kernel, and loads without the hardware.  v1's modprobe target for
#: tests/vm/topology.toml with these two devices is installed beside v1, so that boot 2's
#: systemd-modules-load reads hostc's file (tests/vm/steps/step1.sh).
RDMA_DEVICES = """
[[gpus]]
name = "GPU0"
pci = "0000:17:00.0"
node = 0
vendor = "NVIDIA"
model = "NVIDIA H100 80GB HBM3"

[[nics]]
name = "mlx5_0"
pci = "0000:18:00.0"
node = 0
netdev = "ibp24s0"
rdma = "mlx5_0"
vendor = "Mellanox"
"""
#: ansible-core and the distributions its controller imports, as this venv holds them
#: (CPython 3.11, x86_64 glibc: the guest's python3.11 loads the same compiled modules)
ANSIBLE_DISTS = ("ansible-core", "jinja2", "MarkupSafe", "PyYAML", "cryptography", "cffi",
                 "pycparser", "packaging", "resolvelib")  # fmt: skip
#: Debian 12's TuneD imports the `perf` Python module in its [scheduler] and
#: [irqbalance] plugins, but the tuned package does not depend on the package that
#: ships it (linux-perf); without it both plugins fail to load, TuneD logs it, and
#: `tuned-adm verify` still succeeds.  The image has no linux-perf and the guest no
#: network: the module comes from this Debian 12 machine's linux-perf.
PERF = Path("/usr/lib/python3/dist-packages/perf.cpython-311-x86_64-linux-gnu.so")


#: The image's units that no VM test is about and that cost each boot CPU under
#: emulation (e2scrub_reap took 2 min 23 s of a contended CI boot; the timers could fire
#: in the middle of a step): masked in every guest, as a node image would.
MASKED = ("e2scrub_reap.service", "e2scrub_all.timer", "apt-daily.timer",
          "apt-daily-upgrade.timer", "dpkg-db-backup.timer", "fstrim.timer",
          "systemd-tmpfiles-clean.timer")  # fmt: skip


class Unavailable(Exception):
    """What the VM tests need is missing here (they skip locally, fail under CI=true)."""


# -- building the guests' trees ------------------------------------------------------


def _run(argv: list[str | Path], timeout: int) -> None:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} exited {done.returncode}:\n{done.stderr[-3000:]}")


def _hostc(*args: str | Path) -> None:
    _run([sys.executable, "-m", "hostc", *args], 120)


def guest_hostc(work: Path) -> Path:
    """hostc and its dependencies from a wheel of this tree, unpacked for the guest's
    Python 3.11 (no pip run under emulation), byte-compiled once here.  pip's cache is
    off: the suite writes nothing under $HOME."""
    pip = [sys.executable, "-m", "pip", "--no-cache-dir"]
    _run([*pip, "wheel", "-q", ROOT, "-w", work / "wheels"], 600)
    lib = work / "lib"
    _run([*pip, "install", "-q", "--no-index", "--find-links", work / "wheels", "--target",
          lib, "hostc"], 600)  # fmt: skip
    _run(
        [sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", lib],
        300,
    )
    return lib


def guest_tree(dest: Path, lib: Path, *, driver: bool) -> Path:
    """The guest's files: the demo workload, hostc at /usr/local/bin, and (`driver`)
    vmtest-step, which runs /root/vmtest/steps/step<N>.sh at the N-th boot."""
    shutil.copytree(HERE / "guest", dest)
    wants = dest / "etc/systemd/system/multi-user.target.wants"
    wants.mkdir(parents=True)
    units = ["demo.service", "demo2.service"] + (["vmtest-step.service"] if driver else [])
    if not driver:
        (dest / "etc/systemd/system/vmtest-step.service").unlink()
        (dest / "usr/local/sbin/vmtest-step").unlink()
    for unit in units:
        (wants / unit).symlink_to(f"/etc/systemd/system/{unit}")
    for unit in MASKED:
        (dest / "etc/systemd/system" / unit).symlink_to("/dev/null")
    shutil.copytree(lib, dest / "opt/hostc-lib")
    return dest


def spec_dir(dest: Path, spec: Path, topology: Path) -> Path:
    """The spec as node.toml beside its snapshot (under the name the spec gives it) and
    the specs it extends (under their own names, as its `extends` names them)."""
    dest.mkdir(parents=True)
    shutil.copy(spec, dest / "node.toml")
    shutil.copy(topology, dest / topology.name)
    todo = [spec]
    while todo:
        for parent in tomllib.loads(todo.pop().read_text()).get("extends", []):
            shutil.copy(spec.parent / parent, dest / parent)
            todo.append(spec.parent / parent)
    return dest / "node.toml"


def rdma_topology(dest: Path) -> Path:
    """tests/vm/topology.toml with an NVIDIA GPU and an RDMA NIC (RDMA_DEVICES), as
    `dest`/topology.toml: the snapshot v1's modules-load.d file is built for."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "topology.toml"
    path.write_text((HERE / "topology.toml").read_text() + RDMA_DEVICES)
    return path


def boot(out: Path, shape: list[str], *args: str | Path, boots: int, limit: int) -> dict[str, Any]:
    """vm-boot run; its summary.json (vm-boot's own exit status is in it as `ok`)."""
    argv = [str(VM_BOOT), "run", str(out), *shape, "--boots", str(boots), "--timeout",
            str(limit), "--cmdline", HARNESS_CMDLINE, *map(str, args)]  # fmt: skip
    log = out.with_name("vm-boot.log")
    with open(log, "wb") as f:
        child = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
    try:
        # wait4, not wait: the CPU vm-boot and its QEMUs used, for the lane's timing rows
        _, _, usage = os.wait4(child.pid, 0)
    except BaseException:
        child.kill()
        raise
    child.returncode = 0  # reaped above; Popen must not wait for it again
    summary = out / "summary.json"
    if not summary.is_file():
        tail = log.read_bytes()[-3000:].decode(errors="replace")
        raise RuntimeError(f"vm-boot left no summary in {out}:\n{tail}")
    doc: dict[str, Any] = json.loads(summary.read_text())
    doc["host_cpu_seconds"] = usage.ru_utime + usage.ru_stime
    return doc


# -- the three VMs -------------------------------------------------------------------


def lifecycle(work: Path, lib: Path) -> tuple[dict[str, Any], Path]:
    """6 boots driven by tests/vm/steps: (1) `hostc probe`, the pristine guest recorded,
    the v1 rootfs tree + apply.sh, beside v1's modules-load.d file for the host with a
    GPU and an RDMA NIC and its kubelet files as a kubeadm node (tests/vm/v1-kubelet.toml);
    (2) v1 in effect, v2 applied over it; (3) v2 in effect, drift; (4) tampered,
    hostc-revert; (5) the guest as before hostc, then the rootfs tree of tuned.toml
    (`[runtime] owner = "tuned"`) + its apply.sh; (6) TuneD's profile in effect (results
    under tuned/)."""
    if not PERF.is_file():
        raise Unavailable(f"no {PERF}: install linux-perf (Debian 12) for the guest's TuneD")
    tree = guest_tree(work / "rootfs", lib, driver=True)
    (tree / PERF.parent.relative_to("/")).mkdir(parents=True, exist_ok=True)
    shutil.copy(PERF, tree / PERF.relative_to("/"))
    vmtest = tree / "root/vmtest"
    shutil.copytree(HERE / "steps", vmtest / "steps")
    for version in LIFECYCLE_SPECS:
        spec = spec_dir(vmtest / version, HERE / f"{version}.toml", HERE / "topology.toml")
        _hostc("build", spec, "--target", "rootfs", "--out", vmtest / version, "-q")
    spec = spec_dir(vmtest / "modules", HERE / "v1.toml", rdma_topology(work / "rdma"))
    _hostc("build", spec, "--target", "modprobe", "--out", vmtest / "modules", "-q")
    spec = spec_dir(vmtest / "nic", HERE / "v1.toml", rdma_topology(work / "rdma"))
    _hostc("build", spec, "--target", "systemd", "--out", vmtest / "nic", "-q")
    spec = spec_dir(vmtest / "offline", HERE / "v2-offline.toml", HERE / "topology.toml")
    _hostc("build", spec, "--target", "systemd", "--out", vmtest / "offline", "-q")
    spec = spec_dir(vmtest / "kubelet", HERE / "v1-kubelet.toml", HERE / "topology.toml")
    _hostc("build", spec, "--target", "kubelet", "--out", vmtest / "kubelet", "-q")
    shutil.copytree(HERE / "kubeadm", vmtest / "kubeadm")
    summary = boot(work / "out", SHAPE, "--rootfs", tree, "--run", "true", "--collect",
                   "/root/results", boots=BOOTS["lifecycle"], limit=BOOT_TIMEOUT)  # fmt: skip
    return summary, work / f"out/boot{BOOTS['lifecycle']}/collect/root/results"


def cloud_init(work: Path, lib: Path) -> tuple[dict[str, Any], Path]:
    """The user's path: a spec (tests/vm/small.toml) for the topology `hostc probe`
    writes inside this guest (tests/vm/topology-small.toml, which the test compares with
    the probe's output in the guest), --target cloud-init, and a fresh small guest whose
    cloud-init applies it; 2 boots."""
    tree = guest_tree(work / "rootfs", lib, driver=False)
    spec = spec_dir(tree / "root/spec", HERE / "small.toml", HERE / "topology-small.toml")
    _hostc("build", spec, "--target", "cloud-init", "--out", work / "build", "-q")
    c = "$VMBOOT_COLLECT"
    probe = f"hostc probe -o {c}/topology.toml; echo $? >{c}/probe.rc"
    audit = f"hostc audit /root/spec/node.toml --json >{c}/audit.json; echo $? >{c}/audit.rc"
    drift = (
        "sysctl -w vm.swappiness=60 >/dev/null; "
        f"hostc audit /root/spec/node.toml >{c}/drift.txt; echo $? >{c}/drift.rc"
    )
    summary = boot(work / "out", SMALL_SHAPE, "--rootfs", tree, "--user-data",
                   work / "build/cloud-init/user-data", "--run", probe, "--run", audit,
                   "--run", drift, boots=BOOTS["cloud-init"], limit=BOOT_TIMEOUT)  # fmt: skip
    return summary, work / "out/boot2/collect"


def _ansible_lib(dest: Path) -> None:
    """Every file of ANSIBLE_DISTS (their metadata too: ansible reads versions)."""
    try:
        dists = [metadata.distribution(name) for name in ANSIBLE_DISTS]
    except metadata.PackageNotFoundError as e:
        raise Unavailable(f"{e} is not installed; .ci/run must install ansible-core") from e
    for dist in dists:
        for file in dist.files or []:
            if file.parts[0] in ("..", "ansible_test") or "__pycache__" in file.parts:
                continue  # scripts in bin/, ansible-test; byte code is compiled below
            target = dest / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(str(dist.locate_file(file))), target)
    _run([sys.executable, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash",
          dest], 600)  # fmt: skip


def ansible(work: Path, lib: Path) -> tuple[dict[str, Any], Path]:
    """`--target ansible` of tests/vm/small.toml run on the guest itself, twice
    (tests/vm/ansible/step*.sh), in the small guest of tests/vm/topology-small.toml."""
    tree = guest_tree(work / "rootfs", lib, driver=True)
    vmtest = tree / "root/vmtest"
    shutil.copytree(HERE / "ansible", vmtest / "steps")
    spec = spec_dir(vmtest / "spec", HERE / "small.toml", HERE / "topology-small.toml")
    _hostc("build", spec, "--target", "ansible", "--out", vmtest / "build", "-q")
    _ansible_lib(tree / "opt/ansible-lib")
    summary = boot(work / "out", SMALL_SHAPE, "--rootfs", tree, "--run", "true",
                   "--collect", "/root/results", boots=BOOTS["ansible"],
                   limit=ANSIBLE_BOOT_TIMEOUT)  # fmt: skip
    return summary, work / "out/boot2/collect/root/results"


VMS: dict[str, Callable[[Path, Path], tuple[dict[str, Any], Path]]] = {
    "ansible": ansible,
    "lifecycle": lifecycle,
    "cloud-init": cloud_init,
}
