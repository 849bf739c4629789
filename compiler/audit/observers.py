"""The generic readers the audit table names: how one kind of value is observed.

Each takes the HostReader and one Expect and returns what was Seen: the value found
(None: nothing to read), whether it matches (None: not observable here) and a
note (why not observable, or which file set a sysctl).  None of them knows a
particular setting; that is the table's job (`hostc.audit.observe`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hostc.audit import devices, hugepages, kthreads, order, reserved
from hostc.audit.host import HostReader
from hostc.audit.observe import Expect, Look
from hostc.audit.seen import Seen, absent
from hostc.audit.sysctld import winner
from hostc.cpuset import CpuListError, CpuSet
from hostc.diagnostics import HostcError
from hostc.inputs import is_number, loads_json

_absent = absent


def _compare(found: str, expected: str) -> Seen:
    return Seen(found, found == expected)


def _cpus(text: str) -> CpuSet | None:
    try:
        return CpuSet.parse(text)
    except (CpuListError, ValueError):
        return None


def cmdline_tokens(text: str) -> dict[str, str]:
    """The kernel's view: the last `key=value` (or bare flag) of each key wins."""
    out: dict[str, str] = {}
    for word in text.split():
        key = word.partition("=")[0]
        out[key] = word
    return out


def cmdline(host: HostReader, e: Expect) -> Seen:
    text = host.text("/proc/cmdline")
    if text is None:
        return _absent("/proc/cmdline cannot be read")
    found = cmdline_tokens(text).get(e.args[0])
    return Seen(found or "(absent)", found == e.expected)


def cmdline_word(host: HostReader, e: Expect) -> Seen:
    """A key the kernel applies at every occurrence: the exact word must be there; the
    other words of its key are shown, not judged."""
    text = host.text("/proc/cmdline")
    if text is None:
        return _absent("/proc/cmdline cannot be read")
    words = text.split()
    if e.expected in words:
        return Seen(e.expected, True)
    same = [w for w in words if w.partition("=")[0] == e.args[0]]
    return Seen(" ".join(same) or "(absent)", False)


def value(host: HostReader, e: Expect) -> Seen:
    text = host.text(e.args[0])
    if text is None:
        return _absent(f"{e.args[0]} does not exist here")
    return _compare(text.strip(), e.expected)


def release(host: HostReader, e: Expect) -> Seen:
    """A kernel release against `major.minor`: 6.8.0-45-generic is a 6.8."""
    text = host.text(e.args[0])
    if text is None:
        return _absent(f"{e.args[0]} does not exist here")
    found = text.strip()
    head = ".".join(found.split("-")[0].split(".")[:2])
    return Seen(found, head == e.expected)


def cpulist(host: HostReader, e: Expect) -> Seen:
    text = host.text(e.args[0])
    if text is None:
        return _absent(f"{e.args[0]} does not exist here")
    found = _cpus(text)
    return Seen(str(found) if found is not None else text.strip(), found == _cpus(e.expected))


def mask(host: HostReader, e: Expect) -> Seen:
    text = host.text(e.args[0])
    if text is None:
        return _absent(f"{e.args[0]} does not exist here")
    try:
        found = CpuSet.from_mask(text)
    except (CpuListError, ValueError):
        return Seen(text.strip(), False, "not a CPU mask")
    return Seen(str(found), found == _cpus(e.expected))


def selected(host: HostReader, e: Expect) -> Seen:
    """A sysfs choice file: `always [madvise] never` → madvise."""
    text = host.text(e.args[0])
    if text is None:
        return _absent(f"{e.args[0]} does not exist here")
    words = text.split()
    chosen = next((w[1:-1] for w in words if w.startswith("[") and w.endswith("]")), None)
    return _compare(chosen or text.strip(), e.expected)


def first_word(host: HostReader, e: Expect) -> Seen:
    text = host.text(e.args[0])
    if text is None:
        return _absent(f"{e.args[0]} does not exist here (is the service installed?)")
    return _compare((text.split() or [""])[0], e.expected)


def sysctl(host: HostReader, e: Expect) -> Seen:
    key = e.args[0]
    text = host.text("/proc/sys/" + key.replace(".", "/"))
    if text is None:
        return _absent(f"this kernel has no {key}")
    found = " ".join(text.split())
    won = winner(host, key)
    note = f"{won[0]} sets {won[1]}" if won is not None else "no sysctl.d file sets it"
    return Seen(found, found == e.expected, note)


def manager(host: HostReader, e: Expect) -> Seen:
    props = host.show(None)
    if props is None or e.args[0] not in props:
        return _absent("systemd's manager cannot be asked here (no systemd running)")
    return _compare(props[e.args[0]], e.expected)


def _status_field(host: HostReader, pid: str, field: str) -> str | None:
    text = host.text(f"/proc/{pid}/status")
    for line in (text or "").splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return value.strip()
    return None


