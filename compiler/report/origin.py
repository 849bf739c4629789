"""Where a value came from, as a chain a reviewer can follow: the spec file and line,
or the preset layer and the condition that selected it, or the hardware fact in the
topology snapshot.  A spec key is located in the spec file given, or, for a spec built
from layers (`extends`), in the file of the chain that set it (the Plan's provenance)."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from hostc.locate import locate
from hostc.plan.model import Plan, Provenance, Reason
from hostc.provenance import Fact, FactKind, Layer, PresetLayer
from hostc.record import Record
from hostc.spec import presets


@attrs.frozen(repr=False, eq=False)
class ShownOrigin(Record):
    kind: str  # spec | preset | topology | default
    file: str | None
    line: int | None
    text: str  # one line: what set it
    detail: tuple[str, ...] = ()  # the preset's condition, the layers it overrode

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


#: command-line spellings whose preset setting has another name
PRESET_NAMES = {"intel_idle.max_cstate": "max_cstate", "processor.max_cstate": "max_cstate"}


def origin(
    name: str,
    r: Reason,
    plan: Plan,
    spec: tuple[str, str],
    topo: tuple[str, str],
    ctx: presets.Context,
) -> ShownOrigin:
    """`spec` and `topo` are (file, text) of the spec and its topology snapshot; `ctx`
    the facts the preset conditions were judged on (lower's own Context)."""
    match r.source:
        case PresetLayer(layer):
            return _preset(PRESET_NAMES.get(name, name), layer, ctx, spec[0])
        case Fact(FactKind.TOPOLOGY, fact):
            line = _topology_line(fact, topo[1])
            return ShownOrigin(
                "topology", topo[0], line, f"hardware fact `{fact}` in the topology snapshot"
            )
        case Fact(FactKind.HOST):
            return ShownOrigin(
                "topology", topo[0], None, "the host's facts in the topology snapshot"
            )
        case Fact(FactKind.DEFAULT, rule):
            return ShownOrigin("default", None, None, f"hostc's default rule `{rule}`")
    return _spec_origin(r, plan, spec)


def _spec_origin(r: Reason, plan: Plan, spec: tuple[str, str]) -> ShownOrigin:
    """A spec key: in the spec file, or in the layer of the chain that set it."""
    inherited = _provenance(str(r.source), plan)
    if inherited is not None:
        file = os.path.normpath(Path(spec[0]).parent / inherited.file)
        via = () if inherited.source_key == inherited.key else (f"as {inherited.source_key}",)
        text = (
            f"spec key {r.source}, inherited"
            if inherited.file != Path(spec[0]).name
            else (f"spec key {r.source}")
        )
        return ShownOrigin("spec", file, inherited.line, text, via)
    line = locate(str(r.source), spec[1])
    return ShownOrigin("spec", spec[0], line, f"spec key {r.source}")


def _provenance(key: str, plan: Plan) -> Provenance | None:
    """The provenance row of `key` or of the closest table above it (a layered spec)."""
    rows = {p.key: p for p in plan.provenance}
    probe = key
    while probe:
        if probe in rows:
            return rows[probe]
        probe = probe.rpartition(".")[0]
    return None


def _topology_line(fact: str, text: str) -> int | None:
    """The snapshot line that states `fact`: a device's `name = "…"`, else a table header."""
    for want in (f'name = "{fact}"', f"[{fact}]", f"[[{fact}]]", f"{fact} ="):
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip() == want or line.strip().startswith(want):
                return n
    return None


def describe(c: presets.Cond) -> str:
    parts = []
    if c.arch:
        parts.append("arch " + " or ".join(c.arch))
    if c.vendor:
        parts.append("CPU vendor " + " or ".join(c.vendor))
    if c.roles:
        parts.append("role " + " or ".join(c.roles))
    if c.pinned is not None:
        parts.append("workloads pinned to NUMA nodes" if c.pinned else "no pinned workloads")
    if c.multi_node is not None:
        parts.append("several NUMA nodes" if c.multi_node else "one NUMA node")
    if c.pods_bound is not None:
        parts.append(
            "the kubelet binds pods to their NUMA nodes (Static memory manager, restricted "
            "or single-numa-node)"
            if c.pods_bound
            else "the kubelet binds no pod to its NUMA nodes"
        )
    if c.realtime:
        parts.append("cpu.realtime = true")
    if c.rdma is not None:
        parts.append("a workload gets RDMA NICs" if c.rdma else "no workload gets RDMA NICs")
    if c.gpu_vendor:
        parts.append("GPUs by " + " or ".join(c.gpu_vendor))
    if c.min_rdma_nics:
        parts.append(f"≥ {c.min_rdma_nics} RDMA NIC(s)")
    if c.feature is not None:
        parts.append(f"kernel bounds judged by {c.feature} (distribution backports count)")
    if c.kernel_min is not None:
        parts.append(f"kernel ≥ {c.kernel_min[0]}.{c.kernel_min[1]}")
    if c.kernel_below is not None:
        parts.append(f"kernel < {c.kernel_below[0]}.{c.kernel_below[1]}")
    return ", ".join(parts) or "every host"


def _preset(setting: str, layer: Layer, ctx: presets.Context, spec_file: str) -> ShownOrigin:
    held = [e for e in presets.ENTRIES if e.setting.name == setting and e.cond.holds(ctx)]
    chosen = next((e for e in reversed(held) if e.layer == layer), None)
    detail = []
    if chosen is not None:
        detail.append(
            f"condition: {describe(chosen.cond)} (this host: role {ctx.role}, "
            f"arch {ctx.arch}, vendor {ctx.cpu_vendor or '?'}, kernel "
            + (".".join(map(str, ctx.kernel)) if ctx.kernel else "?")
            + ")"
        )
    detail += [
        f"overrides layer `{e.layer}`: {e.value}"
        for e in held
        if e is not chosen and presets.LAYERS.index(e.layer) < presets.LAYERS.index(layer)
    ]
    return ShownOrigin(
        "preset", None, None, f"preset layer `{layer}` ({spec_file} does not set it)", tuple(detail)
    )
