"""Every setting in the Plan carries a Reason whose source really exists.

The walk is generic (tests/helpers/plan_walk.py): a new Plan field is covered the day
it is added, with no list of fields to keep in step.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from hostc import api, plan_view
from hostc.locate import locate
from hostc.plan import Reason
from hostc.spec.presets import LAYERS

from conftest import ROOT
from plan_walk import reasons, settings, walk
from regenerate import COMMAND

EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/node.toml"))


def source_resolves(r: Reason, spec_text: str) -> bool:
    if r.source.startswith("preset:"):
        return r.source.removeprefix("preset:") in LAYERS
    if r.source.startswith("topology:"):
        return bool(r.source.removeprefix("topology:"))
    return locate(r.source, spec_text) is not None


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

    assert [p for p, _ in reasons(Holder((New(Reason("x", "y")),)))] == ["plan.items[0].reason"]
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
