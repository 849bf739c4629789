"""The change between two Plans, at Plan level, from their plan.json data: CPUs that moved
between housekeeping, isolated and workloads per node; settings added, removed and
changed, each with both reasons.  Working on the data (not Plan objects) lets a saved
plan.json be one side."""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from hostc.cpuset import CpuSet
from hostc.record import Record

#: fields that name a list entry, so an entry keeps its name when the list reorders
NAME_FIELDS = ("key", "item", "name", "mechanism", "unit", "device", "size_kib", "node", "setting")
#: pictures and views, diffed as CPUs, or the file's format
SKIP = ("views", "nodes", "hardware", "partition", "format")


@attrs.frozen(repr=False, eq=False)
class Move(Record):
    node: str  # node id, or "?" for CPUs on no node
    cpus: str  # cpulist
    old: str  # housekeeping | isolated | offline | workload name(s) | absent
    new: str


@attrs.frozen(repr=False, eq=False)
class SettingChange(Record):
    name: str
    change: str  # added | removed | changed
    old: str | None
    new: str | None
    old_reason: str | None
    new_reason: str | None


@attrs.frozen(repr=False, eq=False)
class PlanDiff(Record):
    moves: tuple[Move, ...]
    settings: tuple[SettingChange, ...]

    def __bool__(self) -> bool:
        return bool(self.moves or self.settings)


def roles_of(data: dict[str, Any]) -> dict[int, tuple[str, str]]:
    """CPU → (node, what it is), from the data alone."""
    part = data["partition"]
    hk = CpuSet.parse(part["housekeeping"])
    owners: dict[int, list[str]] = {}
    for w in data.get("workloads", []):
        for cpu in CpuSet.parse(w["cpus"]):
            owners.setdefault(cpu, []).append(w["name"])
    node_of = {cpu: str(n["id"]) for n in data.get("nodes", []) for cpu in CpuSet.parse(n["cpus"])}
    out = {}
    for cpu in CpuSet.parse(part["online"]):
        what = (
            "+".join(owners[cpu])
            if cpu in owners
            else ("housekeeping" if cpu in hk else "isolated")
        )
        out[cpu] = (node_of.get(cpu, "?"), what)
    for node, cpus in data.get("hardware", {}).get("offline", []):
        for cpu in CpuSet.parse(cpus):
            out[cpu] = ("?" if node is None else str(node), "offline")
    return out


def moves(old: dict[str, Any], new: dict[str, Any]) -> tuple[Move, ...]:
    a, b = roles_of(old), roles_of(new)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for cpu in sorted(set(a) | set(b)):
        was, now = a.get(cpu, ("?", "absent")), b.get(cpu, ("?", "absent"))
        if was[1] != now[1]:
            node = now[0] if now[0] != "?" else was[0]
            groups.setdefault((node, was[1], now[1]), []).append(cpu)
    return tuple(
        Move(node, str(CpuSet(ids)), was, now)
        for (node, was, now), ids in sorted(groups.items(), key=lambda kv: (kv[0][0], min(kv[1])))
    )


def _is_setting(v: Any) -> bool:
    return isinstance(v, dict) and any(
        (k == "reason" or k.endswith("_reason")) and isinstance(x, dict) for k, x in v.items()
    )


def _has_settings(v: Any) -> bool:
    if _is_setting(v):
        return True
    if isinstance(v, list):
        return any(_has_settings(x) for x in v)
    if isinstance(v, dict):
        return any(_has_settings(x) for x in v.values())
    return False


def _reason(r: Any) -> str | None:
    return f"{r['source']}: {r['why']}" if isinstance(r, dict) and "source" in r else None


def _fields(d: dict[str, Any], label: str | None) -> dict[str, str]:
    """The setting's own fields, compact: its name (its row's `setting` too), reasons,
    `when` and nested settings left out."""
    return {
        k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        for k, v in d.items()
        if not (
            k in ("reason", "when", "setting", label) or k.endswith("_reason") or _has_settings(v)
        )
    }


def show(fields: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())


