"""`hostc plan`: the partition as a whole, then every setting with its reason.

Pure text rendering (the CLI prints it); the JSON form comes from `plan_json`.
"""

from __future__ import annotations

import enum
import json
from typing import Any

import attrs

from hostc.cpuset import CpuSet
from hostc.knowledge.kubelet import KubeVersion, Quantity
from hostc.plan.kernelargs import cmdline, kernel_args
from hostc.plan.model import IN_PLAN_JSON, Distro, IrqOwner, Placement, Plan, Reason, Value, When
from hostc.provenance import SOURCE_TYPES, Fact, PresetLayer, SpecKey, SpecKeys
from hostc.report import kubelet_view
from hostc.settings import table as t
from hostc.units import format_kib


def numactl(w: Placement) -> str:
    """The equivalent command for people starting a server by hand."""
    nodes = ",".join(str(n) for n in w.nodes)
    return f"numactl --physcpubind={w.cpus} --membind={nodes}"


def origin(r: Reason) -> str:
    """Who chose a value: the preset, the spec, or a fact of the topology/host (a
    default rule of hostc's own is a fact too: no spec key and no preset chose it)."""
    match r.source:
        case PresetLayer():
            return "preset"
        case Fact():
            return "topology"
        case SpecKey() | SpecKeys():
            return "spec"


def _why(r: Reason) -> str:
    return f"      # ({origin(r)}) {r}"


def workload_lines(w: Placement) -> list[str]:
    """Unit, CPUs, memory node(s), NICs and NCCL variables of one workload."""
    out = [
        f"  unit {w.unit or '-'}  cpus {w.cpus} ({len(w.cpus)})  "
        f"memory node(s) {','.join(map(str, w.nodes)) or '-'}"
        + ("  shared on purpose" if w.shared else ""),
        f"  nics {','.join(w.nics) or '-'}",
    ]
    if w.nics_reason is not None:
        out.append(f"  # {w.nics_reason}")
    out += [f"  {k}={v}" for k, v in w.env]
    if w.socket_reason is not None:
        out.append(f"  # {w.socket_reason}")
    if w.after:
        out.append(f"  after {' '.join(w.after)}")
        if w.after_reason is not None:
            out.append(f"  # {w.after_reason}")
    return out


def runtime_lines(plan: Plan) -> list[str]:
    """Runtime settings: who applies them, then each with its reason and origin."""
    rt = plan.runtime
    lines = ["", f"runtime settings (applied by {rt.owner}):", _why(rt.owner_reason)]
    items: list[tuple[str, Reason, str]] = []
    for v in rt.tunables:  # the table's sysfs rows, in its order: each where it is written
        f = v.setting.sysfs
        items.append((f"{f.path if f else v.name} = {v.shown}", v.reason, v.name))
    if rt.pstate is not None:
        items.append((f"{rt.pstate.shown} (command line)", rt.pstate.reason, t.PSTATE.name))
    if rt.iommu is not None:
        items.append((f"iommu {rt.iommu.shown} (command line)", rt.iommu.reason, t.IOMMU.name))
    if rt.acs:
        items.append(("PCIe ACS", rt.acs, "acs"))
    for m in rt.cpumasks:
        items.append(
            (f"{m.name} cpumask {m.cpus} ({m.cpus.mask()})", m.reason, f"cpumask.{m.name}")
        )
    c = plan.cstates
    if c is not None and c.cpus is not None:
        text = f"idle states up to cpuidle state {c.state} on CPUs {c.cpus}"
        items.append((text, c.reason, "max_cstate"))
    items += [(f"{w.glob} = {w.value}", w.reason, w.glob) for w in rt.sysfs]
    items += [
        (f"nic {n.device} ({n.pci}) combined channels {n.count}", n.reason, f"nic.{n.device}")
        for n in rt.nic_channels
    ]
    irq = rt.irq
    if irq is not None:
        owner = "irq_owner"
        items.append((f"interrupts owned by {irq.owner}; banned {irq.banned}", irq.reason, owner))
        if irq.owner is IrqOwner.IRQBALANCE:
            text = f"irqbalance {irq.irqbalance_variable}={irq.banned_value}"
            items.append((text, irq.variable_reason, owner))
        else:
            text = f"default_smp_affinity {irq.default.mask()} ({irq.default})"
            items.append((text, irq.reason, owner))
            items += [
                (f"{d.kind} {d.device} ({d.pci}) IRQs -> {d.cpus}", d.reason, f"irq.{d.device}")
                for d in irq.devices
            ]
    for mod in rt.modules:
        what = ("blacklist" + (" (hard)" if mod.hard else "")) if mod.blacklist else "module"
        opts = f" options {mod.options}" if mod.options else ""
        items.append((f"{what} {mod.name}{opts}", mod.reason, f"module.{mod.name}"))
    items += [
        (f"disable {x.unit}" + (" (stopped first)" if x.conflicts else ""), x.reason, x.unit)
        for x in rt.services_off
    ]
    # each row ends with the name `hostc explain` and preset.exclude know it by
    lines += [f"  {text}  [{name}]\n{_why(r)}" for text, r, name in items] or ["  (none)"]
    return lines


