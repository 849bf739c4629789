"""One parse path: a HostSpec is typed by the loader's converter and nothing else.

A loaded spec is deeply immutable (tuples and FrozenMaps, never a list, dict or set), so
it cannot be changed into an untyped one after the converter checked it; `compile_plan`
takes it as it is.  Any other spec (built in Python, or made by `attrs.evolve`) goes
through the converter again, and a wrong value there is a HostcError naming its key
path (exit 2), never a TypeError from inside hostc (exit 3).  The converter is also the
one place names, sysctls and kernel arguments are refused: a spec built in Python gets
the very errors the same node.toml gets."""

from __future__ import annotations

import pickle
import tomllib
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from hostc import api
from hostc.diagnostics import HostcError
from hostc.record import FrozenMap
from hostc.spec import load as spec_load
from hostc.spec import model as m
from hostc.topology.model import Topology

from conftest import ROOT
from immutable import mutable_inside
from topogen import H100_KW, machine

TOPO: Topology = machine(**H100_KW)  # type: ignore[arg-type]
SPECS = sorted(
    p
    for p in (ROOT / "examples").rglob("*.toml")
    if p.name != "topology.toml" and p.parent.name != "packer"
)
BASE = 'version = 1\n[host]\nname = "t"\nrole = "inference"\nkernel = "6.8"\n'


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_a_loaded_spec_is_deeply_immutable(path: Path) -> None:
    spec, _ = spec_load.load(path)
    assert list(mutable_inside(spec, "spec")) == []
    assert hash(spec) == hash(spec_load.from_data(spec_load.to_data(spec)))  # hashable all through


def test_a_loaded_spec_cannot_be_changed_by_its_caller() -> None:
    """The review's exit-3 crash: `extra_args.append(42)` on a loaded spec, then
    `compile_plan`.  Now the append itself fails, in the caller's code."""
    spec = api.loads_spec(
        BASE + '[kernel]\nextra_args = ["quiet"]\n[sysctl]\n"vm.swappiness" = 1\n'
    )
    with pytest.raises(AttributeError):
        spec.kernel.extra_args.append(42)  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        spec.sysctl["vm.swappiness"] = 2  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        spec.kernel.extra_args = ("42",)  # type: ignore[misc]
    assert spec.kernel.extra_args == ("quiet",) and spec.sysctl == {"vm.swappiness": 1}


@pytest.mark.parametrize(
    "change",
    [
        lambda s: attrs.evolve(s, kernel=attrs.evolve(s.kernel, extra_args=[42])),
        lambda s: attrs.evolve(s, kernel=attrs.evolve(s.kernel, extra_args=(42,))),
        lambda s: attrs.evolve(s, sysctl={**s.sysctl, "vm.swappiness": [1]}),
    ],
    ids=["list", "tuple", "table"],
)
def test_an_evolved_spec_with_a_wrong_value_is_a_hostc_error_naming_its_key(
    change: Callable[[m.HostSpec], m.HostSpec],
) -> None:
    """`attrs.evolve` makes a new spec that the converter did not make: it is checked
    again, and the error names the key path, as the loader's would."""
    spec = change(api.loads_spec(BASE + '[kernel]\nextra_args = ["quiet"]\n'))
    with pytest.raises(HostcError) as e:
        api.compile_plan(spec, TOPO)
    (d,) = e.value.diagnostics
    assert str(d.path) in ("kernel.extra_args[0]", 'sysctl."vm.swappiness"', "sysctl")
    assert "expected" in d.message


