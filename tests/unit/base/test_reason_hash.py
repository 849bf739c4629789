"""A `Reason`'s hash is `Record`'s, by value: equal reasons hash alike whether or not
either was hashed before, copied, evolved or pickled (a stale or other reason's hash
would make a fleet's memo key miss or collide)."""

from __future__ import annotations

import pickle

import attrs

from hostc.provenance import Reason, default, key, topology
from hostc.record import Record


def test_a_reasons_hash_is_records_hash() -> None:
    for r in (Reason(key("sysctl", "vm.swappiness"), "why"), Reason(default("x"), "y")):
        assert hash(r) == Record.__hash__(r)
        assert hash(r) == hash(r)


def test_equal_reasons_hash_alike_however_made() -> None:
    first = Reason(topology("gpus"), "the GPUs' node")
    hash(first)
    twin = Reason(topology("gpus"), "the GPUs' node")
    assert twin == first and hash(twin) == hash(first)
    changed = attrs.evolve(first, why="another reason")
    assert changed != first and hash(changed) == Record.__hash__(changed)
    back = pickle.loads(pickle.dumps(first))
    assert back == first and hash(back) == hash(first)
    assert len({first, twin, back, changed}) == 2
