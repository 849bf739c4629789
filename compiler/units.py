"""Sizes as the kernel writes them (2M, 1G), typed once at load as KiB."""

from __future__ import annotations

import re

import attrs

from hostc.record import Record

_SIZE = re.compile(r"^([0-9]+)([KMGT])B?$")
_MULT_KIB = {"K": 1, "M": 1024, "G": 1024**2, "T": 1024**3}


def size_kib(size: str) -> int:
    """`2M` → 2048, `1G` → 1048576, `2048K` → 2048.  Raises ValueError for anything else."""
    m = _SIZE.match(size.strip().upper())
    if not m or int(m.group(1)) == 0:
        raise ValueError(f"{size!r} is not a size like 2M or 1G")
    return int(m.group(1)) * _MULT_KIB[m.group(2)]


def format_kib(kib: int) -> str:
    """2048 → `2M`, 1048576 → `1G`: the form the kernel command line takes."""
    for unit in ("T", "G", "M"):
        if kib % _MULT_KIB[unit] == 0 and kib >= _MULT_KIB[unit]:
            return f"{kib // _MULT_KIB[unit]}{unit}"
    return f"{kib}K"


@attrs.frozen(repr=False, eq=False)
class PageSize(Record):
    """A page size in KiB; `str()` is the kernel's spelling (`1G`), whatever the input was."""

    kib: int

    @classmethod
    def parse(cls, text: str) -> PageSize:
        return cls(size_kib(text))

    def __str__(self) -> str:
        return format_kib(self.kib)

    @classmethod
    def json_schema(cls) -> dict[str, object]:
        """How node.toml writes a page size, for `hostc schema node`."""
        return {"type": "string", "pattern": "^[0-9]+[KMGTkmgt][Bb]?$"}
