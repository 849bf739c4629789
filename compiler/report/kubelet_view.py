"""`hostc plan`'s kubelet section: what each NUMA node leaves for pods, and why."""

from __future__ import annotations

from hostc.knowledge.kubelet import Quantity
from hostc.plan.model import Plan
from hostc.units import format_kib


def _gib(q: object) -> str:
    assert isinstance(q, Quantity)
    mib = q.bytes // 1024**2
    return f"{mib / 1024:.1f} GiB" if mib >= 1024 else f"{mib} MiB"


def lines(plan: Plan) -> list[str]:
    k = plan.kubelet
    if k is None:
        return []
    out = ["", f"kubelet ({k.flavor} {k.version}, {k.unit}):"]
    out.append(f"  reservedSystemCPUs {k.cpu.reserved}\n      # {k.cpu.reserved_reason}")
    opts = f" options {','.join(k.cpu.options)}" if k.cpu.options else ""
    out.append(f"  cpuManagerPolicy {k.cpu.policy}{opts}\n      # {k.cpu.reason}")
    if k.topology is not None:
        topts = ",".join(f"{name}={value}" for name, value in k.topology.options)
        out.append(
            f"  topologyManagerPolicy {k.topology.policy or '(default)'} scope "
            f"{k.topology.scope or '(default)'}{f' options {topts}' if topts else ''}"
            f"\n      # {k.topology.reason}"
        )
    if k.memory is not None:
        out.append(f"  memoryManagerPolicy {k.memory.policy}\n      # {k.memory.reason}")
    if k.runtime is not None:
        allowed = f" AllowedCPUs {k.runtime.allowed}" if k.runtime.allowed is not None else ""
        out.append(
            f"  {k.runtime.unit} CPUAffinity {k.runtime.cpus}{allowed}\n      # {k.runtime.reason}"
        )
    rows = " + ".join(f"{r.node}:{r.memory}" for r in k.reserved_memory) or "-"
    out.append(
        f"  reserved memory {rows} = {k.memory_total.in_mib} "
        f"(kube-reserved + system-reserved + eviction {k.eviction.memory})"
        f"\n      # {k.reserved_memory_reason}"
    )
    head = ("node", "pod cpus", "pod memory", "hugepages", "gpus")
    table = [head]
    for c in k.capacity:
        table.append(
            (
                str(c.node),
                f"{c.cpus} ({len(c.cpus)})" if c.cpus else "-",
                "?" if c.memory is None else _gib(c.memory),
                ",".join(f"{n}×{format_kib(s)}" for s, n in c.hugepages) or "-",
                ",".join(c.gpus) or "-",
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    out.append("  capacity left for pods per NUMA node:")
    out += [
        "    " + "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()
        for r in table
    ]
    return out
