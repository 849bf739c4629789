"""The node.toml model: attrs classes whose names are the TOML keys.

This is hostc's one table of settings (mkosi's lesson, done as types): the
field metadata carries the help text and an example, and the JSON Schema in
`schemas/` and `hostc schema node` are generated from it.  No attrs validators
here: cattrs would lose their messages.  Semantic rules live in `hostc.check`.
"""

from __future__ import annotations

import enum
import functools
from collections import Counter
from collections.abc import Mapping
from typing import Literal

import attrs

from hostc.cpuset import CpuSet
from hostc.fielddoc import doc
from hostc.keypath import KeyPath, Named, at
from hostc.record import FrozenMap, Record
from hostc.spec.model_kubelet import Kubelet as Kubelet
from hostc.spec.model_kubelet import KubeletReserved as KubeletReserved
from hostc.spec.model_memory import HugepageAllocation as HugepageAllocation
from hostc.spec.model_memory import Hugepages as Hugepages
from hostc.spec.model_memory import HugepagesPool as HugepagesPool
from hostc.spec.model_runtime import Cpufreq as Cpufreq
from hostc.spec.model_runtime import Irq as Irq
from hostc.spec.model_runtime import Modules as Modules
from hostc.spec.model_runtime import Nccl as Nccl
from hostc.spec.model_runtime import Runtime as Runtime
from hostc.spec.model_runtime import Services as Services
from hostc.spec.text import KernelArgText, Name

# the vocabularies of spec values (hostc.vocab, shared with the Plan), re-exported so a
# spec is built from this one module (`m.RuntimeOwner.TUNED`, `m.ThpMode.MADVISE`)
from hostc.vocab import CStatesAt as CStatesAt
from hostc.vocab import Epp as Epp
from hostc.vocab import Flavor as Flavor
from hostc.vocab import Governor as Governor
from hostc.vocab import GpuDirect as GpuDirect
from hostc.vocab import IommuMode as IommuMode
from hostc.vocab import IrqOwner as IrqOwner
from hostc.vocab import IsolcpusFlag as IsolcpusFlag
from hostc.vocab import Mechanism as Mechanism
from hostc.vocab import MemoryManagerPolicy as MemoryManagerPolicy
from hostc.vocab import NicChannelChoice as NicChannelChoice
from hostc.vocab import NodeRole as NodeRole
from hostc.vocab import PstateMode as PstateMode
from hostc.vocab import Role as Role
from hostc.vocab import RuntimeOwner as RuntimeOwner
from hostc.vocab import ThpDefrag as ThpDefrag
from hostc.vocab import ThpMode as ThpMode


class IsolateMode(enum.StrEnum):
    WORKLOAD = "workload"
    REST = "rest"
    NONE = "none"


#: `cpu.isolate`: a keyword, or the CPUs themselves.
Isolate = IsolateMode | CpuSet


#: `limits.memlock`: KiB, or unlimited (`"unlimited"`, `"infinity"` and -1 read as unlimited).
Memlock = int | Literal["unlimited"]


@attrs.frozen(repr=False, eq=False)
class Host(Record):
    name: Name = attrs.field(
        metadata=doc("node class name, used in comments and file names", "h100-serve")
    )
    role: Role = attrs.field(
        metadata=doc("role preset: inference, training or general", "inference")
    )
    topology: str | None = attrs.field(
        default=None,
        metadata=doc(
            "topology snapshot, relative to this file (`--topology` overrides)", "topology.toml"
        ),
    )
    kernel: str | None = attrs.field(
        default=None,
        metadata=doc(
            "kernel release the host boots (overrides the snapshot's); decides "
            "whether per-node hugepages go on the command line (Linux ≥ 5.16)",
            "6.8",
        ),
    )
    os: str | None = attrs.field(
        default=None,
        metadata=doc(
            "distribution the host boots, as os-release `ID-VERSION_ID` (overrides the "
            "snapshot's, for images built for another OS); decides how the boot "
            "configuration is regenerated",
            "rhel-9.4",
        ),
    )


