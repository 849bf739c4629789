"""The one table audit has: each kind of Plan setting → what to expect and how to observe it.

Audit has no per-setting code outside this table.  A row's `expect` reads the
Plan and yields one `Expect` per observable value; its `observer` names one of
the generic readers in `hostc.audit.observers` (a kernel command line token, a
sysfs value, a CPU list, a unit property, …).  Adding a setting kind to the
Plan means adding a row here, nothing else.

Traps this table encodes (each has a test):
- `isolcpus=managed_irq,…` leaves /sys/devices/system/cpu/isolated empty (only
  domain isolation shows there), so isolation is read from /proc/cmdline, from
  nohz_full and from the IRQ masks, never from `isolated`.
- PID 1's limits are the kernel's, not `DefaultLimit*=`: the manager's
  properties are what services inherit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hostc.audit.expect import BOOT_CARRIERS as BOOT_CARRIERS
from hostc.audit.expect import MANAGER_CPUS_FILE as MANAGER_CPUS_FILE
from hostc.audit.expect import Expect as Expect
from hostc.audit.expect import Look as Look
from hostc.cpuset import CpuSet
from hostc.knowledge import kubelet as kf
from hostc.knowledge import kubelet_access as ka
from hostc.knowledge import runtime as rk
from hostc.knowledge.kernel import MULTI_VALUED
from hostc.knowledge.kubelet import CPU_STATE, MEMORY_STATE
from hostc.knowledge.runtime import SERVICE_PROBE, SLICE_CPUSET, WORKLOAD_SLICE
from hostc.plan.kernelargs import kernel_args
from hostc.plan.model import UNLIMITED, IrqOwner, Plan, Reason, RuntimeOwner, Value, When
from hostc.provenance import key
from hostc.settings import table as t
from hostc.settings.model import Per, UnitProperty
from hostc.units import format_kib


def _boot(token: str) -> tuple[tuple[str, ...], str]:
    return (BOOT_CARRIERS, token)


def _host(plan: Plan) -> Iterator[Expect]:
    """The machine the Plan was compiled for: another one makes every other row moot."""
    h, part = plan.host, plan.partition
    yield Expect(
        Look.CPULIST, "online CPUs", str(part.online), h.reason, ("/sys/devices/system/cpu/online",)
    )
    if h.kernel_version is not None:  # the facts hostc used depend on major.minor only
        release = "{}.{}".format(*h.kernel_version)
        yield Expect(
            Look.RELEASE, "kernel release", release, h.reason, ("/proc/sys/kernel/osrelease",)
        )


def _kernel_args(plan: Plan) -> Iterator[Expect]:
    """Last-one-wins keys by their last word; keys the kernel applies every time it meets
    them (`pci=`, the hugepage pairs) by their exact word."""
    for a in kernel_args(plan):
        kind = Look.CMDLINE_WORD if a.key in MULTI_VALUED else Look.CMDLINE
        yield Expect(kind, f"kernel {a.key}", str(a), a.reason, (a.key,), _boot(str(a)))


def _nohz(plan: Plan) -> Iterator[Expect]:
    m = plan.isolation_by("nohz_full")
    if m is not None and plan.partition.isolated:
        value = str(plan.partition.isolated)
        path = "/sys/devices/system/cpu/nohz_full"
        yield Expect(
            Look.CPULIST, "nohz_full CPUs", value, m.reason, (path,), _boot(f"nohz_full={value}")
        )


def _rcu(plan: Plan) -> Iterator[Expect]:
    """RCU callback offload (rcu_nocbs=): each offloaded CPU has its callback kthread, and
    those kthreads run on housekeeping CPUs (`hostc.audit.kthreads`; NTO's e2e 34358)."""
    m = plan.isolation_by("rcu_nocbs")
    part = plan.partition
    if m is None or not part.isolated:
        return
    cpus = str(m.cpus if m.cpus is not None else part.isolated)
    pending = _boot(f"rcu_nocbs={cpus}")
    yield Expect(Look.RCU_OFFLOADED, "RCU callbacks offloaded", cpus, m.reason, (), pending)
    why = Reason(
        m.reason.source,
        "the rcuop/rcuos/rcuog kthreads run the offloaded CPUs' callbacks and belong on "
        "housekeeping CPUs (Documentation/admin-guide/kernel-per-CPU-kthreads.rst); "
        "without nohz_full the kernel gives them every CPU",
    )
    hk = str(part.housekeeping)
    yield Expect(Look.RCU_KTHREAD_CPUS, "RCU offload kthreads' CPUs", hk, why, (), pending)


def _hugepages(plan: Plan) -> Iterator[Expect]:
    """Every pool's count per node where the Plan pins it (the node form, or written per
    node at runtime by hostc-hugepages), else its total; and per (size, node) that one
    page of it maps there (`hostc.audit.hugepages`: live hosts only, never in sh)."""
    hk = {n.id: n.housekeeping for n in plan.nodes}
    for pool in plan.hugepages:
        d, size = f"hugepages/hugepages-{pool.size_kib}kB/nr_hugepages", pool.size_kib
        boot, name = pool.when is When.BOOT, f"hugepages {format_kib(size)}"
        pinned = pool.node_form or not boot
        if not pinned:
            path, token = f"/sys/kernel/mm/{d}", f"hugepages={pool.total}"
            yield Expect(Look.VALUE, name, str(pool.total), pool.reason, (path,), _boot(token))
        token = "hugepages=" + ",".join(f"{n}:{c}" for n, c in pool.per_node)
        for node, count in pool.per_node:
            path = f"/sys/devices/system/node/node{node}/{d}"
            pend = _boot(token) if boot else None
            if pinned:
                yield Expect(
                    Look.VALUE, f"{name} node{node}", str(count), pool.reason, (path,), pend
                )
            args = (str(size), str(node), str(hk.get(node, "")))
            want = f"a page maps on node {node}"
            yield Expect(Look.HUGEPAGE_MAP, f"{name} node{node} usable", want, pool.reason, args)


def _sysfs(v: Value[Any]) -> Iterator[Expect]:
    """A table setting a host shows in a sysfs file: read where its row says, named by
    its row (the name `hostc explain` and `preset.exclude` know)."""
    s = v.setting
    f = s.sysfs
    if f is None:
        return
    args = (f.path.rsplit("/", 1)[1],) if f.per is Per.POLICY else (f.path,)
    kind = Look.PER_CPU if f.per is Per.POLICY else Look.SELECTED if f.choice else Look.VALUE
    word = s.cmdline
    pending = _boot(f"{word.arg}={v.shown}") if word is not None else None
    yield Expect(kind, s.name, v.shown, v.reason, args, pending)


def _cmdline_settings(plan: Plan) -> Iterator[Expect]:
    """Every kernel-argument row of the Plan (THP's mode, …) where its row says a host
    also shows it (its `Sysfs` file); /proc/cmdline is `_kernel_args`' to read."""
    for v in plan.cmdline_settings:
        yield from _sysfs(v)


def _sysctls(plan: Plan) -> Iterator[Expect]:
    for s in plan.sysctls:
        yield Expect(Look.SYSCTL, f"sysctl {s.key}", " ".join(s.value.split()), s.reason, (s.key,))


#: systemd's manager property for each limit item hostc makes every service's default,
#: and the unit its value is in.  memlock is not one (targets/limits.py scopes it to the
#: workloads' and the container runtime's drop-ins): the manager keeps its own default.
_MANAGER_LIMIT = {
    s.name: (o.prop, 1)
    for s in (t.NOFILE, t.MEMLOCK)
    for o in s.observe
    if isinstance(o, UnitProperty) and not o.unit
}


def _limits(plan: Plan) -> Iterator[Expect]:
    for lim in plan.limits:
        if lim.item not in _MANAGER_LIMIT:
            continue
        prop, scale = _MANAGER_LIMIT[lim.item]
        value = "infinity" if lim.value == UNLIMITED else str(int(lim.value) * scale)
        yield Expect(Look.MANAGER, f"services' {lim.item} limit", value, lim.reason, (prop,))


def _manager_cpus(plan: Plan) -> Iterator[Expect]:
    """PID 1's CPUs, and an ordinary service's: on a kernel before 6.2 the services'
    CPUs are their slice's cpuset, not PID 1's mask (`Plan.slice_cpusets`), and so is
    the slices' own cpuset where hostc sets one."""
    part = plan.partition
    if not (part.isolated and plan.runtime.owner is RuntimeOwner.SYSTEMD):
        return
    value, hk = str(part.housekeeping), part.housekeeping_reason
    pending = ((MANAGER_CPUS_FILE,), f"CPUAffinity={value}")
    yield Expect(Look.PID_CPUS, "PID 1 CPUs", value, hk, ("1", "Cpus_allowed_list"), pending)
    service = (SERVICE_PROBE, "Cpus_allowed_list")
    yield Expect(
        Look.SERVICE_CPUS, f"services' CPUs ({SERVICE_PROBE})", value, hk, service, pending
    )
    if not plan.slice_cpusets:
        return
    why = "system services on the housekeeping CPUs by their slice's cpuset (before 6.2)"
    slices = [("system.slice", part.housekeeping, Reason(hk.source, why))]
    if plan.workloads:
        union = CpuSet()
        for w in plan.workloads:
            union = union | w.cpus
        why = "the workloads' slice holds every workload's CPUs"
        slices.append((WORKLOAD_SLICE, union, Reason(key("workload"), why)))
    for name, cpus, reason in slices:
        carriers = (f"/etc/systemd/system/{name}.d/90-hostc.conf", f"/etc/systemd/system/{name}")
        cpuset = (SLICE_CPUSET.format(name),)
        pended = (carriers, f"AllowedCPUs={cpus}")
        yield Expect(Look.CPULIST, f"{name} cpuset", str(cpus), reason, cpuset, pended)


def _workloads(plan: Plan) -> Iterator[Expect]:
    """NUMAPolicy=bind is a memory policy (set_mempolicy), not a cpuset: Mems_allowed_list
    keeps every node; /proc/PID/numa_maps shows the policy (`bind:1`) per mapping."""
    for w in plan.workloads:
        policy = f"bind:{CpuSet(w.nodes)}"  # the kernel prints a node list like a CPU list
        yield Expect(
            Look.UNIT_CPUS, f"{w.unit} CPUs", str(w.cpus), w.reason, (w.unit, "Cpus_allowed_list")
        )
        yield Expect(Look.UNIT_NUMA, f"{w.unit} memory policy", policy, w.reason, (w.unit,))


def _tunables(plan: Plan) -> Iterator[Expect]:
    """Every sysfs row of the Plan (governor, EPP, THP defrag, …), where its row says a
    host shows it."""
    for v in plan.runtime.tunables:
        yield from _sysfs(v)


def _cpumasks(plan: Plan) -> Iterator[Expect]:
    for m in plan.runtime.cpumasks:
        yield Expect(Look.MASK, f"{m.name} CPUs", str(m.cpus), m.reason, (m.path,))


def _irqs(plan: Plan) -> Iterator[Expect]:
    part, irq = plan.partition, plan.runtime.irq
    if part.isolated and plan.isolation_by("irqaffinity") is not None:
        why = plan.isolation_by("irqaffinity")
        assert why is not None
        yield Expect(
            Look.MASK,
            "default IRQ affinity",
            str(part.housekeeping),
            why.reason,
            ("/proc/irq/default_smp_affinity",),
        )
    if irq is None:
        return
    yield Expect(Look.IRQS_OFF, "IRQs on isolated CPUs", "none", irq.reason, (str(irq.banned),))
    state = "active" if irq.owner is IrqOwner.IRQBALANCE else "inactive"
    yield Expect(
        Look.UNIT, "irqbalance.service", state, irq.reason, ("irqbalance.service", "ActiveState")
    )
    for d in irq.devices:
        yield Expect(Look.DEVICE_IRQS, f"{d.device} IRQs", str(d.cpus), d.reason, (d.pci,))


def _modules(plan: Plan) -> Iterator[Expect]:
    for m in plan.runtime.modules:
        if m.blacklist:
            yield Expect(Look.MODULE_ABSENT, f"module {m.name}", "not loaded", m.reason, (m.name,))
        for word in (m.options or "").split():
            key, _, value = word.partition("=")
            path = f"/sys/module/{m.name}/parameters/{key}"
            yield Expect(Look.MODULE_PARAM, f"module {m.name} {key}", value, m.reason, (path,))


def _services(plan: Plan) -> Iterator[Expect]:
    for s in plan.runtime.services_off:
        yield Expect(Look.UNIT, s.unit, "inactive", s.reason, (s.unit, "ActiveState"))


def _kubelet(plan: Plan) -> Iterator[Expect]:
    k = plan.kubelet
    if k is None:
        return
    policy = k.cpu.policy
    yield Expect(Look.CHECKPOINT, "kubelet CPU manager", policy, k.cpu.reason, (CPU_STATE,))
    res, strict = k.cpu.reserved, str(int(kf.STRICT_RESERVATION in k.cpu.options))
    args = (CPU_STATE, ka.KUBELET_KUBECONFIG[k.flavor], strict, str(plan.partition.online))
    want = f"{len(res)} CPUs ({res})"  # as the kubelet shows it (`hostc.audit.reserved`)
    reason = k.cpu.reserved_reason
    yield Expect(Look.KUBELET_RESERVED, "kubelet reserved CPUs", want, reason, (*args, str(res)))
    if k.memory is not None:
        yield Expect(
            Look.CHECKPOINT,
            "kubelet memory manager",
            k.memory.policy,
            k.memory.reason,
            (MEMORY_STATE,),
        )
    rt = k.runtime
    if rt is None:
        return
    own = rt.allowed if rt.allowed is not None else rt.cpus  # affinity ∩ the unit's cpuset
    yield Expect(
        Look.UNIT_CPUS, f"{rt.unit} CPUs", str(own), rt.reason, (rt.unit, "Cpus_allowed_list")
    )
    if rt.allowed is not None and rt.allowed_reason is not None:
        path = f"/sys/fs/cgroup/system.slice/{rt.unit}/cpuset.cpus"
        yield Expect(Look.CPULIST, f"{rt.unit} cpuset", str(rt.allowed), rt.allowed_reason, (path,))
    yield Expect(
        Look.POD_CPUS,
        "shared-pool containers' CPUs",
        "their pod's cpuset",
        rt.reason,
    )


#: What hostc-verify and audit call each GPUDirect RDMA mode's working path.
GPUDIRECT_PATH = {
    "auto": "DMA-BUF or nvidia-peermem",
    "dmabuf": "DMA-BUF",
    "peermem": "nvidia-peermem",
}


def _gpudirect(plan: Plan) -> Iterator[Expect]:
    g = plan.runtime.gpudirect
    if g is not None:
        yield Expect(Look.GPUDIRECT, "GPUDirect RDMA", GPUDIRECT_PATH[g.mode], g.reason, (g.mode,))


def _devices(plan: Plan) -> Iterator[Expect]:
    """What hostc-tuning writes (where it owns the runtime settings; NIC channels under
    either owner, TuneD's `[net_*]` otherwise) and what the kernel arguments make of the
    IOMMU and ACS, read back from sysfs (`hostc.audit.devices`)."""
    rt, c = plan.runtime, plan.cstates
    if rt.hostc_owned and c is not None and c.cpus is not None:
        state = str(c.state)
        want = f"exit latency of cpuidle state {state}"
        yield Expect(Look.PM_QOS, "CPU PM QoS resume latency", want, c.reason, (state, str(c.cpus)))
    for w in rt.sysfs:  # hostc-tuning or TuneD's [sysfs] writes them
        yield Expect(Look.EACH_VALUE, w.name.replace("_", " ", 1), w.value, w.reason, (w.glob,))
    for n in rt.nic_channels:  # hostc-tuning, or TuneD's [net_*] (targets/tuned.py)
        want = f"at most {n.count} queues"
        yield Expect(
            Look.NIC_CHANNELS, f"{n.device} channels", want, n.reason, (n.pci, str(n.count))
        )
    io = rt.iommu
    if io is not None:
        yield Expect(Look.IOMMU_MODE, "IOMMU mode", "pass-through (identity)", io.reason)
        if io.acs_off is not None:
            yield Expect(Look.ACS_REDIRECT, "PCIe ACS redirect", "off", io.acs_off)


def pod_unit_names(plan: Plan) -> list[str]:
    """Every container runtime and kubelet flavour (`KUBE_UNITS`) and workload unit, once
    each: one list for audit and the targets (`hostc.targets.verify.pod_units`)."""
    return [*rk.KUBE_UNITS, *(w.unit for w in plan.workloads if w.unit not in rk.KUBE_UNITS)]


def _start_order(plan: Plan) -> Iterator[Expect]:
    """The runtime settings in place before every container runtime, kubelet and workload
    started this boot: hostc-tuning.service, or with a TuneD owner the wait for its
    profile (`hostc.audit.order`; both units are Before= them)."""
    rt = plan.runtime
    first = rk.TUNING_UNIT if rt.hostc_owned else rk.TUNED_READY_UNIT
    what = "runtime tuning" if rt.hostc_owned else "TuneD profile"
    units = pod_unit_names(plan)
    why = Reason(rt.owner_reason.source, f"the {what} applies before pods and workloads start")
    want = f"{first} finished first"
    yield Expect(Look.STARTED_BEFORE, f"{what} before pods", want, why, (first, *units))


def _tuned(plan: Plan) -> Iterator[Expect]:
    if plan.runtime.owner is RuntimeOwner.TUNED:
        r = plan.runtime.owner_reason
        yield Expect(Look.FIRST_WORD, "TuneD profile", "hostc", r, ("/etc/tuned/active_profile",))


#: Setting kind → the expectations the Plan gives it.  Each Expect.kind names its
#: observer in `hostc.audit.observers.OBSERVERS`.
TABLE: tuple[tuple[str, Callable[[Plan], Iterator[Expect]]], ...] = (
    ("host", _host),
    ("kernel arguments", _kernel_args),
    ("isolation", _nohz),
    ("RCU offload", _rcu),
    ("hugepages", _hugepages),
    ("kernel-argument settings", _cmdline_settings),
    ("sysctls", _sysctls),
    ("limits", _limits),
    ("service manager CPUs", _manager_cpus),
    ("workload placement", _workloads),
    ("sysfs settings", _tunables),
    ("kernel cpumasks", _cpumasks),
    ("interrupts", _irqs),
    ("modules", _modules),
    ("GPUDirect RDMA", _gpudirect),
    ("devices", _devices),
    ("services disabled", _services),
    ("kubelet", _kubelet),
    ("TuneD", _tuned),
    ("start order", _start_order),
)


def expectations(plan: Plan) -> list[Expect]:
    return list(each_expectation(plan))


def each_expectation(plan: Plan) -> Iterator[Expect]:
    """`expectations` one at a time: a caller that asks whether there is any (of a kind)
    stops at the first, without walking the rest of the table."""
    return (e for _, rows in TABLE for e in rows(plan))
