"""The VM lane: the booted-VM tests' VMs, run in one background process beside the rest
of the suite, so that the two cores of a CI machine both work.

Each VM is single-threaded TCG (no KVM here), so one VM keeps one host core busy for
minutes while its pytest worker only waits.  The suite's collection starts this lane as
soon as it sees a selected test that needs a VM (`start`, once per session, whichever
process gets there first); the VM tests' fixtures then wait for their VM's result
(`result`), which the lane writes as `<lane>/<vm>.json`.  Three VMs, one thread each:

- `ansible`, the critical path (Ansible's controller and a handful of modules, each a
  Python start under emulation), in a small guest (one node, 2 CPUs) at the lane's
  priority;
- `lifecycle` (6 boots: probe, v1, v2, drift, tampered, revert, then the TuneD owner)
  and `cloud-init` (2 boots, small guest), each in a thread of its own; the VMs are
  weighted by their length (PRIORITY) and the tests fill the rest.

Run by hand for one VM: `python tests/helpers/vmlane.py DIR lifecycle`.  Every VM's wall
time goes to `<lane>/times.tsv` (and to `$HOSTC_TIMINGS`, which `.ci/run` prints).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "vm"
VM_BOOT = ROOT.parent / "shared" / "tools" / "vm-boot"
CACHE = Path(os.environ.get("HOSTC_VM_CACHE", "/var/tmp/hostc-vm"))
#: the lifecycle and cloud-init guests: 2 NUMA nodes x 4 CPUs, SMT 2, hugepages per node
SHAPE = ["--numa", "4,4", "--smt", "2", "--mem-per-node", "4608"]
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
#: boots per VM (the wait's bound: each boot's limit plus set-up)
BOOTS = {"ansible": 2, "lifecycle": 6, "cloud-init": 2}
#: the VM each fixture of tests/vm waits for: what the selected tests need booted
FIXTURES = {"lifecycle_vm": "lifecycle", "cloud_init_vm": "cloud-init", "ansible_vm": "ansible"}
#: Each VM's scheduling weight, as the nice value of its QEMU's autogroup.  vm-boot starts
#: QEMU in a session of its own, and with autogroups (Debian's default) the kernel
#: shares the CPUs fairly between sessions whatever a process's own nice value says:
#: three VMs and the tests would get half a core each, and the longest VM would finish
#: last, alone.  So the VMs come first, the longest (the lifecycle VM, 6 boots of 8
#: vCPUs) most, and the tests (their own session, weight 0) fill what is left.
PRIORITY = {"lifecycle": -10, "ansible": -5, "cloud-init": -5}
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


class Unavailable(Exception):
    """What the VM tests need is missing here (they skip locally, fail under CI=true)."""


def unavailable() -> str | None:
    """Why no VM can boot on this machine, or None.  An image that `vm-boot image` is
    building right now counts as there: `vm-boot run` waits for the build's lock (.ci/run
    builds it beside the tests, so the tests need not wait for it)."""
    if os.geteuid() != 0:
        return "vm-boot needs root"
    if not VM_BOOT.is_file():
        return f"{VM_BOOT} is missing"
    for tool in ("qemu-system-x86_64", "qemu-img"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not (CACHE / "base.img").is_file() and not _image_being_built():
        return f"no VM image in {CACHE}: run `{VM_BOOT} image`"
    return None


def _image_being_built() -> bool:
    """vm-boot holds its cache lock exclusively only while it builds the image (a run
    holds it shared): a shared request that would block means a build is under way."""
    try:
        f = open(CACHE / ".lock")  # noqa: SIM115 (closed below)
    except OSError:
        return False
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
    return False


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
    units = ["demo.service"] + (["vmtest-step.service"] if driver else [])
    if not driver:
        (dest / "etc/systemd/system/vmtest-step.service").unlink()
        (dest / "usr/local/sbin/vmtest-step").unlink()
    for unit in units:
        (wants / unit).symlink_to(f"/etc/systemd/system/{unit}")
    shutil.copytree(lib, dest / "opt/hostc-lib")
    return dest


def spec_dir(dest: Path, spec: Path, topology: Path) -> Path:
    """The spec as node.toml beside its snapshot (under the name the spec gives it)."""
    dest.mkdir(parents=True)
    shutil.copy(spec, dest / "node.toml")
    shutil.copy(topology, dest / topology.name)
    return dest / "node.toml"


def boot(out: Path, shape: list[str], *args: str | Path, boots: int, limit: int) -> dict[str, Any]:
    """vm-boot run; its summary.json (vm-boot's own exit status is in it as `ok`)."""
    done = subprocess.run(
        [str(VM_BOOT), "run", str(out), *shape, "--boots", str(boots), "--timeout", str(limit),
         *map(str, args)],
        capture_output=True, text=True, timeout=boots * limit + 300, check=False,
    )  # fmt: skip
    summary = out / "summary.json"
    if not summary.is_file():
        raise RuntimeError(f"vm-boot left no summary in {out}:\n{done.stderr[-3000:]}")
    doc: dict[str, Any] = json.loads(summary.read_text())
    return doc


# -- the three VMs -------------------------------------------------------------------


def lifecycle(work: Path, lib: Path) -> tuple[dict[str, Any], Path]:
    """6 boots driven by tests/vm/steps: (1) `hostc probe`, the pristine guest recorded,
    the v1 rootfs tree + apply.sh; (2) v1 in effect, v2 applied over it; (3) v2 in
    effect, drift; (4) tampered, hostc-revert; (5) the guest as before hostc, then the
    rootfs tree of tuned.toml (`[runtime] owner = "tuned"`) + its apply.sh; (6) TuneD's
    profile in effect (results under tuned/)."""
    if not PERF.is_file():
        raise Unavailable(f"no {PERF}: install linux-perf (Debian 12) for the guest's TuneD")
    tree = guest_tree(work / "rootfs", lib, driver=True)
    (tree / PERF.parent.relative_to("/")).mkdir(parents=True, exist_ok=True)
    shutil.copy(PERF, tree / PERF.relative_to("/"))
    vmtest = tree / "root/vmtest"
    shutil.copytree(HERE / "steps", vmtest / "steps")
    for version in ("v1", "v2", "tuned"):
        spec = spec_dir(vmtest / version, HERE / f"{version}.toml", HERE / "topology.toml")
        _hostc("build", spec, "--target", "rootfs", "--out", vmtest / version, "-q")
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


# -- the lane process ----------------------------------------------------------------


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc))
    tmp.rename(path)


