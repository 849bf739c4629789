"""Observers of what hostc-tuning and the kernel arguments set on devices and CPUs:
per-CPU PM QoS, one value in every file of a sysfs glob, NIC queues, the IOMMU's
domain type and PCIe ACS redirect.  Each reads sysfs only (no ethtool, no setpci), so
a directory copy or a capture shows the same; hostc-verify reads the same files."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable

from hostc.audit.host import HostReader
from hostc.audit.observe import Expect, Look
from hostc.audit.seen import Seen, absent
from hostc.cpuset import CpuListError, CpuSet
from hostc.inputs import is_number
from hostc.knowledge import kernel as kf

CPU = "/sys/devices/system/cpu"
PCI = "/sys/bus/pci/devices"


def pm_qos(host: HostReader, e: Expect) -> Seen:
    """Each CPU's resume latency against its cpuidle state's exit latency (1 at least,
    as hostc-tuning writes it); CPUs without that state are not judged."""
    state = e.args[0]
    try:
        cpus = CpuSet.parse(e.args[1])
    except (CpuListError, ValueError):
        return absent(f"{e.args[1]!r} is not a CPU list")
    off, judged = [], 0
    for cpu in cpus:
        lat = (host.text(f"{CPU}/cpu{cpu}/cpuidle/state{state}/latency") or "").strip()
        if not is_number(lat):
            continue
        judged += 1
        found = (host.text(f"{CPU}/cpu{cpu}/power/pm_qos_resume_latency_us") or "").strip()
        if found != str(max(1, int(lat))):
            off.append(f"cpu{cpu}={found or '(absent)'}")
    if not judged:
        return absent(f"no CPU of {cpus} has cpuidle state {state} (no cpuidle driver, a VM)")
    return Seen(", ".join(off[:4]) + (" …" if len(off) > 4 else "") if off else e.expected, not off)


def each_value(host: HostReader, e: Expect) -> Seen:
    """Every file a one-wildcard sysfs glob names holds the value."""
    head, _, tail = e.args[0].partition("*")
    parent, _, prefix = head.rpartition("/")
    rest = tail.partition("/")[2]
    names = [n for n in host.listdir(parent) if fnmatch.fnmatchcase(n, prefix + "*")]
    values = {(host.text(f"{parent}/{n}/{rest}") or "").strip() for n in sorted(names)}
    values.discard("")
    if not values:
        return absent(f"no {e.args[0]} here")
    return Seen(",".join(sorted(values)), values == {e.expected})


def queue_pairs(names: list[str]) -> int:
    """A netdev's channels as sysfs bounds them: each combined channel has one
    `queues/rx-K` and one `queues/tx-K`, so the smaller count.  Queues that are no
    channel add to one side only: mlx5 before Linux 6.1 shows a second receive group
    for AF_XDP (real_num_rx_queues = 2 x channels, MLX5E_NUM_RQ_GROUPS(XSK), until
    commit 3db4c85cde7a), and a PTP receive queue where ptp_rx is on."""
    rx = sum(q.startswith("rx-") for q in names)
    tx = sum(q.startswith("tx-") for q in names)
    return min(rx, tx) if tx else rx


def nic_channels(host: HostReader, e: Expect) -> Seen:
    """The most channels any netdev of the PCI function has (`queue_pairs`);
    hostc-tuning only lowers them."""
    base = f"{PCI}/{e.args[0]}/net"
    counts = [queue_pairs(host.listdir(f"{base}/{n}/queues")) for n in host.listdir(base)]
    counts = [c for c in counts if c]
    if not counts:
        return absent(f"no netdev of {e.args[0]} shows its queues here")
    return Seen(f"{max(counts)} queues", max(counts) <= int(e.args[1]))


def iommu_mode(host: HostReader, e: Expect) -> Seen:
    """Pass-through: no group whose default domain translates DMA.  No group at all
    means no IOMMU is on, which is pass-through too (not judged)."""
    groups = [g for g in host.listdir(kf.IOMMU_GROUPS) if is_number(g)]
    types = {g: (host.text(f"{kf.IOMMU_GROUPS}/{g}/type") or "").strip() for g in groups}
    types = {g: t for g, t in types.items() if t}
    if not types:
        return absent("no IOMMU group shows its type (no IOMMU on, or a kernel before 5.2)")
    dma = sorted((g for g, t in types.items() if t in kf.IOMMU_TRANSLATED), key=int)
    return Seen(f"translated in group {','.join(dma)}" if dma else e.expected, not dma)


def acs_control(config: bytes) -> int | None:
    """The ACS control register of one device's config space, None without ACS (or
    without extended config space: not root)."""
    off, hops = kf.PCI_EXT_CAP_START, 0
    while kf.PCI_EXT_CAP_START <= off <= len(config) - 8 and hops < 64:
        header = int.from_bytes(config[off : off + 4], "little")
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == kf.PCI_EXT_CAP_ID_ACS:
            at = off + kf.PCI_ACS_CTRL
            return int.from_bytes(config[at : at + 2], "little")
        off, hops = header >> 20, hops + 1
    return None


def acs_redirect(host: HostReader, e: Expect) -> Seen:
    """Every PCI device with ACS has request, completion redirect and egress control off."""
    on, readable = [], False
    for dev in sorted(host.listdir(PCI)):
        config = host.raw(f"{PCI}/{dev}/config") or b""
        readable = readable or len(config) > kf.PCI_EXT_CAP_START
        ctrl = acs_control(config)
        if ctrl is not None and ctrl & kf.ACS_REDIRECT_BITS:
            on.append(dev)
    if not readable:
        return absent("no PCI extended configuration space readable (needs root)")
    return Seen(f"on at {' '.join(on)}" if on else e.expected, not on)


OBSERVERS: dict[Look, Callable[[HostReader, Expect], Seen]] = {
    Look.PM_QOS: pm_qos,
    Look.EACH_VALUE: each_value,
    Look.NIC_CHANNELS: nic_channels,
    Look.IOMMU_MODE: iommu_mode,
    Look.ACS_REDIRECT: acs_redirect,
}
