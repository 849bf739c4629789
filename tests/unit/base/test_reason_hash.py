"""`Reason` keeps its hash once made (`record.kept_hash`, a slot): it must be `Record`'s,
so equal reasons hash alike whether or not either was hashed before, copied, evolved or
pickled (a stale or other reason's hash would make a memo key miss or collide)."""

from __future__ import annotations

import pickle

import attrs

from hostc.provenance import Reason, default, key, topology
from hostc.record import Record


def test_a_kept_hash_is_records_hash() -> None:
    for r in (Reason(key("sysctl", "vm.swappiness"), "why"), Reason(default("x"), "y")):
        assert hash(r) == Record.__hash__(r)
        assert hash(r) == hash(r)  # kept


def test_equal_reasons_hash_alike_however_made() -> None:
    first = Reason(topology("gpus"), "the GPUs' node")
    hash(first)  # kept on `first` only
    twin = Reason(topology("gpus"), "the GPUs' node")
    assert twin == first and hash(twin) == hash(first)
    changed = attrs.evolve(first, why="another reason")
    assert changed != first and hash(changed) == Record.__hash__(changed)
    back = pickle.loads(pickle.dumps(first))
    assert back == first and hash(back) == hash(first)
    assert len({first, twin, back, changed}) == 2


def _values(value: object) -> list[object]:
    """`value` and every value it holds (Records' fields, tuples' items), depth first."""
    out = [value]
    if isinstance(value, Record) and attrs.has(type(value)):
        for f in attrs.fields(type(value)):
            out += _values(getattr(value, f.name))
    elif isinstance(value, tuple):
        for item in value:
            out += _values(item)
    return out


def test_a_plans_kept_hashes_are_records_hashes() -> None:
    """The Plan's parts a fleet's memo keys hash again and again (`RuntimeTuning`,
    `Sysctl`, … kept too): each kept hash is `Record`'s, after an evolve and a pickle
    too, so two hosts' equal Plans hash alike whichever was hashed first."""
    from hostc import api

    from conftest import ROOT

    plan = api.compile_file(ROOT / "examples" / "fleet" / "hosts" / "dgx-r1-01.toml")[0]
    kept = [v for v in _values(plan) if "_kept_hash" in dir(type(v))]
    assert {type(v).__name__ for v in kept} >= {"RuntimeTuning", "Sysctl", "Reason"}
    hash(plan)
    for v in kept:
        assert isinstance(v, Record)
        assert hash(v) == Record.__hash__(v)
        back = pickle.loads(pickle.dumps(v))  # a Setting is one object: not equal after
        assert hash(back) == Record.__hash__(back)  # made again, never carried
        assert hash(attrs.evolve(v)) == hash(v)
