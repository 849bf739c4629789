"""CpuSet: an immutable set of CPU ids in the kernel's cpulist syntax.

Parsed once (in load, read or lower) and carried typed through the Plan, so no
target ever re-parses or re-derives a CPU list.  Formatting is always canonical
(ascending, merged ranges), which keeps command lines short and diffs readable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import attrs

# ASCII digits only: `\d` (and int()) would take Arabic-Indic or full-width digits.
_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+)(?::([0-9]+)/([0-9]+))?)?$")
_HEX_WORD = re.compile(r"[0-9a-fA-F]{1,8}")
#: The highest CPU id hostc accepts anywhere (spec, snapshot, every importer).
MAX_CPU = 65535
_MAX_WORDS = (MAX_CPU + 1) // 32


class CpuListError(ValueError):
    """A cpulist that does not follow the kernel's syntax."""


def _to_frozenset(value: Iterable[int]) -> frozenset[int]:
    return value if type(value) is frozenset else frozenset(value)


@attrs.frozen(order=False)
class CpuSet:
    """CPU ids; ``str()`` gives the canonical cpulist (``0-3,8-11``)."""

    ids: frozenset[int] = attrs.field(converter=_to_frozenset, factory=frozenset)
    #: the canonical text, computed on first use (a frozen value: it cannot go stale)
    _text: str | None = attrs.field(
        default=None, init=False, eq=False, hash=False, repr=False, alias="_text"
    )

    #: the hex mask, computed on first use like the text
    _mask: str | None = attrs.field(
        default=None, init=False, eq=False, hash=False, repr=False, alias="_mask"
    )

    def __attrs_post_init__(self) -> None:
        if self.ids and (low := min(self.ids)) < 0:
            raise ValueError(f"negative CPU id {low}")

    @classmethod
    def _of(cls, ids: frozenset[int]) -> CpuSet:
        """A set of ids already known to be valid (the union, intersection or difference
        of CpuSets): no conversion, no check.  Lowering makes thousands of these."""
        new = object.__new__(cls)
        object.__setattr__(new, "ids", ids)
        object.__setattr__(new, "_text", None)
        object.__setattr__(new, "_mask", None)
        return new

    @classmethod
    def parse(cls, text: str) -> CpuSet:
        """Parse ``a,b``, ``a-b`` and ``a-b:used/group`` (the forms with a fixed meaning).

        ``N`` and ``all`` depend on the host they are evaluated on, so they are
        refused: hostc resolves everything at compile time.
        """
        text = text.strip()
        if not text:
            return cls()
        ids: set[int] = set()
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
                for start in range(lo, hi + 1, group):
                    ids.update(c for c in range(start, min(start + used, hi + 1)))
            else:
                ids.update(range(lo, hi + 1))
        return cls(ids)

    @classmethod
    def from_mask(cls, mask: str) -> CpuSet:
        """Parse a hex mask, comma-separated 32-bit words, most significant first.

        An empty word means zero (hwloc writes ``0x00000001,,0x00000001``).
        """
        words = mask.strip().split(",")
        if len(words) > _MAX_WORDS:
            raise CpuListError(f"the mask reaches past CPU {MAX_CPU}")
        ids: list[int] = []
        top = len(words) - 1
        for k, w in enumerate(words):
            w = w.strip()
            if w[:2] in ("0x", "0X"):
                w = w[2:]
            if not w:
                continue  # an empty word is zero
            if _HEX_WORD.fullmatch(w) is None:
                raise CpuListError(f"{mask[:40]!r} is not a hex CPU mask")
            word = int(w, 16)
            base = (top - k) * 32
            while word:
                low = word & -word
                ids.append(base + low.bit_length() - 1)
                word ^= low
        return cls(ids)

    def ranges(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        start = prev = -2
        for i in sorted(self.ids):
            if i != prev + 1:
                if prev >= 0:
                    out.append((start, prev))
                start = i
            prev = i
        if prev >= 0:
            out.append((start, prev))
        return out

    def __str__(self) -> str:
        if self._text is None:
            text = ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in self.ranges())
            object.__setattr__(self, "_text", text)  # a cache on a frozen value
            return text
        return self._text

    def __repr__(self) -> str:
        return f"CpuSet({str(self)!r})"

    def mask(self) -> str:
        """Hex mask as ``/proc/irq/*/smp_affinity`` writes it: 32-bit words, comma-separated."""
        if self._mask is None:
            object.__setattr__(self, "_mask", self._make_mask())  # a cache, like _text
        return self._mask  # type: ignore[return-value]

    def _make_mask(self) -> str:
        words = [0] * (max(self.ids, default=0) // 32 + 1)
        for i in self.ids:
            words[i >> 5] |= 1 << (i & 31)
        digits = "".join(f"{w:08x}" for w in reversed(words)).lstrip("0") or "0"
        width = max(8, -(-len(digits) // 8) * 8)
        digits = digits.rjust(width, "0")
        return ",".join(digits[i : i + 8] for i in range(0, len(digits), 8))

    def expanded(self, sep: str = ",") -> str:
        return sep.join(str(i) for i in sorted(self.ids))

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self.ids))

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, cpu: object) -> bool:
        return cpu in self.ids

    def __bool__(self) -> bool:
        return bool(self.ids)

    def __or__(self, other: CpuSet) -> CpuSet:
        return CpuSet._of(self.ids | other.ids)

    def __and__(self, other: CpuSet) -> CpuSet:
        return CpuSet._of(self.ids & other.ids)

    def __sub__(self, other: CpuSet) -> CpuSet:
        return CpuSet._of(self.ids - other.ids)

    def __le__(self, other: CpuSet) -> bool:
        return self.ids <= other.ids

    def isdisjoint(self, other: CpuSet) -> bool:
        return self.ids.isdisjoint(other.ids)

    def min(self) -> int:
        return min(self.ids)
