"""The settings table (`hostc.settings.table`) and the lookups every stage shares."""

from __future__ import annotations

import functools
from typing import Any

from hostc.settings.model import Family as Family
from hostc.settings.model import Merge as Merge
from hostc.settings.model import Setting as Setting
from hostc.settings.model import sysctl_setting
from hostc.settings.table import KNOWN_SYSCTLS
from hostc.settings.table import SETTINGS as SETTINGS

BY_NAME: dict[str, Setting[Any]] = {s.name: s for s in (*SETTINGS, *KNOWN_SYSCTLS)}


@functools.cache
def sysctl(key: str) -> Setting[Any]:
    """The row of sysctl `key`: the declared one, or one made for a key only the spec
    names (any dotted name is a sysctl)."""
    declared = BY_NAME.get(key)
    if declared is not None:
        return declared
    return sysctl_setting(key, "set by the spec")
