"""Kubernetes memory quantities (`1Gi`, `512Mi`, plain bytes), typed once at load.

Only the binary suffixes Ki, Mi, Gi, Ti and plain byte counts are taken.
Decimal SI suffixes (`1G` = 10^9 bytes), fractions (`1.5Gi`), exponents and
milli-units are refused with a message that says what to write instead: a
reservation off by 7 % because `G` was read as `Gi` is exactly the mistake
that makes the kubelet's reserved-memory sum fail at start-up.
"""

from __future__ import annotations

import re

import attrs

_QUANTITY = re.compile(r"^([0-9]+)(Ki|Mi|Gi|Ti)?$")
_MULT = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4}
_DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?(k|K|M|G|T|P|E)$")
_OTHER_BINARY = re.compile(r"^[0-9]+(\.[0-9]+)?(Pi|Ei)$")

#: A kubelet byte count stays well inside int64; anything larger is a typo.
MAX_BYTES = 2**62


class QuantityError(ValueError):
    pass


def _refusal(text: str) -> str:
    t = text.strip()
    if _DECIMAL.match(t):
        suffix = t[-1]
        return (
            f"{text!r} uses the decimal SI suffix {suffix!r} (powers of 1000); hostc takes "
            f"Ki, Mi, Gi, Ti (powers of 1024) or plain bytes: write {t[:-1]}{suffix.upper()}i "
            "if you meant the binary unit"
        )
    if _OTHER_BINARY.match(t):
        return f"{text!r}: hostc takes Ki, Mi, Gi and Ti, not Pi or Ei"
    if re.match(r"^[0-9]*\.[0-9]+", t) or re.match(r"^[0-9]+\.", t):
        return (
            f"{text!r} has a fraction; write a whole number of a smaller unit (1536Mi, not 1.5Gi)"
        )
    if re.match(r"^[0-9]+m$", t):
        return f"{text!r} is in milli-units; memory is counted in bytes (Ki, Mi, Gi, Ti)"
    if re.match(r"^[0-9]+[eE][0-9]+$", t):
        return f"{text!r} has an exponent; write Ki, Mi, Gi, Ti or plain bytes"
    if t.startswith(("-", "+")):
        return f"{text!r}: a reservation is a non-negative amount without a sign"
    return f"{text!r} is not a quantity like 1Gi, 512Mi or 1073741824 (bytes)"


@attrs.frozen(order=True)
class Quantity:
    """A number of bytes; `str()` is the exact binary form the kubelet reads back (`2148Mi`)."""

    bytes: int

    @classmethod
    def parse(cls, text: str | int) -> Quantity:
        if isinstance(text, bool):
            raise QuantityError(f"{text!r} is not a quantity")
        if isinstance(text, int):
            if text < 0:
                raise QuantityError(f"{text}: a reservation is a non-negative number of bytes")
            value = text
        else:
            m = _QUANTITY.match(text.strip()) if text.isascii() else None
            if m is None:
                raise QuantityError(_refusal(text))
            value = int(m.group(1)) * (_MULT[m.group(2)] if m.group(2) else 1)
        if value > MAX_BYTES:
            raise QuantityError(f"{text!r} is more memory than any host has")
        return cls(value)

    @classmethod
    def mib(cls, n: int) -> Quantity:
        return cls(n * 1024**2)

    @classmethod
    def json_schema(cls) -> dict[str, object]:
        """How node.toml writes a quantity (binary suffixes or bytes), for `hostc schema node`."""
        return {
            "anyOf": [
                {"type": "string", "pattern": "^[0-9]+(Ki|Mi|Gi|Ti)?$"},
                {"type": "integer", "minimum": 0},
            ]
        }

    def __str__(self) -> str:
        for suffix in ("Ti", "Gi", "Mi", "Ki"):
            if self.bytes and self.bytes % _MULT[suffix] == 0:
                return f"{self.bytes // _MULT[suffix]}{suffix}"
        return str(self.bytes)

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.bytes + other.bytes)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.bytes - other.bytes)

    @property
    def in_mib(self) -> str:
        """`2148Mi` for sums people compare; exact bytes when not a whole MiB."""
        if self.bytes % _MULT["Mi"] == 0:
            return f"{self.bytes // _MULT['Mi']}Mi"
        return f"{self.bytes} bytes"


ZERO = Quantity(0)


def total(values: list[Quantity]) -> Quantity:
    return Quantity(sum(v.bytes for v in values))
