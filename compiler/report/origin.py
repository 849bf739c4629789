"""Where a value came from, as a chain a reviewer can follow: the spec file and line,
or the preset layer and the condition that selected it, or the hardware fact in the
topology snapshot.  A spec key is located in the one spec file given: with fleet
inheritance (not yet here) the file of the chain that set the key must come from the
value's provenance instead, and a test row in tests/test_explain.py is waiting for it."""

from __future__ import annotations

import attrs

from hostc.locate import locate
from hostc.plan import Plan, Reason
from hostc.spec import presets


@attrs.frozen
class Origin:
    kind: str  # spec | preset | topology | host
    file: str | None
    line: int | None
    text: str  # one line: what set it
    detail: tuple[str, ...] = ()  # the preset's condition, the layers it overrode

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


#: command-line spellings whose preset setting has another name
PRESET_NAMES = {"intel_idle.max_cstate": "max_cstate", "processor.max_cstate": "max_cstate"}


def origin(
    name: str, r: Reason, plan: Plan, spec: tuple[str, str], topo: tuple[str, str]
) -> Origin:
    """`spec` and `topo` are (file, text) of the spec and its topology snapshot."""
    if r.source.startswith("preset:"):
        return _preset(
            PRESET_NAMES.get(name, name), r.source.removeprefix("preset:"), plan, spec[0]
        )
    if r.source.startswith("topology:") or r.source == "host":
        fact = r.source.removeprefix("topology:")
        line = _topology_line(fact, topo[1]) if r.source != "host" else None
        what = f"hardware fact `{fact}`" if r.source != "host" else "the host's facts"
        return Origin("topology", topo[0], line, f"{what} in the topology snapshot")
    line = locate(r.source, spec[1])
    return Origin("spec", spec[0], line, f"spec key {r.source}")


def _topology_line(fact: str, text: str) -> int | None:
    """The snapshot line that states `fact`: a device's `name = "…"`, else a table header."""
    for want in (f'name = "{fact}"', f"[{fact}]", f"[[{fact}]]", f"{fact} ="):
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip() == want or line.strip().startswith(want):
                return n
    return None


def context(plan: Plan) -> presets.Context:
    """The facts the preset conditions read, as the Plan records them."""
    h = plan.host
    return presets.Context(h.role, h.arch, h.cpu_vendor, h.kernel_version, bool(plan.workloads))


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
    if c.kernel_min is not None:
        parts.append(f"kernel ≥ {c.kernel_min[0]}.{c.kernel_min[1]}")
    if c.kernel_below is not None:
        parts.append(f"kernel < {c.kernel_below[0]}.{c.kernel_below[1]}")
    return ", ".join(parts) or "every host"


def _preset(setting: str, layer: str, plan: Plan, spec_file: str) -> Origin:
    ctx = context(plan)
    held = [e for e in presets.ENTRIES if e.setting == setting and e.cond.holds(ctx)]
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
    return Origin(
        "preset", None, None, f"preset layer `{layer}` ({spec_file} does not set it)", tuple(detail)
    )
