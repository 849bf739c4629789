"""Hugepage rules: sizes exist, nodes exist, pages fit with headroom, the kernel can do it."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, error, warning
from hostc.knowledge.arch import Arch
from hostc.knowledge.kernel import HUGEPAGES_NODE_FORM_SINCE, HUGEPAGESZ_REFUSED
from hostc.resolve import Resolved
from hostc.resolve.hugepages import DEFAULT_PAGE_SIZE, headroom_mib
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology
from hostc.units import size_kib


def _sizes_ok(spec: HostSpec) -> bool:
    hp = spec.hugepages
    return hp is not None and (hp.per_node is None) != (hp.total is None)


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


def hugepages_shape(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    hp = spec.hugepages
    if hp is None:
        return
    known = _known_sizes(topo)
    usual = Arch.from_uname(topo.arch).usual_hugepage_sizes
    for path, size in (
        (at("hugepages", "size"), hp.size),
        (at("hugepages", "default_size"), hp.default_size),
    ):
        if size is None:
            continue
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
    req = r.hugepages
    assert req is not None
    if hp.size is None and any(c > 0 for c in req.per_node.values()):
        yield from _unset_size(topo, known, usual)
    if hp.default_size and hp.default_size != req.size:
        yield warning(
            at("hugepages", "default_size"),
            f"default size {hp.default_size} has no pool "
            "here; its pages come from runtime allocation",
        )
    if (hp.per_node is None) == (hp.total is None):
        yield error(at("hugepages"), "give exactly one of per_node or total")
        return
    nodes = {n.id for n in topo.nodes}
    for node, count in (hp.per_node or {}).items():
        if node not in nodes:
            yield error(
                at("hugepages", "per_node", str(node)),
                f"NUMA node {node} is not in the topology",
                hint=f"nodes: {', '.join(map(str, sorted(nodes)))}",
            )
        if count < 0:
            yield error(at("hugepages", "per_node", str(node)), f"negative page count {count}")
    if hp.total is not None and hp.total < 0:
        yield error(at("hugepages", "total"), f"negative page count {hp.total}")


def hugepages_fit(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    if not _sizes_ok(spec):
        return
    hp, req = spec.hugepages, r.hugepages
    assert hp is not None and req is not None
    size = req.size
    page_mib = max(size.kib // 1024, 1)
    path = at("hugepages", "per_node" if hp.per_node is not None else "total")
    for node_id, count in req.per_node.items():
        node = topo.node(node_id)
        if node is None or count <= 0:
            continue
        where = path.key(str(node_id)) if hp.per_node is not None else path
        if node.memory_mib is None:
            yield error(
                where,
                f"the snapshot does not know NUMA node {node_id}'s memory, so "
                f"{count} × {size} pages cannot be checked",
                hint="capture the topology with `hostc probe`, or save `numactl --hardware` and "
                "run `hostc import numactl FILE --base SNAPSHOT`",
            )
            continue
        want = count * page_mib
        room = node.memory_mib - headroom_mib(node.memory_mib)
        if want > room:
            yield error(
                where,
                f"{count} × {size} = {want} MiB does not fit on NUMA node "
                f"{node_id}: {node.memory_mib} MiB minus {node.memory_mib - room} MiB "
                f"headroom leaves {max(room, 0)} MiB",
                hint=f"at most {max(room, 0) // page_mib} pages of {size} there",
            )


def hugepages_kernel(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    hp = spec.hugepages
    if hp is None or not _sizes_ok(spec):
        return
    release, version = r.host.kernel_release, r.host.kernel
    if hp.per_node is None:
        cpuless = topo.cpuless_memory_nodes
        if cpuless and (version is None or version < HUGEPAGES_NODE_FORM_SINCE):
            yield warning(
                at("hugepages", "total"),
                f"without per-node counts (Linux ≥ 5.16, kernel {release or 'unknown'}) the "
                f"kernel also splits the pages onto CPU-less node(s) "
                f"{', '.join(map(str, cpuless))}",
                hint="set host.kernel when the host boots ≥ 5.16",
            )
        return
    if version is None and spec.host.kernel is not None:
        return  # release.kernel_well_formed reports the malformed host.kernel
    if version is None:
        yield error(
            at("host", "kernel"),
            "per-node hugepages need to know the kernel (Linux ≥ 5.16 "
            "takes hugepages=0:N,1:M at boot), and neither the spec nor the snapshot "
            "says which kernel the host runs",
            hint='set host.kernel = "6.8"',
        )
        return
    if version >= HUGEPAGES_NODE_FORM_SINCE:
        return
    assert r.hugepages is not None
    counts = r.hugepages.per_node
    nodes = topo.memory_nodes
    even = len(set(counts.get(n, 0) for n in nodes)) == 1 and set(counts) <= set(nodes)
    cpuless = topo.cpuless_memory_nodes
    if even and cpuless:
        yield error(
            at("hugepages", "per_node"),
            f"kernel {release} predates per-node counts (5.16), and its own even split would "
            f"also reserve pages on CPU-less node(s) {', '.join(map(str, cpuless))}",
            hint="boot a kernel ≥ 5.16, or reserve these pages at runtime",
        )
    elif even:
        yield warning(
            at("hugepages", "per_node"),
            f"kernel {release} predates per-node counts (5.16): "
            "the total goes on the command line and the kernel splits it evenly",
        )
    else:
        yield error(
            at("hugepages", "per_node"),
            f"kernel {release} cannot reserve different counts "
            "per NUMA node at boot (needs Linux ≥ 5.16)",
            hint="use an even split, or hugepages.total",
        )
