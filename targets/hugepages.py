"""hostc-hugepages: the oneshot that reserves the Plan's runtime hugepage pools on their
NUMA nodes (`When.RUNTIME` pools: per-node counts a kernel before 5.16 cannot take on
the command line, or `hugepages.allocate = "runtime"`), as NTO's
hugepages-allocation-<kB>kB-NUMA<n>.service does, in one unit.

One unit and one generated script for every (size, node), not a templated unit per
pair: the script sets the largest pages first (a 1G page needs a free, aligned 1 GiB
range that 2M pages taken first could break up), which units running in parallel
cannot promise; one unit is one place to order against everything that needs the pages,
one journal to read and one state for `systemctl --failed`; a pool added or dropped
changes one script, not the set of unit files (and their enable links).

It runs as early as the filesystems allow (DefaultDependencies=no, After=local-fs.target,
Before=sysinit.target), when "the possibility of getting physical contiguous pages is
still very high" (Documentation/admin-guide/mm/hugetlbpage.rst), so also before the
container runtimes, every kubelet flavour, the workloads and hostc's own units.  Each
count is written to the node's own nr_hugepages ("the number of persistent huge pages on
the parent node will be adjusted to the specified value, if sufficient resources
exist"), read back, and on a shortfall the node is compacted (nodeN/compact) and the
count written again, a bounded number of times; caches are never dropped (vm.rst
drop_caches: "use outside of a testing or debugging environment is not recommended"),
since the allocation reclaims what it needs itself.  The unit fails, naming the node,
the size and the count it got against the one wanted, after every pool was tried.
"""

from __future__ import annotations

import re

import attrs

from hostc.artifact import Action, Activation
from hostc.delivery.effects import HUGEPAGES_UNIT as UNIT
from hostc.knowledge import kernel as kf
from hostc.plan.model import Plan, Reason, When
from hostc.record import Record
from hostc.targets import verify
from hostc.targets._emitter import Emitter
from hostc.targets._escape import UnsafeValue
from hostc.targets._render import config, header, script
from hostc.units import format_kib

UNIT_PATH = f"/etc/systemd/system/{UNIT}"
SCRIPT = "/usr/local/sbin/hostc-hugepages"
#: tries per (size, node), one second apart with the node compacted between them: at
#: most about ten seconds of boot for a node that cannot get its pages (hostc's choice;
#: NTO's script tries for 60 s, writing every second)
TRIES = 10
PAUSE_S = 1
#: what a page size looks like in the script (`format_kib`: 2M, 1G, 64K)
_SIZE = re.compile(r"[0-9]{1,9}[KMGT]")


@attrs.frozen(repr=False, eq=False)
class NodeCount(Record):
    """One count the script writes: `want` pages of `kib` KiB on NUMA node `node`."""

    node: int
    kib: int
    want: int

    @property
    def size(self) -> str:
        return format_kib(self.kib)


@attrs.frozen(repr=False, eq=False)
class PoolRows(Record):
    """One runtime pool's counts, with the reason the script's comment gives."""

    size: str
    reason: Reason
    counts: tuple[NodeCount, ...]


def pools(plan: Plan) -> list[PoolRows]:
    """The runtime pools, largest pages first, each with a count for every NUMA node with
    CPUs: 0 where the pool has no pages there, so a node the spec no longer names is
    emptied of this size when the unit runs again (a node without the size's directory
    is skipped for a 0).  A CPU-less memory node (HBM, a GPU's memory) gets a count only
    where the pool names it: hostc leaves what others put there alone."""
    nodes = [n.id for n in plan.nodes if n.cpus]
    out = []
    for p in sorted(plan.hugepages, key=lambda p: -p.size_kib):
        if p.when is not When.RUNTIME:
            continue
        wanted = dict(p.per_node)
        rows = [NodeCount(n, p.size_kib, wanted.get(n, 0)) for n in sorted({*nodes, *wanted})]
        for r in rows:
            if min(r.node, r.kib, r.want) < 0 or not _SIZE.fullmatch(r.size):
                raise UnsafeValue(f"hugepage count {r!r} is not safe in a script")
        out.append(PoolRows(format_kib(p.size_kib), p.reason, tuple(rows)))
    return out


def _spread(p: PoolRows) -> str:
    """`node0 4, node1 2`: the nodes that get pages, for the unit's description."""
    return ", ".join(f"node{c.node} {c.want}" for c in p.counts if c.want) or "none"


def emit(plan: Plan, out: Emitter) -> None:
    """The unit and its script, into the systemd target's artifacts (none without a
    runtime pool)."""
    rows = pools(plan)
    if not rows:
        return
    host = header(plan)
    what = "; ".join(f"{p.size}: {_spread(p)}" for p in rows)
    unit = config(
        host,
        "hostc-hugepages.service.j2",
        what=what,
        script=SCRIPT,
        before=" ".join(verify.pod_units(plan)),
    )
    out.unit(UNIT_PATH, unit, UNIT, start=True)
    # the kubelet reads hugepage capacity once, at its start (kubernetes #111757)
    later = [Activation(Action.NEXT_START, plan.kubelet.unit)] if plan.kubelet else []
    text = script(
        host,
        "hostc-hugepages.sh.j2",
        pools=tuple(rows),
        tries=TRIES,
        pause=PAUSE_S,
        pool_dir=kf.NODE_HUGEPAGES.format(node="$1", kib="$2"),
        compact=kf.NODE_COMPACT.format(node="$1"),
    )
    out.file(SCRIPT, text, Activation(Action.START, UNIT), *later, mode=0o755)
