"""golden/fleet/<host>/plan-delta.txt: a fleet host's plan.json as the values in which it
differs from the first host of its class, whose plan.json golden keeps in full.

Hosts of one class share most of their plan, so one preset change would rewrite the same
lines in every host's plan.json; kept as a delta, it changes the class's one plan.json,
and each host's file says only what sets the host apart (its name, its own keys, a
partition its overrides move).  The delta lists every JSON leaf (a scalar, an empty list
or mapping) whose value differs, by path, with a list of named items (`name`, `key`)
indexed by that name: with the first host's plan.json it gives every value of the host's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

#: what names an item of a list of mappings in plan.json
_ID_KEYS = ("name", "key")
#: the absence of a leaf on one side
ABSENT = "(absent)"


def _id(item: Any) -> str | None:
    if isinstance(item, dict):
        for key in _ID_KEYS:
            if isinstance(item.get(key), str):
                return str(item[key])
    return None


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, JSON of the value) for every leaf of a parsed plan.json."""
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list) and value:
        ids = [_id(v) for v in value]
        named = None not in ids and len(set(ids)) == len(ids)
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{ids[i] if named else i}]")
    else:
        yield path, json.dumps(value, ensure_ascii=False)


def delta(first: str, plan: str, first_name: str, host: str) -> str:
    """plan-delta.txt of `host` (plan.json text `plan`) against `first_name`'s `first`."""
    a, b = dict(leaves(json.loads(first))), dict(leaves(json.loads(plan)))
    lines = [
        f"# {host}'s plan.json is fleet/{first_name}/plan.json (the first host of its class)",
        "# but for these values, by JSON path: - there, + here.  Regenerate with --regen.",
    ]
    for path in sorted(a.keys() | b.keys()):
        if a.get(path) != b.get(path):
            lines += [path, f"  - {a.get(path, ABSENT)}", f"  + {b.get(path, ABSENT)}"]
    return "\n".join(lines) + "\n"