def _label_field(v: dict[str, Any]) -> str | None:
    return next((f for f in NAME_FIELDS if v.get(f) is not None), None)


def flatten(
    data: Any, path: str = "", label: str | None = None
) -> dict[str, tuple[dict[str, str], str | None]]:
    """Every setting in plan data → (value, reason), named by its path with list entries
    named by their key (`sysctls[vm.swappiness]`, `runtime.modules[bluetooth]`)."""
    out: dict[str, tuple[dict[str, str], str | None]] = {}
    if isinstance(data, dict):
        if path and _is_setting(data):
            reasons = [
                _reason(x) for k, x in data.items() if k == "reason" or k.endswith("_reason")
            ]
            out[path] = (_fields(data, label), "; ".join(r for r in reasons if r) or None)
        for k, v in data.items():
            if not path and k in SKIP:
                continue
            out.update(flatten(v, f"{path}.{k}" if path else k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            field = _label_field(v) if isinstance(v, dict) else None
            name = str(v[field]) if field and isinstance(v, dict) else str(i)
            out.update(flatten(v, f"{path}[{name}]", field))
    return out


def with_partition(data: dict[str, Any]) -> dict[str, tuple[dict[str, str], str | None]]:
    """The settings, and the partition's own choices (its CPU sets are the moves)."""
    part = {
        k: v
        for k, v in data["partition"].items()
        if k not in ("online", "housekeeping", "isolated", "cores")
    }
    return {**flatten(part, "partition"), **flatten(data)}


def settings(old: dict[str, Any], new: dict[str, Any]) -> tuple[SettingChange, ...]:
    """Added and removed settings with their whole value; changed ones with only the
    fields that changed (`cpus=4-29 → cpus=5-30`), each with both reasons."""
    a, b = with_partition(old), with_partition(new)
    out = []
    for name in [*a, *(k for k in b if k not in a)]:
        if name not in b:
            out.append(SettingChange(name, "removed", show(a[name][0]), None, a[name][1], None))
        elif name not in a:
            out.append(SettingChange(name, "added", None, show(b[name][0]), None, b[name][1]))
        elif a[name] != b[name]:
            x, y = a[name][0], b[name][0]
            # a field that held a setting is left out of its parent; gone, it is `null`:
            # the same nothing (the setting's own row says it was removed)
            keys = [
                k
                for k in [*x, *(k for k in y if k not in x)]
                if x.get(k, "null") != y.get(k, "null")
            ]
            if not keys and a[name][1] == b[name][1]:
                continue
            was = show({k: x[k] for k in keys if k in x})
            now = show({k: y[k] for k in keys if k in y})
            out.append(SettingChange(name, "changed", was, now, a[name][1], b[name][1]))
    return tuple(out)


def diff(old: dict[str, Any], new: dict[str, Any]) -> PlanDiff:
    return PlanDiff(moves(old, new), settings(old, new))


_LISTED = re.compile(r"sysctls\[(.+)\]")


def named(data: Any, path: str = "") -> dict[str, str]:
    """Flattened plan path → the settings-table name its value carries (`setting` in
    plan.json format 3: `cmdline_settings[transparent_hugepage]` →
    transparent_hugepage, `runtime.tunables[cpu_governor]` → cpu_governor); sysctls by
    their key (`sysctls[vm.swappiness]` → vm.swappiness)."""
    out: dict[str, str] = {}
    if isinstance(data, dict):
        if path and isinstance(data.get("setting"), str):
            out[path] = data["setting"]
        for k, v in data.items():
            if path or k not in SKIP:
                out.update(named(v, f"{path}.{k}" if path else k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            field = _label_field(v) if isinstance(v, dict) else None
            name = str(v[field]) if field and isinstance(v, dict) else str(i)
            out.update(named(v, f"{path}[{name}]"))
    return out


def setting_name(flat: str, names: dict[str, str]) -> str | None:
    """The settings-table name (what `preset.exclude` takes) of a flattened path, given
    `named()` of the plan.json it came from (None: not a row's value, a workload say)."""
    m = _LISTED.fullmatch(flat)
    if m is not None:
        return m.group(1)
    return names.get(flat)
