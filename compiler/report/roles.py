"""What each CPU is in the Plan: housekeeping, isolated or offline, and its workloads.

One function, shared by the picture and the diff, so both say the same thing; the
tests derive the expectation from the Plan on their own and compare.
"""

from __future__ import annotations

import attrs

from hostc.cpuset import CpuSet
from hostc.plan.model import Plan
from hostc.record import Record

HOUSEKEEPING = "housekeeping"
ISOLATED = "isolated"
OFFLINE = "offline"


@attrs.frozen(repr=False, eq=False)
class CpuRole(Record):
    cls: str  # housekeeping | isolated | offline
    workloads: tuple[str, ...] = ()  # in Plan order; two or more only when shared on purpose

    @property
    def key(self) -> str:
        """The label a person reads: the workload(s) when the CPU has any, else the class."""
        return "+".join(self.workloads) if self.workloads else self.cls


def roles(plan: Plan) -> dict[int, CpuRole]:
    """Every CPU the Plan knows (online and offline) → its role, sorted by CPU."""
    p = plan.partition
    owners: dict[int, list[str]] = {}
    for w in plan.workloads:
        for cpu in w.cpus:
            owners.setdefault(cpu, []).append(w.name)
    out: dict[int, CpuRole] = {}
    for cpu in p.online:
        cls = HOUSEKEEPING if cpu in p.housekeeping else ISOLATED
        out[cpu] = CpuRole(cls, tuple(owners.get(cpu, ())))
    for cpu in offline(plan):
        out[cpu] = CpuRole(OFFLINE)
    return dict(sorted(out.items()))


def offline(plan: Plan) -> CpuSet:
    """Every offline CPU of the snapshot, whatever node it is on."""
    bits = CpuSet()
    for _, cpus in plan.hardware.offline:
        bits = bits | cpus
    return bits
