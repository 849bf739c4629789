"""The VM lane: the booted-VM tests' VMs, run in one background process beside the rest
of the suite, so that the two cores of a CI machine both work.

Each VM is single-threaded TCG (no KVM here), so one VM keeps one host core busy for
minutes while its pytest worker only waits.  The suite's collection starts this lane as
soon as it sees a selected test that needs a VM (`start`, once per session, whichever
process gets there first); the VM tests' fixtures then wait for their VM's result
(`result`), which the lane writes as `<lane>/<vm>.json`.  Three VMs, one thread each:

`lifecycle`, `cloud-init` and `ansible` (tests/helpers/vmguests.py), each in a thread of
its own; the VMs are weighted by their length (PRIORITY) and the tests fill the rest.

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
from pathlib import Path
from typing import Any

from vmguests import (
    ANSIBLE_BOOT_TIMEOUT,
    BOOTS,
    CACHE,
    ROOT,
    VM_BOOT,
    VMS,
    Unavailable,
    guest_hostc,
)

__all__ = ["Unavailable"]  # raised by result(), from the guests

#: the VM each fixture of tests/vm waits for: what the selected tests need booted
FIXTURES = {"lifecycle_vm": "lifecycle", "cloud_init_vm": "cloud-init", "ansible_vm": "ansible"}
#: Each VM's scheduling weight, as the nice value of its QEMU's autogroup.  vm-boot starts
#: QEMU in a session of its own, and with autogroups (Debian's default) the kernel
#: shares the CPUs fairly between sessions whatever a process's own nice value says:
#: three VMs and the tests would get half a core each, and the longest VM would finish
#: last, alone.  Every VM is single-threaded TCG (vm-boot's choice when a VM has more
#: vCPUs than the machine has CPUs, and the small guests ask for it; multi-threaded TCG
#: took 10 % more CPU for the 8-vCPU shape): one core at most each.  The longest comes
#: first, so that it runs on a core of its own from the start and is not left running
#: alone at the end; the shorter two share the second core before the tests (their own
#: session, weight 0), so that they end early too and the tests fill both cores last.
#: The lifecycle VM (6 boots of 8 vCPUs) is now the longest: the Ansible play's apply
#: steps in one command made the Ansible VM's CPU 394 s (its first boot 263 s of play)
#: against the lifecycle VM's first boot alone, 719 s at the lowest weight.  (In CI 37,
#: the Ansible VM then the longest and not first, it ran 4.5 minutes alone at the end.)
PRIORITY = {"lifecycle": -10, "ansible": -7, "cloud-init": -5}


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


def _image_being_built(wait: bool = False) -> bool:
    """vm-boot holds its cache lock exclusively only while it builds the image (a run
    holds it shared): a shared request that would block means a build is under way.
    `wait`: block until that build is done instead (a shared lock, released at once).
    False where there is no cache yet."""
    try:
        f = open(CACHE / ".lock")  # noqa: SIM115 (closed below)
    except OSError:
        return False
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
    return False


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
        _time_row(lane, f"vm {name}: CPU (vm-boot and QEMU)", summary["host_cpu_seconds"])
        for b in summary.get("boots", []):
            _time_row(lane, f"vm {name}: boot {b['boot']}", b["seconds"])
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


def _wait_for_image() -> None:
    """Until an image build under way (`.ci/run` starts one beside the tests) is done.
    vm-boot run, finding no image, builds it first under the cache's exclusive lock and
    keeps that lock (downgraded to shared) through its whole run, so runs started
    before the image exists take turns: in a CI run on a fresh machine the three VMs ran
    one after the other (cloud-init, then lifecycle, the Ansible VM waiting for both).
    Once the build is done every run finds the image and they share the cache."""
    _image_being_built(wait=True)


def main(lane: Path, names: list[str]) -> int:
    """Boot `names` (a subset of VMS) at once; one result file each."""
    start = time.monotonic()
    lib: Path | BaseException
    try:
        lib = guest_hostc(lane / "wheel")
    except Exception as e:
        lib = e
    _time_row(lane, "vm guest hostc wheel", time.monotonic() - start)
    waited = time.monotonic()
    _wait_for_image()
    _time_row(lane, "vm lane: waiting for the image build", time.monotonic() - waited)
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


def stop(lane: Path) -> None:
    """End a lane still running (an interrupted session) with its VMs."""
    pid = _pid(lane)
    if pid is not None and _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not set(sys.argv[2:]) <= set(VMS):
        sys.exit(f"usage: {sys.argv[0]} LANE_DIR [{' '.join(sorted(VMS))}]...")
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
