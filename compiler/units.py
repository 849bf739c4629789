"""Sizes as the kernel writes them (2M, 1G) and conversions to KiB/MiB."""

from __future__ import annotations

import re

_SIZE = re.compile(r"^(\d+)([KMGT])$")
_MULT_KIB = {"K": 1, "M": 1024, "G": 1024**2, "T": 1024**3}


def size_kib(size: str) -> int:
    """`2M` → 2048, `1G` → 1048576.  Raises ValueError for anything else."""
    m = _SIZE.match(size.strip().upper())
    if not m:
        raise ValueError(f"{size!r} is not a size like 2M or 1G")
    return int(m.group(1)) * _MULT_KIB[m.group(2)]


def format_kib(kib: int) -> str:
    """2048 → `2M`, 1048576 → `1G`: the form the kernel command line takes."""
    for unit in ("T", "G", "M"):
        if kib % _MULT_KIB[unit] == 0 and kib >= _MULT_KIB[unit]:
            return f"{kib // _MULT_KIB[unit]}{unit}"
    return f"{kib}K"