def _time_row(lane: Path, what: str, seconds: float) -> None:
    row = f"{what}\t{seconds:.0f}\n"
    for path in (lane / "times.tsv", os.environ.get("HOSTC_TIMINGS")):
        if path:
            with open(path, "a") as f:
                f.write(row)


def _one(lane: Path, name: str, lib: Path | BaseException) -> None:
    start = time.monotonic()
    try:
        if isinstance(lib, BaseException):
            raise lib
        summary, results = VMS[name](lane / name, lib)
        doc: dict[str, Any] = {"summary": summary, "results": str(results)}
    except Unavailable as e:
        doc = {"unavailable": str(e)}
    except Exception as e:  # reported by the waiting test, with the lane's traceback
        doc = {"error": f"{e}\n{traceback.format_exc()}"}
    _time_row(lane, f"vm {name}", time.monotonic() - start)
    _write_json(lane / f"{name}.json", doc)


def _prioritize(lane: Path, done: threading.Event) -> None:
    """Until `done`: give each of this lane's QEMU processes its VM's PRIORITY (the nice
    value of its autogroup, /proc/PID/autogroup; each boot is a new QEMU)."""
    marks = {name: f"{lane}/{name}/out/".encode() for name in PRIORITY}
    seen: set[int] = set()
    while not done.wait(1):
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in seen:
                continue
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if not os.path.basename(cmdline.split(b"\0", 1)[0]).startswith(b"qemu-system"):
                continue
            for name, mark in marks.items():
                if mark in cmdline:
                    with contextlib.suppress(OSError):
                        Path(f"/proc/{entry}/autogroup").write_text(str(PRIORITY[name]))
                    seen.add(int(entry))


