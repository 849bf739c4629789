"""`hostc plan`: the partition as a whole, then every setting with its reason.

Pure text rendering (the CLI prints it); the JSON form comes from `plan_json`.
"""

from __future__ import annotations

from typing import Any

from hostc import kubelet_view
from hostc.kernelargs import cmdline, kernel_args
from hostc.plan import Plan, Workload
from hostc.units import format_kib


def numactl(w: Workload) -> str:
    """The equivalent command for people starting a server by hand."""
    nodes = ",".join(str(n) for n in w.nodes)
    return f"numactl --physcpubind={w.cpus} --membind={nodes}"


def _mib(v: int | None) -> str:
    if v is None:
        return "?"
    return f"{v / 1024:.0f} GiB" if v >= 1024 else f"{v} MiB"


def render(plan: Plan) -> str:
    p = plan.partition
    lines = [
        f"host {plan.host.name}  role {plan.host.role}  arch {plan.host.arch}  "
        f"vendor {plan.host.cpu_vendor or '?'}  kernel {plan.host.kernel or '?'}  "
        f"os {plan.host.os or '?'} ({plan.host.os_family})",
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
                ",".join(f"{c}×{format_kib(s)}" for s, c in n.hugepages) or "-",
                _mib(n.memory_left_mib),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append("")
    lines.append(f"housekeeping: {p.housekeeping_reason}")
    lines.append(f"isolated:     {p.isolated_reason}")
    for w in plan.workloads:
        lines += ["", f"workload {w.name}: {numactl(w)} <server>", f"  # {w.reason}"]
    line = cmdline(plan)
    lines += ["", f"kernel command line ({len(line)} of {plan.host.cmdline_budget} bytes):"]
    lines += [f"  {a}\n      # {a.reason}" for a in kernel_args(plan)] or ["  (none)"]
    lines += ["", "sysctl:"]
    lines += [f"  {s.key} = {s.value}\n      # {s.reason}" for s in plan.sysctls] or ["  (none)"]
    lines += ["", "limits:"]
    lines += [f"  {x.item} {x.value}\n      # {x.reason}" for x in plan.limits] or ["  (none)"]
    if plan.left_out:
        lines += ["", "left out on purpose:"]
        lines += [f"  {x.setting}\n      # {x.reason}" for x in plan.left_out]
    lines += kubelet_view.lines(plan)
    return "\n".join(lines) + "\n"


def to_data(v: Any) -> Any:
    """Plain JSON data from Plan values: attrs classes by field, CpuSets as cpulists."""
    import enum

    import attrs

    from hostc.cpuset import CpuSet

    if isinstance(v, CpuSet):
        return str(v)
    from hostc.kubelet_options import KubeVersion
    from hostc.quantity import Quantity

    if isinstance(v, Quantity | KubeVersion):
        return str(v)
    if isinstance(v, enum.Enum):
        return v.value
    if attrs.has(type(v)):
        return {f.name: to_data(getattr(v, f.name)) for f in attrs.fields(type(v))}
    if isinstance(v, tuple | list):
        return [to_data(x) for x in v]
    if isinstance(v, dict):
        return {str(k): to_data(x) for k, x in v.items()}
    return v


def plan_json(plan: Plan) -> dict[str, Any]:
    """The Plan as plain data: CPU sets as cpulists, every setting with its reason.

    Derived spellings (`cmdline`, the `numactl` lines) are added under `views`,
    apart from the Plan itself, so a reviewer sees both in one file.
    """
    data: dict[str, Any] = to_data(plan)
    data["partition"]["cores"] = " ".join(data["partition"]["cores"])  # one line per PR diff
    if data.get("kubelet") is None:
        data.pop("kubelet", None)  # only Kubernetes nodes have one
    data["views"] = {
        "cmdline": cmdline(plan),
        "numactl": {w.name: numactl(w) for w in plan.workloads},
    }
    return data


def dumps(plan: Plan) -> str:
    import json

    return json.dumps(plan_json(plan), indent=2, ensure_ascii=False) + "\n"
