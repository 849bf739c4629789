"""Diagnostic paths, typed (issue 33 §5.3) and named for a reader (first-day-3 F10, F12):
a named workload is shown by its name, not by its merged index; a diagnostic names
the file the spec came from; the type words are TOML's; a spec read as a snapshot is
one error."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from hostc import api
from hostc.diagnostics import HostcError, kind_of
from hostc.keypath import Named, at, label
from hostc.locate import locate

from conftest import EXAMPLES

H100 = EXAMPLES / "h100-4gpu-inference"


def _errors(f: object) -> list[str]:
    with pytest.raises(HostcError) as e:
        f()  # type: ignore[operator]
    return [d.render() for d in e.value.diagnostics]


def test_a_key_path_renders_as_the_messages_always_did() -> None:
    assert str(at("cpu", "isolate")) == "cpu.isolate"
    assert str(at("sysctl", "vm.swappiness")) == 'sysctl."vm.swappiness"'
    assert str(at("kernel", "extra_args", 0)) == "kernel.extra_args[0]"
    assert str(at("hugepages", "per_node", "4")) == "hugepages.per_node.4"
    assert str(at("sysctl", "a\nb")) == 'sysctl."a\\nb"'  # a key cannot break the line
    assert str(at("workload", Named(4, "serve-e"), "gpus", 0)) == 'workload "serve-e".gpus[0]'
    assert str(label("--target")) == "--target"


def test_locate_reads_the_typed_parts_as_it_read_the_text() -> None:
    source = '[sysctl]\n"vm.swappiness" = 1\n[[workload]]\nname = "a"\n[[workload]]\n'
    source += 'name = "b"\ngpus = [\n  "GPU0",\n  "GPU1",\n]\n'
    pairs = [
        (at("sysctl", "vm.swappiness"), 'sysctl."vm.swappiness"'),
        (at("workload", Named(1, "b"), "gpus", 1), "workload[1].gpus[1]"),
        (at("workload", Named(1, "b"), "name"), "workload[1].name"),
        (at("cpu", "isolate"), "cpu.isolate"),
    ]
    assert [locate(p, source) for p, _ in pairs] == [2, 9, 6, None]
    assert [locate(p, source) for p, _ in pairs] == [locate(t, source) for _, t in pairs]
    assert locate(label("sysctl"), source) is None  # no key path: never located


def _fleet(tmp_path: Path, host_extra: str) -> Path:
    (tmp_path / "classes").mkdir()
    (tmp_path / "hosts").mkdir()
    cls = (EXAMPLES / "fleet" / "classes" / "dgx-inference.toml").read_text()
    topo = EXAMPLES / "dgx-h100-inference" / "topology.toml"
    cls = cls.replace('"../../dgx-h100-inference/topology.toml"', f'"{topo}"')
    (tmp_path / "classes" / "dgx.toml").write_text(cls)
    host = tmp_path / "hosts" / "h.toml"
    host.write_text(f'extends = ["../classes/dgx.toml"]\n\n[host]\nname = "h"\n{host_extra}')
    return host


def test_a_fleet_error_names_the_workload_not_its_merged_index(tmp_path: Path) -> None:
    """F12: the host adds a fifth workload; the error said `workload[4]` for a file with one."""
    host = _fleet(tmp_path, '\n[[workload]]\nname = "serve-e"\ngpus = ["GPU9"]\n')
    (err,) = _errors(lambda: api.compile_file(host))
    assert err.startswith(
        f"error: {host}:8: workload \"serve-e\".gpus[0]: GPU 'GPU9' is not in the topology"
    ), err


def test_an_overridden_inherited_workload_is_named_at_the_host_line(tmp_path: Path) -> None:
    host = _fleet(tmp_path, '\n[[workload]]\nname = "serve-b"\ngpus = ["GPU42"]\n')
    (err,) = _errors(lambda: api.compile_file(host))
    assert err.startswith(f'error: {host}:8: workload "serve-b".gpus[0]: GPU'), err


def _h100() -> dict[str, object]:
    return tomllib.loads((H100 / "node.toml").read_text())


def test_compile_plan_names_the_spec_origin_not_a_made_up_file() -> None:
    """F10 (a): a dict-built spec was reported as `node.toml`, a file that does not exist."""
    topo = api.read_topology(H100 / "topology.toml")
    too_many = dict(_h100(), hugepages={"size": "1G", "total": 100000})
    errors = _errors(lambda: api.compile_plan(api.spec_from_data(too_many), topo))
    assert errors and all(e.startswith("error: <data>: hugepages.total:") for e in errors)
    text = (H100 / "node.toml").read_text() + '\n[[workload]]\nname = "x"\ngpus = ["GPU9"]\n'
    spec = api.loads_spec(text, "mine.toml")
    line = len(text.splitlines())
    errors = _errors(lambda: api.compile_plan(spec, topo))
    assert errors[0].startswith(f'error: mine.toml:{line}: workload "x".gpus[0]: GPU'), errors


def test_a_spec_without_version_is_refused_with_the_line_to_add() -> None:
    """F10 (b): `nover.toml: ok`, although the format is told by `version`."""
    data = {k: v for k, v in _h100().items() if k != "version"}
    assert _errors(lambda: api.spec_from_data(data)) == [
        "error: <data>: version: missing: a spec says which node.toml format it is written in"
        "\n  hint: add `version = 1` as the first line"
    ]


def test_every_got_names_a_toml_type() -> None:
    """F10 (c): `got NoneType` beside `got a string`."""
    assert [kind_of(v) for v in (None, "x", 1, True, 1.5, [], (), {}, Path("p"))] == [
        "None", "a string", "an integer", "a boolean", "a float", "an array", "an array",
        "a table", f"a {type(Path('p')).__name__}",
    ]  # fmt: skip
    host = {"name": None, "role": "inference"}
    assert _errors(lambda: api.spec_from_data({"version": 1, "host": host})) == [
        "error: <data>: host.name: expected a string, got None"
    ]
    topo = api.read_topology(H100 / "topology.toml")
    (err,) = _errors(lambda: api.compile_plan("node.toml", topo))  # type: ignore[arg-type]
    assert err == "error: <input>: spec: expected a HostSpec, got a string"


def test_a_spec_read_as_a_snapshot_is_one_error() -> None:
    """F10 (d): seven errors, each with the same 19-key hint."""
    assert _errors(lambda: api.read_topology(H100 / "node.toml")) == [
        f"error: {H100 / 'node.toml'}: this is a node.toml spec, not a topology snapshot"
        "\n  hint: `hostc probe` writes one (the spec names it in host.topology)"
    ]


def test_a_converter_problem_names_the_workload_too() -> None:
    """The loader's own problems name an entry as the rules do; a duplicate name by index."""
    data = dict(_h100(), workload=[{"name": "a", "gpus": 3}, {"name": "b", "gpus": "GPU0"}])
    assert [e.split(": expected")[0] for e in _errors(lambda: api.spec_from_data(data))] == [
        'error: <data>: workload "a".gpus',
        'error: <data>: workload "b".gpus',
    ]
    twice = dict(_h100(), workload=[{"name": "a", "gpus": 3}, {"name": "a", "gpus": ["GPU0"]}])
    assert _errors(lambda: api.spec_from_data(twice))[0].startswith(
        "error: <data>: workload[0].gpus: expected"
    )


def test_an_entry_whose_name_is_no_string_is_shown_by_index() -> None:
    """The name is what is wrong (a list, a bad word): the path cannot be named by it."""
    data = dict(_h100(), workload=[{"name": [], "gpus": ["GPU0"]}, {"name": "a b", "gpus": 1}])
    assert sorted(e.split(": ")[2] for e in _errors(lambda: api.spec_from_data(data))) == [
        "workload[0].name",
        "workload[1].gpus",
        "workload[1].name",
    ]
