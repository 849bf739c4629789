"""CpuSet: an immutable set of CPU ids in the kernel's cpulist syntax.

Parsed once (in load, read or lower) and carried typed through the Plan, so no
target ever re-parses or re-derives a CPU list.  Formatting is always canonical
(ascending, merged ranges), which keeps command lines short and diffs readable.

The set is held as one integer bitmask, bit i for CPU i, as the kernel holds a
cpumask: union, intersection, difference and subset are a few machine-word
operations instead of a hash probe per CPU (a 224-CPU intersection went from
about 50,000 instructions to a few hundred, and lowering does dozens a build).
Ids are capped at MAX_CPU, so no mask is larger than 8 KiB.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# ASCII digits only: `\d` (and int()) would take Arabic-Indic or full-width digits.
_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+)(?::([0-9]+)/([0-9]+))?)?$")
_HEX_WORD = re.compile(r"[0-9a-fA-F]{1,8}")
#: The highest CPU id hostc accepts anywhere (spec, snapshot, every importer).
MAX_CPU = 65535
_MAX_WORDS = (MAX_CPU + 1) // 32


class CpuListError(ValueError):
    """A cpulist that does not follow the kernel's syntax."""


def _bits_of(ids: Iterable[int]) -> int:
    """The bitmask of `ids`: through a bytearray, so the cost is linear in the ids and
    the mask's size, not ids × size as `bits |= 1 << i` would be."""
    items = ids if isinstance(ids, (list, tuple, set, frozenset, range)) else list(ids)
    if not items:
        return 0
    low, high = min(items), max(items)
    if low < 0:
        raise ValueError(f"negative CPU id {low}")
    if high > MAX_CPU:
        raise ValueError(f"CPU id {high} is beyond CPU {MAX_CPU}")
    buf = bytearray((high >> 3) + 1)
    for i in items:
        buf[i >> 3] |= 1 << (i & 7)
    return int.from_bytes(buf, "little")


