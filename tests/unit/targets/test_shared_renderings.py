"""Renderings a fleet's hosts share: a part of a file that names no host is memoized by
the value of everything it is rendered from (`_render.shared`; whole targets, the
registry's `_emitted`, by the Plan less the host's name and files; `verify._row`, by the
expectation), so two hosts of one class render it once.  A cache that answered by
identity, or returned the last host's rendering, would give a host another's name or
another's values: these catch both."""

from __future__ import annotations

import attrs

from hostc import api
from hostc import targets as registry
from hostc.plan.model import Plan
from hostc.targets import verify
from hostc.targets._render import shared

from conftest import ROOT

HOSTS = ROOT / "examples" / "fleet" / "hosts"


def files(plan: Plan) -> dict[str, bytes]:
    return {a.path: a.data for a in api.emit(plan, ["all"])}


def compiled(name: str) -> Plan:
    return api.compile_file(HOSTS / f"{name}.toml")[0]


def test_hosts_that_differ_only_in_name_each_get_their_own_name() -> None:
    plan = compiled("dgx-r1-01")
    twin = attrs.evolve(plan, host=attrs.evolve(plan.host, name="dgx-r9-99"))
    first, second = files(plan), files(twin)  # the twin's renderings all cached by now
    assert second.keys() == first.keys()
    for path, data in first.items():
        assert b"dgx-r9-99" not in data, path
        assert second[path] == data.replace(b"dgx-r1-01", b"dgx-r9-99"), path
    assert b"dgx-r9-99" in second[verify.SCRIPT]
    assert files(plan) == first  # and back: the first host's own name again


def test_hosts_of_one_class_each_get_their_own_checks() -> None:
    """dgx-r2-04 adds rp_filter sysctls to its class: its verifier checks them, and a
    host of the class without them, built before and after it, does not."""
    plain, more = compiled("dgx-r1-01"), compiled("dgx-r2-04")
    before, other, after = files(plain), files(more), files(plain)
    assert b"rp_filter" in other[verify.SCRIPT]
    assert b"rp_filter" not in before[verify.SCRIPT]
    assert after == before


def test_every_file_is_what_an_empty_cache_renders() -> None:
    """Each example fleet host built after all the others (the cache holding their
    renderings) is byte for byte what it is built alone, from an empty cache."""
    names = [p.stem for p in sorted(HOSTS.glob("*.toml"))]
    warm = {n: files(compiled(n)) for n in names}
    for n in names:
        shared.cache_clear()
        verify._row.cache_clear()
        registry._emitted.cache_clear()
        assert files(compiled(n)) == warm[n], n
