"""`irq.nic_devices`: which NICs of the snapshot get their queues changed (NTO's
`net.devices`: interface name globs, `!` to exclude, vendor).

One entry is a shell glob matched against a NIC's names (its netdev, its RDMA device
and the snapshot's name for it), or `vendor=GLOB` against the snapshot's vendor (a
name such as Mellanox, or the PCI vendor ID as 0x15b3), or `pci=GLOB` against its PCI
address; a leading `!` excludes what the entry matches.  A NIC is chosen when some
including entry matches it (or there is none) and no excluding entry does.  Matching
is case-insensitive for vendors only (the snapshot spells vendors as its source did).
The patterns never leave hostc: the Plan's rows carry the snapshot's own names.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator, Sequence

import attrs

from hostc.record import Record
from hostc.topology.model import Nic

#: What an entry may hold after its `!` and field: name, PCI address and vendor
#: characters and the glob's `* ? [ ]`.
_GLOB = re.compile(r"[A-Za-z0-9_.:*?\[\]-]{1,64}")
#: `field=` prefixes an entry may carry (no prefix: the NIC's names)
FIELDS = ("vendor", "pci")


@attrs.frozen(repr=False, eq=False)
class NicMatch(Record):
    """One parsed entry of `irq.nic_devices`."""

    exclude: bool
    field: str  # "name", "vendor" or "pci"
    glob: str

    def matches(self, nic: Nic) -> bool:
        if self.field == "vendor":
            return nic.vendor is not None and fnmatch.fnmatch(nic.vendor.lower(), self.glob.lower())
        if self.field == "pci":
            return nic.pci is not None and fnmatch.fnmatchcase(nic.pci, self.glob)
        names = {n for n in (nic.netdev, nic.rdma, nic.name) if n}
        return any(fnmatch.fnmatchcase(n, self.glob) for n in names)


def parse(entry: str) -> NicMatch | str:
    """The entry, or why it is none."""
    body = entry[1:] if entry.startswith("!") else entry
    field, sep, glob = body.partition("=")
    if not sep:
        field, glob = "name", body
    elif field not in FIELDS:
        return (
            f"{entry[:40]!r}: {field[:20]!r}= is no field hostc matches NICs by "
            f"(a name glob, {', '.join(f + '=' for f in FIELDS)})"
        )
    if not _GLOB.fullmatch(glob):
        return (
            f"{entry[:40]!r} is not a NIC pattern: 1 to 64 letters, digits, `_.:-` and "
            "the glob's `*?[]`, after an optional `!` and field"
        )
    return NicMatch(entry.startswith("!"), field, glob)


def parsed(entries: Iterable[str]) -> Iterator[tuple[int, NicMatch | str]]:
    """Each entry by its index: parsed, or why not."""
    for i, entry in enumerate(entries):
        yield i, parse(entry)


def chosen(matches: Sequence[NicMatch], nics: Sequence[Nic]) -> list[Nic]:
    """The NICs the entries choose (every NIC where there is no entry)."""
    include = [m for m in matches if not m.exclude]
    exclude = [m for m in matches if m.exclude]
    return [
        n
        for n in nics
        if (not include or any(m.matches(n) for m in include))
        and not any(m.matches(n) for m in exclude)
    ]


def shown(nic: Nic) -> str:
    """A NIC as a diagnostic lists it: its names, vendor and PCI address."""
    names = "/".join(dict.fromkeys(n for n in (nic.netdev, nic.rdma, nic.name) if n))
    extra = ", ".join(x for x in (nic.vendor, nic.pci) if x)
    return f"{names} ({extra})" if extra else names
