"""schemas/ is generated from the attrs models; stale schemas fail.  Examples validate."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from hostc.api import schemas as schema

from conftest import ROOT
from regenerate import COMMAND


@pytest.mark.parametrize("which", schema.SCHEMAS)
def test_checked_in_schema_is_current(which: str) -> None:
    path = ROOT / "schemas" / f"{which}.schema.json"
    assert path.read_text() == schema.dumps(which), f"{path} is stale: run `{COMMAND}`"


def _validate(data: Any, sch: dict[str, Any], root: dict[str, Any], where: str) -> list[str]:
    """A small JSON-Schema subset checker (what our generator emits)."""
    if "$ref" in sch:
        return _validate(data, root["$defs"][sch["$ref"].split("/")[-1]], root, where)
    if "anyOf" in sch:
        errs = [_validate(data, s, root, where) for s in sch["anyOf"]]
        return [] if any(not e for e in errs) else errs[0]
    if "enum" in sch:
        return [] if data in sch["enum"] else [f"{where}: {data!r} not in enum"]
    t = sch.get("type")
    if t == "object":
        if not isinstance(data, dict):
            return [f"{where}: not an object"]
        out = [f"{where}: missing {k}" for k in sch.get("required", []) if k not in data]
        props = sch.get("properties")
        for k, v in data.items():
            if props is not None:
                if k not in props:
                    out.append(f"{where}: unexpected {k}")
                else:
                    out += _validate(v, props[k], root, f"{where}.{k}")
            elif isinstance(sch.get("additionalProperties"), dict):
                out += _validate(v, sch["additionalProperties"], root, f"{where}.{k}")
        return out
    if t == "array":
        if not isinstance(data, list):
            return [f"{where}: not an array"]
        return [
            e for i, x in enumerate(data) for e in _validate(x, sch["items"], root, f"{where}[{i}]")
        ]
    checks = {
        "integer": lambda x: isinstance(x, int) and not isinstance(x, bool),
        "string": lambda x: isinstance(x, str),
        "boolean": lambda x: isinstance(x, bool),
    }
    return [] if t is None or checks[t](data) else [f"{where}: not {t}"]


@pytest.mark.parametrize(
    "spec", sorted((ROOT / "examples").glob("*/node.toml")), ids=lambda p: p.parent.name
)
def test_examples_match_the_schemas(spec: Path) -> None:
    node = json.loads((ROOT / "schemas" / "node.schema.json").read_text())
    topo = json.loads((ROOT / "schemas" / "topology.schema.json").read_text())
    assert _validate(tomllib.loads(spec.read_text()), node, node, "$") == []
    snap = tomllib.loads((spec.parent / "topology.toml").read_text())
    assert _validate(snap, topo, topo, "$") == []


def test_schema_checker_can_fail() -> None:
    node = json.loads((ROOT / "schemas" / "node.schema.json").read_text())
    bad = {"host": {"name": "x", "role": "nope"}, "cpu": {"isolte": "rest"}}
    errs = _validate(bad, node, node, "$")
    assert any("nope" in e for e in errs) and any("isolte" in e for e in errs)
