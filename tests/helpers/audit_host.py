"""A host tree on which a Plan has fully taken effect, for the audit tests to tamper with.

Written from the audit table's expectations, one small writer per observer kind,
so a test changes exactly one thing and sees audit notice exactly that.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from hostc.audit.host import CAPTURED
from hostc.audit.hugepages import captured
from hostc.audit.observe import Expect, expectations
from hostc.cpuset import CpuSet
from hostc.plan.model import Plan

#: A BestEffort container's cgroup under the systemd cgroup driver.
POD = (
    "/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice"
    "/cri-containerd-1.scope"
)
BASE_CMDLINE = "BOOT_IMAGE=/vmlinuz-6.1.0 root=/dev/vda1 ro quiet"


def put(root: Path, rel: str, text: str) -> None:
    path = root / rel.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def show(root: Path, unit: str | None, props: dict[str, str]) -> None:
    """What `systemctl show` prints, stored where a capture stores it."""
    rel = f"{CAPTURED}/systemctl-show/{unit or 'manager'}"
    old = root / rel
    have = (
        dict(line.partition("=")[::2] for line in old.read_text().splitlines())
        if old.exists()
        else {}
    )
    put(root, rel, "".join(f"{k}={v}\n" for k, v in {**have, **props}.items()))


def _value_file(root: Path, e: Expect) -> None:
    text = e.expected
    if e.kind == "mask":
        text = CpuSet.parse(e.expected).mask()
    elif e.kind == "selected":
        text = f"always [{e.expected}] never"
    put(root, e.args[0], text + "\n")


def _irqs(root: Path, plan: Plan) -> None:
    """One IRQ allowed everywhere, served on a housekeeping CPU."""
    part = plan.partition
    put(root, "/proc/irq/24/smp_affinity_list", f"{part.online}\n")
    put(root, "/proc/irq/24/effective_affinity_list", f"{part.housekeeping.min()}\n")


def _pm_qos(root: Path, e: Expect) -> None:
    """Every CPU with a 2 µs state (C1E-like) and the latency hostc-tuning writes."""
    for cpu in CpuSet.parse(e.args[1]):
        base = f"/sys/devices/system/cpu/cpu{cpu}"
        put(root, f"{base}/cpuidle/state{e.args[0]}/latency", "2\n")
        put(root, f"{base}/power/pm_qos_resume_latency_us", "2\n")


def _each(root: Path, e: Expect) -> None:
    for i in range(2):
        put(root, e.args[0].replace("*", str(i)), e.expected + "\n")


def channel_queues(root: Path, pci: str, rx: int, tx: int) -> None:
    """The netdev of PCI function `pci` with `rx` receive and `tx` transmit queues."""
    base = f"/sys/bus/pci/devices/{pci}/net/eth{pci[5:7]}/queues"
    for q in range(rx):
        put(root, f"{base}/rx-{q}/rps_cpus", "0\n")
    for q in range(tx):
        put(root, f"{base}/tx-{q}/xps_cpus", "0\n")


def _channels(root: Path, e: Expect) -> None:
    channel_queues(root, e.args[0], int(e.args[1]), int(e.args[1]))


def acs_config(ctrl: int) -> bytes:
    """A bridge's config space with one extended capability, ACS, at 0x100."""
    data = bytearray(4096)
    data[0x100:0x104] = (0x0D | 1 << 16).to_bytes(4, "little")  # ACS, version 1, last
    data[0x106:0x108] = ctrl.to_bytes(2, "little")
    return bytes(data)


def _iommu(root: Path, e: Expect) -> None:
    put(root, "/sys/kernel/iommu_groups/0/type", "identity\n")
    put(root, "/sys/kernel/iommu_groups/1/type", "unmanaged\n")  # a VFIO device is no drift


def _acs(root: Path, e: Expect) -> None:
    path = root / "sys/bus/pci/devices/0000:00:01.0/config"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(acs_config(0x0001 | 0x0010))  # source validation and upstream forwarding


def _started_before(root: Path, e: Expect) -> None:
    """hostc's tuning unit finished 5 s after boot, every unit it orders started at 6 s."""
    first, *units = e.args
    show(root, first, {"LoadState": "loaded", "ActiveState": "active"})
    show(root, first, {"ActiveEnterTimestampMonotonic": "5000000"})
    for unit in units:
        props = {"LoadState": "loaded", "InactiveExitTimestampMonotonic": "6000000"}
        show(root, unit, {**props, "After": f"basic.target {first}"})


def _kubelet_reserved(root: Path, e: Expect) -> None:
    """The static policy's checkpoint as the kubelet initialises it: every online CPU in
    the shared pool, less the reserved ones under strict-cpu-reservation."""
    path, _, strict, online, reserved = e.args
    old = root / path.lstrip("/")
    doc = json.loads(old.read_text()) if old.exists() else {"policyName": "static"}
    shared = CpuSet.parse(online) - CpuSet.parse(reserved) if strict == "1" else online
    put(root, path, json.dumps({**doc, "defaultCpuSet": str(shared), "entries": {}}))