@attrs.frozen(repr=False, eq=False)
class Cpu(Record):
    housekeeping_per_node: int | None = attrs.field(
        default=None,
        metadata=doc(
            "housekeeping as intent: this many physical cores per NUMA node, SMT "
            "siblings included, lowest-numbered first (default 1 when isolating)",
            2,
        ),
    )
    housekeeping: CpuSet | None = attrs.field(
        default=None,
        metadata=doc(
            "housekeeping as an explicit cpulist (instead of housekeeping_per_node)", "0-1,64-65"
        ),
    )
    isolate: Isolate | None = attrs.field(
        default=None,
        metadata=doc(
            "CPUs to isolate: `workload` (the workload's NUMA nodes minus "
            "housekeeping), `rest` (every CPU not housekeeping), `none`, or a cpulist",
            "workload",
        ),
    )
    mechanisms: tuple[Mechanism, ...] | None = attrs.field(
        default=None,
        metadata=doc(
            "how isolated CPUs are isolated (default: isolcpus, rcu_nocbs, irqaffinity, "
            "plus nohz_full on the CPUs of workloads with busy_poll; listing nohz_full "
            "here stops the tick on every isolated CPU)",
            ["isolcpus", "rcu_nocbs", "irqaffinity"],
        ),
    )
    isolcpus_flags: tuple[IsolcpusFlag, ...] | None = attrs.field(
        default=None,
        metadata=doc(
            "isolcpus= flags (default: managed_irq only; `domain` also takes the CPUs out of "
            "load balancing, so every thread must then be pinned to one CPU)",
            ["managed_irq"],
        ),
    )
    allow_node_without_housekeeping: bool = attrs.field(
        default=False,
        metadata=doc("permit a NUMA node with online CPUs to keep no housekeeping CPU", False),
    )
    offline: CpuSet | None = attrs.field(
        default=None,
        metadata=doc(
            "CPUs taken offline at every boot, before the container runtime, the kubelet "
            "and the workloads start (cpuN/online = 0): whole cores, never the boot CPU, "
            "every NUMA node keeping an online CPU; they are in no CPU set of the Plan",
            "60-63,124-127",
        ),
    )
    realtime: bool = attrs.field(
        default=False,
        metadata=doc(
            "real-time threads (SCHED_FIFO/SCHED_RR) run on the isolated CPUs: adds the "
            "`realtime` preset layer (kernel.sched_rt_runtime_us = -1: no RT throttling); "
            "needs isolated CPUs (opt-in)",
            False,
        ),
    )

    @property
    def isolation(self) -> Isolate:
        """`isolate`, with its default (`none`) filled in."""
        return IsolateMode.NONE if self.isolate is None else self.isolate


@attrs.frozen(repr=False, eq=False)
class Workload(Record):
    name: Name = attrs.field(metadata=doc("service name", "vllm"))
    gpus: tuple[str, ...] = attrs.field(
        default=(), metadata=doc("GPUs it serves on, by snapshot name", ["GPU0", "GPU1"])
    )
    unit: str | None = attrs.field(
        default=None,
        metadata=doc("its systemd unit (default `<name>.service`)", "vllm.service"),
    )
    nodes: tuple[int, ...] | None = attrs.field(
        default=None,
        metadata=doc("NUMA nodes to run on, for a service without GPUs (instead of gpus)", [0]),
    )
    share_cpus: bool = attrs.field(
        default=False,
        metadata=doc(
            "share its nodes' isolated CPUs with other workloads there, on purpose "
            "(default: each gets its own cores, split by GPU count)",
            False,
        ),
    )
    busy_poll: bool = attrs.field(
        default=False,
        metadata=doc(
            "it runs one busy-polling thread per isolated CPU it gets (DPDK-style): only "
            "then is the timer tick stopped there (nohz_full), which does nothing with "
            "more than one runnable task per CPU and makes every syscall dearer",
            False,
        ),
    )


@attrs.frozen(repr=False, eq=False)
class Limits(Record):
    nofile: int | None = attrs.field(
        default=None, metadata=doc("open files (soft and hard) for sessions and services", 1048576)
    )
    memlock: Memlock | None = attrs.field(
        default=None, metadata=doc('locked memory in KiB, or "unlimited"', "unlimited")
    )


@attrs.frozen(repr=False, eq=False)
class Kernel(Record):
    transparent_hugepage: ThpMode | None = attrs.field(
        default=None, metadata=doc("THP mode (preset: madvise)", "madvise")
    )
    limit_cstates: bool | None = attrs.field(
        default=None,
        metadata=doc("keep CPUs in shallow C-states (x86; preset: inference yes, others no)", True),
    )
    cstates_at: CStatesAt | None = attrs.field(
        default=None,
        metadata=doc(
            "where the C-state limit applies: `runtime` (per-CPU PM QoS on the workload CPUs "
            "only, revertible; the default) or `boot` (intel_idle/processor.max_cstate, every CPU)",
            "runtime",
        ),
    )
    extra_args: tuple[KernelArgText, ...] = attrs.field(
        default=(), metadata=doc("further kernel arguments, verbatim", ["nosoftlockup"])
    )
    transparent_hugepage_defrag: ThpDefrag | None = attrs.field(
        default=None,
        metadata=doc("THP defrag policy, runtime sysfs (preset: defer+madvise)", "defer+madvise"),
    )
    skew_tick: bool = attrs.field(
        default=False,
        metadata=doc(
            "skew_tick=1: offset each CPU's periodic tick, for jitter-sensitive (HPC) "
            "workloads on large hosts; costs some power (opt-in)",
            False,
        ),
    )
    init_on_alloc: bool | None = attrs.field(
        default=None,
        metadata=doc(
            "init_on_alloc=0|1: whether the kernel zeroes pages on allocation (default: "
            "the kernel's build option); false is faster but a security trade-off (opt-in)",
            False,
        ),
    )
    iommu: IommuMode | None = attrs.field(
        default=None,
        metadata=doc(
            "IOMMU mode: `pt` (pass-through default domain, iommu=pt; does not force the "
            "IOMMU on; preset where a workload gets RDMA NICs), `on` (forced on for "
            "VFIO/SR-IOV: also intel_iommu=on on Intel and pci=disable_acs_redir=pci:0:0, "
            "so GPU-NIC peer traffic is not redirected to the root complex; IOMMU groups "
            "merge)",
            "pt",
        ),
    )


