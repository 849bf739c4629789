"""JSON Schemas generated from the attrs models (the settings table).

`schemas/*.json` are this module's output, checked in; a test fails when they
are stale.  Field metadata gives each property its description and example.
"""

from __future__ import annotations

import collections.abc
import enum
import json
import types
import typing
from typing import Any

import attrs

from hostc.spec.layers import SCHEMA
from hostc.spec.text import json_schema

SCHEMAS = ("node", "topology")


def _type(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    from hostc.spec.structure import SCALARS

    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if (text := json_schema(tp)) is not None:
        return text
    if any(tp is s.type for s in SCALARS):  # a scalar says how node.toml writes it
        return dict(tp.json_schema())
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [_type(a, defs) for a in args if a is not type(None)]
        return options[0] if len(options) == 1 else {"anyOf": options}
    if origin in (list, tuple):  # a spec's arrays are `tuple[X, ...]`
        return {"type": "array", "items": _type(args[0], defs)}
    if origin in (dict, collections.abc.Mapping):  # a spec's tables are `Mapping[K, V]`
        schema: dict[str, Any] = {"type": "object", "additionalProperties": _type(args[1], defs)}
        if args[0] is int:
            schema["propertyNames"] = {"pattern": "^[0-9]+$"}
        return schema
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is str:
        return {"type": "string"}
    if attrs.has(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}
            defs[name] = _object(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    raise TypeError(f"no schema for {tp!r}")


def _object(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required = []
    for f in attrs.fields(cls):
        prop = _type(hints[f.name], defs)
        if "help" in f.metadata:
            prop = {**prop, "description": f.metadata["help"]}
        if "example" in f.metadata:
            prop["examples"] = [f.metadata["example"]]
        if f.default is attrs.NOTHING:
            required.append(f.name)
        props[f.name] = prop
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if cls.__doc__:
        out["description"] = " ".join(cls.__doc__.split())
    if required:
        out["required"] = required
    return out


def build(which: str) -> dict[str, Any]:
    if which == "node":
        from hostc.spec.model import HostSpec as root

        title = "hostc node.toml"
    else:
        # the file as written (version 2), not the in-memory Topology
        from hostc.topology.compact import SnapshotFile as root  # type: ignore[assignment]

        title = "hostc topology snapshot"
    defs: dict[str, Any] = {}
    body = _object(root, defs)
    if which == "node":
        body["properties"] = {**body["properties"], **SCHEMA}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://hostc.dev/schemas/{which}.schema.json",
        "title": title,
        **body,
        "$defs": dict(sorted(defs.items())),
    }


def dumps(which: str) -> str:
    return json.dumps(build(which), indent=2, ensure_ascii=False) + "\n"
