"""Hugepage rules: sizes exist, one pool per size, nodes exist, every pool fits with
headroom, and the pages can be reserved where the request says (boot or runtime)."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, error, warning
from hostc.keypath import KeyPath
from hostc.knowledge.arch import Arch
from hostc.knowledge.kernel import HUGEPAGES_NODE_FORM_SINCE, HUGEPAGESZ_REFUSED
from hostc.resolve import Resolved
from hostc.resolve.hugepages import (
    DEFAULT_PAGE_SIZE,
    HugepageRequest,
    PoolSpec,
    headroom_mib,
    pool_specs,
)
from hostc.spec.model import HugepageAllocation
from hostc.topology.model import Topology
from hostc.units import PageSize, size_kib

_SINCE = "{}.{}".format(*HUGEPAGES_NODE_FORM_SINCE)


def _known_sizes(topo: Topology) -> set[int] | None:
    out = set()
    for s in topo.hugepage_sizes:
        try:
            out.add(size_kib(s))
        except ValueError:
            continue
    return out or None


def _kib(size: str) -> int:
    try:
        return size_kib(size)
    except ValueError:
        return 0


def _unset_size(
    topo: Topology, known: set[int] | None, usual: tuple[str, ...]
) -> Iterator[Diagnostic]:
    """The pool's size when the spec leaves it out (1G), checked against the sizes the
    snapshot's kernel offers as a given size is.  An error, never another size picked:
    the counts are pages, so another size reserves other memory (2M pages where 1G was
    meant: 1/512 of it, 512M pages on a 64K-page Grace kernel: half), and the hint names
    the size to set.  The kernel itself refuses an unoffered `hugepagesz=` and ignores
    the `hugepages=` after it, reserving nothing (`HUGEPAGESZ_REFUSED`)."""
    size, path = DEFAULT_PAGE_SIZE, at("hugepages", "size")
    if known is None:
        yield warning(
            path,
            f"not set, so the pool's pages are {size}, and the snapshot does not list the "
            "hugepage sizes this host's kernel offers, so that cannot be checked",
            hint=(
                f"{topo.arch} usually offers {', '.join(usual)}; set size"
                if usual
                else "capture the host with `hostc probe`, or set size"
            ),
        )
        return
    if size.kib in known:
        return
    offered = ", ".join(topo.hugepage_sizes)
    below = [s for s in topo.hugepage_sizes if 0 < _kib(s) <= size.kib]
    largest = max(below, key=_kib) if below else None
    yield error(
        path,
        f"not set, so the pool's pages are {size}, and this host's kernel offers no {size} "
        f"pages (it offers {offered}): at boot it logs '{HUGEPAGESZ_REFUSED}{size}', "
        "ignores the hugepages= after it and reserves nothing",
        hint=(
            f'set size = "{largest}", the largest size it offers up to {size}, and give '
            "the counts in pages of that size"
            if largest is not None
            else f"set size to one of {offered} and give the counts in pages of that size"
        ),
    )


def _size_offered(
    path: KeyPath, size: PageSize, topo: Topology, known: set[int] | None, usual: tuple[str, ...]
) -> Iterator[Diagnostic]:
    """A size the spec gives, against the sizes the snapshot's kernel offers (the G1 rule:
    every pool's size and `default_size`)."""
    if known is not None and size.kib not in known:
        yield error(
            path,
            f"this CPU does not support {size} pages",
            hint=f"supported sizes: {', '.join(topo.hugepage_sizes)}",
        )
    elif known is None:
        yield warning(
            path,
            f"the snapshot does not list the hugepage sizes this CPU supports, so {size} "
            "cannot be checked",
            hint=(
                f"{topo.arch} usually offers {', '.join(usual)}"
                if usual
                else "capture the host with `hostc probe`"
            ),
        )