def test_a_loaded_spec_is_compiled_without_structuring_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CLI build parses its spec once; a spec changed by `attrs.evolve`, copied or
    unpickled is structured again (the converter's mark is no attrs field)."""
    spec = api.loads_spec(BASE)
    calls: list[object] = []
    real = spec_load.from_data
    monkeypatch.setattr(spec_load, "from_data", lambda *a, **k: calls.append(a) or real(*a, **k))
    api.compile_plan(spec, TOPO)
    assert calls == []
    for other in (attrs.evolve(spec), pickle.loads(pickle.dumps(spec))):
        assert other == spec
        api.compile_plan(other, TOPO)
    assert len(calls) == 2


#: (node.toml lines after BASE, the same spec built in Python): bad names, sysctls and
#: kernel arguments, which `check` used to test again (host/kernel names_valid,
#: sysctls_valid): the converter refuses them for both.
HAND_BUILT: list[tuple[str, Callable[[], m.HostSpec]]] = [
    (
        'version = 1\n[host]\nname = "two words"\nrole = "inference"\nkernel = "6.8"\n',
        lambda: m.HostSpec(host=m.Host(name="two words", role=m.Role.INFERENCE, kernel="6.8")),
    ),
    (
        BASE + '[[workload]]\nname = "a/b"\ngpus = ["GPU0"]\n',
        lambda: m.HostSpec(host=_host(), workload=(m.Workload(name="a/b", gpus=("GPU0",)),)),
    ),
    (
        BASE + '[sysctl]\n"vm swappiness" = 1\n',
        lambda: m.HostSpec(host=_host(), sysctl={"vm swappiness": 1}),
    ),
    (
        BASE + '[sysctl]\n"vm.swappiness" = "1\\n2"\n',
        lambda: m.HostSpec(host=_host(), sysctl={"vm.swappiness": "1\n2"}),
    ),
    (
        BASE + '[sysctl]\n"vm.swappiness" = 1\n"vm/swappiness" = 2\n',
        lambda: m.HostSpec(host=_host(), sysctl={"vm.swappiness": 1, "vm/swappiness": 2}),
    ),
    (
        BASE + '[kernel]\nextra_args = ["-x", "a=$(b)"]\n',
        lambda: m.HostSpec(host=_host(), kernel=m.Kernel(extra_args=("-x", "a=$(b)"))),
    ),
]


def _host() -> m.Host:
    return m.Host(name="t", role=m.Role.INFERENCE, kernel="6.8")


def _errors(call: Callable[[], object]) -> list[tuple[str, str]]:
    with pytest.raises(HostcError) as e:
        call()
    return [(str(d.path), d.message) for d in e.value.diagnostics]


@pytest.mark.parametrize(("toml", "built"), HAND_BUILT, ids=range(len(HAND_BUILT)))
def test_a_spec_built_in_python_gets_the_loaders_errors(
    toml: str, built: Callable[[], m.HostSpec]
) -> None:
    from_toml = _errors(lambda: api.loads_spec(toml))
    assert from_toml
    assert _errors(lambda: api.compile_plan(built(), TOPO)) == from_toml


def test_a_sysctl_tuned_cannot_write_is_refused_when_tuned_owns_the_runtime() -> None:
    """The one sysctl rule `check` keeps: TuneD turns every '.' into '/'."""
    vlan = '[sysctl]\n"net/ipv4/conf/eth0.100/rp_filter" = 2\n'
    plan, _ = api.compile_plan(api.loads_spec(BASE + vlan), TOPO)
    assert plan.host.name == "t"
    tuned = api.loads_spec(BASE + vlan + '[runtime]\nowner = "tuned"\n')
    assert _errors(lambda: api.compile_plan(tuned, TOPO)) == [
        (
            'sysctl."net.ipv4.conf.eth0/100.rp_filter"',
            "net.ipv4.conf.eth0/100.rp_filter has a dot inside a component, which TuneD "
            "cannot write: its sysctl plugin turns every '.' into '/' (no swap as in sysctl.d)",
        )
    ]


def test_a_frozen_map_is_a_read_only_mapping() -> None:
    fm = FrozenMap({"a": 1})
    assert fm == {"a": 1} and dict(fm) == {"a": 1} and hash(fm) == hash(FrozenMap([("a", 1)]))
    assert pickle.loads(pickle.dumps(fm)) == fm and repr(fm) == "FrozenMap({'a': 1})"
    assert tomllib.loads("a = 1") == fm