def main(lane: Path, names: list[str]) -> int:
    """Boot `names` (a subset of VMS) at once; one result file each."""
    start = time.monotonic()
    lib: Path | BaseException
    try:
        lib = guest_hostc(lane / "wheel")
    except Exception as e:
        lib = e
    _time_row(lane, "vm guest hostc wheel", time.monotonic() - start)
    done = threading.Event()
    watcher = threading.Thread(target=_prioritize, args=(lane, done), daemon=True)
    watcher.start()
    # one thread per VM, all booting at once: on two cores neither idles until the end
    # (one after the other, the lifecycle and cloud-init VMs outlasted the Ansible VM
    # while a core idled); PRIORITY decides who gets the CPU
    threads = [threading.Thread(target=_one, args=(lane, name, lib)) for name in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    _time_row(lane, "vm lane", time.monotonic() - start)
    (lane / "done").write_text("")
    return 0


# -- the suite's side: start once, wait for one VM -----------------------------------


def lane_dir() -> Path | None:
    """The session's lane folder, made by the pytest controller (HOSTC_VM_LANE)."""
    value = os.environ.get("HOSTC_VM_LANE")
    return Path(value) if value else None


def start(lane: Path, names: set[str]) -> bool:
    """Start the lane for `names` unless a process of this session already did; True if
    a lane runs (this call's or another's)."""
    if not names:
        return False
    try:
        fd = os.open(lane / "started", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return True
    log = open(lane / "lane.log", "w")  # noqa: SIM115 (the child holds it)
    child = subprocess.Popen(
        [sys.executable, __file__, str(lane), *sorted(names)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT,
    )  # fmt: skip
    os.write(fd, f"{child.pid}\n".encode())
    os.close(fd)
    return True


def _pid(lane: Path) -> int | None:
    try:
        return int((lane / "started").read_text())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a child of this process that exited is a zombie until reaped: ask /proc
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def result(lane: Path, name: str) -> tuple[dict[str, Any], Path]:
    """Wait for VM `name`'s result; AssertionError with the lane's words on failure,
    Unavailable when the machine lacks what it needs."""
    start(lane, {name})  # a test run alone, or a collection that did not start it
    path = lane / f"{name}.json"
    limit = time.monotonic() + 3600 + sum(BOOTS.values()) * ANSIBLE_BOOT_TIMEOUT
    while not path.is_file():
        pid = _pid(lane)
        if pid is not None and not _alive(pid) and not path.is_file():
            log = (lane / "lane.log").read_text()[-3000:] if (lane / "lane.log").exists() else ""
            raise AssertionError(f"the VM lane ended without a result for {name}:\n{log}")
        if time.monotonic() > limit:
            raise AssertionError(f"no result for VM {name} in {lane}")
        time.sleep(2)
    doc = json.loads(path.read_text())
    if "unavailable" in doc:
        raise Unavailable(doc["unavailable"])
    if "error" in doc:
        raise AssertionError(f"VM {name}: {doc['error']}")
    return doc["summary"], Path(doc["results"])


def wait_all(lane: Path, timeout: float) -> None:
    """Until a started lane is done (or gone): the timing-sensitive tests run alone."""
    limit = time.monotonic() + timeout
    while time.monotonic() < limit:
        pid = _pid(lane)
        if pid is None or (lane / "done").exists() or not _alive(pid):
            return
        time.sleep(2)


def stop(lane: Path) -> None:
    """End a lane still running (an interrupted session) with its VMs."""
    pid = _pid(lane)
    if pid is not None and _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