def _cpu_field(host: HostReader, pid: str, e: Expect) -> Seen:
    value = _status_field(host, pid, e.args[1])
    if value is None:
        return _absent(f"/proc/{pid}/status has no {e.args[1]}")
    found = _cpus(value)
    return Seen(str(found) if found is not None else value, found == _cpus(e.expected))


def pid_cpus(host: HostReader, e: Expect) -> Seen:
    return _cpu_field(host, e.args[0], e)


def _main_pid(host: HostReader, unit: str) -> str | Seen:
    """The unit's running main process (what the kernel enforces, not its unit file)."""
    props = host.show(unit)
    if props is None:
        return _absent("systemd cannot be asked here (no systemd running)")
    pid = props.get("MainPID", "0")
    if props.get("LoadState") == "not-found":
        return _absent(f"{unit} is not installed")
    if not is_number(pid) or pid == "0":
        return _absent(f"{unit} is not running")
    return pid


def unit_cpus(host: HostReader, e: Expect) -> Seen:
    pid = _main_pid(host, e.args[0])
    return pid if isinstance(pid, Seen) else _cpu_field(host, pid, e)


def unit_numa(host: HostReader, e: Expect) -> Seen:
    """Every mapping's policy in numa_maps (the task's policy where a mapping has none)."""
    pid = _main_pid(host, e.args[0])
    if isinstance(pid, Seen):
        return pid
    text = host.text(f"/proc/{pid}/numa_maps")
    if text is None:
        return _absent(f"/proc/{pid}/numa_maps cannot be read (a kernel without NUMA)")
    policies = {line.split()[1] for line in text.splitlines() if len(line.split()) > 1}
    return Seen(",".join(sorted(policies)) or "-", policies == {e.expected})


#: The shared CPU pool's QoS classes, under the systemd and the cgroupfs cgroup drivers
#: (cgroup v2): their containers run on the pod's cpuset, never pinned by the kubelet.
SHARED_POOLS = (
    "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice",
    "/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice",
    "/sys/fs/cgroup/kubepods/burstable",
    "/sys/fs/cgroup/kubepods/besteffort",
)


def pod_cpus(host: HostReader, e: Expect) -> Seen:
    """Each running Burstable/BestEffort container's first process against its cgroup's
    cpuset: a narrower affinity is the runtime's own affinity leaking into its children
    (runc < 1.2.7/1.3.1 on kernels >= 6.2, containerd #11345).  The kernel does not show the
    affinity a process asked for (user_cpus_ptr), so the container is what can be seen."""
    seen, narrow = 0, []
    for pool in SHARED_POOLS:
        for pod in host.listdir(pool):
            for ctr in host.listdir(f"{pool}/{pod}"):
                d = f"{pool}/{pod}/{ctr}"
                pids = (host.text(f"{d}/cgroup.procs") or "").split()
                allowed = _status_field(host, pids[0], "Cpus_allowed_list") if pids else None
                cpuset = _cpus(host.text(f"{d}/cpuset.cpus.effective") or "")
                if allowed is None or cpuset is None:
                    continue
                seen += 1
                if _cpus(allowed) != cpuset:
                    narrow.append(f"{ctr} runs on {allowed} of its {cpuset}")
    if not seen:
        return _absent("no running Burstable or BestEffort container to look at")
    found = "; ".join(narrow[:3]) if narrow else f"{seen} containers on their pod's cpuset"
    return Seen(found, not narrow)


def gpudirect(host: HostReader, e: Expect) -> Seen:
    """The path NICs can take to GPU memory: DMA-BUF (the open kernel modules, Linux >=
    5.12) and/or nvidia-peermem loaded; judged against the spec's mode."""
    version = host.text("/proc/driver/nvidia/version")
    if version is None:
        return _absent("no NVIDIA driver loaded")
    release = (host.text("/proc/sys/kernel/osrelease") or "0.0").strip()
    nums = [int(x) for x in re.findall(r"[0-9]+", release)[:2]] + [0, 0]
    paths = []
    if "Open Kernel Module" in version and (nums[0], nums[1]) >= (5, 12):
        paths.append("DMA-BUF")
    if any(
        x.split()[:1] == ["nvidia_peermem"] for x in (host.text("/proc/modules") or "").splitlines()
    ):
        paths.append("nvidia-peermem")
    wanted = {"dmabuf": ["DMA-BUF"], "peermem": ["nvidia-peermem"]}.get(e.args[0], paths)
    ok = bool(paths) and all(p in paths for p in wanted)
    return Seen(" and ".join(paths) or "none", ok)


def unit(host: HostReader, e: Expect) -> Seen:
    props = host.show(e.args[0])
    if props is None:
        return _absent("systemd cannot be asked here (no systemd running)")
    if props.get("LoadState") == "not-found":
        return Seen("not installed", e.expected == "inactive")
    return _compare(props.get(e.args[1], ""), e.expected)