class CpuSet:
    """CPU ids; ``str()`` gives the canonical cpulist (``0-3,8-11``).

    Immutable (every attribute is set once, in the constructor or as a cache of a
    value computed from the mask), hashable, equal when the CPUs are equal."""

    __slots__ = ("__weakref__", "_bits", "_ids", "_mask", "_text")

    _bits: int
    _ids: frozenset[int] | None
    _text: str | None
    _mask: str | None

    def __init__(self, ids: Iterable[int] = ()) -> None:
        _set(self, "_bits", _bits_of(ids))
        _set(self, "_ids", None)
        _set(self, "_text", None)
        _set(self, "_mask", None)

    @classmethod
    def _from_bits(cls, bits: int) -> CpuSet:
        """A set from a mask already known to be valid (an operation on CpuSets)."""
        new = object.__new__(cls)
        _set(new, "_bits", bits)
        _set(new, "_ids", None)
        _set(new, "_text", None)
        _set(new, "_mask", None)
        return new

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"CpuSet is immutable (cannot set {name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"CpuSet is immutable (cannot delete {name})")

    def __reduce__(self) -> tuple[type[CpuSet], tuple[tuple[int, ...]]]:
        return (CpuSet, (tuple(self),))

    @property
    def bits(self) -> int:
        """The mask: bit i set for CPU i."""
        return self._bits

    @property
    def ids(self) -> frozenset[int]:
        if self._ids is None:
            _set(self, "_ids", frozenset(self._positions()))
        return self._ids  # type: ignore[return-value]

    def _positions(self) -> list[int]:
        """Set bits, ascending, from the runs (a full node is one run, one C extend)."""
        out: list[int] = []
        for a, b in self.ranges():
            out.extend(range(a, b + 1))
        return out

    @classmethod
    def parse(cls, text: str) -> CpuSet:
        """Parse ``a,b``, ``a-b`` and ``a-b:used/group`` (the forms with a fixed meaning).

        ``N`` and ``all`` depend on the host they are evaluated on, so they are
        refused: hostc resolves everything at compile time.
        """
        text = text.strip()
        if not text:
            return cls()
        bits = 0
        for part in text.split(","):
            part = part.strip()
            m = _RANGE.match(part)
            if m is None:
                if part.lower() == "all" or "N" in part:
                    raise CpuListError(
                        f"{part!r} depends on the host at boot; write the CPUs out (e.g. 0-63)"
                    )
                raise CpuListError(f"{part!r} is not a CPU number or range (expected e.g. 0-3,8)")
            if any(g is not None and len(g) > 6 for g in m.groups()):
                raise CpuListError(f"{part[:40]!r} names a CPU beyond any supported machine")
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) is not None else lo
            if hi < lo:
                raise CpuListError(f"range {part!r} is descending")
            if hi > MAX_CPU:
                raise CpuListError(f"CPU {hi} is beyond any supported machine")
            if m.group(3) is not None:
                used, group = int(m.group(3)), int(m.group(4))
                if group == 0 or used == 0 or used > group:
                    raise CpuListError(f"stride {part!r} needs 0 < used <= group")
                run = (1 << used) - 1
                for start in range(lo, hi + 1, group):
                    bits |= (run & ((1 << (hi + 1 - start)) - 1)) << start
            else:
                bits |= ((1 << (hi - lo + 1)) - 1) << lo
        return cls._from_bits(bits)

    @classmethod
    def from_mask(cls, mask: str) -> CpuSet:
        """Parse a hex mask, comma-separated 32-bit words, most significant first.

        An empty word means zero (hwloc writes ``0x00000001,,0x00000001``).
        """
        words = mask.strip().split(",")
        if len(words) > _MAX_WORDS:
            raise CpuListError(f"the mask reaches past CPU {MAX_CPU}")
        digits = []
        for w in words:
            w = w.strip()
            if w[:2] in ("0x", "0X"):
                w = w[2:]
            if not w:
                w = "0"  # an empty word is zero
            elif _HEX_WORD.fullmatch(w) is None:
                raise CpuListError(f"{mask[:40]!r} is not a hex CPU mask")
            digits.append(w.rjust(8, "0"))
        return cls._from_bits(int("".join(digits), 16))

    def ranges(self) -> list[tuple[int, int]]:
        """Runs of consecutive CPUs, ascending: work per run, not per possible CPU (a
        core's two CPUs near CPU 8191 are two steps, not a walk over 8,192 digits)."""
        out: list[tuple[int, int]] = []
        bits, at = self._bits, 0
        while bits:
            skip = (bits & -bits).bit_length() - 1  # zeros below the next run
            bits >>= skip
            at += skip
            run = (~bits & (bits + 1)).bit_length() - 1  # ones at the bottom
            out.append((at, at + run - 1))
            bits >>= run
            at += run
        return out

    def __str__(self) -> str:
        if self._text is None:
            text = ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in self.ranges())
            _set(self, "_text", text)  # a cache on an immutable value
            return text
        return self._text

    @classmethod
    def json_schema(cls) -> dict[str, object]:
        """How node.toml writes a cpulist, for `hostc schema node`."""
        return {"type": "string", "pattern": "^[0-9,:/ -]*$", "format": "cpulist"}

    def __repr__(self) -> str:
        return f"CpuSet({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CpuSet):
            return self._bits == other._bits
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._bits)

    def mask(self) -> str:
        """Hex mask as ``/proc/irq/*/smp_affinity`` writes it: 32-bit words, comma-separated."""
        if self._mask is None:
            digits = f"{self._bits:x}"
            digits = digits.rjust(max(8, -(-len(digits) // 8) * 8), "0")
            _set(self, "_mask", ",".join(digits[i : i + 8] for i in range(0, len(digits), 8)))
        return self._mask  # type: ignore[return-value]

    def expanded(self, sep: str = ",") -> str:
        return sep.join(map(str, self._positions()))

    def __iter__(self) -> Iterator[int]:
        return iter(self._positions())

    def __len__(self) -> int:
        return self._bits.bit_count()

    def __contains__(self, cpu: object) -> bool:
        return isinstance(cpu, int) and cpu >= 0 and (self._bits >> cpu) & 1 == 1

    def __bool__(self) -> bool:
        return self._bits != 0

    def __or__(self, other: CpuSet) -> CpuSet:
        return CpuSet._from_bits(self._bits | other._bits)

    def __and__(self, other: CpuSet) -> CpuSet:
        return CpuSet._from_bits(self._bits & other._bits)

    def __sub__(self, other: CpuSet) -> CpuSet:
        return CpuSet._from_bits(self._bits & ~other._bits)

    def __le__(self, other: CpuSet) -> bool:
        return self._bits & ~other._bits == 0

    def isdisjoint(self, other: CpuSet) -> bool:
        return self._bits & other._bits == 0

    def min(self) -> int:
        if not self._bits:
            raise ValueError("min() of an empty CpuSet")
        return (self._bits & -self._bits).bit_length() - 1


_set = object.__setattr__
