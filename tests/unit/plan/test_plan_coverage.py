"""Every setting in the Plan carries a Reason whose source really exists.

The walk is generic (tests/helpers/plan_walk.py): a new Plan field is covered the day
it is added, with no list of fields to keep in step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from hostc import api
from hostc.locate import locate
from hostc.plan.model import Plan, Reason
from hostc.provenance import Fact, FactKind, Layer, PresetLayer, SpecKey, SpecKeys
from hostc.report import plan_view
from hostc.settings import SETTINGS, Family, Setting
from hostc.settings import table as t
from hostc.spec import presets
from hostc.spec.preset_entries import REALTIME_LEFT_OUT

from conftest import ROOT
from plan_walk import reasons, settings, walk
from regenerate import COMMAND

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/node.toml"))


#: Values derived from a preset setting keep that setting's layer: (holder path → setting).
DERIVED = {
    "plan.runtime.services_off": "runtime_owner",  # tuned.service stops for hostc-tuning
    "plan.runtime.iommu": "iommu",  # acs_off
}


def source_resolves(r: Reason, spec_text: str) -> bool:
    match r.source:
        case PresetLayer(layer):
            return layer in Layer
        case Fact(FactKind.TOPOLOGY | FactKind.DEFAULT, name):
            return bool(name)
        case Fact(FactKind.HOST):
            return True
        case SpecKey() | SpecKeys(keys=()):
            return locate(str(r.source), spec_text) is not None
        case SpecKeys(keys):
            return all(locate(str(k), spec_text) is not None for k in keys)
    return False


#: the rows of family ONE or DERIVED (a record a rule of lowering made for each) and the
#: kernel-argument rows (held by their row in `plan.cmdline_settings`)
ONE_VALUE = tuple(s for s in SETTINGS if s.family in (Family.ONE, Family.DERIVED, Family.CMDLINE))


def held(plan: Plan) -> dict[Setting[Any], Any]:
    """Where the Plan holds each one-value row (`Plan.held`; the sysfs rows are in
    `plan.runtime.tunables`)."""
    return {s: plan.held(s) for s in ONE_VALUE}


def test_every_one_value_row_is_held_by_the_plan() -> None:
    """A new row of family ONE or DERIVED must say in `Plan.held` where the Plan holds it
    (a KeyError here otherwise), or the coverage tests below would not see its values;
    a sysfs row is held by its row."""
    plan, _ = api.compile_file(EXAMPLES[0] / "node.toml")
    assert set(held(plan)) == set(ONE_VALUE)
    assert all(plan.held(s) is plan.runtime.tunable(s) for s in t.SYSFS_ROWS)


def table_values(plan: Plan) -> list[tuple[str, Any, Reason]]:
    """(setting, value, reason) of every value the settings table puts in the Plan."""
    out: list[tuple[str, Any, Reason]] = [(v.name, v, v.reason) for v in plan.runtime.tunables]
    for s, v in held(plan).items():
        if v is not None:
            reason = v.reason if hasattr(v, "reason") else plan.runtime.owner_reason
            out.append((s.name, v, reason))
    out += [(x.key, x.value, x.reason) for x in plan.sysctls]
    out += [(x.item, x.value, x.reason) for x in plan.limits]
    out += [(x.name, x.name, x.reason) for x in plan.modules_load]
    return out


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_a_preset_source_names_a_layer_with_an_entry_for_that_setting(example: Path) -> None:
    """A value attributed to a preset layer came from that layer's entry for it; a
    preset layer elsewhere is a LEFT_OUT row or a value derived from a preset setting."""
    plan, _ = api.compile_file(example / "node.toml")
    module_names = {s.example: s.name for s in SETTINGS if s.family is Family.MODULE_LOAD}
    for name, _, r in table_values(plan):
        if isinstance(r.source, PresetLayer):
            name = module_names.get(name, name)
            assert presets.entries_for(name, r.source.layer), (name, str(r))
    table_reasons = {id(r) for _, _, r in table_values(plan)}
    left_out = {x.reason.why for x in (*presets.LEFT_OUT, *REALTIME_LEFT_OUT)}
    for path, r in reasons(plan):
        if isinstance(r.source, PresetLayer) and id(r) not in table_reasons:
            derived = DERIVED.get(path.rsplit(".", 1)[0].split("[")[0])
            assert r.why in left_out or (
                derived is not None and presets.entries_for(derived, r.source.layer)
            ), (path, str(r))


def test_a_default_names_its_rule() -> None:
    """hostc's own defaults say `Fact("default", rule)`, never a preset layer."""
    from hostc.lower.irq import irqbalance_variable

    _, r = irqbalance_variable(None, SpecKey(("host", "os")))
    assert r.source == Fact(FactKind.DEFAULT, "irqbalance_hex_mask")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_reason_source_is_in_the_spec_a_preset_or_the_topology(example: Path) -> None:
    spec_path = example / "node.toml"
    plan, _ = api.compile_file(spec_path)
    text = spec_path.read_text()
    found = list(reasons(plan))
    assert found, "the walk found no reasons at all"
    bad = [(p, str(r)) for p, r in found if not (r.why and source_resolves(r, text))]
    assert bad == []


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_setting_has_a_reason(example: Path) -> None:
    plan, _ = api.compile_file(example / "node.toml")
    found = list(settings(plan))
    assert len(found) >= 5
    for path, s in found:
        assert isinstance(getattr(s, "reason", None), Reason), path


def test_walk_sees_a_field_added_later() -> None:
    """The walker is generic: a new attrs field holding a Reason is found without edits here."""

    @attrs.frozen
    class New:
        reason: Reason

    @attrs.frozen
    class Holder:
        items: tuple[New, ...]

    got = reasons(Holder((New(Reason(SpecKey(("x",)), "y")),)))
    assert [p for p, _ in got] == ["plan.items[0].reason"]
    assert len(list(walk(Holder(())))) == 1


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_plan_json_carries_every_reason(example: Path) -> None:
    plan, _ = api.compile_file(example / "node.toml")
    data = json.loads(plan_view.dumps(plan))
    text = json.dumps(data)
    for _, r in reasons(plan):
        assert json.dumps(r.why) in text


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_golden_plan_json_is_current(example: Path) -> None:
    plan, _ = api.compile_file(example / "node.toml")
    golden = ROOT / "golden" / example.name / "plan.json"
    assert golden.read_text() == plan_view.dumps(plan), f"{golden} is stale: run `{COMMAND}`"
