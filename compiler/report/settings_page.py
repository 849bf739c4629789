"""docs/settings.md, generated from the settings table (TuneD keeps the manual on the
plugin; here it is the row).  The checkout's `python -m pytest --regen` writes it
(tests/helpers/regenerate.py); tests/unit/plan/test_settings_table.py fails when the
file is stale.  The installed package only renders the text: it never writes into a
source tree.
"""

from __future__ import annotations

from typing import Any

from hostc.settings.model import (
    Cmdline,
    Observe,
    Per,
    ProcLimit,
    Setting,
    SysctlKey,
    Sysfs,
    UnitProperty,
)
from hostc.settings.table import SETTINGS
from hostc.spec.presets import ENTRIES

_HEAD = """# Settings

Generated from `compiler/settings/table.py` (`python -m pytest --regen`); do not
edit.  Each setting is one row of that table: the name `hostc plan` and
`preset.exclude` use, its node.toml key, its type, when it takes effect, how preset
layers merge it (the spec always wins over every layer), the preset entries that set
it, and where a live host shows it.  Any other dotted name under `[sysctl]` is a
sysctl too.

Adding a runtime knob written to a sysfs file takes two places: its row in
`compiler/settings/table.py` (name, family `sysfs`, type, when, help, example, the
file a host shows it in) and its name in `SETTINGS`; and its preset entry in
`compiler/spec/preset_entries.py`, if a role sets it by default.  The Plan holds the
value by its row (`runtime.tunables`); `hostc plan`, plan.json, hostc-tuning (which
writes the row's file), the TuneD profile (the row's `tuned` option where TuneD has
one of its own, else `[sysfs]` under the row's file),
hostc-verify, `hostc explain` and `hostc audit` then read it from the row.  A knob the spec may
also set needs its node.toml field in `compiler/spec/model*.py` too (the input's
shape and the schema come from there).  A kernel argument `arg=value` is the same: a
row of family `cmdline` naming its word and the file a host also shows it in
(`observe=(Cmdline(arg), Sysfs(path))`, an enum or int type), held in
`cmdline_settings`; every carrier of the command line, `kernel.extra_args`' refusal,
hostc-verify, `hostc explain` and `hostc audit` read the row.  Then `python -m pytest
--regen` and review `git diff`.
"""

_MERGE = {
    "last": "a later layer replaces an earlier one",
    "max": "the largest value any layer asks for",
    "rise": "may only rise (unlimited beats every number)",
}


def observed(o: Observe) -> str:
    """Where a host shows a value, in one phrase."""
    match o:
        case Cmdline(arg):
            return f"`{arg}=` in /proc/cmdline"
        case SysctlKey(key):
            return f"{o.path} (`sysctl -n {key}`)"
        case Sysfs(path, per, choice):
            each = "" if per is Per.ONE else f" (one per {per})"
            return f"{path}{each}" + (" (the `[selected]` word)" if choice else "")
        case UnitProperty(prop, unit):
            return f"`systemctl show -p {prop}{' ' + unit if unit else ''}`"
        case ProcLimit(field):
            return f"/proc/<pid>/limits ({field})"
    return str(o)


def _presets(s: Setting[Any]) -> list[str]:
    return [f"{e.layer}: `{e.value}`" for e in ENTRIES if e.setting is s]


def section(s: Setting[Any]) -> list[str]:
    key = ".".join(s.spec_key) if s.spec_key else None
    if s.family.value == "sysctl":
        key = f'sysctl."{s.name}"'
    rows = [
        ("spec key", f"`{key}`" if key else "none (presets only; `preset.exclude` drops it)"),
        ("type", s.doc_type),
        ("takes effect", f"{s.when}"),
        ("merge", _MERGE[s.merge.value]),
        ("example", f"`{s.example}`"),
        ("presets", "; ".join(_presets(s)) or "none"),
        ("observed", "; ".join(observed(o) for o in s.observe) or "-"),
    ]
    return ["", f"## `{s.name}`", "", s.help, "", *(f"- {k}: {v}" for k, v in rows)]


def render() -> str:
    lines = [_HEAD.rstrip()]
    for s in SETTINGS:
        lines += section(s)
    return "\n".join(lines) + "\n"
