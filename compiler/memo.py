"""Values derived from a frozen object, remembered for as long as the object lives.

A Topology or a Plan is frozen, so a view computed from it (the CPUs of a node,
the kernel arguments) cannot go stale; several stages and targets ask for the
same view, and computing it once per object is what keeps a build cheap.  Frozen
slotted attrs classes have no `__dict__` for `functools.cached_property`, so the
views live here, keyed by the object's id and dropped when it is collected.
"""

from __future__ import annotations

import weakref
from typing import Any

#: id(object) → its derived views; an entry goes when its object does.
_MEMO: dict[int, dict[object, Any]] = {}
_REF = object()  # the memo's own key for the weak reference that clears it


def _drop(key: int) -> Any:
    return lambda _ref: _MEMO.pop(key, None)


def memo_of(obj: object) -> dict[object, Any]:
    """The views remembered for `obj` (an empty dict the first time)."""
    key = id(obj)
    memo = _MEMO.get(key)
    if memo is None:
        # the reference lives in the memo: it fires (and clears the entry) when obj dies
        memo = _MEMO[key] = {_REF: weakref.ref(obj, _drop(key))}
    return memo
