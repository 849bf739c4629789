"""`hostc plan`: the partition as a whole, then every setting with its reason.

Pure text rendering (the CLI prints it); the JSON form comes from `plan_json`.
"""

from __future__ import annotations

from typing import Any

from hostc.plan import Plan


def _mib(v: int | None) -> str:
    if v is None:
        return "?"
    return f"{v / 1024:.0f} GiB" if v >= 1024 else f"{v} MiB"


def render(plan: Plan) -> str:
    p = plan.partition
    lines = [
        f"host {plan.host}  role {plan.role}  arch {plan.arch}  kernel {plan.kernel or '?'}",
        f"online {p.online} ({len(p.online)})  housekeeping {p.housekeeping or '-'} "
        f"({len(p.housekeeping)})  isolated {p.isolated or '-'} ({len(p.isolated)})",
        "",
    ]
    head = ("node", "housekeeping", "isolated", "gpus", "nics", "memory", "hugepages", "left")
    rows = [head]
    for n in plan.nodes:
        rows.append(
            (
                str(n.id),
                str(n.housekeeping) or "-",
                str(n.isolated) or "-",
                ",".join(n.gpus) or "-",
                ",".join(n.nics) or "-",
                _mib(n.memory_mib),
                ",".join(f"{c}×{s}" for s, c in n.hugepages) or "-",
                _mib(n.memory_left_mib),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append("")
    lines.append(f"housekeeping: {p.housekeeping_reason}")
    lines.append(f"isolated:     {p.isolated_reason}")
    for w in plan.workloads:
        lines += ["", f"workload {w.name}: {w.numactl} <server>", f"  # {w.reason}"]
    lines += ["", f"kernel command line ({len(plan.cmdline)} of {plan.cmdline_budget} bytes):"]
    lines += [f"  {a}\n      # {a.reason}" for a in plan.kernel_args] or ["  (none)"]
    lines += ["", "sysctl:"]
    lines += [f"  {s.key} = {s.value}\n      # {s.reason}" for s in plan.sysctls] or ["  (none)"]
    lines += ["", "limits:"]
    lines += [f"  {x.item} {x.value}\n      # {x.reason}" for x in plan.limits] or ["  (none)"]
    return "\n".join(lines) + "\n"


def plan_json(plan: Plan) -> dict[str, Any]:
    """The Plan as plain data, CPU sets in cpulist form (for `hostc plan --json`)."""
    import attrs

    from hostc.cpuset import CpuSet

    def ser(_: Any, __: Any, v: Any) -> Any:
        return str(v) if isinstance(v, CpuSet) else v

    data = attrs.asdict(plan, value_serializer=ser)
    data["cmdline"] = plan.cmdline
    for w, pin in zip(data["workloads"], plan.workloads, strict=True):
        w["numactl"] = pin.numactl
    return data