@attrs.frozen(repr=False, eq=False)
class Preset(Record):
    exclude: tuple[str, ...] = attrs.field(
        default=(),
        metadata=doc(
            "preset settings to leave out, by key (sysctl name, kernel argument or limit)",
            ["net.core.somaxconn"],
        ),
    )


class Converted:
    """The mark of a HostSpec that `spec.load.from_data`'s converter made: one slot, no
    attrs field.  Such a spec has every value of its declared type and cannot change
    (tuples and FrozenMaps all the way down), so `api.compile_plan` takes it as it is.
    Being no field, the mark is in no `__init__`, equality, repr, copy or pickle, and
    `attrs.evolve` makes a new spec without it: a spec changed that way, or built in
    Python, goes through the converter again.  The mark is the spec's origin (the file
    name, `<data>` for a mapping, and its text when known: `spec.load.origin`), so a
    later stage names the file the spec came from.  `spec.load` sets and reads it."""

    __slots__ = ("_converted",)


@attrs.frozen(repr=False, eq=False)
class HostSpec(Record, Converted):
    host: Host = attrs.field(metadata=doc("what the node is"))
    version: int = attrs.field(default=1, metadata=doc("node.toml format version", 1))
    cpu: Cpu = attrs.field(factory=Cpu, metadata=doc("CPU partition and isolation"))
    workload: tuple[Workload, ...] = attrs.field(
        default=(), metadata=doc("services pinned to their GPUs' NUMA nodes")
    )
    hugepages: Hugepages | None = attrs.field(
        default=None,
        metadata=doc("hugepage pools, reserved at boot or early at runtime (off unless asked)"),
    )
    sysctl: Mapping[str, int | str] = attrs.field(
        factory=FrozenMap, metadata=doc("sysctl overrides", {"vm.swappiness": 1})
    )
    limits: Limits = attrs.field(factory=Limits, metadata=doc("resource limits"))
    kernel: Kernel = attrs.field(factory=Kernel, metadata=doc("kernel command line"))
    preset: Preset = attrs.field(factory=Preset, metadata=doc("role preset adjustments"))
    kubelet: Kubelet | None = attrs.field(
        default=None, metadata=doc("Kubernetes kubelet managers (absent: no kubelet output)")
    )
    cpufreq: Cpufreq = attrs.field(
        factory=lambda: Cpufreq(), metadata=doc("CPU frequency: governor, EPP, P-state mode")
    )
    irq: Irq = attrs.field(factory=lambda: Irq(), metadata=doc("who places interrupts"))
    modules: Modules = attrs.field(
        factory=lambda: Modules(), metadata=doc("kernel modules to blacklist or configure")
    )
    services: Services = attrs.field(
        factory=lambda: Services(), metadata=doc("systemd units to disable")
    )
    runtime: Runtime = attrs.field(
        factory=lambda: Runtime(), metadata=doc("who applies the runtime settings")
    )
    nccl: Nccl = attrs.field(
        factory=lambda: Nccl(), metadata=doc("NCCL's environment in the workloads' drop-ins")
    )

    def workload_at(self, i: int) -> KeyPath:
        """The key path of workload `i` by its name, `workload "serve-e"`: once layers
        merge, its index is a position in no file (first-day-3 F12).  By index while
        another entry has the same name (the name would not say which)."""
        name = self.workload[i].name
        if name in self._names_given_twice:
            return at("workload", i)
        return at("workload", Named(i, name))

    @functools.cached_property
    def _names_given_twice(self) -> frozenset[str]:
        """Workload names more than one entry has (counted once: thousands of workloads
        with an error each stay linear)."""
        counts = Counter(w.name for w in self.workload)
        return frozenset(n for n, k in counts.items() if k > 1)
