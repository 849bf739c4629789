"""The node.toml model: attrs classes whose names are the TOML keys.

This is hostc's one table of settings (mkosi's lesson, done as types): the
field metadata carries the help text and an example, and the JSON Schema in
`schemas/` and `hostc schema node` are generated from it.  No attrs validators
here: cattrs would lose their messages.  Semantic rules live in `hostc.check`.
"""

from __future__ import annotations

import enum
from typing import Literal

import attrs

from hostc.cpuset import CpuSet
from hostc.topology.model import doc
from hostc.units import PageSize


class Role(enum.StrEnum):
    INFERENCE = "inference"
    TRAINING = "training"
    GENERAL = "general"


class IsolateMode(enum.StrEnum):
    WORKLOAD = "workload"
    REST = "rest"
    NONE = "none"


#: `cpu.isolate`: a keyword, or the CPUs themselves.
Isolate = IsolateMode | CpuSet
#: `limits.memlock`: KiB, or unlimited (`"unlimited"`, `"infinity"` and -1 read as unlimited).
Memlock = int | Literal["unlimited"]


def _to_cpuset(v: CpuSet | str | None) -> CpuSet | None:
    """API callers may pass cpulist text; the loader passes CpuSets (typed by cattrs)."""
    return CpuSet.parse(v) if isinstance(v, str) else v


def _to_isolate(v: Isolate | str | None) -> Isolate | None:
    if isinstance(v, str) and not isinstance(v, IsolateMode):
        key = v.strip().lower()
        return IsolateMode(key) if key in IsolateMode.__members__.values() else CpuSet.parse(v)
    return v


def _to_page_size(v: PageSize | str | None) -> PageSize | None:
    return PageSize.parse(v) if isinstance(v, str) else v


class Mechanism(enum.StrEnum):
    ISOLCPUS = "isolcpus"
    NOHZ_FULL = "nohz_full"
    RCU_NOCBS = "rcu_nocbs"
    IRQAFFINITY = "irqaffinity"


class IsolcpusFlag(enum.StrEnum):
    DOMAIN = "domain"
    MANAGED_IRQ = "managed_irq"
    NOHZ = "nohz"


class Thp(enum.StrEnum):
    ALWAYS = "always"
    MADVISE = "madvise"
    NEVER = "never"


@attrs.frozen
class Host:
    name: str = attrs.field(
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


@attrs.frozen
class Cpu:
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
        converter=_to_cpuset,
        metadata=doc(
            "housekeeping as an explicit cpulist (instead of housekeeping_per_node)", "0-1,64-65"
        ),
    )
    isolate: Isolate | None = attrs.field(
        default=None,
        converter=_to_isolate,
        metadata=doc(
            "CPUs to isolate: `workload` (the workload's NUMA nodes minus "
            "housekeeping), `rest` (every CPU not housekeeping), `none`, or a cpulist",
            "workload",
        ),
    )
    mechanisms: list[Mechanism] | None = attrs.field(
        default=None,
        metadata=doc(
            "how isolated CPUs are isolated (default: all four)",
            ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"],
        ),
    )
    isolcpus_flags: list[IsolcpusFlag] = attrs.field(
        factory=lambda: [IsolcpusFlag.MANAGED_IRQ, IsolcpusFlag.DOMAIN],
        metadata=doc("isolcpus= flags", ["managed_irq", "domain"]),
    )
    allow_node_without_housekeeping: bool = attrs.field(
        default=False,
        metadata=doc("permit a NUMA node with online CPUs to keep no housekeeping CPU", False),
    )

    @property
    def isolation(self) -> Isolate:
        """`isolate`, with its default (`none`) filled in."""
        return IsolateMode.NONE if self.isolate is None else self.isolate


@attrs.frozen
class Workload:
    name: str = attrs.field(metadata=doc("service name", "vllm"))
    gpus: list[str] = attrs.field(
        metadata=doc("GPUs it serves on, by snapshot name", ["GPU0", "GPU1"])
    )


@attrs.frozen
class Hugepages:
    size: PageSize | None = attrs.field(
        default=None,
        converter=_to_page_size,
        metadata=doc("page size of the pool (default 1G)", "1G"),
    )
    default_size: PageSize | None = attrs.field(
        default=None,
        converter=_to_page_size,
        metadata=doc("default_hugepagesz (default: `size`)", "1G"),
    )
    per_node: dict[int, int] | None = attrs.field(
        default=None, metadata=doc("pages per NUMA node", {"0": 8, "1": 8})
    )
    total: int | None = attrs.field(
        default=None, metadata=doc("pages in total, split evenly over nodes with memory", 16)
    )


@attrs.frozen
class Limits:
    nofile: int | None = attrs.field(
        default=None, metadata=doc("open files (soft and hard) for sessions and services", 1048576)
    )
    memlock: Memlock | None = attrs.field(
        default=None, metadata=doc('locked memory in KiB, or "unlimited"', "unlimited")
    )


@attrs.frozen
class Kernel:
    transparent_hugepage: Thp | None = attrs.field(
        default=None, metadata=doc("THP mode (preset: madvise)", "madvise")
    )
    limit_cstates: bool | None = attrs.field(
        default=None,
        metadata=doc("keep CPUs in shallow C-states (x86; preset: inference yes, others no)", True),
    )
    extra_args: list[str] = attrs.field(
        factory=list, metadata=doc("further kernel arguments, verbatim", ["iommu=pt"])
    )


@attrs.frozen
class Preset:
    exclude: list[str] = attrs.field(
        factory=list,
        metadata=doc(
            "preset settings to leave out, by key (sysctl name, kernel argument or limit)",
            ["net.core.somaxconn"],
        ),
    )


@attrs.frozen
class HostSpec:
    host: Host = attrs.field(metadata=doc("what the node is"))
    version: int = attrs.field(default=1, metadata=doc("node.toml format version", 1))
    cpu: Cpu = attrs.field(factory=Cpu, metadata=doc("CPU partition and isolation"))
    workload: list[Workload] = attrs.field(
        factory=list, metadata=doc("services pinned to their GPUs' NUMA nodes")
    )
    hugepages: Hugepages | None = attrs.field(
        default=None, metadata=doc("boot-time hugepage reservation (off unless asked)")
    )
    sysctl: dict[str, int | str] = attrs.field(
        factory=dict, metadata=doc("sysctl overrides", {"vm.swappiness": 1})
    )
    limits: Limits = attrs.field(factory=Limits, metadata=doc("resource limits"))
    kernel: Kernel = attrs.field(factory=Kernel, metadata=doc("kernel command line"))
    preset: Preset = attrs.field(factory=Preset, metadata=doc("role preset adjustments"))
