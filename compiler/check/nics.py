"""`irq.nic_devices`: every entry names NICs of the snapshot, and the entries choose
some.  A typo must not silently choose nothing (or exclude nothing)."""

from __future__ import annotations

from collections.abc import Iterator

from hostc.diagnostics import Diagnostic, at, error, warning
from hostc.resolve import Resolved, nics
from hostc.spec.model import IsolateMode
from hostc.vocab import NicChannelChoice

#: NICs a diagnostic lists at most
SHOWN = 8


def _listed(found: list[str]) -> str:
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return ", ".join(found[:SHOWN]) + more if found else "none"


def nic_devices_match(r: Resolved) -> Iterator[Diagnostic]:
    entries = r.spec.irq.nic_devices
    if not entries:
        return
    all_nics = r.topo.nics
    known = _listed([nics.shown(n) for n in all_nics])
    matches, sound = [], True
    for i, m in nics.parsed(entries):
        path = at("irq", "nic_devices", i)
        if isinstance(m, str):
            yield error(path, m)
            sound = False
        elif not any(m.matches(n) for n in all_nics):
            what = "excludes" if m.exclude else "matches"
            yield error(
                path,
                f"{entries[i][:40]!r} {what} no NIC of the snapshot",
                hint=f"the snapshot's NICs: {known}",
            )
            sound = False
        else:
            matches.append(m)
    if not sound:
        return
    with_pci = [n for n in all_nics if n.pci is not None]
    if not nics.chosen(matches, with_pci):
        yield error(
            at("irq", "nic_devices"),
            "chooses no NIC: what it includes it excludes again, or the NICs it names have "
            "no PCI address in the snapshot (hostc changes queues by PCI function)",
            hint=f"the snapshot's NICs: {known}",
        )
        return
    if r.spec.irq.nic_channels is NicChannelChoice.KEEP:
        yield warning(
            at("irq", "nic_devices"),
            'has no effect: irq.nic_channels = "keep" leaves every NIC\'s queues as the '
            "driver has them",
        )
    elif r.spec.cpu.isolation is IsolateMode.NONE:
        yield warning(
            at("irq", "nic_devices"),
            "has no effect: hostc changes NIC queues only on a host that isolates CPUs",
        )
