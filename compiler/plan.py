"""The Plan: hostc's one intermediate representation.  Every target reads only this.

The Plan says *what* the host gets, never how one file spells it: a C-state
limit is one setting that the command line spells `intel_idle.max_cstate=` or
`processor.max_cstate=` by CPU vendor and TuneD spells `force_latency`; a limit
holds an int or unlimited.  Each setting says when it takes effect (`When`)
and carries a Reason (Butane's translation set, attached to the value): the
spec key, preset layer or topology fact that asked for it, and a one-line
rationale.  CPU sets are CpuSet values resolved here, once; no target derives one.
"""

from __future__ import annotations

import enum
from typing import Final, Literal

import attrs

from hostc.cpuset import CpuSet


class When(enum.StrEnum):
    """When a setting takes effect on the host."""

    BOOT = "boot"  # kernel command line: a reboot
    SYSCTL = "sysctl"  # sysctl.d, applied by systemd-sysctl at boot or `sysctl --system`
    RUNTIME = "runtime"  # sysfs, IRQ masks, services: a oneshot unit at boot
    SERVICE = "service"  # per systemd service (limits, placement): on (re)start
    SESSION = "session"  # pam_limits: sessions opened afterwards


class OsFamily(enum.StrEnum):
    DEBIAN = "debian"  # Debian, Ubuntu: update-grub reads /etc/default/grub.d
    RHEL = "rhel"  # RHEL, Fedora, Rocky, Alma: BLS entries edited by grubby
    COREOS = "coreos"  # Fedora CoreOS, RHCOS, Flatcar: Ignition, kargs
    SUSE = "suse"
    UNKNOWN = "unknown"


@attrs.frozen
class Reason:
    source: str  # "cpu.isolate", "preset:inference", "topology:node0"
    why: str

    def __str__(self) -> str:
        return f"{self.source}: {self.why}"


@attrs.frozen
class HostFacts:
    """What the targets need to know about the host to spell settings right."""

    name: str
    role: str
    arch: str
    cpu_vendor: str | None  # intel, amd, … (None: the snapshot does not say)
    kernel: str | None  # release the host boots
    kernel_version: tuple[int, int] | None
    os: str | None  # os-release ID-VERSION_ID, e.g. ubuntu-22.04
    os_family: OsFamily
    cmdline_budget: int  # bytes of kernel command line hostc may use on this arch
    reason: Reason

    @property
    def x86(self) -> bool:
        return self.arch in ("x86_64", "i686", "i386", "amd64")


@attrs.frozen
class CpuPartition:
    """Invariants (rules on the finished Plan, `check.plan`): housekeeping ∪ isolated
    == online, disjoint, SMT siblings never split, the boot CPU is housekeeping."""

    online: CpuSet
    housekeeping: CpuSet
    isolated: CpuSet
    cores: tuple[CpuSet, ...]  # online cores (SMT siblings), a topology fact
    boot_cpu: int | None
    allow_node_without_housekeeping: bool
    housekeeping_reason: Reason
    isolated_reason: Reason


@attrs.frozen
class Isolation:
    """One isolation mechanism applied to the isolated CPUs (`isolcpus`, `nohz_full`, …)."""

    mechanism: str  # isolcpus | nohz_full | rcu_nocbs | irqaffinity
    flags: tuple[str, ...]  # isolcpus flags (managed_irq, domain, nohz); empty otherwise
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class NodeView:
    """One NUMA node as `hostc plan` shows it."""

    id: int
    cpus: CpuSet
    housekeeping: CpuSet
    isolated: CpuSet
    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    memory_mib: int | None
    hugepages: tuple[tuple[int, int], ...]  # (page size in KiB, pages)
    memory_left_mib: int | None


@attrs.frozen
class HugepagePool:
    size_kib: int
    per_node: tuple[tuple[int, int], ...]  # (node, pages), nodes with pages > 0
    node_form: bool  # per-node counts on the cmdline (Linux ≥ 5.16)
    reason: Reason
    size_reason: Reason
    when: When = When.BOOT

    @property
    def total(self) -> int:
        return sum(n for _, n in self.per_node)


@attrs.frozen
class DefaultHugepageSize:
    size_kib: int
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class Thp:
    """Transparent hugepages mode (always | madvise | never)."""

    mode: str
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class CStateLimit:
    """Keep CPUs out of idle states deeper than `max_cstate` (1: C1 only)."""

    max_cstate: int
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class ExtraArg:
    """A kernel argument the spec gives verbatim (checked, never derived)."""

    key: str
    value: str | None  # None for flags (`nosoftlockup`)
    reason: Reason
    when: When = When.BOOT


@attrs.frozen
class Sysctl:
    key: str  # canonical dotted form
    value: str  # as written to sysctl.d (three-value keys space-separated)
    reason: Reason
    when: When = When.SYSCTL


UNLIMITED: Final = "unlimited"
LimitValue = int | Literal["unlimited"]


@attrs.frozen
class Limit:
    """A resource limit for sessions and services; memlock in KiB."""

    item: str  # nofile | memlock
    value: LimitValue
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen
class Workload:
    """A service pinned to its GPUs' NUMA node(s): CPUs and memory together."""

    name: str
    gpus: tuple[str, ...]
    nodes: tuple[int, ...]  # memory is bound here
    cpus: CpuSet
    reason: Reason
    when: When = When.SERVICE


@attrs.frozen
class Plan:
    host: HostFacts
    partition: CpuPartition
    isolation: tuple[Isolation, ...]
    nodes: tuple[NodeView, ...]
    default_hugepagesz: DefaultHugepageSize | None
    hugepages: tuple[HugepagePool, ...]
    thp: Thp | None
    cstates: CStateLimit | None
    extra_args: tuple[ExtraArg, ...]
    sysctls: tuple[Sysctl, ...]
    limits: tuple[Limit, ...]
    workloads: tuple[Workload, ...]

    def limit(self, item: str) -> Limit | None:
        return next((x for x in self.limits if x.item == item), None)

    def isolation_by(self, mechanism: str) -> Isolation | None:
        return next((x for x in self.isolation if x.mechanism == mechanism), None)