def per_cpu(host: HostReader, e: Expect) -> Seen:
    """Every cpufreq policy: the distinct values found."""
    base = "/sys/devices/system/cpu/cpufreq"
    policies = [p for p in host.listdir(base) if p.startswith("policy")]
    values = {(host.text(f"{base}/{p}/{e.args[0]}") or "").strip() for p in policies}
    values.discard("")
    if not values:
        return _absent(f"no CPU exposes {e.args[0]} (no cpufreq driver, e.g. a VM)")
    return Seen(",".join(sorted(values)), values == {e.expected})


def _irq_cpus(host: HostReader, irq: str) -> tuple[CpuSet | None, CpuSet | None]:
    eff = host.text(f"/proc/irq/{irq}/effective_affinity_list")
    allowed = host.text(f"/proc/irq/{irq}/smp_affinity_list")
    return (_cpus(eff) if eff else None, _cpus(allowed) if allowed else None)


def irqs_off(host: HostReader, e: Expect) -> Seen:
    """IRQs served on isolated CPUs although their mask allows a housekeeping one.

    A managed IRQ whose mask holds only isolated CPUs stays there (the kernel's
    `managed_irq` isolation moves it only when a housekeeping CPU is in the mask)."""
    isolated = _cpus(e.args[0]) or CpuSet()
    irqs = [n for n in host.listdir("/proc/irq") if is_number(n)]
    if not irqs:
        return _absent("/proc/irq cannot be listed")
    bad = []
    for n in irqs:
        eff, allowed = _irq_cpus(host, n)
        if eff is None or allowed is None or allowed <= isolated:
            continue
        if not eff.isdisjoint(isolated):
            bad.append(n)
    found = "none" if not bad else "IRQ " + ",".join(sorted(bad, key=int))
    return Seen(found, not bad)


def device_irqs(host: HostReader, e: Expect) -> Seen:
    base = f"/sys/bus/pci/devices/{e.args[0]}"
    irqs = host.listdir(f"{base}/msi_irqs")
    if not irqs:
        return _absent(f"no PCI device {e.args[0]} with MSI interrupts here (a VM has no GPU/NIC)")
    want = _cpus(e.expected) or CpuSet()
    off = [n for n in irqs if not ((_irq_cpus(host, n)[0] or want) <= want)]
    return Seen("IRQ " + ",".join(off) + " elsewhere" if off else e.expected, not off)


def module_absent(host: HostReader, e: Expect) -> Seen:
    text = host.text("/proc/modules")
    if text is None:
        return _absent("/proc/modules cannot be read")
    loaded = {line.split()[0] for line in text.splitlines() if line.split()}
    return Seen("loaded" if e.args[0] in loaded else "not loaded", e.args[0] not in loaded)


def module_param(host: HostReader, e: Expect) -> Seen:
    text = host.text(e.args[0])
    if text is None:
        return _absent("the module is not loaded (or has no such parameter)")
    return _compare(text.strip(), e.expected)


def checkpoint(host: HostReader, e: Expect) -> Seen:
    text = host.text(e.args[0])
    if text is None:
        return _absent(f"{e.args[0]} does not exist (kubelet not installed or never started)")
    try:
        doc = loads_json(text, e.args[0], "kubelet checkpoint")
    except HostcError:
        return Seen(None, False, f"{e.args[0]} is not JSON")
    name = doc.get("policyName") if isinstance(doc, dict) else None
    return Seen(str(name), str(name).lower() == e.expected.lower())


OBSERVERS: dict[Look, Callable[[HostReader, Expect], Seen]] = {
    Look.CMDLINE: cmdline,
    Look.CMDLINE_WORD: cmdline_word,
    Look.VALUE: value,
    Look.RELEASE: release,
    Look.CPULIST: cpulist,
    Look.MASK: mask,
    Look.SELECTED: selected,
    Look.FIRST_WORD: first_word,
    Look.SYSCTL: sysctl,
    Look.MANAGER: manager,
    Look.PID_CPUS: pid_cpus,
    Look.UNIT_CPUS: unit_cpus,
    Look.SERVICE_CPUS: unit_cpus,
    Look.UNIT_NUMA: unit_numa,
    Look.UNIT: unit,
    Look.PER_CPU: per_cpu,
    Look.IRQS_OFF: irqs_off,
    Look.DEVICE_IRQS: device_irqs,
    Look.MODULE_ABSENT: module_absent,
    Look.MODULE_PARAM: module_param,
    Look.CHECKPOINT: checkpoint,
    Look.POD_CPUS: pod_cpus,
    Look.GPUDIRECT: gpudirect,
    **devices.OBSERVERS,
    **kthreads.OBSERVERS,
    **hugepages.OBSERVERS,
    **order.OBSERVERS,
    **reserved.OBSERVERS,
}
