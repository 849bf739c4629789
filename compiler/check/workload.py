"""Workload rules: the GPUs a service names exist and have a known NUMA node."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, error
from hostc.resolve import Resolved


def gpus_exist(r: Resolved) -> Iterator[Diagnostic]:
    spec, topo = r.spec, r.topo
    gpus = {g.name: g for g in topo.gpus}
    first: dict[str, int] = {}  # one pass: thousands of workloads stay linear
    node_ids = set(topo.node_ids())
    for i, w in enumerate(spec.workload):
        if w.name in first:
            yield error(
                spec.workload_at(i).key("name"),
                f"workload {w.name!r} is defined twice (also {spec.workload_at(first[w.name])})",
            )
        first.setdefault(w.name, i)
        if not w.gpus and not w.nodes:
            yield error(
                spec.workload_at(i).key("gpus"),
                "gpus is missing or empty: a workload needs at least one GPU (or the NUMA nodes "
                "it runs on)",
                hint='gpus = ["GPU0"] or nodes = [0]',
            )
        if w.gpus and w.nodes is not None:
            yield error(
                spec.workload_at(i).key("nodes"),
                "give gpus or nodes, not both: the nodes follow from the GPUs",
            )
        for j, n in enumerate(w.nodes or []):
            if n not in node_ids:
                yield error(
                    spec.workload_at(i).key("nodes").index(j),
                    f"NUMA node {n} is not in the topology",
                    hint="nodes in the snapshot: " + ", ".join(map(str, sorted(node_ids))),
                )
        for j, name in enumerate(w.gpus):
            gpu = gpus.get(name)
            if gpu is None:
                known = ", ".join(gpus) or "none"
                yield error(
                    spec.workload_at(i).key("gpus").index(j),
                    f"GPU {name!r} is not in the topology",
                    hint=f"GPUs in the snapshot: {known}",
                )
            elif gpu.node is None:
                yield error(
                    spec.workload_at(i).key("gpus").index(j),
                    f"the snapshot does not know {name}'s NUMA node",
                    hint="capture the topology with `hostc probe`, or save `nvidia-smi topo -m` "
                    "and run `hostc import nvidia-smi FILE --base SNAPSHOT`",
                )
