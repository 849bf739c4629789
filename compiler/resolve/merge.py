"""The preset merge of one host: the spec's keys that set a preset setting, the facts
the presets' conditions are judged on, and the merged settings with their provenance.

Resolved here, once, so lowering reads each setting's value and the layer or spec key
that chose it, never the spec keys themselves (issue 55 item 4: a spec key is
interpreted in one place).  `hostc explain` shows the same context the merge judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from hostc import settings
from hostc.plan.model import LeftOut, Placement
from hostc.provenance import SpecKey, Value, key
from hostc.record import Record
from hostc.resolve.host import ResolvedHost
from hostc.spec import presets
from hostc.spec.model import HostSpec
from hostc.spec.preset_entries import REALTIME_LEFT_OUT, binds_pods
from hostc.topology.model import Topology


def overrides(spec: HostSpec) -> list[presets.Override]:
    """Every spec key that sets a preset setting: the spec's sysctls, then each row of
    the settings table whose spec key the spec gives."""
    out = [
        presets.Override(settings.sysctl(k), v, key("sysctl", k)) for k, v in spec.sysctl.items()
    ]
    for s in settings.SETTINGS:
        if s.spec_key is None or s.family is settings.Family.DERIVED:
            continue
        given, value = s.spec_value(spec)
        if given:
            out.append(presets.Override(s, value, SpecKey(s.spec_key)))
    return out


def context(
    spec: HostSpec, topo: Topology, h: ResolvedHost, pins: Sequence[Placement]
) -> presets.Context:
    """What the presets' conditions are judged on: the host, its snapshot, the spec's
    workloads as placed (`pins`) and the spec's role, kubelet and real-time keys."""
    return presets.Context(
        role=spec.host.role,
        arch=h.arch,
        cpu_vendor=h.cpu_vendor,
        kernel=h.kernel,
        pinned=bool(pins),
        multi_node=len(topo.nodes) > 1,
        pods_bound=binds_pods(spec.kubelet),
        realtime=spec.cpu.realtime,
        rdma=any(k == "NCCL_IB_HCA" for w in pins for k, _ in w.env),
        features=(("amd_pstate", h.amd_pstate),) if h.amd_pstate is not None else (),
        gpu_vendors=tuple(sorted({g.vendor.lower() for g in topo.gpus if g.vendor})),
        rdma_nics=sum(1 for n in topo.nics if n.rdma),
        gpus=len(topo.gpus),
    )


def merged(spec: HostSpec, ctx: presets.Context) -> tuple[Value[Any], ...]:
    """Every setting of the merge: the presets under `ctx`, less `preset.exclude`, with
    the spec's own values last (the spec always wins)."""
    return tuple(presets.merge(ctx, overrides(spec), spec.preset.exclude))


@attrs.frozen(repr=False, eq=False)
class LeftOuts(Record):
    """The preset's settings left out on purpose, each with why (lowering puts isolation's
    own between the two, as the Plan has always listed them)."""

    preset: tuple[LeftOut, ...]  # the preset's, less a `skew_tick` the spec turns on
    realtime: tuple[LeftOut, ...]  # what `cpu.realtime` leaves out


def left_out(spec: HostSpec) -> LeftOuts:
    return LeftOuts(
        tuple(
            x for x in presets.LEFT_OUT if not (x.setting == "skew_tick" and spec.kernel.skew_tick)
        ),
        REALTIME_LEFT_OUT if spec.cpu.realtime else (),
    )