def _counts_shape(p: PoolSpec, nodes: set[int]) -> Iterator[Diagnostic]:
    if not p.counts_sound:
        yield error(p.path, "give exactly one of per_node or total")
        return
    for node, count in (p.per_node or {}).items():
        where = p.path.key("per_node", str(node))
        if node not in nodes:
            yield error(
                where,
                f"NUMA node {node} is not in the topology",
                hint=f"nodes: {', '.join(map(str, sorted(nodes)))}",
            )
        if count < 0:
            yield error(where, f"negative page count {count}")
    if p.total is not None and p.total < 0:
        yield error(p.path.key("total"), f"negative page count {p.total}")


def hugepages_shape(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    hp = spec.hugepages
    if hp is None:
        return
    known = _known_sizes(topo)
    usual = Arch.from_uname(topo.arch).usual_hugepage_sizes
    nodes = {n.id for n in topo.nodes}
    seen: dict[int, KeyPath] = {}
    for p, req in zip(pool_specs(hp), r.hugepages, strict=True):
        if p.size is not None:
            yield from _size_offered(p.path.key("size"), p.size, topo, known, usual)
        elif any(c > 0 for c in req.per_node.values()):
            yield from _unset_size(topo, known, usual)
        first = seen.setdefault(req.size.kib, p.path)
        if first != p.path:
            yield error(
                p.path.key("size"),
                f"a second pool of {req.size} pages (the first is {first}): the kernel takes "
                "one hugepagesz= per size, and a node has one count per size",
                hint="give each page size once, with its counts",
            )
        yield from _counts_shape(p, nodes)
    if hp.default_size is not None:
        path = at("hugepages", "default_size")
        yield from _size_offered(path, hp.default_size, topo, known, usual)
        if hp.default_size.kib not in seen:
            yield warning(
                path,
                f"default size {hp.default_size} has no pool "
                "here; its pages come from runtime allocation",
            )


def _count_path(p: PoolSpec, node: int) -> KeyPath:
    return p.path.key("per_node", str(node)) if p.per_node is not None else p.path.key("total")


def hugepages_fit(r: Resolved) -> Iterator[Diagnostic]:
    """Every pool's pages on a node together, against the node's memory less headroom."""
    hp = r.spec.hugepages
    if hp is None:
        return
    pools = [(p, q) for p, q in zip(pool_specs(hp), r.hugepages, strict=True) if p.counts_sound]
    for node in sorted({n for _, q in pools for n, c in q.per_node.items() if c > 0}):
        here = [(p, q, q.per_node[node]) for p, q in pools if q.per_node.get(node, 0) > 0]
        spelled = " + ".join(f"{c} × {q.size}" for _, q, c in here)
        first, last = here[0], here[-1]
        where = _count_path(last[0], node) if len(here) > 1 else _count_path(first[0], node)
        nd = r.topo.node(node)
        if nd is None:
            continue
        if nd.memory_mib is None:
            yield error(
                where,
                f"the snapshot does not know NUMA node {node}'s memory, so "
                f"{spelled} pages cannot be checked",
                hint="capture the topology with `hostc probe`, or save `numactl --hardware` and "
                "run `hostc import numactl FILE --base SNAPSHOT`",
            )
            continue
        want = sum(c * max(q.size.kib // 1024, 1) for _, q, c in here)
        room = nd.memory_mib - headroom_mib(nd.memory_mib)
        if want <= room:
            continue
        page_mib = max(last[1].size.kib // 1024, 1)
        others = want - last[2] * page_mib
        yield error(
            where,
            f"{spelled} = {want} MiB does not fit on NUMA node "
            f"{node}: {nd.memory_mib} MiB minus {nd.memory_mib - room} MiB "
            f"headroom leaves {max(room, 0)} MiB",
            hint=f"at most {max(room - others, 0) // page_mib} pages of {last[1].size} there"
            + (" beside the other pools" if len(here) > 1 else ""),
        )


def _total_kernel(r: Resolved, p: PoolSpec) -> Iterator[Diagnostic]:
    """A total on the command line: before 5.16 the kernel spreads it over every node
    with memory, CPU-less ones included."""
    version, release = r.host.kernel, r.host.kernel_release
    cpuless = r.topo.cpuless_memory_nodes
    if cpuless and (version is None or version < HUGEPAGES_NODE_FORM_SINCE):
        yield warning(
            p.path.key("total"),
            f"without per-node counts (Linux ≥ {_SINCE}, kernel {release or 'unknown'}) the "
            f"kernel also splits the pages onto CPU-less node(s) "
            f"{', '.join(map(str, cpuless))}",
            hint=f"set host.kernel when the host boots ≥ {_SINCE}",
        )


def hugepages_kernel(r: Resolved) -> Iterator[Diagnostic]:
    """Where each pool is reserved (`hostc.resolve.hugepages`) must work on this kernel:
    per-node counts on the command line need Linux 5.16; before it, counts that differ
    per node go to hostc-hugepages.service (runtime) unless the spec says boot."""
    hp = r.spec.hugepages
    if hp is None:
        return
    for p, req in zip(pool_specs(hp), r.hugepages, strict=True):
        if not p.counts_sound:
            continue
        if req.runtime and not req.asked:
            yield warning(
                p.path.key("per_node"),
                f"kernel {r.host.kernel_release} predates per-node counts at boot ({_SINCE}), "
                "so hostc-hugepages.service reserves these pages on their nodes early in "
                "boot, before the container runtimes, kubelets and workloads; a node "
                "whose memory is already fragmented can fall short (the unit then "
                "fails, naming the node, the size and the count it got)",
                hint=f'say hugepages.allocate = "runtime" to mean it, or boot a kernel ≥ {_SINCE}',
            )
        elif req.runtime:
            continue
        elif p.per_node is None:
            yield from _total_kernel(r, p)
        else:
            yield from _per_node_at_boot(r, p, req)


def _per_node_at_boot(r: Resolved, p: PoolSpec, req: HugepageRequest) -> Iterator[Diagnostic]:
    """Per-node counts on the command line: the kernel must be known, and from 5.16 it
    takes them as they are; before, only an even split it makes itself."""
    release, version = r.host.kernel_release, r.host.kernel
    if version is None and r.spec.host.kernel is not None:
        return  # release.kernel_well_formed reports the malformed host.kernel
    if version is None:
        yield error(
            at("host", "kernel"),
            f"per-node hugepages need to know the kernel (Linux ≥ {_SINCE} "
            "takes hugepages=0:N,1:M at boot), and neither the spec nor the snapshot "
            "says which kernel the host runs",
            hint='set host.kernel = "6.8", or hugepages.allocate = "runtime"',
        )
        return
    if version >= HUGEPAGES_NODE_FORM_SINCE:
        return
    where, counts, nodes = p.path.key("per_node"), req.per_node, r.topo.memory_nodes
    even = len({counts.get(n, 0) for n in nodes}) == 1 and set(counts) <= set(nodes)
    cpuless = r.topo.cpuless_memory_nodes
    runtime = 'hugepages.allocate = "runtime" reserves them per node early in boot'
    if even and not cpuless:
        yield warning(
            where,
            f"kernel {release} predates per-node counts ({_SINCE}): "
            "the total goes on the command line and the kernel splits it evenly",
        )
    elif even:
        yield error(
            where,
            f"kernel {release} predates per-node counts ({_SINCE}), and its own even "
            f"split would also reserve pages on CPU-less node(s) "
            f"{', '.join(map(str, cpuless))}",
            hint=f"boot a kernel ≥ {_SINCE}, or {runtime}",
        )
    else:
        assert r.spec.hugepages is not None
        assert r.spec.hugepages.allocate is HugepageAllocation.BOOT  # else it is runtime
        yield error(
            where,
            f"kernel {release} cannot reserve different counts "
            f"per NUMA node at boot (needs Linux ≥ {_SINCE})",
            hint=f"{runtime}, or use an even split, or a total",
        )