def rcu_kthreads(root: Path, cpus: CpuSet, allowed: CpuSet) -> None:
    """An rcuop/N kthread for each CPU of `cpus`, each allowed on `allowed`."""
    for cpu in cpus:
        pid = 3000 + cpu
        put(root, f"/proc/{pid}/comm", f"rcuop/{cpu}\n")
        put(root, f"/proc/{pid}/status", f"Name:\trcuop/{cpu}\nCpus_allowed_list:\t{allowed}\n")


DEVICE_KINDS = {
    "pm-qos": _pm_qos,
    "each-value": _each,
    "nic-channels": _channels,
    "iommu-mode": _iommu,
    "acs-redirect": _acs,
    "started-before": _started_before,
    "kubelet-reserved": _kubelet_reserved,
}


def perfect_host(plan: Plan, root: Path) -> Path:
    tokens: list[str] = []
    status: dict[str, dict[str, str]] = defaultdict(dict)
    sysctl_d: list[str] = []
    pids: dict[str, str] = {}
    modules: dict[str, str] = {}
    for i, e in enumerate(expectations(plan)):
        if e.kind in ("cmdline", "cmdline-word"):
            tokens.append(e.expected)
        elif e.kind in ("value", "cpulist", "mask", "selected", "first-word", "module-param"):
            _value_file(root, e)
        elif e.kind == "release":
            put(root, e.args[0], f"{e.expected}.0-45-generic\n")
        elif e.kind == "sysctl":
            put(root, "/proc/sys/" + e.args[0].replace(".", "/"), e.expected + "\n")
            sysctl_d.append(f"{e.args[0]} = {e.expected}\n")
        elif e.kind == "manager":
            show(root, None, {e.args[0]: e.expected})
        elif e.kind == "pid-cpus":
            status[e.args[0]][e.args[1]] = e.expected
        elif e.kind in ("unit-cpus", "service-cpus", "unit-numa"):
            pid = pids.setdefault(e.args[0], str(1000 + len(pids)))
            show(root, e.args[0], {"LoadState": "loaded", "ActiveState": "active", "MainPID": pid})
            if e.kind != "unit-numa":
                status[pid][e.args[1]] = e.expected
            else:
                put(root, f"/proc/{pid}/numa_maps", f"00400000 {e.expected} file=/bin/sh N1=2\n")
        elif e.kind == "unit":
            show(root, e.args[0], {"LoadState": "loaded", e.args[1]: e.expected})
        elif e.kind == "per-cpu":
            put(root, f"/sys/devices/system/cpu/cpufreq/policy0/{e.args[0]}", e.expected + "\n")
        elif e.kind == "irqs-off":
            _irqs(root, plan)
        elif e.kind == "device-irqs":
            put(root, f"/sys/bus/pci/devices/{e.args[0]}/msi_irqs/{100 + i}", "msix\n")
            put(root, f"/proc/irq/{100 + i}/effective_affinity_list", e.expected + "\n")
        elif e.kind == "module-absent":
            modules.setdefault("ext4", "ext4 999424 1 - Live 0x0\n")
        elif e.kind == "gpudirect":  # the proprietary driver with nvidia-peermem loaded
            put(
                root,
                "/proc/driver/nvidia/version",
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module\n",
            )
            modules["nvidia_peermem"] = "nvidia_peermem 16384 0 - Live 0x0\n"
        elif e.kind in ("rcu-offloaded", "rcu-kthread-cpus"):  # offloaded, on housekeeping
            rcu_kthreads(root, plan.partition.isolated, plan.partition.housekeeping)
        elif e.kind in DEVICE_KINDS:
            DEVICE_KINDS[e.kind](root, e)
        elif e.kind == "checkpoint":
            put(root, e.args[0], json.dumps({"policyName": e.expected, "checksum": 1}))
        elif e.kind == "hugepage-map":  # the mapping as a capture of the live host keeps it
            kib, node = int(e.args[0]), int(e.args[1])
            line = f"mapped 7f0040000000 default huge anon=1 N{node}=1 kernelpagesize_kB={kib}"
            put(root, captured(kib, node), line + "\n")
        elif e.kind == "pod-cpus":  # one BestEffort container on the whole shared pool
            shared = str(plan.partition.online)
            put(root, f"{POD}/cgroup.procs", "4242\n")
            put(root, f"{POD}/cpuset.cpus.effective", shared + "\n")
            status["4242"]["Cpus_allowed_list"] = shared
    put(root, "/proc/cmdline", " ".join([BASE_CMDLINE, *tokens]) + "\n")
    if modules:
        put(root, "/proc/modules", "".join(modules.values()))
    put(root, "/etc/sysctl.d/90-hostc.conf", "".join(sysctl_d))
    for pid, fields in status.items():
        put(root, f"/proc/{pid}/status", "".join(f"{k}:\t{v}\n" for k, v in fields.items()))
    return root
