"""The NICs whose queues hostc changes: `irq.nic_devices` narrows the Plan's
`nic_channels` rows to the NICs it chooses (matched once, by `hostc.resolve.nics`, into
the runtime request); check has made sure every entry matches a NIC of the snapshot and
that some NIC is chosen."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hostc.plan.model import NicChannels, Reason
from hostc.provenance import SpecKeys, key
from hostc.resolve.requests import RuntimeRequest


def chosen_channels(req: RuntimeRequest, rows: Sequence[NicChannels]) -> tuple[NicChannels, ...]:
    """The rows of the chosen NICs, each saying it was chosen (the row keeps its shape:
    the TuneD profile and hostc-tuning read the same rows)."""
    picked = req.nics_chosen
    if picked is None:
        return tuple(rows)
    listed = ", ".join(req.nic_devices)
    chose = key("irq", "nic_devices")
    given = req.nic_channels is not None
    source = SpecKeys((chose, key("irq", "nic_channels"))) if given else chose
    out = []
    for row in rows:
        if row.device not in picked:
            continue
        why = f"{row.reason.why}; chosen by irq.nic_devices ({listed})"
        out.append(attrs.evolve(row, reason=Reason(source, why)))
    return tuple(out)