def hugepage_lines(plan: Plan) -> list[str]:
    """Each hugepage pool: its size, where it is reserved, its pages per node."""
    if not plan.hugepages:
        return []
    out = ["", "hugepage pools:"]
    for p in plan.hugepages:
        where = "boot" if p.when is When.BOOT else "runtime (hostc-hugepages.service)"
        nodes = ", ".join(f"node{n} {c}" for n, c in p.per_node) or "none"
        out += [f"  {format_kib(p.size_kib)} at {where}: {nodes}", f"      # {p.reason}"]
    return out


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
        lines += workload_lines(w)
    line = cmdline(plan)
    lines += [
        "",
        f"kernel command line ({len(line)} of {plan.host.cmdline_budget} bytes), "
        f"carried by {plan.boot.carrier}:",
        f"  # {plan.boot.reason}",
    ]
    lines += [f"  {a}\n      # {a.reason}" for a in kernel_args(plan)] or ["  (none)"]
    lines += hugepage_lines(plan)
    lines += ["", "sysctl:"]
    lines += [f"  {s.key} = {s.value}\n      # {s.reason}" for s in plan.sysctls] or ["  (none)"]
    lines += ["", "limits:"]
    lines += [f"  {x.item} {x.value}\n      # {x.reason}" for x in plan.limits] or ["  (none)"]
    if plan.modules_load:
        lines += ["", "modules loaded at every boot:"]
        lines += [f"  {x.name}\n      # {x.reason}" for x in plan.modules_load]
    if plan.left_out:
        lines += ["", "left out on purpose:"]
        lines += [f"  {x.setting}\n      # {x.reason}" for x in plan.left_out]
    lines += kubelet_view.lines(plan)
    lines += runtime_lines(plan)
    lines += provenance_lines(plan)
    return "\n".join(lines) + "\n"


def provenance_lines(plan: Plan) -> list[str]:
    """For a spec built from layers: which file set each spec value (a `(spec)` reason
    above names the key; this names the file and line)."""
    if not plan.provenance:
        return []
    width = max(len(p.key) for p in plan.provenance)
    out = ["", "spec values set by:"]
    for p in plan.provenance:
        where = f"{p.file}:{p.line}" if p.line else p.file
        out.append(f"  {p.key.ljust(width)}  {where}  ({p.source_key})")
    return out


def to_data(v: Any) -> Any:
    """Plain JSON data from Plan values: attrs classes by field, CpuSets as cpulists."""
    if isinstance(v, (CpuSet, Distro, *SOURCE_TYPES)):
        return str(v)  # a source as `hostc plan` shows it
    if isinstance(v, Value):  # named and timed by its setting's row
        return {
            "setting": v.name,
            "value": to_data(v.value),
            "reason": to_data(v.reason),
            "when": v.when.value,
        }

    if isinstance(v, Quantity | KubeVersion):
        return str(v)
    if isinstance(v, enum.Enum):
        return v.value
    if attrs.has(type(v)):
        return {
            f.name: to_data(getattr(v, f.name))
            for f in attrs.fields(type(v))
            if f.metadata.get(IN_PLAN_JSON, True)
        }
    if isinstance(v, tuple | list):
        return [to_data(x) for x in v]
    if isinstance(v, dict):
        return {str(k): to_data(x) for k, x in v.items()}
    return v


#: plan.json's format (its `format` key; format 1 had none).  2: every value of a
#: settings row is `{setting, value, reason, when}`, and the sysfs rows (governor,
#: EPP, THP defrag, …) are listed under `runtime.tunables` instead of named fields.
#: 3: the kernel-argument rows (THP's boot mode, …) likewise, under `cmdline_settings`
#: instead of a field each (`thp`), so that a new row changes no plan.json shape.
PLAN_JSON_FORMAT = 3


def plan_json(plan: Plan) -> dict[str, Any]:
    """The Plan as plain data: CPU sets as cpulists, every setting with its reason.

    Derived spellings (`cmdline`, the `numactl` lines) are added under `views`,
    apart from the Plan itself, so a reviewer sees both in one file.
    """
    data: dict[str, Any] = {"format": PLAN_JSON_FORMAT, **to_data(plan)}
    data["partition"]["cores"] = " ".join(data["partition"]["cores"])  # one line per PR diff
    if data.get("kubelet") is None:
        data.pop("kubelet", None)  # only Kubernetes nodes have one
    if not plan.provenance:
        data.pop("provenance", None)  # only specs built from layers (`extends`) have it
    data["views"] = {
        "cmdline": cmdline(plan),
        "numactl": {w.name: numactl(w) for w in plan.workloads},
    }
    return data


def dumps(plan: Plan) -> str:
    return json.dumps(plan_json(plan), indent=2, ensure_ascii=False) + "\n"
