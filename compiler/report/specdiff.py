"""The change as the reviewer wrote it: the spec keys whose value differs between the two
sides of `hostc diff`, named as diagnostics name them (`hugepages.total`,
`workload "serve-a".gpus`) with the values as node.toml writes them (`64 → 96`).

The sides are the merged specs (`extends` applied), so a class file's edit shows on
every host that extends it, with the file and line that set it (the Plan's
provenance).  The Plan-level diff (`hostc.report.plandiff`) shows what hostc made of
the change; a review shows this first and the Plan detail below it (first-day-4 V2)."""

from __future__ import annotations

import json
from typing import Any

import attrs

from hostc.keypath import ROOT, KeyPath
from hostc.plan.model import Plan
from hostc.record import Record
from hostc.spec.load import to_data
from hostc.spec.model import HostSpec


@attrs.frozen(repr=False, eq=False)
class SpecChange(Record):
    key: str  # the key path, as a diagnostic names it
    old: str | None  # the value as node.toml writes it; None: not set on that side
    new: str | None
    where: str | None  # `file:line` that sets it (the new side's; the old one's if removed)


def _toml(value: Any) -> str:
    """A scalar or an array of scalars as node.toml writes it (strings double-quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False, separators=(", ", " = "))


def flat(data: Any, path: KeyPath = ROOT) -> dict[KeyPath, str]:
    """Every set key of spec data (`to_data`) → its value: tables by key, an array of
    named tables (`[[workload]]`) by each entry's name, anything else as one value."""
    out: dict[KeyPath, str] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out |= flat(v, path.key(k))
    elif isinstance(data, list) and data and all(isinstance(v, dict) for v in data):
        for i, v in enumerate(data):
            name = v.get("name")
            out |= flat(v, path.named(i, name) if isinstance(name, str) else path.index(i))
    else:
        out[path] = _toml(data)
    return out


def _where(plan: Plan | None) -> dict[str, str]:
    """Provenance's key (`workload[0].gpus`, `modules.blacklist[0]`) → `file:line`."""
    if plan is None:
        return {}
    return {p.key: p.file + (f":{p.line}" if p.line is not None else "") for p in plan.provenance}


def _located(key: KeyPath, where: dict[str, str]) -> str | None:
    indexed = key.indexed()
    return where.get(indexed) or where.get(f"{indexed}[0]")


def spec_changes(
    old: HostSpec | None,
    new: HostSpec | None,
    old_plan: Plan | None = None,
    new_plan: Plan | None = None,
) -> tuple[SpecChange, ...]:
    """The keys that differ, in the new side's order then the removed ones; none when a
    side is a saved plan.json (it keeps no spec)."""
    if old is None or new is None:
        return ()
    a, b = flat(to_data(old)), flat(to_data(new))
    before, after = _where(old_plan), _where(new_plan)
    out = []
    for key in [*b, *(k for k in a if k not in b)]:
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        found = _located(key, after) if y is not None else _located(key, before)
        out.append(SpecChange(str(key), x, y, found))
    return tuple(out)
