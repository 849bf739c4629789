"""The YAML targets write the same bytes through libyaml's C emitter as through PyYAML's
pure-Python one (the fallback where PyYAML was built without libyaml), and the C path is
the one taken where it exists: it is what keeps a fleet's cloud-init and Ansible build
from spending ~100 ms per host in the pure-Python emitter."""

from __future__ import annotations

import pytest

from hostc import api
from hostc.targets import _yaml

from conftest import EXAMPLE_NAMES, example_plan

YAML_TARGETS = ["cloud-init", "ansible", "kubelet"]


def _yaml_bytes(name: str) -> dict[tuple[str, str], bytes]:
    plan = example_plan(name)
    arts = api.emit(plan, ["all", "cloud-init", "ansible"])  # all: kubelet where it applies
    return {(a.target, a.path): a.data for a in arts if a.target in YAML_TARGETS}


def test_libyaml_is_what_this_environment_uses() -> None:
    y = _yaml.yaml()
    assert y.__with_libyaml__, "PyYAML without libyaml: every wheel on PyPI has it"
    assert issubclass(_yaml.dumper(), y.CSafeDumper)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_the_pure_python_fallback_writes_the_same_bytes(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _yaml_bytes(name)
    y = _yaml.yaml()
    # PyYAML as if built without libyaml: its C classes cannot be reached
    monkeypatch.setattr(y, "__with_libyaml__", False)
    monkeypatch.delattr(y, "CSafeDumper")
    monkeypatch.delattr(y, "CSafeLoader")
    _yaml.dumper.cache_clear()
    try:
        pure = _yaml_bytes(name)
        assert not issubclass(_yaml.dumper(), y.CDumper)
    finally:
        _yaml.dumper.cache_clear()
    assert fast and pure == fast


def test_block_and_flow_round_trip_through_either_emitter() -> None:
    doc = {"content": _yaml.Block("a: b\n  c\n"), "argv": _yaml.Flow(["sysctl", "--system"])}
    fast, pure = _yaml.dump(doc, c=True), _yaml.dump(doc, c=False)
    assert fast == pure == "content: |\n  a: b\n    c\nargv: [sysctl, --system]\n"
    assert _yaml.load(fast) == {"content": "a: b\n  c\n", "argv": ["sysctl", "--system"]}
