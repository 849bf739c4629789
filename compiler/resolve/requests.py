"""What the spec asks of the kernel and the runtime, read once for lowering.

Each record holds spec keys as lowering needs them: defaults applied where a default
is the spec's own rule (the isolation mechanisms and isolcpus flags, the source key a
reason names), and whether a key was given where a reason or a rule says so.  Lowering
reads these and the merged settings (`hostc.resolve.merge`), never the spec (issue 55
item 4: a spec key is interpreted in one place; `tests/project/test_lowering_reads_resolve.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from hostc.cpuset import CpuSet
from hostc.provenance import Source, SpecKey, default, key
from hostc.record import Record
from hostc.resolve import nics
from hostc.resolve.cpu import isolcpus_flags, mechanisms
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology
from hostc.units import PageSize
from hostc.vocab import CStatesAt, GpuDirect, IsolcpusFlag, Mechanism, NicChannelChoice


@attrs.frozen(repr=False, eq=False)
class IsolationRequest(Record):
    """The isolation mechanisms and isolcpus flags asked for, and the keys that asked."""

    mechanisms: tuple[Mechanism, ...]  # `cpu.mechanisms`, else the default rule's
    #: `cpu.mechanisms` is given (else the default, with nohz_full from busy_poll)
    given: bool
    source: SpecKey  # `cpu.mechanisms` where given, else `cpu.isolate`
    flags: tuple[IsolcpusFlag, ...]  # `cpu.isolcpus_flags`, else managed_irq
    flags_given: bool
    flags_source: SpecKey  # `cpu.isolcpus_flags` where given, else `source`
    busy_poll: tuple[int, ...]  # the indices of the workloads that declare busy_poll


def isolation(spec: HostSpec) -> IsolationRequest:
    given = spec.cpu.mechanisms is not None
    src = key("cpu", "mechanisms" if given else "isolate")
    flags_given = spec.cpu.isolcpus_flags is not None
    return IsolationRequest(
        mechanisms=mechanisms(spec),
        given=given,
        source=src,
        flags=isolcpus_flags(spec),
        flags_given=flags_given,
        flags_source=key("cpu", "isolcpus_flags") if flags_given else src,
        busy_poll=tuple(i for i, w in enumerate(spec.workload) if w.busy_poll),
    )


@attrs.frozen(repr=False, eq=False)
class KernelRequest(Record):
    """`[kernel]`'s keys that become kernel arguments or choose where C-states are capped."""

    skew_tick: bool
    init_on_alloc: bool | None  # None: the kernel's build default
    extra_args: tuple[str, ...]  # verbatim, `kernel.extra_args[i]` each
    cstates_at: CStatesAt | None  # None: at runtime, per CPU (the default)


def kernel(spec: HostSpec) -> KernelRequest:
    k = spec.kernel
    return KernelRequest(k.skew_tick, k.init_on_alloc, tuple(k.extra_args), k.cstates_at)


@attrs.frozen(repr=False, eq=False)
class RuntimeRequest(Record):
    """The spec's runtime keys: offline CPUs, modules, services, NIC queues, GPUDirect."""

    offline: CpuSet  # `cpu.offline` (empty: none)
    blacklist: tuple[str, ...]  # `modules.blacklist`
    hard_block: bool  # `modules.hard_block`
    module_options: Mapping[str, str]  # `modules.options`, module → options
    gpudirect: GpuDirect  # `modules.gpudirect`, else auto
    gpudirect_source: Source  # the key, or hostc's default
    services_off: tuple[str, ...]  # `services.disable`
    nic_channels: NicChannelChoice | None  # `irq.nic_channels` (None: not given)
    nic_devices: tuple[str, ...]  # `irq.nic_devices` as written (the reasons list them)
    #: the snapshot's names of the NICs `irq.nic_devices` chooses (None: no entry)
    nics_chosen: frozenset[str] | None


def runtime(spec: HostSpec, topo: Topology) -> RuntimeRequest:
    m, irq = spec.modules, spec.irq
    chosen = None
    if irq.nic_devices:
        matches = [x for _, x in nics.parsed(irq.nic_devices) if isinstance(x, nics.NicMatch)]
        chosen = frozenset(n.name for n in nics.chosen(matches, topo.nics))
    return RuntimeRequest(
        offline=spec.cpu.offline or CpuSet(),
        blacklist=tuple(m.blacklist),
        hard_block=m.hard_block,
        module_options=m.options,
        gpudirect=m.gpudirect or GpuDirect.AUTO,
        gpudirect_source=key("modules", "gpudirect")
        if m.gpudirect is not None
        else default("gpudirect"),
        services_off=tuple(spec.services.disable),
        nic_channels=irq.nic_channels,
        nic_devices=tuple(irq.nic_devices),
        nics_chosen=chosen,
    )


def default_hugepagesz(spec: HostSpec) -> PageSize | None:
    """`hugepages.default_size` (None: not given, the first pool's size then)."""
    return spec.hugepages.default_size if spec.hugepages is not None else None
