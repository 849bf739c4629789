"""The NICs whose queues hostc changes: `irq.nic_devices` narrows the Plan's
`nic_channels` rows to the NICs it chooses (`hostc.resolve.nics`); check has made sure
every entry matches a NIC of the snapshot and that some NIC is chosen."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hostc.plan.model import NicChannels, Reason
from hostc.provenance import SpecKeys, key
from hostc.resolve import nics
from hostc.spec.model import HostSpec
from hostc.topology.model import Topology


def chosen_channels(
    spec: HostSpec, topo: Topology, rows: Sequence[NicChannels]
) -> tuple[NicChannels, ...]:
    """The rows of the chosen NICs, each saying it was chosen (the row keeps its shape:
    the TuneD profile and hostc-tuning read the same rows)."""
    entries = spec.irq.nic_devices
    if not entries:
        return tuple(rows)
    matches = [m for _, m in nics.parsed(entries) if isinstance(m, nics.NicMatch)]
    picked = {n.name for n in nics.chosen(matches, topo.nics)}
    listed = ", ".join(entries)
    chose = key("irq", "nic_devices")
    given = spec.irq.nic_channels is not None
    source = SpecKeys((chose, key("irq", "nic_channels"))) if given else chose
    out = []
    for row in rows:
        if row.device not in picked:
            continue
        why = f"{row.reason.why}; chosen by irq.nic_devices ({listed})"
        out.append(attrs.evolve(row, reason=Reason(source, why)))
    return tuple(out)
