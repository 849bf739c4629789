"""Yardsticks for benchmarks/run.py: instruction counts, and two peers run here.

instructions  `valgrind --tool=callgrind` counts every user-space instruction of a
              process: the same figure on a busy machine as on an idle one (repeat
              runs agree to 0.1 %), blind to system time and memory stalls
TuneD         its own profile loader, profiles per CPU-second, on THIS interpreter (the
              distribution's TuneD package put on its path): the same Python build on
              both sides (Debian's python3 runs the same code ~1.28x faster than a
              pyenv build, so two interpreters would skew the comparison).  A reference:
              the loader reads two INI profiles and writes nothing, a build renders ~18
              files
Ansible       the `template` module rendering the same files as one hostc host, in check
              mode (`-c local --check`): the peer doing the same work, per host
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TUNED_PROFILE = """\
[main]
summary=hostc benchmark peer
include=throughput-performance
[variables]
isolated_cores=2-31
[cpu]
governor=performance
force_latency=cstate.id_no_zero:1|3
[vm]
transparent_hugepages=madvise
[sysctl]
vm.max_map_count=1048576
vm.swappiness=1
net.core.rmem_max=268435456
[irqbalance]
banned_cpus=${isolated_cores}
[scheduler]
isolated_cores=${isolated_cores}
[bootloader]
cmdline_hostc=+isolcpus=managed_irq,domain,${isolated_cores} nohz_full=${isolated_cores}
"""
TUNED_LOOP = """\
import sys, time
sys.path.append(sys.argv[3])  # the distribution's packages, after this interpreter's own
import tuned.profiles as P
from tuned.utils.global_config import GlobalConfig
from tuned.profiles.variables import Variables
dirs, seconds = sys.argv[1].split(":"), float(sys.argv[2])
def load():
    v = Variables()
    p = P.Loader(P.Locator(dirs), P.Factory(), P.Merger(), GlobalConfig(), v).load(["hostc-bench"])
    return {u: {k: v.expand(x) for k, x in unit.options.items()} for u, unit in p.units.items()}
load()
n, t0 = 0, time.process_time()
while time.process_time() - t0 < seconds:
    load(); n += 1
print(n / (time.process_time() - t0))
"""
#: where Debian and Fedora install TuneD's Python package
TUNED_SITES = ("/usr/lib/python3/dist-packages", "/usr/lib/python3.11/site-packages")


def instructions(argv: list[str], env: dict[str, str]) -> int | None:
    """User-space instructions of one run of `argv` (None: valgrind is not installed)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    with tempfile.TemporaryDirectory(prefix="hostc-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            env=env,
            check=True,
            capture_output=True,
        )
        found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
        if found is None:
            raise SystemExit(f"no instruction total in callgrind's output for {argv}")
        return int(found.group(1))


def tuned_rate(work: Path, seconds: float) -> tuple[float | None, str]:
    """TuneD profile loads per CPU-second on this interpreter, or None and why not."""
    site = next((s for s in TUNED_SITES if (Path(s) / "tuned").is_dir()), None)
    if site is None:
        return None, "skipped: TuneD is not installed (no tuned package in " + (
            ", ".join(TUNED_SITES) + ")"
        )
    prof = work / "tuned" / "hostc-bench"
    prof.mkdir(parents=True)
    (prof / "tuned.conf").write_text(TUNED_PROFILE)
    dirs = [d for d in ("/usr/lib/tuned", "/usr/lib/tuned/profiles") if Path(d).is_dir()]
    search = ":".join([*dirs, str(work / "tuned")])
    r = subprocess.run(
        [sys.executable, "-c", TUNED_LOOP, search, str(seconds), site],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"skipped: TuneD's loader failed on this interpreter: {tail}"
    return float(r.stdout.strip()), f"one profile (include=throughput-performance), {site}"


PLAY = """\
- hosts: all
  gather_facts: false
  tasks:
"""
TASK = """\
    - ansible.builtin.template:
        src: {src}
        dest: "{dest}/{{{{ inventory_hostname }}}}/{name}"
"""


def ansible_cpu_per_host(work: Path, files: list[Path], hosts: int) -> tuple[float | None, str]:
    """CPU seconds a host of `ansible-playbook -c local --check` spends rendering `files`
    (each one `template` task; its text kept verbatim), or None and why not."""
    playbook_cmd = Path(sys.executable).parent / "ansible-playbook"
    if not playbook_cmd.exists():
        found = shutil.which("ansible-playbook")
        if found is None:
            return None, "skipped: ansible-playbook is not installed"
        playbook_cmd = Path(found)
    root = work / "ansible"
    (root / "templates").mkdir(parents=True)
    tasks = []
    for i, f in enumerate(files):
        src = root / "templates" / f"{i:02d}-{f.name}.j2"
        # verbatim: the text between raw markers is not templated ({# in a script is bash)
        src.write_text("{% raw %}" + f.read_text() + "{% endraw %}")
        tasks.append(TASK.format(src=src, dest=root / "out", name=src.stem))
    (root / "play.yml").write_text(PLAY + "".join(tasks))
    names = [f"host{i:03d}" for i in range(hosts)]
    (root / "inventory.ini").write_text(
        "\n".join(f"{n} ansible_connection=local" for n in names) + "\n"
    )
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(root / "home"),
        "ANSIBLE_LOCAL_TEMP": str(root / "tmp"),
        "ANSIBLE_NOCOWS": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_FORKS": "2",
    }
    argv = [str(playbook_cmd), "-i", str(root / "inventory.ini"), "--check", str(root / "play.yml")]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert p.stdout is not None
    output = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        tail = output.decode(errors="replace").strip().splitlines()[-3:]
        return None, "skipped: ansible-playbook failed: " + " / ".join(tail)
    cpu = usage.ru_utime + usage.ru_stime
    return cpu / hosts, f"{hosts} hosts × {len(files)} template tasks, -c local --check, forks 2"
