"""Role presets as data: typed entries with conditions, one layered merge for every setting.

An entry names a setting by its row in the settings table (`hostc.settings`), a
value of the row's type, a one-line reason, the layer it belongs to and the
conditions under which it applies (arch, CPU vendor, role, pinned workloads,
kernel range).  Layers apply in order (base, the role, the role with pinned
workloads) and combine by each setting's merge rule (last wins; the largest
socket buffer; a limit may only rise), then `preset.exclude`, then the spec, which
always wins.  Each value remembers the layer that set it, which is what `hostc
plan` and the artifacts' comments show.  TuneD's mutating merge forgets this; here
the merge is a pure function, and no kind of setting is special-cased.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import attrs

from hostc.provenance import Layer, PresetLayer, Reason, SpecKey, Value
from hostc.record import Record
from hostc.settings.model import Setting
from hostc.spec.preset_entries import ENTRIES as ENTRIES
from hostc.spec.preset_entries import LEFT_OUT as LEFT_OUT
from hostc.spec.presets_model import Cond as Cond
from hostc.spec.presets_model import Context as Context
from hostc.spec.presets_model import Entry as Entry

#: Layer order: a later layer overrides an earlier one.
LAYERS: tuple[Layer, ...] = tuple(Layer)


@attrs.frozen(repr=False, eq=False)
class Override(Record):
    """A value the spec sets (value None: the spec turns the preset's setting off)."""

    setting: Setting[Any]
    value: Any
    source: SpecKey


#: A merged value: the setting's row, its value and the layer or spec key that chose it;
#: the Plan holds the one-value settings as they come out of the merge.
Resolved = Value[Any]


def merge(
    ctx: Context, overrides: Iterable[Override] = (), exclude: Iterable[str] = ()
) -> list[Resolved]:
    """Layered merge of every setting at once.

    Order: preset order, then settings only the spec sets.  Each value keeps the
    layer that set it.
    """
    out = dict(_presets_for(ctx))
    for name in exclude:
        out.pop(name, None)
    for o in overrides:
        name = o.setting.name
        prev = out.pop(name, None) if o.value is None else out.get(name)
        if o.value is None:
            continue
        why = f"set by the spec (preset had {prev.value})" if prev else "set by the spec"
        out[name] = Resolved(o.setting, o.value, Reason(o.source, why))
    return list(out.values())


def _by_layer() -> tuple[tuple[Layer, tuple[Entry[Any], ...]], ...]:
    return tuple((layer, tuple(e for e in ENTRIES if e.layer is layer)) for layer in LAYERS)


_BY_LAYER = _by_layer()


@functools.lru_cache(maxsize=64)
def _presets_for(ctx: Context) -> tuple[tuple[str, Resolved], ...]:
    """What the preset layers set for one context: a pure function of the (constant)
    table and the context's facts, so each context's answer is worked out once."""
    out: dict[str, Resolved] = {}
    for layer, entries in _BY_LAYER:
        for e in entries:
            if not e.cond.holds(ctx):
                continue
            prev = out.get(e.setting.name)
            if prev is None or e.setting.merge.takes(prev.value, e.value):
                out[e.setting.name] = Resolved(
                    e.setting, e.value, Reason(PresetLayer(layer), e.why)
                )
    return tuple(out.items())


def preset_settings() -> set[str]:
    return {e.setting.name for e in ENTRIES}


def entries_for(name: str, layer: Layer) -> list[Entry[Any]]:
    """The entries of one layer for one setting (the coverage test, `hostc explain`)."""
    return [e for e in ENTRIES if e.setting.name == name and e.layer is layer]


def quoted(key: str) -> str:
    """A TOML key as written in a path: dotted sysctl names are quoted."""
    return f'"{key}"' if "." in key else key
